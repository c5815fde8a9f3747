//! Object metadata (labels, annotations) of stored drafts and proposed revisions.

use std::collections::BTreeMap;

use tracing::Instrument;

use crate::drafts::{StoredDraft, object_key};
use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::index::RepoId;
use crate::model::{LATEST_REVISION_LABEL, Origin, PackageRevision};
use crate::resources::{check_version, conflict_or};

impl Engine {
    /// Replaces `metadata.labels` and `metadata.annotations` of a Draft or Proposed revision.
    /// The computed latest-revision label is never stored. `resource_version` must be current.
    pub async fn update_metadata(
        &self,
        namespace: &str,
        name: &str,
        resource_version: &str,
        labels: BTreeMap<String, String>,
        annotations: BTreeMap<String, String>,
    ) -> Result<PackageRevision> {
        let id = Self::repo_of(namespace, name)?;
        let (_, queue) = self.handle(&id)?;
        let span = tracing::info_span!("update_metadata", revision = %name, namespace);
        let (this, name, rv) = (self.clone(), name.to_owned(), resource_version.to_owned());
        queue
            .run(
                async move {
                    this.update_metadata_now(&id, &name, &rv, labels, annotations)
                        .await
                }
                .instrument(span),
            )
            .await?
    }

    async fn update_metadata_now(
        &self,
        id: &RepoId,
        name: &str,
        resource_version: &str,
        mut labels: BTreeMap<String, String>,
        annotations: BTreeMap<String, String>,
    ) -> Result<PackageRevision> {
        let current = self.get(&id.0, name)?;
        if current.origin != Origin::Store {
            return Err(EngineError::Invalid(format!(
                "metadata of package revision {name} lives in git; storing labels and annotations of published revisions is not supported yet"
            )));
        }
        let expected = check_version(name, resource_version, &current.resource_version)?;
        let stored = self
            .inner
            .drafts
            .get(object_key(&id.0, &current.name()))
            .await?;
        let files = stored.files()?;
        let mut meta = stored.meta;
        labels.remove(LATEST_REVISION_LABEL);
        meta.labels = labels;
        meta.annotations = annotations;
        let meta = self
            .inner
            .drafts
            .put(StoredDraft::new(meta, &files), Some(expected))
            .await
            .map_err(|e| conflict_or(name, e))?;
        self.mutate(id, |ix| {
            ix.drafts.insert(name.to_owned(), meta);
        });
        self.get(&id.0, name)
    }
}
