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

/// `RNode.String()` of a node rebuilt from a Go map: keys sorted, comments
/// gone.
fn text(n: &Node) -> String {
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
    yaml::emit_node(&rebuilt(n), SeqIndent::Compact)
}

/// The YAML text at `path` (split at every `/`, blank parts dropped, as
/// `Lookup` takes `strings.Split(path, "/")`), empty when a part is missing
/// or null. Numbers index lists; a field name met on a list or a scalar is
/// kyaml's wrong-kind error, as is an index met on a mapping. The
/// `[field=value]` and `-` list selectors are not followed (they read as
/// missing).
pub(super) fn field_text(o: &Node, path: &str) -> Result<String, String> {
    let mut cur = o;
    let mut field_path: Vec<&str> = Vec::new();
    for part in path.split('/').map(str::trim).filter(|p| !p.is_empty()) {
        // A missing or null node matches nothing further.
        if cur.is_null() {
            return Ok(String::new());
        }
        if let Ok(idx) = part.parse::<i64>() {
            if idx < 0 {
                return Err(format!("array index {idx} cannot be negative"));
            }
            let NodeKind::Sequence(items) = &cur.kind else {
                return Err(wrong_kind(&field_path, "SequenceNode", cur));
            };
            match usize::try_from(idx).ok().and_then(|i| items.get(i)) {
                Some(n) => cur = n,
                None => return Ok(String::new()),
            }
            continue;
        }
        if part == "-" || (part.starts_with('[') && part.ends_with(']')) {
            return Ok(String::new());
        }
        if !cur.is_mapping() {
            return Err(wrong_kind(&field_path, "MappingNode", cur));
        }
        field_path.push(part);
        match cur.get(part) {
            Some(n) => cur = n,
            None => return Ok(String::new()),
        }
    }
    Ok(text(cur))
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
    }
}
