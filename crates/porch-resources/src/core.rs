//! Core `v1` `namespaces`, `secrets` and `configmaps`.
//!
//! Deleting a namespace first deletes what holds finalizers through the API and waits for
//! them (`namespace_finalize`), then deletes everything left in it (in one atomic store write). Secret data is
//! never logged; `stringData` is folded into base64 `data` on write, as Kubernetes does.

use std::sync::Arc;

use base64::Engine;
use porch_apiserver::{
    ApiError, Column, Expect, FieldError, GenericBackend, ListOptions, ListResult, LiveRegistry,
    Registry, RequestContext, ResourceBackend, ResourceHooks, ResourceKind, WatchHub, WatchStart,
    WatchStream, blocking,
};
use porch_core::store::{ListQuery, MetadataStore, ObjectKey, Precondition, Write, WriteOp};
use serde_json::{Value, json};

pub(super) fn register(
    reg: &mut Registry,
    store: &Arc<dyn MetadataStore>,
    hub: &Arc<WatchHub>,
    live: &LiveRegistry,
) {
    let mut ns = ResourceKind::new("", "v1", "Namespace", "namespaces");
    ns.namespaced = false;
    ns.short_names = vec!["ns".into()];
    ns.schema = porch_api::core::namespace_schema();
    ns.columns = vec![
        Column::path("Status", "string", ".status.phase")
            .description("The status of the namespace"),
    ];
    ns.field_selectors = vec!["status.phase".into()];
    ns.hooks = Arc::new(NamespaceHooks);
    ns.protobuf = Some(decode_protobuf);
    ns.garbage_collected = true;
    let ns = Arc::new(ns);
    let inner = GenericBackend::new(ns.clone(), store.clone(), hub.clone());
    reg.add(
        (*ns).clone(),
        Arc::new(NamespaceBackend {
            inner,
            store: store.clone(),
            live: live.clone(),
        }),
    );

    let mut secret = ResourceKind::new("", "v1", "Secret", "secrets");
    secret.schema = porch_api::core::secret_schema();
    secret.columns = vec![
        Column::path("Type", "string", ".type"),
        Column::computed("Data", "string", |o| {
            json!(
                o.get("data")
                    .and_then(Value::as_object)
                    .map(|m| m.len())
                    .unwrap_or(0)
            )
        }),
    ];
    secret.field_selectors = vec!["type".into()];
    secret.hooks = Arc::new(SecretHooks);
    secret.protobuf = Some(decode_protobuf);
    reg.add_generic(secret, store, hub);

    // ConfigMaps: what PackageVariant config injection reads from, standalone.
    let mut cm = ResourceKind::new("", "v1", "ConfigMap", "configmaps");
    cm.short_names = vec!["cm".into()];
    cm.schema = porch_api::core::config_map_schema();
    cm.columns = vec![Column::computed("Data", "string", |o| {
        let n = |f: &str| o.get(f).and_then(Value::as_object).map_or(0, |m| m.len());
        json!(n("data") + n("binaryData"))
    })];
    cm.protobuf = Some(decode_protobuf);
    reg.add_generic(cm, store, hub);
}

fn decode_protobuf(body: &[u8]) -> Result<Value, String> {
    porch_api::protobuf::decode_core(body).map_err(|e| e.to_string())
}

/// Creates `default` (and `porch-system`) when missing, as a cluster would have them.
pub async fn ensure_default_namespaces(reg: &Registry) -> Result<(), ApiError> {
    let Some(ns) = reg.find("", "v1", "namespaces") else {
        return Ok(());
    };
    let ctx = RequestContext::system("system");
    for name in ["default", "porch-system"] {
        if ns.backend.get(&ctx, "", name).await.is_ok() {
            continue;
        }
        let obj = json!({
            "apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": name, "uid": uuid::Uuid::new_v4().to_string(),
                         "creationTimestamp": porch_apiserver::now_rfc3339(), "generation": 1},
            "status": {"phase": "Active"},
        });
        match ns.backend.create(&ctx, "", obj).await {
            Ok(_) => tracing::info!(namespace = name, "created namespace"),
            Err(e) if e.kind == porch_core::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

struct NamespaceHooks;

impl ResourceHooks for NamespaceHooks {
    fn default(&self, obj: &mut Value) {
        if obj.pointer("/status/phase").is_none()
            && let Some(m) = obj.as_object_mut()
        {
            m.insert("status".into(), json!({"phase": "Active"}));
        }
    }
}

/// Namespaces on the generic store, plus cascading deletion of their contents.
struct NamespaceBackend {
    inner: GenericBackend,
    store: Arc<dyn MetadataStore>,
    /// What is served now (custom resources included), for the kinds a namespace holds.
    live: LiveRegistry,
}

#[async_trait::async_trait]
impl ResourceBackend for NamespaceBackend {
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
        self.inner.create(ctx, ns, obj).await
    }
    async fn update(
        &self,
        ctx: &RequestContext,
        ns: &str,
        name: &str,
        obj: Value,
        e: Expect,
    ) -> Result<Value, ApiError> {
        self.inner.update(ctx, ns, name, obj, e).await
    }
    async fn delete(
        &self,
        ctx: &RequestContext,
        ns: &str,
        name: &str,
        e: Expect,
    ) -> Result<Value, ApiError> {
        refuse_delete(name)?;
        // Finalizers first (a PackageVariant releases its downstream by its policy).
        crate::namespace_finalize::finalize_contents(&self.live, &self.store, name).await;
        let store = self.store.clone();
        let target = name.to_string();
        let resources = namespaced_resources(&self.live);
        // Everything in the namespace goes in one atomic write, then the namespace itself.
        blocking(move || {
            let mut writes = Vec::new();
            for resource in resources {
                let page = store.list(&ListQuery {
                    resource,
                    namespace: Some(target.clone()),
                    start_after: None,
                    limit: None,
                })?;
                for obj in page.items {
                    writes.push(Write {
                        key: ObjectKey::new(obj.key.resource, obj.key.namespace, obj.key.name),
                        precondition: Precondition::MustExist,
                        op: WriteOp::Delete(Box::new(|rv, old| {
                            restamp(old.unwrap_or_default(), rv)
                        })),
                    });
                }
            }
            store.write(writes)
        })
        .await?;
        self.inner.delete(ctx, ns, name, e).await
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
    /// A dry run refuses what `delete` refuses and never cascades.
    async fn check_delete(
        &self,
        _: &RequestContext,
        _: &str,
        name: &str,
        _: &Value,
    ) -> Result<(), ApiError> {
        refuse_delete(name)
    }
}

fn refuse_delete(name: &str) -> Result<(), ApiError> {
    if name == "default" {
        return Err(ApiError::new(
            porch_core::ErrorKind::Forbidden,
            "namespaces \"default\" is forbidden: this namespace may not be deleted",
        ));
    }
    Ok(())
}

/// The store resources that live in namespaces: every namespaced store-backed kind served
/// (ConfigMaps, Secrets, Porch's config kinds, custom resources).
fn namespaced_resources(live: &LiveRegistry) -> Vec<String> {
    let mut out: Vec<String> = live
        .load()
        .resources()
        .iter()
        .filter(|r| r.kind.namespaced && r.kind.garbage_collected)
        .map(|r| r.kind.store_resource())
        .collect();
    out.sort();
    out.dedup();
    out
}

pub(crate) fn restamp(old: &[u8], rv: u64) -> Vec<u8> {
    match serde_json::from_slice::<Value>(old) {
        Ok(mut v) => {
            if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
                m.insert("resourceVersion".into(), rv.to_string().into());
            }
            serde_json::to_vec(&v).unwrap_or_else(|_| old.to_vec())
        }
        Err(_) => old.to_vec(),
    }
}

struct SecretHooks;

fn valid_data_key(k: &str) -> bool {
    !k.is_empty()
        && k.len() <= 253
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-._".contains(c))
}

impl ResourceHooks for SecretHooks {
    fn default(&self, obj: &mut Value) {
        let Some(map) = obj.as_object_mut() else {
            return;
        };
        if let Some(Value::Object(string_data)) = map.remove("stringData") {
            let data = map.entry("data").or_insert_with(|| json!({}));
            if let Some(d) = data.as_object_mut() {
                for (k, v) in string_data {
                    let raw = v.as_str().unwrap_or_default().to_string();
                    d.insert(
                        k,
                        base64::engine::general_purpose::STANDARD.encode(raw).into(),
                    );
                }
            }
        }
        if map
            .get("type")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            map.insert("type".into(), "Opaque".into());
        }
    }

    fn validate_create(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        if let Some(data) = obj.get("data").and_then(Value::as_object) {
            for (k, v) in data {
                if !valid_data_key(k) {
                    errs.push(FieldError::invalid(format!("data[{k}]"), &json!(k), "a valid config key must consist of alphanumeric characters, '-', '_' or '.'"));
                }
                let decodes = v
                    .as_str()
                    .is_some_and(|s| base64::engine::general_purpose::STANDARD.decode(s).is_ok());
                if !decodes {
                    // The value is never echoed: it is secret.
                    errs.push(FieldError {
                        reason: "FieldValueInvalid",
                        field: format!("data[{k}]"),
                        message: "Invalid value: <redacted>: must be base64-encoded".into(),
                    });
                }
            }
        }
        if obj.get("type").and_then(Value::as_str) == Some("kubernetes.io/basic-auth") {
            let data = obj.get("data").and_then(Value::as_object);
            if !data.is_some_and(|d| d.contains_key("username") || d.contains_key("password")) {
                errs.push(FieldError::required("data[username]"));
            }
        }
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = self.validate_create(new);
        if new.get("type") != old.get("type") {
            errs.push(FieldError::immutable("type"));
        }
        if old.get("immutable").and_then(Value::as_bool) == Some(true)
            && (new.get("data") != old.get("data") || new.get("immutable") != old.get("immutable"))
        {
            errs.push(FieldError::forbidden(
                "data",
                "field is immutable when `immutable` is set",
            ));
        }
        errs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_data_becomes_base64_data() {
        let mut s = json!({"stringData": {"password": "pw"}});
        SecretHooks.default(&mut s);
        assert_eq!(s, json!({"data": {"password": "cHc="}, "type": "Opaque"}));
        assert!(SecretHooks.validate_create(&s).is_empty());
        let bad = json!({"data": {"k": "not base64!"}});
        let errs = SecretHooks.validate_create(&bad);
        assert_eq!(errs.len(), 1);
        assert!(
            !errs[0].message.contains("not base64"),
            "secret values are never echoed"
        );
    }
}
