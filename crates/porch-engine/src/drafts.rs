//! Drafts and proposed revisions in the metadata store: one JSON object per revision holding
//! its identity, lifecycle, task and files. Object metadata (labels, finalizers, …) lives
//! in its own record (`objmeta.rs`) so it outlives the draft; store access is `store.rs`.

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use porch_core::lifecycle::Lifecycle;
use porch_core::names::{PackagePath, RepositoryName, Revision, WorkspaceName};
use porch_core::repository::PackageFiles;
use porch_core::revision::{Locator, PackageRevisionKey, Task, Timestamp};
use porch_core::store::{ObjectKey, ResourceVersion};
use serde::{Deserialize, Serialize};

use crate::error::{EngineError, Result};
use crate::kptinfo::KptInfo;

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
    pub upstream_lock: Option<Locator>,
    pub created: Timestamp,
    /// Stamped by the store at write time.
    #[serde(default)]
    pub resource_version: ResourceVersion,
    /// The served Kptfile fields, computed from the files whenever they are set or loaded
    /// (never stored: the files are the truth).
    #[serde(skip)]
    pub kpt: KptInfo,
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
    pub(crate) fn new(mut meta: DraftMeta, files: &PackageFiles) -> Self {
        meta.kpt = KptInfo::from_files(files);
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

    /// Decodes a stored draft and computes its served Kptfile fields.
    pub(crate) fn decode(data: &[u8], resource_version: ResourceVersion) -> Result<Self> {
        let mut d: StoredDraft = serde_json::from_slice(data)
            .map_err(|e| EngineError::Internal(format!("stored draft is corrupt: {e}")))?;
        d.meta.resource_version = resource_version;
        d.meta.kpt = KptInfo::from_files(&d.files()?);
        Ok(d)
    }

    pub(crate) fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a draft always serializes to JSON")
    }
}

/// The store key of the draft named `name` in `namespace`.
pub(crate) fn object_key(
    namespace: &str,
    name: &porch_core::names::PackageRevisionName,
) -> ObjectKey {
    ObjectKey::new(DRAFT_RESOURCE, namespace, name.as_str())
}
