//! kyaml's `Lookup` (a `PathGetter` that creates nothing) and kyaml's
//! `ErrorIfInvalid` text for a path that walks into a node of the wrong kind:
//! apply-replacements reads its sources and finds its typing pass's targets
//! with it, ensure-name-substring reads a field before editing it.

use kpt::yaml::{self, Node, NodeKind, SeqIndent};

/// yaml.v3 `Node.Value`: a scalar's text, empty for anything else.
pub(crate) fn go_value(n: &Node) -> &str {
    n.as_str().unwrap_or_default()
}

/// kyaml `ErrorIfInvalid`'s message: the node's field path (the field names
/// walked to reach it, empty where kyaml does not track them), the kind
/// wanted, and the node as kyaml's encoder writes it.
pub(crate) fn wrong_kind(path: &str, expected: &str, n: &Node) -> String {
    let shown = yaml::emit_node(n, SeqIndent::Compact);
    yaml::kyaml_kind::wrong_kind(path, expected, yaml::kyaml_kind::kind_name(n), &shown)
}

/// One part of a `PathGetter` path.
enum Part<'p> {
    Field(&'p str),
    Seq(SeqPart<'p>),
}

/// A part that picks a sequence item.
enum SeqPart<'p> {
    Index(usize),
    Last,
    Element(&'p str, &'p str),
}

fn part(p: &str) -> Result<Part<'_>, String> {
    // strconv.Atoi: any decimal integer, sign included.
    if let Ok(i) = p.parse::<i64>() {
        return usize::try_from(i)
            .map(|i| Part::Seq(SeqPart::Index(i)))
            .map_err(|_| format!("array index {i} cannot be negative"));
    }
    if p == "-" {
        return Ok(Part::Seq(SeqPart::Last));
    }
    if p.starts_with('[') && p.ends_with(']') {
        let inner = &p[1..p.len() - 1];
        return inner
            .split_once('=')
            .map(|(k, v)| Part::Seq(SeqPart::Element(k, v)))
            .ok_or_else(|| {
                "list path element must contain fieldName=fieldValue for element to match"
                    .to_string()
            });
    }
    Ok(Part::Field(p))
}

/// Where a step went: the n-th mapping entry's value or sequence item.
#[derive(Clone, Copy)]
enum Pos {
    Value(usize),
    Item(usize),
}

/// The positions `path` leads to (kyaml `Lookup(path...)`): `None` when a part
/// is missing or walks into a null, an error for a part of the wrong kind.
fn locate(node: &Node, path: &[String]) -> Result<Option<Vec<Pos>>, String> {
    let mut cur = node;
    let mut fields: Vec<&str> = Vec::new();
    let mut out = Vec::new();
    // cleanPath: parts are trimmed and empty ones dropped.
    for p in path.iter().map(|p| p.trim()).filter(|p| !p.is_empty()) {
        let step = part(p)?;
        // An error names the node by the field names walked before this part.
        let here = |fields: &[&str]| fields.join(".");
        let pos = match step {
            Part::Field(name) => {
                if cur.is_null() {
                    return Ok(None);
                }
                let NodeKind::Mapping(entries) = &cur.kind else {
                    return Err(wrong_kind(&here(&fields), "MappingNode", cur));
                };
                fields.push(name);
                entries
                    .iter()
                    .position(|(k, _)| go_value(k) == name)
                    .map(Pos::Value)
            }
            Part::Seq(seq) => {
                let items: &[Node] = match &cur.kind {
                    NodeKind::Sequence(items) => items,
                    _ if cur.is_null() => &[],
                    _ => return Err(wrong_kind(&here(&fields), "SequenceNode", cur)),
                };
                match seq {
                    SeqPart::Index(i) => (i < items.len()).then_some(Pos::Item(i)),
                    // kyaml indexes `len-1` unchecked: Go panics on an empty list.
                    SeqPart::Last if items.is_empty() => {
                        return Err("runtime error: index out of range [-1]".into());
                    }
                    SeqPart::Last => Some(Pos::Item(items.len() - 1)),
                    SeqPart::Element(key, value) => items
                        .iter()
                        .position(|e| element_matches(e, key, value))
                        .map(Pos::Item),
                }
            }
        };
        let Some(pos) = pos else {
            return Ok(None);
        };
        cur = match pos {
            Pos::Value(i) => &cur.entries()[i].1,
            Pos::Item(i) => &cur.items()[i],
        };
        out.push(pos);
    }
    Ok(Some(out))
}

/// kyaml `ElementMatcher` for one key: an exact text match of the element
/// (`[=v]`) or of its field (`[k=v]`, mappings only); non-scalars read as "".
fn element_matches(e: &Node, key: &str, value: &str) -> bool {
    if key.is_empty() {
        return go_value(e) == value;
    }
    match &e.kind {
        NodeKind::Mapping(entries) => entries
            .iter()
            .find(|(k, _)| go_value(k) == key)
            .is_some_and(|(_, v)| go_value(v) == value),
        _ => false,
    }
}

/// kyaml `Lookup`: the node at `path`, `None` when something is missing.
pub(crate) fn lookup<'a>(node: &'a Node, path: &[String]) -> Result<Option<&'a Node>, String> {
    let Some(positions) = locate(node, path)? else {
        return Ok(None);
    };
    let mut cur = node;
    for pos in positions {
        cur = match pos {
            Pos::Value(i) => &cur.entries()[i].1,
            Pos::Item(i) => &cur.items()[i],
        };
    }
    Ok(Some(cur))
}

/// Mutable [`lookup`]; any error reads as "not there" (the catalog's typing
/// pass skips such paths).
pub(crate) fn lookup_mut<'a>(node: &'a mut Node, path: &[String]) -> Option<&'a mut Node> {
    let positions = locate(node, path).ok()??;
    let mut cur = node;
    for pos in positions {
        cur = match pos {
            Pos::Value(i) => &mut cur.entries_mut()?.get_mut(i)?.1,
            Pos::Item(i) => cur.items_mut()?.get_mut(i)?,
        };
    }
    Some(cur)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(p: &str) -> Vec<String> {
        p.split('.').map(String::from).collect()
    }

    #[test]
    fn lookup_like_path_getter() {
        let n = yaml::parse_one("a:\n  b: text\n  l: [x, {k: v}]\n  n:\n").expect("parses");
        let get = |p: &str| lookup(&n, &path(p)).map(|o| o.and_then(Node::as_str));
        assert_eq!(get("a.l.0"), Ok(Some("x")));
        assert_eq!(get("a.l.-.k"), Ok(Some("v")));
        assert_eq!(get("a.l.[k=v].k"), Ok(Some("v")));
        assert_eq!(get("a.l.[=x]"), Ok(Some("x")));
        assert_eq!(get("a.l.5"), Ok(None));
        assert_eq!(get("a.n.deeper"), Ok(None));
        assert_eq!(get("a. .b"), Ok(Some("text")));
        assert_eq!(
            get("a.l.-1"),
            Err("array index -1 cannot be negative".into())
        );
        assert_eq!(
            get("a.b.c"),
            Err(
                "wrong Node Kind for a.b expected: MappingNode was ScalarNode: value: {text}"
                    .into()
            )
        );
        let n = yaml::parse_one("a:\n  b: [x]\n").expect("parses");
        assert_eq!(
            lookup(&n, &path("a.0")),
            Err(
                "wrong Node Kind for a expected: SequenceNode was MappingNode: value: {b: [x]}"
                    .into()
            )
        );
    }
}
