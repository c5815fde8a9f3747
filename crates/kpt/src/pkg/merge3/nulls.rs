//! The pieces of kpt HEAD's null handling that are not rules of one walk step:
//! how a kept `null` is written, and the pre-pass that lets a local `null` list
//! survive a merge.

use crate::yaml::limits::guard;
use crate::yaml::{Node, Style};

/// kpt `PersistedNull`: a fresh `null` scalar spelled as `n`'s (`null`, `~` or
/// empty) in its style, without its comments; an empty one when `n` is missing.
pub(crate) fn persisted(n: Option<&Node>) -> Node {
    let mut out = match n {
        Some(n) if n.is_scalar() => Node::plain(n.as_str().unwrap_or_default()),
        _ => Node::plain(""),
    };
    if let Some(n) = n {
        // An explicit `!!null` tag is what made it null; keep it.
        out.tag = n.tag.clone();
        if n.style != Style::Any {
            out.style = n.style;
        }
    }
    out
}

/// kpt `dropOriginUpdatedAtDestNulls`, run on each resource before the walk when
/// nulls are preserved: where local has `null` for a field that origin or updated
/// has as a list (and neither has as `null`), the field is taken out of origin and
/// updated, so the walk sees a lone local `null` and keeps it. Without this the
/// list walk would drop it. Only mapping paths are followed, not list elements.
pub(crate) fn drop_at_dest_nulls(
    dest: &Node,
    mut origin: Option<&mut Node>,
    mut updated: Option<&mut Node>,
) {
    guard(|| {
        for (k, d) in dest.entries() {
            let Some(key) = k.as_str() else {
                continue;
            };
            let o = origin.as_deref().and_then(|n| n.get(key));
            let u = updated.as_deref().and_then(|n| n.get(key));
            if d.is_null() {
                let is_seq = |n: Option<&Node>| n.is_some_and(Node::is_sequence);
                let is_null = |n: Option<&Node>| n.is_some_and(Node::is_null);
                if !is_null(u) && !is_null(o) && (is_seq(o) || is_seq(u)) {
                    for side in [origin.as_deref_mut(), updated.as_deref_mut()]
                        .into_iter()
                        .flatten()
                    {
                        side.remove(key);
                    }
                }
                continue;
            }
            if d.is_mapping() {
                drop_at_dest_nulls(
                    d,
                    origin.as_deref_mut().and_then(|n| n.get_mut(key)),
                    updated.as_deref_mut().and_then(|n| n.get_mut(key)),
                );
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse_one;

    #[test]
    fn persisted_null_keeps_its_spelling() {
        let m = parse_one("a: ~\nb:\nc: null # gone\n").expect("m");
        let spell = |k| persisted(m.get(k)).as_str().map(str::to_string);
        assert_eq!(spell("a").as_deref(), Some("~"));
        assert_eq!(spell("b").as_deref(), Some(""));
        let c = persisted(m.get("c"));
        assert_eq!(c.as_str(), Some("null"));
        assert!(c.line_comment.is_empty() && c.is_null());
        assert!(persisted(None).is_null());
    }

    #[test]
    fn dest_null_list_hides_origin_and_updated_lists() {
        let d = parse_one("s:\n  l: null\n  m: null\n  n: ~\n").expect("d");
        let mut o = parse_one("s:\n  l: [1]\n  m: {k: v}\n  n: [1]\n").expect("o");
        let mut u = parse_one("s:\n  l: [2]\n  m: {k: w}\n  n: null\n").expect("u");
        drop_at_dest_nulls(&d, Some(&mut o), Some(&mut u));
        let s = |n: &Node, k| n.get_path(&["s", k]).is_some();
        // A list goes from both sides; a map stays; so does a list updated nulls.
        assert!(!s(&o, "l") && !s(&u, "l"));
        assert!(s(&o, "m") && s(&u, "m"));
        assert!(s(&o, "n") && s(&u, "n"));
    }
}
