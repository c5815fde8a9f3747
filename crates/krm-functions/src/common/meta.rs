//! Reading and writing the KRM header of an item (apiVersion, kind, metadata)
//! the way the catalog's Go SDK does, plus the annotations kpt uses for
//! bookkeeping, which functions must neither count nor touch.

use kpt::resource_list::FileRef;
use kpt::yaml::Node;

/// kyaml's path annotation (and its legacy twin).
pub const PATH: &str = "internal.config.kubernetes.io/path";
pub const LEGACY_PATH: &str = "config.kubernetes.io/path";
/// kyaml's index annotation (and its legacy twin).
pub const INDEX: &str = "internal.config.kubernetes.io/index";
pub const LEGACY_INDEX: &str = "config.kubernetes.io/index";
/// Marks resources that are not applied to clusters.
pub const LOCAL_CONFIG: &str = "config.kubernetes.io/local-config";
/// `group|Kind|namespace|name` of the resource in its upstream package.
pub const UPSTREAM_IDENTIFIER: &str = "internal.kpt.dev/upstream-identifier";
/// Apply-time dependency annotation, rewritten when names or namespaces change.
pub const DEPENDS_ON: &str = "config.kubernetes.io/depends-on";

/// The scalar text at `path`, or `""` (SDK `GetString` semantics).
pub fn str_at<'a>(node: &'a Node, path: &[&str]) -> &'a str {
    match node.get_path(path) {
        Some(n) if !n.is_null() => n.as_str().unwrap_or(""),
        _ => "",
    }
}

pub fn api_version(node: &Node) -> &str {
    str_at(node, &["apiVersion"])
}

pub fn kind(node: &Node) -> &str {
    str_at(node, &["kind"])
}

pub fn name(node: &Node) -> &str {
    str_at(node, &["metadata", "name"])
}

pub fn namespace(node: &Node) -> &str {
    str_at(node, &["metadata", "namespace"])
}

/// True when `metadata.namespace` exists (even empty), SDK `HasNamespace`.
pub fn has_namespace(node: &Node) -> bool {
    node.get_path(&["metadata", "namespace"])
        .is_some_and(Node::is_scalar)
}

/// One annotation's value, `""` when absent.
pub fn annotation<'a>(node: &'a Node, key: &str) -> &'a str {
    node.get_path(&["metadata", "annotations"])
        .and_then(|a| a.get(key))
        .and_then(Node::as_str)
        .unwrap_or("")
}

/// Sets an annotation, creating `metadata.annotations` when needed; an
/// existing value node is replaced (its comments kept), a new key appended.
pub fn set_annotation(node: &mut Node, key: &str, value: &str) {
    sdk_set_string(
        node.ensure_mapping(&["metadata", "annotations"]),
        key,
        value,
    );
}

/// Sets `key` to a string the way the Go SDK's `SetNestedString` does: the
/// value node is replaced by a fresh string node (comments kept), so a quoted
/// style is not preserved. A plain scalar already holding the same string is
/// left alone, which emits identically and keeps the document unmodified.
pub fn sdk_set_string(map: &mut Node, key: &str, value: &str) {
    if let Some(v) = map.get(key)
        && v.is_scalar()
        && v.as_str() == Some(value)
        && v.resolved_tag() == "!!str"
        && matches!(v.style, kpt::yaml::Style::Plain | kpt::yaml::Style::Any)
    {
        return;
    }
    map.set(key, Node::string(value));
}

/// SDK `IsLocalConfig`: the annotation is set to anything but `""`/`"false"`.
pub fn is_local_config(node: &Node) -> bool {
    let v = annotation(node, LOCAL_CONFIG);
    !(v.is_empty() || v == "false")
}

/// The group part of an apiVersion (`""` for the core group).
pub fn group(api_version: &str) -> &str {
    api_version.split_once('/').map_or("", |(g, _)| g)
}

/// The version part of an apiVersion.
pub fn version(api_version: &str) -> &str {
    api_version.split_once('/').map_or(api_version, |(_, v)| v)
}

/// SDK `IsGVK(group, version, kind)`: an empty argument is a wildcard, and a
/// part the object itself lacks is not compared (a core-group object passes
/// any group test).
pub fn is_gvk(node: &Node, group: &str, version: &str, kind: &str) -> bool {
    let av = api_version(node);
    let (og, ov, ok) = (self::group(av), self::version(av), self::kind(node));
    let differs = |mine: &str, want: &str| !mine.is_empty() && !want.is_empty() && mine != want;
    !(differs(ok, kind) || differs(og, group) || differs(ov, version))
}

/// Where the item came from, for result `file` references.
pub fn file_ref(node: &Node) -> Option<FileRef> {
    let mut path = annotation(node, PATH);
    if path.is_empty() {
        path = annotation(node, LEGACY_PATH);
    }
    if path.is_empty() {
        return None;
    }
    let mut index = annotation(node, INDEX);
    if index.is_empty() {
        index = annotation(node, LEGACY_INDEX);
    }
    Some(FileRef {
        path: path.to_string(),
        index: index.parse().unwrap_or(0),
    })
}

/// SDK `ShortString`, used in messages.
pub fn short_string(node: &Node) -> String {
    format!(
        "Resource(apiVersion={}, kind={}, namespace={}, name={})",
        api_version(node),
        kind(node),
        namespace(node),
        name(node)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(api: &str, kind: &str) -> Node {
        let mut n = Node::mapping();
        n.set("apiVersion", Node::string(api));
        n.set("kind", Node::string(kind));
        n.ensure_mapping(&["metadata"])
            .set("name", Node::string("x"));
        n
    }

    #[test]
    fn gvk_wildcards() {
        let d = obj("apps/v1", "Deployment");
        assert!(is_gvk(&d, "apps", "v1", "Deployment"));
        assert!(is_gvk(&d, "", "", "Deployment"));
        assert!(is_gvk(&d, "apps", "", "Deployment"));
        assert!(!is_gvk(&d, "batch", "", "Deployment"));
        assert!(!is_gvk(&d, "apps", "v2", "Deployment"));
        assert!(!is_gvk(&d, "apps", "v1", "Service"));
        let core = obj("v1", "Service");
        assert!(
            is_gvk(&core, "batch", "", "Service"),
            "core objects pass group tests"
        );
        assert_eq!(group("apps/v1"), "apps");
        assert_eq!(group("v1"), "");
        assert_eq!(version("v1"), "v1");
    }

    #[test]
    fn local_config_and_file_ref() {
        let mut d = obj("v1", "ConfigMap");
        assert!(!is_local_config(&d));
        set_annotation(&mut d, LOCAL_CONFIG, "false");
        assert!(!is_local_config(&d));
        set_annotation(&mut d, LOCAL_CONFIG, "yes");
        assert!(is_local_config(&d));
        assert!(file_ref(&d).is_none());
        set_annotation(&mut d, LEGACY_PATH, "a.yaml");
        set_annotation(&mut d, INDEX, "2");
        let f = file_ref(&d).expect("path set");
        assert_eq!((f.path.as_str(), f.index), ("a.yaml", 2));
    }
}
