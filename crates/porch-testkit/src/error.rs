//! Errors of the test kit.

/// What went wrong while setting up a fixture.
#[derive(Debug, thiserror::Error)]
pub enum TestkitError {
    /// File system or socket error.
    #[error("io: {0}")]
    Io(#[from] std::io::Error),
    /// libgit2 error.
    #[error("git2: {0}")]
    Git(#[from] git2::Error),
    /// A `git`/`tar` command failed.
    #[error("`{command}` failed: {stderr}")]
    Command {
        /// The command line.
        command: String,
        /// Its standard error.
        stderr: String,
    },
    /// Any other set-up failure (e.g. generating a certificate).
    #[error("{0}")]
    Setup(String),
}

impl TestkitError {
    /// Fixture failures are internal errors of the test.
    pub fn kind(&self) -> porch_core::ErrorKind {
        porch_core::ErrorKind::Internal
    }
}
