//! The Go-side texts that catalog functions put in their errors when a
//! functionConfig does not decode: kyaml's `GetMeta` / `GetValidatedMetadata`
//! checks (with Go's `%v` of a `ResourceMeta`), apimachinery's GVK strings and
//! `encoding/json`'s type-mismatch message. Functions compose these exactly as
//! their Go code wraps them.

use kpt::yaml::{Node, NodeKind};

/// kyaml `IsNilOrEmpty` of a field value: absent, null, or an empty
/// mapping/sequence.
fn nil_or_empty(n: Option<&Node>) -> bool {
    match n {
        None => true,
        Some(n) => match &n.kind {
            NodeKind::Mapping(e) => e.is_empty(),
            NodeKind::Sequence(i) => i.is_empty(),
            _ => n.is_null(),
        },
    }
}

/// kyaml `GetValue`: a scalar's text, "" for anything else.
fn value(n: Option<&Node>) -> String {
    n.and_then(Node::as_str).unwrap_or_default().to_string()
}

/// Go's `%v` of a `map[string]string` (keys sorted).
fn go_map(n: Option<&Node>) -> String {
    let mut pairs: Vec<(String, String)> = n
        .map(|m| {
            m.entries()
                .iter()
                .map(|(k, v)| (value(Some(k)), value(Some(v))))
                .collect()
        })
        .unwrap_or_default();
    pairs.sort();
    pairs.dedup_by(|a, b| a.0 == b.0);
    let body: Vec<String> = pairs.into_iter().map(|(k, v)| format!("{k}:{v}")).collect();
    format!("map[{}]", body.join(" "))
}

/// What kyaml's `GetMeta` reads, enough for its errors.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GoMeta {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    /// Go's `%v` of the whole `ResourceMeta`.
    pub shown: String,
}

/// kyaml `RNode.GetMeta`: `Err("missing Resource metadata")` when none of
/// apiVersion, kind, metadata.name/namespace/labels/annotations is set.
pub fn get_meta(node: &Node) -> Result<GoMeta, String> {
    let mut missing = true;
    let mut field = |k: &str| {
        let f = node.get(k);
        if nil_or_empty(f) {
            String::new()
        } else {
            missing = false;
            value(f)
        }
    };
    let (api_version, kind) = (field("apiVersion"), field("kind"));
    let md = node.get("metadata").filter(|m| !nil_or_empty(Some(m)));
    let sub = |k: &str| md.and_then(|m| m.get(k)).filter(|f| !nil_or_empty(Some(f)));
    let (name, namespace) = (value(sub("name")), value(sub("namespace")));
    let (labels, annotations) = (sub("labels"), sub("annotations"));
    if md.is_some()
        && (sub("name").is_some()
            || sub("namespace").is_some()
            || labels.is_some()
            || annotations.is_some())
    {
        missing = false;
    }
    if missing {
        return Err("missing Resource metadata".to_string());
    }
    let shown = format!(
        "{{{{{api_version} {kind}}} {{{{{name} {namespace}}} {} {}}}}}",
        go_map(labels),
        go_map(annotations)
    );
    Ok(GoMeta {
        api_version,
        kind,
        name,
        shown,
    })
}

/// kyaml `RNode.GetValidatedMetadata`: `GetMeta` plus a kind, and a name
/// unless the kind is a `...List`.
pub fn get_validated_metadata(node: &Node) -> Result<GoMeta, String> {
    let m = get_meta(node)?;
    if m.kind.is_empty() {
        return Err(format!("missing kind in object {}", m.shown));
    }
    if !m.kind.ends_with("List") && m.name.is_empty() {
        return Err(format!("missing metadata.name in object {}", m.shown));
    }
    Ok(m)
}

/// kyaml `RNode.GetDataMap`: every `data` entry, a non-scalar value read as
/// "" and a scalar as its text (`null` stays `null`); a repeated key keeps
/// its last value; no `data` mapping gives nothing.
pub fn data_map(config: &Node) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for (k, v) in config.get("data").map(Node::entries).unwrap_or_default() {
        let (key, val) = (value(Some(k)), value(Some(v)));
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = val,
            None => out.push((key, val)),
        }
    }
    out
}

/// apimachinery `schema.FromAPIVersionAndKind(av, kind).String()`: an
/// apiVersion with more than one `/` does not parse and shows no group or
/// version.
pub fn gvk_string(api_version: &str, kind: &str) -> String {
    let (g, v) = match api_version.split_once('/') {
        None => ("", api_version),
        Some((_, v)) if v.contains('/') => ("", ""),
        Some((g, v)) => (g, v),
    };
    format!("{g}/{v}, Kind={kind}")
}

/// The JSON type name `encoding/json` reports for a value it cannot store:
/// `object`, `array`, `number`, `bool` or `string` (null never mismatches).
pub fn json_type(node: &Node) -> Option<&'static str> {
    match node.to_value() {
        serde_json::Value::Null => None,
        serde_json::Value::Object(_) => Some("object"),
        serde_json::Value::Array(_) => Some("array"),
        serde_json::Value::Number(_) => Some("number"),
        serde_json::Value::Bool(_) => Some("bool"),
        serde_json::Value::String(_) => Some("string"),
    }
}

/// `encoding/json`'s `UnmarshalTypeError` text (Go 1.20+: the struct is the
/// innermost Go struct, the field the dotted JSON path to it).
pub fn json_type_error(json: &str, go_struct: &str, field: &str, go_type: &str) -> String {
    format!(
        "json: cannot unmarshal {json} into Go struct field {go_struct}.{field} of type {go_type}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testing::node;

    #[test]
    fn meta_errors_read_like_kyaml() {
        assert_eq!(
            get_meta(&node("data:\n  a: b\n")).err().as_deref(),
            Some("missing Resource metadata")
        );
        assert_eq!(
            get_validated_metadata(&node("apiVersion: v1\n"))
                .err()
                .as_deref(),
            Some("missing kind in object {{v1 } {{ } map[] map[]}}")
        );
        assert_eq!(
            get_validated_metadata(&node(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels: {b: '2', a: '1'}\n"
            ))
            .err()
            .as_deref(),
            Some("missing metadata.name in object {{v1 ConfigMap} {{ } map[a:1 b:2] map[]}}")
        );
        assert!(get_validated_metadata(&node("kind: FooList\n")).is_ok());
        let m = get_validated_metadata(&node("kind: K\nmetadata:\n  name: n\n")).ok();
        assert_eq!(m.map(|m| m.name), Some("n".to_string()));
    }

    #[test]
    fn gvk_strings() {
        assert_eq!(gvk_string("v1", "ConfigMap"), "/v1, Kind=ConfigMap");
        assert_eq!(gvk_string("a.b/v2", "K"), "a.b/v2, Kind=K");
        assert_eq!(gvk_string("a/b/c", "K"), "/, Kind=K");
        assert_eq!(gvk_string("", ""), "/, Kind=");
    }
}
