//! Navigation in the built-in Kubernetes schema ([`super::k8s_schema`], generated):
//! kyaml's `SchemaForResourceType`, `Field` and `Elements` over the schema nodes
//! kpt 1.0.0-beta.56 embeds.
//!
//! Only nodes from which a merge list is reachable are generated; every other
//! schema kyaml knows is [`Child::O`] ("a schema, but nothing to merge by key below
//! it"), which differs from "no schema" ([`Child::X`]): kyaml looks for a resource
//! type (`apiVersion` + `kind`) in the data only where it has no schema.

use super::k8s_schema::{DEFS, KINDS};

/// The schema of a field, list element or resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Child {
    /// A generated schema node (index into the node table).
    N(u16),
    /// A known schema with no merge list anywhere below.
    O,
    /// No schema.
    X,
}

/// One schema node, after `$ref` resolution.
#[derive(Debug)]
pub(crate) struct Def {
    /// `Some(keys)` when `x-kubernetes-patch-strategy` includes `merge`: the
    /// `x-kubernetes-list-map-keys`, else the `x-kubernetes-patch-merge-key`, else
    /// none (a list of scalars merged as a set).
    pub merge: Option<&'static [&'static str]>,
    /// Declared `properties`, sorted by name.
    pub props: &'static [(&'static str, Child)],
    /// `additionalProperties` (the schema of every undeclared field).
    pub more: Child,
    /// `items`, only when `type` is exactly `array`.
    pub items: Child,
}

impl Def {
    pub(crate) fn field(&self, key: &str) -> Child {
        match self.props.binary_search_by(|(k, _)| (*k).cmp(key)) {
            Ok(i) => self.props[i].1,
            Err(_) => self.more,
        }
    }
}

/// The node a [`Child::N`] points to.
pub(crate) fn def(i: u16) -> &'static Def {
    &DEFS[usize::from(i)]
}

/// The built-in schema of a resource type, by exact `apiVersion` and `kind`.
pub(crate) fn kind(api_version: &str, kind: &str) -> Child {
    KINDS
        .binary_search_by(|(a, k, _)| (*a, *k).cmp(&(api_version, kind)))
        .map_or(Child::X, |i| KINDS[i].2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(api: &str, k: &str, path: &[&str]) -> Child {
        let mut c = kind(api, k);
        for p in path {
            c = match c {
                Child::N(i) if *p == "[]" => def(i).items,
                Child::N(i) => def(i).field(p),
                other => other,
            };
        }
        c
    }

    fn keys(api: &str, k: &str, p: &[&str]) -> Option<Vec<&'static str>> {
        match path(api, k, p) {
            Child::N(i) => def(i).merge.map(<[_]>::to_vec),
            _ => None,
        }
    }

    #[test]
    fn tables_are_sorted_for_binary_search() {
        assert!(
            KINDS
                .windows(2)
                .all(|w| (w[0].0, w[0].1) < (w[1].0, w[1].1))
        );
        for d in DEFS.iter() {
            assert!(d.props.windows(2).all(|w| w[0].0 < w[1].0));
        }
    }

    #[test]
    fn workload_lists_merge_by_their_kubernetes_keys() {
        let pod = ["spec", "template", "spec"];
        let c = |rest: &[&'static str]| [&pod[..], rest].concat();
        let d = |p: &[&str]| keys("apps/v1", "Deployment", p);
        assert_eq!(d(&c(&["containers"])), Some(vec!["name"]));
        assert_eq!(
            d(&c(&["containers", "[]", "ports"])),
            Some(vec!["containerPort", "protocol"])
        );
        assert_eq!(
            d(&c(&["initContainers", "[]", "volumeMounts"])),
            Some(vec!["mountPath"])
        );
        assert_eq!(d(&c(&["volumes"])), Some(vec!["name"]));
        // atomic in Kubernetes 1.21: replaced wholesale
        assert_eq!(d(&c(&["tolerations"])), None);
        assert_eq!(d(&c(&["containers", "[]", "args"])), None);
        assert_eq!(d(&["metadata", "finalizers"]), Some(vec![]));
        assert_eq!(
            keys(
                "batch/v1beta1",
                "CronJob",
                &[
                    "spec",
                    "jobTemplate",
                    "spec",
                    "template",
                    "spec",
                    "containers",
                    "[]",
                    "env"
                ]
            ),
            Some(vec!["name"])
        );
        assert_eq!(
            keys("v1", "Service", &["spec", "ports"]),
            Some(vec!["port", "protocol"])
        );
    }

    #[test]
    fn unknown_versions_and_later_fields_have_no_merge_keys() {
        // apps/v1beta1 is gone from Kubernetes 1.21; resizePolicy came after it.
        assert_eq!(kind("apps/v1beta1", "Deployment"), Child::X);
        assert_eq!(
            path(
                "apps/v1",
                "Deployment",
                &[
                    "spec",
                    "template",
                    "spec",
                    "containers",
                    "[]",
                    "resizePolicy"
                ]
            ),
            Child::X
        );
        assert_eq!(path("v1", "ConfigMap", &["data"]), Child::O);
    }
}
