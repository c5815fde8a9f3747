//! The error a native function fails with; it becomes exit code 1 and stderr text.

/// A native function failed.
#[derive(Debug, thiserror::Error)]
pub enum FnError {
    /// The functionConfig is missing, of the wrong kind, or has bad values.
    #[error("{0}")]
    Config(String),
    /// The function could not process a resource.
    #[error("{0}")]
    Failed(String),
    /// The function already explained the failure in its results (possibly
    /// with info severity, as some catalog functions do) and must exit 1
    /// without an extra error result; the text is the Go SDK's stderr line.
    #[error("failed to evaluate function: error: function failure")]
    Reported,
    /// The function failed the way a kyaml `framework.Execute` function does:
    /// exit 1 with this exact stderr text and no result added for it (any
    /// results the function appended itself stay).
    #[error("{0}")]
    Stderr(String),
}
