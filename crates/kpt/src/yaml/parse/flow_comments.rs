//! go-yaml v3's comments inside flow collections, ported from its scanner and parser.
//!
//! Inside `[...]` and `{...}` go-yaml places comments by token marks, as in block
//! context, but the gaps are cut differently, so this is its own port:
//!
//! - after each token, `yaml_parser_scan_line_comment`: a comment on the token's line
//!   is that token's line comment (a `,`'s goes to the token before it); a plain
//!   scalar's scan runs on over blanks and line breaks, so one that ends its line has
//!   none;
//! - before each token, `yaml_parser_scan_comments` cuts the comment lines into feet
//!   (right below content, dedented below the enclosing block, or the last ones before
//!   a closing bracket) and a head for what follows;
//! - the parser unfolds queued comments when it peeks a token at or after their mark,
//!   and the next event that takes comments (a scalar, an alias, a collection's start
//!   or end) takes all that are waiting. A collection keeps its start's head and its
//!   end's line and foot comments; an empty scalar and an implicit `[k: v]` pair take
//!   none, so what waits for them goes to the next event.
//!
//! [`FlowLog`] records tokens and queued comments while the flow parser runs;
//! [`FlowLog::apply`] replays the parser's unfolding onto the finished collection.

use super::super::node::{Node, NodeKind};
use super::comments::join;
use super::cursor::{Cursor, PResult};

/// The end of the stream inside a flow collection (turned into libyaml's parser error
/// by the collection that is open).
pub const FLOW_EOF: &str = "found unexpected end of stream in a flow collection";

/// The tokens that matter for comment placement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `[` or `{`.
    Start,
    /// `]` or `}`.
    End,
    /// `,`.
    Entry,
    /// `:`.
    Value,
    /// `?`, an anchor or a tag.
    Other,
    /// A quoted scalar or an alias.
    Scalar,
    /// A plain scalar: libyaml's scan of it runs on over the blanks and line breaks
    /// after it.
    Plain,
}

/// What a token's event does with the comments waiting for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// A collection's start: keeps the head.
    Start,
    /// A collection's end: keeps the line and foot comments.
    End,
    /// A scalar or alias: keeps all three.
    Node,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Head,
    Line,
    Foot,
}

struct Tok {
    start: usize,
    kind: Kind,
    /// The node whose event this token makes, as a path from the outermost
    /// collection (a sequence's item index; a mapping's entry index times two, plus
    /// one for the value), and what the event keeps.
    event: Option<(Vec<u32>, Event)>,
}

struct Queued {
    /// Unfolded when the parser peeks a token starting at or after this.
    mark: usize,
    slot: Slot,
    text: String,
}

/// Tokens and comments of one outermost flow collection, in scan order.
pub struct FlowLog {
    /// Tokens from shortly before the first queued comment on (until there is one only
    /// the last few are kept: events before it take nothing, and a large JSON file is
    /// one flow collection).
    toks: Vec<Tok>,
    /// How many tokens were recorded and dropped before `toks`.
    dropped: usize,
    queue: Vec<Queued>,
    /// The enclosing block's indentation (go-yaml's `parser.indent`, at least 0).
    indent: usize,
    /// Where the node being parsed sits (see [`Tok::event`]).
    pub path: Vec<u32>,
}

impl FlowLog {
    pub fn new(indent: i64) -> FlowLog {
        FlowLog {
            toks: Vec::new(),
            dropped: 0,
            queue: Vec::new(),
            indent: usize::try_from(indent).unwrap_or(0),
            path: Vec::new(),
        }
    }

    /// Records a token starting at byte `start`.
    pub fn token(&mut self, start: usize, kind: Kind) {
        self.push_tok(Tok {
            start,
            kind,
            event: None,
        });
    }

    /// Records a token whose event takes comments for the node at the current path.
    pub fn event_token(&mut self, start: usize, kind: Kind, event: Event) {
        self.push_tok(Tok {
            start,
            kind,
            event: Some((self.path.clone(), event)),
        });
    }

    fn push_tok(&mut self, tok: Tok) {
        if self.queue.is_empty() && self.toks.len() >= 64 {
            // No comment yet: only the last two tokens can still be tied to one.
            let cut = self.toks.len() - 2;
            self.toks.drain(..cut);
            self.dropped += cut;
        }
        self.toks.push(tok);
    }

    /// How many tokens were recorded so far (for [`Self::repath`]).
    pub fn mark(&self) -> usize {
        self.dropped + self.toks.len()
    }

    /// Moves the events recorded since token `from` (a [`Self::mark`]) for nodes under
    /// `old` (relative to the current path) under `new`.
    pub fn repath(&mut self, from: usize, old: &[u32], new: &[u32]) {
        let base = self.path.len();
        let from = from.saturating_sub(self.dropped);
        for t in &mut self.toks[from..] {
            if let Some((p, _)) = &mut t.event
                && p.len() >= base + old.len()
                && p[base..base + old.len()] == *old
            {
                p.splice(base..base + old.len(), new.iter().copied());
            }
        }
    }

    /// The token go-yaml's scanner ties comments after the last token to: that token,
    /// or the one before a `,`.
    fn tied(&self) -> (usize, Kind) {
        let n = self.toks.len();
        match self.toks.last() {
            Some(t) if t.kind == Kind::Entry && n > 1 => {
                (self.toks[n - 2].start, self.toks[n - 2].kind)
            }
            Some(t) => (t.start, t.kind),
            None => (0, Kind::Start),
        }
    }

    fn push(&mut self, slot: Slot, mark: usize, text: String) {
        self.queue.push(Queued { mark, slot, text });
    }

    /// Replays go-yaml's parser over the recorded tokens: at each token the comments
    /// marked at or before it are unfolded, and an event takes all that wait. `root`
    /// is the outermost collection, whose start and end the block parser handles:
    /// here its end only adds what it takes.
    pub fn apply(self, root: &mut Node) {
        let mut queue = self.queue.into_iter().peekable();
        let (mut head, mut line, mut foot) = (String::new(), String::new(), String::new());
        for tok in self.toks {
            while let Some(c) = queue.next_if(|c| c.mark <= tok.start) {
                let to = match c.slot {
                    Slot::Head => &mut head,
                    Slot::Line => &mut line,
                    Slot::Foot => &mut foot,
                };
                join(to, &c.text);
            }
            let Some((path, event)) = tok.event else {
                continue;
            };
            let (h, l, f) = (
                std::mem::take(&mut head),
                std::mem::take(&mut line),
                std::mem::take(&mut foot),
            );
            let outer = path.is_empty();
            let Some(n) = at_path(root, &path) else {
                continue;
            };
            match event {
                Event::Start if !outer => n.head_comment = h,
                Event::Start => {}
                Event::End if outer => {
                    join(&mut n.line_comment, &l);
                    join(&mut n.foot_comment, &f);
                }
                Event::End => {
                    n.line_comment = l;
                    n.foot_comment = f;
                }
                Event::Node => {
                    n.head_comment = h;
                    n.line_comment = l;
                    n.foot_comment = f;
                }
            }
        }
    }
}

fn at_path<'a>(root: &'a mut Node, path: &[u32]) -> Option<&'a mut Node> {
    let mut n = root;
    for &i in path {
        let i = i as usize;
        n = match &mut n.kind {
            NodeKind::Sequence(items) => items.get_mut(i)?,
            NodeKind::Mapping(entries) => {
                let (k, v) = entries.get_mut(i / 2)?;
                if i.is_multiple_of(2) { k } else { v }
            }
            _ => return None,
        };
    }
    Some(n)
}

impl Cursor {
    /// Moves from just after the last token `log` recorded to the next token inside
    /// flow context, queueing the comments on the way as go-yaml's scanner does.
    pub fn flow_skip(&mut self, log: &mut FlowLog) -> PResult<()> {
        let mut newlines = 0;
        if log.toks.last().is_some_and(|t| t.kind == Kind::Plain) {
            // libyaml's plain scanner has consumed the blanks and line breaks after the
            // scalar, looking for more of it.
            while let Some(c @ (' ' | '\t' | '\n')) = self.peek() {
                newlines += usize::from(c == '\n');
                self.bump();
            }
        }
        if newlines == 0 {
            let save = self.save();
            while let Some(' ' | '\t') = self.peek() {
                self.bump();
            }
            if self.peek() == Some('#') {
                let text = self.take_line_rest().to_string();
                let (mark, _) = log.tied();
                log.push(Slot::Line, mark, text);
            } else {
                self.restore(save);
            }
        }
        let scan_line = self.line;
        loop {
            while let Some(' ' | '\t') = self.peek() {
                self.bump();
            }
            match self.peek() {
                Some('#') => {
                    self.scan_flow_comments(log, scan_line, newlines);
                    newlines = 0;
                }
                Some('\n') => {
                    self.bump();
                    newlines += 1;
                }
                None => return self.err(FLOW_EOF),
                Some(_) => {
                    if self.col == 0
                        && (self.rest_starts_with("---") || self.rest_starts_with("..."))
                        && self.blankz_at(3)
                    {
                        return self
                            .err("found unexpected document indicator in a flow collection");
                    }
                    return Ok(());
                }
            }
        }
    }

    /// `yaml_parser_scan_comments` at a `#` inside flow context. `scan_line` is the
    /// line this scan for the next token began on, `newlines` the line breaks since the
    /// last content.
    fn scan_flow_comments(&mut self, log: &mut FlowLog, scan_line: usize, newlines: usize) {
        let (tied, tied_kind) = log.tied();
        let mut token_mark = tied;
        // The first comment line's byte position, line and 1-based column.
        let (mut start, mut start_line, mut start_col) = (0usize, 0i64, 0i64);
        let next_indent = log.indent as i64;
        let mut recent_empty = false;
        let mut first_empty = newlines <= 1;
        let mut line = self.line as i64;
        let mut column = self.col as i64;
        let mut text = String::new();
        // The line a comment must start on to be a foot of the prior content; none when
        // this scan began on the document's first line.
        let mut foot_line = -1;
        if scan_line > 0 {
            foot_line = self.line as i64 - newlines as i64 + 1;
            if newlines == 0 && self.col > 1 {
                foot_line += 1;
            }
        }
        let mut peek = 0;
        while peek < 512 {
            column += 1;
            let at = self.pos + peek;
            let b = self.s.as_bytes().get(at).copied().unwrap_or(0);
            if b == b' ' || b == b'\t' {
                peek += 1;
                continue;
            }
            let close_flow = b == b']' || b == b'}';
            if close_flow || b == b'\n' || b == 0 {
                if close_flow || !recent_empty {
                    let foot = close_flow
                        || (first_empty
                            && ((start_line == foot_line && tied_kind != Kind::Value)
                                || start_col - 1 < next_indent));
                    if foot {
                        if !text.is_empty() {
                            if start_col - 1 < next_indent {
                                // Dedented, it is unrelated to the prior token.
                                token_mark = start;
                            }
                            log.push(Slot::Foot, token_mark, std::mem::take(&mut text));
                            token_mark = at;
                        }
                    } else if !text.is_empty() && b != 0 {
                        text.push('\n');
                    }
                }
                if b != b'\n' {
                    break;
                }
                first_empty = false;
                recent_empty = true;
                column = 0;
                line += 1;
                peek += 1;
                continue;
            }
            if !text.is_empty() && column - 1 < next_indent && column != start_col {
                // A comment at another indentation ends a foot of the preceding data.
                log.push(Slot::Foot, token_mark, std::mem::take(&mut text));
                token_mark = at;
            }
            if b != b'#' {
                break;
            }
            if text.is_empty() {
                (start, start_line, start_col) = (at, line, column);
            } else {
                text.push('\n');
            }
            recent_empty = false;
            while self.pos < at {
                self.bump();
            }
            text.push_str(self.take_line_rest());
            // go-yaml resumes one byte on (past the line break, which it thus does not
            // count) at column 1 of the comment's line.
            peek = 1;
            column = 0;
            line = self.line as i64;
        }
        if !text.is_empty() {
            log.push(Slot::Head, start, text);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::yaml::{Node, parse_one};

    fn items(doc: &Node) -> Vec<(String, String, String)> {
        doc.get("k")
            .expect("k")
            .items()
            .iter()
            .map(|n| {
                (
                    n.head_comment.clone(),
                    n.line_comment.clone(),
                    n.foot_comment.clone(),
                )
            })
            .collect()
    }

    fn c(h: &str, l: &str, f: &str) -> (String, String, String) {
        (h.into(), l.into(), f.into())
    }

    /// After a `,` a comment is the line comment of the item before it; lines before an
    /// item are its head; the last ones before the closing bracket the last item's foot;
    /// the line comment after `[` is the collection start's, which go-yaml drops.
    #[test]
    fn comments_go_to_the_events_go_yaml_gives_them() {
        let doc = parse_one("k: [ # gone\n  a, # la\n  # hb\n  b\n  # fb\n]\n").expect("yaml");
        assert_eq!(items(&doc), [c("", "# la", ""), c("# hb", "", "# fb")]);
        let k = doc.get("k").expect("k");
        assert!(k.line_comment.is_empty() && k.foot_comment.is_empty());
    }

    /// A plain scalar's scan runs past its line's end, so a comment on the next line is
    /// no line comment of it: with content right below, it is the next event's head (as
    /// go-yaml has it); before a blank line, a foot.
    #[test]
    fn a_plain_scalar_ending_its_line_has_no_line_comment() {
        let doc = parse_one("k: [a\n  # h\n  , b # lb\n  ]\n").expect("yaml");
        assert_eq!(items(&doc), [c("", "", ""), c("# h", "# lb", "")]);
        let doc = parse_one("k: [a\n  # f\n\n  , b]\n").expect("yaml");
        assert_eq!(items(&doc), [c("", "", "# f"), c("", "", "")]);
    }

    /// Tokens before the first comment are not all kept; placement after the cut, and a
    /// pair found after it, are unchanged.
    #[test]
    fn long_collections_place_comments_after_the_cut() {
        let text = format!("k: [{}x: y, # after the pair\n  z]\n", "a, ".repeat(200));
        let doc = parse_one(&text).expect("yaml");
        let got = items(&doc);
        assert_eq!(got.len(), 202);
        assert_eq!(got[200], c("", "", ""));
        let pair = &doc.get("k").expect("k").items()[200];
        let (key, value) = &pair.entries()[0];
        assert_eq!(key.as_str(), Some("x"));
        assert_eq!(value.line_comment, "# after the pair");
    }
}
