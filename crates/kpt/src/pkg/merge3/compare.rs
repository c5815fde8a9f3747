//! How each rule set decides that upstream changed a value: kyaml compares the
//! serialized nodes (quoting and comments count), kpt HEAD compares content only.

use crate::yaml::limits::guard;
use crate::yaml::{Node, NodeKind, Style};

/// kpt HEAD's `isNodeContentEqual`: same kinds, tags and values all the way
/// down; styles and comments do not count.
pub(crate) fn content_eq(a: &Node, b: &Node) -> bool {
    guard(|| content_eq_at(a, b))
}

fn content_eq_at(a: &Node, b: &Node) -> bool {
    if a.resolved_tag() != b.resolved_tag() {
        return false;
    }
    match (&a.kind, &b.kind) {
        (NodeKind::Scalar(x), NodeKind::Scalar(y)) | (NodeKind::Alias(x), NodeKind::Alias(y)) => {
            x == y
        }
        (NodeKind::Sequence(x), NodeKind::Sequence(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| content_eq(p, q))
        }
        (NodeKind::Mapping(x), NodeKind::Mapping(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((k1, v1), (k2, v2))| content_eq(k1, k2) && content_eq(v1, v2))
        }
        _ => false,
    }
}

/// kyaml `getStrValues` equality for scalars: value and comments.
pub(crate) fn scalar_str_eq(a: &Node, b: &Node) -> bool {
    a.as_str() == b.as_str()
        && a.head_comment == b.head_comment
        && a.line_comment == b.line_comment
        && a.foot_comment == b.foot_comment
}

fn quote_class(s: Style) -> u8 {
    match s {
        Style::Any | Style::Plain | Style::Flow => 0,
        Style::SingleQuoted => 1,
        Style::DoubleQuoted => 2,
        Style::Literal => 3,
        Style::Folded => 4,
    }
}

/// Structural equality for the "did upstream change this list" test: values, tags,
/// scalar quoting and comments; the top node's own style is ignored.
pub(crate) fn same_tree(a: &Node, b: &Node, top: bool) -> bool {
    guard(|| same_tree_at(a, b, top))
}

fn same_tree_at(a: &Node, b: &Node, top: bool) -> bool {
    if !top && !same_scalar_meta(a, b) {
        return false;
    }
    match (&a.kind, &b.kind) {
        (NodeKind::Scalar(x), NodeKind::Scalar(y)) => {
            x == y && a.resolved_tag() == b.resolved_tag()
        }
        (NodeKind::Alias(x), NodeKind::Alias(y)) => x == y,
        (NodeKind::Sequence(x), NodeKind::Sequence(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_tree(p, q, false))
        }
        (NodeKind::Mapping(x), NodeKind::Mapping(y)) => {
            x.len() == y.len()
                && x.iter().zip(y).all(|((k1, v1), (k2, v2))| {
                    same_tree(k1, k2, false) && same_tree(v1, v2, false)
                })
        }
        _ => false,
    }
}

fn same_scalar_meta(a: &Node, b: &Node) -> bool {
    let style_ok = if a.is_scalar() {
        quote_class(a.style) == quote_class(b.style)
    } else {
        (a.style == Style::Flow) == (b.style == Style::Flow)
    };
    style_ok
        && a.head_comment == b.head_comment
        && a.line_comment == b.line_comment
        && a.foot_comment == b.foot_comment
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse_one;

    #[test]
    fn content_equality_ignores_style_and_comments_only() {
        let a = parse_one("- 'x' # c\n- {k: 1}\n").expect("a");
        let b = parse_one("- x\n- k: 1\n").expect("b");
        assert!(content_eq(&a, &b));
        let c = parse_one("- x\n- k: '1'\n").expect("c");
        assert!(!content_eq(&a, &c), "a quoted number is a string");
    }
}
