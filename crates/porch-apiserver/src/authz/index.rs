//! The RBAC objects of the store, indexed by subject: who is granted which rules where.
//!
//! Built whole from the four kinds (a few milliseconds for thousands of bindings) and replaced
//! whenever one of them changes, so that a request costs a hash lookup per user name and group
//! plus the rules of that subject's own bindings, whatever the number of bindings stored.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use super::rules::{Attributes, PolicyRule, rule_allows};
use crate::auth::UserInfo;

/// Rules granted to a subject by one binding.
#[derive(Debug, Clone)]
pub struct Grant {
    /// How kube-apiserver names the grant in a SubjectAccessReview's reason:
    /// `RoleBinding "x/ns" of ClusterRole "y" to User "z"`.
    pub source: Arc<str>,
    pub rules: Arc<[PolicyRule]>,
}

/// Grants of one subject: cluster-wide (ClusterRoleBindings) and per namespace (RoleBindings).
#[derive(Debug, Default)]
struct Scoped {
    cluster: Vec<Grant>,
    namespaced: HashMap<String, Vec<Grant>>,
}

/// The stored RBAC objects, as JSON.
#[derive(Debug, Default)]
pub struct Objects {
    pub roles: Vec<Value>,
    pub cluster_roles: Vec<Value>,
    pub role_bindings: Vec<Value>,
    pub cluster_role_bindings: Vec<Value>,
}

#[derive(Debug, Default)]
pub struct Index {
    users: HashMap<String, Scoped>,
    groups: HashMap<String, Scoped>,
}

fn meta<'a>(o: &'a Value, field: &str) -> &'a str {
    o.pointer(&format!("/metadata/{field}"))
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn str_of<'a>(o: &'a Value, field: &str) -> &'a str {
    o.get(field).and_then(Value::as_str).unwrap_or("")
}

impl Index {
    pub fn build(objs: &Objects) -> Self {
        let rules = |o: &Value| -> Arc<[PolicyRule]> { PolicyRule::list_from(o).into() };
        let cluster_roles: HashMap<&str, Arc<[PolicyRule]>> = objs
            .cluster_roles
            .iter()
            .map(|o| (meta(o, "name"), rules(o)))
            .collect();
        let roles: HashMap<(&str, &str), Arc<[PolicyRule]>> = objs
            .roles
            .iter()
            .map(|o| ((meta(o, "namespace"), meta(o, "name")), rules(o)))
            .collect();
        let mut index = Index::default();
        let bindings = objs
            .cluster_role_bindings
            .iter()
            .map(|b| (b, false))
            .chain(objs.role_bindings.iter().map(|b| (b, true)));
        for (b, namespaced) in bindings {
            let ns = if namespaced { meta(b, "namespace") } else { "" };
            let role_ref = b.get("roleRef").cloned().unwrap_or_default();
            let (ref_kind, ref_name) = (str_of(&role_ref, "kind"), str_of(&role_ref, "name"));
            let found = match ref_kind {
                "ClusterRole" => cluster_roles.get(ref_name),
                "Role" if namespaced => roles.get(&(ns, ref_name)),
                _ => None,
            };
            // A binding to a missing role grants nothing (until the role appears).
            let Some(role_rules) = found else { continue };
            let binding_name = if namespaced {
                format!("RoleBinding \"{}/{ns}\"", meta(b, "name"))
            } else {
                format!("ClusterRoleBinding \"{}\"", meta(b, "name"))
            };
            for s in b
                .get("subjects")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let (kind, name) = (str_of(s, "kind"), str_of(s, "name"));
                let (map, key) = match kind {
                    "User" => (&mut index.users, name.to_string()),
                    "Group" => (&mut index.groups, name.to_string()),
                    "ServiceAccount" => {
                        let sa_ns = match str_of(s, "namespace") {
                            "" => ns,
                            n => n,
                        };
                        (
                            &mut index.users,
                            format!("system:serviceaccount:{sa_ns}:{name}"),
                        )
                    }
                    _ => continue,
                };
                let grant = Grant {
                    source: format!(
                        "{binding_name} of {ref_kind} \"{ref_name}\" to {kind} \"{name}\""
                    )
                    .into(),
                    rules: role_rules.clone(),
                };
                let scoped = map.entry(key).or_default();
                if namespaced {
                    scoped
                        .namespaced
                        .entry(ns.to_string())
                        .or_default()
                        .push(grant);
                } else {
                    scoped.cluster.push(grant);
                }
            }
        }
        index
    }

    /// Every grant that applies to `user` in `namespace` (cluster-wide ones always), until `f`
    /// returns true.
    pub fn visit(&self, user: &UserInfo, namespace: &str, mut f: impl FnMut(&Grant) -> bool) {
        let scopes = self
            .users
            .get(&user.name)
            .into_iter()
            .chain(user.groups.iter().filter_map(|g| self.groups.get(g)));
        for scoped in scopes {
            let local = if namespace.is_empty() {
                None
            } else {
                scoped.namespaced.get(namespace)
            };
            for grant in scoped.cluster.iter().chain(local.into_iter().flatten()) {
                if f(grant) {
                    return;
                }
            }
        }
    }

    /// The grant allowing the request, if any.
    pub fn allowed_by(&self, user: &UserInfo, attrs: &Attributes) -> Option<Arc<str>> {
        let mut by = None;
        self.visit(user, &attrs.namespace, |g| {
            if g.rules.iter().any(|r| rule_allows(attrs, r)) {
                by = Some(g.source.clone());
                true
            } else {
                false
            }
        });
        by
    }

    /// Every rule `user` has in `namespace` (SelfSubjectRulesReview).
    pub fn rules_for(&self, user: &UserInfo, namespace: &str) -> Vec<PolicyRule> {
        let mut out: Vec<PolicyRule> = Vec::new();
        self.visit(user, namespace, |g| {
            for r in g.rules.iter() {
                if !out.contains(r) {
                    out.push(r.clone());
                }
            }
            false
        });
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn user(name: &str, groups: &[&str]) -> UserInfo {
        UserInfo {
            name: name.into(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
            ..Default::default()
        }
    }

    fn get(ns: &str, resource: &str) -> Attributes {
        Attributes {
            verb: "get".into(),
            resource_request: true,
            resource: resource.into(),
            namespace: ns.into(),
            ..Default::default()
        }
    }

    fn objects() -> Objects {
        let read = json!({"metadata": {"name": "read"}, "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"]}]});
        let secrets = json!({"metadata": {"name": "secrets", "namespace": "a"}, "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"]}]});
        Objects {
            cluster_roles: vec![read],
            roles: vec![secrets],
            cluster_role_bindings: vec![json!({
                "metadata": {"name": "readers"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "read"},
                "subjects": [{"kind": "Group", "name": "readers"}]
            })],
            role_bindings: vec![
                json!({
                    "metadata": {"name": "bob-read", "namespace": "b"},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "read"},
                    "subjects": [{"kind": "User", "name": "bob"}]
                }),
                json!({
                    "metadata": {"name": "bob-secrets", "namespace": "a"},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "secrets"},
                    "subjects": [{"kind": "User", "name": "bob"}, {"kind": "ServiceAccount", "name": "ci"}]
                }),
                json!({
                    "metadata": {"name": "dangling", "namespace": "a"},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "missing"},
                    "subjects": [{"kind": "User", "name": "carol"}]
                }),
            ],
        }
    }

    #[test]
    fn cluster_role_bindings_apply_everywhere_role_bindings_in_their_namespace() {
        let idx = Index::build(&objects());
        let reader = user("ann", &["readers"]);
        assert!(idx.allowed_by(&reader, &get("x", "configmaps")).is_some());
        assert!(idx.allowed_by(&reader, &get("", "configmaps")).is_some());
        let bob = user("bob", &[]);
        let by = idx.allowed_by(&bob, &get("b", "configmaps"));
        assert_eq!(
            by.as_deref(),
            Some("RoleBinding \"bob-read/b\" of ClusterRole \"read\" to User \"bob\"")
        );
        assert!(idx.allowed_by(&bob, &get("a", "configmaps")).is_none());
        assert!(idx.allowed_by(&bob, &get("a", "secrets")).is_some());
        assert!(idx.allowed_by(&bob, &get("b", "secrets")).is_none());
        assert!(idx.allowed_by(&bob, &get("", "configmaps")).is_none());
        let sa = user("system:serviceaccount:a:ci", &[]);
        assert!(idx.allowed_by(&sa, &get("a", "secrets")).is_some());
        assert!(
            idx.allowed_by(&user("carol", &[]), &get("a", "secrets"))
                .is_none()
        );
    }

    #[test]
    fn a_lookup_visits_only_the_users_own_grants_among_a_thousand_bindings() {
        let mut objs = objects();
        for i in 0..1000 {
            objs.role_bindings.push(json!({
                "metadata": {"name": format!("b{i}"), "namespace": format!("ns{}", i % 10)},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "read"},
                "subjects": [{"kind": "User", "name": format!("u{i}")}]
            }));
        }
        let idx = Index::build(&objs);
        let u = user("u5", &["system:authenticated"]);
        let mut visited = 0;
        idx.visit(&u, "ns5", |_| {
            visited += 1;
            false
        });
        assert_eq!(visited, 1);
        assert!(idx.allowed_by(&u, &get("ns5", "configmaps")).is_some());
        assert!(idx.allowed_by(&u, &get("ns6", "configmaps")).is_none());
    }

    #[test]
    fn rules_of_a_user_in_a_namespace() {
        let idx = Index::build(&objects());
        assert_eq!(idx.rules_for(&user("bob", &[]), "a").len(), 1);
        assert_eq!(idx.rules_for(&user("bob", &["readers"]), "b").len(), 1);
        assert!(idx.rules_for(&user("nobody", &[]), "a").is_empty());
    }
}
