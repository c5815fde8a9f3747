//! The served kinds of authorization: `rbac.authorization.k8s.io/v1` Role, ClusterRole,
//! RoleBinding and ClusterRoleBinding on the generic store backend, with kube-apiserver's
//! validation essentials and Table columns; and the review kinds (`authorization.k8s.io/v1`,
//! `authentication.k8s.io/v1`), create-only, whose requests the middleware answers.

use std::sync::Arc;

use porch_core::store::MetadataStore;
use serde_json::{Value, json};

use super::RBAC_GROUP;
use super::escalation::{EscalationGuard, RbacKind};
use super::rules::strings;
use crate::error::{ApiError, FieldError};
use crate::generic::GenericBackend;
use crate::hub::WatchHub;
use crate::registry::Registry;
use crate::resource::{
    Expect, ListOptions, ListResult, RequestContext, ResourceBackend, ResourceHooks, ResourceKind,
    WatchStart, WatchStream,
};
use crate::table::Column;

/// Serves the RBAC kinds from `store` and the review kinds.
pub fn register(reg: &mut Registry, store: &Arc<dyn MetadataStore>, hub: &Arc<WatchHub>) {
    let kinds = [
        ("Role", "roles", true, RbacKind::Role),
        ("ClusterRole", "clusterroles", false, RbacKind::ClusterRole),
        ("RoleBinding", "rolebindings", true, RbacKind::RoleBinding),
        (
            "ClusterRoleBinding",
            "clusterrolebindings",
            false,
            RbacKind::ClusterRoleBinding,
        ),
    ];
    let store_backend = |plural: &str, namespaced: bool| -> Arc<dyn ResourceBackend> {
        let mut k = ResourceKind::new(RBAC_GROUP, "v1", "", plural);
        k.namespaced = namespaced;
        Arc::new(GenericBackend::new(Arc::new(k), store.clone(), hub.clone()))
    };
    // Bindings look their role up here (the store backend needs the plural and scope only).
    let roles = store_backend("roles", true);
    let cluster_roles = store_backend("clusterroles", false);
    for (kind, plural, namespaced, rbac_kind) in kinds {
        let mut k = ResourceKind::new(RBAC_GROUP, "v1", kind, plural);
        k.namespaced = namespaced;
        // kubectl `create role|clusterrole|rolebinding|clusterrolebinding` send protobuf.
        k.protobuf = Some(decode_protobuf);
        if kind.ends_with("Binding") {
            k.columns = binding_columns();
            k.hooks = Arc::new(BindingHooks { namespaced });
        } else {
            k.age_column = false;
            k.columns = vec![Column::created_at()];
            k.hooks = Arc::new(RoleHooks { namespaced });
        }
        let k = Arc::new(ResourceKind {
            garbage_collected: true,
            ..k
        });
        let inner: Arc<dyn ResourceBackend> =
            Arc::new(GenericBackend::new(k.clone(), store.clone(), hub.clone()));
        let guard = EscalationGuard {
            inner,
            kind: rbac_kind,
            roles: roles.clone(),
            cluster_roles: cluster_roles.clone(),
        };
        reg.add(Arc::unwrap_or_clone(k), Arc::new(guard));
    }
    for (group, kind, plural) in [
        (
            "authorization.k8s.io",
            "LocalSubjectAccessReview",
            "localsubjectaccessreviews",
        ),
        (
            "authorization.k8s.io",
            "SelfSubjectAccessReview",
            "selfsubjectaccessreviews",
        ),
        (
            "authorization.k8s.io",
            "SelfSubjectRulesReview",
            "selfsubjectrulesreviews",
        ),
        (
            "authorization.k8s.io",
            "SubjectAccessReview",
            "subjectaccessreviews",
        ),
        (
            "authentication.k8s.io",
            "SelfSubjectReview",
            "selfsubjectreviews",
        ),
    ] {
        let mut k = ResourceKind::new(group, "v1", kind, plural);
        k.namespaced = kind == "LocalSubjectAccessReview";
        k.verbs = vec!["create".into()];
        reg.add(k, Arc::new(Unserved));
    }
}

fn decode_protobuf(body: &[u8]) -> Result<Value, String> {
    porch_api::protobuf::decode_rbac(body).map_err(|e| e.to_string())
}

fn names_of(o: &Value, kind: &str) -> Value {
    let names: Vec<String> = o
        .get("subjects")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|s| s.get("kind").and_then(Value::as_str) == Some(kind))
        .map(|s| {
            let name = s.get("name").and_then(Value::as_str).unwrap_or("");
            match s.get("namespace").and_then(Value::as_str) {
                Some(ns) if kind == "ServiceAccount" => format!("{ns}/{name}"),
                _ => name.to_string(),
            }
        })
        .collect();
    Value::String(names.join(", "))
}

/// kubectl's binding columns: `ROLE` as `Kind/name`, subjects in `-o wide`.
fn binding_columns() -> Vec<Column> {
    vec![
        Column::computed("Role", "string", |o| {
            let r = o.get("roleRef").cloned().unwrap_or_default();
            let s = |f: &str| r.get(f).and_then(Value::as_str).unwrap_or("").to_string();
            json!(format!("{}/{}", s("kind"), s("name")))
        }),
        Column::computed("Users", "string", |o| names_of(o, "User")).priority(1),
        Column::computed("Groups", "string", |o| names_of(o, "Group")).priority(1),
        Column::computed("ServiceAccounts", "string", |o| {
            names_of(o, "ServiceAccount")
        })
        .priority(1),
    ]
}

fn required(field: String, why: &str) -> FieldError {
    FieldError {
        reason: "FieldValueRequired",
        field,
        message: format!("Required value: {why}"),
    }
}

/// kube's `ValidatePolicyRule`.
fn validate_rules(obj: &Value, namespaced: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let rules = obj.get("rules").and_then(Value::as_array);
    for (i, rule) in rules.into_iter().flatten().enumerate() {
        let at = |f: &str| format!("rules[{i}].{f}");
        if strings(rule.get("verbs")).is_empty() {
            errs.push(required(
                at("verbs"),
                "verbs must contain at least one value",
            ));
        }
        let urls = strings(rule.get("nonResourceURLs"));
        if !urls.is_empty() {
            let urls_v = json!(urls);
            if namespaced {
                errs.push(FieldError::invalid(
                    at("nonResourceURLs"),
                    &urls_v,
                    "namespaced rules cannot apply to non-resource URLs",
                ));
            }
            let resourceful = ["apiGroups", "resources", "resourceNames"]
                .iter()
                .any(|f| !strings(rule.get(*f)).is_empty());
            if resourceful {
                errs.push(FieldError::invalid(
                    at("nonResourceURLs"),
                    &urls_v,
                    "rules cannot apply to both regular resources and non-resource URLs",
                ));
            }
            continue;
        }
        if rule
            .get("apiGroups")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
        {
            errs.push(required(
                at("apiGroups"),
                "resource rules must supply at least one api group",
            ));
        }
        if strings(rule.get("resources")).is_empty() {
            errs.push(required(
                at("resources"),
                "resource rules must supply at least one resource",
            ));
        }
    }
    if let Some(agg) = obj.get("aggregationRule").filter(|a| !a.is_null()) {
        let selectors = agg.get("clusterRoleSelectors").and_then(Value::as_array);
        if selectors.is_none_or(Vec::is_empty) {
            errs.push(required(
                "aggregationRule.clusterRoleSelectors".into(),
                "at least one clusterRoleSelector required if aggregationRule is non-nil",
            ));
        }
    }
    errs
}

struct RoleHooks {
    namespaced: bool,
}

impl ResourceHooks for RoleHooks {
    fn validate_create(&self, obj: &Value) -> Vec<FieldError> {
        validate_rules(obj, self.namespaced)
    }
}

struct BindingHooks {
    namespaced: bool,
}

/// kube's `ValidateRoleBinding` / `ValidateClusterRoleBinding`.
fn validate_binding(obj: &Value, namespaced: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let role_ref = obj.get("roleRef").cloned().unwrap_or_default();
    let s = |v: &Value, f: &str| v.get(f).and_then(Value::as_str).unwrap_or("").to_string();
    let api_group = s(&role_ref, "apiGroup");
    if api_group != RBAC_GROUP {
        errs.push(FieldError::not_supported(
            "roleRef.apiGroup",
            &json!(api_group),
            &[RBAC_GROUP],
        ));
    }
    let kind = s(&role_ref, "kind");
    let kinds: &[&str] = if namespaced {
        &["Role", "ClusterRole"]
    } else {
        &["ClusterRole"]
    };
    if !kinds.contains(&kind.as_str()) {
        errs.push(FieldError::not_supported(
            "roleRef.kind",
            &json!(kind),
            kinds,
        ));
    }
    if s(&role_ref, "name").is_empty() {
        errs.push(FieldError::required("roleRef.name"));
    }
    let subjects = obj.get("subjects").and_then(Value::as_array);
    for (i, subj) in subjects.into_iter().flatten().enumerate() {
        let at = |f: &str| format!("subjects[{i}].{f}");
        if s(subj, "name").is_empty() {
            errs.push(FieldError::required(at("name")));
        }
        let group = s(subj, "apiGroup");
        match s(subj, "kind").as_str() {
            "ServiceAccount" => {
                if !group.is_empty() {
                    errs.push(FieldError::not_supported(
                        at("apiGroup"),
                        &json!(group),
                        &[""],
                    ));
                }
                if !namespaced && s(subj, "namespace").is_empty() {
                    errs.push(FieldError::required(at("namespace")));
                }
            }
            "User" | "Group" => {
                if group != RBAC_GROUP {
                    errs.push(FieldError::not_supported(
                        at("apiGroup"),
                        &json!(group),
                        &[RBAC_GROUP],
                    ));
                }
            }
            other => errs.push(FieldError::not_supported(
                at("kind"),
                &json!(other),
                &["ServiceAccount", "User", "Group"],
            )),
        }
    }
    errs
}

impl ResourceHooks for BindingHooks {
    fn default(&self, obj: &mut Value) {
        // As kube-apiserver defaults `subjects[].apiGroup` for users and groups.
        let subjects = obj.get_mut("subjects").and_then(Value::as_array_mut);
        for subj in subjects.into_iter().flatten() {
            let kind = subj.get("kind").and_then(Value::as_str).unwrap_or("");
            if matches!(kind, "User" | "Group")
                && subj.get("apiGroup").is_none()
                && let Some(m) = subj.as_object_mut()
            {
                m.insert("apiGroup".into(), RBAC_GROUP.into());
            }
        }
    }

    fn validate_create(&self, obj: &Value) -> Vec<FieldError> {
        validate_binding(obj, self.namespaced)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = validate_binding(new, self.namespaced);
        if new.get("roleRef") != old.get("roleRef") {
            errs.push(FieldError::invalid(
                "roleRef",
                new.get("roleRef").unwrap_or(&Value::Null),
                "cannot change roleRef",
            ));
        }
        errs
    }
}

/// The review kinds' backend: their creates are answered by the authorization middleware, so
/// reaching this means authorization is not configured.
struct Unserved;

fn unserved() -> ApiError {
    ApiError::method_not_allowed("access reviews need the RBAC authorizer, which is not enabled")
}

#[async_trait::async_trait]
impl ResourceBackend for Unserved {
    async fn get(&self, _: &RequestContext, _: &str, _: &str) -> Result<Value, ApiError> {
        Err(unserved())
    }
    async fn list(
        &self,
        _: &RequestContext,
        _: Option<&str>,
        _: &ListOptions,
    ) -> Result<ListResult, ApiError> {
        Err(unserved())
    }
    async fn create(&self, _: &RequestContext, _: &str, _: Value) -> Result<Value, ApiError> {
        Err(unserved())
    }
    async fn update(
        &self,
        _: &RequestContext,
        _: &str,
        _: &str,
        _: Value,
        _: Expect,
    ) -> Result<Value, ApiError> {
        Err(unserved())
    }
    async fn delete(
        &self,
        _: &RequestContext,
        _: &str,
        _: &str,
        _: Expect,
    ) -> Result<Value, ApiError> {
        Err(unserved())
    }
    async fn watch(
        &self,
        _: &RequestContext,
        _: Option<&str>,
        _: WatchStart,
        _: &ListOptions,
    ) -> Result<WatchStream, ApiError> {
        Err(unserved())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn role_rules_are_validated_as_kube_apiserver_does() {
        let role = json!({"rules": [
            {"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"]},
            {"apiGroups": [""], "resources": ["secrets"]},
            {"verbs": ["get"], "nonResourceURLs": ["/healthz"]},
            {"verbs": ["get"]},
        ]});
        let fields: Vec<String> = validate_rules(&role, true)
            .into_iter()
            .map(|e| e.field)
            .collect();
        assert_eq!(
            fields,
            [
                "rules[1].verbs",
                "rules[2].nonResourceURLs",
                "rules[3].apiGroups",
                "rules[3].resources"
            ]
        );
        // A ClusterRole may name non-resource URLs.
        let cr = json!({"rules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]});
        assert!(validate_rules(&cr, false).is_empty());
        let agg = json!({"aggregationRule": {"clusterRoleSelectors": []}});
        assert_eq!(validate_rules(&agg, false).len(), 1);
    }

    #[test]
    fn bindings_need_a_valid_role_ref_and_subjects() {
        let hooks = BindingHooks { namespaced: false };
        let mut b = json!({
            "roleRef": {"apiGroup": RBAC_GROUP, "kind": "Role", "name": "x"},
            "subjects": [{"kind": "User", "name": "bob"}, {"kind": "ServiceAccount", "name": "ci"}, {"kind": "Robot", "name": "r"}]
        });
        hooks.default(&mut b);
        assert_eq!(b["subjects"][0]["apiGroup"], RBAC_GROUP);
        let fields: Vec<String> = hooks
            .validate_create(&b)
            .into_iter()
            .map(|e| e.field)
            .collect();
        assert_eq!(
            fields,
            ["roleRef.kind", "subjects[1].namespace", "subjects[2].kind"]
        );
        let ok = json!({"roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": "x"}});
        assert!(hooks.validate_create(&ok).is_empty());
        let changed =
            json!({"roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": "y"}});
        let errs = hooks.validate_update(&changed, &ok);
        assert_eq!(errs.len(), 1);
        assert!(errs[0].message.ends_with("cannot change roleRef"));
    }

    #[test]
    fn binding_role_column_names_kind_and_role() {
        let cols = binding_columns();
        let b = json!({"roleRef": {"kind": "ClusterRole", "name": "porch-reader"}, "subjects": [{"kind": "User", "name": "a"}, {"kind": "User", "name": "b"}]});
        assert_eq!((cols[0].cell)(&b), json!("ClusterRole/porch-reader"));
        assert_eq!((cols[1].cell)(&b), json!("a, b"));
    }
}
