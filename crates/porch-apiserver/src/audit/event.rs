//! The audit middleware and the `audit.k8s.io/v1` Event it writes for each request.

use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Request, State};
use axum::http::header::{CONTENT_TYPE, USER_AGENT};
use axum::http::{HeaderMap, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;
use futures::StreamExt;
use serde_json::{Map, Value, json};

use super::policy::Level;
use super::request::RequestAttributes;
use super::{Auditor, SCOPE, Scope};
use crate::auth::UserInfo;

/// Error bodies are read for `responseStatus` up to this size, whatever the level.
const STATUS_BODY_LIMIT: usize = 64 * 1024;

/// RFC 3339 with microseconds, as kube-apiserver's `MicroTime`.
fn micro_now() -> String {
    k8s_openapi::jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%S%.6fZ")
        .to_string()
}

/// Audits one request (installed only when an audit policy is configured).
pub(crate) async fn layer(
    State(auditor): State<Arc<Auditor>>,
    req: Request,
    next: Next,
) -> Response {
    let received = micro_now();
    let user = req
        .extensions()
        .get::<UserInfo>()
        .cloned()
        .unwrap_or_else(|| UserInfo {
            name: "system:anonymous".into(),
            groups: vec!["system:unauthenticated".into()],
            ..Default::default()
        });
    let attrs = RequestAttributes::new(
        user,
        req.method().as_str(),
        req.uri().path(),
        req.uri().query().unwrap_or(""),
    );
    let mut decision = auditor.policy.decide(&attrs);
    // Secrets' data never reaches the log (kube-apiserver's policies log them at Metadata).
    if attrs.is_secret() && decision.level > Level::Metadata {
        decision.level = Level::Metadata;
    }
    if !decision.logs("ResponseComplete") {
        return next.run(req).await;
    }
    let level = decision.level;
    let audit_id = req
        .headers()
        .get("audit-id")
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty() && v.len() <= 128)
        .map(str::to_owned)
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let peer = req
        .extensions()
        .get::<ConnectInfo<std::net::SocketAddr>>()
        .map(|c| c.0.ip().to_string());
    let mut event = Map::new();
    event.insert("kind".into(), "Event".into());
    event.insert("apiVersion".into(), "audit.k8s.io/v1".into());
    event.insert("level".into(), level.as_str().into());
    event.insert("auditID".into(), audit_id.clone().into());
    event.insert("stage".into(), "ResponseComplete".into());
    // Path and query only: HTTP/2 requests carry the scheme and authority in the URI too.
    let uri = req.uri().path_and_query().map_or("/", |p| p.as_str());
    event.insert("requestURI".into(), uri.into());
    event.insert("verb".into(), attrs.verb.clone().into());
    event.insert("user".into(), user_json(&attrs.user));
    event.insert(
        "sourceIPs".into(),
        source_ips(req.headers(), peer.as_deref()).into(),
    );
    if let Some(agent) = req.headers().get(USER_AGENT).and_then(|v| v.to_str().ok()) {
        event.insert("userAgent".into(), agent.into());
    }
    if let Some(r) = &attrs.resource {
        event.insert("objectRef".into(), object_ref(r));
    }

    let mut req = req;
    if level >= Level::Request && attrs.verb != "watch" {
        let ct = content_type(req.headers());
        let (parts, body) = req.into_parts();
        let (body, bytes) = capture(body, auditor.max_body_bytes).await;
        if let Some(obj) = bytes.as_deref().and_then(|b| decode(&ct, b)) {
            event.insert("requestObject".into(), obj);
        }
        req = Request::from_parts(parts, body);
    }

    let scope = Arc::new(Mutex::new(Scope {
        want_request: level >= Level::Request && !event.contains_key("requestObject"),
        ..Scope::default()
    }));
    let resp = SCOPE.scope(scope.clone(), next.run(req)).await;
    let code = resp.status().as_u16();
    let (mut parts, body) = resp.into_parts();
    let wants_body = level == Level::RequestResponse && attrs.verb != "watch";
    // A create's objectRef gets the new object's name, uid and resourceVersion (as
    // kube-apiserver's), at any level.
    let created = attrs.verb == "create" && (200..300).contains(&code);
    let limit = if wants_body || created {
        auditor.max_body_bytes
    } else if code >= 400 {
        STATUS_BODY_LIMIT
    } else {
        0
    };
    let body = if limit > 0 {
        let ct = content_type(&parts.headers);
        let (body, bytes) = capture(body, limit).await;
        let obj = bytes.as_deref().and_then(|b| decode(&ct, b));
        event.insert("responseStatus".into(), response_status(code, obj.as_ref()));
        if created
            && let (Some(meta), Some(Value::Object(r))) = (
                obj.as_ref().and_then(|o| o.get("metadata")),
                event.get_mut("objectRef"),
            )
        {
            for (from, to) in [
                ("name", "name"),
                ("namespace", "namespace"),
                ("uid", "uid"),
                ("resourceVersion", "resourceVersion"),
            ] {
                if let Some(v) = meta
                    .get(from)
                    .filter(|v| v.as_str().is_some_and(|s| !s.is_empty()))
                {
                    r.insert(to.into(), v.clone());
                }
            }
        }
        if wants_body && let Some(obj) = obj {
            event.insert("responseObject".into(), obj);
        }
        body
    } else {
        event.insert("responseStatus".into(), response_status(code, None));
        body
    };
    event.insert("requestReceivedTimestamp".into(), received.into());
    event.insert("stageTimestamp".into(), micro_now().into());
    let Scope {
        annotations,
        request_object,
        ..
    } = scope
        .lock()
        .map(|mut a| std::mem::take(&mut *a))
        .unwrap_or_default();
    if let Some(obj) = request_object {
        event.insert("requestObject".into(), obj);
    }
    if !annotations.is_empty() {
        event.insert("annotations".into(), json!(annotations));
    }
    let mut line = serde_json::to_vec(&Value::Object(event)).unwrap_or_default();
    line.push(b'\n');
    auditor.send(line);
    if let Ok(v) = HeaderValue::from_str(&audit_id) {
        parts.headers.insert("audit-id", v);
    }
    Response::from_parts(parts, body)
}

/// Audits a request refused with 401 (kube-apiserver's `WithFailedAuthenticationAudit`): no
/// user, stage `ResponseStarted`, the response status naming the methods attempted, never the
/// credential itself; the policy decides the level as for any request. Returns the event's
/// audit ID for the response's `Audit-Id` header, or `None` when nothing is logged.
pub(crate) fn failed_authentication(auditor: &Auditor, req: &Request) -> Option<String> {
    let attrs = RequestAttributes::new(
        UserInfo::default(),
        req.method().as_str(),
        req.uri().path(),
        req.uri().query().unwrap_or(""),
    );
    let decision = auditor.policy.decide(&attrs);
    if !decision.logs("ResponseStarted") {
        return None;
    }
    let received = micro_now();
    let audit_id = uuid::Uuid::new_v4().to_string();
    let peer = req
        .extensions()
        .get::<ConnectInfo<std::net::SocketAddr>>()
        .map(|c| c.0.ip().to_string());
    let mut event = Map::new();
    event.insert("kind".into(), "Event".into());
    event.insert("apiVersion".into(), "audit.k8s.io/v1".into());
    // The level as decided; no body is read before authentication, whatever it says.
    event.insert("level".into(), decision.level.as_str().into());
    event.insert("auditID".into(), audit_id.clone().into());
    event.insert("stage".into(), "ResponseStarted".into());
    let uri = req.uri().path_and_query().map_or("/", |p| p.as_str());
    event.insert("requestURI".into(), uri.into());
    event.insert("verb".into(), attrs.verb.clone().into());
    event.insert("user".into(), json!({}));
    event.insert(
        "sourceIPs".into(),
        source_ips(req.headers(), peer.as_deref()).into(),
    );
    if let Some(agent) = req.headers().get(USER_AGENT).and_then(|v| v.to_str().ok()) {
        event.insert("userAgent".into(), agent.into());
    }
    if let Some(r) = &attrs.resource {
        event.insert("objectRef".into(), object_ref(r));
    }
    event.insert(
        "responseStatus".into(),
        json!({"metadata": {}, "message": auth_methods(req), "code": 401}),
    );
    event.insert("requestReceivedTimestamp".into(), received.into());
    event.insert("stageTimestamp".into(), micro_now().into());
    let mut line = serde_json::to_vec(&Value::Object(event)).unwrap_or_default();
    line.push(b'\n');
    auditor.send(line);
    Some(audit_id)
}

/// kube-apiserver's `getAuthMethods`: which kinds of credentials the request carried.
fn auth_methods(req: &Request) -> String {
    let mut methods = Vec::new();
    let auth = req
        .headers()
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .trim();
    let mut parts = auth.split(' ');
    let scheme = parts.next().unwrap_or("").to_ascii_lowercase();
    let has_value = parts.next().is_some();
    if scheme == "basic" && has_value {
        methods.push("basic");
    }
    if scheme == "bearer" && has_value {
        methods.push("bearer");
    }
    if req
        .extensions()
        .get::<crate::auth::PeerCertificates>()
        .is_some_and(|p| !p.chain.is_empty())
    {
        methods.push("x509");
    }
    if methods.is_empty() {
        "Authentication failed, no credentials provided".into()
    } else {
        format!("Authentication failed, attempted: {}", methods.join(", "))
    }
}

fn object_ref(r: &super::ResourceAttributes) -> Value {
    let mut o = Map::new();
    for (k, v) in [
        ("resource", &r.resource),
        ("namespace", &r.namespace),
        ("name", &r.name),
        ("apiGroup", &r.api_group),
        ("apiVersion", &r.api_version),
        ("subresource", &r.subresource),
    ] {
        if !v.is_empty() {
            o.insert(k.into(), v.clone().into());
        }
    }
    Value::Object(o)
}

fn user_json(u: &UserInfo) -> Value {
    let mut o = Map::new();
    o.insert("username".into(), u.name.clone().into());
    if !u.uid.is_empty() {
        o.insert("uid".into(), u.uid.clone().into());
    }
    if !u.groups.is_empty() {
        o.insert("groups".into(), json!(u.groups));
    }
    if !u.extra.is_empty() {
        o.insert("extra".into(), json!(u.extra));
    }
    Value::Object(o)
}

/// `X-Forwarded-For`, then `X-Real-Ip`, then the peer, without repeats (kube-apiserver's order).
fn source_ips(headers: &HeaderMap, peer: Option<&str>) -> Vec<String> {
    let mut ips: Vec<String> = Vec::new();
    let mut add = |ip: &str| {
        let ip = ip.trim();
        if !ip.is_empty() && ip.parse::<std::net::IpAddr>().is_ok() && !ips.iter().any(|i| i == ip)
        {
            ips.push(ip.to_owned());
        }
    };
    if let Some(v) = headers.get("x-forwarded-for").and_then(|v| v.to_str().ok()) {
        v.split(',').for_each(&mut add);
    }
    if let Some(v) = headers.get("x-real-ip").and_then(|v| v.to_str().ok()) {
        add(v);
    }
    if let Some(p) = peer {
        add(p);
    }
    ips
}

fn content_type(headers: &HeaderMap) -> String {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/json")
        .to_ascii_lowercase()
}

/// The body as JSON when it is JSON or YAML (protobuf and other bodies are left out).
fn decode(content_type: &str, bytes: &[u8]) -> Option<Value> {
    if bytes.is_empty() {
        return None;
    }
    if content_type.contains("yaml") {
        return serde_yaml::from_slice::<Value>(bytes).ok();
    }
    if content_type.contains("json") {
        return serde_json::from_slice(bytes).ok();
    }
    None
}

/// kube-apiserver's `responseStatus`: the code, and for a `Status` reply its status, reason
/// and message.
fn response_status(code: u16, body: Option<&Value>) -> Value {
    let mut o = Map::new();
    o.insert("metadata".into(), json!({}));
    if let Some(b) = body.filter(|b| b.get("kind").and_then(Value::as_str) == Some("Status")) {
        for k in ["status", "message", "reason"] {
            if let Some(v) = b
                .get(k)
                .filter(|v| v.as_str().is_some_and(|s| !s.is_empty()))
            {
                o.insert(k.into(), v.clone());
            }
        }
    }
    o.insert("code".into(), code.into());
    Value::Object(o)
}

/// Reads up to `max` bytes of `body`: the whole of it when it fits (and a body replaying it),
/// else `None` and a body streaming what was read followed by the rest.
async fn capture(body: Body, max: usize) -> (Body, Option<Bytes>) {
    let mut stream = body.into_data_stream();
    let mut chunks: Vec<Bytes> = Vec::new();
    let mut size = 0usize;
    loop {
        match stream.next().await {
            Some(Ok(chunk)) => {
                size = size.saturating_add(chunk.len());
                chunks.push(chunk);
                if size > max {
                    let head = futures::stream::iter(chunks.into_iter().map(Ok));
                    return (Body::from_stream(head.chain(stream)), None);
                }
            }
            Some(Err(e)) => {
                let head = futures::stream::iter(
                    chunks.into_iter().map(Ok).chain(std::iter::once(Err(e))),
                );
                return (Body::from_stream(head), None);
            }
            None => break,
        }
    }
    let all = if chunks.len() == 1 {
        chunks.pop().unwrap_or_default()
    } else {
        Bytes::from(chunks.concat())
    };
    (Body::from(all.clone()), Some(all))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_ips_in_kube_order() {
        let mut h = HeaderMap::new();
        h.insert(
            "x-forwarded-for",
            HeaderValue::from_static("10.0.0.1, 10.0.0.2"),
        );
        h.insert("x-real-ip", HeaderValue::from_static("10.0.0.2"));
        assert_eq!(
            source_ips(&h, Some("127.0.0.1")),
            ["10.0.0.1", "10.0.0.2", "127.0.0.1"]
        );
        assert_eq!(source_ips(&HeaderMap::new(), None), Vec::<String>::new());
    }

    #[test]
    fn status_replies_fill_response_status() {
        let s =
            json!({"kind": "Status", "status": "Failure", "reason": "NotFound", "message": "gone"});
        let r = response_status(404, Some(&s));
        assert_eq!(r["code"], 404);
        assert_eq!(r["reason"], "NotFound");
        assert_eq!(
            response_status(200, None),
            json!({"metadata": {}, "code": 200})
        );
        assert!(micro_now().ends_with('Z') && micro_now().contains('.'));
    }

    #[tokio::test]
    async fn capture_keeps_the_body_whole() {
        let (body, bytes) = capture(Body::from("abcdef"), 100).await;
        assert_eq!(bytes.as_deref(), Some(&b"abcdef"[..]));
        let again = axum::body::to_bytes(body, 100).await.expect("body");
        assert_eq!(&again[..], b"abcdef");
        let (body, bytes) = capture(Body::from("abcdef"), 3).await;
        assert!(bytes.is_none());
        let again = axum::body::to_bytes(body, 100).await.expect("body");
        assert_eq!(&again[..], b"abcdef");
    }
}
