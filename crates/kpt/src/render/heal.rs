//! Comment and key-order restoration around a function call (kyaml's CopyComments +
//! SyncOrder): functions may change comments but cannot silently drop them, and
//! mapping keys keep the input's order with new keys after the known ones.

use crate::yaml::{Node, NodeKind, Style};

/// Restore comments from `src` into `dst` where `dst` has none, and re-order `dst`'s
/// mapping keys to follow `src`, recursively.
pub fn heal(src: &Node, dst: &mut Node) {
    copy_comments(src, dst);
    sync_order(src, dst);
}

fn copy_comments(src: &Node, dst: &mut Node) {
    let mut got_comment = false;
    if dst.head_comment.is_empty() && !src.head_comment.is_empty() {
        dst.head_comment = src.head_comment.clone();
        got_comment = true;
    }
    if dst.line_comment.is_empty() && !src.line_comment.is_empty() {
        dst.line_comment = src.line_comment.clone();
        got_comment = true;
    }
    if dst.foot_comment.is_empty() && !src.foot_comment.is_empty() {
        dst.foot_comment = src.foot_comment.clone();
        got_comment = true;
    }
    if got_comment && dst.style == Style::Folded {
        dst.style = Style::DoubleQuoted;
    }
    match (&src.kind, &mut dst.kind) {
        (NodeKind::Mapping(s), NodeKind::Mapping(d)) => {
            for (dk, dv) in d.iter_mut() {
                let Some(key) = dk.as_str() else { continue };
                if let Some((sk, sv)) = s.iter().find(|(k, _)| k.as_str() == Some(key)) {
                    copy_comments(sk, dk);
                    copy_comments(sv, dv);
                }
            }
        }
        (NodeKind::Sequence(s), NodeKind::Sequence(d)) => {
            for (sv, dv) in s.iter().zip(d.iter_mut()) {
                if same_element(sv, dv) {
                    copy_comments(sv, dv);
                }
            }
        }
        _ => {}
    }
}

/// List elements are matched by index only when they are the same element: equal
/// scalars, or maps with the same `name` (or both without one).
fn same_element(a: &Node, b: &Node) -> bool {
    match (&a.kind, &b.kind) {
        (NodeKind::Scalar(x), NodeKind::Scalar(y)) => x == y,
        (NodeKind::Mapping(_), NodeKind::Mapping(_)) => {
            a.get("name").and_then(Node::as_str) == b.get("name").and_then(Node::as_str)
        }
        (NodeKind::Sequence(_), NodeKind::Sequence(_)) => true,
        _ => false,
    }
}

fn sync_order(src: &Node, dst: &mut Node) {
    match (&src.kind, &mut dst.kind) {
        (NodeKind::Mapping(s), NodeKind::Mapping(d)) => {
            let pos = |k: &Node| {
                k.as_str()
                    .and_then(|k| s.iter().position(|(sk, _)| sk.as_str() == Some(k)))
                    .unwrap_or(usize::MAX)
            };
            // Stable sort: known keys in source order, new keys keep their relative order.
            d.sort_by_key(|(k, _)| pos(k));
            for (dk, dv) in d.iter_mut() {
                let Some(key) = dk.as_str() else { continue };
                if let Some((_, sv)) = s.iter().find(|(k, _)| k.as_str() == Some(key)) {
                    sync_order(sv, dv);
                }
            }
        }
        (NodeKind::Sequence(s), NodeKind::Sequence(d)) => {
            for (sv, dv) in s.iter().zip(d.iter_mut()) {
                sync_order(sv, dv);
            }
        }
        _ => {}
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
}
