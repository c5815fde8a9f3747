//! The error text go.starlark.net gives for what failed, from the Rust
//! crate's error: syntax and resolve errors as `name:line:col: message`,
//! runtime errors as the bare message (`key "a" not in dict`, `fail: ...`).
//!
//! The crate's messages are translated by their wording, the builtin the
//! error came from (the innermost call frame) and the source text of the
//! failing expression (which comparison, which division). Where the crate's
//! error lacks what Go's message names (a sequence's length in `index 3 out
//! of range [-3:2]`, the type in `tuple value does not support item
//! assignment`), its own wording stays.

use ::starlark::ErrorKind;
use ::starlark::syntax::Dialect;
use ::starlark::syntax::ast::StmtP;

use super::dialect::Lines;
use super::parse_errors::go_syntax_error;
use super::runtime_errors::{Site, runtime, split_top_level};
use super::scope::Scopes;

/// What the translation knows besides the error itself.
pub(crate) struct Source<'a> {
    /// The program name (syntax errors start with it).
    pub name: &'a str,
    /// The script as it was run.
    pub text: &'a str,
    /// Its names, once it parsed.
    pub scopes: Option<&'a Scopes>,
    /// Where its lines came from (a `while` loop's rewriting adds lines).
    pub lines: &'a Lines,
}

/// go.starlark.net's text for `e`.
pub(crate) fn go_error(e: &::starlark::Error, src: &Source) -> String {
    // Errors before the script runs (syntax, resolution) have no call frames.
    let compile_time = e.call_stack().frames.is_empty();
    let text = match e.kind() {
        ErrorKind::Fail(m) => return format!("fail:{m}"),
        ErrorKind::Native(n) if n.downcast_ref::<super::gofmt::GoFail>().is_some() => {
            return n.to_string();
        }
        ErrorKind::Parser(m) | ErrorKind::Scope(m) => m.to_string(),
        other => other.to_string(),
    };
    if compile_time
        && let Some(span) = e.span()
        && let Some(go) = go_syntax_error(&text, span, src)
    {
        return go;
    }
    match e.kind() {
        // `int("x")` fails with the crate's lexer error.
        ErrorKind::Parser(_) if !compile_time => runtime(&text, &Site::of(e, src)),
        ErrorKind::Parser(_) => {
            let msg = go_parse_message(&text);
            match e.span() {
                Some(span) => with_position(span, &msg, src.lines),
                None => msg,
            }
        }
        ErrorKind::Scope(_) => {
            let msg = runtime(&text, &Site::of(e, src));
            match e.span() {
                Some(span) if msg.starts_with("undefined: ") => {
                    let name = &msg["undefined: ".len()..];
                    let at = span.span.begin().get() as usize;
                    let hint = src
                        .scopes
                        .and_then(|s| s.suggestion(name, at))
                        .map(|n| format!(" (did you mean {n}?)"))
                        .unwrap_or_default();
                    with_position(span, &format!("{msg}{hint}"), src.lines)
                }
                _ => msg,
            }
        }
        // Some of the crate's errors carry their position in the text.
        _ => runtime(strip_position(&text, src.name), &Site::of(e, src)),
    }
}

/// `name:line:col: msg` at the start of `span`.
fn with_position(span: &::starlark::codemap::FileSpan, msg: &str, lines: &Lines) -> String {
    let pos = span.resolve_span().begin;
    let (line, col) = lines.original(pos.line + 1, pos.column + 1);
    format!("{}:{line}:{col}: {msg}", span.file.filename())
}

/// What evaluating an expression of the script (again) gave.
pub(crate) struct Probed {
    /// Its type.
    pub ty: String,
    /// Its length, if it has one.
    pub len: Option<usize>,
    /// Its value, if it is an int.
    pub int: Option<i64>,
}

/// go.starlark.net's `list index 3 out of range [-3:2]` (or `index 0 out of
/// range: empty list`) for an index error in top-level code, whose sequence
/// and index `probe` evaluates again. Only expressions without calls (names,
/// literals, attributes, subscripts) of top-level names are evaluated, so
/// nothing runs twice; others keep the crate's wording.
pub(crate) fn go_index_error(
    e: &::starlark::Error,
    src: &Source,
    probe: &mut dyn FnMut(&str) -> Option<Probed>,
) -> Option<String> {
    if !matches!(
        e.kind(),
        ErrorKind::Value(_) | ErrorKind::Native(_) | ErrorKind::Other(_)
    ) {
        return None;
    }
    let text = e.kind().to_string();
    if !(text.starts_with("Index `") && text.ends_with("` is out of bound")) {
        return None;
    }
    let scopes = src.scopes?;
    let span = e.span()?;
    let at = span.span.begin().get() as usize;
    if !scopes.at_top_level(at) {
        return None;
    }
    let expr = span.source_span().trim();
    let frames = &e.call_stack().frames;
    let (seq, index, prefix) = match frames.last().map(|f| f.name.as_str()) {
        None => {
            let (seq, index) = subscript(expr)?;
            (seq, index, "")
        }
        Some("pop") if frames.len() == 1 => {
            let (seq, args) = expr.rsplit_once(".pop(")?;
            let args = args.strip_suffix(')')?.trim();
            (seq, if args.is_empty() { "-1" } else { args }, "pop: ")
        }
        Some(_) => return None,
    };
    let pure = |x: &str| {
        ::starlark::syntax::AstModule::parse("probe", x.to_string(), &Dialect::Standard)
            .ok()
            .is_some_and(|ast| match &ast.statement().node {
                StmtP::Expression(x) => side_effect_free(x, scopes),
                _ => false,
            })
    };
    if seq.trim().is_empty() || !pure(seq) || !pure(index) {
        return None;
    }
    let n = probe(seq)?;
    let len = n.len?;
    let i = match index.trim().parse::<i64>() {
        Ok(i) => i,
        Err(_) => probe(index)?.int?,
    };
    Some(if len == 0 {
        format!("{prefix}index {i} out of range: empty {}", n.ty)
    } else {
        format!(
            "{prefix}{} index {i} out of range [-{len}:{}]",
            n.ty,
            len - 1
        )
    })
}

/// Whether evaluating `e` again runs nothing: names of top-level values,
/// literals, attributes and subscripts only.
fn side_effect_free(e: &::starlark::syntax::ast::AstExpr, scopes: &Scopes) -> bool {
    use ::starlark::syntax::ast::ExprP;
    match &e.node {
        ExprP::Identifier(id) => id.node.ident == "ctx" || scopes.is_global(&id.node.ident),
        ExprP::Literal(_) => true,
        ExprP::Minus(x) | ExprP::Dot(x, _) => side_effect_free(x, scopes),
        ExprP::Index(ab) => side_effect_free(&ab.0, scopes) && side_effect_free(&ab.1, scopes),
        ExprP::Tuple(xs) | ExprP::List(xs) => xs.iter().all(|x| side_effect_free(x, scopes)),
        _ => false,
    }
}

/// The sequence and index texts of a subscript expression `seq[index]`.
fn subscript(expr: &str) -> Option<(&str, &str)> {
    let body = expr.strip_suffix(']')?;
    let mut depth = 0i32;
    for (i, c) in body.char_indices().rev() {
        match c {
            ']' | ')' | '}' => depth += 1,
            '(' | '{' => depth -= 1,
            '[' if depth == 0 => {
                let index = &body[i + 1..];
                return (split_top_level(index, ':').len() == 1).then_some((&body[..i], index));
            }
            '[' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// `text` without a leading `name:line:col: `.
fn strip_position<'t>(text: &'t str, name: &str) -> &'t str {
    let Some(rest) = text.strip_prefix(name).and_then(|r| r.strip_prefix(':')) else {
        return text;
    };
    let mut parts = rest.splitn(3, ':');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(l), Some(c), Some(msg))
            if l.bytes().all(|b| b.is_ascii_digit()) && c.bytes().all(|b| b.is_ascii_digit()) =>
        {
            msg.strip_prefix(' ').unwrap_or(msg)
        }
        _ => text,
    }
}

/// A parser message [`go_syntax_error`] does not know, without the crate's
/// prefix.
fn go_parse_message(msg: &str) -> String {
    msg.strip_prefix("Parse error: ").unwrap_or(msg).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_in_messages_are_dropped() {
        assert_eq!(
            strip_position("diff:1:28: Cannot parse", "diff"),
            "Cannot parse"
        );
        assert_eq!(strip_position("diff: x", "diff"), "diff: x");
    }
}
