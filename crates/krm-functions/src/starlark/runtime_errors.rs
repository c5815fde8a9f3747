//! go.starlark.net's wording of runtime errors, from the Rust crate's message,
//! the builtin the error came from (the innermost call frame) and the source
//! text of the failing expression. Messages it does not know keep the crate's
//! wording.

use super::errors::Source;
use super::gofmt::requote;
use super::scan::outside_strings;
use super::scope::Scopes;

/// Where a runtime error happened.
#[derive(Default)]
pub(super) struct Site<'a> {
    /// The byte offset of the failing expression.
    at: usize,
    /// The script's names, when known.
    scopes: Option<&'a Scopes>,
    /// The builtin (or method) the error came from; `None` for errors in the
    /// script's own code.
    builtin: Option<&'a str>,
    /// The `def` the error came from.
    def: Option<&'a str>,
    /// The source text of the failing expression.
    expr: &'a str,
    /// The whole script.
    source: &'a str,
}

impl<'a> Site<'a> {
    pub(super) fn of(e: &'a ::starlark::Error, src: &Source<'a>) -> Site<'a> {
        let expr = e.span().map(|s| s.source_span()).unwrap_or_default();
        let at = e.span().map_or(0, |s| s.span.begin().get() as usize);
        let scopes = src.scopes;
        let frame = e.call_stack().frames.last().map(|f| f.name.as_str());
        // A frame is a builtin unless the script defines a function of that name.
        let scripted = |name: &str| {
            name == "lambda"
                || src.text.contains(&format!("def {name}("))
                || src.text.contains(&format!("def {name} ("))
        };
        match frame {
            Some(name) if scripted(name) => Site {
                def: Some(name),
                expr,
                at,
                scopes,
                source: src.text,
                ..Site::default()
            },
            Some(name) => Site {
                builtin: Some(name),
                expr,
                at,
                scopes,
                source: src.text,
                ..Site::default()
            },
            None => Site {
                expr,
                at,
                scopes,
                source: src.text,
                ..Site::default()
            },
        }
    }

    fn is(&self, names: &[&str]) -> bool {
        self.builtin.is_some_and(|b| names.contains(&b))
    }
}

/// The backtick-quoted parts of a crate message.
fn quoted(msg: &str) -> Vec<&str> {
    msg.split('`').skip(1).step_by(2).collect()
}

/// `msg` without the crate's `, did you mean ...?` suggestion.
fn without_hint(msg: &str) -> &str {
    msg.split_once(", did you mean").map_or(msg, |(m, _)| m)
}

/// go.starlark.net's wording of a runtime (or resolve) error; messages this
/// does not know keep the crate's wording.
pub(super) fn runtime(msg: &str, site: &Site) -> String {
    translate(without_hint(msg), site).unwrap_or_else(|| msg.to_string())
}

fn translate(msg: &str, site: &Site) -> Option<String> {
    let q = quoted(msg);
    let prefixed = |text: String| match site.builtin {
        Some(b) => format!("{b}: {text}"),
        None => text,
    };
    if msg.starts_with("Operation `") && msg.contains("` not supported for types `") {
        let [op, a, b] = q[..] else { return None };
        return Some(match op {
            "compare" | "cmp()" => {
                let cmp = if site.builtin.is_some() {
                    "<"
                } else {
                    comparison(site.expr).unwrap_or("<")
                };
                format!("{a} {cmp} {b} not implemented")
            }
            "[]" => format!("unhandled index operation {a}[{b}]"),
            op => format!("unknown binary op: {a} {op} {b}"),
        });
    }
    if msg.starts_with("Operation `") && msg.contains("` not supported on type `") {
        let [op, t] = q[..] else { return None };
        return match op {
            "-" | "+" | "~" => Some(format!("unknown unary op: {op} {t}")),
            "len()" if site.is(&["len"]) || callee(site.expr) == Some("len") => {
                Some(format!("len: value of type {t} has no len"))
            }
            "len()" if site.builtin.is_none() => Some(format!("got {t} in sequence assignment")),
            "call()" => Some(format!("invalid call of non-function ({t})")),
            "(iter)" => not_iterable(t, site),
            _ if op.starts_with('.') && op.ends_with('=') => Some(format!(
                "can't assign to {} field of {t}",
                &op[..op.len() - 1]
            )),
            _ if op.starts_with('.') && site.is(&["getattr"]) => {
                Some(format!("getattr: {}", no_attribute(t, &op[1..])))
            }
            _ => {
                let conv = op.strip_prefix("format(%")?.strip_suffix(')')?;
                matches!(conv, "d" | "i" | "o" | "x" | "X")
                    .then(|| format!("%{conv} format requires integer: cannot convert {t} to int"))
            }
        };
    }
    if msg.starts_with("Object of type `") && msg.contains("` has no attribute `") {
        let [t, attr] = q[..] else { return None };
        return Some(no_attribute(t, attr));
    }
    if msg.starts_with("Key `") && msg.ends_with("` was not found") {
        let [key] = q[..] else { return None };
        return Some(if site.is(&["format"]) {
            format!("format: keyword {key} not found")
        } else {
            format!("key {} not in dict", requote(key))
        });
    }
    if msg.starts_with("Index `") && msg.ends_with("` is out of bound") {
        if site.is(&["format"]) {
            return Some("format: tuple index out of range".into());
        }
        // Slices clamp their bounds: only a zero step fails.
        if site.builtin.is_none() && is_slice(site.expr) {
            return Some("zero is not a valid slice step".into());
        }
        return None;
    }
    if msg.starts_with("Value of type `") && msg.ends_with("` is not hashable") {
        let [t] = q[..] else { return None };
        return Some(prefixed(format!("unhashable type: {t}")));
    }
    if msg.starts_with("Dictionary key repeated for `") {
        let [key] = q[..] else { return None };
        return Some(format!("duplicate key: {}", requote(key)));
    }
    if let Some(rest) = msg.strip_prefix("Unpacked ") {
        let (got, want) = rest.split_once(" values but expected ")?;
        let (g, w) = (got.parse::<usize>().ok()?, want.parse::<usize>().ok()?);
        let which = if g < w { "few" } else { "many" };
        return Some(format!("too {which} values to unpack (got {g}, want {w})"));
    }
    if msg.starts_with("float division by zero") {
        return Some("floating-point division by zero".into());
    }
    if msg.starts_with("Floor division by zero") {
        return Some("floored division by zero".into());
    }
    if msg.starts_with("Modulo by zero") {
        return Some("integer modulo by zero".into());
    }
    if msg == "Cannot divide by zero" {
        // Float `//` and `%`.
        return Some(
            if site.expr.contains("//") {
                "floored division by zero"
            } else if site.expr.contains('%') {
                "floating-point modulo by zero"
            } else {
                "floating-point division by zero"
            }
            .into(),
        );
    }
    if msg == "This operation mutates an iterable for an iterator while iterating." {
        return mutation_during_iteration(site);
    }
    if msg.starts_with("Negative left shift") || msg.starts_with("Negative right shift") {
        let (_, count) = site.expr.rsplit_once(['<', '>'])?;
        let count: i64 = count.trim().parse().ok()?;
        return Some(format!("negative shift count: {count}"));
    }
    if let Some(rest) = msg
        .strip_prefix("Missing parameter `")
        .or_else(|| msg.strip_prefix("Missing named-only parameter `"))
    {
        let (param, call) = rest.split_once("` for call to `")?;
        let name = def_name(call.strip_suffix('`')?)?;
        let missing = missing_arguments(site, name).unwrap_or_else(|| vec![param.to_string()]);
        return Some(format!(
            "function {name} missing {} argument{} ({})",
            missing.len(),
            if missing.len() == 1 { "" } else { "s" },
            missing.join(", ")
        ));
    }
    if let Some(rest) = msg.strip_prefix("Found ") {
        if let Some((extra, call)) = rest.split_once(" extra positional argument(s) for call to ") {
            let name = def_name(call)?;
            return too_many_arguments(site, name, extra.parse().ok()?);
        }
        if let Some((names, call)) = rest.split_once(" extra named parameter(s) for call to ") {
            let first = quoted(names).first().copied()?;
            return Some(match def_name(call) {
                Some(name) => {
                    format!("function {name} got an unexpected keyword argument \"{first}\"")
                }
                None => {
                    let b = site.builtin.or_else(|| callee(site.expr))?;
                    // Builtins with keyword parameters name the argument.
                    if matches!(b, "int" | "sorted" | "print" | "fail") {
                        format!("{b}: unexpected keyword argument \"{first}\"")
                    } else {
                        format!("{b}: unexpected keyword arguments")
                    }
                }
            });
        }
        return None;
    }
    if msg.starts_with("Argument `") && msg.ends_with("` occurs more than once") {
        let [arg] = q[..] else { return None };
        let name = site.def?;
        return Some(format!(
            "function {name} got multiple values for parameter \"{arg}\""
        ));
    }
    if let Some(rest) = msg.strip_prefix("Wrong number of positional arguments, expected ") {
        let b = site.builtin?;
        let (want, got) = rest.split_once(", got ")?;
        let got: usize = got.parse().ok()?;
        let want = match want.strip_prefix("between ") {
            Some(range) => {
                let (lo, hi) = range.split_once(" and ")?;
                if got < lo.parse().ok()? {
                    format!("at least {lo}")
                } else {
                    format!("at most {hi}")
                }
            }
            None if b == "str" || b == "type" => format!("exactly {want}"),
            None => want.to_string(),
        };
        return Some(format!("{b}: got {got} arguments, want {want}"));
    }
    if msg.starts_with("Substring '") && site.is(&["index", "rindex"]) {
        return Some(prefixed("substring not found".into()));
    }
    if msg.starts_with("Element '") {
        return match site.builtin {
            Some("remove") => Some("remove: element not found".into()),
            Some("index") => Some("index: value not in list".into()),
            _ => None,
        };
    }
    if msg.starts_with("Key `") && msg.contains("` not found in dictionary") && site.is(&["pop"]) {
        return Some("pop: missing key".into());
    }
    if msg == "Cannot .popitem() on an empty dictionary" {
        return Some("popitem: empty dict".into());
    }
    if msg.starts_with("Argument is an empty iterable") && site.is(&["min", "max"]) {
        let b = site.builtin?;
        return Some(if site.expr.trim_end().ends_with("()") {
            format!("{b} requires at least one positional argument")
        } else {
            format!("{b}: argument is an empty sequence")
        });
    }
    if let Some(rest) = msg.strip_prefix("Cannot parse `") {
        let (text, base) = rest.split_once("` as an integer in base ")?;
        return Some(format!("int: invalid literal with base {base}: {text}"));
    }
    if msg.contains(" is not a valid base, int() base must be") {
        return Some("int: base must be an integer >= 2 && <= 36".into());
    }
    if msg.starts_with("int() cannot convert non-string with explicit base") {
        return Some("int: can't convert non-string with explicit base".into());
    }
    if let Some(rest) = msg.strip_prefix("Float `") {
        let (value, _) = rest.split_once('`')?;
        let what = if value.eq_ignore_ascii_case("nan") {
            "NaN"
        } else {
            "infinity"
        };
        return Some(format!("int: cannot convert float {what} to integer"));
    }
    if let Some(rest) = msg.strip_suffix("\" is not a valid number: invalid float literal") {
        // The 2021 go.starlark.net wording.
        return Some(format!(
            "invalid float literal: {}",
            rest.strip_prefix('"')?
        ));
    }
    if msg.starts_with("Type of parameter `") && msg.contains("` doesn't match, expected `") {
        let actual = msg.split("actual `").nth(1)?.split([' ', '`']).next()?;
        return match site.builtin {
            Some("join") => Some(format!("join: in list, want string, got {actual}")),
            Some(b @ ("print" | "fail")) if msg.starts_with("Type of parameter `sep`") => Some(
                format!("{b}: for parameter \"sep\": got {actual}, want string"),
            ),
            Some("int") => Some(format!("int: cannot convert {actual} to int")),
            _ => None,
        };
    }
    if msg.starts_with("Type of parameters mismatch, expected `str`, actual `")
        && site.builtin.is_none()
        && site.expr.contains(" in ")
    {
        let actual = msg.split("actual `").nth(1)?.split([' ', '`']).next()?;
        return Some(format!(
            "'in <string>' requires string as left operand, not {actual}"
        ));
    }
    if msg == "Third argument of range (step) cannot be zero" {
        return Some("range: step argument must not be zero".into());
    }
    if site.is(&["format"]) {
        if msg.starts_with("Unmatched '{' in format string") {
            return Some("format: unmatched '{' in format".into());
        }
        if msg.starts_with("Standalone '}' in format string") {
            return Some("format: single '}' in format".into());
        }
        if msg.starts_with("Cannot mix manual field specification and automatic field numbering") {
            return Some(
                "format: cannot switch from manual field specification to automatic field numbering"
                    .into(),
            );
        }
        if msg == "Not enough parameters in format string" {
            return Some("format: tuple index out of range".into());
        }
    }
    if msg == "Too many arguments for format string"
        || msg == "Not enough arguments for format string"
    {
        let mut m = msg.to_string();
        m[..1].make_ascii_lowercase();
        return Some(m);
    }
    if let Some(rest) = msg.strip_prefix("Unsupported format character: '") {
        let c = rest.strip_suffix('\'')?;
        // go.starlark.net has `%i`, `%c` and `%(name)s`; the crate does not, and its
        // message says so better than an unknown-conversion one would.
        return (!matches!(c, "i" | "c" | "(")).then(|| format!("unknown conversion %{c}"));
    }
    if let Some(rest) = msg.strip_prefix("Variable `") {
        let name = rest.strip_suffix("` not found")?;
        return Some(format!("undefined: {name}"));
    }
    if let Some(rest) = msg.strip_prefix("Local variable `") {
        let name = rest.strip_suffix("` referenced before assignment")?;
        // A top-level name read before its assignment ran is a global in Go; a
        // function's own name a local.
        let global = site
            .scopes
            .is_some_and(|s| s.is_global(name) && !s.is_local(name, site.at));
        let which = if global { "global" } else { "local" };
        return Some(format!(
            "{which} variable {name} referenced before assignment"
        ));
    }
    None
}

/// `T has no .attr field or method`, or starlarkstruct's wording for structs.
fn no_attribute(t: &str, attr: &str) -> String {
    if t == "struct" {
        format!("struct has no .{attr} attribute")
    } else {
        format!("{t} has no .{attr} field or method")
    }
}

/// The function a call expression's text calls by name (`len` in `len(x)`).
fn callee(expr: &str) -> Option<&str> {
    let (name, _) = expr.split_once('(')?;
    let name = name.trim();
    (!name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_')).then_some(name)
}

/// A `def`'s name from the crate's `<module>.<name>`; `None` for builtins.
fn def_name(call: &str) -> Option<&str> {
    call.rsplit_once('.').map(|(_, name)| name)
}

/// Go's message for iterating over a non-iterable `t`, by the builtin asking.
fn not_iterable(t: &str, site: &Site) -> Option<String> {
    Some(match site.builtin {
        // `list += x` extends the list by iterating `x`.
        None if site.expr.contains("+=") => format!("unknown binary op: list + {t}"),
        None => format!("{t} value is not iterable"),
        Some(b @ ("min" | "max")) => format!("{b}: {t} value is not iterable"),
        Some(
            b @ ("list" | "tuple" | "enumerate" | "reversed" | "any" | "all" | "set" | "extend"
            | "join"),
        ) => format!("{b}: for parameter 1: got {t}, want iterable"),
        Some("sorted") => format!("sorted: for parameter iterable: got {t}, want iterable"),
        Some(b @ ("dict" | "update")) => format!("{b}: got {t}, want iterable"),
        Some(_) => return None,
    })
}

/// Go's message for changing a list or dict while a loop iterates over it.
/// The crate's error does not say which it was; where both have the
/// operation (`pop`, `clear`, item assignment), the dict's wording is used.
fn mutation_during_iteration(site: &Site) -> Option<String> {
    Some(
        match site.builtin {
            Some("append") => "append: cannot append to list during iteration",
            Some("extend") => "extend: cannot extend list during iteration",
            Some("insert") => "insert: cannot insert into list during iteration",
            Some("remove") => "remove: cannot remove from list during iteration",
            Some("pop") => "pop: cannot delete from hash table during iteration",
            Some("popitem") => "popitem: cannot delete from hash table during iteration",
            Some("clear") => "cannot clear hash table during iteration",
            Some("setdefault") => "setdefault: cannot insert into hash table during iteration",
            Some("update") => "update: cannot insert into hash table during iteration",
            Some(_) => return None,
            None if site.expr.contains("+=") => "cannot apply += to list during iteration",
            None => "cannot insert into hash table during iteration",
        }
        .into(),
    )
}

/// Splits `s` at `sep` outside brackets and string literals.
pub(super) fn split_top_level(s: &str, sep: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    for (i, c, depth) in outside_strings(s) {
        if c == sep && depth == 0 {
            parts.push(&s[start..i]);
            start = i + c.len_utf8();
        }
    }
    parts.push(&s[start..]);
    parts
}

/// The comparison operator of a binary comparison expression's text.
fn comparison(expr: &str) -> Option<&'static str> {
    // The first `<`, `>`, `<=` or `>=` outside brackets and strings (a
    // comparison does not chain, so its operands hold none unbracketed).
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let chars: Vec<char> = expr.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if let Some(q) = quote {
            if c == '\\' {
                i += 1;
            } else if c == q {
                quote = None;
            }
        } else {
            match c {
                '"' | '\'' => quote = Some(c),
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth -= 1,
                '<' | '>' if depth == 0 => {
                    let next = chars.get(i + 1).copied();
                    if next == Some(c) {
                        i += 2; // a shift
                        continue;
                    }
                    return Some(match (c, next) {
                        ('<', Some('=')) => "<=",
                        ('>', Some('=')) => ">=",
                        ('<', _) => "<",
                        _ => ">",
                    });
                }
                _ => {}
            }
        }
        i += 1;
    }
    None
}

/// Whether `expr` is a slice expression (`x[a:b:c]`).
fn is_slice(expr: &str) -> bool {
    let Some(body) = expr.trim_end().strip_suffix(']') else {
        return false;
    };
    // The subscript is the last top-level `[...]`.
    let mut depth = 0i32;
    for (i, c) in body.char_indices().rev() {
        match c {
            ']' | ')' | '}' => depth += 1,
            '(' | '{' => depth -= 1,
            '[' if depth == 0 => return split_top_level(&body[i + 1..], ':').len() > 1,
            '[' => depth -= 1,
            _ => {}
        }
    }
    false
}

/// The parameter list of `def name(...)` in the script: each parameter's
/// text, `*args`/`**kwargs` included.
fn def_params<'s>(source: &'s str, name: &str) -> Option<Vec<&'s str>> {
    let at = source
        .find(&format!("def {name}("))
        .map(|i| i + name.len() + 4)?;
    let inner = enclosed(&source[at..])?;
    Some(
        split_top_level(inner, ',')
            .into_iter()
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .collect(),
    )
}

/// The text inside the parentheses that `s` starts with.
fn enclosed(s: &str) -> Option<&str> {
    let body = s.strip_prefix('(')?;
    outside_strings(body)
        .find(|&(_, c, depth)| c == ')' && depth == 0)
        .map(|(i, _, _)| &body[..i])
}

/// The arguments of the call expression `expr` (`f(1, b=2)`): positional
/// count and keyword names; `None` when it spreads `*args` or `**kwargs`.
fn call_arguments(expr: &str) -> Option<(usize, Vec<&str>)> {
    let open = expr.find('(')?;
    let inner = enclosed(&expr[open..])?;
    let mut positional = 0;
    let mut keywords = Vec::new();
    for arg in split_top_level(inner, ',').into_iter().map(str::trim) {
        if arg.is_empty() {
            continue;
        }
        if arg.starts_with('*') {
            return None;
        }
        match split_top_level(arg, '=').as_slice() {
            [name, _] if !name.trim().is_empty() => keywords.push(name.trim()),
            _ => positional += 1,
        }
    }
    Some((positional, keywords))
}

/// The parameters of `def name` a call left without a value, in order.
fn missing_arguments(site: &Site, name: &str) -> Option<Vec<String>> {
    let params = def_params(site.source, name)?;
    let (positional, keywords) = call_arguments(site.expr)?;
    let mut missing = Vec::new();
    let mut index = 0;
    let mut kwonly = false;
    for p in params {
        if p.starts_with("**") {
            continue;
        }
        if p.starts_with('*') {
            kwonly = true;
            continue;
        }
        let (pname, default) = match p.split_once('=') {
            Some((n, _)) => (n.trim(), true),
            None => (p, false),
        };
        let bound = (!kwonly && index < positional) || keywords.contains(&pname);
        if !kwonly {
            index += 1;
        }
        if !bound && !default {
            missing.push(pname.to_string());
        }
    }
    (!missing.is_empty()).then_some(missing)
}

/// Go's message for a call to `def name` with `extra` positional arguments
/// too many.
fn too_many_arguments(site: &Site, name: &str, extra: usize) -> Option<String> {
    let (given, _) = call_arguments(site.expr)?;
    let accepted = given.checked_sub(extra)?;
    let nullary = name == "lambda" || def_params(site.source, name).is_some_and(|p| p.is_empty());
    if accepted == 0 && nullary {
        return Some(format!(
            "function {name} accepts no arguments ({given} given)"
        ));
    }
    let at_most = def_params(site.source, name).is_some_and(|params| {
        params
            .iter()
            .take_while(|p| !p.starts_with('*'))
            .any(|p| p.contains('='))
    });
    Some(format!(
        "function {name} accepts {}{accepted} positional argument{} ({given} given)",
        if at_most { "at most " } else { "" },
        if accepted == 1 { "" } else { "s" },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site<'a>(builtin: Option<&'a str>, expr: &'a str, source: &'a str) -> Site<'a> {
        Site {
            builtin,
            expr,
            source,
            ..Site::default()
        }
    }

    #[test]
    fn operators_read_as_go() {
        // (the crate's message, the builtin called if any, the failing expression, Go's)
        let cases = [
            (
                "Operation `compare` not supported for types `int` and `string`",
                None,
                "1 >= \"<\"",
                "int >= string not implemented",
            ),
            (
                "Operation `compare` not supported for types `int` and `string`",
                None,
                "(1 << 2) > \"a\"",
                "int > string not implemented",
            ),
            (
                "Operation `cmp()` not supported for types `string` and `int`",
                Some("sorted"),
                "sorted(x)",
                "string < int not implemented",
            ),
            (
                "Operation `[]` not supported for types `NoneType` and `string`",
                None,
                "x[\"a\"]",
                "unhandled index operation NoneType[string]",
            ),
            (
                "Operation `-` not supported on type `string`",
                None,
                "-x",
                "unknown unary op: - string",
            ),
            (
                "Operation `(iter)` not supported on type `int`",
                None,
                "for",
                "int value is not iterable",
            ),
            (
                "Operation `(iter)` not supported on type `int`",
                Some("list"),
                "list(1)",
                "list: for parameter 1: got int, want iterable",
            ),
            (
                "Cannot divide by zero",
                None,
                "1.0 // 0",
                "floored division by zero",
            ),
            (
                "Cannot divide by zero",
                None,
                "x % 0.0",
                "floating-point modulo by zero",
            ),
            (
                "Index `0` is out of bound",
                None,
                "x[1:2:0]",
                "zero is not a valid slice step",
            ),
            // A plain index keeps the crate's text: Go's names the sequence's length.
            (
                "Index `3` is out of bound",
                None,
                "x[3]",
                "Index `3` is out of bound",
            ),
            (
                "Negative right shift",
                None,
                "1 >> -1",
                "negative shift count: -1",
            ),
        ];
        for (crate_msg, builtin, expr, go) in cases {
            assert_eq!(runtime(crate_msg, &site(builtin, expr, "")), go, "{expr}");
        }
    }

    #[test]
    fn builtins_read_as_go() {
        let b = |name, expr| site(Some(name), expr, "");
        let t = |msg: &str, s: &Site| runtime(msg, s);
        assert_eq!(
            t("Substring 'z' not found in 'abc'", &b("rindex", "")),
            "rindex: substring not found"
        );
        assert_eq!(
            t("Value of type `list` is not hashable", &b("setdefault", "")),
            "setdefault: unhashable type: list"
        );
        assert_eq!(
            t("Value of type `list` is not hashable", &site(None, "", "")),
            "unhashable type: list"
        );
        assert_eq!(
            t(
                "Wrong number of positional arguments, expected between 1 and 3, got 4",
                &b("range", "")
            ),
            "range: got 4 arguments, want at most 3"
        );
        assert_eq!(
            t(
                "Wrong number of positional arguments, expected 1, got 2",
                &b("str", "")
            ),
            "str: got 2 arguments, want exactly 1"
        );
        assert_eq!(
            t(
                "Argument is an empty iterable, max() expect a non empty iterable",
                &b("min", "min([])")
            ),
            "min: argument is an empty sequence"
        );
        assert_eq!(
            t(
                "This operation mutates an iterable for an iterator while iterating.",
                &b("append", "")
            ),
            "append: cannot append to list during iteration"
        );
        assert_eq!(
            t("Cannot parse `abc` as an integer in base 10", &b("int", "")),
            "int: invalid literal with base 10: abc"
        );
        assert_eq!(
            t("Key `a` was not found", &b("format", "")),
            "format: keyword a not found"
        );
        assert_eq!(
            t("Key `\"a\"` was not found", &site(None, "", "")),
            "key \"a\" not in dict"
        );
        assert_eq!(
            t(
                "Object of type `list` has no attribute `nope`, did you mean `pop`?",
                &site(None, "", "")
            ),
            "list has no .nope field or method"
        );
        assert_eq!(
            t(
                "Object of type `struct` has no attribute `nope`",
                &site(None, "", "")
            ),
            "struct has no .nope attribute"
        );
    }

    #[test]
    fn calls_to_defs_read_as_go() {
        let src =
            "def f(a, b, c=1, *args, d, **kw):\n  pass\ndef g():\n  pass\ndef h(a, b=2):\n  pass\n";
        let t = |msg: &str, expr| runtime(msg, &site(None, expr, src));
        assert_eq!(
            t("Missing parameter `a` for call to `diff.f`", "f(b=1)"),
            "function f missing 2 arguments (a, d)"
        );
        assert_eq!(
            t(
                "Found 1 extra positional argument(s) for call to diff.g",
                "g(1)"
            ),
            "function g accepts no arguments (1 given)"
        );
        assert_eq!(
            t(
                "Found 1 extra positional argument(s) for call to diff.h",
                "h(1, 2, [3, 4])"
            ),
            "function h accepts at most 2 positional arguments (3 given)"
        );
        assert_eq!(
            t(
                "Found `x`, `y` extra named parameter(s) for call to diff.h",
                "h(1, x=1, y=2)"
            ),
            "function h got an unexpected keyword argument \"x\""
        );
    }
}
