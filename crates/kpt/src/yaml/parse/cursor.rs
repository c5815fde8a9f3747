//! Low-level position handling for the parser: characters, lines and
//! columns, errors with positions, and collecting the "gap" of blank and
//! comment lines between two content lines.
//!
//! The text is scanned as UTF-8 bytes (YAML's indicators are all ASCII), so
//! scalars and keys can be taken as slices of the input; columns still count
//! characters, as libyaml's marks do, for error positions.

use super::super::document::YamlError;

/// A line between two content lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GapLine {
    Blank,
    /// A full-line comment: 0-based column of the `#` and the text from `#`
    /// to the end of the line (trailing whitespace removed).
    Comment {
        col: usize,
        text: String,
    },
    /// The comment after a lone `-` (or `?`, `:`) indicator, on that indicator's line:
    /// go-yaml scans it as the gap's first line, which moves the gap's foot line.
    IndicatorComment {
        col: usize,
        text: String,
    },
}

pub struct Cursor {
    /// The document text.
    pub s: String,
    /// Byte offset into `s`, always at a character boundary.
    pub pos: usize,
    /// 0-based line and column (in characters) of `pos`.
    pub line: usize,
    pub col: usize,
    /// Byte offset of the start of the current line.
    pub line_start: usize,
    /// Line of the chunk's first line in the whole stream.
    pub line_offset: usize,
    /// Gap lines seen before the current content line, not yet attributed.
    pub pending: Vec<GapLine>,
    /// `(line_start, end)`: the bytes of that line before `end` are all
    /// spaces and dashes (memo for `after_dash`, which a line of many `- `
    /// would otherwise rescan once per level).
    pub dash_memo: std::cell::Cell<(usize, usize)>,
    /// Set by a block mapping just before parsing a value that starts on the
    /// key's line; the next `block_node` takes (and clears) it.
    pub map_value: bool,
    /// The last token before `pending`, for placing its comments.
    pub prior: super::gap::Prior,
    /// The prior token is a plain scalar without a line comment: go-yaml's scanner
    /// went on past its line's end.
    pub prior_past_line: bool,
    /// Foot comments go-yaml's parser has unfolded but no event took yet: the next
    /// scalar, key or mapping end takes them.
    pub pending_foot: String,
    /// Line comments waiting the same way (after properties alone on their line).
    pub pending_line: String,
    /// Set with the error for content left after a node on its line, for the enclosing
    /// block collection to word as go-yaml's parser does (see [`Cursor::junk_err`]).
    pub junk: Option<super::junk::Junk>,
    /// The document's `%TAG` directives: (handle, prefix).
    pub tag_handles: Vec<(String, String)>,
    /// Anchors scanned so far, and the first alias scanned before its anchor.
    pub anchors: std::collections::HashSet<String>,
    pub unknown_alias: Option<String>,
}

pub type PResult<T> = Result<T, YamlError>;

impl Cursor {
    pub fn new(text: String, line_offset: usize) -> Cursor {
        Cursor {
            s: text,
            pos: 0,
            line: 0,
            col: 0,
            line_start: 0,
            line_offset,
            pending: Vec::new(),
            dash_memo: std::cell::Cell::new((usize::MAX, 0)),
            map_value: false,
            prior: super::gap::Prior::Value,
            prior_past_line: false,
            pending_foot: String::new(),
            pending_line: String::new(),
            junk: None,
            tag_handles: Vec::new(),
            anchors: std::collections::HashSet::new(),
            unknown_alias: None,
        }
    }

    pub fn err<T>(&self, msg: impl Into<String>) -> PResult<T> {
        Err(self.error_at(msg, self.line, self.col))
    }

    /// A scanner error at `line`/`col` (0-based, in this cursor's text): go-yaml names
    /// the 1-based line, or none on the stream's first line.
    pub fn error_at(&self, msg: impl Into<String>, line: usize, col: usize) -> YamlError {
        let at = line + self.line_offset;
        YamlError {
            message: msg.into(),
            line: at + 1,
            column: col + 1,
            go_line: (at != 0).then_some(at + 1),
        }
    }

    /// A scanner error whose context mark is on `context_line` (0-based): go-yaml names
    /// that line (1-based), else the problem's, else none.
    pub fn scanner_err_from<T>(&self, msg: impl Into<String>, context_line: usize) -> PResult<T> {
        let problem = self.line + self.line_offset;
        let context = context_line + self.line_offset;
        let go_line = if context != 0 {
            Some(context + 1)
        } else {
            (problem != 0).then_some(problem + 1)
        };
        Err(YamlError {
            message: msg.into(),
            line: problem + 1,
            column: self.col + 1,
            go_line,
        })
    }

    /// A parser error found at the cursor while parsing a construct that began on
    /// `context_line` (0-based): go-yaml names the context's 0-based line, else the
    /// problem's, else none.
    pub fn parser_err<T>(&self, msg: impl Into<String>, context_line: usize) -> PResult<T> {
        let problem = self.line + self.line_offset;
        let context = context_line + self.line_offset;
        let go_line = if context != 0 {
            Some(context)
        } else {
            (problem != 0).then_some(problem)
        };
        Err(YamlError {
            message: msg.into(),
            line: problem + 1,
            column: self.col + 1,
            go_line,
        })
    }

    /// The character at byte offset `at` (a character boundary).
    fn char_at(&self, at: usize) -> Option<char> {
        let b = *self.s.as_bytes().get(at)?;
        if b.is_ascii() {
            Some(b as char)
        } else {
            self.s[at..].chars().next()
        }
    }

    pub fn peek(&self) -> Option<char> {
        self.char_at(self.pos)
    }

    /// The character `n` characters ahead.
    pub fn peek_at(&self, n: usize) -> Option<char> {
        let bytes = self.s.as_bytes();
        let end = (self.pos + n).min(bytes.len());
        if bytes[self.pos.min(end)..end].is_ascii() {
            self.char_at(self.pos + n)
        } else {
            self.s[self.pos..].chars().nth(n)
        }
    }

    pub fn eof(&self) -> bool {
        self.pos >= self.s.len()
    }

    /// Advances one character (line breaks update line/col).
    pub fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        if c == '\n' {
            self.line += 1;
            self.col = 0;
            self.line_start = self.pos;
        } else {
            self.col += 1;
        }
        Some(c)
    }

    /// Advances over the rest of the line (not the break) and returns it.
    pub fn take_line_rest(&mut self) -> &str {
        let start = self.pos;
        let rest = &self.s.as_bytes()[start..];
        let len = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
        self.col += self.s[start..start + len].chars().count();
        self.pos = start + len;
        &self.s[start..start + len]
    }

    /// True when the character at offset `n` is a space, tab, line break or
    /// the end of input.
    pub fn blankz_at(&self, n: usize) -> bool {
        matches!(self.peek_at(n), None | Some(' ' | '\t' | '\n'))
    }

    pub fn skip_spaces(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.bump();
        }
    }

    /// The blanks after a block `-`, `?` or explicit `:`: libyaml allows a simple key
    /// right after these indicators, and there it eats spaces but no tab, which then
    /// cannot start any token.
    pub fn skip_spaces_after_indicator(&mut self) -> PResult<()> {
        while self.peek() == Some(' ') {
            self.bump();
        }
        if self.peek() == Some('\t') {
            return self.scanner_err_from("found character that cannot start any token", self.line);
        }
        Ok(())
    }

    pub fn at_eol(&self) -> bool {
        matches!(self.peek(), None | Some('\n'))
    }

    /// After content on a line: skips spaces and an optional comment;
    /// returns the comment text (from `#`) or "" and leaves `pos` at the
    /// line break (or EOF). Errors if other content follows.
    pub fn line_comment(&mut self) -> PResult<String> {
        let had_space = matches!(self.peek(), Some(' ' | '\t')) || self.col == 0;
        self.skip_spaces();
        match self.peek() {
            None | Some('\n') => Ok(String::new()),
            // go-yaml's scanner needs no blank before a comment after a quoted scalar
            // or a flow collection (only a plain scalar takes `#` into its text).
            Some('#')
                if had_space
                    || matches!(
                        self.s.as_bytes().get(self.pos.wrapping_sub(1)),
                        Some(b' ' | b'\t' | b'\'' | b'"' | b']' | b'}')
                    ) =>
            {
                Ok(self.take_line_rest().to_string())
            }
            Some(_) => self.junk_err(),
        }
    }

    /// Moves from the end of a line (or the start of the chunk) to the first
    /// character of the next content line, recording blank and comment
    /// lines in `pending`. Stops at EOF.
    pub fn skip_to_content(&mut self) -> PResult<()> {
        // libyaml names the mark its scan for the next token began at (the end of
        // the previous token) for an indentation tab.
        let scan_start = self.line;
        // Whether the previous token is a plain scalar that libyaml would go on scanning
        // onto the following lines (no comment ended it).
        let mut plain_open = self.ends_in_plain_scalar();
        loop {
            // At a line start or at a line break ending the previous line.
            if self.peek() == Some('\n') {
                self.bump();
            } else if self.col != 0 {
                // Rest of the current line must be blank (callers consumed
                // content and comments already).
                self.skip_spaces();
                if self.peek() != Some('\n') {
                    return Ok(());
                }
                self.bump();
            }
            let line_start = self.pos;
            while self.peek() == Some(' ') {
                self.bump();
            }
            match self.peek() {
                None => {
                    if self.pos > line_start {
                        self.pending.push(GapLine::Blank);
                    }
                    return Ok(());
                }
                Some('\n') => self.pending.push(GapLine::Blank),
                Some('\t') => {
                    // libyaml eats no tab at a block line's start (a simple key may
                    // begin there): the tab cannot start any token, be the line blank,
                    // a comment or content. Only a plain scalar still being scanned
                    // takes the line's blanks (`plain` refused a tab left of its
                    // indentation already), up to a comment or its next content.
                    let at_tab = self.line;
                    while matches!(self.peek(), Some(' ' | '\t')) {
                        self.bump();
                    }
                    match self.peek() {
                        None | Some('\n' | '#') if !plain_open => {
                            return self.scanner_err_from(
                                "found character that cannot start any token",
                                at_tab,
                            );
                        }
                        None | Some('\n') => self.pending.push(GapLine::Blank),
                        Some('#') => {
                            plain_open = false;
                            self.take_comment_line();
                        }
                        // libyaml: a tab before content is refused "while scanning a
                        // plain scalar" that runs on to this line (naming where that
                        // scalar began); otherwise the tab cannot start any token.
                        Some(_) if plain_open => {
                            return self.scanner_err_from(
                                "found a tab character that violates indentation",
                                scan_start,
                            );
                        }
                        Some(_) => {
                            return self.scanner_err_from(
                                "found character that cannot start any token",
                                self.line,
                            );
                        }
                    }
                }
                Some('#') => {
                    plain_open = false;
                    self.take_comment_line();
                }
                Some(_) => return Ok(()),
            }
            if self.eof() {
                return Ok(());
            }
        }
    }

    /// The current line up to the cursor ends with a plain scalar: not an indicator
    /// (`:`, `-`, `?`, a flow bracket, a block scalar header), not a quoted scalar and
    /// not a comment.
    fn ends_in_plain_scalar(&self) -> bool {
        let line = &self.s[self.line_start..self.pos.min(self.s.len())];
        let text = line.trim_end();
        if text.trim_start().is_empty() || text.contains(" #") || text.trim_start().starts_with('#')
        {
            return false;
        }
        !matches!(
            text.chars().last(),
            Some(':' | '-' | '?' | '[' | ']' | '{' | '}' | ',' | '"' | '\'' | '|' | '>')
        )
    }

    fn take_comment_line(&mut self) {
        let col = self.col;
        let text = self.take_line_rest().to_string();
        self.pending.push(GapLine::Comment { col, text });
    }

    /// Saves the position (for look-ahead that may be undone).
    pub fn save(&self) -> Saved {
        Saved {
            pos: self.pos,
            line: self.line,
            col: self.col,
            line_start: self.line_start,
            pending: self.pending.len(),
        }
    }

    pub fn restore(&mut self, s: Saved) {
        self.pos = s.pos;
        self.line = s.line;
        self.col = s.col;
        self.line_start = s.line_start;
        self.pending.truncate(s.pending);
    }
}

/// A position to go back to after look-ahead.
#[derive(Debug, Clone, Copy)]
pub struct Saved {
    pos: usize,
    line: usize,
    col: usize,
    line_start: usize,
    pending: usize,
}
