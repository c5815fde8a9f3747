//! The controllers' [`Objects`] port over this server's own registry, in process: every
//! write goes through the same REST rules as a client's (validation hooks, resourceVersion
//! checks, the status subresource, finalizers), without HTTP.

use async_trait::async_trait;
use porch_apiserver::{
    ApiError, FieldValidation, ListOptions, LiveRegistry, Part, RequestContext, Resource, Rest,
    Selectors,
};
use porch_controllers::objects::{Gvr, ObjectError, Objects};
use serde_json::Value;

/// [`Objects`] over the served registry (read afresh on every call, so the kinds of CRDs
/// created since are found), acting as `user`.
#[derive(Clone)]
pub struct RegistryObjects {
    registry: LiveRegistry,
    ctx: RequestContext,
}

impl RegistryObjects {
    pub fn new(registry: LiveRegistry, user: &str) -> Self {
        RegistryObjects {
            registry,
            ctx: RequestContext::system(user),
        }
    }

    fn resource(&self, r: &Gvr) -> Result<Resource, ObjectError> {
        self.registry
            .load()
            .find(&r.group, &r.version, &r.plural)
            .cloned()
            .ok_or_else(|| ObjectError {
                kind: porch_core::ErrorKind::NotFound,
                message: format!(
                    "the server does not serve {}/{} {}",
                    r.group, r.version, r.plural
                ),
            })
    }

    fn rest<'a>(&'a self, resource: &'a Resource) -> Rest<'a> {
        Rest {
            resource,
            ctx: &self.ctx,
            namespaces: None,
        }
    }
}

fn err(e: ApiError) -> ObjectError {
    ObjectError {
        kind: e.kind,
        message: e.message,
    }
}

fn name_of(obj: &Value) -> String {
    obj.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned()
}

#[async_trait]
impl Objects for RegistryObjects {
    async fn get(
        &self,
        r: &Gvr,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Value>, ObjectError> {
        let resource = self.resource(r)?;
        match resource.backend.get(&self.ctx, namespace, name).await {
            Ok(v) => Ok(Some(v)),
            Err(e) if e.kind == porch_core::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(err(e)),
        }
    }

    async fn list(
        &self,
        r: &Gvr,
        namespace: Option<&str>,
        label_selector: &str,
    ) -> Result<Vec<Value>, ObjectError> {
        let resource = self.resource(r)?;
        let selectors = Selectors::parse(Some(label_selector), None, &[]).map_err(err)?;
        let listed = resource
            .backend
            .list(
                &self.ctx,
                namespace,
                &ListOptions {
                    selectors,
                    ..ListOptions::default()
                },
            )
            .await
            .map_err(err)?;
        Ok(listed
            .items
            .iter()
            .filter_map(|b| serde_json::from_slice(b).ok())
            .collect())
    }

    fn resolve(&self, api_version: &str, kind: &str) -> Option<Gvr> {
        self.registry
            .load()
            .resources()
            .iter()
            .find(|r| r.kind.api_version() == api_version && r.kind.kind == kind)
            .map(|r| Gvr::new(&r.kind.group, &r.kind.version, &r.kind.plural))
    }

    async fn create(&self, r: &Gvr, namespace: &str, obj: Value) -> Result<Value, ObjectError> {
        let resource = self.resource(r)?;
        self.rest(&resource)
            .create(namespace, obj, FieldValidation::Ignore)
            .await
            .map(|w| w.object)
            .map_err(err)
    }

    async fn update(&self, r: &Gvr, namespace: &str, obj: Value) -> Result<Value, ObjectError> {
        let resource = self.resource(r)?;
        let name = name_of(&obj);
        self.rest(&resource)
            .update(namespace, &name, obj, FieldValidation::Ignore, Part::Main)
            .await
            .map(|w| w.object)
            .map_err(err)
    }

    async fn update_status(
        &self,
        r: &Gvr,
        namespace: &str,
        obj: Value,
    ) -> Result<Value, ObjectError> {
        let resource = self.resource(r)?;
        let name = name_of(&obj);
        self.rest(&resource)
            .update(namespace, &name, obj, FieldValidation::Ignore, Part::Status)
            .await
            .map(|w| w.object)
            .map_err(err)
    }

    async fn delete(&self, r: &Gvr, namespace: &str, name: &str) -> Result<(), ObjectError> {
        let resource = self.resource(r)?;
        self.rest(&resource)
            .delete(namespace, name, None)
            .await
            .map(|_| ())
            .map_err(err)
    }
}

/// Follows the watch of one served resource from now (with its current objects first when
/// `initial_events`), calling `on_object` with each event and object changed, until `stop` turns true or
/// `on_object` returns false. A stream that ends (e.g. 410 below the retained window) is
/// watched again; the callers' periodic sweeps cover what it missed.
pub async fn follow(
    registry: &LiveRegistry,
    (group, version, plural): (&str, &str, &str),
    initial_events: bool,
    user: &str,
    mut stop: tokio::sync::watch::Receiver<bool>,
    mut on_object: impl FnMut(porch_core::store::EventType, Value) -> bool,
) {
    use futures::StreamExt;
    let Some(resource) = registry.load().find(group, version, plural).cloned() else {
        return;
    };
    let ctx = RequestContext::system(user);
    let stopped = |stop: &mut tokio::sync::watch::Receiver<bool>| {
        let mut stop = stop.clone();
        async move {
            let _ = stop.wait_for(|s| *s).await;
        }
    };
    loop {
        let start = porch_apiserver::WatchStart::Now { initial_events };
        let stream = resource
            .backend
            .watch(&ctx, None, start, &ListOptions::default())
            .await;
        let mut stream = match stream {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(resource = plural, error = %e, "cannot watch; retrying");
                tokio::select! {
                    _ = tokio::time::sleep(std::time::Duration::from_secs(1)) => continue,
                    _ = stopped(&mut stop) => return,
                }
            }
        };
        loop {
            let item = tokio::select! {
                item = stream.next() => item,
                _ = stopped(&mut stop) => return,
            };
            let Some(item) = item else { break };
            if let porch_apiserver::WatchItem::Event { event_type, object } = item
                && let Ok(obj) = serde_json::from_slice::<Value>(&object)
                && !on_object(event_type, obj)
            {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use porch_apiserver::WatchHub;
    use porch_core::store::MetadataStore;
    use porch_store::{RedbStore, StoreOptions};
    use serde_json::json;

    use super::*;

    fn pv_gvr() -> Gvr {
        Gvr::new(porch_api::CONFIG_GROUP, "v1alpha1", "packagevariants")
    }

    fn objects(dir: &std::path::Path) -> RegistryObjects {
        let store: Arc<dyn MetadataStore> = Arc::new(
            RedbStore::open(&dir.join("store.redb"), StoreOptions::default()).expect("store"),
        );
        let hub = WatchHub::attach(&store, 64);
        let engine = porch_engine::Engine::new(store.clone(), Arc::new(krm_functions::Builtins));
        let live = LiveRegistry::default();
        crate::registry(&store, &hub, &engine, &live);
        RegistryObjects::new(live, "test")
    }

    #[tokio::test]
    async fn writes_follow_the_rest_rules_status_and_finalizers() {
        let tmp = tempfile::tempdir().expect("tmp");
        let o = objects(tmp.path());
        let r = pv_gvr();
        let created = o
            .create(
                &r,
                "default",
                json!({"metadata": {"name": "pv", "labels": {"a": "b"}},
                       "spec": {"adoptionPolicy": "whatever"}}),
            )
            .await
            .expect("any policy is accepted");
        assert!(created.pointer("/metadata/uid").is_some());

        // The main resource ignores status; the status subresource keeps only status.
        let mut obj = created.clone();
        obj["metadata"]["finalizers"] = json!(["x/y"]);
        obj["status"] = json!({"conditions": []});
        let updated = o.update(&r, "default", obj).await.expect("update");
        assert_eq!(updated["metadata"]["finalizers"], json!(["x/y"]));
        assert!(
            updated
                .get("status")
                .is_none_or(|s| s.get("conditions").is_none())
        );
        let mut obj = updated.clone();
        obj["status"] = json!({"downstreamTargets": [{"name": "t"}]});
        obj["spec"] = json!({});
        let with_status = o.update_status(&r, "default", obj).await.expect("status");
        assert_eq!(with_status["status"]["downstreamTargets"][0]["name"], "t");
        assert_eq!(with_status["spec"]["adoptionPolicy"], "whatever");

        // A stale write is a conflict.
        let e = o
            .update(&r, "default", updated.clone())
            .await
            .expect_err("stale");
        assert_eq!(e.kind, porch_core::ErrorKind::Conflict);

        // Listed by label; resolved by kind.
        assert_eq!(
            o.list(&r, Some("default"), "a=b")
                .await
                .expect("list")
                .len(),
            1
        );
        assert!(o.list(&r, None, "a=c").await.expect("list").is_empty());
        assert_eq!(
            o.resolve("v1", "ConfigMap"),
            Some(Gvr::new("", "v1", "configmaps"))
        );

        // Delete waits for the finalizer; removing it deletes.
        o.delete(&r, "default", "pv").await.expect("delete");
        let marked = o
            .get(&r, "default", "pv")
            .await
            .expect("get")
            .expect("kept");
        assert!(marked.pointer("/metadata/deletionTimestamp").is_some());
        let mut obj = marked;
        obj["metadata"]["finalizers"] = json!([]);
        o.update(&r, "default", obj).await.expect("drop finalizer");
        assert_eq!(o.get(&r, "default", "pv").await.expect("get"), None);
    }
}
