//! Comment and key-order restoration around a function call (kyaml's CopyComments +
//! SyncOrder): functions may change comments but cannot silently drop them, and
//! mapping keys keep the input's order with new keys after the known ones.
//!
//! Render heals every item after every function, so the input side is kept as a
//! [`Snapshot`]: a flat copy of just what healing reads (keys, scalar text, comments,
//! shape) in two allocations per item, instead of a deep clone of the tree.

use std::ops::Range;

use crate::yaml::{Node, NodeKind, Style};

/// Restore comments from `src` into `dst` where `dst` has none, and re-order `dst`'s
/// mapping keys to follow `src`, recursively.
pub fn heal(src: &Node, dst: &mut Node) {
    Snapshot::of(src).heal(dst);
}

/// What healing needs of a node tree, taken before the tree is handed to a function.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    nodes: Vec<SNode>,
    /// Comment triples (head, line, foot), referenced from nodes that have any.
    comments: Vec<[Range<usize>; 3]>,
    /// Every key, scalar value and comment, back to back.
    text: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Scalar,
    Mapping,
    Sequence,
    Alias,
}

#[derive(Debug, Clone)]
struct SNode {
    shape: Shape,
    /// For a mapping value: its key's text (`None` when the key is not a scalar).
    key: Option<Range<usize>>,
    /// [`key_hash`] of the key's text: lookups compare this before the text.
    key_hash: u64,
    /// Whether this node or anything below it has a comment (when not, there
    /// is nothing to copy from it).
    commented: bool,
    /// For a mapping: two children have keys with the same hash (possibly the
    /// same key), so a lookup must scan for the first match.
    maybe_dup_keys: bool,
    /// For a mapping value: its key's comments.
    key_comments: Option<usize>,
    comments: Option<usize>,
    /// Scalar text.
    value: Range<usize>,
    /// Children (mapping values or sequence items), contiguous in `nodes`.
    children: Range<usize>,
}

const NONE: Range<usize> = 0..0;

/// A quick hash of a key (eight bytes at a time), so that looking a key up among its siblings rarely
/// compares text (many keys share long prefixes such as annotation names).
fn key_hash(key: &str) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let bytes = key.as_bytes();
    let mut h = (bytes.len() as u64).wrapping_mul(K);
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        let mut b = [0u8; 8];
        b.copy_from_slice(w);
        h = (h ^ u64::from_le_bytes(b)).wrapping_mul(K).rotate_left(29);
    }
    let rest = words.remainder();
    let mut b = [0u8; 8];
    b[..rest.len()].copy_from_slice(rest);
    h = (h ^ u64::from_le_bytes(b)).wrapping_mul(K);
    h ^ (h >> 32)
}

impl Snapshot {
    /// Take the snapshot of `root`.
    pub fn of(root: &Node) -> Snapshot {
        let mut s = Snapshot {
            nodes: Vec::with_capacity(64),
            comments: Vec::new(),
            text: String::with_capacity(1024),
        };
        let top = s.shallow(root, None);
        s.nodes.push(top);
        s.fill(root, 0);
        s
    }

    fn push_text(&mut self, t: &str) -> Range<usize> {
        let start = self.text.len();
        self.text.push_str(t);
        start..self.text.len()
    }

    fn push_comments(&mut self, n: &Node) -> Option<usize> {
        if n.head_comment.is_empty() && n.line_comment.is_empty() && n.foot_comment.is_empty() {
            return None;
        }
        let c = [
            self.push_text(&n.head_comment),
            self.push_text(&n.line_comment),
            self.push_text(&n.foot_comment),
        ];
        self.comments.push(c);
        Some(self.comments.len() - 1)
    }

    /// The node itself, without its children.
    fn shallow(&mut self, n: &Node, key: Option<&Node>) -> SNode {
        let (shape, value) = match &n.kind {
            NodeKind::Scalar(v) => (Shape::Scalar, self.push_text(v)),
            NodeKind::Mapping(_) => (Shape::Mapping, NONE),
            NodeKind::Sequence(_) => (Shape::Sequence, NONE),
            NodeKind::Alias(_) => (Shape::Alias, NONE),
        };
        let (key_text, key_hash, key_comments) = match key {
            Some(k) => (
                k.as_str().map(|t| self.push_text(t)),
                k.as_str().map_or(0, key_hash),
                self.push_comments(k),
            ),
            None => (None, 0, None),
        };
        let comments = self.push_comments(n);
        SNode {
            shape,
            key: key_text,
            key_hash,
            commented: comments.is_some() || key_comments.is_some(),
            maybe_dup_keys: false,
            key_comments,
            comments,
            value,
            children: NONE,
        }
    }

    /// Append `n`'s children (snapshot node `at`), breadth first so each node's
    /// children are contiguous.
    fn fill(&mut self, n: &Node, at: usize) {
        let start = self.nodes.len();
        match &n.kind {
            NodeKind::Mapping(entries) => {
                for (k, v) in entries {
                    let c = self.shallow(v, Some(k));
                    self.nodes.push(c);
                }
                self.nodes[at].children = start..self.nodes.len();
                let hashes = &self.nodes[start..];
                self.nodes[at].maybe_dup_keys = hashes
                    .iter()
                    .enumerate()
                    .any(|(i, a)| hashes[..i].iter().any(|b| b.key_hash == a.key_hash));
                for (i, (_, v)) in entries.iter().enumerate() {
                    self.fill(v, start + i);
                }
                self.mark_commented(at);
            }
            NodeKind::Sequence(items) => {
                for v in items {
                    let c = self.shallow(v, None);
                    self.nodes.push(c);
                }
                self.nodes[at].children = start..self.nodes.len();
                for (i, v) in items.iter().enumerate() {
                    self.fill(v, start + i);
                }
                self.mark_commented(at);
            }
            _ => {}
        }
    }

    /// After `at`'s children are filled: `at` is commented when any child is.
    fn mark_commented(&mut self, at: usize) {
        let below = self.nodes[self.nodes[at].children.clone()]
            .iter()
            .any(|c| c.commented);
        self.nodes[at].commented |= below;
    }

    fn str(&self, r: &Range<usize>) -> &str {
        &self.text[r.clone()]
    }

    /// The first child of mapping node `at` whose key is `key`.
    fn child(&self, at: usize, key: &str) -> Option<usize> {
        let h = key_hash(key);
        self.nodes[at].children.clone().find(|&c| {
            let n = &self.nodes[c];
            n.key_hash == h && n.key.as_ref().is_some_and(|k| self.str(k) == key)
        })
    }

    /// [`Self::child`], trying the child at position `hint` first: functions
    /// mostly keep keys where they were. Without duplicate keys the first
    /// match is the only one, so a hit there is the answer.
    fn child_hint(&self, at: usize, key: &str, hint: usize) -> Option<usize> {
        let n = &self.nodes[at];
        if !n.maybe_dup_keys && hint < n.children.len() {
            let c = n.children.start + hint;
            if self.nodes[c]
                .key
                .as_ref()
                .is_some_and(|k| self.str(k) == key)
            {
                return Some(c);
            }
        }
        self.child(at, key)
    }

    /// The node at a path of mapping keys from the root.
    fn find(&self, path: &[&str]) -> Option<usize> {
        let mut at = 0;
        for k in path {
            if self.nodes[at].shape != Shape::Mapping {
                return None;
            }
            at = self.child(at, k)?;
        }
        Some(at)
    }

    /// The root's `metadata.annotations`, looked up once for several keys.
    pub fn annotations(&self) -> Annotations<'_> {
        Annotations {
            snap: self,
            at: self
                .find(&["metadata", "annotations"])
                .filter(|&at| self.nodes[at].shape == Shape::Mapping),
        }
    }

    /// Restore comments and key order into `dst` (see [`heal`]).
    pub fn heal(&self, dst: &mut Node) {
        self.copy_comments(0, dst);
        self.sync_order(0, dst);
    }

    fn copy_own_comments(&self, comments: Option<usize>, dst: &mut Node) {
        let Some(c) = comments else { return };
        let [head, line, foot] = &self.comments[c];
        let mut got_comment = false;
        for (d, s) in [
            (&mut dst.head_comment, head),
            (&mut dst.line_comment, line),
            (&mut dst.foot_comment, foot),
        ] {
            if d.is_empty() && !s.is_empty() {
                d.push_str(self.str(s));
                got_comment = true;
            }
        }
        if got_comment && dst.style == Style::Folded {
            dst.style = Style::DoubleQuoted;
        }
    }

    fn copy_comments(&self, at: usize, dst: &mut Node) {
        let n = &self.nodes[at];
        if !n.commented {
            return;
        }
        self.copy_own_comments(n.comments, dst);
        match (n.shape, &mut dst.kind) {
            (Shape::Mapping, NodeKind::Mapping(d)) => {
                for (i, (dk, dv)) in d.iter_mut().enumerate() {
                    let Some(key) = dk.as_str() else { continue };
                    if let Some(c) = self.child_hint(at, key, i) {
                        self.copy_own_comments(self.nodes[c].key_comments, dk);
                        self.copy_comments(c, dv);
                    }
                }
            }
            (Shape::Sequence, NodeKind::Sequence(d)) => {
                for (c, dv) in n.children.clone().zip(d.iter_mut()) {
                    if self.same_element(c, dv) {
                        self.copy_comments(c, dv);
                    }
                }
            }
            _ => {}
        }
    }

    /// List elements are matched by index only when they are the same element: equal
    /// scalars, or maps with the same `name` (or both without one).
    fn same_element(&self, at: usize, b: &Node) -> bool {
        let a = &self.nodes[at];
        match (a.shape, &b.kind) {
            (Shape::Scalar, NodeKind::Scalar(y)) => self.str(&a.value) == y,
            (Shape::Mapping, NodeKind::Mapping(_)) => {
                let name = self.child(at, "name").and_then(|c| {
                    let c = &self.nodes[c];
                    (c.shape == Shape::Scalar).then(|| self.str(&c.value))
                });
                name == b.get("name").and_then(Node::as_str)
            }
            (Shape::Sequence, NodeKind::Sequence(_)) => true,
            _ => false,
        }
    }

    fn sync_order(&self, at: usize, dst: &mut Node) {
        let n = &self.nodes[at];
        match (n.shape, &mut dst.kind) {
            (Shape::Mapping, NodeKind::Mapping(d)) => {
                let pos = |k: &Node, hint: usize| {
                    k.as_str()
                        .and_then(|k| self.child_hint(at, k, hint))
                        .map_or(usize::MAX, |c| c - n.children.start)
                };
                // One pass: order each value's own keys (which does not depend on
                // where the value sits) and check whether this mapping is in order,
                // which it usually is (functions edit in place). Stable sort: known
                // keys in source order, new keys keep their relative order.
                let (mut last, mut sorted) = (0, true);
                for (i, (dk, dv)) in d.iter_mut().enumerate() {
                    let p = pos(dk, i);
                    sorted &= p >= last;
                    last = p;
                    if p != usize::MAX {
                        self.sync_order(n.children.start + p, dv);
                    }
                }
                if !sorted {
                    d.sort_by_cached_key(|(k, _)| pos(k, usize::MAX));
                }
            }
            (Shape::Sequence, NodeKind::Sequence(d)) => {
                for (c, dv) in n.children.clone().zip(d.iter_mut()) {
                    self.sync_order(c, dv);
                }
            }
            _ => {}
        }
    }
}

/// A snapshot's `metadata.annotations` (none when it has no such mapping).
pub struct Annotations<'a> {
    snap: &'a Snapshot,
    at: Option<usize>,
}

impl<'a> Annotations<'a> {
    /// The annotation's value, when it is a scalar.
    pub fn get(&self, key: &str) -> Option<&'a str> {
        let n = &self.snap.nodes[self.snap.child(self.at?, key)?];
        (n.shape == Shape::Scalar).then(|| self.snap.str(&n.value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{SeqIndent, emit_node, parse_one};

    #[test]
    fn restores_dropped_comments_and_order() {
        let src = parse_one("a: 1 # one\n# head\nb:\n  c: x # cx\nd: [1]\n").expect("yaml");
        let mut dst = parse_one("b:\n  c: y\na: 1\ne: new\n").expect("yaml");
        heal(&src, &mut dst);
        let out = emit_node(&dst, SeqIndent::Compact);
        assert_eq!(out, "a: 1 # one\n# head\nb:\n  c: y # cx\ne: new\n");
    }

    #[test]
    fn list_elements_heal_only_when_they_are_the_same_element() {
        let src =
            parse_one("l:\n- name: a # ka\n  v: 1\n- name: b\n  v: 2 # kb\n- x # kx\n- y # ky\n")
                .expect("yaml");
        let mut dst =
            parse_one("l:\n- name: a\n  v: 9\n- name: c\n  v: 2\n- x\n- z\n").expect("yaml");
        heal(&src, &mut dst);
        let out = emit_node(&dst, SeqIndent::Compact);
        assert_eq!(
            out,
            "l:\n- name: a # ka\n  v: 9\n- name: c\n  v: 2\n- x # kx\n- z\n"
        );
    }

    #[test]
    fn snapshot_reads_annotations() {
        let src = parse_one("metadata:\n  annotations:\n    a: 'x'\n    m: {}\n").expect("yaml");
        let s = Snapshot::of(&src);
        assert_eq!(s.annotations().get("a"), Some("x"));
        assert_eq!(s.annotations().get("m"), None);
        assert_eq!(s.annotations().get("zz"), None);
        let no_map = parse_one("metadata:\n  annotations: [a]\n").expect("yaml");
        assert_eq!(Snapshot::of(&no_map).annotations().get("a"), None);
        let scalar_root = parse_one("x\n").expect("yaml");
        assert_eq!(Snapshot::of(&scalar_root).annotations().get("a"), None);
    }
}
