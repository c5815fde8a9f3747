//! The engine's error type: one enum, every variant mapped to a shared [`ErrorKind`].

use porch_core::ErrorKind;
use porch_core::lifecycle::TransitionError;
use porch_core::names::NameError;
use porch_core::repository::RepositoryError;
use porch_core::store::StoreError;

/// Why an engine operation failed. Messages follow Porch's wording where clients match on it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// No such package revision (or repository).
    #[error("{0} not found")]
    NotFound(String),
    /// The identity is taken.
    #[error("{0}")]
    AlreadyExists(String),
    /// The resourceVersion given is not the object's (or a write lost its compare-and-swap):
    /// Porch's optimistic-concurrency conflict on package revision `name`.
    #[error(
        "Operation cannot be fulfilled on packagerevisions.porch.kpt.dev \"{name}\": the object has been modified; please apply your changes to the latest version and try again"
    )]
    Modified {
        /// The package revision.
        name: String,
    },
    /// Another conflict (a lost race on a name, a repository that moved).
    #[error("{0}")]
    Conflict(String),
    /// Another request on the same object (or create identity) is in progress: Porch's
    /// try-lock, the one conflict Porch answers with a real 409 (spec §20.2).
    #[error("{0}")]
    InProgress(String),
    /// The request breaks a rule.
    #[error("{0}")]
    Invalid(String),
    /// The request is understood but not allowed in the current state.
    #[error("{0}")]
    Forbidden(String),
    /// Render failed; nothing was saved (or it was saved because of the push-on-failure
    /// annotation, see `pushed`).
    #[error(
        "error rendering package in kpt function pipeline. Package {}. Details: {message}",
        if *.pushed { "pushed to remote despite render failure" } else { "NOT pushed to remote. Fix locally (until 'kpt fn render' succeeds) and retry" }
    )]
    Render {
        /// The render error text.
        message: String,
        /// Whether the failed result was persisted anyway.
        pushed: bool,
        /// The function results (`status.renderStatus`).
        status: Box<crate::model::RenderStatus>,
    },
    /// A name failed validation.
    #[error("package revision kubernetes resource name invalid:\n{0}")]
    Name(#[from] NameError),
    /// A lifecycle transition is not allowed.
    #[error(transparent)]
    Transition(#[from] TransitionError),
    /// The repository adapter failed.
    #[error("repository {repository}: {source}")]
    Repository {
        /// Repository name.
        repository: String,
        /// The adapter's error.
        source: RepositoryError,
    },
    /// The metadata store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A bug or corrupt stored data.
    #[error("internal error: {0}")]
    Internal(String),
}

impl EngineError {
    /// The shared error kind (the API edge maps it to an HTTP status).
    pub fn kind(&self) -> ErrorKind {
        match self {
            EngineError::NotFound(_) => ErrorKind::NotFound,
            EngineError::AlreadyExists(_) => ErrorKind::AlreadyExists,
            EngineError::Modified { .. }
            | EngineError::Conflict(_)
            | EngineError::InProgress(_) => ErrorKind::Conflict,
            EngineError::Invalid(_) => ErrorKind::Invalid,
            EngineError::Forbidden(_) => ErrorKind::Forbidden,
            // The pipeline is the user's content: its failure is a 422 (Porch answers 500;
            // COMPATIBILITY.md).
            EngineError::Render { .. } => ErrorKind::Invalid,
            EngineError::Name(e) => e.kind(),
            EngineError::Transition(e) => e.kind(),
            EngineError::Repository { source, .. } => source.kind(),
            EngineError::Store(e) => e.kind(),
            EngineError::Internal(_) => ErrorKind::Internal,
        }
    }

    pub(crate) fn repo(repository: &impl std::fmt::Display, source: RepositoryError) -> Self {
        EngineError::Repository {
            repository: repository.to_string(),
            source,
        }
    }

    /// Porch's optimistic-concurrency message for `name`.
    pub(crate) fn modified(name: &str) -> Self {
        EngineError::Modified {
            name: name.to_owned(),
        }
    }
}

/// Result with [`EngineError`].
pub type Result<T, E = EngineError> = std::result::Result<T, E>;
