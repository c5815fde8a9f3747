//! The set of served resources, grouped by API group and version.

use std::sync::Arc;

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
        let kind = Arc::new(kind);
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
