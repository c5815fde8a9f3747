//! Drafts and proposed revisions in the metadata store: one JSON object per revision holding
//! its identity, lifecycle, task and files. Object metadata (labels, finalizers, …) lives
//! in its own record (`objmeta.rs`) so it outlives the draft; store access is `store.rs`.
//!
//! With draft mirroring (`mirror.rs`) the record also says which commit of its
//! `drafts/…`/`proposed/…` branch holds which version of it ([`Mirror`]), and a deleted
//! draft whose branch is not deleted yet stays as a tombstone (`deleted`).

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
    /// Store version of the last write of the files or the lifecycle: what a mirror branch
    /// must hold. Bookkeeping writes of the mirror state leave it (and the resourceVersion
    /// clients see) alone. Records from before it existed read it as `resource_version`.
    #[serde(default)]
    pub content_version: ResourceVersion,
    /// The git branch mirroring this draft (`None`: never mirrored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mirror: Option<Mirror>,
    /// The draft was deleted; the record remains until its mirror branch is deleted too.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deleted: bool,
    /// The served Kptfile fields, computed from the files whenever they are set or loaded
    /// (never stored: the files are the truth).
    #[serde(skip)]
    pub kpt: KptInfo,
}

/// How a stored draft is mirrored to its `drafts/…`/`proposed/…` branch.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Mirror {
    /// Head of the branch as this server last wrote it (`None`: no branch yet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The draft's `content_version` that `commit` holds (0: none).
    #[serde(default)]
    pub version: ResourceVersion,
    /// Fingerprints of contents whose push failed without an answer since `commit`: such a
    /// push may have landed, so a branch holding one of them is ours, not someone else's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unconfirmed: Vec<String>,
    /// Why the branch is behind, when the last attempt failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<MirrorFailure>,
    /// Store version of the last change of `failure`: it is served as a condition, so its
    /// changes move the resourceVersion clients see.
    #[serde(default)]
    pub failure_version: ResourceVersion,
}

/// A failed mirror write, as served in the `porch.kpt.dev/GitMirror` condition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct MirrorFailure {
    /// `Conflict` (the branch was written by someone else) or `Unavailable`/`Error`
    /// (retried).
    pub reason: String,
    pub message: String,
}

impl DraftMeta {
    /// Records a write of the files or lifecycle committed at store version `rv`.
    pub(crate) fn written(&mut self, rv: ResourceVersion) {
        self.resource_version = rv;
        self.content_version = rv;
    }

    /// The resourceVersion part of the view this record contributes: content writes and
    /// changes of the served mirror condition, not mirror bookkeeping.
    pub(crate) fn view_version(&self) -> ResourceVersion {
        self.content_version
            .max(self.mirror.as_ref().map_or(0, |m| m.failure_version))
    }

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
        if d.meta.content_version == 0 {
            d.meta.content_version = resource_version;
        }
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
