//! Errors of porchctl's remote commands: what went wrong, in upstream porchctl's words, plus
//! a hint for the user where one helps.

/// A failed remote operation.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// No usable kubeconfig / connection settings.
    #[error("{0}")]
    Config(String),
    /// The server answered with a `Status` (404, 409, 422, ...): its message, verbatim.
    #[error("{message}")]
    Api {
        code: u16,
        reason: String,
        message: String,
    },
    /// The request never got an answer (connection refused, TLS, timeouts).
    #[error("{0}")]
    Transport(String),
    /// Bad arguments or flags.
    #[error("{0}")]
    Usage(String),
    /// The server's answer could not be understood.
    #[error("{0}")]
    Decode(String),
    /// A command-level failure in upstream porchctl's words (e.g. the `errors:` summary
    /// of a multi-name command, or a lifecycle state the command cannot act on).
    #[error("{0}")]
    Failed(String),
    /// Writing the output failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// The broad class of a [`RemoteError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    Config,
    NotFound,
    AlreadyExists,
    Unauthorized,
    Api,
    Transport,
    Usage,
    Decode,
    Failed,
    Io,
}

impl RemoteError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            RemoteError::Config(_) => ErrorKind::Config,
            RemoteError::Api { code: 404, .. } => ErrorKind::NotFound,
            RemoteError::Api {
                code: 409, reason, ..
            } if reason == "AlreadyExists" => ErrorKind::AlreadyExists,
            RemoteError::Api { code: 401, .. } => ErrorKind::Unauthorized,
            RemoteError::Api { .. } => ErrorKind::Api,
            RemoteError::Transport(_) => ErrorKind::Transport,
            RemoteError::Usage(_) => ErrorKind::Usage,
            RemoteError::Decode(_) => ErrorKind::Decode,
            RemoteError::Failed(_) => ErrorKind::Failed,
            RemoteError::Io(_) => ErrorKind::Io,
        }
    }

    /// A line that tells the user what to try next, when there is something useful to say.
    pub fn hint(&self) -> Option<&'static str> {
        match self.kind() {
            ErrorKind::Config => Some(
                "hint: pass --kubeconfig (or set KUBECONFIG) to the kubeconfig porch-server wrote, or give --server and --token",
            ),
            ErrorKind::Transport => Some(
                "hint: is porch-server running and reachable at the kubeconfig's server address? (--server overrides it)",
            ),
            ErrorKind::Unauthorized => Some(
                "hint: the token was refused; use the kubeconfig porch-server wrote or --token",
            ),
            _ => None,
        }
    }

    pub fn api_from_status(status: &kube::core::Status) -> Self {
        RemoteError::Api {
            code: status.code,
            reason: status.reason.clone(),
            message: status.message.clone(),
        }
    }
}

impl From<kube::Error> for RemoteError {
    fn from(e: kube::Error) -> Self {
        match e {
            kube::Error::Api(status) => RemoteError::api_from_status(&status),
            kube::Error::SerdeError(e) => RemoteError::Decode(e.to_string()),
            other => {
                // kube nests the root cause (e.g. "Connection refused") a few sources deep.
                let mut msg = other.to_string();
                let mut src = std::error::Error::source(&other);
                while let Some(s) = src {
                    msg = format!("{msg}: {s}");
                    src = s.source();
                }
                RemoteError::Transport(msg)
            }
        }
    }
}
