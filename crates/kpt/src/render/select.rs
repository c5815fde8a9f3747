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
        && file_matches(&sel.resource_file_regexp, node)
}

/// `resourceFileRegexp`: the pattern is searched for (unanchored, as Go's
/// `regexp.MatchString`) in the item's path within the package. An item without a
/// path, or a pattern that does not compile, matches nothing.
fn file_matches(pattern: &str, node: &Node) -> bool {
    if pattern.is_empty() {
        return true;
    }
    let Some(path) = crate::package::resources::item_path(node) else {
        return false;
    };
    crate::goregex::compile(pattern).is_ok_and(|re| re.is_match(path))
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

    #[test]
    fn resource_file_regexp_matches_the_item_path() {
        let at = |path: &str| {
            parse_one(&format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations:\n    internal.config.kubernetes.io/path: '{path}'\n"
            ))
            .expect("yaml")
        };
        let sel = Selector {
            resource_file_regexp: "services/.*".into(),
            ..Default::default()
        };
        assert!(matches(&sel, &at("services/svc.yaml")));
        assert!(!matches(&sel, &at("deploy/d.yaml")));
        // Unanchored, like Go's regexp.MatchString.
        assert!(matches(&sel, &at("app/services/x.yaml")));
        let broken = Selector {
            resource_file_regexp: "(".into(),
            ..Default::default()
        };
        assert!(!matches(&broken, &at("services/svc.yaml")));
        // As an exclusion it removes only what it matches.
        assert!(is_selected(
            &[],
            std::slice::from_ref(&sel),
            &at("deploy/d.yaml")
        ));
        assert!(!is_selected(&[], &[sel], &at("services/s.yaml")));
    }
}
