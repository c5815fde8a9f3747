//! Object metadata of a revision (labels, annotations, finalizers, ownerReferences,
//! deletionTimestamp) as one store record per object name (spec §2.4).
//!
//! It is keyed by the object name, not by where the content lives, so it survives every
//! lifecycle change: a draft and the revision it is published as share the name. Published
//! revisions and the -1 placeholder have records too, though their content is in git.

use std::collections::BTreeMap;

use porch_core::revision::Timestamp;
use porch_core::store::{ObjectKey, ResourceVersion};
use serde::{Deserialize, Serialize};

use crate::error::{EngineError, Result};
use crate::model::{LATEST_REVISION_LABEL, OwnerReference};

/// Store resource holding object metadata (internal; not served as is).
pub(crate) const META_RESOURCE: &str = "engine.porch.kpt.dev/objectmeta";

/// The stored metadata of one object.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ObjectMeta {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub finalizers: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub owner_references: Vec<OwnerReference>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_timestamp: Option<Timestamp>,
    /// The store's version of the record (0: not stored).
    #[serde(skip)]
    pub resource_version: ResourceVersion,
}

impl ObjectMeta {
    /// Metadata as users set it; the computed latest-revision label is never stored.
    pub(crate) fn new(
        mut labels: BTreeMap<String, String>,
        annotations: BTreeMap<String, String>,
        finalizers: Vec<String>,
        owner_references: Vec<OwnerReference>,
    ) -> Self {
        labels.remove(LATEST_REVISION_LABEL);
        ObjectMeta {
            labels,
            annotations,
            finalizers,
            owner_references,
            deletion_timestamp: None,
            resource_version: 0,
        }
    }

    /// Same user-visible content (ignores the store version).
    pub(crate) fn same_content(&self, other: &ObjectMeta) -> bool {
        self.labels == other.labels
            && self.annotations == other.annotations
            && self.finalizers == other.finalizers
            && self.owner_references == other.owner_references
            && self.deletion_timestamp == other.deletion_timestamp
    }

    pub(crate) fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("object metadata always serializes to JSON")
    }

    pub(crate) fn decode(data: &[u8], resource_version: ResourceVersion) -> Result<Self> {
        let mut m: ObjectMeta = serde_json::from_slice(data).map_err(|e| {
            EngineError::Internal(format!("stored object metadata is corrupt: {e}"))
        })?;
        m.resource_version = resource_version;
        Ok(m)
    }
}

/// The store key of the metadata of object `name` in `namespace`.
pub(crate) fn meta_key(namespace: &str, name: &str) -> ObjectKey {
    ObjectKey::new(META_RESOURCE, namespace, name)
}
