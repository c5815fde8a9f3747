//! Low-level position handling for the parser: characters, lines and
//! columns, errors with positions, and collecting the "gap" of blank and
//! comment lines between two content lines.

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
}

pub struct Cursor {
    pub s: Vec<char>,
    pub pos: usize,
    /// 0-based line and column of `pos`.
    pub line: usize,
    pub col: usize,
    /// Line of the chunk's first line in the whole stream.
    pub line_offset: usize,
    /// Gap lines seen before the current content line, not yet attributed.
    pub pending: Vec<GapLine>,
}

pub type PResult<T> = Result<T, YamlError>;

impl Cursor {
    pub fn new(text: &str, line_offset: usize) -> Cursor {
        Cursor {
            s: text.chars().collect(),
            pos: 0,
            line: 0,
            col: 0,
            line_offset,
            pending: Vec::new(),
        }
    }

    pub fn err<T>(&self, msg: impl Into<String>) -> PResult<T> {
        Err(self.error_at(msg, self.line, self.col))
    }

    pub fn error_at(&self, msg: impl Into<String>, line: usize, col: usize) -> YamlError {
        YamlError {
            message: msg.into(),
            line: line + self.line_offset + 1,
            column: col + 1,
        }
    }

    pub fn peek(&self) -> Option<char> {
        self.s.get(self.pos).copied()
    }

    pub fn peek_at(&self, n: usize) -> Option<char> {
        self.s.get(self.pos + n).copied()
    }

    pub fn eof(&self) -> bool {
        self.pos >= self.s.len()
    }

    /// Advances one character (line breaks update line/col).
    pub fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += 1;
        if c == '\n' {
            self.line += 1;
            self.col = 0;
        } else {
            self.col += 1;
        }
        Some(c)
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
            Some('#') if had_space || self.s.get(self.pos.wrapping_sub(1)) == Some(&' ') => {
                let mut t = String::new();
                while let Some(c) = self.peek() {
                    if c == '\n' {
                        break;
                    }
                    t.push(c);
                    self.bump();
                }
                Ok(t.trim_end().to_string())
            }
            Some(_) => self.err("did not find expected <document start> or end of line"),
        }
    }

    /// Moves from the end of a line (or the start of the chunk) to the first
    /// character of the next content line, recording blank and comment
    /// lines in `pending`. Stops at EOF.
    pub fn skip_to_content(&mut self) -> PResult<()> {
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
                    // Whitespace-only lines with tabs are blank; tabs before
                    // content are an indentation error.
                    while matches!(self.peek(), Some(' ' | '\t')) {
                        self.bump();
                    }
                    match self.peek() {
                        None | Some('\n') => self.pending.push(GapLine::Blank),
                        Some('#') => self.take_comment_line(),
                        Some(_) => {
                            return self.err("found a tab character that violates indentation");
                        }
                    }
                }
                Some('#') => self.take_comment_line(),
                Some(_) => return Ok(()),
            }
            if self.eof() {
                return Ok(());
            }
        }
    }

    fn take_comment_line(&mut self) {
        let col = self.col;
        let mut t = String::new();
        while let Some(c) = self.peek() {
            if c == '\n' {
                break;
            }
            t.push(c);
            self.bump();
        }
        self.pending.push(GapLine::Comment {
            col,
            text: t.trim_end().to_string(),
        });
    }

    /// Saves the position (for look-ahead that may be undone).
    pub fn save(&self) -> (usize, usize, usize, usize) {
        (self.pos, self.line, self.col, self.pending.len())
    }

    pub fn restore(&mut self, s: (usize, usize, usize, usize)) {
        self.pos = s.0;
        self.line = s.1;
        self.col = s.2;
        self.pending.truncate(s.3);
    }
}
