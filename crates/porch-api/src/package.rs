//! `porch.kpt.dev/v1alpha1` `PorchPackage` (Porch `api/porch/v1alpha1`, `types_package.go`),
//! served as `packages`: one object per package of a repository. Read-only.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Which package of which repository.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "porch.kpt.dev",
    version = "v1alpha1",
    kind = "PorchPackage",
    doc = "A package of a registered repository, across all its revisions (read-only).",
    plural = "packages",
    singular = "package",
    namespaced,
    status = "PackageStatus"
)]
#[serde(rename_all = "camelCase")]
pub struct PackageSpec {
    /// The package's path in the repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package_name: Option<String>,
    /// Name of the Repository object holding the package.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
}

/// What the server observed about the package.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PackageStatus {
    /// The highest revision number among the package's published revisions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latest_revision: Option<i64>,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn porch_packages_round_trip() {
        let v = json!({
            "apiVersion": "porch.kpt.dev/v1alpha1",
            "kind": "PorchPackage",
            "metadata": {"name": "git.basens", "namespace": "default"},
            "spec": {"packageName": "basens", "repository": "git"},
            "status": {"latestRevision": 2}
        });
        let p: PorchPackage = serde_json::from_value(v.clone()).expect("decodes");
        assert_eq!(serde_json::to_value(&p).expect("encodes"), v);
        let schema = crate::aggregated_schema::<PorchPackage>();
        assert!(
            schema
                .pointer("/properties/status/properties/latestRevision/description")
                .is_some()
        );
        assert!(
            schema
                .pointer("/properties/spec/properties/packageName/description")
                .is_some()
        );
    }
}
