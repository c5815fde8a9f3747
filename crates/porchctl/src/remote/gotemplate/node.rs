//! The parse tree of a template (Go's `parse` nodes the engine supports), how Go prints
//! nodes in error messages, and Go's literal syntax: numbers as `strconv` reads them and
//! quoted strings and characters as `strconv.Unquote` does.

use std::fmt;

/// A node of a list: text, an action, a control structure.
#[derive(Debug, Clone)]
pub(super) enum Node {
    Text(String),
    /// `{{pipeline}}`: printed unless it declares variables.
    Action(Pipe),
    If(Control),
    With(Control),
    Range(Control),
    Break,
    Continue,
    /// `{{template "name" [pipeline]}}` (and what `{{block}}` leaves in its place).
    Template(TemplateCall),
}

/// A call of a named template.
#[derive(Debug, Clone)]
pub(super) struct TemplateCall {
    pub pos: usize,
    pub name: String,
    pub pipe: Option<Pipe>,
}

impl fmt::Display for TemplateCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = super::go_quote(&self.name);
        match &self.pipe {
            None => write!(f, "{{{{template {name}}}}}"),
            Some(p) => write!(f, "{{{{template {name} {p}}}}}"),
        }
    }
}

/// Go's `IsEmptyTree`: nothing but white space.
pub(super) fn is_empty_tree(list: &[Node]) -> bool {
    list.iter()
        .all(|n| matches!(n, Node::Text(t) if t.trim().is_empty()))
}

/// `{{if|with|range pipeline}} list [{{else}} list] {{end}}`.
#[derive(Debug, Clone)]
pub(super) struct Control {
    pub pipe: Pipe,
    pub list: Vec<Node>,
    pub else_list: Option<Vec<Node>>,
}

/// `[$x := | $x = | $i, $e :=] command | command ...`.
#[derive(Debug, Clone)]
pub(super) struct Pipe {
    pub pos: usize,
    pub is_assign: bool,
    pub decl: Vec<String>,
    pub cmds: Vec<Command>,
}

/// Space-separated operands; the first may be a function.
#[derive(Debug, Clone)]
pub(super) struct Command {
    pub pos: usize,
    pub args: Vec<Arg>,
}

/// An operand.
#[derive(Debug, Clone)]
pub(super) enum Arg {
    /// `.a.b` (idents without dots). Go places a chained field at its second part.
    Field {
        pos: usize,
        idents: Vec<String>,
    },
    /// `$x.a.b`: `idents[0]` is `$x`.
    Variable {
        pos: usize,
        idents: Vec<String>,
    },
    /// `(pipeline).a.b` or `func.a`.
    Chain {
        pos: usize,
        node: Box<Arg>,
        fields: Vec<String>,
    },
    Identifier {
        pos: usize,
        name: String,
    },
    Dot {
        pos: usize,
    },
    Nil {
        pos: usize,
    },
    Bool {
        pos: usize,
        val: bool,
    },
    Number {
        pos: usize,
        num: Number,
    },
    /// `quoted` is the literal as written.
    String {
        pos: usize,
        quoted: String,
        text: String,
    },
    Pipe(Box<Pipe>),
}

impl Arg {
    pub fn pos(&self) -> usize {
        match self {
            Arg::Field { pos, .. }
            | Arg::Variable { pos, .. }
            | Arg::Chain { pos, .. }
            | Arg::Identifier { pos, .. }
            | Arg::Dot { pos }
            | Arg::Nil { pos }
            | Arg::Bool { pos, .. }
            | Arg::Number { pos, .. }
            | Arg::String { pos, .. } => *pos,
            Arg::Pipe(p) => p.pos,
        }
    }
}

/// A number literal: what Go's `NumberNode` records of it.
#[derive(Debug, Clone)]
pub(super) struct Number {
    pub text: String,
    pub int: Option<i64>,
    pub uint: bool,
    pub float: Option<f64>,
}

impl fmt::Display for Pipe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.decl.is_empty() {
            write!(f, "{} := ", self.decl.join(", "))?;
        }
        for (i, c) in self.cmds.iter().enumerate() {
            if i > 0 {
                f.write_str(" | ")?;
            }
            write!(f, "{c}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, a) in self.args.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            match a {
                Arg::Pipe(p) => write!(f, "({p})")?,
                other => write!(f, "{other}")?,
            }
        }
        Ok(())
    }
}

impl fmt::Display for Arg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Arg::Field { idents, .. } => {
                for i in idents {
                    write!(f, ".{i}")?;
                }
                Ok(())
            }
            Arg::Variable { idents, .. } => f.write_str(&idents.join(".")),
            Arg::Chain { node, fields, .. } => {
                match node.as_ref() {
                    Arg::Pipe(p) => write!(f, "({p})")?,
                    other => write!(f, "{other}")?,
                }
                for field in fields {
                    write!(f, ".{field}")?;
                }
                Ok(())
            }
            Arg::Identifier { name, .. } => f.write_str(name),
            Arg::Dot { .. } => f.write_str("."),
            Arg::Nil { .. } => f.write_str("nil"),
            Arg::Bool { val, .. } => write!(f, "{val}"),
            Arg::Number { num, .. } => f.write_str(&num.text),
            Arg::String { quoted, .. } => f.write_str(quoted),
            Arg::Pipe(p) => write!(f, "{p}"),
        }
    }
}

/// Go's `newNumber`: the integer, unsigned and float readings of a number token.
pub(super) fn parse_number(text: &str, char_constant: bool) -> Result<Number, String> {
    let mut n = Number {
        text: text.to_string(),
        int: None,
        uint: false,
        float: None,
    };
    if char_constant {
        let (c, tail) = unquote_char(&text[1..], '\'').ok_or("invalid syntax")?;
        if tail != "'" {
            return Err(format!("malformed character constant: {text}"));
        }
        n.int = Some(i64::from(u32::from(c)));
        n.uint = true;
        n.float = Some(f64::from(u32::from(c)));
        return Ok(n);
    }
    if text.ends_with('i') {
        return Err(format!("complex number {text} is not supported"));
    }
    let (negative, unsigned) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let u = parse_uint(unsigned);
    if text.starts_with(['+', '-']) {
        // ParseUint takes no sign.
    } else if u.is_some() {
        n.uint = true;
    }
    n.int = u.and_then(|u| {
        if negative {
            0i64.checked_sub_unsigned(u)
        } else {
            i64::try_from(u).ok()
        }
    });
    if let Some(i) = n.int {
        n.float = Some(i as f64);
    } else if n.uint {
        n.float = u.map(|u| u as f64);
    } else if let Some(f) = parse_float(text) {
        if !text.contains(['.', 'e', 'E', 'p', 'P']) {
            return Err(format!(
                "integer overflow: {}",
                super::gofmt::quote(text, false)
            ));
        }
        n.float = Some(f);
        if f.fract() == 0.0 && f.abs() < 9.2e18 {
            n.int = Some(f as i64);
        }
    }
    if n.int.is_none() && !n.uint && n.float.is_none() {
        return Err(format!(
            "illegal number syntax: {}",
            super::gofmt::quote(text, false)
        ));
    }
    Ok(n)
}

/// Digits with Go's `_` separators (only between digits, or after a base prefix).
fn strip_underscores(s: &str, prefixed: bool) -> Option<String> {
    if !s.contains('_') {
        return Some(s.to_string());
    }
    let ok = !s.ends_with('_') && !s.contains("__") && (prefixed || !s.starts_with('_'));
    ok.then(|| s.replace('_', ""))
}

/// `strconv.ParseUint(s, 0, 64)`.
fn parse_uint(s: &str) -> Option<u64> {
    let lower = s.to_ascii_lowercase();
    let (radix, digits, prefixed) = if let Some(d) = lower.strip_prefix("0x") {
        (16, d, true)
    } else if let Some(d) = lower.strip_prefix("0o") {
        (8, d, true)
    } else if let Some(d) = lower.strip_prefix("0b") {
        (2, d, true)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (8, &lower[1..], true)
    } else {
        (10, lower.as_str(), false)
    };
    let digits = strip_underscores(digits, prefixed)?;
    if digits.is_empty() || digits.starts_with(['+', '-']) {
        return None;
    }
    u64::from_str_radix(&digits, radix).ok()
}

/// `strconv.ParseFloat(s, 64)` for the decimal forms a template can hold.
fn parse_float(s: &str) -> Option<f64> {
    let digits = strip_underscores(s, false)?;
    let body = digits.trim_start_matches(['+', '-']);
    if body.is_empty() || !body.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        return None;
    }
    digits.parse().ok()
}

/// `strconv.Unquote` of a `"…"` or `` `…` `` literal.
pub(super) fn unquote(s: &str) -> Option<String> {
    if let Some(raw) = s.strip_prefix('`').and_then(|r| r.strip_suffix('`')) {
        return (!raw.contains('`')).then(|| raw.replace('\r', ""));
    }
    let mut rest = s.strip_prefix('"')?.strip_suffix('"')?;
    let mut bytes = Vec::new();
    while !rest.is_empty() {
        if rest.starts_with('"') || rest.starts_with('\n') {
            return None;
        }
        if let Some(after) = rest.strip_prefix('\\')
            && let Some(b) = byte_escape(after)
        {
            bytes.push(b);
            rest = &after[3..];
            continue;
        }
        let (c, tail) = unquote_char(rest, '"')?;
        let mut buf = [0u8; 4];
        bytes.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        rest = tail;
    }
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// `\xhh` and `\ooo` in a string give bytes, not characters.
fn byte_escape(after: &str) -> Option<u8> {
    if let Some(hex) = after.strip_prefix('x') {
        let hex = hex.get(..2)?;
        return if hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            u8::from_str_radix(hex, 16).ok()
        } else {
            None
        };
    }
    let oct = after.get(..3)?;
    if oct.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
        return u8::try_from(u32::from_str_radix(oct, 8).ok()?).ok();
    }
    None
}

/// `strconv.UnquoteChar`: the first character of `s` (escapes decoded) and the rest.
pub(super) fn unquote_char(s: &str, quote: char) -> Option<(char, &str)> {
    let c = s.chars().next()?;
    if c == quote && (quote == '\'' || quote == '"') {
        return None;
    }
    if c != '\\' {
        return Some((c, &s[c.len_utf8()..]));
    }
    let rest = &s[1..];
    let e = rest.chars().next()?;
    let after = &rest[e.len_utf8()..];
    let simple = match e {
        'a' => Some('\u{7}'),
        'b' => Some('\u{8}'),
        'f' => Some('\u{c}'),
        'n' => Some('\n'),
        'r' => Some('\r'),
        't' => Some('\t'),
        'v' => Some('\u{b}'),
        '\\' => Some('\\'),
        '\'' | '"' if e == quote => Some(e),
        _ => None,
    };
    if let Some(c) = simple {
        return Some((c, after));
    }
    let hex = |n: usize| -> Option<(char, &str)> {
        let digits = after.get(..n)?;
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let v = u32::from_str_radix(digits, 16).ok()?;
        Some((char::from_u32(v)?, &after[n..]))
    };
    match e {
        'x' => hex(2),
        'u' => hex(4),
        'U' => hex(8),
        '0'..='7' => {
            let digits = rest.get(..3)?;
            if !digits.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
                return None;
            }
            let v = u32::from_str_radix(digits, 8).ok()?;
            if v > 255 {
                return None;
            }
            Some((char::from_u32(v)?, &rest[3..]))
        }
        _ => None,
    }
}
