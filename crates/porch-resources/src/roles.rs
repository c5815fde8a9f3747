//! Porch's default ClusterRoles, created at start-up when absent (see docs/security.md):
//! `porch-reader`, `porch-author`, `porch-approver` and `porch-repository-admin`. They carry
//! the aggregation labels of Kubernetes' `view`, `edit` and `admin`, so that those roles grant
//! Porch's kinds as they do in a cluster.
//!
//! In-process controllers (repository, PackageVariant, PackageVariantSet, garbage collector)
//! call the engine and backends directly, not over HTTP, so no role applies to them.

use porch_apiserver::authz::{cluster_role, kube_bootstrap_policy};
use serde_json::{Value, json};

const READ: [&str; 3] = ["get", "list", "watch"];
const WRITE: [&str; 4] = ["create", "update", "patch", "delete"];

fn read_rules() -> Value {
    json!([
        {"apiGroups": ["porch.kpt.dev"],
         "resources": ["packagerevisions", "packagerevisionresources", "packages"], "verbs": READ},
        // Reading the approval subresource shows the revision (kubectl patch reads it first).
        {"apiGroups": ["porch.kpt.dev"], "resources": ["packagerevisions/approval"], "verbs": ["get"]},
        {"apiGroups": ["config.porch.kpt.dev"],
         "resources": ["repositories", "packagevariants", "packagevariantsets"], "verbs": READ},
    ])
}

fn with(mut rules: Value, extra: Value) -> Value {
    if let (Some(r), Some(e)) = (rules.as_array_mut(), extra.as_array()) {
        r.extend(e.iter().cloned());
    }
    rules
}

fn aggregate_to(role: &str) -> Value {
    json!({format!("rbac.authorization.k8s.io/aggregate-to-{role}"): "true"})
}

/// The Porch roles.
pub fn porch_cluster_roles() -> Vec<Value> {
    vec![
        cluster_role("porch-reader", aggregate_to("view"), read_rules()),
        // Drafts: create, edit (resources too), propose (an update of the revision) and
        // delete; not the approval subresource.
        cluster_role(
            "porch-author",
            aggregate_to("edit"),
            with(
                read_rules(),
                json!([{"apiGroups": ["porch.kpt.dev"],
                        "resources": ["packagerevisions", "packagerevisionresources", "packages"],
                        "verbs": WRITE}]),
            ),
        ),
        cluster_role(
            "porch-approver",
            aggregate_to("admin"),
            with(
                read_rules(),
                json!([{"apiGroups": ["porch.kpt.dev"], "resources": ["packagerevisions/approval"],
                        "verbs": ["update", "patch"]},
                       // Carrying out a deletion proposal (the server also asks approval).
                       {"apiGroups": ["porch.kpt.dev"], "resources": ["packagerevisions"],
                        "verbs": ["delete"]}]),
            ),
        ),
        cluster_role(
            "porch-repository-admin",
            aggregate_to("admin"),
            with(
                read_rules(),
                json!([
                    {"apiGroups": ["config.porch.kpt.dev"],
                     "resources": ["repositories", "repositories/status", "packagevariants",
                                   "packagevariantsets"],
                     "verbs": WRITE},
                    {"apiGroups": [""], "resources": ["secrets"], "verbs": ([READ.as_slice(), WRITE.as_slice()].concat())}
                ]),
            ),
        ),
    ]
}

/// Everything created at start-up: kube-apiserver's bootstrap roles and bindings, then
/// Porch's roles.
pub fn default_policy() -> Vec<Value> {
    let (roles, bindings) = kube_bootstrap_policy();
    roles
        .into_iter()
        .chain(porch_cluster_roles())
        .chain(bindings)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use porch_apiserver::authz::{Attributes, PolicyRule, rule_allows};

    fn allows(role: &str, verb: &str, resource: &str, sub: &str) -> bool {
        let roles = porch_cluster_roles();
        let role = roles
            .iter()
            .find(|r| r["metadata"]["name"] == role)
            .expect("role");
        let a = Attributes {
            verb: verb.into(),
            resource_request: true,
            api_group: "porch.kpt.dev".into(),
            resource: resource.into(),
            subresource: sub.into(),
            namespace: "default".into(),
            ..Default::default()
        };
        PolicyRule::list_from(role)
            .iter()
            .any(|r| rule_allows(&a, r))
    }

    #[test]
    fn the_author_cannot_approve_and_the_approver_cannot_author() {
        assert!(allows("porch-reader", "list", "packagerevisions", ""));
        assert!(!allows("porch-reader", "create", "packagerevisions", ""));
        assert!(allows("porch-author", "update", "packagerevisions", ""));
        assert!(allows(
            "porch-author",
            "update",
            "packagerevisionresources",
            ""
        ));
        assert!(!allows(
            "porch-author",
            "update",
            "packagerevisions",
            "approval"
        ));
        assert!(allows(
            "porch-approver",
            "update",
            "packagerevisions",
            "approval"
        ));
        assert!(!allows("porch-approver", "update", "packagerevisions", ""));
        assert!(!allows(
            "porch-repository-admin",
            "create",
            "packagerevisions",
            ""
        ));
    }
}
