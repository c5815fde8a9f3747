//! What the PackageVariantSets of each namespace depend on beyond their own PackageVariants
//! and the Repositories: the kinds their `objectSelector`s select and their upstream package.
//! The feeds wake a namespace's sets only for changes of those, so a set with nothing to do
//! is not reconciled because some unrelated object (a ConfigMap, a draft) was written.

use std::collections::{BTreeMap, HashSet};

use serde_json::Value;

/// One set's dependencies.
#[derive(Debug, Clone, Default, PartialEq)]
struct SetInterest {
    /// `(apiVersion, kind)` of every `objectSelector` target.
    kinds: Vec<(String, String)>,
    /// The upstream `(repo, package)`.
    upstream: Option<(String, String)>,
}

/// The dependencies of every known set, by `(namespace, name)`.
#[derive(Debug, Default)]
pub struct Interest {
    sets: BTreeMap<(String, String), SetInterest>,
}

impl Interest {
    /// Records set `obj` (forgets it when `deleted`).
    pub fn update(&mut self, obj: &Value, deleted: bool) {
        let s = |p: &str| obj.pointer(p).and_then(Value::as_str).unwrap_or("");
        let key = (
            s("/metadata/namespace").to_owned(),
            s("/metadata/name").to_owned(),
        );
        if deleted {
            self.sets.remove(&key);
            return;
        }
        let kinds = obj
            .pointer("/spec/targets")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|t| t.get("objectSelector"))
            .map(|sel| {
                let f = |k: &str| sel.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
                (f("apiVersion"), f("kind"))
            })
            .collect();
        let upstream = match (s("/spec/upstream/repo"), s("/spec/upstream/package")) {
            ("", _) | (_, "") => None,
            (r, p) => Some((r.to_owned(), p.to_owned())),
        };
        self.sets.insert(key, SetInterest { kinds, upstream });
    }

    /// Whether some set of `namespace` takes `repo`/`package` as its upstream.
    pub fn wants_upstream(&self, namespace: &str, repo: &str, package: &str) -> bool {
        self.in_namespace(namespace).any(|i| {
            i.upstream
                .as_ref()
                .is_some_and(|(r, p)| r == repo && p == package)
        })
    }

    /// `(namespace, store resource)` of every selected kind; `resolve` maps an `apiVersion`
    /// and kind to the store's resource name (`<group>/<plural>`), `None` while unserved.
    pub fn selected(
        &self,
        resolve: impl Fn(&str, &str) -> Option<String>,
    ) -> HashSet<(String, String)> {
        let mut out = HashSet::new();
        for ((ns, _), i) in &self.sets {
            for (api_version, kind) in &i.kinds {
                if let Some(resource) = resolve(api_version, kind) {
                    out.insert((ns.clone(), resource));
                }
            }
        }
        out
    }

    fn in_namespace<'a>(&'a self, namespace: &'a str) -> impl Iterator<Item = &'a SetInterest> {
        self.sets
            .iter()
            .filter(move |((ns, _), _)| ns == namespace)
            .map(|(_, i)| i)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::Interest;

    fn set(ns: &str, name: &str, targets: serde_json::Value) -> serde_json::Value {
        json!({"metadata": {"namespace": ns, "name": name},
               "spec": {"upstream": {"repo": "blueprints", "package": "foo", "revision": 1},
                        "targets": targets}})
    }

    #[test]
    fn selected_kinds_are_per_namespace_and_forgotten_with_the_set() {
        let mut i = Interest::default();
        i.update(
            &set(
                "a",
                "s",
                json!([{"objectSelector": {"apiVersion": "infra.nephio.org/v1alpha1", "kind": "WorkloadCluster"}},
                       {"repositories": [{"name": "r"}]}]),
            ),
            false,
        );
        i.update(
            &set("b", "s", json!([{"repositories": [{"name": "r"}]}])),
            false,
        );
        let resolve = |av: &str, k: &str| {
            (av == "infra.nephio.org/v1alpha1" && k == "WorkloadCluster")
                .then(|| "infra.nephio.org/workloadclusters".to_owned())
        };
        let sel = i.selected(resolve);
        assert_eq!(sel.len(), 1);
        assert!(sel.contains(&("a".into(), "infra.nephio.org/workloadclusters".into())));
        assert!(i.wants_upstream("b", "blueprints", "foo"));
        assert!(!i.wants_upstream("b", "blueprints", "bar"));
        assert!(!i.wants_upstream("c", "blueprints", "foo"));

        i.update(&set("a", "s", json!([])), true);
        assert!(i.selected(resolve).is_empty());
        assert!(!i.wants_upstream("a", "blueprints", "foo"));
    }

    #[test]
    fn an_unserved_kind_selects_nothing_yet() {
        let mut i = Interest::default();
        i.update(
            &set(
                "a",
                "s",
                json!([{"objectSelector": {"apiVersion": "x/v1", "kind": "Nope"}}]),
            ),
            false,
        );
        assert!(i.selected(|_, _| None).is_empty());
    }
}
