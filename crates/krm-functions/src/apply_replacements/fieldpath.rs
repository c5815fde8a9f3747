//! kyaml field paths as replacements use them: `SmarterPathSplitter`,
//! `Lookup` (PathGetter, for sources) and `PathMatcher` (for targets, with
//! `*` wildcards, `[field=regex]` element matching and optional creation).

use std::borrow::Cow;
use std::collections::HashMap;

use kpt::yaml::{self, Node, NodeKind, SeqIndent, Style};
use regex::Regex;

use crate::common::lookup;

/// What a missing final path element is created as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Create {
    Scalar,
    Mapping,
    Sequence,
}

impl Create {
    /// The kind of `node`, as the create kind of a target.
    pub fn like(node: &Node) -> Create {
        match node.kind {
            NodeKind::Mapping(_) => Create::Mapping,
            NodeKind::Sequence(_) => Create::Sequence,
            _ => Create::Scalar,
        }
    }

    fn empty_node(self) -> Node {
        match self {
            Create::Scalar => Node::plain(""),
            Create::Mapping => Node::mapping(),
            Create::Sequence => Node::sequence(),
        }
    }
}

/// kyaml `PathSplitter` + `SmarterPathSplitter`: split on `.` (a `\.` is a
/// literal dot, a leading `.` is dropped), and join a `[` part with the parts
/// up to the one ending in `]`: kept bracketed when it holds an `=` (a list
/// entry), else stripped of its brackets (a map key with dots). A bracketed
/// part without dots is left as it is.
pub(crate) fn split(path: &str) -> Vec<String> {
    let mut pieces: Vec<&str> = path.split('.').collect();
    if pieces.len() > 1 && pieces[0].is_empty() {
        pieces.remove(0);
    }
    let mut raw: Vec<String> = Vec::new();
    for part in pieces {
        match raw.last_mut() {
            Some(last) if last.ends_with('\\') => {
                last.pop();
                last.push('.');
                last.push_str(part);
            }
            _ => raw.push(part.to_string()),
        }
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < raw.len() {
        let elem = &raw[i];
        if elem.starts_with('[') && !elem.ends_with(']') {
            let mut joined = elem.clone();
            while i + 1 < raw.len() {
                i += 1;
                joined.push('.');
                joined.push_str(&raw[i]);
                if raw[i].ends_with(']') {
                    break;
                }
            }
            if joined.contains('=') {
                out.push(joined);
            } else {
                out.push(joined.trim_matches(['[', ']']).to_string());
            }
        } else {
            out.push(elem.clone());
        }
        i += 1;
    }
    out
}

fn is_list_index(p: &str) -> bool {
    p.starts_with('[') && p.ends_with(']')
}

fn index_number(p: &str) -> Option<usize> {
    p.parse::<usize>().ok()
}

/// `[field=value]` → (field, value); the splitter keeps brackets only
/// around parts with an `=`.
fn split_index_name_value(p: &str) -> Result<(&str, &str), String> {
    let inner = &p[1..p.len() - 1];
    inner.split_once('=').ok_or_else(|| {
        "list path element must contain fieldName=fieldValue for element to match".to_string()
    })
}

/// The text kyaml matches a `[field=regex]` part against: the node as its
/// encoder writes it (`RNode.String()`), trimmed, so quotes and comments
/// count. A plain scalar without comments is written as its text.
fn match_text(n: &Node) -> Cow<'_, str> {
    match &n.kind {
        NodeKind::Scalar(s)
            if n.style == Style::Plain
                && n.tag.is_none()
                && n.anchor.is_none()
                && !s.is_empty()
                && n.head_comment.is_empty()
                && n.line_comment.is_empty()
                && n.foot_comment.is_empty() =>
        {
            Cow::Borrowed(s.trim())
        }
        _ => Cow::Owned(yaml::emit_node(n, SeqIndent::Compact).trim().to_string()),
    }
}

/// The `[field=regex]` patterns of field paths, each compiled once: a target's
/// paths are matched against every selected resource, and compiling the pattern
/// for each was a tenth of the function's cost.
#[derive(Debug, Default)]
pub(crate) struct Patterns(HashMap<String, Regex>);

impl Patterns {
    fn get(&mut self, pattern: &str) -> Result<Regex, String> {
        if let Some(re) = self.0.get(pattern) {
            // Cheap: a compiled regex is shared, not copied.
            return Ok(re.clone());
        }
        let re = Regex::new(pattern).map_err(|e| e.to_string())?;
        self.0.insert(pattern.to_string(), re.clone());
        Ok(re)
    }
}

/// What is done with each matched field; the flag tells a leaf this match
/// just created (Go creates it untagged, unlike a parsed scalar).
pub(crate) type Visit<'a> = dyn FnMut(&mut Node, bool) -> Result<(), String> + 'a;

/// kyaml `PathMatcher`: every node matching `path`, creating missing parts
/// when `create` is set (the leaf as `create`, intermediates as mappings or
/// sequences depending on the next part). Calls `f` on each match.
pub(crate) fn path_match(
    node: &mut Node,
    path: &[String],
    create: Option<Create>,
    patterns: &mut Patterns,
    f: &mut Visit<'_>,
) -> Result<usize, String> {
    match_from(node, path, create, patterns, f, false)
}

fn match_from(
    node: &mut Node,
    path: &[String],
    create: Option<Create>,
    patterns: &mut Patterns,
    f: &mut Visit<'_>,
    fresh: bool,
) -> Result<usize, String> {
    let Some((part, rest)) = path.split_first() else {
        f(node, fresh)?;
        return Ok(1);
    };
    // The list-entry form is checked before anything else about the node.
    if is_list_index(part) {
        split_index_name_value(part)?;
    }
    // kyaml treats a null node as missing: nothing under it matches, and what
    // `create` adds to it is appended to a scalar's content, which is never
    // written; the rest of the path is walked on that lost node.
    if node.is_null() {
        return match_null(part, rest, create, patterns, f);
    }
    if let Some(idx) = index_number(part) {
        let items = sequence_items(node)?;
        let mut created = false;
        if items.len() == idx
            && let Some(c) = create
        {
            items.push(part_kind(rest.first(), c).empty_node());
            created = true;
        }
        let len = items.len();
        let elem = items
            .get_mut(idx)
            .ok_or_else(|| format!("index {idx} specified but only {len} elements found"))?;
        return match_from(elem, rest, create, patterns, f, created);
    }
    if is_list_index(part) {
        let (field, value) = split_index_name_value(part)?;
        let items = sequence_items(node)?;
        if items.is_empty() && create.is_none() {
            return Ok(0);
        }
        // Go compiles the pattern for each element it visits.
        let re = if items.is_empty() {
            None
        } else {
            Some(patterns.get(value)?)
        };
        let matches_elem = |e: &Node, re: &Regex| {
            if field.is_empty() {
                re.is_match(&match_text(e))
            } else {
                e.get(field).is_some_and(|v| re.is_match(&match_text(v)))
            }
        };
        let mut count = 0;
        if let Some(re) = &re {
            for e in items.iter_mut() {
                if matches_elem(e, re) {
                    count += match_from(e, rest, create, patterns, f, false)?;
                }
            }
        }
        if count > 0 || create.is_none() {
            return Ok(count);
        }
        // Nothing found: append an element that matches, then search again (the
        // elements searched before find nothing again).
        let elem = new_element(part, field, value, patterns)?;
        items.push(elem);
        let Some(elem) = items.last_mut() else {
            return Ok(0);
        };
        return found_again(
            part,
            match_from(elem, rest, create, patterns, f, field.is_empty()),
        );
    }
    if part == "*" {
        let mut count = 0;
        for e in sequence_items(node)?.iter_mut() {
            count += match_from(e, rest, create, patterns, f, false)?;
        }
        return Ok(count);
    }
    if part.is_empty() {
        return match_empty_name(node, rest, create, patterns, f);
    }
    if !node.is_mapping() {
        return Err(lookup::wrong_kind("", "MappingNode", node));
    }
    let mut created = false;
    if node.get(part).is_none() {
        let Some(c) = create else {
            return Ok(0);
        };
        node.set(part, part_kind(rest.first(), c).empty_node());
        created = true;
    }
    match node.get_mut(part) {
        Some(child) => match_from(child, rest, create, patterns, f, created),
        None => Ok(0),
    }
}

/// `part` of a path met a null node, which kyaml treats as missing: nothing
/// under it matches, and what `create` adds is appended to the null scalar's
/// content, which is never written, so the rest of the path is walked on a
/// node that is then lost.
fn match_null(
    part: &str,
    rest: &[String],
    create: Option<Create>,
    patterns: &mut Patterns,
    f: &mut Visit<'_>,
) -> Result<usize, String> {
    let idx = index_number(part);
    let Some(c) = create else {
        return match idx {
            Some(i) => Err(format!("index {i} specified but only 0 elements found")),
            None => Ok(0),
        };
    };
    if is_list_index(part) {
        let (field, value) = split_index_name_value(part)?;
        let mut lost = new_element(part, field, value, patterns)?;
        return found_again(
            part,
            match_from(&mut lost, rest, create, patterns, f, field.is_empty()),
        );
    }
    match idx {
        Some(i) if i > 0 => Err(format!("index {i} specified but only 0 elements found")),
        _ if part == "*" => Ok(0),
        _ => {
            let mut lost = part_kind(rest.first(), c).empty_node();
            match_from(&mut lost, rest, create, patterns, f, true)
        }
    }
}

/// An empty part (a path ending in `.`, or `..`): kyaml's field matcher
/// without a name compares a scalar's text with "", so an empty scalar is its
/// own match; a scalar with text has no such field, and `create` overwrites it
/// with the new empty node while the rest of the path goes to a copy.
fn match_empty_name(
    node: &mut Node,
    rest: &[String],
    create: Option<Create>,
    patterns: &mut Patterns,
    f: &mut Visit<'_>,
) -> Result<usize, String> {
    if !node.is_scalar() {
        return Err(lookup::wrong_kind("", "ScalarNode", node));
    }
    if lookup::go_value(node).is_empty() {
        return match_from(node, rest, create, patterns, f, false);
    }
    let Some(c) = create else {
        return Ok(0);
    };
    *node = part_kind(rest.first(), c).empty_node();
    let mut copy = node.clone();
    match_from(&mut copy, rest, create, patterns, f, true)
}

/// The element kyaml appends for an unmatched `[field=value]` (an untagged
/// scalar, or a mapping holding one). kyaml then searches again, forever if
/// the element does not match its own pattern or finds nothing under it: the
/// Go function dies of a stack overflow, here that is an error.
fn new_element(
    part: &str,
    field: &str,
    value: &str,
    patterns: &mut Patterns,
) -> Result<Node, String> {
    let scalar = Node::plain(value);
    // Written by the encoder: a created scalar may need quotes.
    let text = yaml::emit_node(&scalar, SeqIndent::Compact);
    if !patterns.get(value)?.is_match(text.trim()) {
        return Err(endless(part));
    }
    if field.is_empty() {
        return Ok(scalar);
    }
    let mut m = Node::mapping();
    m.set(field, scalar);
    Ok(m)
}

/// The search after appending an element must find something.
fn found_again(part: &str, found: Result<usize, String>) -> Result<usize, String> {
    match found? {
        0 => Err(endless(part)),
        n => Ok(n),
    }
}

fn endless(part: &str) -> String {
    format!("creating an element for {part} never ends: fatal error: stack overflow")
}

/// kyaml `Elements()`: the items of a sequence, an error for anything else.
fn sequence_items(node: &mut Node) -> Result<&mut Vec<Node>, String> {
    if !node.is_sequence() {
        return Err(lookup::wrong_kind("", "SequenceNode", node));
    }
    node.items_mut()
        .ok_or_else(|| lookup::wrong_kind("", "SequenceNode", &Node::sequence()))
}

/// kyaml `getPathPartKind`: what an intermediate created node must be.
fn part_kind(next: Option<&String>, leaf: Create) -> Create {
    match next {
        None => leaf,
        Some(n) if n.is_empty() => leaf,
        Some(n) if is_list_index(n) || index_number(n).is_some() => Create::Sequence,
        Some(_) => Create::Mapping,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_like_kyaml() {
        assert_eq!(split("a.b.c"), vec!["a", "b", "c"]);
        assert_eq!(
            split("data.[app.kubernetes.io/app]"),
            vec!["data", "app.kubernetes.io/app"]
        );
        assert_eq!(
            split("spec.containers.[name=a.b].image"),
            vec!["spec", "containers", "[name=a.b]", "image"]
        );
        assert_eq!(split(r"a\.b.c"), vec!["a.b", "c"]);
        assert_eq!(split(".a.b"), vec!["a", "b"]);
        assert_eq!(split("a.[key]"), vec!["a", "[key]"]);
        assert_eq!(split("a.[[x.y]]"), vec!["a", "x.y"]);
    }
}
