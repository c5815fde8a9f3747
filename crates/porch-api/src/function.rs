//! `porch.kpt.dev/v1alpha1` `Function` (Porch `api/porch/v1alpha1/types_functions.go`, served
//! by Porch's aggregated apiserver until it was removed): a function available to pipelines.
//! Read-only; named `<repository>:<function>:<version>`.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A function and what it is for.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "porch.kpt.dev",
    version = "v1alpha1",
    kind = "Function",
    doc = "A KRM function available to package pipelines (read-only).",
    plural = "functions",
    singular = "function",
    namespaced,
    status = "FunctionStatus"
)]
#[serde(rename_all = "camelCase")]
pub struct FunctionSpec {
    /// The image, e.g. `ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.2`.
    pub image: String,
    /// Where the function comes from: a Repository, or `builtin` / `functionconfig`.
    pub repository_ref: FunctionRepositoryRef,
    /// `mutator` and/or `validator`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub function_types: Vec<String>,
    /// The kinds of functionConfig it accepts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub function_configs: Vec<FunctionConfigKind>,
    /// Discovery keywords.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keywords: Vec<String>,
    /// A short description.
    #[serde(default)]
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub documentation_url: Option<String>,
}

/// The Repository a function was found in.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct FunctionRepositoryRef {
    pub name: String,
}

/// A kind of functionConfig the function takes.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FunctionConfigKind {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub required_fields: Vec<String>,
}

/// Nothing is observed about a function.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct FunctionStatus {}
