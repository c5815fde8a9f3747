//! Attributing full-line comments to nodes. The gap before each token goes through
//! go-yaml's scanner and parser rules ([`super::gap`]); the feet it yields are put on
//! the nodes whose events take them (the prior token's node, a closing mapping, the
//! next key's predecessor), and [`normalize_feet`] then moves feet as go-yaml's
//! `parser.mapping()` does.

use super::super::node::{Node, NodeKind, Style};
use super::cursor::{Cursor, GapLine};
use super::gap::{self, BEFORE, Pos, Prior};
use crate::yaml::limits::guard;

/// The collections on a node's chain of last entries (its last entry, the last entry
/// inside that, ...), innermost first: `(indentation, is a mapping)`.
pub type Chain = [(usize, bool)];

/// What follows a gap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// A token at this column.
    Token(usize),
    /// The end of the document: the stream's end, or a `...` marker (a token at
    /// column 0 before go-yaml's final unroll).
    End { marker: bool },
}

impl Cursor {
    /// Takes the gap before the first token of a collection that opens after a `key:`
    /// or `-` line (`open` is the indentation of the block holding that key or entry;
    /// `dash_comment` the column and text of a comment after a lone `-`, which go-yaml
    /// scans as the gap's first line): returns the token's head; feet wait for the
    /// next event that takes comments.
    pub fn take_opening_gap(
        &mut self,
        open: usize,
        dash_comment: Option<(usize, String)>,
    ) -> String {
        if self.pending.is_empty() && dash_comment.is_none() {
            return String::new();
        }
        let mut gap = std::mem::take(&mut self.pending);
        if let Some((col, text)) = dash_comment {
            gap.insert(0, GapLine::IndicatorComment { col, text });
        }
        let foot_line = self.foot_line(&gap);
        let comments = gap::scan(&gap, self.prior, open, Some(self.col), foot_line);
        let placed = gap::place(comments, false, &[], std::mem::take(&mut self.pending_foot));
        self.pending_foot = placed.pending;
        placed.head
    }

    /// go-yaml's foot line for `gap` (see [`gap::scan`]): none when its scan started on
    /// the stream's first line, as it does after any token there but a plain scalar
    /// (whose scan runs on past the line's end) without a line comment.
    fn foot_line(&self, gap: &[GapLine]) -> Option<usize> {
        // The gap's lines end at the current one, or just before it.
        let next = self.line + usize::from(self.eof() && self.col != 0);
        // A gap opened by the comment on an indicator's line starts on that line, and
        // go-yaml's foot line is two lines on.
        let dash = usize::from(matches!(
            gap.first(),
            Some(GapLine::IndicatorComment { .. })
        ));
        (self.prior_past_line || next > gap.len().saturating_sub(dash) + 1).then_some(2 * dash)
    }

    /// Takes the gap after the entries of `coll` (whose chain is `chain`, `coll` last):
    /// the prior token's node and the closing block mappings get their feet, and the
    /// head of the next token is returned with the feet still waiting for an event.
    pub fn take_gap(&mut self, coll: &mut Node, chain: &Chain, next: Next) -> (String, String) {
        let gap = std::mem::take(&mut self.pending);
        let foot_line = self.foot_line(&gap);
        let comments = gap.iter().any(|l| !matches!(l, GapLine::Blank));
        if !comments && self.pending_foot.is_empty() {
            // Blank lines only: nothing to place (most gaps).
            return (String::new(), String::new());
        }
        let open = chain.first().map_or(0, |l| l.0);
        let (col, scan_next) = match next {
            Next::Token(c) => (c, Some(c)),
            Next::End { marker } => (0, marker.then_some(0)),
        };
        let comments = gap::scan(&gap, self.prior, open, scan_next, foot_line);
        // go-yaml's levels: an indentless sequence (at its mapping's column) opens none.
        // Those deeper than the next token close, innermost first, each BLOCK-END at or
        // after the previous one; at the end, the level at column 0 closes last with its
        // own search from the end.
        //
        // A stream that ends without a line break ends with go-yaml's column still on
        // the last line: its first unroll stops at that column, and the levels at or
        // below it close only at the stream's end, after the comments (which then go
        // one level deeper than with a final line break).
        let unroll_col = match next {
            Next::End { marker: false } if self.eof() => self.col,
            _ => col,
        };
        let mut closing: Vec<(Pos, bool)> = Vec::new();
        let mut depths: Vec<usize> = Vec::new();
        let mut mark = BEFORE;
        let mut end_mark = gap::end_of(gap.len());
        for (j, &(ind, mapping)) in chain.iter().enumerate() {
            if chain.get(j + 1).is_some_and(|o| o.0 == ind) {
                continue;
            }
            let at = if ind > unroll_col {
                mark = gap::block_end(&comments, ind, mark);
                mark
            } else if matches!(next, Next::End { .. }) && (ind == 0 || unroll_col > 0) {
                end_mark = gap::block_end(&comments, ind, end_mark);
                end_mark
            } else {
                continue;
            };
            closing.push((at, mapping));
            depths.push(chain.len() - 1 - j);
        }
        let takes = self.prior == Prior::Content;
        let pending = std::mem::take(&mut self.pending_foot);
        let placed = gap::place(comments, takes, &closing, pending);
        let ends = placed.ends.into_iter().map(|(i, t)| (depths[i], t));
        apply(coll, chain.len(), ends.collect(), placed.prior);
        (placed.head, placed.pending)
    }
}

/// Puts feet on `coll`'s chain: `ends` (by depth, deepest first) on the closing
/// mappings themselves (their foot goes to their last key later, as go-yaml moves a
/// mapping's), `prior` on the node at depth `chain_len` (the last token's).
fn apply(coll: &mut Node, chain_len: usize, mut ends: Vec<(usize, String)>, prior: String) {
    let mut n = coll;
    // A loop, not recursion: the chain is as long as the document is deep.
    for d in 0..=chain_len {
        if ends.last().is_some_and(|e| e.0 == d)
            && let Some((_, t)) = ends.pop()
        {
            join(&mut n.foot_comment, &t);
        }
        if d == chain_len {
            join(&mut n.foot_comment, &prior);
        }
        if (ends.is_empty() && prior.is_empty()) || last_child(n).is_none() {
            break;
        }
        n = last_child(n).expect("checked above");
    }
}

/// go-yaml `parser.mapping()` when a later key's event took feet: they become the
/// previous key's foot, replacing what it had (after its value's foot moved to it).
pub fn key_takes_foot(entries: &mut [(Node, Node)], foot: String) {
    if foot.is_empty() {
        return;
    }
    if let Some((k, v)) = entries.last_mut() {
        let block = matches!(v.kind, NodeKind::Mapping(_) | NodeKind::Sequence(_))
            && v.style != Style::Flow;
        if k.foot_comment.is_empty() && !block {
            k.foot_comment = std::mem::take(&mut v.foot_comment);
        }
        k.foot_comment = foot;
    }
}

/// Joins comment texts with a line break (a text ending in a line break
/// thereby keeps its blank line, as yaml.v3 does).
pub fn join(a: &mut String, b: &str) {
    if b.is_empty() {
        return;
    }
    if !a.is_empty() {
        a.push('\n');
    }
    a.push_str(b);
}

fn trim_comments(n: &mut Node) {
    for c in [
        &mut n.head_comment,
        &mut n.line_comment,
        &mut n.foot_comment,
    ] {
        let t = c.trim_end_matches('\n').len();
        c.truncate(t);
    }
}

fn last_child(n: &mut Node) -> Option<&mut Node> {
    match &mut n.kind {
        NodeKind::Mapping(e) => e.last_mut().map(|(_, v)| v),
        NodeKind::Sequence(items) => items.last_mut(),
        _ => None,
    }
}

/// yaml.v3 `parser.mapping()`: a value's foot comment moves to its key when the key
/// has none, and a block mapping's own foot to its last key.
pub fn normalize_feet(n: &mut Node) {
    normalize_inner(n);
    trim_all(n);
}

fn trim_all(n: &mut Node) {
    trim_comments(n);
    match &mut n.kind {
        NodeKind::Mapping(e) => guard(|| {
            e.iter_mut().for_each(|(k, v)| {
                trim_all(k);
                trim_all(v);
            })
        }),
        NodeKind::Sequence(items) => guard(|| items.iter_mut().for_each(trim_all)),
        _ => {}
    }
}

fn normalize_inner(n: &mut Node) {
    guard(|| normalize_at(n));
}

fn normalize_at(n: &mut Node) {
    let flow = n.style == Style::Flow;
    match &mut n.kind {
        NodeKind::Mapping(entries) => {
            for (k, v) in entries.iter_mut() {
                normalize_inner(k);
                normalize_inner(v);
                if k.foot_comment.is_empty() && !v.foot_comment.is_empty() {
                    k.foot_comment = std::mem::take(&mut v.foot_comment);
                }
            }
            if !flow
                && !n.foot_comment.is_empty()
                && let Some((k, _)) = entries.last_mut()
            {
                // Replacing what the key had, as go-yaml does.
                k.foot_comment = std::mem::take(&mut n.foot_comment);
            }
        }
        NodeKind::Sequence(items) => items.iter_mut().for_each(normalize_inner),
        _ => {}
    }
}

/// go-yaml's empty scalars (`-` or `key:` with nothing, properties with no content)
/// are events that take no comments: the head comment read before one waits in the
/// parser for the next event that takes comments. That is the next node in document
/// order; a block mapping's end takes it and drops it (`parser.mapping()` reads only
/// that event's line and foot), a sequence's end passes it on. Returns the head still
/// waiting at the document's end, which go-yaml's DOCUMENT-END event takes.
pub fn pass_on_empty_heads(root: &mut Node) -> String {
    let mut carry = String::new();
    pass_on(root, &mut carry);
    carry
}

fn is_empty_event(n: &Node) -> bool {
    n.style == Style::Plain && n.as_str() == Some("")
}

fn pass_on(n: &mut Node, carry: &mut String) {
    if is_empty_event(n) {
        join(carry, &std::mem::take(&mut n.head_comment));
        return;
    }
    if !carry.is_empty() {
        let mut h = std::mem::take(carry);
        join(&mut h, &n.head_comment);
        n.head_comment = h;
    }
    let block = n.style != Style::Flow;
    match &mut n.kind {
        NodeKind::Mapping(entries) => {
            guard(|| {
                entries.iter_mut().for_each(|(k, v)| {
                    pass_on(k, carry);
                    pass_on(v, carry);
                })
            });
            if block {
                carry.clear();
            }
        }
        NodeKind::Sequence(items) => guard(|| items.iter_mut().for_each(|i| pass_on(i, carry))),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn foot<'a>(doc: &'a Node, path: &[&str]) -> &'a str {
        let mut n = doc;
        let mut key = None;
        for p in path {
            if let NodeKind::Mapping(e) = &n.kind
                && let Some((k, v)) = e.iter().find(|(k, _)| k.as_str() == Some(p))
            {
                key = Some(k);
                n = v;
            }
        }
        key.map_or("", |k| k.foot_comment.as_str())
    }

    /// A closing block's end moves before the first comment at its indentation, and
    /// its mapping's end takes what comes before as its last key's foot.
    #[test]
    fn closing_blocks_take_the_feet_before_their_end() {
        let text = "a: 1\nb:\n  c:\n    d: 1\n    # deep\n  # mid\ne: 1\n";
        let doc = crate::yaml::parse_one(text).expect("parses");
        assert_eq!(foot(&doc, &["b", "c", "d"]), "# deep");
        assert_eq!(foot(&doc, &["b", "c"]), "# mid");
        assert_eq!(foot(&doc, &["b"]), "");
    }

    /// Feet a later key's event takes replace the previous key's, whose value's foot
    /// moved to it first: go-yaml drops that one.
    #[test]
    fn a_later_key_replaces_the_previous_keys_foot() {
        let mut entries = vec![(Node::plain("a"), Node::plain("1"))];
        entries[0].1.foot_comment = "# of 1".into();
        key_takes_foot(&mut entries, "# next".into());
        assert_eq!(entries[0].0.foot_comment, "# next");
        assert_eq!(entries[0].1.foot_comment, "");
    }

    /// A comment closing a sequence item's mapping stays with that item (what kept one
    /// file's trailing comment from moving into the next file's resource when a
    /// ResourceList came back from a function).
    #[test]
    fn a_comment_closing_an_item_stays_with_it() {
        let text = "items:\n- a: 1\n  b:\n    c: 2\n  # closes a\n- d: 3\n";
        let doc = crate::yaml::parse_one(text).expect("parses");
        let items = doc.get("items").map(Node::items).expect("items");
        assert!(items[1].head_comment.is_empty(), "{:?}", items[1]);
        let shown = crate::yaml::emit_node(&doc, crate::yaml::SeqIndent::default());
        assert!(
            shown.find("# closes a").expect("kept") < shown.find("d: 3").expect("d"),
            "{shown}"
        );
    }
}
