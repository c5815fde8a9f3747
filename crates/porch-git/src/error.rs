//! Errors of the git adapter and their mapping to the port's error kinds.

use porch_core::ErrorKind;
use porch_core::repository::RepositoryError;

/// What went wrong in a git operation.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GitError {
    /// libgit2 failed on the local mirror.
    #[error("git: {0}")]
    Git(#[from] git2::Error),
    /// File system error on the data directory.
    #[error("io: {0}")]
    Io(#[from] std::io::Error),
    /// The remote could not be reached, timed out or refused our credentials.
    #[error(
        "remote {} unavailable: {message}\nhint: check the URL, the network and the credentials; the repository is retried on the next sync",
        crate::redact::redact_url(.url)
    )]
    Unavailable {
        /// Remote URL.
        url: String,
        /// What git said.
        message: String,
    },
    /// A compare-and-swap push lost against a concurrent writer.
    #[error("{0}\nhint: sync the repository and retry")]
    Conflict(String),
    /// The remote refused a push for a reason other than a lost race (a hook, a protected
    /// branch, missing permissions).
    #[error("remote {} rejected the push: {message}", crate::redact::redact_url(.url))]
    Rejected {
        /// Remote URL.
        url: String,
        /// The reasons the remote gave.
        message: String,
    },
    /// The revision, ref or package does not exist.
    #[error("{0}")]
    NotFound(String),
    /// Already exists (e.g. workspace already published).
    #[error("{0} already exists")]
    AlreadyExists(String),
    /// The request does not fit this repository.
    #[error("{0}")]
    Invalid(String),
    /// The mirror worker is gone (shut down or panicked).
    #[error("mirror worker for {0} stopped")]
    WorkerGone(String),
    /// A `git` command failed unexpectedly.
    #[error("`git {args}` failed: {stderr}")]
    Command {
        /// Arguments.
        args: String,
        /// Standard error.
        stderr: String,
    },
}

impl GitError {
    /// The shared error kind.
    pub fn kind(&self) -> ErrorKind {
        match self {
            GitError::Unavailable { .. } => ErrorKind::Unavailable,
            GitError::Conflict(_) => ErrorKind::Conflict,
            GitError::NotFound(_) => ErrorKind::NotFound,
            GitError::AlreadyExists(_) => ErrorKind::AlreadyExists,
            GitError::Invalid(_) => ErrorKind::Invalid,
            GitError::Git(e) if e.code() == git2::ErrorCode::NotFound => ErrorKind::NotFound,
            GitError::Git(_)
            | GitError::Io(_)
            | GitError::WorkerGone(_)
            | GitError::Rejected { .. }
            | GitError::Command { .. } => ErrorKind::Internal,
        }
    }
}

impl From<GitError> for RepositoryError {
    fn from(e: GitError) -> Self {
        let msg = e.to_string();
        match e.kind() {
            ErrorKind::NotFound => RepositoryError::NotFound(msg),
            ErrorKind::AlreadyExists => RepositoryError::AlreadyExists(msg),
            ErrorKind::Conflict => RepositoryError::Conflict(msg),
            ErrorKind::Invalid => RepositoryError::Invalid(msg),
            ErrorKind::Unavailable => RepositoryError::Unavailable(msg),
            _ => RepositoryError::Internal(msg),
        }
    }
}
