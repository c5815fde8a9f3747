//! The axum glue: routes, authentication, body limits, content negotiation, and rendering of
//! objects, lists, Tables and watch streams.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::header::{ACCEPT, CONTENT_TYPE};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures::StreamExt;
use serde_json::Value;

use crate::discovery;
use crate::error::ApiError;
use crate::metrics::Metrics;
use crate::openapi;
use crate::patch::PatchType;
use crate::registry::{LiveRegistry, Registry};
use crate::resource::{ListOptions, RequestContext, Resource, WatchItem, WatchStart};
use crate::rest::{FieldValidation, Part, Rest, Written};
use crate::selector::Selectors;
use crate::table::{IncludeObject, TableBuilder};
use crate::validation;

const TABLE_CONTENT_TYPE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io";
const JSON: &str = "application/json";
const DEFAULT_WATCH_TIMEOUT: Duration = Duration::from_secs(1800);

/// Server settings of the REST layer.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Largest request body accepted (413 beyond).
    pub max_body_bytes: usize,
    /// Bootstrap admin tokens, used when `authentication` is `None`; both empty disables
    /// authentication (everyone is the admin).
    pub tokens: Vec<String>,
    /// Who may ask: the authenticator chain (client certificates, tokens, anonymous).
    pub authentication: Option<crate::auth::Authenticator>,
    /// Shown in `/version`.
    pub version: String,
    /// Reject namespaced writes into namespaces that do not exist.
    pub enforce_namespaces: bool,
    /// RBAC enforcement on every request (`authz`); `None` lets every authenticated request in.
    pub authorizer: Option<Arc<crate::authz::Authorizer>>,
    /// Where requests are audited, if anywhere (`--audit-policy-file`).
    pub audit: Option<Arc<crate::audit::Auditor>>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            max_body_bytes: 6 * 1024 * 1024,
            tokens: Vec::new(),
            authentication: None,
            version: env!("CARGO_PKG_VERSION").into(),
            enforce_namespaces: true,
            authorizer: None,
            audit: None,
        }
    }
}

/// Extra Prometheus gauges supplied by the embedding binary.
pub type GaugeFn = Arc<dyn Fn() -> Vec<(&'static str, &'static str, f64)> + Send + Sync>;

/// Shared state of the HTTP layer.
pub struct ApiServer {
    /// Built from `config` (`authentication`, else the bootstrap `tokens`).
    authenticator: crate::auth::Authenticator,
    /// What is served; kinds come and go at runtime (CustomResourceDefinitions).
    pub registry: LiveRegistry,
    pub config: ServerConfig,
    pub metrics: Metrics,
    pub ready: AtomicBool,
    pub gauges: Option<GaugeFn>,
}

impl ApiServer {
    pub fn new(registry: impl Into<LiveRegistry>, config: ServerConfig) -> Arc<Self> {
        Arc::new(Self {
            registry: registry.into(),
            authenticator: authenticator_of(&config),
            config,
            metrics: Metrics::default(),
            ready: AtomicBool::new(true),
            gauges: None,
        })
    }

    pub fn with_gauges(
        registry: impl Into<LiveRegistry>,
        config: ServerConfig,
        gauges: GaugeFn,
    ) -> Arc<Self> {
        Arc::new(Self {
            registry: registry.into(),
            authenticator: authenticator_of(&config),
            config,
            metrics: Metrics::default(),
            ready: AtomicBool::new(true),
            gauges: Some(gauges),
        })
    }

    /// The axum router serving everything.
    pub fn router(self: &Arc<Self>) -> Router {
        let router = Router::new()
            .route("/version", get(version))
            .route("/version/", get(version))
            .route("/healthz", get(healthz))
            .route("/livez", get(healthz))
            .route("/readyz", get(readyz))
            .route("/metrics", get(metrics))
            .route("/api", get(api))
            .route("/api/", get(api))
            .route("/apis", get(apis))
            .route("/apis/", get(apis))
            .route("/openapi/v3", get(openapi_index))
            .route("/openapi/v3/{*path}", get(openapi_doc))
            .fallback(resources)
            .layer(axum::middleware::from_fn_with_state(
                self.clone(),
                crate::authz::middleware,
            ));
        // Inside `observe`, so that the event names the authenticated user; outside the
        // authorizer, so that refusals are audited too.
        let router = match &self.config.audit {
            Some(auditor) => router.layer(axum::middleware::from_fn_with_state(
                auditor.clone(),
                crate::audit::layer,
            )),
            None => router,
        };
        router
            .layer(axum::middleware::from_fn_with_state(self.clone(), observe))
            .with_state(self.clone())
    }
}

type St = State<Arc<ApiServer>>;

fn authenticator_of(config: &ServerConfig) -> crate::auth::Authenticator {
    match &config.authentication {
        Some(a) => a.clone(),
        None if config.tokens.is_empty() => crate::auth::Authenticator::disabled(),
        None => crate::auth::Authenticator::bootstrap(config.tokens.clone()),
    }
}

fn json_response(code: StatusCode, content_type: &str, body: &Value) -> Response {
    bytes_response(
        code,
        content_type,
        serde_json::to_vec(body).unwrap_or_default(),
    )
}

fn bytes_response(code: StatusCode, content_type: &str, bytes: Vec<u8>) -> Response {
    (
        code,
        [(
            CONTENT_TYPE,
            HeaderValue::from_str(content_type).unwrap_or(HeaderValue::from_static(JSON)),
        )],
        crate::body::sliced(bytes),
    )
        .into_response()
}

fn ok_json(body: &Value) -> Response {
    json_response(StatusCode::OK, JSON, body)
}

pub(crate) fn public_path(path: &str) -> bool {
    matches!(
        path,
        "/healthz" | "/livez" | "/readyz" | "/version" | "/version/" | "/metrics"
    )
}

/// Authentication, request logs and metrics.
async fn observe(State(s): St, req: Request, next: Next) -> Response {
    let start = Instant::now();
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let watch = req.uri().query().is_some_and(|q| {
        q.split('&')
            .any(|kv| kv.strip_prefix("watch=").is_some_and(go_bool))
    });
    let peer = req
        .extensions()
        .get::<crate::auth::PeerCertificates>()
        .cloned();
    let user = match s
        .authenticator
        .authenticate(req.headers(), peer.as_ref())
        .await
    {
        Ok(user) => user,
        // Health, version and metrics answer whoever asks.
        Err(_) if public_path(&path) => crate::auth::UserInfo::anonymous(),
        Err(e) => {
            // The reason, never the credential itself.
            tracing::info!(%method, %path, reason = %e, "unauthenticated request rejected");
            let audit_id = s
                .config
                .audit
                .as_ref()
                .and_then(|a| crate::audit::failed_authentication(a, &req));
            let mut resp = ApiError::unauthorized().into_response();
            if let Some(id) = audit_id.and_then(|id| HeaderValue::from_str(&id).ok()) {
                resp.headers_mut().insert("audit-id", id);
            }
            return resp;
        }
    };
    let user_name = user.name.clone();
    let mut req = req;
    req.extensions_mut().insert(user);
    let resp = next.run(req).await;
    let code = resp.status().as_u16();
    let elapsed = start.elapsed();
    if !watch {
        s.metrics.observe(method.as_str(), code, elapsed);
    }
    if method == Method::GET {
        tracing::debug!(%method, %path, code, user = %user_name, ms = elapsed.as_secs_f64() * 1e3, "request");
    } else {
        tracing::info!(%method, %path, code, user = %user_name, ms = elapsed.as_secs_f64() * 1e3, "request");
    }
    resp
}

async fn version(State(s): St) -> Response {
    ok_json(&discovery::version(&s.config.version))
}

async fn healthz() -> &'static str {
    "ok"
}

async fn readyz(State(s): St) -> Response {
    if s.ready.load(Ordering::SeqCst) {
        "ok".into_response()
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "not ready").into_response()
    }
}

async fn metrics(State(s): St) -> Response {
    let gauges = s.gauges.as_ref().map(|g| g()).unwrap_or_default();
    let text = s.metrics.render(&gauges);
    ([(CONTENT_TYPE, "text/plain; version=0.0.4")], text).into_response()
}

fn accept(headers: &HeaderMap) -> &str {
    headers
        .get(ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

async fn api(State(s): St, headers: HeaderMap) -> Response {
    if discovery::wants_aggregated(accept(&headers)) {
        json_response(
            StatusCode::OK,
            discovery::AGGREGATED_CONTENT_TYPE,
            &discovery::aggregated_core(&s.registry.load()),
        )
    } else {
        ok_json(&discovery::api_versions())
    }
}

async fn apis(State(s): St, headers: HeaderMap) -> Response {
    if discovery::wants_aggregated(accept(&headers)) {
        json_response(
            StatusCode::OK,
            discovery::AGGREGATED_CONTENT_TYPE,
            &discovery::aggregated_apis(&s.registry.load()),
        )
    } else {
        ok_json(&discovery::api_group_list(&s.registry.load()))
    }
}

async fn openapi_index(State(s): St) -> Response {
    ok_json(&openapi::index(&s.registry.load()))
}

async fn openapi_doc(
    State(s): St,
    axum::extract::Path(path): axum::extract::Path<String>,
) -> Response {
    let reg = s.registry.load();
    for (g, v) in openapi::group_versions(&reg) {
        if openapi::gv_path(&g, &v) == path.trim_end_matches('/') {
            return ok_json(&openapi::document(&reg, &g, &v));
        }
    }
    not_found_response()
}

fn not_found_response() -> Response {
    ApiError::new(
        porch_core::ErrorKind::NotFound,
        "the server could not find the requested resource",
    )
    .into_response()
}

/// A parsed resource path.
struct Target<'a> {
    resource: &'a Resource,
    namespace: Option<String>,
    name: Option<String>,
    sub: Option<String>,
}

fn parse_target<'a>(reg: &'a Registry, path: &str) -> Result<Target<'a>, ApiError> {
    let nf = || {
        ApiError::new(
            porch_core::ErrorKind::NotFound,
            "the server could not find the requested resource",
        )
    };
    let segs: Vec<&str> = path
        .trim_start_matches('/')
        .trim_end_matches('/')
        .split('/')
        .collect();
    let (group, version, rest) = match segs.as_slice() {
        ["api", v, rest @ ..] => ("", *v, rest),
        ["apis", g, v, rest @ ..] => (*g, *v, rest),
        _ => return Err(nf()),
    };
    for s in rest {
        if let Some(problem) = validation::path_segment_problem(s) {
            return Err(ApiError::bad_request(problem));
        }
        if s.is_empty() {
            return Err(nf());
        }
    }
    let find = |plural: &str| reg.find(group, version, plural);
    let (namespace, plural, tail): (Option<String>, &str, &[&str]) = match rest {
        ["namespaces", ns, plural, tail @ ..]
            if find(plural).is_some_and(|r| r.kind.namespaced) =>
        {
            (Some((*ns).to_string()), plural, tail)
        }
        [plural, tail @ ..] => (None, plural, tail),
        [] => return Err(nf()),
    };
    let resource = find(plural).ok_or_else(nf)?;
    let (name, sub) = match tail {
        [] => (None, None),
        [name] => (Some((*name).to_string()), None),
        [name, sub] => (Some((*name).to_string()), Some((*sub).to_string())),
        _ => return Err(nf()),
    };
    if !resource.kind.namespaced && namespace.is_some() {
        return Err(nf());
    }
    if resource.kind.namespaced && name.is_some() && namespace.is_none() {
        return Err(nf());
    }
    if let Some(sub) = &sub {
        let known = (sub == "status" && resource.kind.status_subresource)
            || resource.kind.subresources.contains(sub);
        if !known {
            return Err(nf());
        }
    }
    Ok(Target {
        resource,
        namespace,
        name,
        sub,
    })
}

fn query_map(req: &Request) -> HashMap<String, String> {
    req.uri()
        .query()
        .map(serde_urlencoded_pairs)
        .unwrap_or_default()
}

/// Parses `a=b&c=d` (tolerating the leading `&` kube-rs sends).
fn serde_urlencoded_pairs(q: &str) -> HashMap<String, String> {
    form_urlencoded_parse(q).into_iter().collect()
}

pub(crate) fn form_urlencoded_parse(q: &str) -> Vec<(String, String)> {
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (percent_decode(k), percent_decode(v))
        })
        .collect()
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                match u8::from_str_radix(hex, 16) {
                    Ok(b) => {
                        out.push(b);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn flag(q: &HashMap<String, String>, k: &str) -> bool {
    q.get(k).is_some_and(|v| go_bool(v))
}

/// A true value as Go's `strconv.ParseBool` reads query parameters (the Python client sends
/// `watch=True`).
fn go_bool(v: &str) -> bool {
    matches!(v, "1" | "t" | "T" | "TRUE" | "true" | "True")
}

/// Oversized bodies are read and dropped up to this much before the 413 is sent, so that HTTP/1
/// clients still writing the body receive the Status instead of a reset connection.
const DRAIN_LIMIT: usize = 256 * 1024 * 1024;

pub(crate) async fn read_body(s: &ApiServer, req: Request) -> Result<(HeaderMap, Bytes), ApiError> {
    let max = s.config.max_body_bytes;
    let too_large = || {
        ApiError::too_large(format!(
            "the request body is larger than the limit of {max} bytes"
        ))
    };
    let (parts, body) = req.into_parts();
    let mut stream = body.into_data_stream();
    let mut buf = Vec::new();
    let mut seen = 0usize;
    while let Some(chunk) = stream.next().await {
        let chunk = chunk
            .map_err(|e| ApiError::bad_request(format!("cannot read the request body: {e}")))?;
        seen = seen.saturating_add(chunk.len());
        if seen > DRAIN_LIMIT {
            return Err(too_large());
        }
        if seen <= max {
            buf.extend_from_slice(&chunk);
        }
    }
    if seen > max {
        return Err(too_large());
    }
    Ok((parts.headers, Bytes::from(buf)))
}

fn content_type(headers: &HeaderMap) -> String {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or(JSON)
        .to_string()
}

fn wants_table(headers: &HeaderMap) -> bool {
    accept(headers)
        .split(',')
        .any(|p| p.contains("as=Table") && p.contains("g=meta.k8s.io"))
}

/// The handler for every `/api/v1/…` and `/apis/<g>/<v>/…` path.
async fn resources(State(s): St, req: Request) -> Response {
    match serve(&s, req).await {
        Ok(r) => r,
        Err(e) => e.into_response(),
    }
}

fn discovery_doc(reg: &Registry, path: &str) -> Option<Value> {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    match segs.as_slice() {
        ["api", v] => discovery::resource_list(reg, "", v),
        ["apis", g] => discovery::api_group_doc(reg, g),
        ["apis", g, v] => discovery::resource_list(reg, g, v),
        _ => None,
    }
}

async fn serve(s: &Arc<ApiServer>, req: Request) -> Result<Response, ApiError> {
    let path = req.uri().path().to_string();
    // One snapshot for the whole request, even when CRDs change meanwhile.
    let reg = s.registry.load();
    if req.method() == Method::GET
        && let Some(doc) = discovery_doc(&reg, &path)
    {
        return Ok(ok_json(&doc));
    }
    let target = parse_target(&reg, &path)?;
    let q = query_map(&req);
    let kind = target.resource.kind.clone();
    let dry_run = match crate::dryrun::options_kind(req.method()) {
        Some(options) => crate::dryrun::from_query(options, req.uri().query())?,
        None => false,
    };
    let field_manager = q
        .get("fieldManager")
        .filter(|m| !m.is_empty())
        .cloned()
        .unwrap_or_else(|| {
            let agent = req
                .headers()
                .get(axum::http::header::USER_AGENT)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            crate::apply::manager_from_user_agent(agent)
        });
    let user = req
        .extensions()
        .get::<crate::auth::UserInfo>()
        .cloned()
        .unwrap_or_else(crate::auth::UserInfo::anonymous);
    let ctx = RequestContext {
        user: user.name,
        groups: user.groups,
        uid: user.uid,
        field_manager: Some(field_manager),
        dry_run,
        force: flag(&q, "force"),
        access: s.config.authorizer.clone(),
    };
    let namespaces = if s.config.enforce_namespaces {
        reg.find("", "v1", "namespaces")
    } else {
        None
    };
    let rest = Rest {
        resource: target.resource,
        ctx: &ctx,
        namespaces,
    };
    let ns = target.namespace.clone().unwrap_or_default();
    let method = req.method().clone();
    let headers = req.headers().clone();
    let table = wants_table(&headers);
    let include = IncludeObject::parse(q.get("includeObject").map(String::as_str));
    let tb = TableBuilder {
        columns: &kind.columns,
        age_column: kind.age_column,
        include,
    };
    let fv = || FieldValidation::parse(q.get("fieldValidation").map(String::as_str));
    let part = match target.sub.as_deref() {
        Some("status") => Part::Status,
        _ => Part::Main,
    };
    let custom_sub = target.sub.clone().filter(|s| s != "status");

    match (&method, &target.name) {
        (&Method::GET, None) => {
            if !kind.has_verb("list") {
                return Err(ApiError::method_not_allowed(format!(
                    "list is not supported on {}",
                    kind.plural
                )));
            }
            let selectors = Selectors::parse(
                q.get("labelSelector").map(String::as_str),
                q.get("fieldSelector").map(String::as_str),
                &kind.field_selectors,
            )?;
            let limit = match q.get("limit") {
                Some(l) if !l.is_empty() => Some(
                    l.parse::<usize>()
                        .map_err(|_| ApiError::bad_request(format!("invalid limit {l:?}")))?,
                ),
                _ => None,
            };
            let options = ListOptions {
                selectors,
                limit,
                continue_token: q.get("continue").filter(|c| !c.is_empty()).cloned(),
            };
            if flag(&q, "watch") {
                return watch(s, &target, &ctx, &q, &options, table, &tb).await;
            }
            let list = target
                .resource
                .backend
                .list(&ctx, target.namespace.as_deref(), &options)
                .await?;
            if table {
                let bytes = crate::table_rows::table_json(
                    &tb,
                    &target.resource.rows,
                    &list.items,
                    Some(list.resource_version.to_string()),
                    list.continue_token,
                );
                return Ok(bytes_response(StatusCode::OK, TABLE_CONTENT_TYPE, bytes));
            }
            Ok(list_response(&kind.api_version(), &kind.list_kind(), &list))
        }
        (&Method::GET, Some(name)) => {
            let obj = match &custom_sub {
                Some(sub) => {
                    target
                        .resource
                        .backend
                        .subresource(&ctx, &ns, name, sub, None)
                        .await?
                }
                None => target.resource.backend.get(&ctx, &ns, name).await?,
            };
            if table {
                let t = tb.table(
                    std::slice::from_ref(&obj),
                    obj.pointer("/metadata/resourceVersion")
                        .and_then(Value::as_str)
                        .map(String::from),
                    None,
                );
                return Ok(json_response(StatusCode::OK, TABLE_CONTENT_TYPE, &t));
            }
            Ok(ok_json(&obj))
        }
        (&Method::POST, None) => {
            if target.namespace.is_none() && kind.namespaced {
                return Err(ApiError::method_not_allowed(
                    "POST requires a namespace in the path",
                ));
            }
            let fv = fv()?;
            let (headers, body) = read_body(s, req).await?;
            let obj = crate::rest::parse_object(&kind, &body, &content_type(&headers))?;
            crate::audit::request_object(&obj);
            written(rest.create(&ns, obj, fv).await?)
        }
        (&Method::POST, Some(name)) if custom_sub.is_some() => {
            // A create-only subresource (`serviceaccounts/token`): answered by the backend.
            let sub = custom_sub.as_deref().unwrap_or_default();
            let (headers, body) = read_body(s, req).await?;
            let obj = crate::rest::parse_object(&kind, &body, &content_type(&headers))?;
            let out = target
                .resource
                .backend
                .subresource(&ctx, &ns, name, sub, Some(obj))
                .await?;
            Ok(json_response(StatusCode::CREATED, JSON, &out))
        }
        (&Method::PUT, Some(name)) => {
            let fv = fv()?;
            let (headers, body) = read_body(s, req).await?;
            let obj = crate::rest::parse_object(&kind, &body, &content_type(&headers))?;
            crate::audit::request_object(&obj);
            if let Some(sub) = &custom_sub {
                let out = target
                    .resource
                    .backend
                    .subresource(&ctx, &ns, name, sub, Some(obj))
                    .await?;
                return Ok(ok_json(&out));
            }
            written(rest.update(&ns, name, obj, fv, part).await?)
        }
        (&Method::PATCH, Some(name)) => {
            let fv = fv()?;
            let (headers, body) = read_body(s, req).await?;
            let pt = PatchType::from_content_type(&content_type(&headers))?;
            patch_options(pt, &q)?;
            if pt == PatchType::Strategic && kind.custom_resource {
                // kube-apiserver has no strategic merge information for custom resources.
                return Err(ApiError::unsupported_media_type(
                    "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
                ));
            }
            if let Some(sub) = &custom_sub {
                // A custom subresource is patched as read, patch, write back.
                if pt == PatchType::Apply {
                    return Err(ApiError::method_not_allowed(
                        "server-side apply is not supported on this subresource",
                    ));
                }
                let backend = &target.resource.backend;
                let mut obj = backend.subresource(&ctx, &ns, name, sub, None).await?;
                crate::patch::apply(pt, &mut obj, &crate::patch::parse_body(pt, &body)?)?;
                let out = backend.subresource(&ctx, &ns, name, sub, Some(obj)).await?;
                return Ok(ok_json(&out));
            }
            written(rest.patch(&ns, name, pt, &body, fv, part).await?)
        }
        (&Method::DELETE, Some(name)) if target.sub.is_none() => {
            let (headers, body) = read_body(s, req).await?;
            let mut options = crate::dryrun::delete_options(&body, &content_type(&headers))?;
            // `?propagationPolicy=` counts as the DeleteOptions field when the body has none.
            if let Some(policy) = q.get("propagationPolicy").filter(|p| !p.is_empty())
                && options
                    .as_ref()
                    .is_none_or(|o| o.get("propagationPolicy").is_none_or(Value::is_null))
            {
                let o = options.get_or_insert_with(|| serde_json::json!({}));
                if let Some(m) = o.as_object_mut() {
                    m.insert("propagationPolicy".into(), policy.clone().into());
                }
            }
            // kubectl puts dryRun in the DeleteOptions body, other clients in the query: either
            // makes this a dry run.
            let ctx = RequestContext {
                dry_run: ctx.dry_run || crate::dryrun::from_delete_options(options.as_ref())?,
                ..ctx.clone()
            };
            let rest = Rest { ctx: &ctx, ..rest };
            let obj = rest.delete(&ns, name, options.as_ref()).await?;
            Ok(ok_json(&obj))
        }
        _ => Err(ApiError::method_not_allowed(format!(
            "{method} is not supported on {path}"
        ))),
    }
}

/// kube-apiserver's `PatchOptions` rules: apply needs a `fieldManager`; only apply takes
/// `force`; a manager name is at most 128 characters.
fn patch_options(pt: PatchType, q: &HashMap<String, String>) -> Result<(), ApiError> {
    let manager = q.get("fieldManager").map(String::as_str).unwrap_or("");
    let mut errs = Vec::new();
    if pt == PatchType::Apply && manager.is_empty() {
        errs.push(crate::error::FieldError {
            reason: "FieldValueRequired",
            field: "fieldManager".into(),
            message: "Required value: is required for apply patch".into(),
        });
    }
    if pt != PatchType::Apply && q.contains_key("force") {
        errs.push(crate::error::FieldError::forbidden(
            "force",
            "may not be specified for non-apply patch",
        ));
    }
    if manager.chars().count() > 128 {
        errs.push(crate::error::FieldError {
            reason: "FieldValueTooLong",
            field: "fieldManager".into(),
            message: "Too long: may not be more than 128 bytes".into(),
        });
    }
    if errs.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid("meta.k8s.io", "PatchOptions", "", errs))
    }
}

fn written(w: Written) -> Result<Response, ApiError> {
    let code = if w.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    let mut resp = json_response(code, JSON, &w.object);
    for warning in w.warnings {
        let text = format!("299 - {}", serde_json::Value::String(warning));
        if let Ok(v) = HeaderValue::from_str(&text) {
            resp.headers_mut().append("Warning", v);
        }
    }
    Ok(resp)
}

/// A list reply built by splicing the stored JSON of each item (no re-serialization).
fn list_response(
    api_version: &str,
    list_kind: &str,
    list: &crate::resource::ListResult,
) -> Response {
    let total: usize = list.items.iter().map(|i| i.len() + 1).sum();
    let mut out = Vec::with_capacity(total + 256);
    out.extend_from_slice(b"{\"apiVersion\":");
    out.extend_from_slice(Value::String(api_version.into()).to_string().as_bytes());
    out.extend_from_slice(b",\"kind\":");
    out.extend_from_slice(Value::String(list_kind.into()).to_string().as_bytes());
    out.extend_from_slice(b",\"metadata\":{\"resourceVersion\":\"");
    out.extend_from_slice(list.resource_version.to_string().as_bytes());
    out.push(b'"');
    if let Some(c) = &list.continue_token {
        out.extend_from_slice(b",\"continue\":");
        out.extend_from_slice(Value::String(c.clone()).to_string().as_bytes());
    }
    if let Some(n) = list.remaining_item_count {
        out.extend_from_slice(b",\"remainingItemCount\":");
        out.extend_from_slice(n.to_string().as_bytes());
    }
    out.extend_from_slice(b"},\"items\":[");
    for (i, item) in list.items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(item);
    }
    out.extend_from_slice(b"]}");
    (
        StatusCode::OK,
        [(CONTENT_TYPE, JSON)],
        crate::body::sliced(out),
    )
        .into_response()
}

async fn watch(
    s: &Arc<ApiServer>,
    target: &Target<'_>,
    ctx: &RequestContext,
    q: &HashMap<String, String>,
    options: &ListOptions,
    table: bool,
    tb: &TableBuilder<'_>,
) -> Result<Response, ApiError> {
    let _ = s;
    let kind = target.resource.kind.clone();
    let send_initial = flag(q, "sendInitialEvents");
    let rv = q.get("resourceVersion").map(String::as_str).unwrap_or("");
    let start = match rv {
        "" | "0" => WatchStart::Now {
            initial_events: send_initial,
        },
        r if send_initial => {
            let _ = r;
            WatchStart::Now {
                initial_events: true,
            }
        }
        r => WatchStart::After(
            r.parse()
                .map_err(|_| ApiError::bad_request(format!("invalid resourceVersion {r:?}")))?,
        ),
    };
    let bookmarks = flag(q, "allowWatchBookmarks");
    let timeout = q
        .get("timeoutSeconds")
        .and_then(|t| t.parse::<u64>().ok())
        .map(Duration::from_secs)
        .unwrap_or(DEFAULT_WATCH_TIMEOUT);
    let stream = target
        .resource
        .backend
        .watch(ctx, target.namespace.as_deref(), start, options)
        .await?;
    let columns = tb.columns.to_vec();
    let age = tb.age_column;
    let include = tb.include;
    let api_version = kind.api_version();
    let kind_name = kind.kind.clone();
    let lines = stream
        .filter_map(move |item| {
            let line = match item {
                WatchItem::Event { event_type, object } => {
                    if table {
                        let obj: Value = serde_json::from_slice(&object).unwrap_or(Value::Null);
                        let tb = TableBuilder { columns: &columns, age_column: age, include };
                        let t = tb.table(std::slice::from_ref(&obj), obj.pointer("/metadata/resourceVersion").and_then(Value::as_str).map(String::from), None);
                        Some(serde_json::json!({"type": event_type.as_str(), "object": t}).to_string().into_bytes())
                    } else {
                        let mut line = Vec::with_capacity(object.len() + 32);
                        line.extend_from_slice(b"{\"type\":\"");
                        line.extend_from_slice(event_type.as_str().as_bytes());
                        line.extend_from_slice(b"\",\"object\":");
                        line.extend_from_slice(&object);
                        line.push(b'}');
                        Some(line)
                    }
                }
                WatchItem::Bookmark { resource_version, initial_events_end } => {
                    if !bookmarks && !initial_events_end {
                        None
                    } else {
                        let mut metadata = serde_json::json!({"resourceVersion": resource_version.to_string()});
                        if initial_events_end {
                            metadata["annotations"] = serde_json::json!({"k8s.io/initial-events-end": "true"});
                        }
                        Some(serde_json::json!({"type": "BOOKMARK", "object": {"kind": kind_name, "apiVersion": api_version, "metadata": metadata}}).to_string().into_bytes())
                    }
                }
                WatchItem::Error(e) => Some(serde_json::json!({"type": "ERROR", "object": e.to_status()}).to_string().into_bytes()),
            };
            futures::future::ready(line.map(|mut l| {
                l.push(b'\n');
                Ok::<_, std::convert::Infallible>(Bytes::from(l))
            }))
        })
        .take_until(tokio::time::sleep(timeout));
    let ct = if table { TABLE_CONTENT_TYPE } else { JSON };
    Ok(Response::builder()
        .status(StatusCode::OK)
        .header(CONTENT_TYPE, ct)
        .header("Cache-Control", "no-cache, private")
        .body(Body::from_stream(lines))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_parsing_tolerates_kube_rs() {
        let q = serde_urlencoded_pairs("&watch=true&labelSelector=app%3Dx%2Cb+in+%28c%29&x");
        assert_eq!(q.get("watch").map(String::as_str), Some("true"));
        assert_eq!(
            q.get("labelSelector").map(String::as_str),
            Some("app=x,b in (c)")
        );
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
    }

    #[test]
    fn boolean_parameters_read_as_go_does() {
        for v in ["1", "t", "T", "TRUE", "true", "True"] {
            let q = serde_urlencoded_pairs(&format!("watch={v}"));
            assert!(flag(&q, "watch"), "{v}");
        }
        for v in ["0", "false", "False", "yes", ""] {
            let q = serde_urlencoded_pairs(&format!("watch={v}"));
            assert!(!flag(&q, "watch"), "{v}");
        }
    }
}
