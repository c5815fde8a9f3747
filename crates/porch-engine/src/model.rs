//! What the engine hands out: a package revision as the API sees it, its events, and
//! the requests of the write operations.

use std::collections::BTreeMap;

use porch_core::lifecycle::Lifecycle;
use porch_core::names::{PackageRevisionName, RepositoryName};
use porch_core::revision::{Locator, PackageRevisionKey, Task, Timestamp};
use porch_core::store::EventType;

/// Label Porch computes on read for the latest published revision of each package.
pub const LATEST_REVISION_LABEL: &str = "kpt.dev/latest-revision";

/// Annotation that makes a resources update persist a failed render (spec §10.2).
pub const PUSH_ON_RENDER_FAILURE: &str = "porch.kpt.dev/push-on-render-failure";

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
    /// The revision after the change (for DELETED: its last state).
    pub revision: PackageRevision,
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
    pub(crate) fn matches(&self, pr: &PackageRevision) -> bool {
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
}
