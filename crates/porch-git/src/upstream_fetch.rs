//! Fetching a package from a git repository that is not registered: the `clone` task's
//! `upstreamRef.git` (spec §9.3). Implements the porch-core
//! [`UpstreamFetcher`](porch_core::upstream::UpstreamFetcher) port.
//!
//! Each fetch uses a fresh temporary bare repository (removed afterwards, also on error):
//! these clones are rare and the URL is arbitrary, so sharing the registered mirrors would
//! only couple unrelated remotes. The ref is resolved on the remote's advertised refs as Go
//! Porch resolves it: `<directory>/<ref>` first (a package tag like `basens/v1`), then
//! `<ref>`, tags before branches, then a full commit SHA.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use porch_core::repository::{BoxFuture, RepositoryError};
use porch_core::upstream::{FetchedPackage, UpstreamFetch, UpstreamFetcher};

use crate::cli::{self, Remote};
use crate::error::GitError;
use crate::objects::read_tree_files;
use crate::redact::redact_url;
use crate::spec::GitAuth;

/// Resolves a credentials secret: `(namespace, secret name)` → credentials.
pub type CredentialResolver = Arc<dyn Fn(&str, &str) -> Result<GitAuth, String> + Send + Sync>;

/// Fetches packages from raw git URLs into temporary repositories under a work directory.
#[derive(Clone)]
pub struct GitUpstreamFetcher {
    work_dir: PathBuf,
    timeout: Duration,
    credentials: Option<CredentialResolver>,
}

impl std::fmt::Debug for GitUpstreamFetcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitUpstreamFetcher")
            .field("work_dir", &self.work_dir)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// Removes a temporary directory when dropped.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir_all(&self.0) {
            tracing::warn!(dir = %self.0.display(), "cannot remove temporary clone: {e}");
        }
    }
}

impl GitUpstreamFetcher {
    /// Temporary repositories go under `<work_dir>/upstream/`; 20 s network timeout;
    /// secret references are refused until [`GitUpstreamFetcher::with_credentials`].
    pub fn new(work_dir: impl Into<PathBuf>) -> Self {
        GitUpstreamFetcher {
            work_dir: work_dir.into().join("upstream"),
            timeout: crate::spec::DEFAULT_NETWORK_TIMEOUT,
            credentials: None,
        }
    }

    /// Resolves `secretRef` names through `resolver`.
    pub fn with_credentials(mut self, resolver: CredentialResolver) -> Self {
        self.credentials = Some(resolver);
        self
    }

    /// Wall-clock limit of each git command.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Fetches the package at `directory` of `url` at `git_ref` (blocking).
    pub fn fetch_blocking(
        &self,
        url: &str,
        git_ref: &str,
        directory: &str,
        auth: &GitAuth,
    ) -> Result<FetchedPackage, GitError> {
        crate::spec::check_url(url)?;
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let dir = self.work_dir.join(format!(
            "{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir)?;
        let _cleanup = TempDir(dir.clone());
        let repo = git2::Repository::init_bare(&dir)?;
        let remote = Remote {
            url: url.to_owned(),
            auth: auth.clone(),
            timeout: self.timeout,
        };
        let package_dir = directory.trim_matches('/');
        let commit = resolve_and_fetch(&repo, &dir, &remote, git_ref, package_dir)?;
        let tree = repo.find_commit(commit)?.tree()?;
        let package_tree = if package_dir.is_empty() {
            tree.id()
        } else {
            match tree.get_path(Path::new(package_dir)) {
                Ok(e) if e.kind() == Some(git2::ObjectType::Tree) => e.id(),
                _ => {
                    return Err(GitError::NotFound(format!(
                        "directory {directory:?} not found in {} at {git_ref}",
                        redact_url(url)
                    )));
                }
            }
        };
        let files = read_tree_files(&repo, package_tree)?;
        if !files.contains_key("Kptfile") {
            return Err(GitError::NotFound(format!(
                "no Kptfile in directory {directory:?} of {} at {git_ref}: not a kpt package",
                redact_url(url)
            )));
        }
        Ok(FetchedPackage {
            files,
            commit: commit.to_string(),
        })
    }
}

/// Finds `git_ref` among the remote's refs, fetches it, and returns its commit.
fn resolve_and_fetch(
    repo: &git2::Repository,
    dir: &Path,
    remote: &Remote,
    git_ref: &str,
    package_dir: &str,
) -> Result<git2::Oid, GitError> {
    let advertised = cli::ls_remote(dir, remote)?;
    let mut names = Vec::new();
    if !package_dir.is_empty() {
        names.push(format!("{package_dir}/{git_ref}"));
    }
    names.push(git_ref.to_owned());
    let found = names.iter().find_map(|n| {
        [format!("refs/tags/{n}"), format!("refs/heads/{n}")]
            .into_iter()
            .find(|full| advertised.contains_key(full))
    });
    if let Some(full) = found {
        cli::fetch_refs(dir, remote, &[full.as_str()])?;
        return Ok(repo.find_reference(&full)?.peel_to_commit()?.id());
    }
    // A commit SHA: fetch everything and look it up.
    let sha = git2::Oid::from_str(git_ref)
        .ok()
        .filter(|_| git_ref.len() == 40)
        .ok_or_else(|| {
            GitError::NotFound(format!(
                "ref {git_ref:?} not found in {}",
                redact_url(&remote.url)
            ))
        })?;
    cli::fetch_refs(dir, remote, &["refs/heads/*", "refs/tags/*"])?;
    repo.find_commit(sha).map(|c| c.id()).map_err(|_| {
        GitError::NotFound(format!(
            "commit {git_ref} not found in {}",
            redact_url(&remote.url)
        ))
    })
}

impl UpstreamFetcher for GitUpstreamFetcher {
    fn fetch(&self, req: UpstreamFetch) -> BoxFuture<'_, Result<FetchedPackage, RepositoryError>> {
        let this = self.clone();
        Box::pin(async move {
            let auth = match (&req.secret_ref, &this.credentials) {
                (None, _) => GitAuth::None,
                (Some(secret), Some(resolve)) => resolve(&req.namespace, secret)
                    .map_err(|e| RepositoryError::Invalid(format!("secret {secret:?}: {e}")))?,
                (Some(secret), None) => {
                    return Err(RepositoryError::Invalid(format!(
                        "secret {secret:?} cannot be resolved: this server has no credential resolver for git upstreams"
                    )));
                }
            };
            tokio::task::spawn_blocking(move || {
                this.fetch_blocking(&req.repo, &req.git_ref, &req.directory, &auth)
            })
            .await
            .map_err(|e| RepositoryError::Internal(format!("fetch task failed: {e}")))?
            .map_err(RepositoryError::from)
        })
    }
}
