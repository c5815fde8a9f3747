//! The catalog's reading of an additional name field before it edits it
//! (`resourceContainsSubstring`, kyaml's `Lookup` on a copy of the resource
//! rebuilt from a Go map) and the kyaml/kustomize texts its failures carry.

use kpt::yaml::{self, Node, NodeKind, SeqIndent};

/// kyaml `ResId.String()`: `Kind.version.group/name.namespace`, with
/// kustomize's placeholders for empty parts.
pub(super) fn res_id(o: &Node) -> String {
    let or = |s: &str, none: &str| {
        if s.is_empty() {
            none.to_string()
        } else {
            s.to_string()
        }
    };
    let av = crate::common::meta::api_version(o);
    format!(
        "{}.{}.{}/{}.{}",
        or(crate::common::meta::kind(o), "[noKind]"),
        or(crate::common::meta::version(av), "[noVer]"),
        or(crate::common::meta::group(av), "[noGrp]"),
        or(crate::common::meta::name(o), "[noName]"),
        or(crate::common::meta::namespace(o), "[noNs]"),
    )
}

/// kyaml `ErrorIfInvalid`'s text for a node of the wrong kind.
pub(super) fn wrong_kind(field_path: &[&str], expected: &str, n: &Node) -> String {
    yaml::kyaml_kind::wrong_kind(
        &field_path.join("."),
        expected,
        yaml::kyaml_kind::kind_name(n),
        &text(n),
    )
}

/// A copy of `n` as kyaml's `FromMap` rebuilds it from a Go map: keys sorted,
/// comments gone.
fn rebuilt(n: &Node) -> Node {
    let mut copy = n.clone();
    copy.head_comment.clear();
    copy.line_comment.clear();
    copy.foot_comment.clear();
    match &mut copy.kind {
        NodeKind::Mapping(entries) => {
            for (k, v) in entries.iter_mut() {
                *k = rebuilt(k);
                *v = rebuilt(v);
            }
            entries.sort_by(|a, b| a.0.as_str().cmp(&b.0.as_str()));
        }
        NodeKind::Sequence(items) => {
            for item in items.iter_mut() {
                *item = rebuilt(item);
            }
        }
        NodeKind::Scalar(_) | NodeKind::Alias(_) => {}
    }
    copy
}

/// `RNode.String()` of a node rebuilt from a Go map.
fn text(n: &Node) -> String {
    yaml::emit_node(&rebuilt(n), SeqIndent::Compact)
}

/// The YAML text at `path`, as `resourceContainsSubstring` reads it: kyaml's
/// `Lookup(strings.Split(path, "/")...)` on the resource rebuilt from its Go map,
/// then `String()`; empty when a part is missing (a nil node's text).
///
/// Rebuilding keeps keys in a stable order and only drops comments, so the walk
/// finds the same node in the resource itself; only the found node is rebuilt,
/// and the whole copy only when an error has to show a node as the copy prints it.
pub(super) fn field_text(o: &Node, path: &str) -> Result<String, String> {
    let parts: Vec<String> = path.split('/').map(str::to_owned).collect();
    let found = match crate::common::lookup::lookup(o, &parts) {
        Ok(found) => found.map(text),
        Err(_) => crate::common::lookup::lookup(&rebuilt(o), &parts)?.map(text),
    };
    Ok(found.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(s: &str) -> Node {
        yaml::parse_one(s).expect("parses")
    }

    #[test]
    fn reads_text_and_reports_kinds() {
        let o = node(
            "apiVersion: apps/v1\nkind: Thing\nmetadata:\n  name: t\nspec:\n  list:\n  - b: 2\n    a: 1\n  word: hi # c\n  nothing: null\n",
        );
        assert_eq!(res_id(&o), "Thing.v1.apps/t.[noNs]");
        assert_eq!(field_text(&o, "spec/word").as_deref(), Ok("hi\n"));
        assert_eq!(field_text(&o, "spec/list/0/a").as_deref(), Ok("1\n"));
        assert_eq!(field_text(&o, "spec/list/5/a").as_deref(), Ok(""));
        assert_eq!(field_text(&o, "spec/nothing/x").as_deref(), Ok(""));
        assert_eq!(field_text(&o, "spec/gone/x").as_deref(), Ok(""));
        assert_eq!(
            field_text(&o, "spec/list/a"),
            Err(
                "wrong Node Kind for spec.list expected: MappingNode was SequenceNode: value: {- a: 1\n  b: 2}"
                    .to_string()
            )
        );
        assert_eq!(
            field_text(&o, "spec/word/x"),
            Err(
                "wrong Node Kind for spec.word expected: MappingNode was ScalarNode: value: {hi}"
                    .to_string()
            )
        );
        assert!(field_text(&o, "spec/0").is_err());
        // kyaml's list selectors, which Lookup follows.
        assert_eq!(field_text(&o, "spec/list/-/b").as_deref(), Ok("2\n"));
        assert_eq!(field_text(&o, "spec/list/[a=1]/b").as_deref(), Ok("2\n"));
        assert_eq!(field_text(&o, "spec/list/[a=9]/b").as_deref(), Ok(""));
    }
}
