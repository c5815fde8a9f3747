//! Attributing full-line comments to nodes the way yaml.v3's scanner does
//! (`yaml_parser_scan_comments`): a comment block right after content and
//! followed by a blank line, or dedented below the current block, is a foot
//! of the prior content; what remains before the next token is its head.

use super::super::node::{Node, NodeKind};
use super::cursor::GapLine;
use crate::yaml::limits::guard;

/// A foot comment with the column of its first line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Foot {
    pub col: usize,
    pub text: String,
}

/// Splits a gap into foot comments of the prior content and the head
/// comment of the next token. `foot_allowed` is false right after a `key:`
/// whose value follows (yaml.v3's VALUE token case) or at a collection's
/// start; `indent` is the innermost open block indentation.
pub fn split_gap(gap: &[GapLine], foot_allowed: bool, indent: usize) -> (Vec<Foot>, String) {
    split_gap_before(gap, foot_allowed, indent, None)
}

/// [`split_gap`] knowing the column of the token that follows the gap: yaml.v3 also
/// ends a comment block as a foot when that token is dedented below the innermost
/// block and not at the block's own column (a comment closing a sequence item's
/// mapping stays with that item, not with the next `- `).
pub fn split_gap_before(
    gap: &[GapLine],
    foot_allowed: bool,
    indent: usize,
    next_col: Option<usize>,
) -> (Vec<Foot>, String) {
    let mut feet = Vec::new();
    let mut text = String::new();
    let mut start_col = 0;
    let mut first_empty = true;
    let mut recent_empty = false;
    for (i, l) in gap.iter().enumerate() {
        match l {
            GapLine::Blank => {
                if !recent_empty {
                    let starts_right_after = matches!(gap.first(), Some(GapLine::Comment { .. }));
                    if first_empty
                        && !text.is_empty()
                        && ((starts_right_after && foot_allowed) || start_col < indent)
                    {
                        feet.push(Foot {
                            col: start_col,
                            text: std::mem::take(&mut text),
                        });
                    } else if !text.is_empty() {
                        text.push('\n');
                    }
                }
                first_empty = false;
                recent_empty = true;
            }
            GapLine::Comment { col, text: t } => {
                if !text.is_empty() && *col < indent && *col != start_col && foot_allowed {
                    feet.push(Foot {
                        col: start_col,
                        text: std::mem::take(&mut text),
                    });
                }
                if text.is_empty() {
                    start_col = *col;
                } else {
                    text.push('\n');
                }
                text.push_str(t);
                recent_empty = false;
                let _ = i;
            }
        }
    }
    if let Some(col) = next_col
        && !text.is_empty()
        && foot_allowed
        && col < indent
        && col != start_col
    {
        // yaml.v3 leaves this foot with the prior token: the innermost node, whatever
        // the comment's column.
        feet.push(Foot {
            col: usize::MAX,
            text: std::mem::take(&mut text),
        });
    }
    (feet, text)
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

/// Attaches a foot comment to the closed entry chain of `coll` (the last
/// entry of `coll`, the last entry inside that, ...): the deepest entry whose
/// indentation is at most the comment's column, else the outermost one.
/// `chain` holds the indentations of the collections on the chain, innermost
/// first (the last one is `coll`'s, at depth 0).
pub fn attach_foot(coll: &mut Node, chain: &[usize], foot: &Foot) {
    let depth = chain
        .iter()
        .position(|&ind| ind <= foot.col)
        .map(|mut j| {
            // An indentless sequence (`- ` at its key's column) opens no indentation
            // level in yaml.v3: a comment at that column belongs to the outer mapping.
            // A foot kept with the prior token (no column) stays innermost.
            if foot.col == chain[j] && j > 0 {
                while j + 1 < chain.len() && chain[j + 1] == chain[j] {
                    j += 1;
                }
            }
            j
        })
        .map_or(0, |j| chain.len() - 1 - j);
    attach_at(coll, depth, &foot.text);
}

fn last_child(n: &mut Node) -> Option<&mut Node> {
    match &mut n.kind {
        NodeKind::Mapping(e) => e.last_mut().map(|(_, v)| v),
        NodeKind::Sequence(items) => items.last_mut(),
        _ => None,
    }
}

fn attach_at(mut n: &mut Node, depth: usize, text: &str) {
    // A loop, not recursion: the chain is as long as the document is deep.
    for _ in 0..depth {
        if last_child(n).is_none() {
            break;
        }
        n = last_child(n).expect("checked above");
    }
    match &mut n.kind {
        NodeKind::Mapping(e) if !e.is_empty() => {
            if let Some((k, _)) = e.last_mut() {
                join(&mut k.foot_comment, text);
            }
        }
        NodeKind::Sequence(items) if !items.is_empty() => {
            if let Some(i) = items.last_mut() {
                join(&mut i.foot_comment, text);
            }
        }
        _ => join(&mut n.foot_comment, text),
    }
}

/// yaml.v3 `parser.mapping()`: in block mappings, a value's foot comment
/// moves to its key, and the mapping's own foot to its last key.
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
    let flow = n.style == super::super::node::Style::Flow;
    match &mut n.kind {
        NodeKind::Mapping(entries) => {
            for (k, v) in entries.iter_mut() {
                normalize_inner(k);
                normalize_inner(v);
                if !flow && k.foot_comment.is_empty() && !v.foot_comment.is_empty() {
                    k.foot_comment = std::mem::take(&mut v.foot_comment);
                }
            }
            if !flow
                && !n.foot_comment.is_empty()
                && let Some((k, _)) = entries.last_mut()
            {
                let f = std::mem::take(&mut n.foot_comment);
                join(&mut k.foot_comment, &f);
            }
        }
        NodeKind::Sequence(items) => items.iter_mut().for_each(normalize_inner),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(col: usize, t: &str) -> GapLine {
        GapLine::Comment {
            col,
            text: t.into(),
        }
    }

    #[test]
    fn foot_then_head() {
        let gap = [c(0, "# f"), GapLine::Blank, c(0, "# h")];
        let (feet, head) = split_gap(&gap, true, 0);
        assert_eq!(
            feet,
            vec![Foot {
                col: 0,
                text: "# f".into()
            }]
        );
        assert_eq!(head, "# h");
    }

    #[test]
    fn no_foot_after_blank_or_value() {
        let gap = [GapLine::Blank, c(0, "# a"), GapLine::Blank, c(0, "# b")];
        assert_eq!(split_gap(&gap, true, 0), (vec![], "# a\n\n# b".to_string()));
        let gap = [c(0, "# a"), GapLine::Blank, c(0, "# b")];
        assert_eq!(
            split_gap(&gap, false, 0),
            (vec![], "# a\n\n# b".to_string())
        );
    }

    /// yaml.v3 looks at the token after the gap too: dedented below the innermost
    /// block and not at the comment's own column, the comment block is a foot of the
    /// prior token.
    #[test]
    fn a_dedented_next_token_makes_the_block_a_foot() {
        let gap = [c(2, "# closes the item")];
        let (feet, head) = split_gap_before(&gap, true, 4, Some(0));
        // Kept with the prior token: no column, so it attaches to the innermost node.
        assert_eq!(
            feet,
            vec![Foot {
                col: usize::MAX,
                text: "# closes the item".into()
            }]
        );
        assert_eq!(head, "");
        // At the comment's own column, or not dedented, it heads the next token.
        for next in [2, 4] {
            let (feet, head) = split_gap_before(&gap, true, 4, Some(next));
            assert!(feet.is_empty(), "next at {next}");
            assert_eq!(head, "# closes the item");
        }
        // Where no foot may be taken (a collection's start), it stays a head.
        let (feet, _) = split_gap_before(&gap, false, 4, Some(0));
        assert!(feet.is_empty());
    }

    /// Parsed whole: a comment closing a sequence item's mapping stays with that item
    /// (what kept one file's trailing comment from moving into the next file's resource
    /// when a ResourceList came back from a function).
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

    #[test]
    fn dedent_splits_feet() {
        let gap = [
            c(4, "# x"),
            GapLine::Blank,
            c(2, "# two"),
            GapLine::Blank,
            c(0, "# zero"),
            GapLine::Blank,
            c(2, "# head"),
        ];
        let (feet, head) = split_gap(&gap, true, 4);
        assert_eq!(
            feet,
            vec![
                Foot {
                    col: 4,
                    text: "# x".into()
                },
                Foot {
                    col: 2,
                    text: "# two\n".into()
                },
                Foot {
                    col: 0,
                    text: "# zero\n".into()
                },
            ]
        );
        assert_eq!(head, "# head");
    }
}
