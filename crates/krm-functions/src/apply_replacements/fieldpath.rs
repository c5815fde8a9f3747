//! kyaml field paths as replacements use them: `SmarterPathSplitter`,
//! `Lookup` (PathGetter, for sources) and `PathMatcher` (for targets, with
//! `*` wildcards, `[field=regex]` element matching and optional creation).

use std::collections::HashMap;

use kpt::yaml::{Node, NodeKind, Style};
use regex::Regex;

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
/// literal dot), keep `[a.b=c]` together, and unwrap `[a.b]` map keys.
pub(crate) fn split(path: &str) -> Vec<String> {
    let mut raw: Vec<String> = Vec::new();
    for part in path.split('.') {
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
            out.push(joined);
        } else {
            out.push(elem.clone());
        }
        i += 1;
    }
    out.into_iter()
        .map(|e| {
            if e.starts_with('[') && e.ends_with(']') && !e.contains('=') {
                e[1..e.len() - 1].to_string()
            } else {
                e
            }
        })
        .collect()
}

fn is_list_index(p: &str) -> bool {
    p.starts_with('[') && p.ends_with(']')
}

fn index_number(p: &str) -> Option<usize> {
    p.parse::<usize>().ok()
}

/// `[field=value]` → (field, value).
fn split_index_name_value(p: &str) -> Result<(&str, &str), String> {
    let inner = &p[1..p.len() - 1];
    inner.split_once('=').ok_or_else(|| {
        format!("list path element must contain fieldName=fieldValue for element to match: {p}")
    })
}

/// The scalar text yaml.v3 would print for a node (trimmed), used to match
/// list elements.
fn scalar_text(n: &Node) -> &str {
    n.as_str().map(str::trim).unwrap_or_default()
}

/// kyaml `Lookup`: walks mappings by key, sequences by index or by an exact
/// `[field=value]` / `[=value]` match. `None` when anything is missing.
pub(crate) fn lookup<'a>(node: &'a Node, path: &[String]) -> Option<&'a Node> {
    let mut cur = node;
    for p in path {
        cur = if is_list_index(p) {
            let (field, value) = split_index_name_value(p).ok()?;
            cur.items().iter().find(|e| {
                if field.is_empty() {
                    e.as_str() == Some(value)
                } else {
                    e.get(field).and_then(Node::as_str) == Some(value)
                }
            })?
        } else if let (Some(i), true) = (index_number(p), cur.is_sequence()) {
            cur.items().get(i)?
        } else {
            cur.get(p)?
        };
    }
    Some(cur)
}

/// Mutable [`lookup`].
pub(crate) fn lookup_mut<'a>(node: &'a mut Node, path: &[String]) -> Option<&'a mut Node> {
    let mut cur = node;
    for p in path {
        cur = if is_list_index(p) {
            let (field, value) = split_index_name_value(p).ok()?;
            cur.items_mut()?.iter_mut().find(|e| {
                if field.is_empty() {
                    e.as_str() == Some(value)
                } else {
                    e.get(field).and_then(Node::as_str) == Some(value)
                }
            })?
        } else if let (Some(i), true) = (index_number(p), cur.is_sequence()) {
            cur.items_mut()?.get_mut(i)?
        } else {
            cur.get_mut(p)?
        };
    }
    Some(cur)
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
    if let Some(idx) = index_number(part) {
        let items = node.items_mut().ok_or_else(|| wrong_kind("SequenceNode"))?;
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
        let re = patterns.get(value)?;
        let matches_elem = |e: &Node| {
            if field.is_empty() {
                e.is_scalar() && re.is_match(scalar_text(e))
            } else {
                e.get(field)
                    .is_some_and(|v| v.is_scalar() && re.is_match(scalar_text(v)))
            }
        };
        let items = node.items_mut().ok_or_else(|| wrong_kind("SequenceNode"))?;
        let mut count = 0;
        for e in items.iter_mut() {
            if matches_elem(e) {
                count += match_from(e, rest, create, patterns, f, false)?;
            }
        }
        if count > 0 || create.is_none() || items.iter().any(matches_elem) {
            return Ok(count);
        }
        // Nothing matched: append an element that does, then search again.
        let mut scalar = Node::plain(value);
        scalar.style = Style::Plain;
        let elem = if field.is_empty() {
            scalar
        } else {
            let mut m = Node::mapping();
            m.set(field, scalar);
            m
        };
        items.push(elem);
        return match_from(node, path, create, patterns, f, false);
    }
    if part == "*" {
        let items = node.items_mut().ok_or_else(|| wrong_kind("SequenceNode"))?;
        let mut count = 0;
        for e in items.iter_mut() {
            count += match_from(e, rest, create, patterns, f, false)?;
        }
        return Ok(count);
    }
    let mut created = false;
    if node.get(part).is_none() {
        let Some(c) = create else {
            return Ok(0);
        };
        if !node.is_mapping() {
            return Err(wrong_kind("MappingNode"));
        }
        node.set(part, part_kind(rest.first(), c).empty_node());
        created = true;
    }
    match node.get_mut(part) {
        Some(child) => match_from(child, rest, create, patterns, f, created),
        None => Ok(0),
    }
}

/// kyaml `getPathPartKind`: what an intermediate created node must be.
fn part_kind(next: Option<&String>, leaf: Create) -> Create {
    match next {
        None => leaf,
        Some(n) if is_list_index(n) || index_number(n).is_some() => Create::Sequence,
        Some(_) => Create::Mapping,
    }
}

fn wrong_kind(expected: &str) -> String {
    format!("wrong node kind: expected {expected}")
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
    }
}
