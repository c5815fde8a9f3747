//! `config.porch.kpt.dev/v1alpha1` `FunctionConfig` (Porch `api/porchconfig/v1alpha1/
//! function_config_types.go`): per function image, which executor runs it and with what
//! settings. Fields follow Porch's Go `json` tags; `spec.limits` (Porch has no per-function
//! time or output budget), `spec.imagePullSecrets` and `spec.imagePullPolicy` are this
//! server's extensions.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How the functions of one image run.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "config.porch.kpt.dev",
    version = "v1alpha1",
    kind = "FunctionConfig",
    plural = "functionconfigs",
    singular = "functionconfig",
    namespaced,
    status = "FunctionConfigStatus",
    category = "porch-config"
)]
#[serde(rename_all = "camelCase")]
pub struct FunctionConfigSpec {
    /// The image's name without registry prefix or tag (`set-namespace`).
    pub image: String,
    /// Registry prefixes the name is matched under; `""` is the default (kpt catalog) prefix.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prefixes: Vec<String>,
    /// Run the image itself (Porch: in a pod; here: in the bubblewrap sandbox).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_executor: Option<PodExecutorConfig>,
    /// Run a local executable instead of the image, for these tags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binary_executor: Option<BinaryExecutorConfig>,
    /// Run a function built into the server instead of the image, for these tags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub go_executor: Option<GoExecutorConfig>,
    /// porch-rs extension: the budget of one call of this function, replacing the server's
    /// render budget for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<FunctionLimits>,
    /// porch-rs extension: Secrets in the FunctionConfig's namespace whose registry
    /// credentials pull the image (`kubernetes.io/dockerconfigjson`, `kubernetes.io/dockercfg`
    /// or `kubernetes.io/basic-auth`), tried before the server's docker config. Porch has no
    /// such field: its function runner reads one docker config file for every image.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub image_pull_secrets: Vec<crate::repository::SecretRef>,
    /// porch-rs extension: when the image is pulled again (`Always`, `IfNotPresent`,
    /// `Never`, as kpt's `--image-pull-policy`); the server's policy when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_pull_policy: Option<String>,
}

/// Pod (here: sandbox) execution of the image.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodExecutorConfig {
    /// Image tags this applies to; empty: every tag.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// How long an idle function pod lives (Porch; accepted, no pods here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_to_live: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_parallel_executions: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preferred_max_queue_length: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template_overrides: Option<TemplateOverrides>,
}

/// Changes to the function pod (Porch). `container.resources.limits.memory` is honoured.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TemplateOverrides {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_account_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::preserve_unknown")]
    pub security_context: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init_container: Option<ContainerOverrides>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container: Option<ContainerOverrides>,
}

/// Changes to one container of the function pod.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContainerOverrides {
    /// `corev1.ResourceRequirements` (`limits`, `requests`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::preserve_unknown")]
    pub resources: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env_from: Option<Vec<Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<Vec<Value>>,
}

/// A local executable standing in for the image.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BinaryExecutorConfig {
    /// Image tags run by the executable.
    pub tags: Vec<String>,
    /// Absolute path, or relative to the server's functions directory.
    pub path: String,
}

/// A built-in function standing in for the image.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GoExecutorConfig {
    /// Image tags run by the built-in.
    pub tags: Vec<String>,
    /// The built-in's name; `spec.image` when empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

/// porch-rs: the budget of one call of the function (each unset field keeps the server's).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FunctionLimits {
    /// Wall-clock limit of one call (a Go duration: `500ms`, `30s`, `2m`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    /// Memory of a sandboxed or starlark call, as a quantity (`256Mi`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
    /// Most resources the function may output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_resources: Option<i64>,
    /// Most bytes the function may write on stdout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_bytes: Option<i64>,
    /// Most starlark steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_steps: Option<i64>,
}

/// Which components applied which generation.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FunctionConfigStatus {
    /// The generation porch-server's renders use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_server_observed_generation: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function_runner_observed_generation: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller_observed_generation: Option<i64>,
    /// Why the configuration could not be applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}
