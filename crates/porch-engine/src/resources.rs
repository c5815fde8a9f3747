//! Replacing a Draft's files (`packagerevisionresources` update, spec §10.2): render through
//! the Kptfile pipeline, save only on success unless push-on-render-failure is set, with
//! compare-and-swap on the resourceVersion.

use porch_core::lifecycle::Lifecycle;
use porch_core::repository::PackageFiles;
use porch_core::store::{ResourceVersion, StoreError};
use tracing::Instrument;

use crate::drafts::StoredDraft;
use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::heal::heal_comments;
use crate::index::RepoId;
use crate::model::{Origin, PUSH_ON_RENDER_FAILURE, ResourcesUpdate};
use crate::store::{Change, at};

impl Engine {
    /// Replaces the files of Draft `name` (files absent from `files` are deleted, except
    /// stored files that are not UTF-8: the wire's text map cannot carry them, so a client
    /// never saw them), renders, and saves. `resource_version` must be the current one, else
    /// `EngineError::Modified`. Returns what it saved: the revision and its files, so a
    /// caller answers without reading the package again.
    /// On render failure: `Err(EngineError::Render { pushed: false, .. })` and nothing saved,
    /// unless the revision has annotation `porch.kpt.dev/push-on-render-failure: "true"`:
    /// then the result is saved and returned with a non-empty `render_status.error`.
    pub async fn update_resources(
        &self,
        namespace: &str,
        name: &str,
        resource_version: &str,
        files: PackageFiles,
    ) -> Result<ResourcesUpdate> {
        let id = Self::repo_of(namespace, name)?;
        let (_, queue) = self.handle(&id)?;
        let guard = self.inner.in_flight.resources(namespace, name)?;
        let span = tracing::info_span!("update_resources", revision = %name, namespace);
        // Render first, outside the repository's queue: a long render holds only this
        // request. The write then checks that nothing moved meanwhile.
        let (stored_meta, expected, rendered) = self
            .render_resources(&id, name, resource_version, files)
            .instrument(span.clone())
            .await?;
        let (this, name, rv) = (self.clone(), name.to_owned(), resource_version.to_owned());
        queue
            .run(
                async move {
                    let _guard = guard;
                    let current = this.get(&id.0, &name)?;
                    check_rv(&name, &rv, &current.resource_version)?;
                    let failed = !rendered.status.error.is_empty();
                    let draft = StoredDraft::new(stored_meta, &rendered.files);
                    this.save_draft(&id, &name, draft, expected).await?;
                    tracing::info!(render_failed = failed, "draft resources saved");
                    Ok::<_, EngineError>(ResourcesUpdate {
                        revision: this.get(&id.0, &name)?,
                        render_status: rendered.status,
                        files: rendered.files,
                    })
                }
                .instrument(span),
            )
            .await?
    }

    /// The checks and the render of a resources update: the stored draft's metadata, the
    /// store version it was read at, and the render to save. A failed render is the error
    /// unless the revision asks for failed renders to be pushed.
    async fn render_resources(
        &self,
        id: &crate::index::RepoId,
        name: &str,
        resource_version: &str,
        files: PackageFiles,
    ) -> Result<(
        crate::drafts::DraftMeta,
        ResourceVersion,
        crate::render::Rendered,
    )> {
        let current = self.get(&id.0, name)?;
        check_modifiable(&current, "update the resources", resource_version)?;
        let stored = self.stored_draft_of(id, &current).await?;
        let expected = stored.meta.resource_version;
        let existing = stored.files()?;
        let mut files = files;
        for (path, bytes) in &existing {
            if std::str::from_utf8(bytes).is_err() && !files.contains_key(path) {
                files.insert(path.clone(), bytes.clone());
            }
        }
        let files = heal_comments(&existing, files);
        let rendered = self
            .render(id, files, current.key.package.package().to_owned())
            .await?;
        let failed = !rendered.status.error.is_empty();
        let push_anyway = current
            .annotations
            .get(PUSH_ON_RENDER_FAILURE)
            .is_some_and(|v| v == "true");
        if failed && !push_anyway {
            tracing::info!("render failed; nothing saved");
            return Err(rendered.into_error());
        }
        Ok((stored.meta, expected, rendered))
    }

    /// Writes stored draft `name` if its record is still at `expected`, puts it in the
    /// index and mirrors it to git when that is on.
    pub(crate) async fn save_draft(
        &self,
        id: &RepoId,
        name: &str,
        draft: StoredDraft,
        expected: ResourceVersion,
    ) -> Result<()> {
        let mut meta = draft.meta.clone();
        meta.written(
            self.inner
                .store
                .commit(vec![Change::PutDraft(Box::new(draft), at(Some(expected)))])
                .await
                .map_err(|e| conflict_or(name, e))?
                .first()
                .copied()
                .unwrap_or_default(),
        );
        let package = meta.package.clone();
        self.mutate_in(id, &package, |ix| {
            ix.drafts.insert(name.to_owned(), meta);
        });
        self.mirror_after_write(id, name).await;
        Ok(())
    }
}

/// `current` may be changed (by `what`, for the error): a Draft this server keeps, at the
/// resourceVersion the change was made against.
pub(crate) fn check_modifiable(
    current: &crate::model::PackageRevision,
    what: &str,
    resource_version: &str,
) -> Result<()> {
    let name = current.name();
    if current.lifecycle != Lifecycle::Draft {
        return Err(EngineError::Invalid(format!(
            "cannot {what} of package revision {name}: its lifecycle is {}; only Draft revisions can be modified",
            current.lifecycle
        )));
    }
    if current.origin != Origin::Store {
        return Err(EngineError::Invalid(format!(
            "package revision {name} is a draft branch in git written by another server; updating it is not supported yet"
        )));
    }
    check_rv(name.as_str(), resource_version, &current.resource_version)
}

/// Compares the resourceVersion an update carries with the current one.
pub(crate) fn check_rv(name: &str, given: &str, current: &str) -> Result<()> {
    if given.is_empty() {
        return Err(EngineError::Invalid(
            "resourceVersion must be specified for an update".into(),
        ));
    }
    if given != current {
        return Err(EngineError::modified(name));
    }
    Ok(())
}

/// A lost compare-and-swap in the store is Porch's "object has been modified" conflict.
pub(crate) fn conflict_or(name: &str, e: EngineError) -> EngineError {
    match e {
        EngineError::Store(StoreError::Conflict { .. } | StoreError::NotFound(_)) => {
            EngineError::modified(name)
        }
        other => other,
    }
}
