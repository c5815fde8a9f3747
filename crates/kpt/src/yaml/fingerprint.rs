//! A structural fingerprint of a node tree, for change detection.
//!
//! A parsed document used to keep a deep copy of its tree so that writing it
//! back could tell whether anything changed; copying every tree on every read
//! was a large share of the cost of reading a package. The fingerprint is a
//! compact, prefix-free byte encoding of everything `Node`'s equality covers
//! (kinds, scalar text, styles, tags, anchors, comments, order), about the size of
//! the document's text: two trees are equal exactly when their encodings are.
//!
//! Checking a tree against a fingerprint encodes it on the fly and stops at the
//! first byte that differs, so a document a function changed near its top (its
//! metadata, as most functions do) costs little to tell apart. (It used to be a
//! 128-bit hash of the encoding, which had to encode and hash every tree in full.)

use std::ops::ControlFlow;

use super::limits::guard;
use super::node::{Node, NodeKind, Style};

/// The fingerprint of `node`'s tree.
pub fn fingerprint(node: &Node) -> Box<[u8]> {
    let mut enc = Encoding(Vec::with_capacity(1024));
    // Writing into a buffer never stops early.
    let _ = feed(node, &mut enc);
    enc.0.into_boxed_slice()
}

/// Does `node`'s tree have fingerprint `print`?
pub fn matches(node: &Node, print: &[u8]) -> bool {
    let mut cmp = Compare { rest: print };
    feed(node, &mut cmp).is_continue() && cmp.rest.is_empty()
}

/// Where encoded bytes go; [`ControlFlow::Break`] ends the walk.
trait Sink {
    fn put(&mut self, bytes: &[u8]) -> ControlFlow<()>;

    fn byte(&mut self, x: u8) -> ControlFlow<()> {
        self.put(&[x])
    }

    /// LEB128, so the usual short lengths take one byte.
    fn len(&mut self, mut x: usize) -> ControlFlow<()> {
        let mut buf = [0u8; 10];
        let mut n = 0;
        while x >= 0x80 {
            buf[n] = (x as u8 & 0x7f) | 0x80;
            x >>= 7;
            n += 1;
        }
        buf[n] = x as u8;
        self.put(&buf[..=n])
    }

    /// Length-prefixed, so consecutive strings cannot run into each other.
    fn str(&mut self, s: &str) -> ControlFlow<()> {
        self.len(s.len())?;
        self.put(s.as_bytes())
    }
}

/// Collects the encoding.
struct Encoding(Vec<u8>);

impl Sink for Encoding {
    fn put(&mut self, bytes: &[u8]) -> ControlFlow<()> {
        self.0.extend_from_slice(bytes);
        ControlFlow::Continue(())
    }
}

/// Compares the encoding with an expected one, stopping at the first difference.
struct Compare<'a> {
    rest: &'a [u8],
}

impl Sink for Compare<'_> {
    fn put(&mut self, bytes: &[u8]) -> ControlFlow<()> {
        match self.rest.strip_prefix(bytes) {
            Some(rest) => {
                self.rest = rest;
                ControlFlow::Continue(())
            }
            None => ControlFlow::Break(()),
        }
    }
}

fn style_code(s: Style) -> u8 {
    match s {
        Style::Any => 0,
        Style::Plain => 1,
        Style::SingleQuoted => 2,
        Style::DoubleQuoted => 3,
        Style::Literal => 4,
        Style::Folded => 5,
        Style::Flow => 6,
    }
}

fn feed(n: &Node, h: &mut impl Sink) -> ControlFlow<()> {
    // Which of the optional parts follow (most nodes have none), then those.
    let parts = [
        n.tag.is_some(),
        n.anchor.is_some(),
        !n.head_comment.is_empty(),
        !n.line_comment.is_empty(),
        !n.foot_comment.is_empty(),
    ];
    let flags = parts
        .iter()
        .enumerate()
        .fold(0u8, |f, (i, &on)| f | (u8::from(on) << i));
    h.put(&[style_code(n.style), flags])?;
    for t in [&n.tag, &n.anchor].into_iter().flatten() {
        h.str(t)?;
    }
    for c in [&n.head_comment, &n.line_comment, &n.foot_comment] {
        if !c.is_empty() {
            h.str(c)?;
        }
    }
    match &n.kind {
        NodeKind::Scalar(s) => {
            h.byte(0)?;
            h.str(s)
        }
        NodeKind::Alias(s) => {
            h.byte(1)?;
            h.str(s)
        }
        NodeKind::Mapping(entries) => {
            h.byte(2)?;
            h.len(entries.len())?;
            guard(|| {
                for (k, v) in entries {
                    feed(k, h)?;
                    feed(v, h)?;
                }
                ControlFlow::Continue(())
            })
        }
        NodeKind::Sequence(items) => {
            h.byte(3)?;
            h.len(items.len())?;
            guard(|| {
                for i in items {
                    feed(i, h)?;
                }
                ControlFlow::Continue(())
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse_one;

    #[test]
    fn equal_trees_agree_and_any_difference_shows() {
        let text = "# c\na: 1 # l\nb: [x, 'y']\nc: &k v\nd: *k\n";
        let base = parse_one(text).expect("yaml");
        let print = fingerprint(&base);
        assert_eq!(print, fingerprint(&base.clone()));
        assert!(matches(&base, &print));
        // A prefix or an extension of the print is not the print.
        assert!(!matches(&base, &print[..print.len() - 1]));
        let mut longer = print.to_vec();
        longer.push(0);
        assert!(!matches(&base, &longer));
        let edits: Vec<fn(&mut Node)> = vec![
            |n| n.entries_mut().expect("map")[0].0.head_comment.clear(),
            |n| {
                n.set_string("a", "2");
            },
            |n| n.get_mut("b").expect("b").items_mut().expect("seq")[1].style = Style::DoubleQuoted,
            |n| n.get_mut("c").expect("c").anchor = None,
            |n| n.get_mut("a").expect("a").tag = Some("!!str".into()),
            |n| n.entries_mut().expect("map").swap(0, 1),
            |n| n.get_mut("a").expect("a").line_comment.clear(),
        ];
        for edit in edits {
            let mut changed = base.clone();
            edit(&mut changed);
            assert_ne!(changed, base);
            assert_ne!(fingerprint(&changed), print);
            assert!(!matches(&changed, &print));
        }
        // Strings are length-prefixed: moving text between fields changes the print.
        let (mut x, mut y) = (Node::plain("ab"), Node::plain("ab"));
        x.head_comment = "#a".into();
        y.line_comment = "#a".into();
        assert_ne!(fingerprint(&x), fingerprint(&y));
    }
}
