//! Updating a revision's object metadata (labels, annotations, finalizers, ownerReferences)
//! on any lifecycle, and the Kptfile-backed spec fields of a Draft (spec §2.4, §8.3, §8.6).

use porch_core::lifecycle::Lifecycle;
use porch_core::repository::Repository;
use std::sync::Arc;
use tracing::Instrument;

use crate::drafts::StoredDraft;
use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::index::RepoId;
use crate::kptinfo::KptfileEdit;
use crate::model::{
    Condition, GIT_MIRROR_CONDITION, LATEST_REVISION_LABEL, MetadataUpdate, Origin, PackageRevision,
};
use crate::objmeta::ObjectMeta;
use crate::render::Prerendered;
use crate::resources::{check_rv, conflict_or};
use crate::store::{Change, at};

impl Engine {
    /// Replaces the object metadata of revision `name` (any lifecycle, the placeholder
    /// included). `resource_version` must be the current one.
    ///
    /// - The computed `kpt.dev/latest-revision` label is never stored; setting it to anything
    ///   but its computed value is `Invalid`.
    /// - `package_metadata`, `readiness_gates` and `conditions` (when `Some` and different)
    ///   rewrite the Kptfile of a Draft and re-render it (a render failure saves nothing);
    ///   on other lifecycles changing them is `Invalid`.
    /// - Emptying the finalizers of a terminating revision (one with a
    ///   `deletion_timestamp`) deletes it; its last state is returned.
    /// - A concurrent update/lifecycle change/delete of the same object is `Conflict`.
    pub async fn update_metadata(
        &self,
        namespace: &str,
        name: &str,
        resource_version: &str,
        update: MetadataUpdate,
    ) -> Result<PackageRevision> {
        let id = Self::repo_of(namespace, name)?;
        let (repo, queue) = self.handle(&id)?;
        let guard = self.inner.in_flight.revision(namespace, name)?;
        let span = tracing::info_span!("update_metadata", revision = %name, namespace);
        let pre = self
            .prerender_metadata(&id, name, &update)
            .instrument(span.clone())
            .await?;
        let (this, name, rv) = (self.clone(), name.to_owned(), resource_version.to_owned());
        queue
            .run(
                async move {
                    let _guard = guard;
                    this.update_metadata_now(&id, repo, &name, &rv, update, pre)
                        .await
                }
                .instrument(span),
            )
            .await?
    }

    /// The render a spec edit of a stored draft needs, done before the write queue is
    /// taken; `None` when the update does not edit the Kptfile of a stored draft.
    async fn prerender_metadata(
        &self,
        id: &RepoId,
        name: &str,
        update: &MetadataUpdate,
    ) -> Result<Option<Prerendered>> {
        let current = self.get(&id.0, name)?;
        let sent = sent_conditions(update);
        let edit = spec_edit(&current, update, &sent);
        if !edit.changes_something()
            || current.lifecycle != Lifecycle::Draft
            || current.origin != Origin::Store
        {
            return Ok(None);
        }
        let stored = self.stored_draft_of(id, &current).await?;
        let mut files = stored.files()?;
        edit.apply(&mut files)?;
        let pre = self
            .prerender(id, files, current.key.package.package().to_owned())
            .await?;
        pre.failure()?;
        Ok(Some(pre))
    }

    #[allow(
        clippy::too_many_arguments,
        reason = "internal step of update_metadata"
    )]
    async fn update_metadata_now(
        &self,
        id: &RepoId,
        repo: Arc<dyn Repository>,
        name: &str,
        resource_version: &str,
        update: MetadataUpdate,
        pre: Option<Prerendered>,
    ) -> Result<PackageRevision> {
        let current = self.get(&id.0, name)?;
        check_rv(name, resource_version, &current.resource_version)?;
        if let Some(v) = update.labels.get(LATEST_REVISION_LABEL)
            && current.labels.get(LATEST_REVISION_LABEL) != Some(v)
        {
            return Err(EngineError::Invalid(format!(
                "metadata.labels[{LATEST_REVISION_LABEL}]: label is managed by porch and cannot be set by users"
            )));
        }
        let old = self.object_meta(id, name);
        let mut meta = ObjectMeta::new(
            update.labels.clone(),
            update.annotations.clone(),
            update.finalizers.clone(),
            update.owner_references.clone(),
        );
        meta.deletion_timestamp = current.deletion_timestamp;

        let sent = sent_conditions(&update);
        let edit = spec_edit(&current, &update, &sent);
        let spec_changed = edit.changes_something();
        if spec_changed
            && (current.lifecycle != Lifecycle::Draft || current.origin != Origin::Store)
        {
            return Err(EngineError::Invalid(format!(
                "spec can only update package with lifecycle value one of Draft; package revision {name} is {}, so only its metadata may change",
                current.lifecycle
            )));
        }

        if meta.deletion_timestamp.is_some() && meta.finalizers.is_empty() {
            tracing::info!("last finalizer removed from a terminating revision");
            self.delete_really(id, &repo, &current).await?;
            let mut last = current;
            last.finalizers.clear();
            return Ok(last);
        }

        let meta_changed = !old.as_ref().map_or_else(
            || meta.same_content(&ObjectMeta::default()),
            |o| o.same_content(&meta),
        );
        if !meta_changed && !spec_changed {
            return Ok(current);
        }

        let mut changes = Vec::new();
        let mut draft = None;
        if spec_changed {
            let stored = self.stored_draft_of(id, &current).await?;
            let expected = stored.meta.resource_version;
            let mut files = stored.files()?;
            edit.apply(&mut files)?;
            // Rendered before the queue was taken (`prerender_metadata`).
            let rendered = pre
                .ok_or_else(|| EngineError::modified(name))?
                .take(name, &files)?;
            let new = StoredDraft::new(stored.meta, &rendered.files);
            draft = Some(new.meta.clone());
            changes.push(Change::PutDraft(Box::new(new), at(Some(expected))));
        }
        if meta_changed {
            changes.push(Change::PutMeta {
                namespace: id.0.clone(),
                name: name.to_owned(),
                meta: meta.clone(),
                precondition: at(old.as_ref().map(|o| o.resource_version)),
            });
        }
        let rvs = self
            .inner
            .store
            .commit(changes)
            .await
            .map_err(|e| conflict_or(name, e))?;
        let mut rvs = rvs.into_iter();
        if let Some(d) = draft.as_mut() {
            d.written(rvs.next().unwrap_or_default());
        }
        if meta_changed {
            meta.resource_version = rvs.next().unwrap_or_default();
        }
        tracing::info!(spec_changed, meta_changed, "metadata updated");
        self.mutate_in(id, &current.key.package, |ix| {
            if let Some(d) = draft {
                ix.drafts.insert(name.to_owned(), d);
            }
            if meta_changed {
                ix.meta.insert(name.to_owned(), meta);
            }
        });
        if spec_changed {
            self.mirror_after_write(id, name).await;
        }
        self.get(&id.0, name)
    }

    /// The stored object metadata of `name`, if any.
    pub(crate) fn object_meta(&self, id: &RepoId, name: &str) -> Option<ObjectMeta> {
        self.with_index(id, |ix| ix.meta.get(name).cloned())
            .flatten()
    }
}

/// The conditions a client sent, less the server's own mirror condition (ignored).
fn sent_conditions(update: &MetadataUpdate) -> Option<Vec<Condition>> {
    update.conditions.as_ref().map(|cs| {
        cs.iter()
            .filter(|c| c.condition_type != GIT_MIRROR_CONDITION)
            .cloned()
            .collect()
    })
}

/// The Kptfile edit an update asks for: the spec fields that differ from `current`.
fn spec_edit<'a>(
    current: &PackageRevision,
    update: &'a MetadataUpdate,
    sent: &'a Option<Vec<Condition>>,
) -> KptfileEdit<'a> {
    let package_metadata = update
        .package_metadata
        .as_ref()
        .filter(|p| **p != current.package_metadata);
    let readiness_gates = update
        .readiness_gates
        .as_deref()
        .filter(|g| *g != current.readiness_gates.as_slice());
    let conditions = sent
        .as_deref()
        .filter(|cs| cs.iter().any(|c| !current.conditions.contains(c)));
    KptfileEdit {
        package_metadata,
        readiness_gates,
        conditions,
        additive: false,
    }
}
