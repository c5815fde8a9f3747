//! Go's `regexp.Compile` for the patterns users give kpt and the catalog's functions
//! (search-replace's `by-value-regex`, a selector's `resourceFileRegexp`): a port of Go's
//! `regexp/syntax` parser loop, branch by branch, that refuses what Go refuses with Go's
//! error text (`error parsing regexp: <code>: `<expr>``, the first error in Go's reading
//! order) and writes what Go accepts as an equivalent pattern for the Rust regex crate,
//! which then runs it (both are leftmost-first, so matches and groups agree):
//!
//! - Perl classes are ASCII as in Go (`\d` is `[0-9]`, `\s` is `[\t\n\f\r ]`, `\b` an
//!   ASCII word boundary); the Rust crate's would be Unicode;
//! - octal (`\012`), `\x..`, `\Q…\E` and C escapes become plain characters; `{01}` and
//!   other unparsable braces are literal `{`;
//! - a repetition after a flag group repeats what came before the group (`a(?i)*`), with
//!   Go's greediness (`(?U)` is applied here, never handed on);
//! - named groups are plain groups (Go allows names and duplicates the crate does not).
//!
//! Not ported: Go's limits on nesting depth and program size, and its Unicode tables
//! (the crate's are used for `\p{…}`; a script name the crate knows but Go does not is
//! accepted).

use regex::Regex;

/// `regexp.Compile(pattern)`: the pattern with Go's meaning, or Go's error text.
pub fn compile(pattern: &str) -> Result<Regex, String> {
    let rust = translate(pattern)?;
    // Go has no limit this low on a program's size (its own is 128 MB).
    regex::RegexBuilder::new(&rust)
        .size_limit(1 << 28)
        .build()
        .map_err(|e| e.to_string())
}

/// Go's error for `pattern`, if Go refuses it.
pub fn error(pattern: &str) -> Option<String> {
    translate(pattern).err()
}

fn fail<T>(code: &str, expr: &str) -> Result<T, String> {
    Err(format!("error parsing regexp: {code}: `{expr}`"))
}

#[derive(Clone, Copy, Default, PartialEq)]
struct Flags {
    fold: bool,
    multi_line: bool,
    dot_nl: bool,
    non_greedy: bool,
}

impl Flags {
    /// The inline flags that take the crate from `self` to `to` (`U` is never handed on).
    fn delta(self, to: Flags) -> String {
        let (mut on, mut off) = (String::new(), String::new());
        for (c, a, b) in [
            ('i', self.fold, to.fold),
            ('m', self.multi_line, to.multi_line),
            ('s', self.dot_nl, to.dot_nl),
        ] {
            if a != b {
                if b { &mut on } else { &mut off }.push(c);
            }
        }
        match (on.is_empty(), off.is_empty()) {
            (true, true) => String::new(),
            (_, true) => on,
            _ => format!("{on}-{off}"),
        }
    }
}

/// An open group: where it starts in the output, the flags to restore at `)`, and how
/// many copies of their innermost part each of its items asks for (Go's
/// `repeatIsValid`, see [`Translator::repeat`]).
struct Group {
    out_start: usize,
    flags: Flags,
    needs: Vec<u64>,
}

struct Translator<'a> {
    whole: &'a str,
    out: String,
    flags: Flags,
    groups: Vec<Group>,
    /// Go's stack top is a real operand (not empty, `(` or `|`).
    operand: bool,
    /// The output span of that operand (a repetition wraps it).
    last_atom: (usize, usize),
    /// The items of the top level, as a group's (see [`Group::needs`]).
    top_needs: Vec<u64>,
}

const NAMED: &[&str] = &[
    "alnum", "alpha", "ascii", "blank", "cntrl", "digit", "graph", "lower", "print", "punct",
    "space", "upper", "word", "xdigit",
];

const CATEGORIES: &[&str] = &[
    "C", "Cc", "Cf", "Co", "Cs", "L", "Ll", "Lm", "Lo", "Lt", "Lu", "M", "Mc", "Me", "Mn", "N",
    "Nd", "Nl", "No", "P", "Pc", "Pd", "Pe", "Pf", "Pi", "Po", "Ps", "S", "Sc", "Sk", "Sm", "So",
    "Z", "Zl", "Zp", "Zs",
];

fn escape_char(c: char) -> String {
    format!("\\x{{{:x}}}", c as u32)
}

fn perl_class(c: u8) -> Option<(&'static str, bool)> {
    Some(match c {
        b'd' => ("0-9", false),
        b'D' => ("0-9", true),
        b's' => ("\\t\\n\\x0C\\r ", false),
        b'S' => ("\\t\\n\\x0C\\r ", true),
        b'w' => ("0-9A-Za-z_", false),
        b'W' => ("0-9A-Za-z_", true),
        _ => return None,
    })
}

/// A Unicode class name Go knows (`Any`, a general category, or a script).
fn unicode_name_ok(name: &str) -> bool {
    if name == "Any" || CATEGORIES.contains(&name) {
        return true;
    }
    name.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && Regex::new(&format!("\\p{{{name}}}")).is_ok()
}

/// `parseUnicodeClass` at `s` (starting `\p` or `\P`): the crate's class and what
/// follows.
fn unicode_class(s: &str) -> Result<(String, &str), String> {
    let mut negated = s.as_bytes()[1] == b'P';
    let t = &s[2..];
    let (seq_len, name) = match t.chars().next() {
        Some('{') => {
            let Some(end) = s.find('}') else {
                return fail("invalid character class range", s);
            };
            (end + 1, &s[3..end])
        }
        Some(c) => (2 + c.len_utf8(), &t[..c.len_utf8()]),
        None => (2, ""),
    };
    let seq = &s[..seq_len];
    let name = match name.strip_prefix('^') {
        Some(n) => {
            negated = !negated;
            n
        }
        None => name,
    };
    if !unicode_name_ok(name) {
        return fail("invalid character class range", seq);
    }
    let p = if negated { 'P' } else { 'p' };
    Ok((format!("\\{p}{{{name}}}"), &s[seq_len..]))
}

/// `parseEscape` at `s` (starting `\`): the character and what follows.
fn escape(s: &str) -> Result<(char, &str), String> {
    let t = &s[1..];
    let Some(c) = t.chars().next() else {
        return fail("trailing backslash at end of expression", "");
    };
    let mut t = &t[c.len_utf8()..];
    let bad = |t: &str| fail("invalid escape sequence", &s[..s.len() - t.len()]);
    let octal = |t: &str| {
        t.as_bytes()
            .first()
            .is_some_and(|b| (b'0'..=b'7').contains(b))
    };
    match c {
        '1'..='7' if !octal(t) => bad(t),
        '0'..='7' => {
            let mut r = c as u32 - '0' as u32;
            for _ in 1..3 {
                if !octal(t) {
                    break;
                }
                r = r * 8 + (t.as_bytes()[0] - b'0') as u32;
                t = &t[1..];
            }
            Ok((char::from_u32(r).unwrap_or('\0'), t))
        }
        'x' => {
            let Some(c) = t.chars().next() else {
                return bad(t);
            };
            t = &t[c.len_utf8()..];
            if c == '{' {
                let mut r: u32 = 0;
                let mut digits = 0;
                loop {
                    let Some(c) = t.chars().next() else {
                        return bad(t);
                    };
                    t = &t[c.len_utf8()..];
                    if c == '}' {
                        break;
                    }
                    let Some(v) = c.to_digit(16) else {
                        return bad(t);
                    };
                    r = r * 16 + v;
                    if r > 0x10FFFF {
                        return bad(t);
                    }
                    digits += 1;
                }
                if digits == 0 {
                    return bad(t);
                }
                return char::from_u32(r).map(|c| (c, t)).map_or_else(|| bad(t), Ok);
            }
            let x = c.to_digit(16);
            let next = t.chars().next();
            if let Some(n) = next {
                t = &t[n.len_utf8()..];
            }
            match (x, next.and_then(|n| n.to_digit(16))) {
                (Some(x), Some(y)) => Ok((char::from_u32(x * 16 + y).unwrap_or('\0'), t)),
                _ => bad(t),
            }
        }
        'a' => Ok(('\x07', t)),
        'f' => Ok(('\x0C', t)),
        'n' => Ok(('\n', t)),
        'r' => Ok(('\r', t)),
        't' => Ok(('\t', t)),
        'v' => Ok(('\x0B', t)),
        c if c.is_ascii() && !c.is_ascii_alphanumeric() => Ok((c, t)),
        _ => bad(t),
    }
}

/// `parseRepeat`: `{n}`, `{n,}` or `{n,m}` (no leading zeros) and what follows; `None`
/// when the brace is a literal. A number too big to read is -1.
fn repeat_braces(s: &str) -> Option<(i64, i64, &str)> {
    fn int(s: &str) -> Option<(i64, &str)> {
        let b = s.as_bytes();
        if !b.first()?.is_ascii_digit() || (b.len() >= 2 && b[0] == b'0' && b[1].is_ascii_digit()) {
            return None;
        }
        let end = b
            .iter()
            .position(|c| !c.is_ascii_digit())
            .unwrap_or(b.len());
        let mut n: i64 = 0;
        for d in &b[..end] {
            if n >= 100_000_000 {
                n = -1;
                break;
            }
            n = n * 10 + i64::from(d - b'0');
        }
        Some((n, &s[end..]))
    }
    let (mut min, s) = int(s.strip_prefix('{')?)?;
    let (max, s) = match s.strip_prefix(',') {
        None => (min, s),
        Some(s) if s.starts_with('}') => (-1, s),
        Some(s) => {
            let (max, s) = int(s)?;
            if max < 0 {
                min = -1;
            }
            (max, s)
        }
    };
    Some((min, max, s.strip_prefix('}')?))
}

impl Translator<'_> {
    fn atom(&mut self, text: &str) {
        let start = self.out.len();
        self.out.push_str(text);
        self.operand = true;
        self.last_atom = (start, self.out.len());
        self.needs().push(0);
    }

    /// The items of the innermost open group.
    fn needs(&mut self) -> &mut Vec<u64> {
        match self.groups.last_mut() {
            Some(g) => &mut g.needs,
            None => &mut self.top_needs,
        }
    }

    /// A repetition operator `op` (`*`, `+`, `?`, `{n,m}`) at `before`; `after` follows
    /// it; `last` is the previous token when that was a repetition too.
    fn repeat<'s>(
        &mut self,
        op: &str,
        before: &'s str,
        mut after: &'s str,
        last: Option<&'s str>,
    ) -> Result<&'s str, String> {
        let mut greedy = !self.flags.non_greedy;
        if let Some(rest) = after.strip_prefix('?') {
            after = rest;
            greedy = !greedy;
        }
        if let Some(last) = last {
            return fail(
                "invalid nested repetition operator",
                &last[..last.len() - after.len()],
            );
        }
        if !self.operand {
            return fail(
                "missing argument to repetition operator",
                &before[..before.len() - after.len()],
            );
        }
        // Go's `repeatIsValid`: a counted repetition with a count of 2 or more may not
        // make more than 1000 copies of what it holds, counting the repetitions inside.
        let counted = op.starts_with('{');
        let (min, max) = counts(op);
        let inner = self.needs().last().copied().unwrap_or(0);
        let need = if !counted {
            inner
        } else {
            let m = if max < 0 { min } else { max } as u64;
            if m == 0 {
                0
            } else {
                m.max(m.saturating_mul(inner))
            }
        };
        if counted && (min >= 2 || max >= 2) && need > 1000 {
            return fail(
                "invalid repeat count",
                &before[..before.len() - after.len()],
            );
        }
        if let Some(last) = self.needs().last_mut() {
            *last = need;
        }
        let (start, end) = self.last_atom;
        let atom = self.out[start..end].to_string();
        let trailing = self.out[end..].to_string();
        self.out.truncate(start);
        if op == "{0,0}" {
            // The crate drops the groups of `x{0}`; Go keeps them (unset). An atom that
            // cannot match keeps them in the crate too.
            self.out.push_str("(?:");
            self.out.push_str(&atom);
            self.out.push_str("(?-u:\\b)(?-u:\\B))?");
        } else {
            self.out.push_str("(?:");
            self.out.push_str(&atom);
            self.out.push(')');
            self.out.push_str(op);
            if !greedy {
                self.out.push('?');
            }
        }
        self.last_atom = (start, self.out.len());
        self.out.push_str(&trailing);
        Ok(after)
    }

    /// `parseClass` at `s` (starting `[`).
    fn class<'s>(&mut self, s: &'s str) -> Result<&'s str, String> {
        let mut t = &s[1..];
        let mut out = String::from("[");
        if let Some(rest) = t.strip_prefix('^') {
            out.push('^');
            t = rest;
        }
        let mut first = true;
        loop {
            if t.is_empty() {
                return fail("missing closing ]", s);
            }
            if t.starts_with(']') && !first {
                break;
            }
            first = false;
            if t.starts_with("[:")
                && let Some(i) = t[2..].find(":]")
            {
                let name = &t[..i + 4];
                let bare = &name[2..name.len() - 2];
                if !NAMED.contains(&bare.strip_prefix('^').unwrap_or(bare)) {
                    return fail("invalid character class range", name);
                }
                out.push_str(name);
                t = &t[name.len()..];
                continue;
            }
            if t.starts_with("\\p") || t.starts_with("\\P") {
                let (class, rest) = unicode_class(t)?;
                out.push_str(&class);
                t = rest;
                continue;
            }
            if t.starts_with('\\')
                && let Some((ranges, negated)) = t.as_bytes().get(1).and_then(|c| perl_class(*c))
            {
                if negated {
                    out.push_str(&format!("[^{ranges}]"));
                } else {
                    out.push_str(ranges);
                }
                t = &t[2..];
                continue;
            }
            let range = t;
            let (lo, rest) = class_char(t, s)?;
            t = rest;
            let mut hi = lo;
            if t.len() >= 2 && t.starts_with('-') && !t[1..].starts_with(']') {
                let (h, rest) = class_char(&t[1..], s)?;
                t = rest;
                hi = h;
                if hi < lo {
                    return fail(
                        "invalid character class range",
                        &range[..range.len() - t.len()],
                    );
                }
            }
            out.push_str(&escape_char(lo));
            if hi != lo {
                out.push('-');
                out.push_str(&escape_char(hi));
            }
        }
        out.push(']');
        self.atom(&out);
        Ok(&t[1..])
    }

    /// `parsePerlFlags` at `s` (starting `(?`).
    fn perl_flags<'s>(&mut self, s: &'s str) -> Result<&'s str, String> {
        let named = if s.starts_with("(?P<") {
            Some(4)
        } else if s.starts_with("(?<") && !s.starts_with("(?<=") && !s.starts_with("(?<!") {
            Some(3)
        } else {
            None
        };
        if let Some(begin) = named {
            let Some(end) = s.find('>') else {
                return fail("invalid named capture", s);
            };
            let name = &s[begin..end];
            if name.is_empty() || !name.chars().all(|c| c == '_' || c.is_alphanumeric()) {
                return fail("invalid named capture", &s[..=end]);
            }
            self.open(self.flags);
            return Ok(&s[end + 1..]);
        }
        let mut t = &s[2..];
        let mut flags = self.flags;
        let mut negate = false;
        let mut saw = false;
        while let Some(c) = t.chars().next() {
            t = &t[c.len_utf8()..];
            let set = !negate;
            match c {
                'i' => flags.fold = set,
                'm' => flags.multi_line = set,
                's' => flags.dot_nl = set,
                'U' => flags.non_greedy = set,
                '-' if !negate => {
                    negate = true;
                    saw = false;
                    continue;
                }
                ':' | ')' if !negate || saw => {
                    let saved = self.flags;
                    if c == ':' {
                        self.open(saved);
                        // Not capturing: `(?:`, with the flags that change.
                        self.out.pop();
                        self.out.push_str(&format!("(?{}:", saved.delta(flags)));
                    } else {
                        let delta = saved.delta(flags);
                        if !delta.is_empty() {
                            self.out.push_str(&format!("(?{delta})"));
                        }
                    }
                    self.flags = flags;
                    return Ok(t);
                }
                _ => break,
            }
            saw = true;
        }
        fail(
            "invalid or unsupported Perl syntax",
            &s[..s.len() - t.len()],
        )
    }

    /// A group opens (written `(`; a caller makes it `(?…:`).
    fn open(&mut self, flags: Flags) {
        self.groups.push(Group {
            out_start: self.out.len(),
            flags,
            needs: Vec::new(),
        });
        self.out.push('(');
        self.operand = false;
    }
}

/// The counts of a repetition operator as written here (`{n,m}`, `{n,}`; 0 for the
/// others, which are no counted repetition).
fn counts(op: &str) -> (i64, i64) {
    let Some(inner) = op.strip_prefix('{').and_then(|o| o.strip_suffix('}')) else {
        return (0, 0);
    };
    let (min, max) = inner.split_once(',').unwrap_or((inner, inner));
    let min = min.parse().unwrap_or(0);
    (
        min,
        if max.is_empty() {
            -1
        } else {
            max.parse().unwrap_or(0)
        },
    )
}

/// `parseClassChar`: one character of a class (`\` escapes allowed).
fn class_char<'s>(t: &'s str, whole_class: &str) -> Result<(char, &'s str), String> {
    let Some(c) = t.chars().next() else {
        return fail("missing closing ]", whole_class);
    };
    if c == '\\' {
        return escape(t);
    }
    Ok((c, &t[c.len_utf8()..]))
}

/// The whole parse: Go's error, or the crate's pattern.
fn translate(pattern: &str) -> Result<String, String> {
    let mut tr = Translator {
        whole: pattern,
        out: String::new(),
        flags: Flags::default(),
        groups: Vec::new(),
        operand: false,
        last_atom: (0, 0),
        top_needs: Vec::new(),
    };
    let mut t = pattern;
    let mut last_repeat: Option<&str> = None;
    while let Some(c) = t.chars().next() {
        let mut repeat = None;
        match c {
            '(' if t.starts_with("(?") => t = tr.perl_flags(t)?,
            '(' => {
                tr.open(tr.flags);
                t = &t[1..];
            }
            '|' => {
                tr.out.push('|');
                tr.operand = false;
                t = &t[1..];
            }
            ')' => {
                let Some(group) = tr.groups.pop() else {
                    return fail("unexpected )", tr.whole);
                };
                tr.out.push(')');
                // The flags inside the group end with it, for the crate as for Go.
                tr.flags = group.flags;
                tr.operand = true;
                tr.last_atom = (group.out_start, tr.out.len());
                let need = group.needs.iter().copied().max().unwrap_or(0);
                tr.needs().push(need);
                t = &t[1..];
            }
            '^' | '$' | '.' => {
                tr.atom(&c.to_string());
                t = &t[1..];
            }
            '[' => t = tr.class(t)?,
            '*' | '+' | '?' => {
                let before = t;
                t = tr.repeat(&c.to_string(), before, &t[1..], last_repeat)?;
                repeat = Some(before);
            }
            '{' => match repeat_braces(t) {
                None => {
                    tr.atom("\\{");
                    t = &t[1..];
                }
                Some((min, max, after)) => {
                    let before = t;
                    let braces = &before[..before.len() - after.len()];
                    if !(0..=1000).contains(&min) || max > 1000 || (max >= 0 && min > max) {
                        return fail("invalid repeat count", braces);
                    }
                    let op = if max < 0 {
                        format!("{{{min},}}")
                    } else {
                        format!("{{{min},{max}}}")
                    };
                    t = tr.repeat(&op, before, after, last_repeat)?;
                    repeat = Some(before);
                }
            },
            '\\' => {
                let next = t.as_bytes().get(1).copied();
                match next {
                    Some(b'A') => {
                        tr.atom("\\A");
                        t = &t[2..];
                    }
                    Some(b'z') => {
                        tr.atom("\\z");
                        t = &t[2..];
                    }
                    Some(b'b') => {
                        tr.atom("(?-u:\\b)");
                        t = &t[2..];
                    }
                    Some(b'B') => {
                        tr.atom("(?-u:\\B)");
                        t = &t[2..];
                    }
                    Some(b'C') => return fail("invalid escape sequence", &t[..2]),
                    Some(b'Q') => {
                        let rest = &t[2..];
                        let (lit, after) = rest.split_once("\\E").unwrap_or((rest, ""));
                        for c in lit.chars() {
                            tr.atom(&escape_char(c));
                        }
                        t = after;
                    }
                    Some(b'p' | b'P') => {
                        let (class, rest) = unicode_class(t)?;
                        tr.atom(&class);
                        t = rest;
                    }
                    Some(p) if perl_class(p).is_some() => {
                        let (ranges, negated) = perl_class(p).unwrap_or(("", false));
                        let neg = if negated { "^" } else { "" };
                        tr.atom(&format!("[{neg}{ranges}]"));
                        t = &t[2..];
                    }
                    _ => {
                        let (c, rest) = escape(t)?;
                        tr.atom(&escape_char(c));
                        t = rest;
                    }
                }
            }
            c => {
                tr.atom(&escape_char(c));
                t = &t[c.len_utf8()..];
            }
        }
        last_repeat = repeat;
    }
    if !tr.groups.is_empty() {
        return fail("missing closing )", pattern);
    }
    Ok(tr.out)
}

#[cfg(test)]
mod tests {
    use super::{compile, error};

    #[test]
    fn go_texts() {
        let cases = [
            (
                "nginx-(.*",
                "error parsing regexp: missing closing ): `nginx-(.*`",
            ),
            ("a)b", "error parsing regexp: unexpected ): `a)b`"),
            ("a[b-c", "error parsing regexp: missing closing ]: `[b-c`"),
            (
                "*a",
                "error parsing regexp: missing argument to repetition operator: `*`",
            ),
            (
                "(+)",
                "error parsing regexp: missing argument to repetition operator: `+`",
            ),
            (
                "a**",
                "error parsing regexp: invalid nested repetition operator: `**`",
            ),
            (
                "a*?+",
                "error parsing regexp: invalid nested repetition operator: `*?+`",
            ),
            (
                "ab\\",
                "error parsing regexp: trailing backslash at end of expression: ``",
            ),
            (
                "(?=x)",
                "error parsing regexp: invalid or unsupported Perl syntax: `(?=`",
            ),
            (
                "a{2}{3}",
                "error parsing regexp: invalid nested repetition operator: `{2}{3}`",
            ),
            (
                "a{1001}",
                "error parsing regexp: invalid repeat count: `{1001}`",
            ),
            (
                "a{3,2}",
                "error parsing regexp: invalid repeat count: `{3,2}`",
            ),
            (
                "\\8",
                "error parsing regexp: invalid escape sequence: `\\8`",
            ),
            (
                "\\1",
                "error parsing regexp: invalid escape sequence: `\\1`",
            ),
            (
                "\\C",
                "error parsing regexp: invalid escape sequence: `\\C`",
            ),
            (
                "\\Z",
                "error parsing regexp: invalid escape sequence: `\\Z`",
            ),
            (
                "[z-a]",
                "error parsing regexp: invalid character class range: `z-a`",
            ),
            (
                "[[:foo:]]",
                "error parsing regexp: invalid character class range: `[:foo:]`",
            ),
            (
                "\\p{Foo}",
                "error parsing regexp: invalid character class range: `\\p{Foo}`",
            ),
            (
                "[a-\\d]",
                "error parsing regexp: invalid escape sequence: `\\d`",
            ),
            (
                "(?P<>x)",
                "error parsing regexp: invalid named capture: `(?P<>`",
            ),
            (
                "(?i",
                "error parsing regexp: invalid or unsupported Perl syntax: `(?i`",
            ),
            (
                "(?-)",
                "error parsing regexp: invalid or unsupported Perl syntax: `(?-)`",
            ),
        ];
        for (pattern, want) in cases {
            assert_eq!(error(pattern).as_deref(), Some(want), "{pattern}");
        }
        for ok in [
            "a*?b",
            "[]a]",
            "(?i:x)+",
            "(?P<n>x)(?P<n>y)",
            "(?<n>x)",
            "\\Q(*\\E",
            "[[:alpha:]]+",
            "a|b*",
            "^*",
            "a(?i)*",
            "{01}",
            "x{,2}",
            "(?)",
            "(?ii)",
        ] {
            assert_eq!(error(ok), None, "{ok}");
            assert!(compile(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn go_meanings() {
        let m = |p: &str, s: &str| compile(p).expect(p).is_match(s);
        // Perl classes and word boundaries are ASCII.
        assert!(!m("^\\d$", "٣"));
        assert!(!m("^\\w$", "é"));
        assert!(m("^\\W$", "é"));
        assert!(!m("^\\s$", "\u{a0}"));
        assert!(!m("^\\s$", "\u{b}"));
        assert!(m("é\\ba", "éa"));
        // Octal, hex and \Q escapes are characters.
        assert!(m("^\\012$", "\n"));
        assert!(m("^\\Q.*\\E$", ".*"));
        assert!(m("^{01}$", "{01}"));
        // A repetition after a flag group repeats what came before it.
        assert!(m("^a(?i)*b$", "aaaB"));
        // (?U) swaps greediness.
        let re = compile("(?U)(a+)").expect("U");
        assert_eq!(
            re.captures("aaa")
                .and_then(|c| c.get(1))
                .map(|m| m.as_str()),
            Some("a")
        );
    }
}
