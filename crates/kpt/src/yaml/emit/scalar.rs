//! Scalar analysis and scalar/comment writers, ported from yaml.v3's
//! `emitterc.go` (`yaml_emitter_analyze_scalar`, `write_*_scalar`,
//! `write_comment`) with unicode output enabled and unlimited width.

use super::machine::Emitter;

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ScalarAnalysis {
    pub multiline: bool,
    pub flow_plain_allowed: bool,
    pub block_plain_allowed: bool,
    pub single_quoted_allowed: bool,
    pub block_allowed: bool,
}

pub fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

fn is_blank(c: char) -> bool {
    c == ' ' || c == '\t'
}

/// yaml.v3 `is_printable` (by code point).
pub fn is_printable(c: char) -> bool {
    let c = c as u32;
    c == 0x0A
        || (0x20..=0x7E).contains(&c)
        || (0xA0..=0xD7FF).contains(&c)
        || ((0xE000..=0xFFFD).contains(&c) && c != 0xFEFF)
}

pub fn analyze(value: &str) -> ScalarAnalysis {
    common_analysis(value).unwrap_or_else(|| full_analysis(value))
}

/// [`full_analysis`] of the common scalar (names, labels, image references): it
/// starts with a letter or digit and holds only letters, digits and `-._/=+@:`
/// (a `:` never last), so nothing but a `:` can matter, and a `:` only rules out
/// plain style in flow context. Checking the bytes is a tenth of the full scan.
fn common_analysis(value: &str) -> Option<ScalarAnalysis> {
    let b = value.as_bytes();
    if !b.first()?.is_ascii_alphanumeric() || *b.last()? == b':' {
        return None;
    }
    let mut colon = false;
    for &c in &b[1..] {
        match c {
            b':' => colon = true,
            b'-' | b'.' | b'_' | b'/' | b'=' | b'+' | b'@' => {}
            _ if c.is_ascii_alphanumeric() => {}
            _ => return None,
        }
    }
    Some(ScalarAnalysis {
        multiline: false,
        flow_plain_allowed: !colon,
        block_plain_allowed: true,
        single_quoted_allowed: true,
        block_allowed: true,
    })
}

/// yaml.v3 `yaml_emitter_analyze_scalar`.
pub(super) fn full_analysis(value: &str) -> ScalarAnalysis {
    let mut a = ScalarAnalysis {
        multiline: false,
        flow_plain_allowed: false,
        block_plain_allowed: true,
        single_quoted_allowed: true,
        block_allowed: false,
    };
    if value.is_empty() {
        return a;
    }
    let (mut block_ind, mut flow_ind) = (false, false);
    if value.starts_with("---") || value.starts_with("...") {
        block_ind = true;
        flow_ind = true;
    }
    let (mut line_breaks, mut special, mut tabs) = (false, false, false);
    let (mut leading_space, mut leading_break, mut trailing_space, mut trailing_break) =
        (false, false, false, false);
    let (mut break_space, mut space_break) = (false, false);
    let mut preceded_by_ws = true;
    let (mut prev_space, mut prev_break) = (false, false);
    let mut chars = value.chars().peekable();
    let mut i = 0;
    while let Some(c) = chars.next() {
        let next = chars.peek().copied();
        let last = next.is_none();
        let followed_by_ws = next.is_none_or(is_blank);
        if i == 0 {
            match c {
                '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"'
                | '%' | '@' | '`' => {
                    flow_ind = true;
                    block_ind = true;
                }
                '?' | ':' => {
                    flow_ind = true;
                    if followed_by_ws {
                        block_ind = true;
                    }
                }
                '-' if followed_by_ws => {
                    flow_ind = true;
                    block_ind = true;
                }
                _ => {}
            }
        } else {
            match c {
                ',' | '?' | '[' | ']' | '{' | '}' => flow_ind = true,
                ':' => {
                    flow_ind = true;
                    if followed_by_ws {
                        block_ind = true;
                    }
                }
                '#' if preceded_by_ws => {
                    flow_ind = true;
                    block_ind = true;
                }
                _ => {}
            }
        }
        if c == '\t' {
            tabs = true;
        } else if !is_printable(c) {
            special = true;
        }
        if c == ' ' {
            if i == 0 {
                leading_space = true;
            }
            if last {
                trailing_space = true;
            }
            if prev_break {
                break_space = true;
            }
            prev_space = true;
            prev_break = false;
        } else if is_break(c) {
            line_breaks = true;
            if i == 0 {
                leading_break = true;
            }
            if last {
                trailing_break = true;
            }
            if prev_space {
                space_break = true;
            }
            prev_space = false;
            prev_break = true;
        } else {
            prev_space = false;
            prev_break = false;
        }
        preceded_by_ws = is_blank(c) || is_break(c);
        i += 1;
    }
    a.multiline = line_breaks;
    a.flow_plain_allowed = true;
    a.block_allowed = true;
    if leading_space || leading_break || trailing_space || trailing_break {
        a.flow_plain_allowed = false;
        a.block_plain_allowed = false;
    }
    if trailing_space {
        a.block_allowed = false;
    }
    if break_space {
        a.flow_plain_allowed = false;
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
    }
    if space_break || tabs || special {
        a.flow_plain_allowed = false;
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
    }
    if space_break || special {
        a.block_allowed = false;
    }
    if line_breaks {
        a.flow_plain_allowed = false;
        a.block_plain_allowed = false;
    }
    if flow_ind {
        a.flow_plain_allowed = false;
    }
    if block_ind {
        a.block_plain_allowed = false;
    }
    a
}

/// True when `s` has none of the characters the writers treat specially as
/// line breaks, so it can be copied in one piece.
fn no_breaks(s: &str) -> bool {
    // Every break but '\r' and '\n' is non-ASCII.
    s.bytes().all(|b| b != b'\n' && b != b'\r') && (s.is_ascii() || !s.chars().any(is_break))
}

impl Emitter<'_> {
    /// Writes text known to hold no line breaks (as repeated `put`s would).
    fn put_str(&mut self, s: &str) {
        self.out.push_str(s);
        self.column += if s.is_ascii() {
            s.len()
        } else {
            s.chars().count()
        };
    }

    /// `write_break` for a character from a value: '\n' is a normal break,
    /// other breaks are copied and reset the column.
    fn write_break_char(&mut self, c: char) {
        if c == '\n' {
            self.put_break();
        } else {
            self.out.push(c);
            self.column = 0;
            self.indention = true;
        }
    }

    pub fn write_plain(&mut self, value: &str) {
        if !value.is_empty() && !self.whitespace {
            self.put(' ');
        }
        if no_breaks(value) {
            // What the loop below does for text without breaks: no indentation.
            self.put_str(value);
        } else {
            let mut breaks = false;
            for c in value.chars() {
                if c == ' ' {
                    self.put(c);
                } else if is_break(c) {
                    if !breaks && c == '\n' {
                        self.put_break();
                    }
                    self.write_break_char(c);
                    breaks = true;
                } else {
                    if breaks {
                        self.write_indent();
                    }
                    self.put(c);
                    self.indention = false;
                    breaks = false;
                }
            }
        }
        if !value.is_empty() {
            self.whitespace = false;
        }
        self.indention = false;
        if self.root_context {
            self.open_ended = true;
        }
    }

    pub fn write_single(&mut self, value: &str) {
        self.write_indicator("'", true, false, false);
        if no_breaks(value) && !value.contains('\'') {
            // Nothing to escape or indent: the loop below would copy it.
            self.put_str(value);
            if !value.is_empty() {
                self.indention = false;
            }
        } else {
            self.write_single_chars(value);
        }
        self.write_indicator("'", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn write_single_chars(&mut self, value: &str) {
        let mut breaks = false;
        for c in value.chars() {
            if c == ' ' {
                self.put(c);
            } else if is_break(c) {
                if !breaks && c == '\n' {
                    self.put_break();
                }
                self.write_break_char(c);
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                if c == '\'' {
                    self.put('\'');
                }
                self.put(c);
                self.indention = false;
                breaks = false;
            }
        }
    }

    pub fn write_double(&mut self, value: &str) {
        self.write_indicator("\"", true, false, false);
        // Printable ASCII other than the two escaped characters is copied as is.
        if value
            .bytes()
            .all(|b| (0x20..=0x7E).contains(&b) && b != b'"' && b != b'\\')
        {
            self.put_str(value);
            self.write_indicator("\"", false, false, false);
            self.whitespace = false;
            self.indention = false;
            return;
        }
        for c in value.chars() {
            if !is_printable(c) || c == '\u{FEFF}' || is_break(c) || c == '"' || c == '\\' {
                self.put('\\');
                match c {
                    '\0' => self.put('0'),
                    '\u{7}' => self.put('a'),
                    '\u{8}' => self.put('b'),
                    '\t' => self.put('t'),
                    '\n' => self.put('n'),
                    '\u{b}' => self.put('v'),
                    '\u{c}' => self.put('f'),
                    '\r' => self.put('r'),
                    '\u{1b}' => self.put('e'),
                    '"' => self.put('"'),
                    '\\' => self.put('\\'),
                    '\u{85}' => self.put('N'),
                    '\u{a0}' => self.put('_'),
                    '\u{2028}' => self.put('L'),
                    '\u{2029}' => self.put('P'),
                    _ => {
                        let v = c as u32;
                        let s = if v <= 0xFF {
                            format!("x{v:02X}")
                        } else if v <= 0xFFFF {
                            format!("u{v:04X}")
                        } else {
                            format!("U{v:08X}")
                        };
                        for ch in s.chars() {
                            self.put(ch);
                        }
                    }
                }
            } else {
                self.put(c);
            }
        }
        self.write_indicator("\"", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn write_block_hints(&mut self, value: &str) {
        let first = value.chars().next();
        if first.is_some_and(|c| c == ' ' || is_break(c)) {
            let hint = char::from(b'0' + self.best_indent as u8).to_string();
            self.write_indicator(&hint, false, false, false);
        }
        self.open_ended = false;
        let mut rev = value.chars().rev();
        let chomp = match (rev.next(), rev.next()) {
            (None, _) => Some("-"),
            (Some(l), _) if !is_break(l) => Some("-"),
            (Some(_), None) => {
                self.open_ended = true;
                Some("+")
            }
            (Some(_), Some(p)) if is_break(p) => {
                self.open_ended = true;
                Some("+")
            }
            _ => None,
        };
        if let Some(h) = chomp {
            self.write_indicator(h, false, false, false);
        }
    }

    pub fn write_literal(&mut self, value: &str) {
        self.write_indicator("|", true, false, false);
        self.write_block_hints(value);
        self.process_line_comment(true);
        self.whitespace = true;
        let mut breaks = true;
        for c in value.chars() {
            if is_break(c) {
                self.write_break_char(c);
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                self.put(c);
                self.indention = false;
                breaks = false;
            }
        }
    }

    pub fn write_folded(&mut self, value: &str) {
        self.write_indicator(">", true, false, false);
        self.write_block_hints(value);
        self.process_line_comment(true);
        self.whitespace = true;
        let chars: Vec<char> = value.chars().collect();
        let mut breaks = true;
        let mut leading_spaces = true;
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if is_break(c) {
                if !breaks && !leading_spaces && c == '\n' {
                    // yaml.v3 looks from the start of the value here (k := 0),
                    // a quirk kept for byte-compatibility.
                    let mut k = 0;
                    while k < chars.len() && is_break(chars[k]) {
                        k += 1;
                    }
                    if !(k >= chars.len() || is_blank(chars[k]) || is_break(chars[k])) {
                        self.put_break();
                    }
                }
                self.write_break_char(c);
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                    leading_spaces = is_blank(c);
                }
                self.put(c);
                self.indention = false;
                breaks = false;
            }
            i += 1;
        }
    }

    pub fn write_comment(&mut self, comment: &str) {
        if no_breaks(comment) {
            // One line: `# ` added when it does not start with `#`, then a break.
            if let Some(first) = comment.chars().next() {
                if first != '#' {
                    self.put('#');
                    self.put(' ');
                }
                self.put_str(comment);
                self.indention = false;
            }
            self.put_break();
            self.whitespace = true;
            return;
        }
        let mut breaks = false;
        let mut pound = false;
        for c in comment.chars() {
            if is_break(c) {
                self.write_break_char(c);
                breaks = true;
                pound = false;
            } else {
                if breaks {
                    self.write_indent();
                }
                if !pound {
                    if c != '#' {
                        self.put('#');
                        self.put(' ');
                    }
                    pound = true;
                }
                self.put(c);
                self.indention = false;
                breaks = false;
            }
        }
        if !breaks {
            self.put_break();
        }
        self.whitespace = true;
    }
}
