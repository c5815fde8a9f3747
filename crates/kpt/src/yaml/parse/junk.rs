//! Content left after a node on its line (`b: 'x' y`), refused as go-yaml words it:
//! its scanner reads the next token with two more of lookahead before its parser
//! judges the first, so an indicator that cannot follow a node there is the scanner's
//! error, and any other token the parser's, in the words of the block collection
//! whose next key or `-` it wanted.

use super::super::document::YamlError;
use super::cursor::{Cursor, PResult};

impl Cursor {
    /// Content after a node on its line. go-yaml's scanner reads the next token with
    /// two more of lookahead before its parser judges the first: an indicator that
    /// cannot follow a node on its line is a scanner error here; any other token
    /// leaves the wording to the parser state the enclosing block collection knows
    /// ([`Cursor::junk_in_collection`]), noting whether a `:` value indicator follows
    /// a plain scalar on the line. At the root go-yaml reads only the first document,
    /// so no parser error is reached there; the error stays as worded here.
    pub(super) fn junk_err<T>(&mut self) -> PResult<T> {
        let rest = self.s[self.pos..].split('\n').next().unwrap_or("");
        match after_node(rest) {
            Ok(value_indicator) => {
                self.junk = Some(Junk { value_indicator });
                self.err("did not find expected <document start>")
            }
            Err(scanner) => {
                self.scanner_errors_precede_alias();
                self.err(scanner)
            }
        }
    }

    /// What go-yaml's scanner makes of the rest of the line after a quoted scalar
    /// starting here (see [`after_node`]); `None` when the line holds no such scalar.
    pub fn after_quoted_scalar(&self) -> Option<Result<bool, &'static str>> {
        self.after_quoted().map(after_node)
    }

    /// The rest of the line after the quoted scalar starting here (after properties, if
    /// any), from its next token.
    fn after_quoted(&self) -> Option<&str> {
        let mut rest = self.s[self.pos..].split('\n').next().unwrap_or("");
        while rest.starts_with(['&', '!']) {
            let (_, after) = rest.split_once([' ', '\t'])?;
            rest = after.trim_start_matches([' ', '\t']);
        }
        let q = rest.chars().next().filter(|c| matches!(c, '\'' | '"'))?;
        let b = rest.as_bytes();
        let mut i = 1;
        // The closing quote: `''` is a quote inside single quotes, `\` escapes in double.
        let end = loop {
            match b.get(i) {
                None => return None,
                Some(b'\\') if q == '"' => i += 2,
                Some(b'\'') if q == '\'' && b.get(i + 1) == Some(&b'\'') => i += 2,
                Some(&c) if c == q as u8 => break i + 1,
                _ => i += 1,
            }
        };
        Some(rest[end..].trim_start_matches([' ', '\t']))
    }

    /// A scanner error within go-yaml's lookahead of an unknown alias just before it
    /// (the node this line went on past) is met before the alias is resolved.
    fn scanner_errors_precede_alias(&mut self) {
        let before = self.s[self.line_start..self.pos].trim_end();
        let last = before.rsplit([' ', '\t']).next().unwrap_or("");
        if let Some(name) = last.strip_prefix('*')
            && self.unknown_alias.as_deref() == Some(name)
        {
            self.unknown_alias = None;
        }
    }

    /// Rewords an error from a node of a block collection whose line went on past it
    /// (`junk` set): go-yaml's parser wants the collection's next key (a mapping) or
    /// `-` (a sequence) and names the collection's start line. When a `:` follows on
    /// the line, a node that could start a simple key (`candidate`: first on its line
    /// or right after `-`) became the key of a new mapping that now wants its next key;
    /// otherwise the `:` is the scanner's error. Other errors pass unchanged.
    pub fn junk_in_collection(
        &mut self,
        e: YamlError,
        collection: Collection,
        start_line: usize,
        candidate: bool,
    ) -> YamlError {
        let Some(j) = self.junk.take() else {
            return e;
        };
        let mapping = collection == Collection::Mapping;
        if collection == Collection::IndentlessSequence && !(j.value_indicator && candidate) {
            // An indentless sequence simply ends at a token that is no `-`: the
            // enclosing mapping's parser meets it.
            self.junk = Some(j);
            return e;
        }
        let r: PResult<()> = match (j.value_indicator, candidate) {
            (true, true) => self.parser_err("did not find expected key", self.line),
            (true, false) => {
                self.scanner_errors_precede_alias();
                self.err("mapping values are not allowed in this context")
            }
            (false, _) if mapping => self.parser_err("did not find expected key", start_line),
            (false, _) => self.parser_err("did not find expected '-' indicator", start_line),
        };
        r.err().unwrap_or(e)
    }
}

/// The block collection a node with content after it on its line belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Collection {
    Mapping,
    Sequence,
    /// A sequence at its mapping key's column (libyaml opens no level for it).
    IndentlessSequence,
}

/// Content left after a node on its line (see [`Cursor::junk_err`]).
#[derive(Debug, Clone, Copy)]
pub struct Junk {
    /// A plain scalar there is followed by a `:` value indicator on the same line.
    pub value_indicator: bool,
}

/// What go-yaml's scanner makes of `rest`, the rest of a line after a node in block
/// context (a simple key is no longer allowed there): its error when the next token
/// cannot follow a node there (`-`/`?`/`:` before a blank, a character that starts no
/// token), else whether that token is a plain scalar ending at a `:` value indicator.
fn after_node(rest: &str) -> Result<bool, &'static str> {
    let mut chars = rest.chars();
    let first = chars.next();
    let blank_next = matches!(chars.next(), None | Some(' ' | '\t'));
    Err(match first {
        Some('-') if blank_next => "block sequence entries are not allowed in this context",
        Some('?') if blank_next => "mapping keys are not allowed in this context",
        Some(':') if blank_next => "mapping values are not allowed in this context",
        Some('@' | '`' | '%') => "found character that cannot start any token",
        _ => {
            let plain = first.is_some_and(|c| !"'\"[]{}*&!|>#,".contains(c));
            return Ok(plain && plain_has_value_indicator(rest));
        }
    })
}

/// Whether the plain scalar starting `rest` ends at a `:` value indicator (`: ` or a
/// `:` ending the line) rather than at a comment or the line's end.
fn plain_has_value_indicator(rest: &str) -> bool {
    let b = rest.as_bytes();
    for i in 0..b.len() {
        match b[i] {
            b':' if matches!(b.get(i + 1), None | Some(b' ' | b'\t')) => return true,
            b'#' if i > 0 && matches!(b[i - 1], b' ' | b'\t') => return false,
            _ => {}
        }
    }
    false
}
