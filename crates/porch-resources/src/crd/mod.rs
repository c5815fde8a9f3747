//! CustomResourceDefinitions (`apiextensions.k8s.io/v1`): stored on the generic store, and
//! served. Creating or updating a CRD makes each of its served versions a resource of the same
//! REST machinery as the built-in kinds (discovery, OpenAPI, Tables, watch, patch, schema
//! validation); deleting it stops serving the kind and deletes its objects in the same atomic
//! store write. CRDs in the store at start-up are served again (`Crds::restore`).
//!
//! A CRD naming a kind the server has built in (Porch's own CRDs, applied from Porch's
//! deployment manifests) is stored but leaves the built-in kind and its objects alone.

mod kind;
mod schema;
mod validate;
mod versioned;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use porch_apiserver::{
    ApiError, Expect, GenericBackend, ListOptions, ListResult, LiveRegistry, Registry,
    RequestContext, ResourceBackend, WatchHub, WatchStart, WatchStream, blocking,
};
use porch_core::store::{ListQuery, MetadataStore, ObjectKey, Precondition, Write, WriteOp};
use serde_json::Value;

pub use kind::{GROUP, PLURAL};

/// Serves the kinds that CRDs define.
pub struct Crds {
    live: LiveRegistry,
    store: Arc<dyn MetadataStore>,
    hub: Arc<WatchHub>,
    /// `(group, plural)` of the kinds served from CRDs (as opposed to built in), with the
    /// resourceVersion of the CRD served: concurrent writes of one CRD may finish out of
    /// order, and an older definition must not replace a newer one.
    served: Mutex<HashMap<(String, String), u64>>,
}

/// Adds the `customresourcedefinitions` kind to `reg`. The kinds of CRDs go to `live`, which
/// must serve `reg` once it is complete.
pub fn register(
    reg: &mut Registry,
    store: &Arc<dyn MetadataStore>,
    hub: &Arc<WatchHub>,
    live: &LiveRegistry,
) -> Arc<Crds> {
    let crds = Arc::new(Crds {
        live: live.clone(),
        store: store.clone(),
        hub: hub.clone(),
        served: Mutex::default(),
    });
    let k = Arc::new(kind::crd_kind());
    let inner = GenericBackend::new(k.clone(), store.clone(), hub.clone());
    reg.add(
        (*k).clone(),
        Arc::new(CrdBackend {
            inner,
            crds: crds.clone(),
        }),
    );
    crds
}

impl Crds {
    fn served(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), u64>> {
        self.served.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Serves the versions of `crd`, replacing what it served before.
    pub fn serve(&self, crd: &Value) {
        let (group, plural) = kind::group_plural(crd);
        let Some(storage) = kind::storage_version(crd) else {
            return;
        };
        let storage = format!("{group}/{storage}");
        let kinds = kind::served_kinds(crd);
        let rv = crd
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0);
        let mut served = self.served();
        let key = (group.clone(), plural.clone());
        if served.get(&key).is_some_and(|last| *last > rv) {
            return;
        }
        self.live.update(|reg| {
            let known = reg
                .resources()
                .iter()
                .any(|r| r.kind.group == group && r.kind.plural == plural);
            if known && !served.contains_key(&key) {
                tracing::info!(%group, %plural, "CRD names a built-in kind: the built-in kind stays served");
                return;
            }
            let group_known = reg.resources().iter().any(|r| r.kind.group == group);
            reg.remove(&group, &plural);
            if let Some(first) = kinds.first()
                && !group_known
            {
                reg.prefer(&group, &first.version);
            }
            for k in kinds {
                let arc = Arc::new(k.clone());
                let backend = versioned::VersionedBackend::new(
                    GenericBackend::new(arc, self.store.clone(), self.hub.clone()),
                    k.api_version(),
                    storage.clone(),
                );
                reg.add(k, Arc::new(backend));
            }
            served.insert(key.clone(), rv);
            tracing::info!(%group, %plural, "serving custom resource");
        });
    }

    /// Stops serving a CRD's kind; false when the kind is built in (nothing to do).
    fn unserve(&self, group: &str, plural: &str) -> bool {
        let mut served = self.served();
        if served
            .remove(&(group.to_string(), plural.to_string()))
            .is_none()
        {
            return false;
        }
        self.live.update(|reg| reg.remove(group, plural));
        tracing::info!(%group, %plural, "stopped serving custom resource");
        true
    }

    /// Follows a CRD change committed through another replica of a cluster (from the shared
    /// event log): serves, re-serves or stops serving its kind as the writing replica did.
    /// Events of other resources, and changes this process already serves, are ignored.
    pub fn apply_event(&self, event: &porch_core::store::StoreEvent) {
        if event.object.key.resource != format!("{GROUP}/{PLURAL}") {
            return;
        }
        let Ok(crd) = serde_json::from_slice::<Value>(&event.object.data) else {
            return;
        };
        if event.event_type == porch_core::store::EventType::Deleted {
            let (group, plural) = kind::group_plural(&crd);
            self.unserve(&group, &plural);
            return;
        }
        let (group, plural) = kind::group_plural(&crd);
        let current = self.served().get(&(group, plural)).copied();
        if current.is_some_and(|rv| rv >= event.object.resource_version) {
            return;
        }
        self.serve(&crd);
    }

    /// Serves every CRD in the store (at start-up).
    pub async fn restore(&self) -> Result<usize, ApiError> {
        let store = self.store.clone();
        let page = blocking(move || {
            store.list(&ListQuery {
                resource: format!("{GROUP}/{PLURAL}"),
                ..ListQuery::default()
            })
        })
        .await?;
        let mut n = 0;
        for obj in page.items {
            match serde_json::from_slice::<Value>(&obj.data) {
                Ok(crd) => {
                    self.serve(&crd);
                    n += 1;
                }
                Err(e) => tracing::warn!(key = %obj.key, "unreadable CRD: {e}"),
            }
        }
        Ok(n)
    }
}

/// CRDs on the generic store; writes change what is served.
struct CrdBackend {
    inner: GenericBackend,
    crds: Arc<Crds>,
}

#[async_trait::async_trait]
impl ResourceBackend for CrdBackend {
    async fn get(&self, ctx: &RequestContext, ns: &str, name: &str) -> Result<Value, ApiError> {
        self.inner.get(ctx, ns, name).await
    }

    async fn list(
        &self,
        ctx: &RequestContext,
        ns: Option<&str>,
        o: &ListOptions,
    ) -> Result<ListResult, ApiError> {
        self.inner.list(ctx, ns, o).await
    }

    async fn create(&self, ctx: &RequestContext, ns: &str, obj: Value) -> Result<Value, ApiError> {
        let out = self.inner.create(ctx, ns, obj).await?;
        self.crds.serve(&out);
        Ok(out)
    }

    async fn update(
        &self,
        ctx: &RequestContext,
        ns: &str,
        name: &str,
        obj: Value,
        e: Expect,
    ) -> Result<Value, ApiError> {
        let out = self.inner.update(ctx, ns, name, obj, e).await?;
        self.crds.serve(&out);
        Ok(out)
    }

    /// Stops serving the kind, then deletes the CRD and every object of the kind in one
    /// atomic write (served again if that write fails).
    async fn delete(
        &self,
        ctx: &RequestContext,
        ns: &str,
        name: &str,
        e: Expect,
    ) -> Result<Value, ApiError> {
        let current = self.inner.get(ctx, ns, name).await?;
        let (group, plural) = kind::group_plural(&current);
        if !self.crds.unserve(&group, &plural) {
            return self.inner.delete(ctx, ns, name, e).await;
        }
        let store = self.crds.store.clone();
        let crd_key = ObjectKey::new(format!("{GROUP}/{PLURAL}"), "", name);
        let objects = format!("{group}/{plural}");
        let precondition = match e {
            Expect::Any => Precondition::MustExist,
            Expect::ResourceVersion(rv) => Precondition::ResourceVersion(rv),
        };
        let result = blocking(move || {
            let page = store.list(&ListQuery {
                resource: objects,
                ..ListQuery::default()
            })?;
            let mut writes = vec![Write {
                key: crd_key,
                precondition,
                op: WriteOp::Delete(Box::new(|rv, old| {
                    crate::core::restamp(old.unwrap_or_default(), rv)
                })),
            }];
            for obj in page.items {
                writes.push(Write {
                    key: obj.key,
                    precondition: Precondition::MustExist,
                    op: WriteOp::Delete(Box::new(|rv, old| {
                        crate::core::restamp(old.unwrap_or_default(), rv)
                    })),
                });
            }
            store.write(writes)
        })
        .await;
        match result {
            Ok(events) => {
                let ev = events
                    .into_iter()
                    .next()
                    .ok_or_else(|| ApiError::internal("delete wrote nothing"))?;
                serde_json::from_slice(&ev.object.data)
                    .map_err(|e| ApiError::internal(format!("corrupt object: {e}")))
            }
            Err(err) => {
                self.crds.serve(&current);
                Err(match err.kind {
                    porch_core::ErrorKind::NotFound => ApiError::not_found(GROUP, PLURAL, name),
                    porch_core::ErrorKind::Conflict => ApiError::conflict(GROUP, PLURAL, name),
                    _ => err,
                })
            }
        }
    }

    async fn watch(
        &self,
        ctx: &RequestContext,
        ns: Option<&str>,
        s: WatchStart,
        o: &ListOptions,
    ) -> Result<WatchStream, ApiError> {
        self.inner.watch(ctx, ns, s, o).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use porch_apiserver::ResourceKind;
    use serde_json::json;

    struct Fixture {
        _dir: tempfile::TempDir,
        live: LiveRegistry,
        crds: Arc<Crds>,
    }

    fn fixture() -> Fixture {
        let dir = tempfile::tempdir().expect("tempdir");
        let store: Arc<dyn MetadataStore> = Arc::new(
            porch_store::RedbStore::open(&dir.path().join("s.redb"), Default::default())
                .expect("store"),
        );
        let hub = WatchHub::attach(&store, 64);
        let live = LiveRegistry::default();
        let mut reg = Registry::new();
        let crds = register(&mut reg, &store, &hub, &live);
        reg.add_generic(
            ResourceKind::new("example.com", "v1", "Gadget", "gadgets"),
            &store,
            &hub,
        );
        live.update(|r| *r = reg);
        Fixture {
            _dir: dir,
            live,
            crds,
        }
    }

    fn ctx() -> RequestContext {
        RequestContext::default()
    }

    #[tokio::test]
    async fn deleting_a_crd_removes_its_kind_and_objects() {
        let f = fixture();
        let reg = f.live.load();
        let crd_res = reg.find(GROUP, "v1", PLURAL).expect("crd kind").clone();
        let mut crd = kind::tests::widget_crd();
        crd_res.kind.hooks.default(&mut crd);
        crd_res
            .backend
            .create(&ctx(), "", crd)
            .await
            .expect("create crd");
        let widgets = f
            .live
            .load()
            .find("example.com", "v1alpha1", "widgets")
            .expect("served")
            .clone();
        let w = json!({"apiVersion": "example.com/v1alpha1", "kind": "Widget",
                       "metadata": {"name": "w", "namespace": "default"}});
        let created = widgets
            .backend
            .create(&ctx(), "default", w)
            .await
            .expect("w");
        assert_eq!(created["apiVersion"], "example.com/v1alpha1");
        let via_v1 = f
            .live
            .load()
            .find("example.com", "v1", "widgets")
            .expect("v1")
            .backend
            .get(&ctx(), "default", "w")
            .await
            .expect("same object through v1");
        assert_eq!(via_v1["apiVersion"], "example.com/v1");

        crd_res
            .backend
            .delete(&ctx(), "", "widgets.example.com", Expect::Any)
            .await
            .expect("delete crd");
        assert!(f.live.load().find("example.com", "v1", "widgets").is_none());
        let store = f.crds.store.clone();
        let left = store
            .list(&ListQuery {
                resource: "example.com/widgets".into(),
                ..ListQuery::default()
            })
            .expect("list");
        assert!(left.items.is_empty(), "objects outlived their CRD");
    }

    #[tokio::test]
    async fn a_crd_for_a_built_in_kind_leaves_it_alone() {
        let f = fixture();
        let before = f
            .live
            .load()
            .find("example.com", "v1", "gadgets")
            .expect("built in")
            .backend
            .clone();
        let mut crd = kind::tests::widget_crd();
        crd["metadata"]["name"] = json!("gadgets.example.com");
        crd["spec"]["names"] = json!({"plural": "gadgets", "kind": "Gadget"});
        f.crds.serve(&crd);
        let reg = f.live.load();
        let after = reg
            .find("example.com", "v1", "gadgets")
            .expect("still served");
        assert!(
            Arc::ptr_eq(&before, &after.backend),
            "built-in backend replaced"
        );
        assert!(reg.find("example.com", "v1alpha1", "gadgets").is_none());
        assert!(!f.crds.unserve("example.com", "gadgets"));
    }
}
