//! `spec.tasks` of a `porch.kpt.dev/v1alpha1` `PackageRevision` (Porch
//! `api/porch/v1alpha1`, `Task` and the task specs).
//!
//! Porch today knows `init`, `clone`, `edit` and `upgrade`. Older Porch releases also took
//! `eval`, `patch` and `update` tasks (and `clone.strategy`); their fields are kept here so a
//! manifest written for those releases still decodes under strict field validation. The server
//! records their `type` and ignores their payload.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::repository::SecretRef;

/// One step of a package revision's history. `type` names the step; the field of the same
/// name carries its parameters.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct Task {
    /// The task kind: `init`, `clone`, `edit` or `upgrade`; `update` from older clients (see
    /// `update`); `eval` and `patch` are accepted and recorded without effect.
    #[serde(rename = "type", default)]
    pub type_: String,
    /// Parameters of an `init` task: a new package from scratch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init: Option<PackageInitTaskSpec>,
    /// Parameters of a `clone` task: a new package copied from an upstream package.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clone: Option<PackageCloneTaskSpec>,
    /// Parameters of an `edit` task: a new revision of a package copied from a published one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edit: Option<PackageEditTaskSpec>,
    /// Parameters of an `upgrade` task: a local package rebased on a newer upstream revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upgrade: Option<PackageUpgradeTaskSpec>,
    /// Deprecated (older Porch): a function evaluated on the package. Ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eval: Option<FunctionEvalTaskSpec>,
    /// Deprecated (older Porch): file patches applied to the package. Ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<PackagePatchTaskSpec>,
    /// Older Porch: appended to a Draft's tasks, moves the Draft to another upstream in
    /// place (a new Draft from a published revision is `upgrade`). At creation it is read
    /// as the equivalent `upgrade`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update: Option<PackageUpdateTaskSpec>,
}

/// How to create a package from scratch.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct PackageInitTaskSpec {
    /// Directory of a subpackage to create instead of the package itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subpackage: Option<String>,
    /// A short description of the package (Kptfile `info.description`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Keywords describing the package (Kptfile `info.keywords`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keywords: Option<Vec<String>>,
    /// A web page about the package (Kptfile `info.site`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub site: Option<String>,
}

/// Where a cloned package comes from.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct PackageCloneTaskSpec {
    /// The upstream package to clone.
    #[serde(
        rename = "upstreamRef",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub upstream: Option<UpstreamPackage>,
    /// The merge strategy (`resource-merge` when unset) of a later move of the Draft to
    /// another upstream: a changed clone task or an appended `update` task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<String>,
    /// On a clone task appended to a Draft: the directory of the Draft the upstream is
    /// cloned into, as an independent subpackage.
    #[serde(
        rename = "subpackageDir",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub subpackage_dir: Option<String>,
}

/// The source of a new revision made by copying a published revision of the same package.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct PackageEditTaskSpec {
    /// The published PackageRevision copied.
    #[serde(rename = "sourceRef", default, skip_serializing_if = "Option::is_none")]
    pub source: Option<PackageRevisionRef>,
}

/// A three-way merge: the changes from `oldUpstreamRef` to `newUpstreamRef` applied to the
/// local revision.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PackageUpgradeTaskSpec {
    /// The upstream revision the local package was last based on (the merge base).
    #[serde(
        rename = "oldUpstreamRef",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub old_upstream: Option<PackageRevisionRef>,
    /// The upstream revision to move to.
    #[serde(
        rename = "newUpstreamRef",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub new_upstream: Option<PackageRevisionRef>,
    /// The local revision whose changes are kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_package_revision_ref: Option<PackageRevisionRef>,
    /// How the changes are merged: `resource-merge` (the default), `fast-forward`,
    /// `force-delete-replace` or `copy-merge`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<String>,
    /// On an upgrade task appended to a Draft: the directory of the independent subpackage
    /// of the Draft that is upgraded in place.
    #[serde(
        rename = "subpackageDir",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub subpackage_dir: Option<String>,
}

/// An upstream package: a PackageRevision of a registered repository, or a package in a git
/// repository or OCI image given directly.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpstreamPackage {
    /// `git` or `oci` for a location given directly; empty when `upstreamRef` is used.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// The package in a git repository (with `type: git`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git: Option<GitPackage>,
    /// The package in an OCI image (with `type: oci`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oci: Option<OciPackage>,
    /// A PackageRevision of a registered repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream_ref: Option<PackageRevisionRef>,
}

/// A package in a git repository.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GitPackage {
    /// Address of the git repository.
    #[serde(default)]
    pub repo: String,
    /// The branch, tag or commit holding the package.
    #[serde(rename = "ref", default)]
    pub ref_: String,
    /// Directory of the package in the repository.
    #[serde(default)]
    pub directory: String,
    /// A Secret in the same namespace holding the credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<SecretRef>,
}

/// A package in an OCI image.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct OciPackage {
    /// Address of the image.
    #[serde(default)]
    pub image: String,
}

/// A PackageRevision by object name.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct PackageRevisionRef {
    /// Name of the PackageRevision object (`<repository>.<package>.<workspace>`).
    #[serde(default)]
    pub name: String,
}

/// Deprecated `update` task parameters.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct PackageUpdateTaskSpec {
    /// The upstream package to update to.
    #[serde(
        rename = "upstreamRef",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub upstream: Option<UpstreamPackage>,
}

/// Deprecated `patch` task parameters.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct PackagePatchTaskSpec {
    /// The patch operations, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patches: Option<Vec<PatchSpec>>,
}

/// One deprecated file patch.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PatchSpec {
    /// Path of the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// New contents, or the patch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contents: Option<String>,
    /// `CreateFile`, `DeleteFile` or `PatchFile`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch_type: Option<String>,
}

/// Deprecated `eval` task parameters: one KRM function run on the package.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FunctionEvalTaskSpec {
    /// Subpackage directory the function runs in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subpackage: Option<String>,
    /// The function image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// Function config as key/value pairs (exclusive with `config`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_map: Option<BTreeMap<String, String>>,
    /// Function config as a KRM resource (exclusive with `configMap`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::preserve_unknown")]
    pub config: Option<Value>,
    /// Also pass the Kptfile and function configs to the function.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_meta_resources: Option<bool>,
    /// Give the function network access.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enable_network: Option<bool>,
    /// Which resources the function sees.
    #[serde(rename = "match", default, skip_serializing_if = "Option::is_none")]
    pub match_: Option<Selector>,
}

/// Resources selected by type and name (`kpt fn eval --match-*`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Selector {
    /// `apiVersion` of the resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `kind` of the resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// `metadata.name` of the resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `metadata.namespace` of the resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}
