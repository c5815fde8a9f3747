//! `config.porch.kpt.dev/v1alpha2` `PackageVariantSet` (Porch
//! `controllers/packagevariantsets/api/v1alpha2/packagevariantset_types.go`).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, LabelSelector};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::packagevariant::Upstream;

/// Generates PackageVariants for a set of targets.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "config.porch.kpt.dev",
    version = "v1alpha2",
    kind = "PackageVariantSet",
    namespaced,
    status = "PackageVariantSetStatus"
)]
#[serde(rename_all = "camelCase")]
pub struct PackageVariantSetSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream: Option<Upstream>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub targets: Option<Vec<Target>>,
}

/// One target: exactly one of `repositories`, `repositorySelector`, `objectSelector`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Target {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repositories: Option<Vec<RepositoryTarget>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository_selector: Option<LabelSelector>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object_selector: Option<ObjectSelector>,
    /// The PackageVariant template (with CEL `*Expr` fields), kept as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::preserve_unknown")]
    pub template: Option<serde_json::Value>,
}

/// An explicitly named downstream repository.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RepositoryTarget {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package_names: Option<Vec<String>>,
}

/// Selects arbitrary objects in the namespace.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ObjectSelector {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_labels: Option<std::collections::BTreeMap<String, String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "match_expressions")]
    pub match_expressions: Option<Vec<serde_json::Value>>,
    /// Optional in the schema, as upstream's `omitempty`: the controller reports a missing one.
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

fn match_expressions(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "array", "nullable": true, "items": {
        "type": "object", "required": ["key", "operator"],
        "properties": {"key": {"type": "string"}, "operator": {"type": "string"},
                       "values": {"type": "array", "items": {"type": "string"}}}}})
}

/// Observed state of a PackageVariantSet.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct PackageVariantSetStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::conditions")]
    pub conditions: Option<Vec<Condition>>,
}
