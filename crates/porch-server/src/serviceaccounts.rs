//! Core `v1` ServiceAccounts, stored as any other object, and their `token` subresource
//! (TokenRequest, `kubectl create token`): a signed JWT that authenticates as the
//! ServiceAccount while it exists.

use std::sync::Arc;

use porch_apiserver::auth::serviceaccount::{
    DEFAULT_EXPIRATION_SECS, MAX_EXPIRATION_SECS, MIN_EXPIRATION_SECS, ServiceAccountLookup,
    ServiceAccountTokens,
};
use porch_apiserver::{
    ApiError, Expect, FieldError, GenericBackend, ListOptions, ListResult, LiveRegistry,
    RequestContext, ResourceBackend, ResourceKind, WatchHub, WatchStart, WatchStream,
};
use porch_core::store::MetadataStore;
use serde_json::{Value, json};

/// The ServiceAccount kind as kube-apiserver serves it.
fn kind() -> ResourceKind {
    let mut k = ResourceKind::new("", "v1", "ServiceAccount", "serviceaccounts");
    k.short_names = vec!["sa".into()];
    k.subresources = vec!["token".into()];
    k.protobuf = Some(|body| porch_api::protobuf::decode_core(body).map_err(|e| e.to_string()));
    k
}

/// Reads ServiceAccounts from their store backend.
pub struct StoredAccounts(pub Arc<dyn ResourceBackend>);

#[async_trait::async_trait]
impl ServiceAccountLookup for StoredAccounts {
    async fn uid(&self, namespace: &str, name: &str) -> Option<String> {
        let ctx = RequestContext::system("system:serviceaccount-token-authenticator");
        let obj = self.0.get(&ctx, namespace, name).await.ok()?;
        // One being deleted (finalizers pending) no longer authenticates, as kube-apiserver.
        if obj.pointer("/metadata/deletionTimestamp").is_some() {
            return None;
        }
        obj.pointer("/metadata/uid")
            .and_then(Value::as_str)
            .map(str::to_string)
    }
}

/// Serves `serviceaccounts` (with `token`) and returns the token issuer built on them;
/// `make` builds the issuer from the lookup over the stored accounts.
pub fn register(
    live: &LiveRegistry,
    store: &Arc<dyn MetadataStore>,
    hub: &Arc<WatchHub>,
    make: impl FnOnce(Arc<dyn ServiceAccountLookup>) -> anyhow::Result<ServiceAccountTokens>,
) -> anyhow::Result<Arc<ServiceAccountTokens>> {
    let kind = Arc::new(ResourceKind {
        garbage_collected: true,
        ..kind()
    });
    let stored: Arc<dyn ResourceBackend> = Arc::new(GenericBackend::new(
        kind.clone(),
        store.clone(),
        hub.clone(),
    ));
    let tokens = Arc::new(make(Arc::new(StoredAccounts(stored.clone())))?);
    let backend = Arc::new(ServiceAccounts {
        stored,
        tokens: tokens.clone(),
    });
    live.update(|reg| {
        reg.add(ResourceKind::clone(&kind), backend);
    });
    Ok(tokens)
}

struct ServiceAccounts {
    stored: Arc<dyn ResourceBackend>,
    tokens: Arc<ServiceAccountTokens>,
}

fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

fn rfc3339(secs: i64) -> String {
    k8s_openapi::jiff::Timestamp::from_second(secs)
        .map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_default()
}

impl ServiceAccounts {
    /// POST `serviceaccounts/<name>/token`: a TokenRequest in, the same with `status.token` out.
    async fn token(
        &self,
        ctx: &RequestContext,
        namespace: &str,
        name: &str,
        request: Value,
    ) -> Result<Value, ApiError> {
        if request.get("kind").and_then(Value::as_str) != Some("TokenRequest") {
            return Err(ApiError::bad_request(
                "the body of a token request must be an authentication.k8s.io/v1 TokenRequest",
            ));
        }
        let account = self.stored.get(ctx, namespace, name).await?;
        let uid = account
            .pointer("/metadata/uid")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let spec = request.get("spec").cloned().unwrap_or_else(|| json!({}));
        let audiences: Vec<String> = spec
            .get("audiences")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        let seconds = match spec.get("expirationSeconds").and_then(Value::as_i64) {
            None | Some(0) => DEFAULT_EXPIRATION_SECS,
            Some(s) if s < MIN_EXPIRATION_SECS => {
                return Err(ApiError::invalid(
                    "authentication.k8s.io",
                    "TokenRequest",
                    name,
                    vec![FieldError::invalid(
                        "spec.expirationSeconds",
                        &json!(s),
                        "may not specify a duration less than 10 minutes",
                    )],
                ));
            }
            Some(s) => s.min(MAX_EXPIRATION_SECS),
        };
        let issued = self
            .tokens
            .issue(namespace, name, &uid, &audiences, now_secs(), seconds)
            .map_err(|e| ApiError::internal(e.to_string()))?;
        let audiences = if audiences.is_empty() {
            self.tokens.default_audiences().to_vec()
        } else {
            audiences
        };
        tracing::info!(namespace, serviceaccount = name, user = %ctx.user, seconds, "issued a service account token");
        Ok(json!({
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "metadata": {"name": name, "namespace": namespace,
                         "creationTimestamp": porch_apiserver::now_rfc3339()},
            "spec": {"audiences": audiences, "expirationSeconds": seconds, "boundObjectRef": null},
            "status": {"token": issued.token, "expirationTimestamp": rfc3339(issued.expires_at)},
        }))
    }
}

#[async_trait::async_trait]
impl ResourceBackend for ServiceAccounts {
    async fn get(&self, ctx: &RequestContext, ns: &str, name: &str) -> Result<Value, ApiError> {
        self.stored.get(ctx, ns, name).await
    }
    async fn list(
        &self,
        ctx: &RequestContext,
        ns: Option<&str>,
        options: &ListOptions,
    ) -> Result<ListResult, ApiError> {
        self.stored.list(ctx, ns, options).await
    }
    async fn create(&self, ctx: &RequestContext, ns: &str, obj: Value) -> Result<Value, ApiError> {
        self.stored.create(ctx, ns, obj).await
    }
    async fn update(
        &self,
        ctx: &RequestContext,
        ns: &str,
        name: &str,
        obj: Value,
        expect: Expect,
    ) -> Result<Value, ApiError> {
        self.stored.update(ctx, ns, name, obj, expect).await
    }
    async fn delete(
        &self,
        ctx: &RequestContext,
        ns: &str,
        name: &str,
        expect: Expect,
    ) -> Result<Value, ApiError> {
        self.stored.delete(ctx, ns, name, expect).await
    }
    async fn watch(
        &self,
        ctx: &RequestContext,
        ns: Option<&str>,
        start: WatchStart,
        options: &ListOptions,
    ) -> Result<WatchStream, ApiError> {
        self.stored.watch(ctx, ns, start, options).await
    }
    async fn check_create(
        &self,
        ctx: &RequestContext,
        ns: &str,
        obj: &Value,
    ) -> Result<(), ApiError> {
        self.stored.check_create(ctx, ns, obj).await
    }
    async fn check_update(
        &self,
        ctx: &RequestContext,
        ns: &str,
        name: &str,
        new: &Value,
    ) -> Result<(), ApiError> {
        self.stored.check_update(ctx, ns, name, new).await
    }
    async fn check_delete(
        &self,
        ctx: &RequestContext,
        ns: &str,
        name: &str,
        current: &Value,
    ) -> Result<(), ApiError> {
        self.stored.check_delete(ctx, ns, name, current).await
    }
    async fn subresource(
        &self,
        ctx: &RequestContext,
        ns: &str,
        name: &str,
        subresource: &str,
        body: Option<Value>,
    ) -> Result<Value, ApiError> {
        match (subresource, body) {
            ("token", Some(request)) => self.token(ctx, ns, name, request).await,
            ("token", None) => Err(ApiError::method_not_allowed(
                "the token subresource only creates",
            )),
            _ => Err(ApiError::not_found("", subresource, name)),
        }
    }
}
