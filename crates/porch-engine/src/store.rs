//! The engine's records in the `MetadataStore`: drafts and object metadata, read and
//! written off the async runtime. Writes are batches of [`Change`]s committed atomically, each
//! guarded by a precondition on its record's resourceVersion, so a draft and its metadata
//! change together or not at all.

use std::sync::Arc;

use porch_core::names::RepositoryName;
use porch_core::store::{
    ListQuery, MetadataStore, ObjectKey, Precondition, ResourceVersion, Write, WriteOp,
};

use crate::drafts::{DRAFT_RESOURCE, DraftMeta, StoredDraft};
use crate::error::{EngineError, Result};
use crate::objmeta::{META_RESOURCE, ObjectMeta, meta_key};

/// One write of a batch.
pub(crate) enum Change {
    /// Create or replace a draft, changing its files or lifecycle: its `content_version`
    /// becomes the write's store version.
    PutDraft(Box<StoredDraft>, Precondition),
    /// Replace a draft's record to note its mirror state only (`content_version` kept);
    /// `failure_changed` stamps `mirror.failure_version`, as the served condition changes.
    RecordMirror {
        draft: Box<StoredDraft>,
        precondition: Precondition,
        failure_changed: bool,
    },
    /// Remove a draft.
    DeleteDraft(ObjectKey, Precondition),
    /// Create or replace the metadata of object `name`.
    PutMeta {
        namespace: String,
        name: String,
        meta: ObjectMeta,
        precondition: Precondition,
    },
    /// Remove the metadata of an object.
    DeleteMeta(ObjectKey, Precondition),
    /// Note that this replica changed repository `repository`'s git refs in a way no draft
    /// or metadata record shows (a deletion proposal, a deleted tag): other replicas follow
    /// the shared log and refresh the repository when they see it (`cluster`).
    GitWritten {
        namespace: String,
        repository: String,
    },
}

/// Store resource of the [`Change::GitWritten`] markers (internal; one record per repository).
pub(crate) const GIT_WRITES_RESOURCE: &str = "engine.porch.kpt.dev/gitwrites";

/// `Some(rv)`: must be at `rv`; `None`: must not exist.
pub(crate) fn at(rv: Option<ResourceVersion>) -> Precondition {
    rv.map_or(Precondition::MustNotExist, Precondition::ResourceVersion)
}

/// Blocking store access, run off the async runtime.
#[derive(Clone)]
pub(crate) struct Store {
    store: Arc<dyn MetadataStore>,
}

impl Store {
    pub(crate) fn new(store: Arc<dyn MetadataStore>) -> Self {
        Store { store }
    }

    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&dyn MetadataStore) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let store = self.store.clone();
        tokio::task::spawn_blocking(move || f(store.as_ref()))
            .await
            .map_err(|e| EngineError::Internal(format!("store task failed: {e}")))?
    }

    /// Every stored draft of `repository` in `namespace`.
    pub(crate) async fn list_drafts(
        &self,
        namespace: &str,
        repository: &RepositoryName,
    ) -> Result<Vec<DraftMeta>> {
        let repo = repository.clone();
        let objects = self
            .list_repo(DRAFT_RESOURCE, namespace, repository)
            .await?;
        let mut out = Vec::new();
        for (_, rv, data) in objects {
            let d = StoredDraft::decode(&data, rv)?;
            if d.meta.repository == repo {
                out.push(d.meta);
            }
        }
        Ok(out)
    }

    /// The metadata records of the objects of `repository` in `namespace`, by object name.
    pub(crate) async fn list_meta(
        &self,
        namespace: &str,
        repository: &RepositoryName,
    ) -> Result<Vec<(String, ObjectMeta)>> {
        let objects = self.list_repo(META_RESOURCE, namespace, repository).await?;
        objects
            .into_iter()
            .map(|(name, rv, data)| Ok((name, ObjectMeta::decode(&data, rv)?)))
            .collect()
    }

    /// Records of `resource` whose object name starts with `<repository>.`.
    async fn list_repo(
        &self,
        resource: &'static str,
        namespace: &str,
        repository: &RepositoryName,
    ) -> Result<Vec<(String, ResourceVersion, Arc<[u8]>)>> {
        let (ns, prefix) = (namespace.to_owned(), format!("{repository}."));
        self.blocking(move |s| {
            let page = s.list(&ListQuery {
                resource: resource.into(),
                namespace: Some(ns),
                ..ListQuery::default()
            })?;
            Ok(page
                .items
                .into_iter()
                .filter(|o| o.key.name.starts_with(&prefix))
                .map(|o| (o.key.name, o.resource_version, o.data))
                .collect())
        })
        .await
    }

    /// One draft with its files.
    pub(crate) async fn get_draft(&self, key: ObjectKey) -> Result<StoredDraft> {
        self.blocking(move |s| {
            let obj = s
                .get(&key)?
                .ok_or_else(|| EngineError::NotFound(key.name.clone()))?;
            StoredDraft::decode(&obj.data, obj.resource_version)
        })
        .await
    }

    /// Commits `changes` atomically; returns the new resourceVersion of each (0 for deletes).
    pub(crate) async fn commit(&self, changes: Vec<Change>) -> Result<Vec<ResourceVersion>> {
        let writes: Vec<Write> = changes.into_iter().map(to_write).collect();
        let deletes: Vec<bool> = writes
            .iter()
            .map(|w| matches!(w.op, WriteOp::Delete(_)))
            .collect();
        let events = self.blocking(move |s| Ok(s.write(writes)?)).await?;
        if events.len() != deletes.len() {
            return Err(EngineError::Internal(format!(
                "store wrote {} of {} records",
                events.len(),
                deletes.len()
            )));
        }
        Ok(events
            .iter()
            .zip(deletes)
            .map(|(e, deleted)| {
                if deleted {
                    0
                } else {
                    e.object.resource_version
                }
            })
            .collect())
    }
}

fn to_write(change: Change) -> Write {
    let put = |bytes: Vec<u8>| WriteOp::Put(Box::new(move |_, _| bytes));
    // The tombstone is the last state, as the store's watchers expect.
    let delete = || {
        WriteOp::Delete(Box::new(|_, old| {
            old.map(<[u8]>::to_vec).unwrap_or_default()
        }))
    };
    match change {
        Change::PutDraft(mut draft, precondition) => Write {
            key: draft.meta.object_key(),
            precondition,
            op: WriteOp::Put(Box::new(move |rv, _| {
                draft.meta.content_version = rv;
                draft.encode()
            })),
        },
        Change::RecordMirror {
            mut draft,
            precondition,
            failure_changed,
        } => Write {
            key: draft.meta.object_key(),
            precondition,
            op: WriteOp::Put(Box::new(move |rv, _| {
                if failure_changed && let Some(m) = draft.meta.mirror.as_mut() {
                    m.failure_version = rv;
                }
                draft.encode()
            })),
        },
        Change::DeleteDraft(key, precondition) | Change::DeleteMeta(key, precondition) => Write {
            key,
            precondition,
            op: delete(),
        },
        Change::PutMeta {
            namespace,
            name,
            meta,
            precondition,
        } => Write {
            key: meta_key(&namespace, &name),
            precondition,
            op: put(meta.encode()),
        },
        Change::GitWritten {
            namespace,
            repository,
        } => Write {
            key: ObjectKey::new(GIT_WRITES_RESOURCE, namespace, format!("{repository}.git")),
            precondition: Precondition::None,
            // The content is the record's own version: every marker is a change.
            op: WriteOp::Put(Box::new(|rv, _| rv.to_string().into_bytes())),
        },
    }
}
