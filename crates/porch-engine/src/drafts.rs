//! Drafts and proposed revisions in the metadata store: one JSON object per revision holding
//! its metadata and files, written with compare-and-swap on the store's resourceVersion.

use std::collections::BTreeMap;
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use porch_core::lifecycle::Lifecycle;
use porch_core::names::{PackagePath, RepositoryName, Revision, WorkspaceName};
use porch_core::repository::PackageFiles;
use porch_core::revision::{Locator, PackageRevisionKey, Task, Timestamp};
use porch_core::store::{
    ListQuery, MetadataStore, ObjectKey, Precondition, ResourceVersion, Write, WriteOp,
};
use serde::{Deserialize, Serialize};

use crate::error::{EngineError, Result};

/// Store resource holding engine drafts (internal; not served as is).
pub(crate) const DRAFT_RESOURCE: &str = "engine.porch.kpt.dev/drafts";

/// Everything about a stored draft except its files (what the index keeps).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DraftMeta {
    pub namespace: String,
    pub repository: RepositoryName,
    pub package: PackagePath,
    pub workspace: WorkspaceName,
    pub lifecycle: Lifecycle,
    #[serde(default)]
    pub tasks: Vec<Task>,
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
    #[serde(default)]
    pub upstream_lock: Option<Locator>,
    pub created: Timestamp,
    /// Stamped by the store at write time.
    #[serde(default)]
    pub resource_version: ResourceVersion,
}

impl DraftMeta {
    pub(crate) fn key(&self) -> PackageRevisionKey {
        PackageRevisionKey {
            repository: self.repository.clone(),
            package: self.package.clone(),
            workspace: self.workspace.clone(),
            revision: Revision::UNPUBLISHED,
        }
    }

    pub(crate) fn object_key(&self) -> ObjectKey {
        ObjectKey::new(
            DRAFT_RESOURCE,
            self.namespace.clone(),
            self.key().name().as_str(),
        )
    }
}

/// A draft with its files, as stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct StoredDraft {
    #[serde(flatten)]
    pub meta: DraftMeta,
    /// Path → base64 content (files may be binary).
    #[serde(default)]
    files: BTreeMap<String, String>,
}

impl StoredDraft {
    pub(crate) fn new(meta: DraftMeta, files: &PackageFiles) -> Self {
        let files = files
            .iter()
            .map(|(p, c)| (p.clone(), STANDARD.encode(c)))
            .collect();
        StoredDraft { meta, files }
    }

    pub(crate) fn files(&self) -> Result<PackageFiles> {
        self.files
            .iter()
            .map(|(p, c)| {
                STANDARD
                    .decode(c)
                    .map(|b| (p.clone(), b))
                    .map_err(|e| EngineError::Internal(format!("stored file {p}: {e}")))
            })
            .collect()
    }

    fn decode(data: &[u8]) -> Result<Self> {
        serde_json::from_slice(data)
            .map_err(|e| EngineError::Internal(format!("stored draft is corrupt: {e}")))
    }
}

/// Blocking store access, run off the async runtime.
#[derive(Clone)]
pub(crate) struct DraftStore {
    store: Arc<dyn MetadataStore>,
}

impl DraftStore {
    pub(crate) fn new(store: Arc<dyn MetadataStore>) -> Self {
        DraftStore { store }
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
    pub(crate) async fn list(
        &self,
        namespace: &str,
        repository: &RepositoryName,
    ) -> Result<Vec<DraftMeta>> {
        let (ns, repo) = (namespace.to_owned(), repository.clone());
        self.blocking(move |s| {
            let page = s.list(&ListQuery {
                resource: DRAFT_RESOURCE.into(),
                namespace: Some(ns),
                ..ListQuery::default()
            })?;
            let prefix = format!("{repo}.");
            let mut out = Vec::new();
            for obj in page.items {
                if !obj.key.name.starts_with(&prefix) {
                    continue;
                }
                let mut d = StoredDraft::decode(&obj.data)?;
                if d.meta.repository == repo {
                    d.meta.resource_version = obj.resource_version;
                    out.push(d.meta);
                }
            }
            Ok(out)
        })
        .await
    }

    /// One draft with its files.
    pub(crate) async fn get(&self, key: ObjectKey) -> Result<StoredDraft> {
        self.blocking(move |s| {
            let obj = s
                .get(&key)?
                .ok_or_else(|| EngineError::NotFound(key.name.clone()))?;
            let mut d = StoredDraft::decode(&obj.data)?;
            d.meta.resource_version = obj.resource_version;
            Ok(d)
        })
        .await
    }

    /// Writes `draft` if the stored version is `expected` (`None`: must not exist yet);
    /// returns its metadata with the new resourceVersion.
    pub(crate) async fn put(
        &self,
        draft: StoredDraft,
        expected: Option<ResourceVersion>,
    ) -> Result<DraftMeta> {
        let key = draft.meta.object_key();
        let mut meta = draft.meta.clone();
        let precondition = expected.map_or(Precondition::MustNotExist, |rv| {
            Precondition::ResourceVersion(rv)
        });
        let events = self
            .blocking(move |s| {
                let write = Write {
                    key,
                    precondition,
                    op: WriteOp::Put(Box::new(move |rv, _| {
                        let mut d = draft;
                        d.meta.resource_version = rv;
                        serde_json::to_vec(&d).expect("a draft always serializes to JSON")
                    })),
                };
                Ok(s.write(vec![write])?)
            })
            .await?;
        meta.resource_version = events
            .first()
            .map(|e| e.object.resource_version)
            .ok_or_else(|| EngineError::Internal("store wrote nothing".into()))?;
        Ok(meta)
    }

    /// Deletes the draft if it is still at `expected`.
    pub(crate) async fn delete(&self, key: ObjectKey, expected: ResourceVersion) -> Result<()> {
        self.blocking(move |s| {
            s.write(vec![Write {
                key,
                precondition: Precondition::ResourceVersion(expected),
                op: WriteOp::Delete(Box::new(|_, old| {
                    old.map(<[u8]>::to_vec).unwrap_or_default()
                })),
            }])?;
            Ok(())
        })
        .await
    }
}

/// The store key of the draft named `name` in `namespace`.
pub(crate) fn object_key(
    namespace: &str,
    name: &porch_core::names::PackageRevisionName,
) -> ObjectKey {
    ObjectKey::new(DRAFT_RESOURCE, namespace, name.as_str())
}
