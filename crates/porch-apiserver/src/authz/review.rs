//! The access and identity reviews: `authorization.k8s.io/v1` SelfSubjectAccessReview
//! (`kubectl auth can-i`), SubjectAccessReview, SelfSubjectRulesReview
//! (`kubectl auth can-i --list`) and `authentication.k8s.io/v1` SelfSubjectReview
//! (`kubectl auth whoami`). Bodies come as JSON, YAML or (kubectl 1.32) protobuf; the answer
//! is the object with its `status`, 201 as kube-apiserver answers a create.

use std::sync::Arc;

use axum::extract::Request;
use axum::http::StatusCode;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::{Attributes, Authorizer};
use crate::auth::UserInfo;
use crate::error::{ApiError, FieldError};
use crate::http::ApiServer;

const REVIEWS: [(&str, &str); 5] = [
    ("authorization.k8s.io", "selfsubjectaccessreviews"),
    ("authorization.k8s.io", "subjectaccessreviews"),
    ("authorization.k8s.io", "localsubjectaccessreviews"),
    ("authorization.k8s.io", "selfsubjectrulesreviews"),
    ("authentication.k8s.io", "selfsubjectreviews"),
];

/// Whether the request creates one of the reviews.
pub fn is_review(a: &Attributes) -> bool {
    a.resource_request
        && a.verb == "create"
        && a.subresource.is_empty()
        && a.api_version == "v1"
        && REVIEWS
            .iter()
            .any(|(g, r)| *g == a.api_group && *r == a.resource)
}

pub async fn serve(
    s: &Arc<ApiServer>,
    authz: &Arc<Authorizer>,
    user: &UserInfo,
    attrs: &Attributes,
    req: Request,
) -> Response {
    match answer(s, authz, user, attrs, req).await {
        Ok(body) => (
            StatusCode::CREATED,
            [(CONTENT_TYPE, "application/json")],
            serde_json::to_vec(&body).unwrap_or_default(),
        )
            .into_response(),
        Err(e) => e.into_response(),
    }
}

fn decode(content_type: &str, body: &[u8]) -> Result<Value, ApiError> {
    let media = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let v: Value = match media.as_str() {
        "application/vnd.kubernetes.protobuf" => porch_api::protobuf::decode_review(body)
            .map_err(|e| ApiError::bad_request(e.to_string()))?,
        "application/yaml" => serde_yaml::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?,
        "" | "application/json" => serde_json::from_slice(body).map_err(|e| {
            ApiError::bad_request(format!("the object provided is unrecognized: {e}"))
        })?,
        _ => {
            return Err(ApiError::unsupported_media_type(
                "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf",
            ));
        }
    };
    if v.is_object() {
        Ok(v)
    } else {
        Err(ApiError::bad_request(
            "the object provided is not a JSON object",
        ))
    }
}

async fn answer(
    s: &Arc<ApiServer>,
    authz: &Arc<Authorizer>,
    user: &UserInfo,
    attrs: &Attributes,
    req: Request,
) -> Result<Value, ApiError> {
    let resource = attrs.resource.as_str();
    let (headers, body) = crate::http::read_body(s, req).await?;
    let ct = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let mut obj = decode(ct, &body)?;
    let spec = obj.get("spec").cloned().unwrap_or_else(|| json!({}));
    let status = match resource {
        "selfsubjectaccessreviews" => {
            access_status(authz, user, &spec, "SelfSubjectAccessReview").await?
        }
        "subjectaccessreviews" | "localsubjectaccessreviews" => {
            let kind = if resource == "subjectaccessreviews" {
                "SubjectAccessReview"
            } else {
                local_review_checks(&mut obj, &spec, &attrs.namespace)?;
                "LocalSubjectAccessReview"
            };
            let s = |f: &str| {
                spec.get(f)
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string()
            };
            let groups: Vec<String> = spec
                .get("groups")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(String::from)
                        .collect()
                })
                .unwrap_or_default();
            if s("user").is_empty() && groups.is_empty() {
                return Err(ApiError::invalid(
                    "authorization.k8s.io",
                    kind,
                    "",
                    vec![FieldError::invalid(
                        "spec.user",
                        &json!(""),
                        "at least one of user or group must be specified",
                    )],
                ));
            }
            let subject = UserInfo {
                name: s("user"),
                uid: s("uid"),
                groups,
                extra: Default::default(),
            };
            access_status(authz, &subject, &spec, kind).await?
        }
        "selfsubjectrulesreviews" => {
            let ns = spec.get("namespace").and_then(Value::as_str).unwrap_or("");
            rules_status(authz, user, ns)
        }
        _ => {
            let mut info = json!({"username": user.name, "groups": user.groups});
            if !user.uid.is_empty() {
                info["uid"] = json!(user.uid);
            }
            if !user.extra.is_empty() {
                info["extra"] = json!(user.extra);
            }
            json!({"userInfo": info})
        }
    };
    obj["status"] = status;
    if obj.get("metadata").is_none_or(Value::is_null) {
        obj["metadata"] = json!({});
    }
    Ok(obj)
}

/// kube-apiserver's checks of a LocalSubjectAccessReview created in `namespace`: the object's
/// namespace is the request's (filled in when unset), metadata is otherwise empty, the
/// attributes are of a resource in that same namespace.
fn local_review_checks(obj: &mut Value, spec: &Value, namespace: &str) -> Result<(), ApiError> {
    let meta_ns = obj
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if !meta_ns.is_empty() && meta_ns != namespace {
        return Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    if obj.get("metadata").is_none_or(|m| !m.is_object()) {
        obj["metadata"] = json!({});
    }
    obj["metadata"]["namespace"] = json!(namespace);
    let mut errs = Vec::new();
    let mut rest = obj["metadata"].clone();
    if let Some(m) = rest.as_object_mut() {
        m.remove("namespace");
        m.remove("managedFields");
        m.retain(|_, v| !v.is_null() && v.as_str() != Some(""));
    }
    if rest.as_object().is_some_and(|m| !m.is_empty()) {
        errs.push(FieldError::invalid(
            "metadata",
            &obj["metadata"],
            "must be empty except for namespace",
        ));
    }
    if let Some(r) = spec.get("resourceAttributes") {
        let ns = r.get("namespace").and_then(Value::as_str).unwrap_or("");
        if ns != namespace {
            errs.push(FieldError::invalid(
                "spec.resourceAttributes.namespace",
                &json!(ns),
                "must match metadata.namespace",
            ));
        }
    }
    if let Some(n) = spec.get("nonResourceAttributes") {
        errs.push(FieldError::invalid(
            "spec.nonResourceAttributes",
            n,
            "disallowed on this kind of request",
        ));
    }
    if errs.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid(
            "authorization.k8s.io",
            "LocalSubjectAccessReview",
            "",
            errs,
        ))
    }
}

/// The status of an access review of `subject` doing what `spec` describes.
async fn access_status(
    authz: &Arc<Authorizer>,
    subject: &UserInfo,
    spec: &Value,
    kind: &str,
) -> Result<Value, ApiError> {
    let s = |v: &Value, f: &str| v.get(f).and_then(Value::as_str).unwrap_or("").to_string();
    let attrs = match (
        spec.get("resourceAttributes"),
        spec.get("nonResourceAttributes"),
    ) {
        (Some(r), None) => Attributes {
            verb: s(r, "verb"),
            resource_request: true,
            api_group: s(r, "group"),
            api_version: s(r, "version"),
            resource: s(r, "resource"),
            subresource: s(r, "subresource"),
            namespace: s(r, "namespace"),
            name: s(r, "name"),
            path: String::new(),
        },
        (None, Some(n)) => Attributes {
            verb: s(n, "verb"),
            path: s(n, "path"),
            ..Default::default()
        },
        _ => {
            return Err(ApiError::invalid(
                "authorization.k8s.io",
                kind,
                "",
                vec![FieldError::invalid(
                    "spec.resourceAttributes",
                    &Value::Null,
                    "exactly one of nonResourceAttributes or resourceAttributes must be specified",
                )],
            ));
        }
    };
    let d = authz.authorize_fresh(subject, &attrs).await;
    let mut status = json!({"allowed": d.allowed});
    if !d.reason.is_empty() {
        status["reason"] = json!(d.reason);
    }
    Ok(status)
}

/// kube's SelfSubjectRulesReview status: resource and non-resource rules, never incomplete
/// (every rule is known to the index).
fn rules_status(authz: &Authorizer, user: &UserInfo, namespace: &str) -> Value {
    let mut resource_rules = Vec::new();
    let mut non_resource_rules = Vec::new();
    for r in authz.rules_for(user, namespace) {
        if r.non_resource_urls.is_empty() {
            let mut v =
                json!({"verbs": r.verbs, "apiGroups": r.api_groups, "resources": r.resources});
            if !r.resource_names.is_empty() {
                v["resourceNames"] = json!(r.resource_names);
            }
            resource_rules.push(v);
        } else {
            non_resource_rules
                .push(json!({"verbs": r.verbs, "nonResourceURLs": r.non_resource_urls}));
        }
    }
    json!({"resourceRules": resource_rules, "nonResourceRules": non_resource_rules, "incomplete": false})
}
