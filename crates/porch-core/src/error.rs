//! Error kinds shared by every layer; the API edge maps them to HTTP status codes in one place.

/// What went wrong, independent of where. Each crate's error enum exposes `kind()`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The object does not exist.
    NotFound,
    /// An object with that name already exists.
    AlreadyExists,
    /// A concurrent change won: stale resourceVersion, lost compare-and-swap.
    Conflict,
    /// The request is malformed or violates a rule.
    Invalid,
    /// The caller may not do this.
    Forbidden,
    /// A dependency (git remote, store) is unreachable right now.
    Unavailable,
    /// A bug or an unexpected failure.
    Internal,
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = match self {
            ErrorKind::NotFound => "not found",
            ErrorKind::AlreadyExists => "already exists",
            ErrorKind::Conflict => "conflict",
            ErrorKind::Invalid => "invalid",
            ErrorKind::Forbidden => "forbidden",
            ErrorKind::Unavailable => "unavailable",
            ErrorKind::Internal => "internal",
        };
        f.write_str(s)
    }
}
