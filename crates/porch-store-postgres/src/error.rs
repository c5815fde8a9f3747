//! Conversion of the driver's and the pool's errors into the port's `StoreError`.
//!
//! Anything that says "the database cannot be reached now" (I/O, a closed connection, a pool
//! timeout, a server shutting down or starting) becomes `Unavailable`, so the API answers 503
//! and readiness can say why; everything else is `Internal`.

use porch_core::store::StoreError;

/// A PostgreSQL failure kept as text with its kind.
#[derive(Debug, thiserror::Error)]
pub enum PgError {
    #[error("postgresql unavailable: {0}")]
    Unavailable(String),
    #[error("postgresql: {0}")]
    Query(String),
    #[error("invalid postgresql configuration: {0}")]
    Config(String),
}

impl PgError {
    pub fn kind(&self) -> porch_core::ErrorKind {
        match self {
            PgError::Unavailable(_) => porch_core::ErrorKind::Unavailable,
            PgError::Query(_) => porch_core::ErrorKind::Internal,
            PgError::Config(_) => porch_core::ErrorKind::Invalid,
        }
    }
}

impl From<tokio_postgres::Error> for PgError {
    fn from(e: tokio_postgres::Error) -> Self {
        let unavailable = match e.as_db_error() {
            // Class 08 (connection exception), 57P0x (shutdown, cannot connect now), 53
            // (insufficient resources): the server is not usable right now.
            Some(db) => {
                let code = db.code().code();
                code.starts_with("08") || code.starts_with("57P") || code.starts_with("53")
            }
            None => true,
        };
        let text = match e.as_db_error() {
            Some(db) => format!("{}: {}", db.code().code(), db.message()),
            None => e.to_string(),
        };
        if unavailable || e.is_closed() {
            PgError::Unavailable(text)
        } else {
            PgError::Query(text)
        }
    }
}

impl From<deadpool_postgres::PoolError> for PgError {
    fn from(e: deadpool_postgres::PoolError) -> Self {
        match e {
            deadpool_postgres::PoolError::Backend(e) => PgError::from(e),
            other => PgError::Unavailable(other.to_string()),
        }
    }
}

impl From<PgError> for StoreError {
    fn from(e: PgError) -> Self {
        match e {
            PgError::Unavailable(m) => StoreError::Unavailable(m),
            PgError::Query(m) | PgError::Config(m) => StoreError::Internal(m),
        }
    }
}

/// Shorthand for `?` on driver calls in functions returning `StoreError`.
pub(crate) fn pg<T, E: Into<PgError>>(r: Result<T, E>) -> Result<T, StoreError> {
    r.map_err(|e| StoreError::from(e.into()))
}
