//! What the engine hands out: a package revision as the API sees it, its events, and
//! the requests of the write operations.

use std::collections::BTreeMap;

use porch_core::lifecycle::Lifecycle;
use porch_core::names::{PackageRevisionName, RepositoryName};
use porch_core::revision::{Locator, PackageRevisionKey, Task, Timestamp};
use porch_core::store::EventType;
use serde::{Deserialize, Serialize};

/// Label Porch computes on read for the latest published revision of each package.
pub const LATEST_REVISION_LABEL: &str = "kpt.dev/latest-revision";

/// Annotation that makes a resources update persist a failed render (spec §10.2).
pub const PUSH_ON_RENDER_FAILURE: &str = "porch.kpt.dev/push-on-render-failure";

/// Condition a stored draft carries (status `False`) while its mirror branch is behind:
/// reason `Conflict` when the branch was written by someone else (never overwritten),
/// `Unavailable` or `Error` while the write is retried. Never written to the Kptfile.
pub const GIT_MIRROR_CONDITION: &str = "porch.kpt.dev/GitMirror";

/// Engine-wide options, fixed at construction ([`crate::Engine::with_options`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EngineOptions {
    /// Mirror every change of a stored Draft/Proposed revision to its Porch-layout branch
    /// (`drafts/<path>/<ws>`, `proposed/<path>/<ws>`), as Porch's `--db-push-drafts-to-git`.
    /// The store stays the source of truth: a failed mirror write is recorded and retried,
    /// never failing the request that changed the draft.
    pub push_drafts_to_git: bool,
    /// What one render on the server may spend.
    pub render: RenderLimits,
}

/// The budget of every render the engine runs (create, resources update, metadata edit,
/// propose). A render over budget fails like any render failure: nothing is saved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderLimits {
    /// Wall-clock limit of one whole render (`None`: unlimited).
    pub timeout: Option<std::time::Duration>,
    /// Most resources one function may output.
    pub max_output_items: Option<usize>,
    /// Most bytes one exec function may write on stdout.
    pub max_output_bytes: Option<usize>,
    /// Most heap one starlark program may use.
    pub max_memory_bytes: Option<usize>,
    /// Most starlark steps (calls and loop iterations) per function.
    pub max_steps: Option<u64>,
}

impl Default for RenderLimits {
    /// Bounded defaults for a server: a 100,000-resource package renders well inside them
    /// (docs/server.md, "Render budget").
    fn default() -> Self {
        RenderLimits {
            timeout: Some(std::time::Duration::from_secs(60)),
            max_output_items: Some(250_000),
            max_output_bytes: Some(512 << 20),
            max_memory_bytes: Some(1 << 30),
            max_steps: None,
        }
    }
}

/// Where a revision's content lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Git (published revisions, the placeholder, draft branches written by others).
    Git,
    /// The metadata store (drafts and proposed revisions created through the engine).
    Store,
}

/// One package revision as the API layer serves it (without its files).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageRevision {
    /// Namespace of the Repository object.
    pub namespace: String,
    /// Identity (repository, package path, workspace, revision number).
    pub key: PackageRevisionKey,
    /// `spec.lifecycle`.
    pub lifecycle: Lifecycle,
    /// Opaque version for optimistic concurrency: the commit SHA for git revisions, the
    /// store's resourceVersion for stored drafts. Pass it back to update.
    pub resource_version: String,
    /// `metadata.labels`, including the computed [`LATEST_REVISION_LABEL`].
    pub labels: BTreeMap<String, String>,
    /// `metadata.annotations`.
    pub annotations: BTreeMap<String, String>,
    /// `spec.tasks` (the creating task; empty when git history was not read).
    pub tasks: Vec<Task>,
    /// `status.selfLock` (git revisions only).
    pub self_lock: Option<Locator>,
    /// `status.upstreamLock`.
    pub upstream_lock: Option<Locator>,
    /// `status.publishedBy`.
    pub published_by: Option<String>,
    /// `status.publishTimestamp`.
    pub publish_timestamp: Option<Timestamp>,
    /// `metadata.creationTimestamp` when known.
    pub creation_timestamp: Option<Timestamp>,
    /// Is this the latest published revision of its package?
    pub latest: bool,
    /// Where the content lives.
    pub origin: Origin,
    /// `spec.packageMetadata`: the Kptfile's `metadata.labels`/`annotations`.
    pub package_metadata: PackageMetadata,
    /// `spec.readinessGates[].conditionType`: the Kptfile's `info.readinessGates`.
    pub readiness_gates: Vec<String>,
    /// `status.conditions`: the Kptfile's `status.conditions`.
    pub conditions: Vec<Condition>,
    /// `status.deployment`: the repository is a deployment repository.
    pub deployment: bool,
    /// `metadata.finalizers`.
    pub finalizers: Vec<String>,
    /// `metadata.ownerReferences`.
    pub owner_references: Vec<OwnerReference>,
    /// `metadata.deletionTimestamp`: set when a delete waits for finalizers.
    pub deletion_timestamp: Option<Timestamp>,
}

/// `spec.packageMetadata` (mirrors the Kptfile's `metadata.labels`/`annotations`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PackageMetadata {
    /// Kptfile `metadata.labels`.
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// Kptfile `metadata.annotations`.
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
}

/// One `status.conditions` entry (the Kptfile's condition shape, not `metav1.Condition`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Condition {
    /// `type`.
    #[serde(rename = "type")]
    pub condition_type: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// `reason`.
    #[serde(default)]
    pub reason: String,
    /// `message`.
    #[serde(default)]
    pub message: String,
}

/// One `metadata.ownerReferences` entry.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OwnerReference {
    /// `apiVersion` of the owner.
    pub api_version: String,
    /// `kind` of the owner.
    pub kind: String,
    /// `name` of the owner.
    pub name: String,
    /// `uid` of the owner.
    pub uid: String,
    /// `controller`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller: Option<bool>,
    /// `blockOwnerDeletion`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_owner_deletion: Option<bool>,
}

/// The new object metadata of a revision ([`crate::Engine::update_metadata`]). Every
/// lifecycle takes labels, annotations, finalizers and owner references; the spec fields
/// (`package_metadata`, `readiness_gates`, `conditions`) change the Kptfile of a Draft and
/// must be `None` or unchanged otherwise.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MetadataUpdate {
    /// `metadata.labels` (replaces; the computed [`LATEST_REVISION_LABEL`] is dropped, and
    /// may not be set to a value other than the computed one).
    pub labels: BTreeMap<String, String>,
    /// `metadata.annotations` (replaces).
    pub annotations: BTreeMap<String, String>,
    /// `metadata.finalizers` (replaces). Emptying them on a terminating revision deletes it.
    pub finalizers: Vec<String>,
    /// `metadata.ownerReferences` (replaces).
    pub owner_references: Vec<OwnerReference>,
    /// `spec.packageMetadata`: `None` keeps it; on a Draft a new value replaces the
    /// Kptfile's labels and annotations wholesale and re-renders.
    pub package_metadata: Option<PackageMetadata>,
    /// `spec.readinessGates` condition types: `None` keeps them; on a Draft a new value is
    /// written to the Kptfile's `info.readinessGates` and re-renders.
    pub readiness_gates: Option<Vec<String>>,
    /// `status.conditions`: `None` keeps them; on a Draft each is upserted (by type) into
    /// the Kptfile's `status.conditions` and re-renders.
    pub conditions: Option<Vec<Condition>>,
}

impl PackageRevision {
    /// The object name.
    pub fn name(&self) -> PackageRevisionName {
        self.key.name()
    }
    /// The repository.
    pub fn repository(&self) -> &RepositoryName {
        &self.key.repository
    }
}

/// One change the API layer turns into a watch event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineEvent {
    /// ADDED, MODIFIED or DELETED.
    pub event_type: EventType,
    /// The revision after the change (for DELETED: its last state). Shared: the event bus
    /// keeps its last events and every subscriber holds them, so one copy serves them all.
    pub revision: std::sync::Arc<PackageRevision>,
}

/// Which revisions to list; `None` matches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListOptions {
    /// Namespace.
    pub namespace: Option<String>,
    /// Repository.
    pub repository: Option<RepositoryName>,
    /// Exact package path.
    pub package: Option<String>,
    /// Exact workspace.
    pub workspace: Option<String>,
    /// Lifecycles (OR-ed); empty matches all.
    pub lifecycles: Vec<Lifecycle>,
    /// Exact revision number.
    pub revision: Option<i64>,
}

impl ListOptions {
    /// Whether `pr` is selected ([`crate::Engine::list`] keeps exactly these).
    pub fn matches(&self, pr: &PackageRevision) -> bool {
        self.namespace.as_ref().is_none_or(|n| *n == pr.namespace)
            && self
                .repository
                .as_ref()
                .is_none_or(|r| *r == pr.key.repository)
            && self
                .package
                .as_ref()
                .is_none_or(|p| p == pr.key.package.as_str())
            && self
                .workspace
                .as_ref()
                .is_none_or(|w| w == pr.key.workspace.as_str())
            && (self.lifecycles.is_empty() || self.lifecycles.contains(&pr.lifecycle))
            && self.revision.is_none_or(|r| r == pr.key.revision.get())
    }
}

/// Create a Draft (spec §9).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CreateRequest {
    /// Namespace of the repository.
    pub namespace: String,
    /// `spec.repository`.
    pub repository: String,
    /// `spec.packageName` (may contain `/`).
    pub package: String,
    /// `spec.workspaceName`.
    pub workspace: String,
    /// `spec.tasks`: at most one; none means `init`.
    pub tasks: Vec<Task>,
    /// `metadata.labels`.
    pub labels: BTreeMap<String, String>,
    /// `metadata.annotations`.
    pub annotations: BTreeMap<String, String>,
    /// `metadata.finalizers`.
    pub finalizers: Vec<String>,
    /// `metadata.ownerReferences`.
    pub owner_references: Vec<OwnerReference>,
    /// `spec.packageMetadata`: merged additively into the new Kptfile's labels/annotations.
    pub package_metadata: Option<PackageMetadata>,
    /// `spec.readinessGates` condition types, added to the new Kptfile's `info.readinessGates`.
    pub readiness_gates: Vec<String>,
}

/// Options of [`crate::Engine::register_with`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RegisterOptions {
    /// Repository `spec.deployment`: revisions report `status.deployment` and clones into
    /// it regenerate `package-context.yaml`.
    pub deployment: bool,
    /// Repository `spec.mutators` / `spec.validators`, run after every package's pipeline.
    pub guardrails: crate::guardrails::Guardrails,
}

/// The render outcome of a resources update (`status.renderStatus`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RenderStatus {
    /// Every function step run, in order (mutators, then validators).
    pub results: Vec<kpt::kptfile::StepResult>,
    /// The render error, empty on success.
    pub error: String,
}

/// A package revision with its files, after an update.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourcesUpdate {
    /// The revision after the update.
    pub revision: PackageRevision,
    /// What render did. A non-empty `error` means the failed result was persisted because of
    /// [`PUSH_ON_RENDER_FAILURE`]; Porch still answers such an update with an error.
    pub render_status: RenderStatus,
    /// The files saved (rendered).
    pub files: porch_core::repository::PackageFiles,
}
