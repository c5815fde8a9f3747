//! `upsert-resource`: replace the resources matching the functionConfig's
//! resource (or each item of a `List`) by it, or add it as a new resource.
//!
//! Mirrors the catalog's `upsert_resource.go`: a match has the same group,
//! kind, name and namespace (and, when the input carries
//! `config.kubernetes.io/target-path`, sits at that path); items annotated as
//! function configs are skipped. A replacement keeps the matched item's path
//! and index; an added resource loses path/index (so kpt writes it to a new
//! file) unless a target path names its file. Every other annotation of the
//! upserted resource is carried over as the catalog carries it, kyaml's own
//! included: its `seqindent` still picks the written indentation and a legacy
//! `config.kubernetes.io/path` still names the file. No results.

use kpt::resource_list::ResourceList;
use kpt::yaml::{Node, NodeKind};

use crate::FnError;
use crate::common::{gomsg, meta};

/// Names the file a new resource is written to, and restricts matches.
const TARGET_PATH: &str = "config.kubernetes.io/target-path";
/// Legacy function-config markers (kpt v0.x).
const FUNCTION_ANNOTATIONS: [&str; 2] = ["config.kubernetes.io/function", "config.k8s.io/function"];

/// Run the function.
///
/// A kyaml framework function: a failure adds no result; the framework and
/// main both print it (exit 1).
pub fn run(list: &mut ResourceList) -> Result<(), FnError> {
    upsert(list).map_err(|e| {
        let e = format!("failed to upsert resource: {e}");
        FnError::Stderr(format!("{e}{e}\n"))
    })
}

fn upsert(list: &mut ResourceList) -> Result<(), String> {
    // Without a functionConfig the Go function has nothing to read metadata
    // from; it fails (see COMPATIBILITY.md) and so do we, with kyaml's text.
    let Some(fc) = list.function_config.clone() else {
        return Err("missing Resource metadata".to_string());
    };
    let resources: Vec<Node> = if gomsg::get_meta(&fc)?.kind == "List" {
        // kyaml's `unwrap` takes the raw content of `items`: a list's
        // elements, a mapping's keys and values in turn (which then fail as
        // resources), nothing from a scalar.
        match fc.get("items").map(|i| &i.kind) {
            Some(NodeKind::Sequence(elements)) => elements.clone(),
            Some(NodeKind::Mapping(entries)) => entries
                .iter()
                .flat_map(|(k, v)| [k.clone(), v.clone()])
                .collect(),
            _ => Vec::new(),
        }
    } else {
        vec![fc]
    };
    for resource in resources {
        gomsg::get_meta(&resource)?;
        for item in &list.items {
            gomsg::get_meta(item)?;
        }
        if !replace(&mut list.items, &resource) {
            list.items.push(added(&resource));
        }
    }
    Ok(())
}

fn same_resource(input: &Node, target: &Node) -> bool {
    let target_path = meta::annotation(input, TARGET_PATH);
    meta::group(meta::api_version(input)) == meta::group(meta::api_version(target))
        && meta::kind(input) == meta::kind(target)
        && meta::name(input) == meta::name(target)
        && meta::namespace(input) == meta::namespace(target)
        && (target_path.is_empty() || target_path == meta::annotation(target, meta::PATH))
}

/// Annotations of a resource as (key, value) pairs.
fn annotations(node: &Node) -> Vec<(String, String)> {
    node.get_path(&["metadata", "annotations"])
        .map(|a| {
            a.entries()
                .iter()
                .filter_map(|(k, v)| {
                    Some((k.as_str()?.to_string(), meta::str_at(v, &[]).to_string()))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// kyaml `SetAnnotations`: replaces the annotations with `values`, sorted by
/// key; an empty set removes the field.
fn set_annotations(node: &mut Node, mut values: Vec<(String, String)>) {
    values.sort();
    values.dedup_by(|a, b| a.0 == b.0);
    let md = node.ensure_mapping(&["metadata"]);
    if values.is_empty() {
        md.remove("annotations");
        return;
    }
    let mut map = Node::mapping();
    for (k, v) in values {
        map.set(&k, Node::string(v));
    }
    md.set("annotations", map);
}

/// Input annotations that are carried over (the catalog's
/// `combineInputAndMatchedAnnotations` / `AddResource`): all but the target
/// path and the legacy function markers. Only the internal path and index are
/// then replaced; the legacy `config.kubernetes.io/path`/`index` and the
/// `seqindent` the upserted resource carries stay with it.
fn carried_annotation(key: &str) -> bool {
    key != TARGET_PATH && !FUNCTION_ANNOTATIONS.contains(&key)
}

fn replace(items: &mut [Node], input: &Node) -> bool {
    let mut found = false;
    for item in items.iter_mut() {
        if FUNCTION_ANNOTATIONS
            .iter()
            .any(|k| !meta::annotation(item, k).is_empty())
        {
            continue;
        }
        if !same_resource(input, item) {
            continue;
        }
        let mut combined: Vec<(String, String)> = annotations(input)
            .into_iter()
            .filter(|(k, _)| carried_annotation(k) && k != meta::PATH && k != meta::INDEX)
            .collect();
        combined.push((
            meta::PATH.to_string(),
            meta::annotation(item, meta::PATH).to_string(),
        ));
        combined.push((
            meta::INDEX.to_string(),
            meta::annotation(item, meta::INDEX).to_string(),
        ));
        let mut replacement = input.clone();
        set_annotations(&mut replacement, combined);
        *item = replacement;
        found = true;
    }
    found
}

fn added(input: &Node) -> Node {
    let target = meta::annotation(input, TARGET_PATH).to_string();
    let mut values: Vec<(String, String)> = annotations(input)
        .into_iter()
        .filter(|(k, _)| carried_annotation(k) && k != meta::PATH && k != meta::INDEX)
        .collect();
    if !target.is_empty() {
        values.push((meta::PATH.to_string(), target));
    }
    let mut node = input.clone();
    set_annotations(&mut node, values);
    node
}

#[cfg(test)]
mod tests {
    use crate::common::testing::run;

    const SVC: &str = "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n  namespace: ns\nspec:\n  selector:\n    app: bar\n";

    #[test]
    fn replaces_matching_keeping_path() {
        let input = "\
apiVersion: v1
kind: Service
metadata:
  name: s
  namespace: ns
  annotations:
    internal.config.kubernetes.io/path: svc.yaml
    internal.config.kubernetes.io/index: '0'
spec:
  selector:
    app: foo
";
        let (out, results, err) = run(super::run, input, Some(SVC));
        assert!(err.is_none() && results.is_empty());
        assert!(out.contains("internal.config.kubernetes.io/path: svc.yaml"));
        assert!(out.contains("app: bar") && !out.contains("app: foo"));
    }

    #[test]
    fn adds_new_or_at_target_path() {
        let input = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n";
        let (out, _, _) = run(super::run, input, Some(SVC));
        assert!(out.ends_with("---\napiVersion: v1\nkind: Service\nmetadata:\n  name: s\n  namespace: ns\nspec:\n  selector:\n    app: bar\n"), "{out}");

        let at = SVC.replace(
            "  namespace: ns\n",
            "  namespace: ns\n  annotations:\n    config.kubernetes.io/target-path: sub/s.yaml\n",
        );
        let existing = "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n  namespace: ns\n  annotations:\n    internal.config.kubernetes.io/path: other.yaml\n";
        let (out, _, _) = run(super::run, existing, Some(&at));
        assert!(
            out.contains("internal.config.kubernetes.io/path: other.yaml\n---\n"),
            "not matched: other path"
        );
        assert!(out.contains("    internal.config.kubernetes.io/path: sub/s.yaml\nspec:"));
        assert!(!out.contains("target-path"));
    }
}
