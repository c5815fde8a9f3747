//! The set of served resources, grouped by API group and version.

use std::sync::{Arc, RwLock};

use porch_core::store::MetadataStore;

use crate::generic::GenericBackend;
use crate::hub::WatchHub;
use crate::resource::{Resource, ResourceBackend, ResourceKind};

/// Every resource the server serves, in registration order (which is discovery order).
#[derive(Default, Clone)]
pub struct Registry {
    resources: Vec<Resource>,
    /// Version preference per group, most preferred first (the order versions were added in,
    /// unless `prefer` was called).
    preferred: Vec<(String, String)>,
}

impl Registry {
    pub fn new() -> Self {
        Self::default()
    }

    /// Serves `kind` from `backend`.
    pub fn add(
        &mut self,
        kind: ResourceKind,
        backend: Arc<dyn ResourceBackend>,
    ) -> Arc<ResourceKind> {
        let kind = Arc::new(kind);
        self.resources.push(Resource {
            kind: kind.clone(),
            backend,
            rows: Arc::default(),
        });
        kind
    }

    /// Serves `kind` from the generic store backend.
    pub fn add_generic(
        &mut self,
        kind: ResourceKind,
        store: &Arc<dyn MetadataStore>,
        hub: &Arc<WatchHub>,
    ) -> Resource {
        let kind = Arc::new(ResourceKind {
            garbage_collected: true,
            ..kind
        });
        let backend: Arc<dyn ResourceBackend> = Arc::new(GenericBackend::new(
            kind.clone(),
            store.clone(),
            hub.clone(),
        ));
        let r = Resource {
            kind,
            backend,
            rows: Arc::default(),
        };
        self.resources.push(r.clone());
        r
    }

    /// Stops serving every version of `group`/`plural`; returns how many were served.
    pub fn remove(&mut self, group: &str, plural: &str) -> usize {
        let before = self.resources.len();
        self.resources
            .retain(|r| !(r.kind.group == group && r.kind.plural == plural));
        before - self.resources.len()
    }

    /// A served version of the kind `kind` of `group` (what an ownerReference names).
    pub fn find_kind(&self, group: &str, kind: &str) -> Option<&Resource> {
        self.resources
            .iter()
            .find(|r| r.kind.group == group && r.kind.kind == kind)
    }

    /// Marks `version` as the preferred version of `group`.
    pub fn prefer(&mut self, group: &str, version: &str) {
        self.preferred.retain(|(g, _)| g != group);
        self.preferred.push((group.into(), version.into()));
    }

    pub fn resources(&self) -> &[Resource] {
        &self.resources
    }

    pub fn find(&self, group: &str, version: &str, plural: &str) -> Option<&Resource> {
        self.resources
            .iter()
            .find(|r| r.kind.group == group && r.kind.version == version && r.kind.plural == plural)
    }

    /// Groups (core group excluded) with their versions, preferred version first.
    pub fn groups(&self) -> Vec<(String, Vec<String>)> {
        let mut out: Vec<(String, Vec<String>)> = Vec::new();
        for r in &self.resources {
            if r.kind.group.is_empty() {
                continue;
            }
            match out.iter_mut().find(|(g, _)| *g == r.kind.group) {
                Some((_, versions)) => {
                    if !versions.contains(&r.kind.version) {
                        versions.push(r.kind.version.clone());
                    }
                }
                None => out.push((r.kind.group.clone(), vec![r.kind.version.clone()])),
            }
        }
        for (g, versions) in &mut out {
            if let Some((_, p)) = self.preferred.iter().find(|(pg, _)| pg == g)
                && let Some(i) = versions.iter().position(|v| v == p)
            {
                let v = versions.remove(i);
                versions.insert(0, v);
            }
        }
        out
    }

    /// Resources of one group-version (`""` group = core).
    pub fn in_group_version<'a>(
        &'a self,
        group: &'a str,
        version: &'a str,
    ) -> impl Iterator<Item = &'a Resource> {
        self.resources
            .iter()
            .filter(move |r| r.kind.group == group && r.kind.version == version)
    }
}

/// The registry as served: an immutable snapshot, replaced whole when kinds are added or
/// removed at runtime (CustomResourceDefinitions). A request takes the current snapshot once
/// (a read lock held only to clone an `Arc`, never across `.await`) and uses it throughout, so
/// serving costs the same as with a fixed registry.
#[derive(Clone, Default)]
pub struct LiveRegistry(Arc<RwLock<Arc<Registry>>>);

impl From<Registry> for LiveRegistry {
    fn from(reg: Registry) -> Self {
        Self(Arc::new(RwLock::new(Arc::new(reg))))
    }
}

impl LiveRegistry {
    pub fn new(reg: Registry) -> Self {
        reg.into()
    }

    /// The current snapshot.
    pub fn load(&self) -> Arc<Registry> {
        self.0.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Changes the registry: `f` edits a copy that then replaces the snapshot. Writers are
    /// serialized; readers keep the snapshot they took.
    pub fn update<T>(&self, f: impl FnOnce(&mut Registry) -> T) -> T {
        let mut guard = self.0.write().unwrap_or_else(|e| e.into_inner());
        let mut next = Registry::clone(&guard);
        let out = f(&mut next);
        *guard = Arc::new(next);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_registry_swaps_snapshots() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store: Arc<dyn MetadataStore> = Arc::new(
            porch_store::RedbStore::open(&dir.path().join("s.redb"), Default::default())
                .expect("store"),
        );
        let hub = WatchHub::attach(&store, 16);
        let live = LiveRegistry::default();
        let before = live.load();
        let kind = ResourceKind::new("example.com", "v1", "Widget", "widgets");
        live.update(|r| {
            r.add_generic(kind, &store, &hub);
        });
        assert!(before.find("example.com", "v1", "widgets").is_none());
        let now = live.load();
        assert!(now.find("example.com", "v1", "widgets").is_some());
        assert!(now.find_kind("example.com", "Widget").is_some());
        assert_eq!(live.update(|r| r.remove("example.com", "widgets")), 1);
        assert!(live.load().find("example.com", "v1", "widgets").is_none());
        assert!(
            now.find("example.com", "v1", "widgets").is_some(),
            "old snapshot unchanged"
        );
    }
}
