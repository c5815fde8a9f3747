//! `porch.kpt.dev/v1alpha1` `PackageRevision` (Porch `api/porch/v1alpha1`,
//! `types_packagerevisions.go`): one revision of a package in a registered repository.
//!
//! Field names and omission follow Porch's `json` tags: what Go omits when empty is an
//! `Option` here, so an object read from a server decodes and encodes without loss.

use std::collections::BTreeMap;

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::tasks::Task;

/// The desired state of a PackageRevision: which package and workspace, its lifecycle, and
/// the tasks that made it.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "porch.kpt.dev",
    version = "v1alpha1",
    kind = "PackageRevision",
    doc = "One revision of a package in a registered repository: its identity, lifecycle and the history of how it was made. Its files are the PackageRevisionResources of the same name.",
    plural = "packagerevisions",
    namespaced,
    status = "PackageRevisionStatus"
)]
#[serde(rename_all = "camelCase")]
pub struct PackageRevisionSpec {
    /// The package's path in the repository (`/`-separated for nested packages).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package_name: Option<String>,
    /// Name of the Repository object holding the package.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
    /// A short name for the change this revision makes, unique within the package.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_name: Option<String>,
    /// The revision number, assigned when the revision is published (0 or absent before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<i64>,
    /// Deprecated: a parent package revision. Unused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<ParentReference>,
    /// `Draft`, `Proposed`, `Published` or `DeletionProposed`. Created as `Draft`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifecycle: Option<String>,
    /// How the revision was made: the creating task (`init`, `clone`, `edit` or `upgrade`)
    /// first. Revisions not made through Porch may have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<Vec<Task>>,
    /// Conditions that must be `True` before the revision may be published (the Kptfile's
    /// `info.readinessGates`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub readiness_gates: Option<Vec<ReadinessGate>>,
    /// Labels and annotations of the package itself (the Kptfile's `metadata`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package_metadata: Option<PackageMetadata>,
}

/// The package's own labels and annotations.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct PackageMetadata {
    /// The Kptfile's `metadata.labels`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
    /// The Kptfile's `metadata.annotations`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
}

/// A condition the revision waits for before it may be published.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReadinessGate {
    /// The `type` of a condition in `status.conditions`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition_type: Option<String>,
}

/// Deprecated reference to a parent package revision.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct ParentReference {
    /// Name of the parent PackageRevision.
    #[serde(default)]
    pub name: String,
}

/// What the server observed about the revision.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PackageRevisionStatus {
    /// Where the upstream package was last fetched from (the Kptfile's `upstreamLock`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream_lock: Option<Locator>,
    /// Where this revision's own content lives.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub self_lock: Option<Locator>,
    /// Who approved the revision (published revisions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published_by: Option<String>,
    /// When the revision was approved (RFC 3339; published revisions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::date_time")]
    pub publish_timestamp: Option<String>,
    /// True for a package of a deployment repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deployment: Option<bool>,
    /// The package's conditions (the Kptfile's `status.conditions`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
}

/// A resolved location of package content.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct Locator {
    /// The kind of origin, `git`.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// The location in git.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git: Option<GitLock>,
}

/// A package's location in a git repository, down to the commit.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct GitLock {
    /// Address of the git repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    /// Directory of the package in the repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub directory: Option<String>,
    /// The branch or tag fetched.
    #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
    pub ref_: Option<String>,
    /// The commit SHA fetched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

/// A condition of the package (the Kptfile's condition shape; newer Porch releases use
/// `metav1.Condition`, whose extra fields are accepted but not kept).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// The condition type, e.g. a readiness gate's `conditionType`.
    #[serde(rename = "type", default)]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    #[serde(default)]
    pub status: String,
    /// A machine-readable reason for the status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// A human-readable explanation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// When the status last changed (`metav1.Condition` clients; not stored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::date_time")]
    pub last_transition_time: Option<String>,
    /// The generation the condition was set for (`metav1.Condition` clients; not stored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn round_trip(v: &Value) -> PackageRevision {
        let pr: PackageRevision = serde_json::from_value(v.clone()).expect("decodes");
        assert_eq!(&serde_json::to_value(&pr).expect("encodes"), v);
        pr
    }

    /// A published clone as Porch serves it (`kubectl get packagerevision -o json`).
    #[test]
    fn porch_revisions_round_trip() {
        let published = json!({
            "apiVersion": "porch.kpt.dev/v1alpha1",
            "kind": "PackageRevision",
            "metadata": {
                "creationTimestamp": "2022-08-26T22:47:35Z",
                "labels": {"kpt.dev/latest-revision": "true"},
                "name": "git.basens-clone.clone-2",
                "namespace": "rpkg-clone",
                "resourceVersion": "67f29546028f0a48c6bbb08614934d0e070cdd3a",
                "uid": "710e4f9b-b21f-5786-bf04-1d1d9b32d57c"
            },
            "spec": {
                "packageName": "basens-clone",
                "repository": "git",
                "workspaceName": "clone-2",
                "revision": 1,
                "lifecycle": "Published",
                "tasks": [{
                    "type": "clone",
                    "clone": {"upstreamRef": {
                        "type": "git",
                        "git": {
                            "repo": "http://gitea.gitea.svc.cluster.local:3000/nephio/test-blueprints.git",
                            "ref": "basens/v1",
                            "directory": "basens",
                            "secretRef": {"name": ""}
                        }
                    }}
                }],
                "readinessGates": [{"conditionType": "nephio.org/Specializer.specialize"}],
                "packageMetadata": {"labels": {"team": "edge"}}
            },
            "status": {
                "upstreamLock": {"type": "git", "git": {
                    "repo": "http://gitea.gitea.svc.cluster.local:3000/nephio/test-blueprints.git",
                    "directory": "basens",
                    "ref": "basens/v1",
                    "commit": "67f29546028f0a48c6bbb08614934d0e070cdd3a"
                }},
                "selfLock": {"type": "git", "git": {
                    "repo": "http://gitea.gitea.svc.cluster.local:3000/nephio/rpkg-clone",
                    "directory": "basens-clone",
                    "ref": "basens-clone/v1",
                    "commit": "0d0e9ba4a4f0c2e5c3aa1d6e0c3f7a8a5b0b7e11"
                }},
                "publishedBy": "nephio",
                "publishTimestamp": "2022-08-26T22:47:35Z",
                "deployment": true,
                "conditions": [{
                    "type": "nephio.org/Specializer.specialize",
                    "status": "True",
                    "reason": "Ready",
                    "message": "done"
                }, {
                    "type": "Ready",
                    "status": "False",
                    "observedGeneration": 3,
                    "lastTransitionTime": "2022-08-26T22:47:35Z",
                    "reason": "Pending",
                    "message": ""
                }]
            }
        });
        let pr = round_trip(&published);
        let clone = pr.spec.tasks.as_deref().and_then(|t| t[0].clone.as_ref());
        let git = clone
            .and_then(|c| c.upstream.as_ref())
            .and_then(|u| u.git.as_ref());
        assert_eq!(git.map(|g| g.ref_.as_str()), Some("basens/v1"));
        assert_eq!(pr.status.and_then(|s| s.deployment), Some(true));

        // What porchctl sends for `rpkg clone` of a registered revision, `copy` and `upgrade`.
        for task in [
            json!({"type": "clone", "clone": {"upstreamRef": {"upstreamRef": {"name": "bp.basens.v1"}}}}),
            json!({"type": "edit", "edit": {"sourceRef": {"name": "git.basens.v1"}}}),
            json!({"type": "upgrade", "upgrade": {
                "oldUpstreamRef": {"name": "bp.basens.v1"},
                "newUpstreamRef": {"name": "bp.basens.v2"},
                "localPackageRevisionRef": {"name": "dep.ns1.v1"},
                "strategy": "resource-merge"
            }}),
            json!({"type": "init", "init": {"description": "d", "keywords": ["a"], "site": "s", "subpackage": "sub"}}),
        ] {
            round_trip(&json!({
                "apiVersion": "porch.kpt.dev/v1alpha1",
                "kind": "PackageRevision",
                "metadata": {"name": "", "namespace": "default"},
                "spec": {"packageName": "p", "repository": "r", "workspaceName": "ws", "lifecycle": "Draft", "tasks": [task]}
            }));
        }
    }

    /// Tasks of older Porch releases still decode (the server ignores their payload).
    #[test]
    fn legacy_tasks_round_trip() {
        let v = json!({
            "apiVersion": "porch.kpt.dev/v1alpha1",
            "kind": "PackageRevision",
            "metadata": {"name": "r.p.ws"},
            "spec": {"tasks": [
                {"type": "clone", "clone": {"upstreamRef": {"upstreamRef": {"name": "x"}}, "strategy": "resource-merge"}},
                {"type": "eval", "eval": {
                    "image": "gcr.io/kpt-fn/set-namespace:v0.4.1",
                    "configMap": {"namespace": "prod"},
                    "config": {"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "b"}},
                    "includeMetaResources": true,
                    "enableNetwork": false,
                    "match": {"kind": "Deployment"}
                }},
                {"type": "patch", "patch": {"patches": [{"file": "a.yaml", "contents": "x", "patchType": "CreateFile"}]}},
                {"type": "update", "update": {"upstreamRef": {"upstreamRef": {"name": "bp.basens.v2"}}}}
            ]}
        });
        round_trip(&v);
    }

    #[test]
    fn schema_describes_nested_task_fields_and_requires_nothing() {
        let schema = crate::aggregated_schema::<PackageRevision>();
        let upstream = schema
            .pointer(
                "/properties/spec/properties/tasks/items/properties/clone/properties/upstreamRef",
            )
            .expect("spec.tasks[].clone.upstreamRef");
        assert_eq!(
            upstream.pointer("/properties/upstreamRef/properties/name/type"),
            Some(&json!("string"))
        );
        assert!(
            upstream
                .pointer("/properties/git/properties/secretRef")
                .is_some()
        );
        assert!(
            upstream["description"]
                .as_str()
                .is_some_and(|d| !d.is_empty())
        );
        let tasks = schema
            .pointer("/properties/spec/properties/tasks/items/properties")
            .and_then(Value::as_object)
            .expect("task properties");
        for t in [
            "type", "init", "clone", "edit", "upgrade", "eval", "patch", "update",
        ] {
            assert!(tasks.contains_key(t), "{t}");
        }
        assert!(
            schema
                .pointer("/properties/spec/properties/tasks/items/properties/upgrade/properties/localPackageRevisionRef/properties/name")
                .is_some()
        );
        for field in [
            "upstreamLock",
            "selfLock",
            "publishedBy",
            "publishTimestamp",
            "deployment",
            "conditions",
        ] {
            assert!(
                schema
                    .pointer(&format!(
                        "/properties/status/properties/{field}/description"
                    ))
                    .is_some(),
                "{field}"
            );
        }
        assert!(!schema.to_string().contains("\"required\""), "{schema}");
        assert!(
            schema["description"]
                .as_str()
                .is_some_and(|d| d.starts_with("One revision"))
        );
    }
}
