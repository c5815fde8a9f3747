//! Comment and key-order restoration around a function call (kyaml's CopyComments +
//! SyncOrder): functions may change comments but cannot silently drop them, and
//! mapping keys keep the input's order with new keys after the known ones.
//!
//! Render heals every item after every function, so the input side is kept as a
//! snapshot: a flat copy of just what healing reads (keys, scalar text, comments,
//! shape) instead of a deep clone of the tree. The snapshots of all the items of a call
//! share one [`Snapshots`] arena (three buffers, reused from call to call), with 32-bit
//! offsets: allocating a 6 KiB buffer per item and call was a quarter of a render's
//! cost at 10,000 resources, most of it the kernel handing out fresh pages.

use std::ops::Range;

use crate::pkg::merge3::schema::associative_key;
use crate::yaml::limits::{guard, guard_at};
use crate::yaml::{Node, NodeKind, Style};

/// Restore comments from `src` into `dst` where `dst` has none, and re-order `dst`'s
/// mapping keys to follow `src`, recursively.
pub fn heal(src: &Node, dst: &mut Node) {
    let mut snaps = Snapshots::default();
    snaps.push(src);
    snaps.get(0).expect("one snapshot was taken").heal(dst);
}

/// What healing needs of a list of node trees, taken before they are handed to a
/// function.
#[derive(Debug, Clone, Default)]
pub struct Snapshots {
    nodes: Vec<SNode>,
    /// Comment triples (head, line, foot), referenced from nodes that have any.
    comments: Vec<[Span; 3]>,
    /// Every key, scalar value and comment, back to back.
    text: String,
    /// The root node of each tree, in the order taken.
    roots: Vec<u32>,
}

/// A range of [`Snapshots::text`] or of [`Snapshots::nodes`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Span {
    start: u32,
    end: u32,
}

impl Span {
    fn range(self) -> Range<usize> {
        self.start as usize..self.end as usize
    }

    fn len(self) -> usize {
        (self.end - self.start) as usize
    }

    fn is_empty(self) -> bool {
        self.start == self.end
    }
}

/// No comments (an index into [`Snapshots::comments`] otherwise).
const NO_COMMENTS: u32 = u32::MAX;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Scalar,
    Mapping,
    Sequence,
    Alias,
}

#[derive(Debug, Clone)]
struct SNode {
    /// For a mapping value: its key's text (`None` when the key is not a scalar).
    key: Option<Span>,
    /// [`key_hash`] of the key's text: lookups compare this before the text.
    key_hash: u32,
    /// For a mapping value: its key's comments.
    key_comments: u32,
    comments: u32,
    /// Scalar text.
    value: Span,
    /// Children (mapping values or sequence items), contiguous in `nodes`.
    children: Span,
    shape: Shape,
    /// Whether this node or anything below it has a comment (when not, there
    /// is nothing to copy from it).
    commented: bool,
    /// For a mapping: two children have keys with the same hash (possibly the
    /// same key), so a lookup must scan for the first match.
    maybe_dup_keys: bool,
}

/// A quick hash of a key (eight bytes at a time), so that looking a key up among its
/// siblings rarely compares text (many keys share long prefixes such as annotation
/// names).
/// Whether a folded scalar is anywhere in `n`.
fn has_folded(n: &Node, depth: usize) -> bool {
    guard_at(depth, || match &n.kind {
        NodeKind::Scalar(_) => n.style == Style::Folded,
        NodeKind::Mapping(entries) => entries.iter().any(|(_, v)| has_folded(v, depth + 1)),
        NodeKind::Sequence(items) => items.iter().any(|i| has_folded(i, depth + 1)),
        NodeKind::Alias(_) => false,
    })
}

fn key_hash(key: &str) -> u32 {
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
    (h ^ (h >> 32)) as u32
}

/// An offset into the arena. Render holds every resource of a package tree in memory
/// several times over, so 4 GiB of snapshot text is far beyond anything it can reach.
fn offset(n: usize) -> u32 {
    u32::try_from(n).expect("snapshot arena under 4 GiB")
}

impl Snapshots {
    /// Forget every snapshot, keeping the buffers.
    pub fn clear(&mut self) {
        self.nodes.clear();
        self.comments.clear();
        self.text.clear();
        self.roots.clear();
    }

    /// Take the snapshot of the next tree.
    pub fn push(&mut self, root: &Node) {
        let top = self.shallow(root, None);
        let at = self.nodes.len();
        self.roots.push(offset(at));
        self.nodes.push(top);
        self.fill(root, at, 0);
    }

    /// The snapshot of the `i`-th tree taken.
    pub fn get(&self, i: usize) -> Option<Snapshot<'_>> {
        let root = *self.roots.get(i)? as usize;
        Some(Snapshot { arena: self, root })
    }

    fn push_text(&mut self, t: &str) -> Span {
        let start = offset(self.text.len());
        self.text.push_str(t);
        Span {
            start,
            end: offset(self.text.len()),
        }
    }

    fn push_comments(&mut self, n: &Node) -> u32 {
        if n.head_comment.is_empty() && n.line_comment.is_empty() && n.foot_comment.is_empty() {
            return NO_COMMENTS;
        }
        let c = [
            self.push_text(&n.head_comment),
            self.push_text(&n.line_comment),
            self.push_text(&n.foot_comment),
        ];
        self.comments.push(c);
        offset(self.comments.len() - 1)
    }

    /// The node itself, without its children.
    fn shallow(&mut self, n: &Node, key: Option<&Node>) -> SNode {
        let (shape, value) = match &n.kind {
            NodeKind::Scalar(v) => (Shape::Scalar, self.push_text(v)),
            NodeKind::Mapping(_) => (Shape::Mapping, Span::default()),
            NodeKind::Sequence(_) => (Shape::Sequence, Span::default()),
            NodeKind::Alias(_) => (Shape::Alias, Span::default()),
        };
        let (key_text, key_hash, key_comments) = match key {
            Some(k) => (
                k.as_str().map(|t| self.push_text(t)),
                k.as_str().map_or(0, key_hash),
                self.push_comments(k),
            ),
            None => (None, 0, NO_COMMENTS),
        };
        let comments = self.push_comments(n);
        SNode {
            key: key_text,
            key_hash,
            key_comments,
            comments,
            value,
            children: Span::default(),
            shape,
            commented: comments != NO_COMMENTS || key_comments != NO_COMMENTS,
            maybe_dup_keys: false,
        }
    }

    /// Append `n`'s children (snapshot node `at`), breadth first so each node's
    /// children are contiguous.
    /// (The walks recurse once per level: under the stack guard, as deep as
    /// any tree.)
    fn fill(&mut self, n: &Node, at: usize, depth: usize) {
        guard_at(depth, || self.fill_at(n, at, depth));
    }

    fn fill_at(&mut self, n: &Node, at: usize, depth: usize) {
        let start = self.nodes.len();
        match &n.kind {
            NodeKind::Mapping(entries) => {
                for (k, v) in entries {
                    let c = self.shallow(v, Some(k));
                    self.nodes.push(c);
                }
                self.close(at, start);
                let hashes = &self.nodes[start..];
                self.nodes[at].maybe_dup_keys = hashes
                    .iter()
                    .enumerate()
                    .any(|(i, a)| hashes[..i].iter().any(|b| b.key_hash == a.key_hash));
                for (i, (_, v)) in entries.iter().enumerate() {
                    self.fill(v, start + i, depth + 1);
                }
                self.mark_commented(at);
            }
            NodeKind::Sequence(items) => {
                for v in items {
                    let c = self.shallow(v, None);
                    self.nodes.push(c);
                }
                self.close(at, start);
                for (i, v) in items.iter().enumerate() {
                    self.fill(v, start + i, depth + 1);
                }
                self.mark_commented(at);
            }
            _ => {}
        }
    }

    /// `at`'s children are the nodes from `start` to the end.
    fn close(&mut self, at: usize, start: usize) {
        self.nodes[at].children = Span {
            start: offset(start),
            end: offset(self.nodes.len()),
        };
    }

    /// After `at`'s children are filled: `at` is commented when any child is.
    fn mark_commented(&mut self, at: usize) {
        let below = self.nodes[self.nodes[at].children.range()]
            .iter()
            .any(|c| c.commented);
        self.nodes[at].commented |= below;
    }
}

/// The snapshot of one tree.
#[derive(Debug, Clone, Copy)]
pub struct Snapshot<'a> {
    arena: &'a Snapshots,
    root: usize,
}

impl<'a> Snapshot<'a> {
    fn node(&self, at: usize) -> &'a SNode {
        &self.arena.nodes[at]
    }

    fn str(&self, s: Span) -> &'a str {
        &self.arena.text[s.range()]
    }

    /// The first child of mapping node `at` whose key is `key`.
    fn child(&self, at: usize, key: &str) -> Option<usize> {
        let h = key_hash(key);
        self.node(at).children.range().find(|&c| {
            let n = self.node(c);
            n.key_hash == h && n.key.is_some_and(|k| self.str(k) == key)
        })
    }

    /// [`Self::child`], trying the child at position `hint` first: functions
    /// mostly keep keys where they were. Without duplicate keys the first
    /// match is the only one, so a hit there is the answer.
    fn child_hint(&self, at: usize, key: &str, hint: usize) -> Option<usize> {
        let n = self.node(at);
        if !n.maybe_dup_keys && hint < n.children.len() {
            let c = n.children.start as usize + hint;
            if self.node(c).key.is_some_and(|k| self.str(k) == key) {
                return Some(c);
            }
        }
        self.child(at, key)
    }

    /// The node at a path of mapping keys from the root.
    fn find(&self, path: &[&str]) -> Option<usize> {
        let mut at = self.root;
        for k in path {
            if self.node(at).shape != Shape::Mapping {
                return None;
            }
            at = self.child(at, k)?;
        }
        Some(at)
    }

    /// The root's `metadata.annotations`, looked up once for several keys.
    pub fn annotations(&self) -> Annotations<'a> {
        Annotations {
            snap: *self,
            at: self
                .find(&["metadata", "annotations"])
                .filter(|&at| self.node(at).shape == Shape::Mapping),
        }
    }

    /// Restore comments and key order into `dst` (see [`heal`]).
    pub fn heal(&self, dst: &mut Node) {
        self.copy_comments(self.root, dst);
        self.sync_order(self.root, dst, 0);
        // Most resources hold no folded scalar: one plain walk tells, with no lookups.
        if has_folded(dst, 0) {
            self.unfold_visited(Some(self.root), dst, 0);
        }
    }

    /// kyaml's comment copier turns every folded scalar it visits in a function's output
    /// into a double-quoted one (its workaround for kpt#766). Its walker visits every
    /// field of a mapping and the elements of associative lists (kyaml's
    /// `GetAssociativeKey`, as the merge walker infers list keys); in other lists its
    /// `VisitList` copies comments (and so visits) element by element, by position,
    /// where the input has an element there of the same value (any mapping or list, an
    /// equal scalar). `at` is the input node at the same place, if any.
    fn unfold_visited(&self, at: Option<usize>, n: &mut Node, depth: usize) {
        let associative = associative_key(n).is_some();
        guard_at(depth, || match &mut n.kind {
            NodeKind::Scalar(_) => {
                if n.style == Style::Folded {
                    n.style = Style::DoubleQuoted;
                }
            }
            NodeKind::Mapping(entries) => {
                let src = at.filter(|&a| self.node(a).shape == Shape::Mapping);
                for (i, (k, v)) in entries.iter_mut().enumerate() {
                    // A scalar needs no input to compare with.
                    let c = match (src, k.as_str(), &v.kind) {
                        (_, _, NodeKind::Scalar(_)) => None,
                        (Some(a), Some(key), _) => self.child_hint(a, key, i),
                        _ => None,
                    };
                    self.unfold_visited(c, v, depth + 1);
                }
            }
            NodeKind::Sequence(items) if associative => {
                for item in items.iter_mut() {
                    self.unfold_visited(None, item, depth + 1);
                }
            }
            NodeKind::Sequence(items) => {
                let Some(a) = at.filter(|&a| self.node(a).shape == Shape::Sequence) else {
                    return;
                };
                for (c, item) in self.node(a).children.range().zip(items.iter_mut()) {
                    let src = self.node(c);
                    let same = match (&item.kind, src.shape) {
                        (NodeKind::Scalar(v), Shape::Scalar) => self.str(src.value) == v,
                        (NodeKind::Scalar(_), _) | (_, Shape::Scalar) => false,
                        _ => true,
                    };
                    if same {
                        self.unfold_visited(Some(c), item, depth + 1);
                    }
                }
            }
            NodeKind::Alias(_) => {}
        })
    }

    fn copy_own_comments(&self, comments: u32, dst: &mut Node) {
        let Some([head, line, foot]) = self.arena.comments.get(comments as usize) else {
            return;
        };
        let mut got_comment = false;
        for (d, s) in [
            (&mut dst.head_comment, head),
            (&mut dst.line_comment, line),
            (&mut dst.foot_comment, foot),
        ] {
            if d.is_empty() && !s.is_empty() {
                d.push_str(self.str(*s));
                got_comment = true;
            }
        }
        if got_comment && dst.style == Style::Folded {
            dst.style = Style::DoubleQuoted;
        }
    }

    fn copy_comments(&self, at: usize, dst: &mut Node) {
        guard(|| self.copy_comments_at(at, dst));
    }

    fn copy_comments_at(&self, at: usize, dst: &mut Node) {
        let n = self.node(at);
        if !n.commented {
            return;
        }
        self.copy_own_comments(n.comments, dst);
        match (n.shape, &mut dst.kind) {
            (Shape::Mapping, NodeKind::Mapping(d)) => {
                for (i, (dk, dv)) in d.iter_mut().enumerate() {
                    let Some(key) = dk.as_str() else { continue };
                    if let Some(c) = self.child_hint(at, key, i) {
                        let kc = self.node(c).key_comments;
                        if dk.foot_comment.is_empty()
                            && let Some([_, _, foot]) = self.arena.comments.get(kc as usize)
                            && !foot.is_empty()
                        {
                            take_moved_foot(dv, self.str(*foot), 0);
                        }
                        self.copy_own_comments(kc, dk);
                        self.copy_comments(c, dv);
                    }
                }
            }
            (Shape::Sequence, NodeKind::Sequence(d)) => {
                for (c, dv) in n.children.range().zip(d.iter_mut()) {
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
        let a = self.node(at);
        match (a.shape, &b.kind) {
            (Shape::Scalar, NodeKind::Scalar(y)) => self.str(a.value) == y,
            (Shape::Mapping, NodeKind::Mapping(_)) => {
                let name = self.child(at, "name").and_then(|c| {
                    let c = self.node(c);
                    (c.shape == Shape::Scalar).then(|| self.str(c.value))
                });
                name == b.get("name").and_then(Node::as_str)
            }
            (Shape::Sequence, NodeKind::Sequence(_)) => true,
            _ => false,
        }
    }

    fn sync_order(&self, at: usize, dst: &mut Node, depth: usize) {
        guard_at(depth, || self.sync_order_at(at, dst, depth));
    }

    fn sync_order_at(&self, at: usize, dst: &mut Node, depth: usize) {
        let n = self.node(at);
        let first = n.children.start as usize;
        match (n.shape, &mut dst.kind) {
            (Shape::Mapping, NodeKind::Mapping(d)) => {
                let pos = |k: &Node, hint: usize| {
                    k.as_str()
                        .and_then(|k| self.child_hint(at, k, hint))
                        .map_or(usize::MAX, |c| c - first)
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
                        self.sync_order(first + p, dv, depth + 1);
                    }
                }
                if !sorted {
                    d.sort_by_cached_key(|(k, _)| pos(k, usize::MAX));
                }
            }
            (Shape::Sequence, NodeKind::Sequence(d)) => {
                for (c, dv) in n.children.range().zip(d.iter_mut()) {
                    self.sync_order(c, dv, depth + 1);
                }
            }
            _ => {}
        }
    }
}

/// A snapshot's `metadata.annotations` (none when it has no such mapping).
pub struct Annotations<'a> {
    snap: Snapshot<'a>,
    at: Option<usize>,
}

impl<'a> Annotations<'a> {
    /// The annotation's value, when it is a scalar.
    pub fn get(&self, key: &str) -> Option<&'a str> {
        let n = self.snap.node(self.snap.child(self.at?, key)?);
        (n.shape == Shape::Scalar).then(|| self.snap.str(n.value))
    }
}

/// A key's foot comment that the function's output holds one level deeper, at the end
/// of the key's value (the last key or item, and so on down): go-yaml reads a comment at
/// the column where a ResourceList's nesting puts it as the foot of that inner node.
/// It is the key's own foot moved; the copy restored on the key replaces it (kpt writes
/// it twice, but for the ResourceList's last item, whose inner copy is the stream's foot).
/// Should the input hold the same text at that inner place too, its copy is restored
/// there as any other comment the output lacks.
fn take_moved_foot(n: &mut Node, text: &str, depth: usize) -> bool {
    if n.foot_comment == text {
        n.foot_comment.clear();
        return true;
    }
    guard_at(depth, || match &mut n.kind {
        NodeKind::Mapping(entries) => entries.last_mut().is_some_and(|(k, v)| {
            if k.foot_comment == text {
                k.foot_comment.clear();
                return true;
            }
            take_moved_foot(v, text, depth + 1)
        }),
        NodeKind::Sequence(items) => items
            .last_mut()
            .is_some_and(|i| take_moved_foot(i, text, depth + 1)),
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{SeqIndent, emit_node, parse_one};

    /// kyaml's copier double-quotes the folded scalars its walker visits: mapping
    /// values and associative list elements, not the items of other lists.
    #[test]
    fn folded_scalars_the_walker_visits_become_double_quoted() {
        // As kpt 1.0.0-beta.56 writes it after `exec: cat`: a plain list's elements are
        // visited where the input has an equal one at the same place.
        let text = "data:\n  f: >\n    x\n    y\nc:\n- name: a\n  v: >\n    p\nl:\n- >\n  q\nm:\n- - >\n    r\n";
        let src = parse_one(text).expect("yaml");
        let mut dst = src.clone();
        heal(&src, &mut dst);
        let out = emit_node(&dst, SeqIndent::Compact);
        assert_eq!(
            out,
            "data:\n  f: \"x y\\n\"\nc:\n- name: a\n  v: \"p\\n\"\nl:\n- \"q\\n\"\nm:\n- - \"r\\n\"\n"
        );
        // An element the input does not have at that place is not visited.
        let src = parse_one("l:\n- a\n").expect("yaml");
        let mut dst = parse_one("l:\n- >\n  q\n").expect("yaml");
        heal(&src, &mut dst);
        assert_eq!(emit_node(&dst, SeqIndent::Compact), "l:\n- >\n  q\n\n");
    }

    #[test]
    fn restores_dropped_comments_and_order() {
        let src = parse_one("a: 1 # one\n# head\nb:\n  c: x # cx\nd: [1]\n").expect("yaml");
        let mut dst = parse_one("b:\n  c: y\na: 1\ne: new\n").expect("yaml");
        let fresh = dst.clone();
        heal(&src, &mut dst);
        let out = emit_node(&dst, SeqIndent::Compact);
        assert_eq!(out, "a: 1 # one\n# head\nb:\n  c: y # cx\ne: new\n");
        // The same from a snapshot that is not the first of its arena.
        let mut snaps = Snapshots::default();
        snaps.push(&parse_one("x: # other\n  y: 1 # tree\n").expect("yaml"));
        snaps.push(&src);
        let mut again = fresh;
        snaps.get(1).expect("second").heal(&mut again);
        assert_eq!(emit_node(&again, SeqIndent::Compact), out);
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
        let no_map = parse_one("metadata:\n  annotations: [a]\n").expect("yaml");
        let scalar_root = parse_one("x\n").expect("yaml");
        // Several trees in one arena: each snapshot reads its own.
        let mut snaps = Snapshots::default();
        for n in [&no_map, &src, &scalar_root] {
            snaps.push(n);
        }
        let s = snaps.get(1).expect("second");
        assert_eq!(s.annotations().get("a"), Some("x"));
        assert_eq!(s.annotations().get("m"), None);
        assert_eq!(s.annotations().get("zz"), None);
        assert_eq!(snaps.get(0).expect("first").annotations().get("a"), None);
        assert_eq!(snaps.get(2).expect("third").annotations().get("a"), None);
        assert!(snaps.get(3).is_none());
    }
}
