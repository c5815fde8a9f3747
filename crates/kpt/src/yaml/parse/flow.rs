//! Flow collections (`[a, b]`, `{k: v}`), possibly spanning lines and
//! nested. Comments inside a flow collection are kept on the collection.

use super::super::node::{Node, NodeKind, Style};
use super::comments::join;
use super::cursor::{Cursor, PResult};
use crate::yaml::limits::{MAX_DEPTH, depth_message, guard};

/// The end of the stream inside a flow collection (turned into libyaml's parser error
/// by the collection that is open).
const FLOW_EOF: &str = "found unexpected end of stream in a flow collection";

/// What libyaml's flow parser expects next.
#[derive(Clone, Copy)]
enum Want {
    /// An entry (or the closing bracket).
    Node,
    /// A `,` (or the closing bracket).
    Separator,
}

fn separator_missing(seq: bool) -> &'static str {
    if seq {
        "did not find expected ',' or ']'"
    } else {
        "did not find expected ',' or '}'"
    }
}

impl Cursor {
    /// Skips whitespace, line breaks and comments inside flow context,
    /// collecting comments into `comments`.
    fn flow_ws(&mut self, comments: &mut String) -> PResult<()> {
        loop {
            match self.peek() {
                Some(' ' | '\t' | '\n') => {
                    self.bump();
                }
                Some('#') => {
                    let mut t = String::new();
                    while let Some(c) = self.peek() {
                        if c == '\n' {
                            break;
                        }
                        t.push(c);
                        self.bump();
                    }
                    join(comments, t.trim_end());
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

    /// [`Self::flow_ws`], the end of the stream reported as libyaml's parser reports
    /// it where it wanted `want`.
    fn flow_ws_or(
        &mut self,
        comments: &mut String,
        want: Want,
        seq: bool,
        start_line: usize,
    ) -> PResult<()> {
        match self.flow_ws(comments) {
            Err(e) if e.message == FLOW_EOF => match want {
                Want::Node => {
                    let here = self.line;
                    self.parser_err("did not find expected node content", here)
                }
                Want::Separator => self.parser_err(separator_missing(seq), start_line),
            },
            other => other,
        }
    }

    /// A flow node (scalar, alias or nested collection) inside flow context;
    /// `level` is the flow level of the enclosing collection.
    fn flow_node(&mut self, comments: &mut String, level: usize) -> PResult<Node> {
        let (mut anchor, mut tag) = (None, None);
        loop {
            match self.peek() {
                Some('&') => anchor = Some(self.anchor_name()?),
                Some('!') => tag = Some(self.tag()?),
                _ => break,
            }
            self.flow_ws(comments)?;
        }
        let mut n = match self.peek() {
            Some('[' | '{') => self.flow_collection(level + 1)?,
            Some('*') => Node::alias(self.anchor_name()?),
            Some('"') => {
                let mut n = Node::string(self.quoted()?);
                n.style = Style::DoubleQuoted;
                n
            }
            Some('\'') => {
                let mut n = Node::string(self.quoted()?);
                n.style = Style::SingleQuoted;
                n
            }
            Some(',' | ']' | '}' | ':') => Node::plain(""),
            _ => Node::plain(self.plain(-1, true)?),
        };
        if anchor.is_some() {
            n.anchor = anchor;
        }
        if tag.is_some() {
            n.tag = tag;
            if n.style == Style::Any {
                n.style = Style::Plain;
            }
        }
        Ok(n)
    }

    /// `[ ... ]` or `{ ... }` starting at the opening bracket, at flow
    /// `level` (1 for the outermost); go-yaml's `max_flow_level` applies.
    pub fn flow_collection(&mut self, level: usize) -> PResult<Node> {
        if level > MAX_DEPTH {
            return self.err(depth_message(MAX_DEPTH));
        }
        guard(|| self.flow_collection_at(level))
    }

    fn flow_collection_at(&mut self, depth: usize) -> PResult<Node> {
        let start_line = self.line;
        let seq = self.peek() == Some('[');
        self.flow_entries(depth).or_else(|e| {
            // libyaml's scanner ends the stream inside a flow collection quietly; its
            // parser then misses the separator "while parsing a flow sequence/mapping",
            // naming the line the collection opened on (innermost first).
            if e.message == FLOW_EOF {
                self.parser_err(separator_missing(seq), start_line)
            } else {
                Err(e)
            }
        })
    }

    fn flow_entries(&mut self, depth: usize) -> PResult<Node> {
        let start_line = self.line;
        let seq = self.bump() == Some('[');
        let close = if seq { ']' } else { '}' };
        let mut comments = String::new();
        let mut items = Vec::new();
        let mut entries = Vec::new();
        loop {
            // The stream ending where libyaml's parser wants a node is "did not find
            // expected node content"; where it wants a separator, the missing ','.
            self.flow_ws_or(&mut comments, Want::Node, seq, start_line)?;
            if self.peek() == Some(close) {
                self.bump();
                break;
            }
            let explicit = self.peek() == Some('?') && self.blankz_at(1);
            if explicit {
                self.bump();
                self.flow_ws_or(&mut comments, Want::Node, seq, start_line)?;
            }
            let key = self.flow_node(&mut comments, depth)?;
            self.flow_ws_or(&mut comments, Want::Separator, seq, start_line)?;
            let value = if self.peek() == Some(':') {
                self.bump();
                self.flow_ws_or(&mut comments, Want::Node, seq, start_line)?;
                if matches!(self.peek(), Some(',')) || self.peek() == Some(close) {
                    Some(Node::plain(""))
                } else {
                    Some(self.flow_node(&mut comments, depth)?)
                }
            } else {
                None
            };
            if seq {
                match value {
                    Some(v) => {
                        let mut m = Node::mapping();
                        m.style = Style::Flow;
                        m.kind = NodeKind::Mapping(vec![(key, v)]);
                        items.push(m);
                    }
                    None => items.push(key),
                }
            } else {
                entries.push((key, value.unwrap_or_else(|| Node::plain(""))));
            }
            self.flow_ws_or(&mut comments, Want::Separator, seq, start_line)?;
            match self.peek() {
                Some(',') => {
                    self.bump();
                }
                Some(c) if c == close => {}
                _ => return self.parser_err(separator_missing(seq), start_line),
            }
        }
        let mut n = if seq {
            let mut n = Node::sequence();
            n.kind = NodeKind::Sequence(items);
            n
        } else {
            let mut n = Node::mapping();
            n.kind = NodeKind::Mapping(entries);
            n
        };
        n.style = Style::Flow;
        n.foot_comment = comments;
        Ok(n)
    }
}
