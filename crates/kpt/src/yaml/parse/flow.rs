//! Flow collections (`[a, b]`, `{k: v}`), possibly spanning lines and
//! nested. Comments inside them are placed as go-yaml places them
//! ([`super::flow_comments`]).

use super::super::node::{Node, NodeKind, Style};
use super::cursor::{Cursor, PResult};
use super::flow_comments::{Event, FLOW_EOF, FlowLog, Kind};
use crate::yaml::limits::{MAX_DEPTH, depth_message, guard};

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
    /// [`Self::flow_skip`], the end of the stream reported as libyaml's parser reports
    /// it where it wanted `want`.
    fn flow_ws_or(
        &mut self,
        log: &mut FlowLog,
        want: Want,
        seq: bool,
        start_line: usize,
    ) -> PResult<()> {
        match self.flow_skip(log) {
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
    /// `level` is the flow level of the enclosing collection. The node's event is
    /// recorded for the node at `log.path`.
    fn flow_node(&mut self, log: &mut FlowLog, level: usize) -> PResult<Node> {
        let (mut anchor, mut tag) = (None, None);
        loop {
            let start = self.pos;
            match self.peek() {
                Some('&') => anchor = Some(self.anchor_name()?),
                Some('!') => tag = Some(self.tag()?),
                _ => break,
            }
            log.token(start, Kind::Other);
            self.flow_skip(log)?;
        }
        let start = self.pos;
        let mut n = match self.peek() {
            Some('[' | '{') => self.flow_collection_in(log, level + 1)?,
            Some('*') => {
                let n = Node::alias(self.anchor_name()?);
                log.event_token(start, Kind::Scalar, Event::Node);
                n
            }
            Some(q @ ('"' | '\'')) => {
                let mut n = Node::string(self.quoted()?);
                n.style = if q == '"' {
                    Style::DoubleQuoted
                } else {
                    Style::SingleQuoted
                };
                log.event_token(start, Kind::Scalar, Event::Node);
                n
            }
            // A node of only an anchor or tag is empty and takes no comments; with
            // neither, go-yaml's parser wanted a node here.
            Some(',' | ']' | '}' | ':') if anchor.is_some() || tag.is_some() => Node::plain(""),
            Some(',' | ']' | '}' | ':') => {
                let here = self.line;
                return self.parser_err("did not find expected node content", here);
            }
            // A `-` before a blank is libyaml's block entry indicator even in flow
            // context: after properties the node is empty (and the `-` is where a
            // separator was due), alone its parser finds no node in it.
            Some('-') if self.blankz_at(1) && (anchor.is_some() || tag.is_some()) => {
                Node::plain("")
            }
            Some('-') if self.blankz_at(1) => {
                let here = self.line;
                return self.parser_err("did not find expected node content", here);
            }
            _ => {
                let n = Node::plain(self.plain(-1, true)?);
                log.event_token(start, Kind::Plain, Event::Node);
                n
            }
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

    /// `[ ... ]` or `{ ... }` starting at the opening bracket, as the outermost flow
    /// collection inside a block whose indentation is `indent` (-1 at the top): its
    /// comments are placed as go-yaml places them. go-yaml's `max_flow_level` applies.
    pub fn flow_collection(&mut self, indent: i64) -> PResult<Node> {
        let mut log = FlowLog::new(indent);
        let mut n = self.flow_collection_in(&mut log, 1)?;
        log.apply(&mut n);
        Ok(n)
    }

    /// A flow collection at flow `level` (1 for the outermost).
    fn flow_collection_in(&mut self, log: &mut FlowLog, level: usize) -> PResult<Node> {
        if level > MAX_DEPTH {
            return self.err(depth_message(MAX_DEPTH));
        }
        guard(|| self.flow_collection_at(log, level))
    }

    fn flow_collection_at(&mut self, log: &mut FlowLog, depth: usize) -> PResult<Node> {
        let start_line = self.line;
        let seq = self.peek() == Some('[');
        self.flow_entries(log, depth).or_else(|e| {
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

    fn flow_entries(&mut self, log: &mut FlowLog, depth: usize) -> PResult<Node> {
        let start_line = self.line;
        log.event_token(self.pos, Kind::Start, Event::Start);
        let seq = self.bump() == Some('[');
        let close = if seq { ']' } else { '}' };
        let mut items = Vec::new();
        let mut entries = Vec::new();
        let mut keys: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
        let mut index: u32 = 0;
        loop {
            // The stream ending where libyaml's parser wants a node is "did not find
            // expected node content"; where it wants a separator, the missing ','.
            self.flow_ws_or(log, Want::Node, seq, start_line)?;
            if self.peek() == Some(close) {
                log.event_token(self.pos, Kind::End, Event::End);
                self.bump();
                break;
            }
            // Inside a flow collection go-yaml takes any `?` for a KEY indicator.
            let explicit = self.peek() == Some('?');
            if explicit {
                log.token(self.pos, Kind::Other);
                self.bump();
                self.flow_ws_or(log, Want::Node, seq, start_line)?;
            }
            let first_tok = log.mark();
            let (key_pos, key_line, key_col) = (self.pos, self.line, self.col);
            let key = if explicit
                && matches!(self.peek(), Some(c) if c == ':' || c == ',' || c == close)
            {
                // `?` with no key: an empty one. In a sequence go-yaml's parser also
                // skips the token after it (`yaml_parser_parse_flow_sequence_entry_
                // mapping_key`), so `[? : a]` fails and `[? , a]` is one pair.
                if seq {
                    if self.peek() == Some(close) {
                        return self.parser_err(separator_missing(seq), start_line);
                    }
                    let kind = if self.peek() == Some(':') {
                        Kind::Value
                    } else {
                        Kind::Entry
                    };
                    log.token(self.pos, kind);
                    self.bump();
                }
                Node::plain("")
            } else {
                log.path.push(if seq { index } else { 2 * index });
                let key = self.flow_node(log, depth);
                log.path.pop();
                key?
            };
            self.flow_ws_or(log, Want::Separator, seq, start_line)?;
            // An implicit key is a simple key for go-yaml's scanner: on one line and at
            // most 1024 characters long, else the `:` has no key to belong to.
            if !explicit
                && self.peek() == Some(':')
                && (self.line != key_line || self.pos - key_pos > 1024)
            {
                return self.parser_err(separator_missing(seq), start_line);
            }
            let value = if self.peek() == Some(':') {
                log.token(self.pos, Kind::Value);
                self.bump();
                self.flow_ws_or(log, Want::Node, seq, start_line)?;
                if seq {
                    // A pair inside a sequence is an implicit mapping (whose own events
                    // take no comments): its key and value sit one level deeper.
                    log.repath(first_tok, &[index], &[index, 0]);
                }
                if matches!(self.peek(), Some(',')) || self.peek() == Some(close) {
                    Some(Node::plain(""))
                } else {
                    let value_path: &[u32] = if seq { &[index, 1] } else { &[2 * index + 1] };
                    log.path.extend_from_slice(value_path);
                    let value = self.flow_node(log, depth);
                    log.path.truncate(log.path.len() - value_path.len());
                    Some(value?)
                }
            } else if explicit {
                // `? key` without a value still makes a pair.
                if seq {
                    log.repath(first_tok, &[index], &[index, 0]);
                }
                Some(Node::plain(""))
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
                // Duplicate scalar keys are refused as in a block mapping (go-yaml's
                // text when it decodes a mapping).
                if let Some(k) = key.as_str() {
                    let line = key_line + self.line_offset + 1;
                    if let Some(first) = keys.insert(k.to_string(), line) {
                        let msg = format!("mapping key \"{k}\" already defined at line {first}");
                        return Err(self.error_at(msg, key_line, key_col));
                    }
                }
                entries.push((key, value.unwrap_or_else(|| Node::plain(""))));
            }
            index += 1;
            self.flow_ws_or(log, Want::Separator, seq, start_line)?;
            match self.peek() {
                Some(',') => {
                    log.token(self.pos, Kind::Entry);
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
        Ok(n)
    }
}
