//! `config.porch.kpt.dev/v1alpha1` `Repository` (Porch `api/porchconfig/v1alpha1/repository_types.go`).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A git or OCI repository registered with Porch.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "config.porch.kpt.dev",
    version = "v1alpha1",
    kind = "Repository",
    namespaced,
    status = "RepositoryStatus",
    shortname = "repo",
    category = "porch-config",
    category = "all"
)]
#[serde(rename_all = "camelCase")]
pub struct RepositorySpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Deployment repositories hold deployment-ready packages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deployment: Option<bool>,
    /// `git` or `oci`; immutable.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// `Package` (the default) or `Function` (an OCI registry of function images).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync: Option<RepositorySync>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git: Option<GitRepository>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oci: Option<OciRepository>,
    /// Functions run after every package's own mutators on every change (Porch's legacy
    /// guardrails), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mutators: Vec<FunctionEval>,
    /// Functions run after every package's own validators on every change; one failing
    /// refuses the change (and approval).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub validators: Vec<FunctionEval>,
}

/// A guardrail function (Porch `FunctionEval`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FunctionEval {
    /// The function image; mutually exclusive with `functionRef`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// A `Function` of the Repository's namespace (its image is run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function_ref: Option<FunctionEvalRef>,
    /// The function's config, as a ConfigMap's data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_map: Option<std::collections::BTreeMap<String, String>>,
}

/// A reference to a `Function` by name.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct FunctionEvalRef {
    pub name: String,
}

/// When Porch synchronises the repository cache.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RepositorySync {
    /// A cron expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<String>,
    /// A one-time sync at this RFC 3339 time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::date_time")]
    pub run_once_at: Option<String>,
}

/// A git repository.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GitRepository {
    /// Address of the repository (https, http, ssh, file); immutable.
    pub repo: String,
    /// The registered branch, `main` by default; immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// Create the branch when it does not exist.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub create_branch: Option<bool>,
    /// Directory of the packages in the repository (`/` or empty = root); immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub directory: Option<String>,
    /// Secret holding the credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<SecretRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
}

/// An OCI repository.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OciRepository {
    pub registry: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<SecretRef>,
}

/// Reference to a Secret in the Repository's namespace.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct SecretRef {
    /// Name of the Secret (in the namespace of the object referring to it).
    #[serde(default)]
    pub name: String,
}

/// Observed state of a Repository.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RepositoryStatus {
    /// Condition `Ready` with reason `Ready`, `Error` or `Reconciling`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::conditions")]
    pub conditions: Option<Vec<Condition>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::date_time")]
    pub last_full_sync_time: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::date_time")]
    pub next_full_sync_time: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::date_time")]
    pub observed_run_once_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package_count: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_commit_hash: Option<String>,
}
