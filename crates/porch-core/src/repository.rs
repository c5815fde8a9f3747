//! The Repository port: what the engine needs from a package storage backend.
//!
//! Adapters (porch-git) implement [`Repository`]; the engine holds `Arc<dyn Repository>`.
//! Methods return boxed futures so the trait stays object-safe without extra crates;
//! implementations do their blocking work off the async runtime.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;

use crate::ErrorKind;
use crate::lifecycle::Lifecycle;
use crate::names::{PackagePath, RepositoryName, Revision, WorkspaceName};
use crate::revision::{Author, PackageRevisionKey, PackageRevisionMeta, Task, Timestamp};

/// A boxed, sendable future (what every port method returns).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A package's files: path relative to the package root → bytes.
pub type PackageFiles = BTreeMap<String, Vec<u8>>;

/// Why a repository operation failed. Messages end with a hint where one helps.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RepositoryError {
    /// The revision (or ref) does not exist.
    #[error("not found: {0}")]
    NotFound(String),
    /// Something with that identity exists already (e.g. the workspace is published).
    #[error("already exists: {0}")]
    AlreadyExists(String),
    /// A concurrent writer won the compare-and-swap; sync and retry.
    #[error("conflict: {0}")]
    Conflict(String),
    /// The request is not valid for this repository.
    #[error("invalid: {0}")]
    Invalid(String),
    /// The remote is unreachable or refused us right now.
    #[error("unavailable: {0}")]
    Unavailable(String),
    /// A bug or corrupted storage.
    #[error("internal: {0}")]
    Internal(String),
}

impl RepositoryError {
    /// The shared error kind.
    pub fn kind(&self) -> ErrorKind {
        match self {
            RepositoryError::NotFound(_) => ErrorKind::NotFound,
            RepositoryError::AlreadyExists(_) => ErrorKind::AlreadyExists,
            RepositoryError::Conflict(_) => ErrorKind::Conflict,
            RepositoryError::Invalid(_) => ErrorKind::Invalid,
            RepositoryError::Unavailable(_) => ErrorKind::Unavailable,
            RepositoryError::Internal(_) => ErrorKind::Internal,
        }
    }
}

/// Which revisions to list; `None` fields match everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListFilter {
    /// Exact package path.
    pub package: Option<PackagePath>,
    /// Exact workspace.
    pub workspace: Option<WorkspaceName>,
    /// Exact revision number.
    pub revision: Option<Revision>,
    /// Exact lifecycle.
    pub lifecycle: Option<Lifecycle>,
    /// Also reconstruct `tasks` from commit history (costs a history walk per revision).
    pub with_tasks: bool,
}

impl ListFilter {
    /// Does `meta` pass the filter?
    pub fn matches(&self, meta: &PackageRevisionMeta) -> bool {
        self.package.as_ref().is_none_or(|p| *p == meta.key.package)
            && self
                .workspace
                .as_ref()
                .is_none_or(|w| *w == meta.key.workspace)
            && self.revision.is_none_or(|r| r == meta.key.revision)
            && self.lifecycle.is_none_or(|l| l == meta.lifecycle)
    }
}

/// Where the content of a revision to publish comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(
    clippy::large_enum_variant,
    reason = "built once per publish; boxing buys nothing"
)]
pub enum PublishContent {
    /// Files held by the engine (drafts in the metadata store). `task` is the creation
    /// task recorded in the draft commit's annotation.
    Files {
        /// The package files.
        files: PackageFiles,
        /// Creation task.
        task: Option<Task>,
    },
    /// The draft or proposed branch already in git (mirrored drafts, or written by Go Porch);
    /// it is deleted in the same push as the tag and branch update, as Porch's approval does.
    MirroredDraft {
        /// The branch head the caller last saw; a branch that moved since is a `Conflict`
        /// (`None`: publish whatever the branch holds).
        expected_commit: Option<String>,
    },
}

/// Publish one revision: the adapter assigns `max(published)+1`, merges onto the
/// registered branch and tags `<path>/v<N>`, atomically.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublishRequest {
    /// Package path.
    pub package: PackagePath,
    /// Workspace being published; must not already be published for this package.
    pub workspace: WorkspaceName,
    /// The content.
    pub content: PublishContent,
    /// The approving user (commit author, later `publishedBy`).
    pub published_by: Author,
}

/// Write (create or update) a draft or proposed revision into git branches
/// `drafts/…` / `proposed/…` (optional draft mirroring).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DraftWrite {
    /// Package path.
    pub package: PackagePath,
    /// Workspace.
    pub workspace: WorkspaceName,
    /// `Draft` or `Proposed`; the other branch is deleted in the same push.
    pub lifecycle: Lifecycle,
    /// New files of the package (the directory is replaced by exactly these).
    pub files: PackageFiles,
    /// Task recorded in the commit annotation.
    pub task: Option<Task>,
    /// Commit author.
    pub author: Author,
    /// Commit the caller last saw for this draft (`None`: must not exist yet).
    pub expected_commit: Option<String>,
}

/// What a sync changed, compared with the previous listing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChangeReport {
    /// New revisions.
    pub added: Vec<PackageRevisionMeta>,
    /// Revisions whose commit, lifecycle or metadata changed.
    pub changed: Vec<PackageRevisionMeta>,
    /// Revisions that are gone.
    pub removed: Vec<PackageRevisionKey>,
}

impl ChangeReport {
    /// Nothing changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.changed.is_empty() && self.removed.is_empty()
    }
}

/// Health of a repository as last observed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RepositoryStatus {
    /// Last sync succeeded.
    pub ready: bool,
    /// `Repository Ready` or the error text.
    pub message: String,
    /// When the last successful sync finished.
    pub last_sync: Option<Timestamp>,
    /// Head commit of the registered branch (`status.gitCommitHash`).
    pub branch_commit: Option<String>,
    /// Number of revisions found, placeholders included (`status.packageCount`).
    pub package_count: usize,
}

/// A registered package repository.
pub trait Repository: Send + Sync {
    /// The Repository object name.
    fn name(&self) -> &RepositoryName;

    /// Where its packages live in git, for the locks of revisions the engine keeps itself
    /// (drafts): the remote URL and the directory holding the packages (no leading or
    /// trailing `/`). `None` for a repository that is not git.
    fn git_location(&self) -> Option<(String, String)> {
        None
    }

    /// Lists revisions from the last synced state (syncs first if never synced).
    fn list(
        &self,
        filter: ListFilter,
    ) -> BoxFuture<'_, Result<Vec<PackageRevisionMeta>, RepositoryError>>;

    /// One revision, with its task history.
    fn get(
        &self,
        key: PackageRevisionKey,
    ) -> BoxFuture<'_, Result<PackageRevisionMeta, RepositoryError>>;

    /// The files of a revision.
    fn read_files(
        &self,
        key: PackageRevisionKey,
    ) -> BoxFuture<'_, Result<PackageFiles, RepositoryError>>;

    /// One file of a revision (`None` when absent). The engine reads each revision's
    /// Kptfile when it enters its index; adapters with a blob cache should override this
    /// default, which reads every file of the revision.
    fn read_file(
        &self,
        key: PackageRevisionKey,
        path: String,
    ) -> BoxFuture<'_, Result<Option<Vec<u8>>, RepositoryError>> {
        Box::pin(async move { Ok(self.read_files(key).await?.remove(&path)) })
    }

    /// Publishes a revision; returns it with its assigned number.
    fn publish(
        &self,
        req: PublishRequest,
    ) -> BoxFuture<'_, Result<PackageRevisionMeta, RepositoryError>>;

    /// Deletes a revision: a draft/proposed branch, a tag (+ its deletion proposal), or for
    /// the -1 placeholder the package directory on the registered branch.
    /// `expected_commit` guards against deleting something that moved.
    fn delete(
        &self,
        key: PackageRevisionKey,
        expected_commit: Option<String>,
    ) -> BoxFuture<'_, Result<(), RepositoryError>>;

    /// Creates (`true`) or removes (`false`) the `deletionProposed/…` branch of a published revision.
    fn set_deletion_proposed(
        &self,
        key: PackageRevisionKey,
        proposed: bool,
    ) -> BoxFuture<'_, Result<PackageRevisionMeta, RepositoryError>>;

    /// Mirrors a draft/proposed revision into git branches.
    fn write_draft(
        &self,
        req: DraftWrite,
    ) -> BoxFuture<'_, Result<PackageRevisionMeta, RepositoryError>>;

    /// Fetches from the remote and reports what changed.
    fn sync(&self) -> BoxFuture<'_, Result<ChangeReport, RepositoryError>>;

    /// Health as last observed; never blocks on git.
    fn status(&self) -> RepositoryStatus;
}
