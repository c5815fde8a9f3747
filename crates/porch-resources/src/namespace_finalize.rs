//! Before a namespace's contents are wiped, the objects that carry finalizers are deleted
//! through the API and given time to finalize, as Kubernetes' namespace controller lets
//! them: a PackageVariant's finalizer then releases its downstream package revisions by its
//! deletion policy (`delete` or `orphan`) while the Repositories it needs are still there.
//! Their owners (a PackageVariantSet) go with them, so nothing recreates a finalized object.

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;
use std::time::Duration;

use porch_apiserver::{LiveRegistry, RequestContext, Resource, blocking, delete_object};
use porch_core::ErrorKind;
use porch_core::store::{ListQuery, MetadataStore, ObjectKey};
use serde_json::Value;

/// Who deletes the contents (the Kubernetes namespace controller's identity).
const USER: &str = "system:serviceaccount:kube-system:namespace-controller";

/// How long the finalizers get before the rest is removed regardless (logged).
const FINALIZE_WAIT: Duration = Duration::from_secs(60);

/// Deletes the objects of `namespace` that hold finalizers (and the objects owning them) and
/// waits until they are gone or [`FINALIZE_WAIT`] passed.
pub(crate) async fn finalize_contents(
    live: &LiveRegistry,
    store: &Arc<dyn MetadataStore>,
    namespace: &str,
) {
    let ctx = RequestContext {
        user: USER.into(),
        ..Default::default()
    };
    let objects = match contents(live, store, namespace).await {
        Ok(o) => o,
        Err(e) => {
            tracing::warn!(namespace, error = %e, "cannot list the namespace's objects to finalize them");
            return;
        }
    };
    let held: Vec<&(Resource, Value)> = objects
        .iter()
        .filter(|(_, o)| {
            o.pointer("/metadata/finalizers")
                .and_then(Value::as_array)
                .is_some_and(|f| !f.is_empty())
        })
        .collect();
    if held.is_empty() {
        return;
    }
    let owners: HashSet<&str> = held
        .iter()
        .flat_map(|(_, o)| {
            o.pointer("/metadata/ownerReferences")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|r| r.get("uid").and_then(Value::as_str))
        })
        .collect();
    let mut waiting = BTreeSet::new();
    for (resource, obj) in &objects {
        let name = str_at(obj, "/metadata/name");
        let has_finalizers = held.iter().any(|(r, o)| {
            r.kind.store_resource() == resource.kind.store_resource()
                && str_at(o, "/metadata/name") == name
        });
        if !has_finalizers && !owners.contains(str_at(obj, "/metadata/uid")) {
            continue;
        }
        match delete_object(resource, &ctx, namespace, name, None).await {
            Ok(_) => {}
            Err(e) if e.kind == ErrorKind::NotFound => continue,
            Err(e) => {
                tracing::warn!(namespace, name, error = %e.message, "cannot delete before the namespace");
                continue;
            }
        }
        if has_finalizers {
            waiting.insert(ObjectKey::new(
                resource.kind.store_resource(),
                namespace,
                name,
            ));
        }
    }
    let deadline = tokio::time::Instant::now() + FINALIZE_WAIT;
    while !waiting.is_empty() {
        let (s, keys) = (store.clone(), waiting.clone());
        match blocking(move || {
            let mut left = BTreeSet::new();
            for k in keys {
                if s.get(&k)?.is_some() {
                    left.insert(k);
                }
            }
            Ok(left)
        })
        .await
        {
            Ok(left) => waiting = left,
            Err(e) => {
                tracing::warn!(namespace, error = %e, "cannot check the finalizing objects");
                return;
            }
        }
        if waiting.is_empty() {
            break;
        }
        if tokio::time::Instant::now() >= deadline {
            let left: Vec<String> = waiting.iter().map(ToString::to_string).collect();
            tracing::warn!(
                namespace,
                ?left,
                "finalizers did not finish in time; removing the objects anyway"
            );
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Every object of `namespace` in a namespaced, store-backed resource, with the resource
/// that serves it (one version per stored resource).
async fn contents(
    live: &LiveRegistry,
    store: &Arc<dyn MetadataStore>,
    namespace: &str,
) -> Result<Vec<(Resource, Value)>, porch_apiserver::ApiError> {
    let reg = live.load();
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for r in reg.resources() {
        let in_namespace = r.kind.namespaced && r.kind.garbage_collected;
        if !in_namespace || !seen.insert(r.kind.store_resource()) {
            continue;
        }
        let (s, query) = (
            store.clone(),
            ListQuery {
                resource: r.kind.store_resource(),
                namespace: Some(namespace.to_owned()),
                start_after: None,
                limit: None,
            },
        );
        let page = blocking(move || s.list(&query)).await?;
        for item in page.items {
            if let Ok(obj) = serde_json::from_slice::<Value>(&item.data) {
                out.push((r.clone(), obj));
            }
        }
    }
    Ok(out)
}

fn str_at<'a>(obj: &'a Value, pointer: &str) -> &'a str {
    obj.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}
