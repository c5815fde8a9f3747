//! The default policy created at start-up when absent, as kube-apiserver's bootstrap policy:
//! objects carry `rbac.authorization.kubernetes.io/autoupdate: "true"`, and while they keep
//! it, rules shipped later are added back to them at start-up (never removed: an operator's
//! additions stay).

use serde_json::{Value, json};

use super::RBAC_GROUP;
use crate::error::ApiError;
use crate::registry::Registry;
use crate::resource::{RequestContext, Resource};
use crate::rest::{FieldValidation, Part, Rest};

const AUTOUPDATE: &str = "rbac.authorization.kubernetes.io/autoupdate";

/// A ClusterRole of the default policy.
pub fn cluster_role(name: &str, labels: Value, rules: Value) -> Value {
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": name, "labels": labels, "annotations": {AUTOUPDATE: "true"}},
        "rules": rules,
    })
}

/// A ClusterRoleBinding of the default policy to groups.
pub fn cluster_role_binding(name: &str, role: &str, groups: &[&str]) -> Value {
    let subjects: Vec<Value> = groups
        .iter()
        .map(|g| json!({"apiGroup": RBAC_GROUP, "kind": "Group", "name": g}))
        .collect();
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": name, "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
                     "annotations": {AUTOUPDATE: "true"}},
        "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": role},
        "subjects": subjects,
    })
}

/// kube-apiserver's roles that let every user discover the API, check its own access and read
/// health: `cluster-admin` (to `system:masters`), `system:discovery`, `system:basic-user`,
/// `system:public-info-viewer`; and the aggregated `admin`, `edit` and `view`.
pub fn kube_bootstrap_policy() -> (Vec<Value>, Vec<Value>) {
    let boot = json!({"kubernetes.io/bootstrapping": "rbac-defaults"});
    let health = json!(["/healthz", "/livez", "/readyz", "/version", "/version/"]);
    let mut roles = vec![
        cluster_role(
            "cluster-admin",
            boot.clone(),
            json!([
                {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                {"nonResourceURLs": ["*"], "verbs": ["*"]}
            ]),
        ),
        cluster_role(
            "system:discovery",
            boot.clone(),
            json!([{"nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez",
                     "/openapi", "/openapi/*", "/readyz", "/version", "/version/"],
                    "verbs": ["get"]}]),
        ),
        cluster_role(
            "system:basic-user",
            boot.clone(),
            json!([
                {"apiGroups": ["authorization.k8s.io"],
                 "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"], "verbs": ["create"]},
                {"apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"], "verbs": ["create"]}
            ]),
        ),
        cluster_role(
            "system:public-info-viewer",
            boot.clone(),
            json!([{"nonResourceURLs": health, "verbs": ["get"]}]),
        ),
    ];
    for (name, to) in [
        ("admin", "aggregate-to-admin"),
        ("edit", "aggregate-to-edit"),
        ("view", "aggregate-to-view"),
    ] {
        let mut labels = boot.clone();
        // As in Kubernetes: what `view` allows, `edit` allows; what `edit` allows, `admin` does.
        match name {
            "edit" => labels["rbac.authorization.k8s.io/aggregate-to-admin"] = json!("true"),
            "view" => labels["rbac.authorization.k8s.io/aggregate-to-edit"] = json!("true"),
            _ => {}
        }
        let mut role = cluster_role(name, labels, json!([]));
        role["aggregationRule"] = json!({"clusterRoleSelectors": [
            {"matchLabels": {format!("rbac.authorization.k8s.io/{to}"): "true"}}
        ]});
        roles.push(role);
    }
    let bindings = vec![
        cluster_role_binding("cluster-admin", "cluster-admin", &["system:masters"]),
        cluster_role_binding(
            "system:discovery",
            "system:discovery",
            &["system:authenticated"],
        ),
        cluster_role_binding(
            "system:basic-user",
            "system:basic-user",
            &["system:authenticated"],
        ),
        cluster_role_binding(
            "system:public-info-viewer",
            "system:public-info-viewer",
            &["system:authenticated", "system:unauthenticated"],
        ),
    ];
    (roles, bindings)
}

fn system_ctx() -> RequestContext {
    RequestContext {
        user: "system:apiserver".into(),
        field_manager: Some("rbac-bootstrap".into()),
        ..Default::default()
    }
}

/// Creates each of `objects` (ClusterRoles and ClusterRoleBindings) that is absent; adds the
/// missing shipped rules to a ClusterRole still marked for auto-update.
pub async fn ensure_defaults(reg: &Registry, objects: Vec<Value>) -> Result<(), ApiError> {
    let ctx = system_ctx();
    for obj in objects {
        let plural = match obj.get("kind").and_then(Value::as_str) {
            Some("ClusterRole") => "clusterroles",
            Some("ClusterRoleBinding") => "clusterrolebindings",
            _ => continue,
        };
        let Some(resource) = reg.find(RBAC_GROUP, "v1", plural) else {
            continue;
        };
        ensure_one(resource, &ctx, obj).await?;
    }
    Ok(())
}

async fn ensure_one(resource: &Resource, ctx: &RequestContext, obj: Value) -> Result<(), ApiError> {
    let rest = Rest {
        resource,
        ctx,
        namespaces: None,
    };
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let current = match resource.backend.get(ctx, "", &name).await {
        Ok(c) => c,
        Err(e) if e.kind == porch_core::ErrorKind::NotFound => {
            return match rest.create("", obj, FieldValidation::Ignore).await {
                Ok(_) => {
                    tracing::info!(name, kind = %resource.kind.kind, "created default RBAC object");
                    Ok(())
                }
                Err(e) if e.kind == porch_core::ErrorKind::AlreadyExists => Ok(()),
                Err(e) => Err(e),
            };
        }
        Err(e) => return Err(e),
    };
    let auto = current
        .pointer(&format!(
            "/metadata/annotations/{}",
            AUTOUPDATE.replace('/', "~1")
        ))
        .and_then(Value::as_str)
        == Some("true");
    // Aggregated roles' rules belong to the aggregation controller.
    if !auto || resource.kind.kind != "ClusterRole" || obj.get("aggregationRule").is_some() {
        return Ok(());
    }
    let have = current
        .get("rules")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let missing: Vec<Value> = obj
        .get("rules")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|r| !have.contains(r))
        .cloned()
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let mut next = current.clone();
    next["rules"] = Value::Array(have.into_iter().chain(missing).collect());
    rest.update("", &name, next, FieldValidation::Ignore, Part::Main)
        .await
        .map(|_| ())
}
