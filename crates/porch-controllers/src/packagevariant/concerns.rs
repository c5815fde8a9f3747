//! Which PackageVariants a package revision change concerns, kept in memory from the
//! variants' watch, so that an engine event costs a few hash lookups instead of a listing
//! (and a JSON decoding) of every variant of its namespace.
//!
//! With 1,000 variants a roll-out makes thousands of engine events; listing the variants for
//! each burst made the feed quadratic in the number of variants (it was the largest cost of
//! the roll-out). Entries of a deleted variant may stay until its name is reused: they can
//! only cause a needless wake, never a missed one.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use serde_json::Value;

use super::runner::Key;

/// What a variant is concerned by.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Concern {
    /// Its upstream or downstream package: `(namespace, repository, package)`.
    Package(String, String, String),
    /// Revisions owned by it (an ownerReference to its uid).
    Owner(String),
    /// A revision it lists as a downstream target: `(namespace, revision name)`.
    Target(String, String),
}

#[derive(Default)]
struct Inner {
    of_variant: HashMap<Key, Vec<Concern>>,
    variants: HashMap<Concern, HashSet<Key>>,
}

/// The index: updated with every variant seen, asked for the variants of a revision.
#[derive(Default)]
pub struct ConcernIndex(Mutex<Inner>);

fn concerns_of(pv: &Value, namespace: &str) -> Vec<Concern> {
    let s = |p: &str| pv.pointer(p).and_then(Value::as_str);
    let mut out = Vec::new();
    for side in ["upstream", "downstream"] {
        if let (Some(repo), Some(package)) = (
            s(&format!("/spec/{side}/repo")),
            s(&format!("/spec/{side}/package")),
        ) {
            out.push(Concern::Package(
                namespace.to_owned(),
                repo.to_owned(),
                package.to_owned(),
            ));
        }
    }
    if let Some(uid) = s("/metadata/uid").filter(|u| !u.is_empty()) {
        out.push(Concern::Owner(uid.to_owned()));
    }
    for target in pv
        .pointer("/status/downstreamTargets")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(name) = target.get("name").and_then(Value::as_str) {
            out.push(Concern::Target(namespace.to_owned(), name.to_owned()));
        }
    }
    out
}

impl ConcernIndex {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Records what variant `pv` (as last seen) is concerned by, replacing what it was.
    pub fn update(&self, pv: &Value) {
        let s = |p: &str| pv.pointer(p).and_then(Value::as_str).map(str::to_owned);
        let (Some(ns), Some(name)) = (s("/metadata/namespace"), s("/metadata/name")) else {
            return;
        };
        let concerns = concerns_of(pv, &ns);
        let key: Key = (ns, name);
        let mut inner = self.lock();
        if let Some(old) = inner.of_variant.remove(&key) {
            for c in old {
                if let Some(set) = inner.variants.get_mut(&c) {
                    set.remove(&key);
                    if set.is_empty() {
                        inner.variants.remove(&c);
                    }
                }
            }
        }
        for c in &concerns {
            inner
                .variants
                .entry(c.clone())
                .or_default()
                .insert(key.clone());
        }
        inner.of_variant.insert(key, concerns);
    }

    /// The variants concerned by a change of `pr`: its package is one's upstream or
    /// downstream, one owns it, or one lists it as a target.
    pub fn concerned(&self, pr: &porch_engine::PackageRevision) -> HashSet<Key> {
        let ns = pr.namespace.clone();
        let mut asked = vec![
            Concern::Package(
                ns.clone(),
                pr.key.repository.as_str().to_owned(),
                pr.key.package.as_str().to_owned(),
            ),
            Concern::Target(ns, pr.name().to_string()),
        ];
        asked.extend(
            pr.owner_references
                .iter()
                .map(|o| Concern::Owner(o.uid.clone())),
        );
        let inner = self.lock();
        asked
            .iter()
            .filter_map(|c| inner.variants.get(c))
            .flatten()
            .cloned()
            .collect()
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().of_variant.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packagevariant::testing::{owned_by, pr};
    use porch_core::lifecycle::Lifecycle::Published;
    use serde_json::json;

    fn pv(name: &str, uid: &str, up: &str, targets: &[&str]) -> Value {
        json!({
            "metadata": {"namespace": crate::packagevariant::testing::NS, "name": name, "uid": uid},
            "spec": {"upstream": {"repo": "blueprints", "package": up},
                     "downstream": {"repo": "deployments", "package": format!("{name}-down")}},
            "status": {"downstreamTargets": targets.iter().map(|t| json!({"name": t})).collect::<Vec<_>>()},
        })
    }

    fn names(keys: HashSet<Key>) -> Vec<String> {
        let mut v: Vec<String> = keys.into_iter().map(|(_, n)| n).collect();
        v.sort();
        v
    }

    #[test]
    fn a_revision_change_concerns_the_variants_naming_or_owning_it() {
        let idx = ConcernIndex::default();
        idx.update(&pv("a", "uid-a", "foo", &["old.baz.packagevariant-1"]));
        idx.update(&pv("b", "uid-b", "foo", &[]));
        idx.update(&pv("c", "uid-c", "other", &[]));
        assert_eq!(
            names(idx.concerned(&pr("blueprints", "foo", "v2", 2, Published))),
            ["a", "b"]
        );
        assert_eq!(
            names(idx.concerned(&pr("deployments", "a-down", "ws", 1, Published))),
            ["a"]
        );
        assert_eq!(
            names(idx.concerned(&pr("old", "baz", "packagevariant-1", 1, Published))),
            ["a"]
        );
        assert_eq!(
            names(idx.concerned(&owned_by(pr("x", "y", "ws", 1, Published), "uid-c"))),
            ["c"]
        );
        assert!(
            idx.concerned(&pr("blueprints", "bar", "v1", 1, Published))
                .is_empty()
        );
        assert!(
            idx.concerned(&pr("deployments", "foo", "v1", 1, Published))
                .is_empty()
        );
    }

    #[test]
    fn an_update_replaces_what_a_variant_was_concerned_by() {
        let idx = ConcernIndex::default();
        idx.update(&pv("a", "uid-a", "foo", &["old.baz.packagevariant-1"]));
        idx.update(&pv("a", "uid-a", "bar", &[]));
        assert_eq!(idx.len(), 1);
        assert!(
            idx.concerned(&pr("blueprints", "foo", "v1", 1, Published))
                .is_empty()
        );
        assert!(
            idx.concerned(&pr("old", "baz", "packagevariant-1", 1, Published))
                .is_empty()
        );
        assert_eq!(
            names(idx.concerned(&pr("blueprints", "bar", "v1", 1, Published))),
            ["a"]
        );
    }
}
