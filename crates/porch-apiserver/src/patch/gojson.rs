//! JSON as Go's encoding/json reads and writes it: its syntax errors, its type errors for the
//! shapes kube-apiserver decodes a patch into, and its encoding of the stored object.

use serde_json::{Map, Value};

use super::MAX_DEPTH;

/// A JSON value read as `json.RawMessage`s are: numbers, strings and booleans keep the text
/// they were written with.
#[derive(Debug)]
pub(super) enum J {
    Null,
    /// A number, string (quoted, escapes as written) or boolean, as written.
    Scalar(Vec<u8>),
    Arr(Vec<J>),
    /// Members in order, duplicates kept: the key, the length of the key as written once
    /// compacted, the value.
    Obj(Vec<(String, usize, J)>),
}

impl J {
    fn is_string(&self) -> bool {
        matches!(self, J::Scalar(t) if t.first() == Some(&b'"'))
    }

    /// The kind Go names in an `UnmarshalTypeError`.
    fn go_kind(&self) -> &'static str {
        match self {
            J::Null => "null",
            J::Scalar(t) => match t.first() {
                Some(b'"') => "string",
                Some(b't' | b'f') => "bool",
                _ => "number",
            },
            J::Arr(_) => "array",
            J::Obj(_) => "object",
        }
    }

    /// The length of this value's text once compacted by Go's encoder (which escapes
    /// `<`, `>`, `&`, U+2028 and U+2029).
    pub(super) fn compact_len(&self) -> usize {
        match self {
            J::Null => 4,
            J::Scalar(t) => html_len(t),
            J::Arr(items) => {
                2 + items.len().saturating_sub(1) + items.iter().map(J::compact_len).sum::<usize>()
            }
            J::Obj(members) => {
                2 + members.len().saturating_sub(1)
                    + members
                        .iter()
                        .map(|(_, k, v)| k + 1 + v.compact_len())
                        .sum::<usize>()
            }
        }
    }

    pub(super) fn to_value(&self) -> Result<Value, String> {
        Ok(match self {
            J::Null => Value::Null,
            J::Scalar(t) => scalar_value(t)?,
            J::Arr(items) => Value::Array(items.iter().map(J::to_value).collect::<Result<_, _>>()?),
            J::Obj(members) => {
                let mut map = Map::new();
                for (k, _, v) in members {
                    map.insert(k.clone(), v.to_value()?);
                }
                Value::Object(map)
            }
        })
    }
}

/// The value of a scalar's text.
pub(super) fn scalar_value(text: &[u8]) -> Result<Value, String> {
    match text.first() {
        Some(b'"') => Ok(Value::String(unquote(text))),
        Some(b't') => Ok(Value::Bool(true)),
        Some(b'f') => Ok(Value::Bool(false)),
        _ => std::str::from_utf8(text)
            .ok()
            .and_then(|t| serde_json::from_str(t).ok())
            .ok_or_else(|| {
                format!(
                    "json: cannot unmarshal number {} into Go value of type float64",
                    String::from_utf8_lossy(text)
                )
            }),
    }
}

/// Reads a body: Go's syntax check (`checkValid`), then the value.
pub(super) fn parse(data: &[u8]) -> Result<J, String> {
    check_syntax(data)?;
    Reader { s: data, i: 0 }.value(0)
}

/// The type errors of kjson.UnmarshalStrict into kube-apiserver's `[]jsonPatchOp` (the
/// first one in the body).
pub(super) fn check_json_patch(j: &J) -> Result<(), String> {
    let items = match j {
        J::Null => return Ok(()),
        J::Arr(items) => items,
        other => {
            return Err(format!(
                "json: cannot unmarshal {} into Go value of type []handlers.jsonPatchOp",
                other.go_kind()
            ));
        }
    };
    for item in items {
        match item {
            J::Null => {}
            J::Obj(members) => {
                for (key, _, v) in members {
                    match key.as_str() {
                        "op" | "path" | "from" if !matches!(v, J::Null) && !v.is_string() => {
                            return Err(format!(
                                "json: cannot unmarshal {} into Go struct field \
                                 jsonPatchOp.{key} of type string",
                                v.go_kind()
                            ));
                        }
                        "value" => check_numbers(v, "Go struct field jsonPatchOp.value")?,
                        _ => {}
                    }
                }
            }
            other => {
                return Err(format!(
                    "json: cannot unmarshal {} into Go value of type handlers.jsonPatchOp",
                    other.go_kind()
                ));
            }
        }
    }
    Ok(())
}

/// The type errors of kjson.UnmarshalStrict into `map[string]interface{}`.
pub(super) fn check_merge_patch(j: &J) -> Result<(), String> {
    match j {
        J::Null => Ok(()),
        J::Obj(members) => {
            for (_, _, v) in members {
                check_numbers(v, "Go value")?;
            }
            Ok(())
        }
        other => Err(format!(
            "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
            other.go_kind()
        )),
    }
}

/// Numbers read into `interface{}` become float64 (or int64): one too large is an error.
fn check_numbers(j: &J, place: &str) -> Result<(), String> {
    match j {
        J::Scalar(t) if !matches!(t.first(), Some(b'"' | b't' | b'f')) => {
            let text = String::from_utf8_lossy(t);
            if text.parse::<f64>().map_or(true, f64::is_infinite) {
                return Err(format!(
                    "json: cannot unmarshal number {text} into {place} of type float64"
                ));
            }
            Ok(())
        }
        J::Arr(items) => items.iter().try_for_each(|v| check_numbers(v, place)),
        J::Obj(members) => members
            .iter()
            .try_for_each(|(_, _, v)| check_numbers(v, place)),
        _ => Ok(()),
    }
}

/// Reads a body that passed [`check_syntax`].
struct Reader<'a> {
    s: &'a [u8],
    i: usize,
}

impl Reader<'_> {
    fn peek(&self) -> u8 {
        self.s.get(self.i).copied().unwrap_or(0)
    }

    fn space(&mut self) {
        while matches!(self.peek(), b' ' | b'\t' | b'\r' | b'\n') {
            self.i += 1;
        }
    }

    fn value(&mut self, depth: usize) -> Result<J, String> {
        self.space();
        let start = self.i;
        match self.peek() {
            open @ (b'{' | b'[') => {
                if depth == MAX_DEPTH {
                    return Err(format!(
                        "invalid character {} exceeded max depth",
                        quote_char(open)
                    ));
                }
                let close = if open == b'{' { b'}' } else { b']' };
                self.i += 1;
                self.space();
                let mut items = Vec::new();
                let mut members = Vec::new();
                if self.peek() == close {
                    self.i += 1;
                } else {
                    while self.i < self.s.len() {
                        if open == b'{' {
                            self.space();
                            let k = self.i;
                            self.string();
                            let key = &self.s[k..self.i];
                            self.space();
                            self.i += 1; // ':'
                            let v = self.value(depth + 1)?;
                            members.push((unquote(key), html_len(key), v));
                        } else {
                            items.push(self.value(depth + 1)?);
                        }
                        self.space();
                        let sep = self.peek();
                        self.i += 1;
                        if sep == close {
                            break;
                        }
                    }
                }
                Ok(if open == b'{' {
                    J::Obj(members)
                } else {
                    J::Arr(items)
                })
            }
            b'"' => {
                self.string();
                Ok(J::Scalar(self.s[start..self.i].to_vec()))
            }
            b'n' => {
                self.i += 4;
                Ok(J::Null)
            }
            _ => {
                // A number, `true` or `false` (checked): up to what ends a value.
                while !matches!(
                    self.peek(),
                    0 | b',' | b']' | b'}' | b' ' | b'\t' | b'\r' | b'\n'
                ) {
                    self.i += 1;
                }
                Ok(J::Scalar(self.s[start..self.i].to_vec()))
            }
        }
    }

    /// Past a string (at its opening quote).
    fn string(&mut self) {
        self.i += 1;
        while self.i < self.s.len() && self.s[self.i] != b'"' {
            self.i += if self.s[self.i] == b'\\' { 2 } else { 1 };
        }
        self.i = (self.i + 1).min(self.s.len());
    }
}

/// Go's `checkValid`: the first syntax error, in Go's words.
fn check_syntax(data: &[u8]) -> Result<(), String> {
    let mut scanner = Scanner {
        state: State::BeginValue,
        stack: Vec::new(),
        end_top: false,
    };
    for &c in data {
        scanner.step(c)?;
    }
    if scanner.end_top {
        return Ok(());
    }
    // At the end Go reads one more space: it ends a number or a top-level value.
    scanner.step(b' ')?;
    if scanner.end_top {
        Ok(())
    } else {
        Err("unexpected end of JSON input".into())
    }
}

/// Where a value being scanned stands.
#[derive(Debug, Clone, Copy)]
enum Nest {
    Key,
    Value,
    Item,
}

/// The states of Go's scanner (`encoding/json/scanner.go`).
#[derive(Debug, Clone, Copy)]
enum State {
    BeginValue,
    BeginValueOrEmpty,
    BeginStringOrEmpty,
    BeginString,
    InString,
    Escape,
    EscapeU(u8),
    Minus,
    Zero,
    Digits,
    Dot,
    Fraction,
    Exponent,
    ExponentSign,
    ExponentDigits,
    Literal(&'static str, usize),
    EndValue,
    EndTop,
}

struct Scanner {
    state: State,
    stack: Vec<Nest>,
    end_top: bool,
}

impl Scanner {
    fn step(&mut self, c: u8) -> Result<(), String> {
        let space = matches!(c, b' ' | b'\t' | b'\r' | b'\n');
        let invalid = |context: &str| format!("invalid character {} {context}", quote_char(c));
        loop {
            match self.state {
                State::BeginValueOrEmpty => {
                    if space {
                        return Ok(());
                    }
                    self.state = if c == b']' {
                        State::EndValue
                    } else {
                        State::BeginValue
                    };
                }
                State::BeginValue => {
                    if space {
                        return Ok(());
                    }
                    self.state = match c {
                        b'{' => {
                            self.push(Nest::Key, c)?;
                            State::BeginStringOrEmpty
                        }
                        b'[' => {
                            self.push(Nest::Item, c)?;
                            State::BeginValueOrEmpty
                        }
                        b'"' => State::InString,
                        b'-' => State::Minus,
                        b'0' => State::Zero,
                        b'1'..=b'9' => State::Digits,
                        b't' => State::Literal("true", 1),
                        b'f' => State::Literal("false", 1),
                        b'n' => State::Literal("null", 1),
                        _ => return Err(invalid("looking for beginning of value")),
                    };
                    return Ok(());
                }
                State::BeginStringOrEmpty => {
                    if space {
                        return Ok(());
                    }
                    if c == b'}' {
                        if let Some(top) = self.stack.last_mut() {
                            *top = Nest::Value;
                        }
                        self.state = State::EndValue;
                    } else {
                        self.state = State::BeginString;
                    }
                }
                State::BeginString => {
                    if space {
                        return Ok(());
                    }
                    if c != b'"' {
                        return Err(invalid("looking for beginning of object key string"));
                    }
                    self.state = State::InString;
                    return Ok(());
                }
                State::InString => {
                    match c {
                        b'"' => self.state = State::EndValue,
                        b'\\' => self.state = State::Escape,
                        0..=0x1f => return Err(invalid("in string literal")),
                        _ => {}
                    }
                    return Ok(());
                }
                State::Escape => {
                    self.state = match c {
                        b'b' | b'f' | b'n' | b'r' | b't' | b'\\' | b'/' | b'"' => State::InString,
                        b'u' => State::EscapeU(0),
                        _ => return Err(invalid("in string escape code")),
                    };
                    return Ok(());
                }
                State::EscapeU(n) => {
                    if !c.is_ascii_hexdigit() {
                        return Err(invalid("in \\u hexadecimal character escape"));
                    }
                    self.state = if n == 3 {
                        State::InString
                    } else {
                        State::EscapeU(n + 1)
                    };
                    return Ok(());
                }
                State::Minus => {
                    self.state = match c {
                        b'0' => State::Zero,
                        b'1'..=b'9' => State::Digits,
                        _ => return Err(invalid("in numeric literal")),
                    };
                    return Ok(());
                }
                State::Digits if c.is_ascii_digit() => return Ok(()),
                State::Digits | State::Zero => match c {
                    b'.' => {
                        self.state = State::Dot;
                        return Ok(());
                    }
                    b'e' | b'E' => {
                        self.state = State::Exponent;
                        return Ok(());
                    }
                    _ => self.state = State::EndValue,
                },
                State::Dot => {
                    if !c.is_ascii_digit() {
                        return Err(invalid("after decimal point in numeric literal"));
                    }
                    self.state = State::Fraction;
                    return Ok(());
                }
                State::Fraction => match c {
                    b'0'..=b'9' => return Ok(()),
                    b'e' | b'E' => {
                        self.state = State::Exponent;
                        return Ok(());
                    }
                    _ => self.state = State::EndValue,
                },
                State::Exponent => {
                    self.state = State::ExponentSign;
                    if c == b'+' || c == b'-' {
                        return Ok(());
                    }
                }
                State::ExponentSign => {
                    if !c.is_ascii_digit() {
                        return Err(invalid("in exponent of numeric literal"));
                    }
                    self.state = State::ExponentDigits;
                    return Ok(());
                }
                State::ExponentDigits => {
                    if c.is_ascii_digit() {
                        return Ok(());
                    }
                    self.state = State::EndValue;
                }
                State::Literal(word, i) => {
                    let want = word.as_bytes()[i];
                    if c != want {
                        return Err(invalid(&format!(
                            "in literal {word} (expecting {})",
                            quote_char(want)
                        )));
                    }
                    self.state = if i + 1 == word.len() {
                        State::EndValue
                    } else {
                        State::Literal(word, i + 1)
                    };
                    return Ok(());
                }
                State::EndValue => {
                    let Some(top) = self.stack.last_mut() else {
                        self.end_top = true;
                        self.state = State::EndTop;
                        continue;
                    };
                    if space {
                        return Ok(());
                    }
                    match (*top, c) {
                        (Nest::Key, b':') => {
                            *top = Nest::Value;
                            self.state = State::BeginValue;
                        }
                        (Nest::Key, _) => return Err(invalid("after object key")),
                        (Nest::Value, b',') => {
                            *top = Nest::Key;
                            self.state = State::BeginString;
                        }
                        (Nest::Item, b',') => self.state = State::BeginValue,
                        (Nest::Value, b'}') | (Nest::Item, b']') => self.pop(),
                        (Nest::Value, _) => return Err(invalid("after object key:value pair")),
                        (Nest::Item, _) => return Err(invalid("after array element")),
                    }
                    return Ok(());
                }
                State::EndTop => {
                    if !space {
                        return Err(invalid("after top-level value"));
                    }
                    return Ok(());
                }
            }
        }
    }

    fn push(&mut self, nest: Nest, c: u8) -> Result<(), String> {
        self.stack.push(nest);
        if self.stack.len() > 10_000 {
            return Err(format!(
                "invalid character {} exceeded max depth",
                quote_char(c)
            ));
        }
        Ok(())
    }

    fn pop(&mut self) {
        self.stack.pop();
        if self.stack.is_empty() {
            self.end_top = true;
            self.state = State::EndTop;
        } else {
            self.state = State::EndValue;
        }
    }
}

/// Go's `quoteChar`: a byte in single quotes, as `strconv.Quote` spells it.
fn quote_char(c: u8) -> String {
    match c {
        b'\'' => r"'\''".into(),
        b'"' => "'\"'".into(),
        b'\\' => r"'\\'".into(),
        0x07 => r"'\a'".into(),
        0x08 => r"'\b'".into(),
        0x0c => r"'\f'".into(),
        b'\n' => r"'\n'".into(),
        b'\r' => r"'\r'".into(),
        b'\t' => r"'\t'".into(),
        0x0b => r"'\v'".into(),
        0x20..=0x7e => format!("'{}'", c as char),
        0x00..=0x1f | 0x7f => format!("'\\x{c:02x}'"),
        // A byte past ASCII is read as the rune of the same number.
        0xa1..=0xff if c != 0xad => format!("'{}'", c as char),
        _ => format!("'\\u{c:04x}'"),
    }
}

/// A quoted string's value as Go decodes it: bad UTF-8 and lone surrogates read as U+FFFD.
pub(super) fn unquote(quoted: &[u8]) -> String {
    let s = quoted
        .get(1..quoted.len().saturating_sub(1))
        .unwrap_or_default();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i] != b'\\' {
            let end = s[i..]
                .iter()
                .position(|&b| b == b'\\')
                .map_or(s.len(), |p| i + p);
            for chunk in s[i..end].utf8_chunks() {
                out.push_str(chunk.valid());
                out.extend(chunk.invalid().iter().map(|_| '\u{fffd}'));
            }
            i = end;
            continue;
        }
        let escape = s.get(i + 1).copied().unwrap_or(b'\\');
        i += 2;
        match escape {
            b'b' => out.push('\u{8}'),
            b'f' => out.push('\u{c}'),
            b'n' => out.push('\n'),
            b'r' => out.push('\r'),
            b't' => out.push('\t'),
            b'u' => {
                let high = hex4(s, i);
                i += 4;
                if (0xd800..0xdc00).contains(&high)
                    && s.get(i..i + 2) == Some(b"\\u")
                    && let Some(low) = Some(hex4(s, i + 2)).filter(|l| (0xdc00..0xe000).contains(l))
                {
                    i += 6;
                    let c = 0x10000 + ((high - 0xd800) << 10) + (low - 0xdc00);
                    out.push(char::from_u32(c).unwrap_or('\u{fffd}'));
                } else {
                    out.push(char::from_u32(high).unwrap_or('\u{fffd}'));
                }
            }
            other => out.push(other as char),
        }
    }
    out
}

fn hex4(s: &[u8], at: usize) -> u32 {
    s.get(at..at + 4)
        .and_then(|h| std::str::from_utf8(h).ok())
        .and_then(|h| u32::from_str_radix(h, 16).ok())
        .unwrap_or(0xfffd)
}

/// Go's encoding of a string (HTML-safe, as kube-apiserver encodes objects).
pub(super) fn quote(s: &str) -> String {
    kpt::yaml::go_json::encode_string(s)
}

/// Go's `strconv.Quote` (for the library's messages).
pub(super) fn go_quote(s: &str) -> String {
    kpt::goquote::go_quote(s)
}

/// Go's encoding of a number or boolean or string of a stored object (integers as int64,
/// other numbers as float64, as kube-apiserver decodes objects).
pub(super) fn encode_scalar(v: &Value) -> Vec<u8> {
    match v {
        Value::Bool(b) => b.to_string().into_bytes(),
        Value::String(s) => quote(s).into_bytes(),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i.to_string().into_bytes(),
            (None, Some(f)) => kpt::yaml::go_json::encode_float(f).into_bytes(),
            (None, None) => n.to_string().into_bytes(),
        },
        _ => b"null".to_vec(),
    }
}

/// The length of a value's text after Go's compaction, which escapes `<`, `>`, `&`,
/// U+2028 and U+2029.
pub(super) fn html_len(text: &[u8]) -> usize {
    let mut n = text.len();
    let mut i = 0;
    while i < text.len() {
        match text[i] {
            b'<' | b'>' | b'&' => n += 5,
            0xe2 if text.get(i + 1) == Some(&0x80)
                && matches!(text.get(i + 2), Some(0xa8 | 0xa9)) =>
            {
                n += 3;
                i += 2;
            }
            _ => {}
        }
        i += 1;
    }
    n
}

/// A scalar's text as Go's encoder writes it out (see [`html_len`]).
pub(super) fn html_escape(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(html_len(text));
    let mut i = 0;
    while i < text.len() {
        match text[i] {
            c @ (b'<' | b'>' | b'&') => out.extend_from_slice(format!("\\u{c:04x}").as_bytes()),
            0xe2 if text.get(i + 1) == Some(&0x80)
                && matches!(text.get(i + 2), Some(0xa8 | 0xa9)) =>
            {
                out.extend_from_slice(if text[i + 2] == 0xa8 {
                    b"\\u2028"
                } else {
                    b"\\u2029"
                });
                i += 2;
            }
            c => out.push(c),
        }
        i += 1;
    }
    out
}
