//! Function `selectors` and `exclude`: which items a pipeline step sees.

use crate::kptfile::Selector;
use crate::yaml::Node;

fn s<'a>(node: &'a Node, path: &[&str]) -> &'a str {
    node.get_path(path)
        .and_then(Node::as_str)
        .unwrap_or_default()
}

fn map_contains(
    node: &Node,
    path: &[&str],
    want: &std::collections::BTreeMap<String, String>,
) -> bool {
    want.iter().all(|(k, v)| {
        node.get_path(path)
            .and_then(|m| m.get(k))
            .and_then(Node::as_str)
            == Some(v.as_str())
    })
}

/// Does `node` match every field the selector sets?
pub fn matches(sel: &Selector, node: &Node) -> bool {
    (sel.api_version.is_empty() || s(node, &["apiVersion"]) == sel.api_version)
        && (sel.kind.is_empty() || s(node, &["kind"]) == sel.kind)
        && (sel.name.is_empty() || s(node, &["metadata", "name"]) == sel.name)
        && (sel.namespace.is_empty() || s(node, &["metadata", "namespace"]) == sel.namespace)
        && map_contains(node, &["metadata", "labels"], &sel.labels)
        && map_contains(node, &["metadata", "annotations"], &sel.annotations)
}

/// Is the item selected? OR over selectors (none = all), minus any non-empty exclusion.
pub fn is_selected(selectors: &[Selector], exclusions: &[Selector], node: &Node) -> bool {
    let selected = selectors.is_empty() || selectors.iter().any(|sel| matches(sel, node));
    selected
        && !exclusions
            .iter()
            .any(|ex| !ex.is_empty() && matches(ex, node))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse_one;

    #[test]
    fn selectors_or_exclusions_and() {
        let dep = parse_one("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels:\n    app: x\n").expect("yaml");
        let by_kind = Selector {
            kind: "Deployment".into(),
            ..Default::default()
        };
        let by_name = Selector {
            name: "other".into(),
            ..Default::default()
        };
        assert!(is_selected(&[by_name.clone(), by_kind.clone()], &[], &dep));
        assert!(!is_selected(&[by_name], &[], &dep));
        let mut labels = std::collections::BTreeMap::new();
        labels.insert("app".to_string(), "x".to_string());
        let ex = Selector {
            labels,
            ..Default::default()
        };
        assert!(!is_selected(&[], &[ex], &dep));
        assert!(is_selected(&[], &[Selector::default()], &dep));
    }
}
