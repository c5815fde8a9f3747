//! Conversion of redb's errors into the port's `StoreError`.

use porch_core::store::StoreError;

/// A redb failure, kept as text: the port only needs the message and its kind.
#[derive(Debug, thiserror::Error)]
#[error("redb: {0}")]
pub struct RedbError(pub String);

impl RedbError {
    pub fn kind(&self) -> porch_core::ErrorKind {
        porch_core::ErrorKind::Internal
    }
}

impl<E: Into<redb::Error>> From<E> for RedbError {
    fn from(e: E) -> Self {
        RedbError(e.into().to_string())
    }
}

impl From<RedbError> for StoreError {
    fn from(e: RedbError) -> Self {
        StoreError::Internal(e.0)
    }
}

/// Shorthand used with `?` on redb calls inside functions returning `StoreError`.
pub(crate) fn dbr<T, E: Into<redb::Error>>(r: Result<T, E>) -> Result<T, StoreError> {
    r.map_err(|e| StoreError::from(RedbError::from(e)))
}
