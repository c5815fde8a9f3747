//! Block structure: mappings, sequences (compact and wide), values on the
//! same or following lines, and head/line/foot comment attribution.

use super::super::node::{Node, NodeKind, Style};
use super::comments::{Next, join, key_takes_foot};
use super::cursor::{Cursor, PResult};
use super::gap::{self, Prior};
use super::junk::Collection;
use crate::yaml::limits::{MAX_DEPTH, depth_message, guard_at};

/// Mappings with at least this many keys check duplicates through an index.
const INDEX_KEYS_FROM: usize = 32;

/// A parsed node plus the indentations of its chain of last entries (for
/// attributing foot comments once the next token is seen), innermost first
/// so that each level adds its own in O(1).
pub struct Parsed {
    pub node: Node,
    /// `(indentation, is a mapping)` of each collection, innermost first.
    pub chain: Vec<(usize, bool)>,
}

impl Parsed {
    fn leaf(node: Node) -> Parsed {
        Parsed {
            node,
            chain: Vec::new(),
        }
    }
}

impl Cursor {
    /// The gap at the end of a document (before a `...` marker when `marker`): the
    /// closing blocks take their feet; returns the head and the feet left for go-yaml's
    /// DOCUMENT-END event.
    pub fn take_trailing(&mut self, root: &mut Parsed, marker: bool) -> (String, String) {
        self.take_gap(&mut root.node, &root.chain, Next::End { marker })
    }

    /// A node whose content starts at the current position, in block
    /// context. `indent` is the enclosing block indentation (-1 at top
    /// level); `inline` is true after `key: ` or `- ` on the same line.
    /// `depth` counts enclosing block nodes; past go-yaml's limit the
    /// document is refused with its message.
    pub fn block_node(&mut self, indent: i64, inline: bool, depth: usize) -> PResult<Parsed> {
        if depth > MAX_DEPTH {
            return self.err(depth_message(MAX_DEPTH));
        }
        guard_at(depth, || self.block_node_at(indent, inline, depth))
    }

    fn block_node_at(&mut self, indent: i64, inline: bool, depth: usize) -> PResult<Parsed> {
        let map_value = std::mem::take(&mut self.map_value);
        let (mut anchor, mut tag) = (None, None);
        let col = self.col;
        loop {
            // A node has at most one anchor and one tag (libyaml); refusing a
            // second one also keeps the key look-ahead below from rescanning a
            // line of thousands of properties once per property.
            let again = match self.peek() {
                Some('&') => anchor.is_some(),
                Some('!') => tag.is_some(),
                _ => false,
            };
            if again {
                return self.parser_err("did not find expected node content", self.line);
            }
            match self.peek() {
                Some('&') if !self.is_key_here() => anchor = Some(self.anchor_name()?),
                Some('!') if !self.is_key_here() => tag = Some(self.tag()?),
                _ => break,
            }
            self.skip_spaces();
            if matches!(self.peek(), None | Some('\n' | '#')) {
                // Properties alone on the line: the content follows. They are tokens
                // without an event of their own, so their line comment waits for the
                // next event that takes comments, and the gap after them is cut as
                // after a lone `-` (feet wait too, the head is the content's).
                let lc = self.line_comment()?;
                self.skip_to_content()?;
                self.set_prior(Prior::Entry);
                join(&mut self.pending_line, &lc);
                // `key: &a` then `- item` at the key's column: the sequence is
                // the value (yaml.v3 writes anchored sequences this way).
                let compact = map_value
                    && self.col as i64 == indent
                    && self.peek() == Some('-')
                    && self.blankz_at(1);
                let p = if !self.eof() && ((self.col as i64) > indent || compact) {
                    let open = usize::try_from(indent).unwrap_or(0);
                    let h = self.take_opening_gap(open, None);
                    let mut p = self.block_node(indent, false, depth + 1)?;
                    set_first_head(&mut p.node, h);
                    p
                } else {
                    // go-yaml's event for bare properties takes no comments.
                    Parsed::leaf(Node::plain(""))
                };
                return Ok(with_props(p, anchor, tag));
            }
        }
        let _ = col;
        let p = match self.peek() {
            Some('-') if self.blankz_at(1) => {
                if inline && !self.after_dash() {
                    return self.err("block sequence entries are not allowed in this context");
                }
                self.block_sequence(depth, indent)?
            }
            Some('?') if self.blankz_at(1) => {
                if inline && !self.after_dash() {
                    return self.err("mapping keys are not allowed in this context");
                }
                self.block_mapping(depth)?
            }
            _ if self.is_key_here() => {
                if inline && !self.after_dash() {
                    return self.err("mapping values are not allowed in this context");
                }
                self.block_mapping(depth)?
            }
            Some('|' | '>') => {
                let style = if self.peek() == Some('|') {
                    Style::Literal
                } else {
                    Style::Folded
                };
                let (v, lc) = self.block_scalar(indent)?;
                if self.pos == self.line_start && self.blank_line_before() {
                    // The scalar took the blank lines after it, which go-yaml still
                    // counts before the next comment (they keep it from being a foot).
                    self.pending.push(super::cursor::GapLine::Blank);
                }
                let mut n = Node::string(v);
                n.style = style;
                n.line_comment = lc;
                self.content(n)
            }
            Some('[' | '{') => {
                // go-yaml's flow start takes the waiting feet, and its end's comments
                // then replace them.
                self.pending_foot.clear();
                self.pending_line.clear();
                let mut n = self.flow_collection(indent)?;
                let lc = self.line_comment()?;
                super::comments::join(&mut n.line_comment, &lc);
                self.content(n)
            }
            Some('*') => {
                let mut n = Node::alias(self.anchor_name()?);
                n.line_comment = self.line_comment()?;
                self.content(n)
            }
            Some('"' | '\'') => {
                let style = if self.peek() == Some('"') {
                    Style::DoubleQuoted
                } else {
                    Style::SingleQuoted
                };
                let mut n = Node::string(self.quoted()?);
                n.style = style;
                n.line_comment = self.line_comment()?;
                self.content(n)
            }
            Some('%' | '@' | '`') => {
                return self.err("found character that cannot start any token");
            }
            _ => {
                let mut n = Node::plain(self.plain(indent, false)?);
                if self.peek() == Some(':') {
                    return self.err("mapping values are not allowed in this context");
                }
                n.line_comment = self.line_comment()?;
                self.content(n)
            }
        };
        Ok(with_props(p, anchor, tag))
    }

    /// The line before the current one is blank (only whitespace).
    fn blank_line_before(&self) -> bool {
        let before = self.s[..self.line_start].strip_suffix('\n').unwrap_or("");
        let line = before.rsplit('\n').next().unwrap_or("");
        self.line_start > 0 && line.bytes().all(|c| matches!(c, b' ' | b'\t' | b'\r'))
    }

    /// The prior token is an indicator or properties, which end on their line.
    fn set_prior(&mut self, prior: Prior) {
        self.prior = prior;
        self.prior_past_line = false;
    }

    /// A scalar, alias or flow collection: go-yaml's event for it takes the feet that
    /// wait for one, and the comments kept with it after.
    fn content(&mut self, mut n: Node) -> Parsed {
        join(&mut n.foot_comment, &std::mem::take(&mut self.pending_foot));
        let own = std::mem::replace(&mut n.line_comment, std::mem::take(&mut self.pending_line));
        join(&mut n.line_comment, &own);
        self.prior = Prior::Content;
        self.prior_past_line = n.style == Style::Plain && n.line_comment.is_empty();
        Parsed::leaf(n)
    }

    /// True when the text before `pos` on this line is only spaces and
    /// `- ` indicators (so a mapping may start here).
    fn after_dash(&self) -> bool {
        let (memo_line, memo_end) = self.dash_memo.get();
        let from = if memo_line == self.line_start && memo_end <= self.pos {
            memo_end
        } else {
            self.line_start
        };
        // `- `, and the explicit key and value indicators `? ` and `: ` of a block
        // mapping, each open a block node on their own line.
        let clean = self.s.as_bytes()[from..self.pos]
            .iter()
            .all(|c| matches!(c, b' ' | b'-' | b'?' | b':'));
        if clean {
            self.dash_memo.set((self.line_start, self.pos));
        }
        clean
    }

    /// Whether an implicit key (`key:`) starts here.
    pub fn is_key_here(&mut self) -> bool {
        let save = self.save();
        let ok = self.scan_key(false).is_ok_and(|k| k.is_some());
        self.restore(save);
        ok
    }

    /// Scans `[props] key :` and returns the key node, or None when the
    /// line is not a mapping entry. Leaves the cursor after the `:`.
    /// Without `build` (look-ahead only) a plain key's text is not copied.
    fn scan_key(&mut self, build: bool) -> PResult<Option<Node>> {
        let (mut anchor, mut tag) = (None, None);
        loop {
            match self.peek() {
                Some('&') if anchor.is_none() => anchor = Some(self.anchor_name()?),
                Some('!') if tag.is_none() => tag = Some(self.tag()?),
                Some('&' | '!') => return Ok(None),
                _ => break,
            }
            if !matches!(self.peek(), Some(' ' | '\t')) {
                return Ok(None);
            }
            self.skip_spaces();
        }
        let line = self.line;
        let mut key = match self.peek() {
            Some('"' | '\'') => {
                let style = if self.peek() == Some('"') {
                    Style::DoubleQuoted
                } else {
                    Style::SingleQuoted
                };
                let mut n = Node::string(self.quoted()?);
                n.style = style;
                n
            }
            Some('*') => Node::alias(self.anchor_name()?),
            None | Some('\n' | '#' | '[' | '{' | '|' | '>' | '%' | '@' | '`' | ']' | '}' | ',') => {
                return Ok(None);
            }
            Some('-' | '?' | ':') if self.blankz_at(1) => {
                if self.peek() == Some(':') {
                    Node::plain("")
                } else {
                    return Ok(None);
                }
            }
            _ => {
                let start = self.pos;
                loop {
                    match self.peek() {
                        None | Some('\n') => return Ok(None),
                        Some(':') if self.blankz_at(1) => break,
                        Some(' ' | '\t') if self.peek_at(1) == Some('#') => return Ok(None),
                        Some(_) => {
                            self.bump();
                        }
                    }
                }
                if build {
                    Node::plain(self.s[start..self.pos].trim_end())
                } else {
                    Node::plain("")
                }
            }
        };
        if self.line != line {
            return Ok(None);
        }
        self.skip_spaces();
        if !(self.peek() == Some(':') && self.blankz_at(1)) {
            return Ok(None);
        }
        self.bump();
        key.anchor = anchor;
        if tag.is_some() {
            key.tag = tag;
            if key.style == Style::Any {
                key.style = Style::Plain;
            }
        }
        Ok(Some(key))
    }

    fn block_mapping(&mut self, depth: usize) -> PResult<Parsed> {
        let indent = self.col;
        let start_line = self.line;
        let mut entries: Vec<(Node, Node)> = Vec::new();
        let mut keys = KeyIndex::default();
        let mut last_chain: Vec<(usize, bool)> = Vec::new();
        let mut first = true;
        loop {
            let head = if first {
                self.first_head_slot()
            } else if self.pending.is_empty() && self.pending_foot.is_empty() {
                String::new()
            } else {
                let mut m = Node::mapping();
                m.kind = NodeKind::Mapping(std::mem::take(&mut entries));
                last_chain.push((indent, true));
                let (h, foot) = self.take_gap(&mut m, &last_chain, Next::Token(self.col));
                last_chain.pop();
                if let NodeKind::Mapping(e) = &mut m.kind {
                    entries = std::mem::take(e);
                }
                // This key's event takes the feet left; go-yaml then moves them to
                // the previous key.
                key_takes_foot(&mut entries, foot);
                h
            };
            let (kl, kc) = (self.line, self.col);
            // go-yaml's parser takes no implicit empty key: a `:` value indicator where
            // a key is due is refused "while parsing a block mapping".
            if self.peek() == Some(':') && self.blankz_at(1) {
                return self.parser_err("did not find expected key", start_line);
            }
            // `? key` (go-yaml writes a key this way when it is no scalar or longer
            // than 128 characters), with an optional `: value` at the mapping's column.
            let explicit = self.peek() == Some('?') && self.blankz_at(1);
            let mut key = if explicit {
                self.bump();
                let mut key = self.after_indicator(indent, depth)?.node;
                set_first_head(&mut key, head);
                key
            } else {
                let key_start = self.save();
                let Some(mut key) = self.scan_key(true)? else {
                    // A quoted key with more on its line before a `:` (`'k' x: v`):
                    // go-yaml took the quoted scalar as the key and its parser wants the
                    // next one.
                    let at = self.save();
                    self.restore(key_start);
                    match self.after_quoted_scalar() {
                        Some(Err(msg)) => return self.err(msg),
                        Some(Ok(true)) => {
                            return self.parser_err("did not find expected key", start_line);
                        }
                        _ => {}
                    }
                    self.restore(at);
                    // libyaml's wording for a plain scalar where a key was expected.
                    return Err(self.error_at("could not find expected ':'".to_string(), kl, kc));
                };
                key.head_comment = head;
                if first {
                    // The first key's event takes waiting feet, and keeps them.
                    key.foot_comment = std::mem::take(&mut self.pending_foot);
                }
                // Each key's event takes a waiting line comment (of properties alone on
                // an earlier line).
                key.line_comment = std::mem::take(&mut self.pending_line);
                key
            };
            if let Some(msg) = keys.duplicate(&entries, &key) {
                return Err(self.error_at(msg, kl, kc));
            }
            keys.push(&entries, &key, kl + self.line_offset + 1);
            first = false;
            self.skip_spaces();
            let value = if explicit {
                self.explicit_value(indent, depth)?
            } else if matches!(self.peek(), None | Some('\n' | '#')) {
                let lc = self.line_comment()?;
                join(&mut key.line_comment, &lc);
                self.skip_to_content()?;
                let compact = self.col == indent && self.peek() == Some('-') && self.blankz_at(1);
                self.set_prior(Prior::Value);
                if !self.eof() && (self.col > indent || compact) {
                    let h = self.take_opening_gap(indent, None);
                    let mut p = self
                        .block_node(indent as i64, false, depth + 1)
                        .map_err(|e| {
                            self.junk_in_collection(e, Collection::Mapping, start_line, true)
                        })?;
                    set_first_head(&mut p.node, h);
                    // A scalar value on its own line (`key:\n  value`) leaves the
                    // cursor at its line's end; collections end at the next content.
                    self.skip_to_content()?;
                    p
                } else {
                    Parsed::leaf(Node::plain(""))
                }
            } else {
                self.map_value = true;
                let p = self
                    .block_node(indent as i64, true, depth + 1)
                    .map_err(|e| {
                        self.junk_in_collection(e, Collection::Mapping, start_line, false)
                    })?;
                self.skip_to_content()?;
                p
            };
            last_chain = value.chain;
            entries.push((key, value.node));
            if self.eof() || self.col < indent {
                break;
            }
            // A `- ` entry at the mapping's own column is a block entry where libyaml's
            // parser wants a key, as is anything indented deeper.
            if self.col > indent || (self.peek() == Some('-') && self.blankz_at(1)) {
                // libyaml: "while parsing a block mapping" (a parser error).
                return self.parser_err("did not find expected key", start_line);
            }
        }
        // The MAPPING-END event takes a line comment still waiting (of properties with
        // no content at the mapping's end): the mapping's own, which go-yaml writes
        // when the mapping ends.
        let mut n = Node::mapping();
        n.line_comment = std::mem::take(&mut self.pending_line);
        n.kind = NodeKind::Mapping(entries);
        let mut chain = last_chain;
        chain.push((indent, true));
        Ok(Parsed { node: n, chain })
    }

    /// The `: value` of an explicit key, at the mapping's column `indent`, or an empty
    /// value when the entry has none.
    fn explicit_value(&mut self, indent: usize, depth: usize) -> PResult<Parsed> {
        if self.eof() || self.col != indent || self.peek() != Some(':') || !self.blankz_at(1) {
            return Ok(Parsed::leaf(Node::plain("")));
        }
        self.bump();
        self.after_indicator(indent, depth)
    }

    /// The node after a `?` or an explicit `:` at column `indent` (the cursor just past
    /// the indicator): on its line, on the lines below it, or empty.
    fn after_indicator(&mut self, indent: usize, depth: usize) -> PResult<Parsed> {
        self.skip_spaces_after_indicator()?;
        if !matches!(self.peek(), None | Some('\n' | '#')) {
            let p = self.block_node(indent as i64, true, depth + 1)?;
            self.skip_to_content()?;
            return Ok(p);
        }
        let lc_col = self.col;
        let lc = self.line_comment()?;
        self.skip_to_content()?;
        self.set_prior(Prior::Entry);
        if !self.eof() && self.col > indent {
            let indicator_comment = (!lc.is_empty()).then_some((lc_col, lc));
            let h = self.take_opening_gap(indent, indicator_comment);
            let mut p = self.block_node(indent as i64, false, depth + 1)?;
            set_first_head(&mut p.node, h);
            self.skip_to_content()?;
            return Ok(p);
        }
        let mut p = Parsed::leaf(Node::plain(""));
        p.node.line_comment = lc;
        Ok(p)
    }

    /// `parent` is the indentation of the enclosing node: a sequence at that same
    /// column is libyaml's indentless sequence (a mapping value), which simply ends at
    /// the next non-entry; any other sequence wants another `- ` at its column.
    fn block_sequence(&mut self, depth: usize, parent: i64) -> PResult<Parsed> {
        let indent = self.col;
        let indentless = indent as i64 == parent;
        let seq_kind = if indentless {
            Collection::IndentlessSequence
        } else {
            Collection::Sequence
        };
        let start_line = self.line;
        let mut items: Vec<Node> = Vec::new();
        let mut last_chain: Vec<(usize, bool)> = Vec::new();
        let mut first = true;
        loop {
            let head = if first {
                self.first_head_slot()
            } else if self.pending.is_empty() && self.pending_foot.is_empty() {
                String::new()
            } else {
                let mut s = Node::sequence();
                s.kind = NodeKind::Sequence(std::mem::take(&mut items));
                last_chain.push((indent, false));
                let (h, foot) = self.take_gap(&mut s, &last_chain, Next::Token(self.col));
                last_chain.pop();
                if let NodeKind::Sequence(i) = &mut s.kind {
                    items = std::mem::take(i);
                }
                // A BLOCK-ENTRY has no event: the feet wait for the item's first one.
                self.pending_foot = foot;
                h
            };
            first = false;
            self.bump(); // '-'
            self.skip_spaces_after_indicator()?;
            // go-yaml splits the head before a `-` off as the item's own ("stem") only
            // when a block collection starts right after it; after properties the head
            // waits for the item's first event instead.
            let mut props_first = false;
            let mut item = if matches!(self.peek(), None | Some('\n' | '#')) {
                let lc_col = self.col;
                let lc = self.line_comment()?;
                self.skip_to_content()?;
                self.set_prior(Prior::Entry);
                if !self.eof() && self.col > indent {
                    // `- # comment` with the item on the next lines: yaml.v3 makes the
                    // comment part of the item's head (what kpt emits for documents
                    // with a header comment inside a ResourceList).
                    let dash_comment = (!lc.is_empty()).then_some((lc_col, lc));
                    let h = self.take_opening_gap(indent, dash_comment);
                    props_first = matches!(self.peek(), Some('&' | '!'));
                    let mut p = self
                        .block_node(indent as i64, false, depth + 1)
                        .map_err(|e| self.junk_in_collection(e, seq_kind, start_line, true))?;
                    set_first_head(&mut p.node, h);
                    self.skip_to_content()?;
                    p
                } else {
                    // An empty entry: go-yaml scans the comment after its `-` as the
                    // first line of the gap that follows.
                    if !lc.is_empty() {
                        let comment = super::cursor::GapLine::IndicatorComment {
                            col: lc_col,
                            text: lc,
                        };
                        self.pending.insert(0, comment);
                    }
                    Parsed::leaf(Node::plain(""))
                }
            } else {
                props_first = matches!(self.peek(), Some('&' | '!'));
                let p = self
                    .block_node(indent as i64, true, depth + 1)
                    .map_err(|e| self.junk_in_collection(e, seq_kind, start_line, true))?;
                self.skip_to_content()?;
                p
            };
            if props_first {
                set_first_head(&mut item.node, head);
            } else if !head.is_empty() {
                let mut h = head;
                join(&mut h, &item.node.head_comment);
                item.node.head_comment = h;
            }
            last_chain = item.chain;
            items.push(item.node);
            if self.eof() || self.col < indent {
                break;
            }
            if self.col == indent && self.peek() == Some('-') && self.blankz_at(1) {
                continue;
            }
            if self.col > indent || !indentless {
                // libyaml: "while parsing a block collection" (a parser error).
                return self.parser_err("did not find expected '-' indicator", start_line);
            }
            break;
        }
        let mut n = Node::sequence();
        n.kind = NodeKind::Sequence(items);
        let mut chain = last_chain;
        chain.push((indent, false));
        Ok(Parsed { node: n, chain })
    }

    /// The head comment reserved for the first entry of a collection: the
    /// pending gap (no foot split at a collection's start).
    fn first_head_slot(&mut self) -> String {
        let gap = std::mem::take(&mut self.pending);
        gap::head_only(&gap)
    }
}

/// Puts a head comment before the first token of `n` (its first key for
/// block mappings, else the node itself).
pub fn set_first_head(n: &mut Node, head: String) {
    if head.is_empty() {
        return;
    }
    let style = n.style;
    match &mut n.kind {
        NodeKind::Mapping(e) if style != Style::Flow && !e.is_empty() => {
            let k = &mut e[0].0;
            let mut h = head;
            join(&mut h, &k.head_comment);
            k.head_comment = h;
        }
        // A comment before the first `- ` belongs to the first item (kyaml keeps it
        // with that item, e.g. a document header inside a ResourceList).
        NodeKind::Sequence(items) if style != Style::Flow && !items.is_empty() => {
            let first = &mut items[0];
            let props = first.anchor.is_some() || first.tag.is_some();
            let block = matches!(first.kind, NodeKind::Mapping(_) | NodeKind::Sequence(_))
                && first.style != Style::Flow;
            if props && block {
                // Properties after the `-` keep go-yaml from splitting the head off
                // as the item's own: it goes on to the item's first event.
                set_first_head(first, head);
                return;
            }
            let mut h = head;
            join(&mut h, &first.head_comment);
            first.head_comment = h;
        }
        _ => {
            let mut h = head;
            join(&mut h, &n.head_comment);
            n.head_comment = h;
        }
    }
}

fn with_props(mut p: Parsed, anchor: Option<String>, tag: Option<String>) -> Parsed {
    if anchor.is_some() {
        p.node.anchor = anchor;
    }
    if tag.is_some() {
        p.node.tag = tag;
        if p.node.style == Style::Any {
            p.node.style = Style::Plain;
        }
    }
    p
}

/// The scalar keys of a block mapping being parsed, for refusing duplicates: compared
/// against the keys so far, through an index past a few keys (a scan per key made a
/// mapping of many keys quadratic). `lines[i]` is the 1-based line of entry `i`.
#[derive(Default)]
struct KeyIndex {
    lines: Vec<usize>,
    index: std::collections::HashMap<String, usize>,
}

impl KeyIndex {
    /// go-yaml's text when `key` repeats a key of `entries`.
    fn duplicate(&mut self, entries: &[(Node, Node)], key: &Node) -> Option<String> {
        let k = key.as_str()?;
        if entries.len() == INDEX_KEYS_FROM && self.index.is_empty() {
            for (i, (e, _)) in entries.iter().enumerate() {
                if let Some(e) = e.as_str() {
                    self.index.entry(e.to_string()).or_insert(i);
                }
            }
        }
        let i = if entries.len() >= INDEX_KEYS_FROM {
            self.index.get(k).copied()
        } else {
            entries.iter().position(|(e, _)| e.as_str() == Some(k))
        }?;
        let line = self.lines.get(i)?;
        Some(format!(
            "mapping key \"{k}\" already defined at line {line}"
        ))
    }

    /// Records `key` as the next entry of `entries`, on `line`.
    fn push(&mut self, entries: &[(Node, Node)], key: &Node, line: usize) {
        self.lines.push(line);
        if entries.len() >= INDEX_KEYS_FROM
            && let Some(k) = key.as_str()
        {
            self.index.entry(k.to_string()).or_insert(entries.len());
        }
    }
}
