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
    /// The 2022 Go SDK's `ResultErrAndDie`: the function already pushed the
    /// error result and stops; the SDK adds a second error result with this
    /// text (`function is terminated[ by <object>]: <message>`, see
    /// [`FnError::terminated`]) and prints it on stderr.
    #[error("{0}")]
    Terminated(String),
    /// A kyaml `framework` function (`command.Build`) failing with this one
    /// error result; its stderr is the results' text, `[error]: <message>`.
    #[error("{0}")]
    Framework(String),
}

impl FnError {
    /// The SDK's `errResultEnd` for `message`, about `object` when given.
    pub fn terminated(message: &str, object: Option<&kpt::yaml::Node>) -> FnError {
        FnError::Terminated(match object {
            Some(o) => format!(
                "function is terminated by {}: {message}",
                crate::common::meta::short_string(o)
            ),
            None => format!("function is terminated: {message}"),
        })
    }

    /// What the function prints on stderr when it fails with this error.
    pub fn stderr(&self) -> String {
        match self {
            FnError::Terminated(_) => format!("failed to evaluate function: {self}"),
            FnError::Framework(_) => format!("[error]: {self}"),
            _ => SDK_FAILURE.to_string(),
        }
    }
}

/// What the Go SDK prints on stderr when a function reports an error.
pub const SDK_FAILURE: &str = "failed to evaluate function: error: function failure";
