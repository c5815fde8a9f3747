//! Which resources a replacement reads from and writes to: kustomize resource
//! ids (current and previous, from the build annotations) matched with
//! `ResId.IsSelectedBy`, plus Kubernetes label / annotation selector strings.

use kpt::yaml::Node;

use super::config::{ResId, Selector};
use super::labelsel;
use crate::common::scope;

/// Annotations kustomize records previous names/kinds/namespaces in.
const PREVIOUS_NAMES: &str = "internal.config.kubernetes.io/previousNames";
const PREVIOUS_KINDS: &str = "internal.config.kubernetes.io/previousKinds";
const PREVIOUS_NAMESPACES: &str = "internal.config.kubernetes.io/previousNamespaces";

fn text<'a>(node: &'a Node, path: &[&str]) -> &'a str {
    node.get_path(path)
        .and_then(Node::as_str)
        .unwrap_or_default()
}

/// A resource id borrowed from the node it was read from (kustomize `resid.ResId`
/// without allocation: selection runs over every item for every target).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct IdRef<'a> {
    pub group: &'a str,
    pub version: &'a str,
    pub kind: &'a str,
    pub name: &'a str,
    pub namespace: &'a str,
}

/// kustomize `utils.MakeResIds`: the current id, then previous ids.
pub(crate) fn res_ids(node: &Node) -> Result<Vec<IdRef<'_>>, String> {
    let api_version = text(node, &["apiVersion"]);
    // kyaml `resid.ParseGroupVersion`.
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let current = IdRef {
        group,
        version,
        kind: text(node, &["kind"]),
        name: text(node, &["metadata", "name"]),
        namespace: text(node, &["metadata", "namespace"]),
    };
    let mut ids = vec![current];
    let ann = |k: &str| {
        node.get_path(&["metadata", "annotations", k])
            .and_then(Node::as_str)
    };
    if let Some(names) = ann(PREVIOUS_NAMES) {
        let names: Vec<&str> = names.split(',').collect();
        let nss: Vec<&str> = ann(PREVIOUS_NAMESPACES)
            .unwrap_or_default()
            .split(',')
            .collect();
        let kinds: Vec<&str> = ann(PREVIOUS_KINDS).unwrap_or_default().split(',').collect();
        if names.len() != nss.len() || names.len() != kinds.len() {
            return Err("number of previous names, number of previous namespaces, \
                        number of previous kinds not equal"
                .into());
        }
        for ((name, namespace), kind) in names.into_iter().zip(nss).zip(kinds) {
            ids.push(IdRef {
                group,
                version,
                kind,
                name,
                namespace,
            });
        }
    }
    Ok(ids)
}

/// kyaml `ResId.EffectiveNamespace`: a kind kyaml's schema knows as
/// cluster-scoped has no namespace at all (whatever it says), an empty
/// namespace is `default`.
fn effective_namespace<'a>(group: &str, version: &str, kind: &str, namespace: &'a str) -> &'a str {
    let api_version = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    if scope::builtin_scope(&api_version, kind) == Some(false) {
        return "_non_namespaceable_";
    }
    if namespace.is_empty() {
        "default"
    } else {
        namespace
    }
}

/// kyaml `ResId.IsSelectedBy`: empty selector fields match anything;
/// namespaces compare by effective namespace, the selector's taken with the
/// selector's own group, version and kind.
pub(crate) fn is_selected_by(id: &IdRef<'_>, sel: &ResId) -> bool {
    let namespace_matches = || {
        effective_namespace(&sel.group, &sel.version, &sel.kind, &sel.namespace)
            == effective_namespace(id.group, id.version, id.kind, id.namespace)
    };
    (sel.name.is_empty() || sel.name == id.name)
        && (sel.namespace.is_empty() || namespace_matches())
        && (sel.group.is_empty() || sel.group == id.group)
        && (sel.version.is_empty() || sel.version == id.version)
        && (sel.kind.is_empty() || sel.kind == id.kind)
}

/// A selector's annotation and label selector strings, parsed once per target. kyaml
/// parses them again for every resource; the outcome (and the error, reported at the
/// first resource) is the same.
pub(crate) struct ParsedSelector {
    annotations: Result<Vec<labelsel::Requirement>, String>,
    labels: Result<Vec<labelsel::Requirement>, String>,
    /// Neither string is set (a reject without them rejects by id only).
    unset: bool,
}

impl ParsedSelector {
    pub(crate) fn new(sel: &Selector) -> Self {
        ParsedSelector {
            annotations: labelsel::parse(&sel.annotation_selector),
            labels: labelsel::parse(&sel.label_selector),
            unset: sel.annotation_selector.is_empty() && sel.label_selector.is_empty(),
        }
    }

    /// Both strings match. Both are checked (and can fail) whatever the first gives.
    fn matches(&self, node: &Node) -> Result<bool, String> {
        let annotations = matches_selector(node, "annotations", &self.annotations)?;
        let labels = matches_selector(node, "labels", &self.labels)?;
        Ok(annotations && labels)
    }
}

/// A selected target is dropped when a reject's label/annotation selector
/// matches it.
pub(crate) fn select_by_anno_and_label(
    node: &Node,
    select: &ParsedSelector,
    rejects: &[ParsedSelector],
) -> Result<bool, String> {
    if !select.matches(node)? {
        return Ok(false);
    }
    for r in rejects {
        if r.unset {
            continue;
        }
        if r.matches(node)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// kyaml `MatchesLabelSelector` / `MatchesAnnotationSelector`: the selector
/// string against the map under `metadata.<field>`, where a key with a value
/// that is not a scalar is there with an empty value.
fn matches_selector(
    node: &Node,
    field: &str,
    parsed: &Result<Vec<labelsel::Requirement>, String>,
) -> Result<bool, String> {
    let reqs = parsed.as_ref().map_err(Clone::clone)?;
    let map = node.get_path(&["metadata", field]);
    let get = |k: &str| {
        map.and_then(|m| m.get(k))
            .map(|v| v.as_str().unwrap_or_default())
    };
    Ok(labelsel::matches_all(reqs, get))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_selection() {
        let mut n = Node::mapping();
        n.set("apiVersion", Node::string("apps/v1"));
        n.set("kind", Node::string("Deployment"));
        n.ensure_mapping(&["metadata"])
            .set("name", Node::string("web"));
        let ann = n.ensure_mapping(&["metadata", "annotations"]);
        ann.set(PREVIOUS_NAMES, Node::string("old"));
        ann.set(PREVIOUS_KINDS, Node::string("Deployment"));
        ann.set(PREVIOUS_NAMESPACES, Node::string("default"));
        let ids = res_ids(&n).expect("ids");
        assert_eq!(ids.len(), 2);
        let sel = ResId {
            name: "old".into(),
            namespace: "default".into(),
            group: "apps".into(),
            ..Default::default()
        };
        assert!(!is_selected_by(&ids[0], &sel));
        assert!(is_selected_by(&ids[1], &sel));
        assert_eq!(sel.to_string(), "[noKind].[noVer].apps/old.default");
    }
}
