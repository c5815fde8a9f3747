//! `porch.kpt.dev/v1alpha1` `PackageRevisionResources` (Porch `api/porch/v1alpha1`,
//! `types_packagerevisionresources.go`): the files of a package revision, and what rendering
//! them after an update did.

use std::collections::BTreeMap;

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The files of a package revision and which revision they belong to.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "porch.kpt.dev",
    version = "v1alpha1",
    kind = "PackageRevisionResources",
    doc = "The files of one package revision (same name as its PackageRevision). Updating it replaces the files and renders the package.",
    plural = "packagerevisionresources",
    namespaced,
    status = "PackageRevisionResourcesStatus"
)]
#[serde(rename_all = "camelCase")]
pub struct PackageRevisionResourcesSpec {
    /// The package's path in the repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package_name: Option<String>,
    /// The workspace of the revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_name: Option<String>,
    /// The revision number (absent before publishing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<i64>,
    /// Name of the Repository object holding the package.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
    /// The package's text files: path relative to the package root to file content. An
    /// update replaces the whole set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<BTreeMap<String, String>>,
}

/// The outcome of the last render.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PackageRevisionResourcesStatus {
    /// What rendering the package after the update did (in update responses).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub render_status: Option<RenderStatus>,
}

/// The result of rendering a package (running its Kptfile pipeline).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct RenderStatus {
    /// The results of the functions run, as kpt's `FunctionResultList`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<ResultList>,
    /// Why rendering failed; empty on success.
    #[serde(rename = "error", default)]
    pub err: String,
}

/// kpt's `FunctionResultList`: the results of every function of a render.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResultList {
    /// `kpt.dev/v1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `FunctionResultList`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Object metadata of the list (`name: fnresults`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::preserve_unknown")]
    pub metadata: Option<Value>,
    /// Non-zero when a function failed.
    #[serde(default)]
    pub exit_code: i64,
    /// One entry per function run, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items: Option<Vec<FunctionResult>>,
}

/// The result of one function.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FunctionResult {
    /// Name of the pipeline step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The function image (exclusive with `exec`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// The executable run (exclusive with `image`).
    #[serde(rename = "exec", default, skip_serializing_if = "Option::is_none")]
    pub exec_path: Option<String>,
    /// Why the function could not be run at all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_error: Option<String>,
    /// What the function wrote to stderr.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr: Option<String>,
    /// The function's exit code.
    #[serde(default)]
    pub exit_code: i64,
    /// The structured results the function reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub results: Option<Vec<ResultItem>>,
    /// The error-severity results of a failed function.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_results: Option<Vec<ResultItem>>,
}

/// One structured result of a function.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResultItem {
    /// A human-readable message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// `error`, `warning` or `info`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<String>,
    /// The resource the result is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_ref: Option<ResourceIdentifier>,
    /// The field of the resource the result is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<Field>,
    /// The file holding the resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<File>,
    /// Free-form key/value data set by tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<BTreeMap<String, String>>,
}

/// A resource by type and name.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceIdentifier {
    /// `apiVersion` of the resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `kind` of the resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// `metadata.name` of the resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `metadata.namespace` of the resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// A field of a resource.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Field {
    /// Path of the field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The field's current value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_value: Option<String>,
    /// A value that would fix the problem.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposed_value: Option<String>,
}

/// A file of the package.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct File {
    /// Path of the file, relative to the package.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Index of the resource among those in the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<i64>,
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// An update response of Porch with a failed render, and a plain read.
    #[test]
    fn porch_resources_round_trip() {
        for v in [
            json!({
                "apiVersion": "porch.kpt.dev/v1alpha1",
                "kind": "PackageRevisionResources",
                "metadata": {"name": "git.p.ws", "namespace": "default", "resourceVersion": "7"},
                "spec": {
                    "packageName": "p",
                    "workspaceName": "ws",
                    "repository": "git",
                    "resources": {"Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\n", "a/cm.yaml": "kind: ConfigMap\n"}
                },
                "status": {"renderStatus": {
                    "result": {
                        "apiVersion": "kpt.dev/v1",
                        "kind": "FunctionResultList",
                        "metadata": {"name": "fnresults"},
                        "exitCode": 1,
                        "items": [{
                            "image": "gcr.io/kpt-fn/kubeval:v0.3",
                            "stderr": "invalid",
                            "exitCode": 1,
                            "results": [{
                                "message": "bad field",
                                "severity": "error",
                                "resourceRef": {"apiVersion": "v1", "kind": "ConfigMap", "name": "cm"},
                                "field": {"path": "data.x", "currentValue": "1", "proposedValue": "2"},
                                "file": {"path": "a/cm.yaml", "index": 1},
                                "tags": {"k": "v"}
                            }]
                        }]
                    },
                    "error": "fn.render: pipeline step gcr.io/kpt-fn/kubeval:v0.3 failed"
                }}
            }),
            json!({
                "apiVersion": "porch.kpt.dev/v1alpha1",
                "kind": "PackageRevisionResources",
                "metadata": {"name": "git.p.v1"},
                "spec": {"packageName": "p", "workspaceName": "v1", "revision": 1, "repository": "git", "resources": {}},
                "status": {"renderStatus": {"error": ""}}
            }),
        ] {
            let prr: PackageRevisionResources = serde_json::from_value(v.clone()).expect("decodes");
            assert_eq!(serde_json::to_value(&prr).expect("encodes"), v);
        }
    }

    #[test]
    fn schema_has_the_resources_map_and_render_results() {
        let schema = crate::aggregated_schema::<PackageRevisionResources>();
        assert_eq!(
            schema.pointer("/properties/spec/properties/resources/additionalProperties/type"),
            Some(&json!("string"))
        );
        let item = schema
            .pointer("/properties/status/properties/renderStatus/properties/result/properties/items/items/properties")
            .and_then(Value::as_object)
            .expect("result items");
        for f in ["image", "exec", "stderr", "exitCode", "results"] {
            assert!(item.contains_key(f), "{f}");
        }
        assert!(
            schema
                .pointer("/properties/apiVersion/description")
                .is_some()
        );
    }
}
