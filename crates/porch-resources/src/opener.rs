//! The `RepositoryOpener` hook: how a registered Repository is opened.
//!
//! The repository controller calls `open` whenever a Repository is created or its spec
//! changes (and again, with backoff, while that fails), `close` when it is deleted (which
//! stops its sync), `sync_now` for `spec.sync.runOnceAt`, and reads `state` to refresh the
//! Repository's status after the opener's own scheduled syncs. `GitOpener` (porch-git)
//! is the implementation the binary wires in; an OCI opener would be another.

use porch_api::RepositorySpec;

/// Credentials resolved from the Repository's `secretRef`. `Debug` never shows them.
#[derive(Clone)]
pub enum Credentials {
    Basic { username: String, password: String },
    Bearer(String),
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Credentials::Basic { username, .. } => write!(f, "Basic({username}, <redacted>)"),
            Credentials::Bearer(_) => f.write_str("Bearer(<redacted>)"),
        }
    }
}

/// A Repository to open.
#[derive(Debug, Clone)]
pub struct RepositoryTarget {
    pub namespace: String,
    pub name: String,
    pub spec: RepositorySpec,
    pub credentials: Option<Credentials>,
}

/// What an opened repository reports into its status.
#[derive(Debug, Clone, Default)]
pub struct Opened {
    pub git_commit_hash: Option<String>,
    pub package_count: Option<i64>,
}

/// The state of an open repository after its last sync.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RepoState {
    /// The last sync succeeded.
    pub ready: bool,
    /// `Repository Ready` or the error of the last sync.
    pub message: String,
    /// When the last successful sync finished (RFC 3339).
    pub last_sync: Option<String>,
    pub git_commit_hash: Option<String>,
    pub package_count: Option<i64>,
}

/// Opens and closes registered repositories.
#[async_trait::async_trait]
pub trait RepositoryOpener: Send + Sync {
    /// Opens (or re-opens after a spec change) the repository. The error text becomes the
    /// message of the `Ready=False` condition.
    async fn open(&self, target: &RepositoryTarget) -> Result<Opened, String>;
    /// Forgets the repository and stops its sync.
    async fn close(&self, namespace: &str, name: &str);
    /// Syncs an open repository now; the result shows in [`RepositoryOpener::state`].
    async fn sync_now(&self, namespace: &str, name: &str) -> Result<(), String>;
    /// The state of an open repository; `None` when it is not open.
    fn state(&self, namespace: &str, name: &str) -> Option<RepoState>;
    /// Whether this process writes Repository status. Every replica of a cluster opens and
    /// syncs each repository (each serves reads from its own mirror), but only the leader
    /// reports, so replicas do not overwrite each other's `lastFullSyncTime`.
    fn writes_status(&self) -> bool {
        true
    }
}
