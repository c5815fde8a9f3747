//! kube-apiserver's RBAC escalation prevention (`registry/rbac/*/policybased`): a user may
//! write a Role or ClusterRole only with rules it already holds (or with the `escalate` verb
//! on it), and bind a role only if it holds that role's rules (or has the `bind` verb on
//! it); an aggregated ClusterRole needs every right. Without this anyone allowed to write
//! RBAC objects could grant themselves anything.
//!
//! The checks wrap the store backends of the four kinds and apply to requests (a context
//! with the authorizer); the server's own writes (defaults, aggregation) pass.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::Value;

use super::rules::PolicyRule;
use super::{Attributes, Authorizer, RBAC_GROUP};
use crate::auth::{MASTERS_GROUP, UserInfo};
use crate::error::ApiError;
use crate::resource::{
    Expect, ListOptions, ListResult, RequestContext, ResourceBackend, WatchStart, WatchStream,
};

/// Which RBAC kind a guard serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RbacKind {
    Role,
    ClusterRole,
    RoleBinding,
    ClusterRoleBinding,
}

impl RbacKind {
    fn plural(self) -> &'static str {
        match self {
            RbacKind::Role => "roles",
            RbacKind::ClusterRole => "clusterroles",
            RbacKind::RoleBinding => "rolebindings",
            RbacKind::ClusterRoleBinding => "clusterrolebindings",
        }
    }
}

/// A store backend of one RBAC kind with the escalation checks on create and update.
pub(super) struct EscalationGuard {
    pub inner: Arc<dyn ResourceBackend>,
    pub kind: RbacKind,
    /// The backends of Roles and ClusterRoles, where a binding's role is looked up.
    pub roles: Arc<dyn ResourceBackend>,
    pub cluster_roles: Arc<dyn ResourceBackend>,
}

fn user_of(ctx: &RequestContext) -> UserInfo {
    UserInfo {
        name: ctx.user.clone(),
        uid: ctx.uid.clone(),
        groups: ctx.groups.clone(),
        extra: Default::default(),
    }
}

/// kube's `BreakdownRule`: one rule per group, resource, verb (and name), or per URL and verb.
fn breakdown(rule: &PolicyRule) -> Vec<PolicyRule> {
    let one = |s: &String| vec![s.clone()];
    let mut out = Vec::new();
    for group in &rule.api_groups {
        for resource in &rule.resources {
            for verb in &rule.verbs {
                let base = PolicyRule {
                    verbs: one(verb),
                    api_groups: one(group),
                    resources: one(resource),
                    ..Default::default()
                };
                if rule.resource_names.is_empty() {
                    out.push(base);
                } else {
                    for name in &rule.resource_names {
                        out.push(PolicyRule {
                            resource_names: one(name),
                            ..base.clone()
                        });
                    }
                }
            }
        }
    }
    for url in &rule.non_resource_urls {
        for verb in &rule.verbs {
            out.push(PolicyRule {
                verbs: one(verb),
                non_resource_urls: one(url),
                ..Default::default()
            });
        }
    }
    out
}

fn has_all(set: &[String], wanted: &[String]) -> bool {
    wanted.iter().all(|w| set.contains(w))
}

/// kube's `resourceCoversAll`: `*`, the exact resource, or `*/<sub>` for a subresource.
fn resources_cover(owner: &[String], wanted: &[String]) -> bool {
    if owner.iter().any(|r| r == "*") || has_all(owner, wanted) {
        return true;
    }
    wanted.iter().all(|w| {
        owner.contains(w)
            || w.split_once('/')
                .is_some_and(|(_, sub)| owner.contains(&format!("*/{sub}")))
    })
}

/// kube's `nonResourceURLsCoversAll`: exact, or a `prefix*` owner URL.
fn urls_cover(owner: &[String], wanted: &[String]) -> bool {
    wanted.iter().all(|w| {
        owner.iter().any(|o| {
            o == w
                || o.strip_suffix('*')
                    .is_some_and(|prefix| w.starts_with(prefix))
        })
    })
}

/// kube's `ruleCovers`.
fn rule_covers(owner: &PolicyRule, sub: &PolicyRule) -> bool {
    let star = |l: &[String]| l.iter().any(|v| v == "*");
    let verbs = star(&owner.verbs) || has_all(&owner.verbs, &sub.verbs);
    let groups = star(&owner.api_groups) || has_all(&owner.api_groups, &sub.api_groups);
    let names = if sub.resource_names.is_empty() {
        owner.resource_names.is_empty()
    } else {
        owner.resource_names.is_empty() || has_all(&owner.resource_names, &sub.resource_names)
    };
    verbs
        && groups
        && resources_cover(&owner.resources, &sub.resources)
        && names
        && urls_cover(&owner.non_resource_urls, &sub.non_resource_urls)
}

/// kube's `Covers`: the broken-down rules of `wanted` no rule of `owner` covers.
pub(super) fn missing_rules(owner: &[PolicyRule], wanted: &[PolicyRule]) -> Vec<PolicyRule> {
    wanted
        .iter()
        .flat_map(breakdown)
        .filter(|sub| !owner.iter().any(|o| rule_covers(o, sub)))
        .collect()
}

/// kube's `CompactRules`: simple rules (one group, one resource, at most one name) of the
/// same resource merged into one with all their verbs.
fn compact(rules: Vec<PolicyRule>) -> Vec<PolicyRule> {
    let mut out = Vec::new();
    let mut simple: BTreeMap<(String, String, Option<String>), PolicyRule> = BTreeMap::new();
    for r in rules {
        let is_simple = r.api_groups.len() == 1
            && r.resources.len() == 1
            && r.resource_names.len() <= 1
            && r.non_resource_urls.is_empty();
        if !is_simple {
            out.push(r);
            continue;
        }
        let key = (
            r.api_groups[0].clone(),
            r.resources[0].clone(),
            r.resource_names.first().cloned(),
        );
        match simple.get_mut(&key) {
            Some(existing) => {
                for v in r.verbs {
                    if !existing.verbs.contains(&v) {
                        existing.verbs.push(v);
                    }
                }
            }
            None => {
                simple.insert(key, r);
            }
        }
    }
    out.extend(simple.into_values());
    out
}

/// Go's `%q` of a string slice: `["a" "b"]`.
fn quoted(list: &[String]) -> String {
    let items: Vec<String> = list.iter().map(|s| format!("{s:?}")).collect();
    format!("[{}]", items.join(" "))
}

/// kube's `CompactString` of a rule.
fn compact_string(r: &PolicyRule) -> String {
    let mut parts = Vec::new();
    for (name, list) in [
        ("APIGroups", &r.api_groups),
        ("Resources", &r.resources),
        ("NonResourceURLs", &r.non_resource_urls),
        ("ResourceNames", &r.resource_names),
        ("Verbs", &r.verbs),
    ] {
        if !list.is_empty() {
            parts.push(format!("{name}:{}", quoted(list)));
        }
    }
    format!("{{{}}}", parts.join(", "))
}

/// kube's `ConfirmNoEscalation`: `Err` with its message when `user` lacks some of `rules` in
/// `namespace`.
fn confirm_no_escalation(
    authz: &Authorizer,
    user: &UserInfo,
    namespace: &str,
    rules: &[PolicyRule],
) -> Result<(), String> {
    let missing = missing_rules(&authz.rules_for(user, namespace), rules);
    if missing.is_empty() {
        return Ok(());
    }
    let lines: BTreeSet<String> = compact(missing).iter().map(compact_string).collect();
    Err(format!(
        "user {:?} (groups={}) is attempting to grant RBAC permissions not currently held:\n{}",
        user.name,
        quoted(&user.groups),
        lines.into_iter().collect::<Vec<_>>().join("\n")
    ))
}

/// Every right: what an aggregated ClusterRole may gather.
fn full_authority() -> Vec<PolicyRule> {
    let star = || vec!["*".to_string()];
    vec![
        PolicyRule {
            verbs: star(),
            api_groups: star(),
            resources: star(),
            ..Default::default()
        },
        PolicyRule {
            verbs: star(),
            non_resource_urls: star(),
            ..Default::default()
        },
    ]
}

impl EscalationGuard {
    fn forbidden(&self, name: &str, why: &str) -> ApiError {
        super::request::forbidden_of(RBAC_GROUP, self.kind.plural(), name, why)
    }

    /// Whether RBAC lets `user` do `verb` on the role `name` of `resource` in `namespace`.
    async fn may(
        authz: &Arc<Authorizer>,
        user: &UserInfo,
        verb: &str,
        resource: &str,
        namespace: &str,
        name: &str,
    ) -> bool {
        let attrs = Attributes {
            verb: verb.into(),
            resource_request: true,
            api_group: RBAC_GROUP.into(),
            resource: resource.into(),
            namespace: namespace.into(),
            name: name.into(),
            ..Default::default()
        };
        authz.authorize_fresh(user, &attrs).await.allowed
    }

    /// The checks of a create or update of `obj` in `namespace`.
    async fn check(
        &self,
        ctx: &RequestContext,
        namespace: &str,
        obj: &Value,
    ) -> Result<(), ApiError> {
        let Some(authz) = &ctx.access else {
            return Ok(());
        };
        let user = user_of(ctx);
        if user.in_group(MASTERS_GROUP) {
            return Ok(());
        }
        let namespace = match self.kind {
            RbacKind::Role | RbacKind::RoleBinding => namespace,
            _ => "",
        };
        let name = obj
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        authz.catch_up().await;
        match self.kind {
            RbacKind::Role | RbacKind::ClusterRole => {
                let plural = self.kind.plural();
                if Self::may(authz, &user, "escalate", plural, namespace, name).await {
                    return Ok(());
                }
                let rules = PolicyRule::list_from(obj);
                confirm_no_escalation(authz, &user, namespace, &rules)
                    .map_err(|why| self.forbidden(name, &why))?;
                let aggregated = obj.get("aggregationRule").is_some_and(|a| !a.is_null());
                if self.kind == RbacKind::ClusterRole
                    && aggregated
                    && confirm_no_escalation(authz, &user, namespace, &full_authority()).is_err()
                {
                    return Err(self.forbidden(
                        name,
                        "must have cluster-admin privileges to use the aggregationRule",
                    ));
                }
                Ok(())
            }
            RbacKind::RoleBinding | RbacKind::ClusterRoleBinding => {
                let role_ref = obj.get("roleRef").cloned().unwrap_or_default();
                let s = |f: &str| role_ref.get(f).and_then(Value::as_str).unwrap_or("");
                let (ref_kind, ref_name) = (s("kind"), s("name"));
                let (plural, backend, role_ns) = if ref_kind == "Role" {
                    ("roles", &self.roles, namespace)
                } else {
                    ("clusterroles", &self.cluster_roles, "")
                };
                // kube asks `bind` in the binding's namespace, for a ClusterRole too.
                if Self::may(authz, &user, "bind", plural, namespace, ref_name).await {
                    return Ok(());
                }
                let role = backend
                    .get(&RequestContext::default(), role_ns, ref_name)
                    .await
                    .map_err(|e| self.forbidden(name, &e.message))?;
                let rules = PolicyRule::list_from(&role);
                confirm_no_escalation(authz, &user, namespace, &rules)
                    .map_err(|why| self.forbidden(name, &why))
            }
        }
    }
}

#[async_trait::async_trait]
impl ResourceBackend for EscalationGuard {
    async fn get(&self, ctx: &RequestContext, ns: &str, name: &str) -> Result<Value, ApiError> {
        self.inner.get(ctx, ns, name).await
    }

    async fn list(
        &self,
        ctx: &RequestContext,
        ns: Option<&str>,
        options: &ListOptions,
    ) -> Result<ListResult, ApiError> {
        self.inner.list(ctx, ns, options).await
    }

    async fn create(&self, ctx: &RequestContext, ns: &str, obj: Value) -> Result<Value, ApiError> {
        self.check(ctx, ns, &obj).await?;
        self.inner.create(ctx, ns, obj).await
    }

    async fn update(
        &self,
        ctx: &RequestContext,
        ns: &str,
        name: &str,
        obj: Value,
        expect: Expect,
    ) -> Result<Value, ApiError> {
        self.check(ctx, ns, &obj).await?;
        self.inner.update(ctx, ns, name, obj, expect).await
    }

    async fn delete(
        &self,
        ctx: &RequestContext,
        ns: &str,
        name: &str,
        expect: Expect,
    ) -> Result<Value, ApiError> {
        self.inner.delete(ctx, ns, name, expect).await
    }

    async fn watch(
        &self,
        ctx: &RequestContext,
        ns: Option<&str>,
        start: WatchStart,
        options: &ListOptions,
    ) -> Result<WatchStream, ApiError> {
        self.inner.watch(ctx, ns, start, options).await
    }

    async fn check_create(
        &self,
        ctx: &RequestContext,
        ns: &str,
        obj: &Value,
    ) -> Result<(), ApiError> {
        self.check(ctx, ns, obj).await?;
        self.inner.check_create(ctx, ns, obj).await
    }

    async fn check_update(
        &self,
        ctx: &RequestContext,
        ns: &str,
        name: &str,
        new: &Value,
    ) -> Result<(), ApiError> {
        self.check(ctx, ns, new).await?;
        self.inner.check_update(ctx, ns, name, new).await
    }

    async fn check_delete(
        &self,
        ctx: &RequestContext,
        ns: &str,
        name: &str,
        current: &Value,
    ) -> Result<(), ApiError> {
        self.inner.check_delete(ctx, ns, name, current).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rule(v: Value) -> PolicyRule {
        PolicyRule::from_json(&v)
    }

    #[test]
    fn owners_rules_cover_what_they_grant_and_no_more() {
        let owner = [
            rule(
                json!({"verbs": ["get", "list"], "apiGroups": ["porch.kpt.dev"], "resources": ["packagerevisions", "*/approval"]}),
            ),
            rule(json!({"verbs": ["get"], "nonResourceURLs": ["/healthz*"]})),
            rule(
                json!({"verbs": ["*"], "apiGroups": [""], "resources": ["secrets"], "resourceNames": ["a"]}),
            ),
        ];
        let covered = [
            rule(
                json!({"verbs": ["get"], "apiGroups": ["porch.kpt.dev"], "resources": ["packagerevisions", "packagerevisions/approval"]}),
            ),
            rule(json!({"verbs": ["get"], "nonResourceURLs": ["/healthz/ready"]})),
            rule(
                json!({"verbs": ["delete"], "apiGroups": [""], "resources": ["secrets"], "resourceNames": ["a"]}),
            ),
        ];
        assert!(missing_rules(&owner, &covered).is_empty());
        let wanted = [
            rule(
                json!({"verbs": ["get", "delete", "update"], "apiGroups": ["porch.kpt.dev"], "resources": ["packagerevisions"]}),
            ),
            rule(json!({"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"]})),
        ];
        let missing = missing_rules(&owner, &wanted);
        assert_eq!(missing.len(), 3);
        let lines: Vec<String> = compact(missing).iter().map(compact_string).collect();
        assert_eq!(
            lines,
            [
                r#"{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}"#,
                r#"{APIGroups:["porch.kpt.dev"], Resources:["packagerevisions"], Verbs:["delete" "update"]}"#,
            ]
        );
    }

    #[test]
    fn star_rules_cover_everything() {
        assert!(missing_rules(&full_authority(), &full_authority()).is_empty());
        let partial = [rule(
            json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}),
        )];
        let missing = missing_rules(&partial, &full_authority());
        assert_eq!(
            compact_string(&missing[0]),
            r#"{NonResourceURLs:["*"], Verbs:["*"]}"#
        );
    }
}
