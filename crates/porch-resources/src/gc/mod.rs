//! The garbage collector: what kube-controller-manager's garbage collector does for objects
//! with `metadata.ownerReferences`, over every store-backed kind (ConfigMaps, Secrets,
//! Namespaces, Repositories, PackageVariants, PackageVariantSets, custom resources, CRDs).
//!
//! - When an owner is deleted, each dependent naming its uid is deleted (background
//!   propagation) if no other owner of it remains, or else loses the references to the owners
//!   that are gone. `Foreground` deletes are served as background ones: the owner goes first.
//!   `blockOwnerDeletion` needs nothing in background mode.
//! - A delete with `propagationPolicy: Orphan` leaves the owner behind the `orphan` finalizer
//!   (set by the REST layer); the collector removes the owner's references from its dependents,
//!   then the finalizer, which deletes the owner.
//! - Package revisions (served by the engine, not the store) are neither collected nor taken as
//!   owners: the PackageVariant controller applies its `deletionPolicy` to the revisions it
//!   owns from its finalizer, before the PackageVariant goes; an ownerReference to a package
//!   revision (or to a kind this server does not serve) keeps its dependent.
//!
//! The collector indexes owner uid → dependents from store events. It is restart-safe: on
//! start (and after falling behind the event stream, and every few minutes) it lists every
//! store-backed kind, rebuilds the index and collects what lost its owners meanwhile.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use porch_apiserver::{
    ApiError, Expect, LiveRegistry, ORPHAN_FINALIZER, Registry, RequestContext, Resource, WatchHub,
    blocking, delete_object,
};
use porch_core::ErrorKind;
use porch_core::store::{EventType, ListQuery, MetadataStore, ObjectKey, StoreEvent};
use serde_json::{Value, json};
use tokio::sync::broadcast;

mod index;

use index::Index;

const RESYNC: Duration = Duration::from_secs(300);
const RETRIES: usize = 5;

fn owner_refs(obj: &Value) -> &[Value] {
    obj.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

fn owner_uids(obj: &Value) -> Vec<String> {
    owner_refs(obj)
        .iter()
        .filter_map(|r| r.get("uid").and_then(Value::as_str))
        .map(String::from)
        .collect()
}

fn uid(obj: &Value) -> &str {
    obj.pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// Deleted, but kept by the `orphan` finalizer.
fn awaits_orphaning(obj: &Value) -> bool {
    obj.pointer("/metadata/deletionTimestamp").is_some()
        && obj
            .pointer("/metadata/finalizers")
            .and_then(Value::as_array)
            .is_some_and(|f| f.iter().any(|x| x.as_str() == Some(ORPHAN_FINALIZER)))
}

/// The store-backed kind stored under `resource`, if any.
fn store_backed<'a>(reg: &'a Registry, resource: &str) -> Option<&'a Resource> {
    // Called for every store event: compares without allocating (`<group>/<plural>`).
    let (group, plural) = resource.split_once('/')?;
    reg.resources()
        .iter()
        .find(|r| r.kind.garbage_collected && r.kind.group == group && r.kind.plural == plural)
}

/// Runs the collector until the store's event stream closes.
pub async fn run(live: LiveRegistry, store: Arc<dyn MetadataStore>, hub: Arc<WatchHub>) {
    let mut gc = Collector {
        live,
        store,
        index: Index::default(),
        resources: HashSet::new(),
        listed_at: HashMap::new(),
        ctx: RequestContext::system("system:serviceaccount:kube-system:generic-garbage-collector"),
    };
    let mut sub = hub.subscribe();
    gc.sweep().await;
    let mut resync = tokio::time::interval(RESYNC);
    resync.tick().await;
    loop {
        tokio::select! {
            r = sub.recv() => match r {
                Ok(batch) => {
                    for ev in batch.iter() {
                        gc.on_event(ev).await;
                    }
                }
                Err(broadcast::error::RecvError::Lagged(_)) => gc.sweep().await,
                Err(broadcast::error::RecvError::Closed) => return,
            },
            _ = resync.tick() => gc.sweep().await,
        }
    }
}

struct Collector {
    live: LiveRegistry,
    store: Arc<dyn MetadataStore>,
    index: Index,
    /// Store resources of store-backed kinds seen so far: a CRD's objects are deleted after
    /// its kind stopped being served, and their owners' dependents must still be collected.
    resources: HashSet<String>,
    /// The resourceVersion each resource was last listed at: older events still queued
    /// must not overwrite what the list showed.
    listed_at: HashMap<String, u64>,
    ctx: RequestContext,
}

impl Collector {
    async fn on_event(&mut self, ev: &StoreEvent) {
        let key = &ev.object.key;
        if !self.resources.contains(&key.resource) {
            if store_backed(&self.live.load(), &key.resource).is_none() {
                return;
            }
            self.resources.insert(key.resource.clone());
        }
        let Ok(obj) = serde_json::from_slice::<Value>(&ev.object.data) else {
            return;
        };
        let stale = self
            .listed_at
            .get(&key.resource)
            .is_some_and(|rv| ev.object.resource_version <= *rv);
        match ev.event_type {
            EventType::Added | EventType::Modified if stale => {}
            EventType::Added | EventType::Modified => {
                let uids = owner_uids(&obj);
                // New owners are checked as kube's graph builder does: a reference to an
                // owner that does not exist (any more) is collected right away.
                let new_owners = uids.iter().any(|u| {
                    !self
                        .index
                        .owners
                        .get(key)
                        .is_some_and(|old| old.contains(u))
                });
                self.index.set(key, uids);
                if awaits_orphaning(&obj) {
                    self.orphan(key, &obj).await;
                } else if new_owners {
                    self.collect(key).await;
                }
            }
            EventType::Deleted => {
                self.index.remove(key);
                for dep in self.index.dependents_of(uid(&obj)) {
                    self.collect(&dep).await;
                }
            }
        }
    }

    /// Rebuilds the index from the store and collects every dependent whose owners are gone.
    async fn sweep(&mut self) {
        let reg = self.live.load();
        let mut resources: Vec<String> = reg
            .resources()
            .iter()
            .filter(|r| r.kind.garbage_collected)
            .map(|r| r.kind.store_resource())
            .collect();
        resources.sort();
        resources.dedup();
        let store = self.store.clone();
        let listed = blocking(move || {
            let mut out = Vec::new();
            let mut at = Vec::new();
            for resource in resources {
                let page = store.list(&ListQuery {
                    resource: resource.clone(),
                    ..ListQuery::default()
                })?;
                out.extend(page.items);
                at.push((resource, page.resource_version));
            }
            Ok((at, out))
        })
        .await;
        let (at, objects) = match listed {
            Ok(l) => l,
            Err(e) => {
                tracing::warn!("garbage collector: cannot list the store: {e}");
                return;
            }
        };
        for (resource, rv) in at {
            self.resources.insert(resource.clone());
            self.listed_at.insert(resource, rv);
        }
        self.index = Index::default();
        let mut orphaning = Vec::new();
        for o in objects {
            let Ok(obj) = serde_json::from_slice::<Value>(&o.data) else {
                continue;
            };
            self.index.set(&o.key, owner_uids(&obj));
            if awaits_orphaning(&obj) {
                orphaning.push((o.key, obj));
            }
        }
        for (key, obj) in orphaning {
            self.orphan(&key, &obj).await;
        }
        let dependents: Vec<ObjectKey> = self.index.owners.keys().cloned().collect();
        for dep in dependents {
            self.collect(&dep).await;
        }
    }

    /// Whether the owner an ownerReference names exists (same uid). Owners of kinds that are
    /// not store-backed, or not served, count as existing: they are never collected for.
    async fn owner_exists(&self, reg: &Registry, namespace: &str, r: &Value) -> bool {
        let api_version = r.get("apiVersion").and_then(Value::as_str).unwrap_or("");
        let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
        let kind = r.get("kind").and_then(Value::as_str).unwrap_or("");
        let name = r.get("name").and_then(Value::as_str).unwrap_or("");
        let Some(owner) = reg.find_kind(group, kind) else {
            return true;
        };
        if !owner.kind.garbage_collected {
            return true;
        }
        let ns = if owner.kind.namespaced { namespace } else { "" };
        if owner.kind.namespaced && ns.is_empty() {
            // A cluster-scoped dependent cannot be owned by a namespaced object: unresolvable.
            return true;
        }
        match owner.backend.get(&self.ctx, ns, name).await {
            Ok(o) => uid(&o) == r.get("uid").and_then(Value::as_str).unwrap_or(""),
            Err(e) => e.kind != ErrorKind::NotFound,
        }
    }

    /// A dependent whose owner may be gone: deleted when no owner remains, or stripped of the
    /// references to the owners that are gone.
    async fn collect(&mut self, key: &ObjectKey) {
        for _ in 0..RETRIES {
            match self.collect_once(key).await {
                Err(e) if e.kind == ErrorKind::Conflict => continue,
                Err(e) if e.kind == ErrorKind::NotFound => return,
                Err(e) => {
                    tracing::warn!(%key, "garbage collector: {}", e.message);
                    return;
                }
                Ok(()) => return,
            }
        }
    }

    async fn collect_once(&mut self, key: &ObjectKey) -> Result<(), ApiError> {
        let reg = self.live.load();
        let Some(resource) = store_backed(&reg, &key.resource) else {
            return Ok(());
        };
        let obj = resource
            .backend
            .get(&self.ctx, &key.namespace, &key.name)
            .await?;
        let refs = owner_refs(&obj).to_vec();
        let mut gone = HashSet::new();
        for r in &refs {
            if !self.owner_exists(&reg, &key.namespace, r).await {
                gone.insert(
                    r.get("uid")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                );
            }
        }
        if gone.is_empty() {
            return Ok(());
        }
        if gone.len() == refs.len() {
            if obj.pointer("/metadata/deletionTimestamp").is_some() {
                return Ok(());
            }
            tracing::info!(%key, "garbage collector: deleting a dependent whose owners are gone");
            let options = json!({"preconditions": {"uid": uid(&obj)}});
            delete_object(
                resource,
                &self.ctx,
                &key.namespace,
                &key.name,
                Some(&options),
            )
            .await?;
            return Ok(());
        }
        self.drop_refs(resource, key, obj, &gone).await
    }

    /// Writes `obj` without the ownerReferences to `uids`.
    async fn drop_refs(
        &self,
        resource: &Resource,
        key: &ObjectKey,
        mut obj: Value,
        uids: &HashSet<String>,
    ) -> Result<(), ApiError> {
        let rv = porch_apiserver_rv(&obj)?;
        let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
            return Ok(());
        };
        let Some(refs) = meta
            .get_mut("ownerReferences")
            .and_then(Value::as_array_mut)
        else {
            return Ok(());
        };
        let before = refs.len();
        refs.retain(|r| {
            !r.get("uid")
                .and_then(Value::as_str)
                .is_some_and(|u| uids.contains(u))
        });
        if refs.len() == before {
            return Ok(());
        }
        if refs.is_empty() {
            meta.remove("ownerReferences");
        }
        resource
            .backend
            .update(
                &self.ctx,
                &key.namespace,
                &key.name,
                obj,
                Expect::ResourceVersion(rv),
            )
            .await?;
        Ok(())
    }

    /// An owner deleted with `propagationPolicy: Orphan`: its dependents lose their reference
    /// to it, then the `orphan` finalizer goes (and with the last finalizer, the owner).
    async fn orphan(&mut self, key: &ObjectKey, owner: &Value) {
        let owner_uid = uid(owner).to_string();
        let reg = self.live.load();
        let uids = HashSet::from([owner_uid.clone()]);
        for dep in self.index.dependents_of(&owner_uid) {
            let Some(resource) = store_backed(&reg, &dep.resource) else {
                continue;
            };
            for _ in 0..RETRIES {
                let result = match resource
                    .backend
                    .get(&self.ctx, &dep.namespace, &dep.name)
                    .await
                {
                    Ok(obj) => self.drop_refs(resource, &dep, obj, &uids).await,
                    Err(e) => Err(e),
                };
                match result {
                    Err(e) if e.kind == ErrorKind::Conflict => continue,
                    Err(e) if e.kind == ErrorKind::NotFound => break,
                    Err(e) => {
                        // The owner stays until every dependent is orphaned.
                        tracing::warn!(key = %dep, "garbage collector: cannot orphan: {}", e.message);
                        return;
                    }
                    Ok(()) => break,
                }
            }
        }
        let Some(resource) = store_backed(&reg, &key.resource) else {
            return;
        };
        for _ in 0..RETRIES {
            match self
                .remove_orphan_finalizer(resource, key, &owner_uid)
                .await
            {
                Err(e) if e.kind == ErrorKind::Conflict => continue,
                Err(e) if e.kind == ErrorKind::NotFound => return,
                Err(e) => {
                    tracing::warn!(%key, "garbage collector: {}", e.message);
                    return;
                }
                Ok(()) => return,
            }
        }
    }

    async fn remove_orphan_finalizer(
        &self,
        resource: &Resource,
        key: &ObjectKey,
        owner_uid: &str,
    ) -> Result<(), ApiError> {
        let mut obj = resource
            .backend
            .get(&self.ctx, &key.namespace, &key.name)
            .await?;
        if uid(&obj) != owner_uid || !awaits_orphaning(&obj) {
            return Ok(());
        }
        let rv = porch_apiserver_rv(&obj)?;
        let mut left = 0;
        if let Some(f) = obj
            .pointer_mut("/metadata/finalizers")
            .and_then(Value::as_array_mut)
        {
            f.retain(|x| x.as_str() != Some(ORPHAN_FINALIZER));
            left = f.len();
        }
        let expect = Expect::ResourceVersion(rv);
        if left == 0 {
            resource
                .backend
                .delete(&self.ctx, &key.namespace, &key.name, expect)
                .await?;
        } else {
            resource
                .backend
                .update(&self.ctx, &key.namespace, &key.name, obj, expect)
                .await?;
        }
        Ok(())
    }
}

fn porch_apiserver_rv(obj: &Value) -> Result<u64, ApiError> {
    obj.pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| ApiError::internal("stored object without a resourceVersion"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orphaning_is_read_from_the_finalizer() {
        let parked = json!({"metadata": {"deletionTimestamp": "t", "finalizers": ["orphan"]}});
        assert!(awaits_orphaning(&parked));
        let live = json!({"metadata": {"finalizers": ["orphan"]}});
        assert!(!awaits_orphaning(&live));
        let refs = json!({"metadata": {"ownerReferences": [{"uid": "a"}, {"name": "no-uid"}]}});
        assert_eq!(owner_uids(&refs), ["a"]);
    }
}
