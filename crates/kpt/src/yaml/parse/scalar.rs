//! Scalar scanning (plain, single/double quoted, literal/folded block
//! scalars) and node properties (anchors, tags), following libyaml's
//! folding rules.

use super::cursor::{Cursor, PResult};

fn is_flow_ind(c: char) -> bool {
    matches!(c, ',' | '[' | ']' | '{' | '}')
}

/// The characters that end a plain scalar inside a flow collection (go-yaml's
/// `yaml_parser_scan_plain_scalar`): the flow indicators and `?`.
fn ends_flow_plain(c: char) -> bool {
    is_flow_ind(c) || c == '?'
}

impl Cursor {
    /// Plain scalar. `indent` is the enclosing block indentation (-1 at top
    /// level): continuation lines must be indented more. In flow context
    /// flow indicators end it and indentation does not matter.
    pub fn plain(&mut self, indent: i64, flow: bool) -> PResult<String> {
        let first_line = self.line;
        let mut s = String::new();
        loop {
            // One line of content: a slice of the input (whitespace inside it is
            // kept, whitespace before whatever ends it is not consumed).
            let start = self.pos;
            loop {
                match self.peek() {
                    None | Some('\n') => break,
                    Some(' ' | '\t') => {
                        let save = self.save();
                        while let Some(' ' | '\t') = self.peek() {
                            self.bump();
                        }
                        match self.peek() {
                            None | Some('\n' | '#') => {
                                self.restore(save);
                                break;
                            }
                            // Spaces before a flow indicator (`[ a ]`) or a `: ` are not
                            // part of the scalar.
                            Some(c) if flow && ends_flow_plain(c) => {
                                self.restore(save);
                                break;
                            }
                            Some(':') if self.blankz_at(1) => {
                                self.restore(save);
                                break;
                            }
                            _ => {}
                        }
                    }
                    Some(':') if self.blankz_at(1) => break,
                    // go-yaml ends a plain scalar in flow context at these, and at a `:`
                    // only before a blank (`{a:1}` is the key "a:1").
                    Some(c) if flow && ends_flow_plain(c) => break,
                    Some(_) => {
                        self.bump();
                    }
                }
            }
            s.push_str(&self.s[start..self.pos]);
            // Is there a continuation line? Blanks before the line break are not the
            // scalar's, and do not end it (`a \n  b` is `a b`).
            if !matches!(self.peek(), Some('\n')) {
                if !self.at_eol() {
                    self.skip_spaces();
                }
                if self.peek() != Some('\n') {
                    return Ok(s);
                }
            }
            let save = self.save();
            let mut breaks = 0;
            let cont = loop {
                self.bump(); // the line break
                while matches!(self.peek(), Some(' ' | '\t')) {
                    // libyaml's plain scanner: a tab among the blanks that start a
                    // line, left of the scalar's indentation.
                    if self.peek() == Some('\t') && (self.col as i64) <= indent && !flow {
                        return self.scanner_err_from(
                            "found a tab character that violates indentation",
                            first_line,
                        );
                    }
                    self.bump();
                }
                match self.peek() {
                    Some('\n') => breaks += 1,
                    None | Some('#') => break false,
                    Some(_) => {
                        let doc_marker = self.col == 0
                            && (self.rest_starts_with("---") || self.rest_starts_with("..."))
                            && self.blankz_at(3);
                        if doc_marker || (!flow && (self.col as i64) <= indent) {
                            break false;
                        }
                        if flow && matches!(self.peek(), Some(c) if ends_flow_plain(c)) {
                            break false;
                        }
                        // Nor does a `: ` (the breaks before it are not the scalar's).
                        if self.peek() == Some(':') && self.blankz_at(1) {
                            break false;
                        }
                        break true;
                    }
                }
            };
            if !cont {
                self.restore(save);
                return Ok(s);
            }
            if breaks == 0 {
                s.push(' ');
            } else {
                s.extend(std::iter::repeat_n('\n', breaks));
            }
        }
    }

    pub fn rest_starts_with(&self, p: &str) -> bool {
        p.chars()
            .enumerate()
            .all(|(i, c)| self.peek_at(i) == Some(c))
    }

    /// Single- or double-quoted scalar starting at the opening quote.
    pub fn quoted(&mut self) -> PResult<String> {
        let (l0, c0) = (self.line, self.col);
        let single = self.bump() == Some('\'');
        // Fast path: a one-line scalar without escapes is its text as written.
        let rest = &self.s.as_bytes()[self.pos..];
        let end = if single {
            rest.iter().position(|&b| matches!(b, b'\'' | b'\n'))
        } else {
            rest.iter().position(|&b| matches!(b, b'"' | b'\\' | b'\n'))
        };
        if let Some(len) = end
            && rest[len] == if single { b'\'' } else { b'"' }
            && !(single && rest.get(len + 1) == Some(&b'\''))
        {
            let value = self.s[self.pos..self.pos + len].to_string();
            self.col += value.chars().count() + 1;
            self.pos += len + 1;
            return Ok(value);
        }
        let mut s = String::new();
        let (mut ws, mut leading_break, mut trailing) = (String::new(), false, 0usize);
        let mut leading_blanks = false;
        loop {
            if self.col == 0
                && (self.rest_starts_with("---") || self.rest_starts_with("..."))
                && self.blankz_at(3)
            {
                return Err(self.error_at("found unexpected document indicator", l0, c0));
            }
            let Some(c) = self.peek() else {
                return Err(self.error_at("found unexpected end of stream", l0, c0));
            };
            // Non-blank characters.
            if !matches!(c, ' ' | '\t' | '\n') {
                if leading_blanks {
                    if leading_break && trailing == 0 {
                        s.push(' ');
                    } else {
                        s.extend(std::iter::repeat_n('\n', trailing));
                    }
                    leading_blanks = false;
                    leading_break = false;
                    trailing = 0;
                } else {
                    s.push_str(&ws);
                }
                ws.clear();
                if single {
                    if c == '\'' {
                        if self.peek_at(1) == Some('\'') {
                            s.push('\'');
                            self.bump();
                            self.bump();
                            continue;
                        }
                        self.bump();
                        return Ok(s);
                    }
                } else if c == '"' {
                    self.bump();
                    return Ok(s);
                } else if c == '\\' {
                    if self.peek_at(1) == Some('\n') {
                        self.bump();
                        self.bump();
                        leading_blanks = true;
                        self.skip_spaces();
                        continue;
                    }
                    self.escape(&mut s)?;
                    continue;
                }
                s.push(c);
                self.bump();
                continue;
            }
            if c == '\n' {
                if !leading_blanks {
                    ws.clear();
                    leading_blanks = true;
                    leading_break = true;
                } else {
                    trailing += 1;
                }
                self.bump();
                self.skip_spaces();
            } else {
                if !leading_blanks {
                    ws.push(c);
                }
                self.bump();
            }
        }
    }

    fn escape(&mut self, s: &mut String) -> PResult<()> {
        self.bump();
        let Some(e) = self.bump() else {
            return self.err("found unexpected end of stream");
        };
        let len = match e {
            '0' => {
                s.push('\0');
                0
            }
            'a' => {
                s.push('\u{7}');
                0
            }
            'b' => {
                s.push('\u{8}');
                0
            }
            't' | '\t' => {
                s.push('\t');
                0
            }
            'n' => {
                s.push('\n');
                0
            }
            'v' => {
                s.push('\u{b}');
                0
            }
            'f' => {
                s.push('\u{c}');
                0
            }
            'r' => {
                s.push('\r');
                0
            }
            'e' => {
                s.push('\u{1b}');
                0
            }
            ' ' | '"' | '\'' | '\\' | '/' => {
                s.push(e);
                0
            }
            'N' => {
                s.push('\u{85}');
                0
            }
            '_' => {
                s.push('\u{a0}');
                0
            }
            'L' => {
                s.push('\u{2028}');
                0
            }
            'P' => {
                s.push('\u{2029}');
                0
            }
            'x' => 2,
            'u' => 4,
            'U' => 8,
            _ => return self.err("found unknown escape character while parsing a quoted scalar"),
        };
        if len > 0 {
            let mut v: u32 = 0;
            for _ in 0..len {
                match self.peek().and_then(|c| c.to_digit(16)) {
                    Some(d) => {
                        v = v * 16 + d;
                        self.bump();
                    }
                    None => return self.err("did not find expected hexdecimal number"),
                }
            }
            match char::from_u32(v) {
                Some(c) => s.push(c),
                None => return self.err("found invalid Unicode character escape code"),
            }
        }
        Ok(())
    }

    /// Block scalar starting at `|` or `>`. `indent` is the enclosing block
    /// indentation. Returns the value and the header's line comment; leaves
    /// the cursor at the start of the first line after the scalar.
    pub fn block_scalar(&mut self, indent: i64) -> PResult<(String, String)> {
        let start_line = self.line;
        let literal = self.bump() == Some('|');
        let (mut chomp, mut inc) = (0i8, 0usize);
        for _ in 0..2 {
            match self.peek() {
                Some('+') if chomp == 0 => chomp = 1,
                Some('-') if chomp == 0 => chomp = -1,
                Some(d @ '1'..='9') if inc == 0 => inc = d as usize - '0' as usize,
                Some('0') => return self.err("found an indentation indicator equal to 0"),
                _ => break,
            }
            self.bump();
        }
        let comment = self.line_comment()?;
        if self.peek() == Some('\n') {
            self.bump();
        }
        let mut ind = if inc > 0 {
            if indent >= 0 {
                indent as usize + inc
            } else {
                inc
            }
        } else {
            0
        };
        let mut s = String::new();
        let mut trailing = self.block_breaks(&mut ind, indent, start_line)?;
        let (mut leading_break, mut leading_blank) = (String::new(), false);
        while self.col == ind && !self.eof() {
            let trailing_blank = matches!(self.peek(), Some(' ' | '\t'));
            if !literal && !leading_blank && !trailing_blank && leading_break == "\n" {
                if trailing.is_empty() {
                    s.push(' ');
                }
            } else {
                s.push_str(&leading_break);
            }
            leading_break.clear();
            s.push_str(&trailing);
            trailing.clear();
            leading_blank = matches!(self.peek(), Some(' ' | '\t'));
            while let Some(c) = self.peek() {
                if c == '\n' {
                    break;
                }
                s.push(c);
                self.bump();
            }
            if self.peek() == Some('\n') {
                leading_break.push('\n');
                self.bump();
            }
            trailing = self.block_breaks(&mut ind, indent, start_line)?;
        }
        if chomp != -1 {
            s.push_str(&leading_break);
        }
        if chomp == 1 {
            s.push_str(&trailing);
        }
        // Back to the start of the line that ended the scalar (only
        // indentation of it was consumed).
        let start = self.line_start;
        if self.s.as_bytes()[start..self.pos]
            .iter()
            .all(|c| *c == b' ')
        {
            self.pos = start;
            self.col = 0;
        }
        Ok((s, comment))
    }

    /// `start_line`: where the block scalar began, which go-yaml names in its errors.
    fn block_breaks(&mut self, ind: &mut usize, indent: i64, start_line: usize) -> PResult<String> {
        let mut breaks = String::new();
        let mut max = 0;
        loop {
            while (*ind == 0 || self.col < *ind) && self.peek() == Some(' ') {
                self.bump();
            }
            max = max.max(self.col);
            if (*ind == 0 || self.col < *ind) && self.peek() == Some('\t') {
                return self.scanner_err_from(
                    "found a tab character where an indentation space is expected",
                    start_line,
                );
            }
            if self.peek() != Some('\n') {
                break;
            }
            breaks.push('\n');
            self.bump();
        }
        if *ind == 0 {
            *ind = max.max((indent + 1).max(1) as usize);
        }
        Ok(breaks)
    }

    /// Anchor name after `&` or `*`: go-yaml v3's `yaml_parser_scan_anchor` takes
    /// ASCII letters, digits, `_` and `-`, and wants a blank or one of
    /// `?:,]}%@`` ` `` after them.
    pub fn anchor_name(&mut self) -> PResult<String> {
        let start_line = self.line;
        let alias = self.bump() == Some('*');
        let mut n = String::new();
        while let Some(c) = self.peek() {
            if !(c.is_ascii_alphanumeric() || c == '_' || c == '-') {
                break;
            }
            n.push(c);
            self.bump();
        }
        let ends = self.blankz_at(0)
            || matches!(
                self.peek(),
                Some('?' | ':' | ',' | ']' | '}' | '%' | '@' | '`')
            );
        if n.is_empty() || !ends {
            return self.scanner_err_from(
                "did not find expected alphabetic or numeric character",
                start_line,
            );
        }
        if !alias {
            self.anchors.insert(n.clone());
        } else if self.unknown_alias.is_none() && !self.anchors.contains(&n) {
            self.unknown_alias = Some(n.clone());
        }
        Ok(n)
    }

    /// Tag after `!`, as written (`!!str`, `!foo`); verbatim `!<x>` gives `x`.
    pub fn tag(&mut self) -> PResult<String> {
        if self.peek_at(1) == Some('<') {
            self.bump();
            self.bump();
            let mut t = String::new();
            loop {
                match self.bump() {
                    Some('>') => return self.uri_unescape(t),
                    Some(c) if !matches!(c, ' ' | '\t' | '\n') => t.push(c),
                    _ => return self.err("did not find the expected '>'"),
                }
            }
        }
        let mut t = String::new();
        while let Some(c) = self.peek() {
            if matches!(c, ' ' | '\t' | '\n') || is_flow_ind(c) {
                break;
            }
            t.push(c);
            self.bump();
        }
        // A named handle (`!e!suffix`) stands for the prefix a `%TAG` directive gave
        // it; without one go-yaml refuses it. `!!` is the default secondary handle.
        if let Some(i) = t[1..].find('!') {
            let (handle, suffix) = t.split_at(i + 2);
            if let Some((_, prefix)) = self.tag_handles.iter().find(|(h, _)| h == handle) {
                let full = format!("{prefix}{suffix}");
                return self.uri_unescape(full);
            }
            if handle != "!!" {
                return self.parser_err("found undefined tag handle", self.line);
            }
        }
        self.uri_unescape(t)
    }

    /// libyaml decodes `%XX` escapes in tags (and the emitter writes them
    /// back for characters outside its URI set): `!a%21` is the tag `!a!`.
    fn uri_unescape(&self, t: String) -> PResult<String> {
        if !t.contains('%') {
            return Ok(t);
        }
        let b = t.as_bytes();
        let mut out = Vec::with_capacity(b.len());
        let mut i = 0;
        while i < b.len() {
            if b[i] != b'%' {
                out.push(b[i]);
                i += 1;
                continue;
            }
            let hex = |j: usize| b.get(j).and_then(|c| (*c as char).to_digit(16));
            match (hex(i + 1), hex(i + 2)) {
                (Some(h), Some(l)) => out.push((h * 16 + l) as u8),
                _ => return self.err("did not find URI escaped octet"),
            }
            i += 3;
        }
        String::from_utf8(out).or_else(|_| self.err("found an incorrect leading UTF-8 octet"))
    }
}

#[cfg(test)]
mod tests {
    use crate::yaml::parse_one;

    #[test]
    fn spaces_before_flow_indicators_and_colons_are_not_content() {
        let n = parse_one("a: [ name , other ]\nkey : v\n").expect("valid yaml");
        let items: Vec<&str> = n
            .get("a")
            .expect("a")
            .items()
            .iter()
            .filter_map(|i| i.as_str())
            .collect();
        assert_eq!(items, vec!["name", "other"]);
        assert_eq!(n.get("key").and_then(|v| v.as_str()), Some("v"));
    }
}
