//! A structural fingerprint of a node tree, for change detection.
//!
//! A parsed document used to keep a deep copy of its tree so that writing it
//! back could tell whether anything changed; copying every tree on every read
//! was a large share of the cost of reading a package. The fingerprint covers
//! everything `Node`'s equality covers (kinds, scalar text, styles, tags,
//! anchors, comments, order) in a prefix-free encoding, hashed by two
//! independently keyed SipHash instances into 128 bits, so two different
//! trees getting the same fingerprint is as unlikely as a random 128-bit
//! collision.

use std::hash::{DefaultHasher, Hasher};

use super::node::{Node, NodeKind, Style};

/// 128-bit fingerprint of `node`'s tree.
pub fn fingerprint(node: &Node) -> u128 {
    // Serialised first and hashed in one go: SipHash is slow when fed many
    // small pieces.
    let mut buf = Encoding(Vec::with_capacity(1024));
    feed(node, &mut buf);
    let mut a = DefaultHasher::new();
    let mut b = DefaultHasher::new();
    // A different starting state makes the second hash independent of the first.
    b.write(b"kpt-yaml-fingerprint-second-key");
    a.write(&buf.0);
    b.write(&buf.0);
    (u128::from(a.finish()) << 64) | u128::from(b.finish())
}

/// The prefix-free byte encoding of a tree.
struct Encoding(Vec<u8>);

impl Encoding {
    fn byte(&mut self, x: u8) {
        self.0.push(x);
    }

    /// LEB128, so the usual short lengths take one byte.
    fn len(&mut self, mut x: usize) {
        while x >= 0x80 {
            self.0.push((x as u8 & 0x7f) | 0x80);
            x >>= 7;
        }
        self.0.push(x as u8);
    }

    /// Length-prefixed, so consecutive strings cannot run into each other.
    fn str(&mut self, s: &str) {
        self.len(s.len());
        self.0.extend_from_slice(s.as_bytes());
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

fn feed(n: &Node, h: &mut Encoding) {
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
    h.byte(style_code(n.style));
    h.byte(flags);
    for t in [&n.tag, &n.anchor].into_iter().flatten() {
        h.str(t);
    }
    for c in [&n.head_comment, &n.line_comment, &n.foot_comment] {
        if !c.is_empty() {
            h.str(c);
        }
    }
    match &n.kind {
        NodeKind::Scalar(s) => {
            h.byte(0);
            h.str(s);
        }
        NodeKind::Alias(s) => {
            h.byte(1);
            h.str(s);
        }
        NodeKind::Mapping(entries) => {
            h.byte(2);
            h.len(entries.len());
            for (k, v) in entries {
                feed(k, h);
                feed(v, h);
            }
        }
        NodeKind::Sequence(items) => {
            h.byte(3);
            h.len(items.len());
            for i in items {
                feed(i, h);
            }
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
        assert_eq!(fingerprint(&base), fingerprint(&base.clone()));
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
            assert_ne!(fingerprint(&changed), fingerprint(&base));
        }
        // Strings are length-prefixed: moving text between fields changes the print.
        let (mut x, mut y) = (Node::plain("ab"), Node::plain("ab"));
        x.head_comment = "#a".into();
        y.line_comment = "#a".into();
        assert_ne!(fingerprint(&x), fingerprint(&y));
    }
}
