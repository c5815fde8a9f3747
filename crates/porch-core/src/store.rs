//! The `MetadataStore` port: durable object storage with a monotonic resourceVersion and an
//! event log for watch.
//!
//! Objects are opaque JSON bytes addressed by an [`ObjectKey`]. Every committed write gets the
//! next value of one store-wide counter, the resourceVersion; the store also appends the write
//! to an event log so that a watch can resume from any resourceVersion that has not yet been
//! compacted away. The store never parses objects: the caller hands it a [`Stamp`] that renders
//! the bytes once the resourceVersion is known, so `metadata.resourceVersion` inside the object
//! always equals the stored one.
//!
//! Implementations: `porch-store` (redb, embedded). A PostgreSQL adapter can implement the same
//! trait (`UPDATE … WHERE rv = $n` for the compare-and-swap, a sequence for the counter).
//!
//! The trait is synchronous on purpose: embedded stores are blocking, and async callers run it
//! on a blocking thread (`tokio::task::spawn_blocking`).

use std::sync::Arc;

use crate::ErrorKind;

/// A store-wide, strictly increasing version. 0 means "nothing written yet".
pub type ResourceVersion = u64;

/// Where an object lives. `resource` is `<group>/<plural>` (`/secrets` for the core group);
/// `namespace` is empty for cluster-scoped resources.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectKey {
    pub resource: String,
    pub namespace: String,
    pub name: String,
}

impl ObjectKey {
    pub fn new(
        resource: impl Into<String>,
        namespace: impl Into<String>,
        name: impl Into<String>,
    ) -> Self {
        Self {
            resource: resource.into(),
            namespace: namespace.into(),
            name: name.into(),
        }
    }
}

impl std::fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.namespace.is_empty() {
            write!(f, "{} {}", self.resource, self.name)
        } else {
            write!(f, "{} {}/{}", self.resource, self.namespace, self.name)
        }
    }
}

/// One stored object: its key, the resourceVersion of its last write and its JSON bytes.
#[derive(Debug, Clone)]
pub struct StoredObject {
    pub key: ObjectKey,
    pub resource_version: ResourceVersion,
    pub data: Arc<[u8]>,
}

/// What a write did, as seen by a watcher.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    Added,
    Modified,
    Deleted,
}

impl EventType {
    /// The Kubernetes watch event type (`ADDED`, `MODIFIED`, `DELETED`).
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One entry of the event log. For `Deleted`, `data` is the object's last state as rendered by
/// the delete's [`Stamp`] (normally carrying the deletion's resourceVersion).
#[derive(Debug, Clone)]
pub struct StoreEvent {
    pub event_type: EventType,
    pub object: StoredObject,
    /// The object's bytes before this write (`None` for a creation). Watchers with selectors use
    /// it to turn a change that leaves (enters) the selection into DELETED (ADDED); stores keep
    /// it in the event log so that replayed events carry it too.
    pub previous: Option<Arc<[u8]>>,
}

/// Renders an object's bytes once its new resourceVersion is known. For a put it receives
/// `None`; for a delete it receives the current bytes and returns the tombstone (last state).
pub type Stamp = Box<dyn FnOnce(ResourceVersion, Option<&[u8]>) -> Vec<u8> + Send>;

/// A condition checked inside the write transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precondition {
    /// No check.
    None,
    /// Create: the key must be absent (else `AlreadyExists`).
    MustNotExist,
    /// The key must be present (else `NotFound`).
    MustExist,
    /// The key must be present at exactly this version (else `NotFound` or `Conflict`).
    ResourceVersion(ResourceVersion),
}

/// The operation of one [`Write`].
pub enum WriteOp {
    Put(Stamp),
    Delete(Stamp),
}

/// One object write inside a (possibly multi-object, atomic) batch.
pub struct Write {
    pub key: ObjectKey,
    pub precondition: Precondition,
    pub op: WriteOp,
}

impl std::fmt::Debug for Write {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let op = match self.op {
            WriteOp::Put(_) => "put",
            WriteOp::Delete(_) => "delete",
        };
        f.debug_struct("Write")
            .field("key", &self.key)
            .field("precondition", &self.precondition)
            .field("op", &op)
            .finish()
    }
}

/// A list request: one resource, optionally one namespace, in key order.
#[derive(Debug, Clone, Default)]
pub struct ListQuery {
    pub resource: String,
    /// `None` lists every namespace.
    pub namespace: Option<String>,
    /// Resume strictly after this `(namespace, name)` (from a continue token).
    pub start_after: Option<(String, String)>,
    /// Maximum number of items; `None` for all.
    pub limit: Option<usize>,
}

/// A page of a list, read from one consistent snapshot.
#[derive(Debug, Clone)]
pub struct ListPage {
    pub items: Vec<StoredObject>,
    /// The store's resourceVersion at the snapshot the page was read from.
    pub resource_version: ResourceVersion,
    /// True when `limit` cut the list short.
    pub more: bool,
    /// When `limit` cut the list short: how many objects of the query follow the page
    /// (Kubernetes' `remainingItemCount`).
    pub remaining: Option<u64>,
}

/// Receives committed events in commit order, right after each commit. Must not block.
pub type EventListener = Arc<dyn Fn(&[StoreEvent]) + Send + Sync>;

/// Errors of the metadata store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{0} not found")]
    NotFound(ObjectKey),
    #[error("{0} already exists")]
    AlreadyExists(ObjectKey),
    #[error("{key} was modified: expected resourceVersion {expected}, found {actual}")]
    Conflict {
        key: ObjectKey,
        expected: ResourceVersion,
        actual: ResourceVersion,
    },
    #[error(
        "resourceVersion {requested} is too old: events up to {compacted} were compacted; list again"
    )]
    Gone {
        requested: ResourceVersion,
        compacted: ResourceVersion,
    },
    #[error("store unavailable: {0}")]
    Unavailable(String),
    #[error("store failure: {0}")]
    Internal(String),
}

impl StoreError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            StoreError::NotFound(_) => ErrorKind::NotFound,
            StoreError::AlreadyExists(_) => ErrorKind::AlreadyExists,
            StoreError::Conflict { .. } => ErrorKind::Conflict,
            // A compacted resourceVersion is a stale read: the client must list again.
            StoreError::Gone { .. } => ErrorKind::Conflict,
            StoreError::Unavailable(_) => ErrorKind::Unavailable,
            StoreError::Internal(_) => ErrorKind::Internal,
        }
    }
}

/// Durable object storage with MVCC resourceVersions and a resumable event log.
pub trait MetadataStore: Send + Sync {
    /// Reads one object.
    fn get(&self, key: &ObjectKey) -> Result<Option<StoredObject>, StoreError>;

    /// Lists objects of one resource in `(namespace, name)` order from one snapshot.
    fn list(&self, query: &ListQuery) -> Result<ListPage, StoreError>;

    /// Applies a batch atomically and durably; returns one event per write, in order. Either
    /// every write is committed (and the listener called) or none is.
    fn write(&self, writes: Vec<Write>) -> Result<Vec<StoreEvent>, StoreError>;

    /// Events with a resourceVersion strictly greater than `after`, oldest first, at most
    /// `limit`. `Gone` when `after` is older than the compacted part of the log.
    fn events_since(
        &self,
        after: ResourceVersion,
        limit: usize,
    ) -> Result<Vec<StoreEvent>, StoreError>;

    /// The resourceVersion of the last committed write.
    fn current_resource_version(&self) -> Result<ResourceVersion, StoreError>;

    /// Registers the listener that receives every committed batch in commit order.
    fn set_listener(&self, listener: EventListener);
}
