//! Lifecycle transitions (spec §8.2–8.3) and deletion (§7.2, §8.4).
//!
//! Propose/reject rewrite the stored draft; approve publishes through the Repository port
//! (which assigns `max+1` atomically) inside the repository's serial queue, so concurrent
//! approvals of one package get consecutive numbers; propose-delete and its undo toggle the
//! `deletionProposed/…` branch.

use porch_core::ErrorKind;
use porch_core::lifecycle::{Endpoint, Lifecycle, Transition, transition};
use porch_core::names::Revision;
use porch_core::repository::{ListFilter, PublishContent, PublishRequest, Repository};
use porch_core::revision::Author;
use std::sync::Arc;
use tracing::Instrument;

use porch_core::store::Precondition;

use crate::drafts::{StoredDraft, object_key};
use crate::engine::{Engine, not_found};
use crate::error::{EngineError, Result};
use crate::failpoint;
use crate::index::RepoId;
use crate::model::{Origin, PackageRevision};
use crate::objmeta::meta_key;
use crate::render::Prerendered;
use crate::resources::conflict_or;
use crate::store::{Change, at};

/// Does every readiness gate have a condition with status `True`? Go Porch leaves this
/// check to porchctl (§8.7); this server enforces it at approval.
fn readiness_met(pr: &PackageRevision) -> bool {
    pr.readiness_gates.iter().all(|gate| {
        pr.conditions
            .iter()
            .any(|c| c.condition_type == *gate && c.status == "True")
    })
}

impl Engine {
    /// Moves revision `name` to lifecycle `to` through `endpoint` (main resource or approval).
    /// `resource_version`, when given, must be the current one. `by` is the approving user.
    pub async fn update_lifecycle(
        &self,
        namespace: &str,
        name: &str,
        resource_version: Option<&str>,
        to: Lifecycle,
        endpoint: Endpoint,
        by: Author,
    ) -> Result<PackageRevision> {
        let id = Self::repo_of(namespace, name)?;
        let (repo, queue) = self.handle(&id)?;
        let guard = self.inner.in_flight.revision(namespace, name)?;
        let span = tracing::info_span!("update_lifecycle", revision = %name, namespace, to = %to);
        // The repository's validators must pass on what is approved (they may have been
        // added after the revision was proposed); checked outside the queue.
        if to == Lifecycle::Published {
            self.check_guardrails(&id, name)
                .instrument(span.clone())
                .await?;
        }
        // Porch re-renders a draft before proposing it: done here, outside the queue.
        let pre = if to == Lifecycle::Proposed {
            self.prerender_proposal(&id, name)
                .instrument(span.clone())
                .await?
        } else {
            None
        };
        let (this, name, rv) = (
            self.clone(),
            name.to_owned(),
            resource_version.map(str::to_owned),
        );
        queue
            .run(
                async move {
                    let _guard = guard;
                    this.transition_now(&id, repo, &name, rv.as_deref(), to, endpoint, by, pre)
                        .await
                }
                .instrument(span),
            )
            .await?
    }

    /// Runs the repository's validators over stored revision `name`; their failure refuses
    /// the approval with the validator's message.
    async fn check_guardrails(&self, id: &RepoId, name: &str) -> Result<()> {
        let has_validators = self
            .with_index(id, |ix| !ix.guardrails.validators.is_empty())
            .unwrap_or(false);
        let current = self.get(&id.0, name)?;
        if !has_validators || current.origin != Origin::Store {
            return Ok(());
        }
        let stored = self.stored_draft_of(id, &current).await?;
        let checked = self
            .render_as(
                id,
                stored.files()?,
                current.key.package.package().to_owned(),
                crate::render::Guarded::ValidatorsOnly,
            )
            .await?;
        if checked.status.error.is_empty() {
            Ok(())
        } else {
            Err(checked.into_error())
        }
    }

    /// The render a proposal of stored draft `name` needs, or `None` when the revision is
    /// not a stored draft (the transition then decides). A failed render stops the proposal.
    async fn prerender_proposal(&self, id: &RepoId, name: &str) -> Result<Option<Prerendered>> {
        let current = self.get(&id.0, name)?;
        if current.lifecycle != Lifecycle::Draft || current.origin != Origin::Store {
            return Ok(None);
        }
        let stored = self.stored_draft_of(id, &current).await?;
        let pre = self
            .prerender(
                id,
                stored.files()?,
                current.key.package.package().to_owned(),
            )
            .await?;
        pre.failure()?;
        Ok(Some(pre))
    }

    #[allow(
        clippy::too_many_arguments,
        reason = "internal step of update_lifecycle"
    )]
    async fn transition_now(
        &self,
        id: &RepoId,
        repo: Arc<dyn Repository>,
        name: &str,
        resource_version: Option<&str>,
        to: Lifecycle,
        endpoint: Endpoint,
        by: Author,
        pre: Option<Prerendered>,
    ) -> Result<PackageRevision> {
        let current = self.get(&id.0, name)?;
        if let Some(rv) = resource_version
            && rv != current.resource_version
        {
            return Err(EngineError::modified(name));
        }
        let step = transition(current.lifecycle, to, endpoint)?;
        match (step, current.origin) {
            (Transition::Unchanged, _) => Ok(current),
            (Transition::Propose | Transition::Reject, Origin::Store) => {
                let key = object_key(&id.0, &current.name());
                let mut stored = self.inner.store.get_draft(key).await?;
                let expected = stored.meta.resource_version;
                let mut files = stored.files()?;
                if step == Transition::Propose {
                    // Rendered before the queue was taken (`prerender_proposal`); the draft
                    // changing since is a conflict.
                    let pre = pre.ok_or_else(|| EngineError::modified(name))?;
                    files = pre.take(name, &files)?.files;
                }
                stored.meta.lifecycle = to;
                let draft = StoredDraft::new(stored.meta, &files);
                self.save_draft(id, name, draft, expected).await?;
                tracing::info!("lifecycle changed");
                self.get(&id.0, name)
            }
            (Transition::Approve, origin) => {
                if !readiness_met(&current) {
                    return Err(EngineError::Invalid("readiness conditions not met".into()));
                }
                self.approve(id, repo, &current, origin, by).await
            }
            (Transition::ProposeDelete | Transition::UndoProposeDelete, Origin::Git) => {
                let proposed = step == Transition::ProposeDelete;
                let meta = repo
                    .set_deletion_proposed(current.key.clone(), proposed)
                    .await
                    .map_err(|e| EngineError::repo(&id.1, e))?;
                tracing::info!(proposed, "deletion proposal changed");
                self.announce_git_write(id).await;
                let kpt = self
                    .load_kpt(id, repo.as_ref(), std::slice::from_ref(&meta))
                    .await;
                self.mutate_in(id, &current.key.package, |ix| {
                    ix.git.insert(name.to_owned(), meta);
                    ix.add_kpt(kpt);
                });
                self.get(&id.0, name)
            }
            (_, Origin::Git) => Err(EngineError::Invalid(format!(
                "package revision {name} is a draft branch in git written by another server; changing its lifecycle is not supported yet"
            ))),
            (_, Origin::Store) => Err(EngineError::Internal(format!(
                "stored draft {name} in lifecycle {} cannot take transition {step:?}",
                current.lifecycle
            ))),
        }
    }

    async fn approve(
        &self,
        id: &RepoId,
        repo: Arc<dyn Repository>,
        current: &PackageRevision,
        origin: Origin,
        by: Author,
    ) -> Result<PackageRevision> {
        let name = current.name();
        let known_published = self
            .with_index(id, |ix| {
                ix.drafts
                    .get(name.as_str())
                    .is_some_and(|d| ix.published_in_git(name.as_str(), d))
            })
            .unwrap_or(false);
        if origin == Origin::Store && known_published {
            // An earlier approval pushed its tag and was cut short: finish it.
            self.drop_published_drafts(id).await;
            return self.get(&id.0, name.as_str());
        }
        let (content, stored) = match origin {
            Origin::Store => {
                let stored = self.inner.store.get_draft(object_key(&id.0, &name)).await?;
                if self.mirrored(&stored.meta) {
                    let (content, stored) = self
                        .mirrored_publish_content(id, &repo, name.as_str())
                        .await?;
                    (content, Some(stored))
                } else {
                    let content = PublishContent::Files {
                        files: stored.files()?,
                        task: stored.meta.tasks.first().cloned(),
                    };
                    (content, Some(stored))
                }
            }
            Origin::Git => (
                PublishContent::MirroredDraft {
                    expected_commit: self
                        .with_index(id, |ix| ix.git.get(name.as_str()).map(|m| m.commit.clone()))
                        .flatten(),
                },
                None,
            ),
        };
        let published = match repo
            .publish(PublishRequest {
                package: current.key.package.clone(),
                workspace: current.key.workspace.clone(),
                content,
                published_by: by,
            })
            .await
        {
            Ok(published) => published,
            Err(e) => {
                let e = EngineError::repo(&id.1, e);
                if e.kind() == ErrorKind::Conflict
                    && let Some(stored) = &stored
                    && let Some(pr) = self.adopt_published(id, &repo, current, stored).await
                {
                    return Ok(pr);
                }
                return Err(e);
            }
        };
        tracing::info!(revision = %published.key.revision, "published");
        failpoint::hit(failpoint::APPROVE_AFTER_PUSH);
        if stored.is_none() {
            // No draft record goes with this publish: the other replicas learn of it so.
            self.announce_git_write(id).await;
        }
        if stored.is_some() {
            // The published revision takes the draft's place in the index before the draft's
            // record goes: a reader in between (a controller reading the files) finds the one
            // or the other, never an entry whose record is gone ("<name> not found").
            let kpt = self
                .load_kpt(id, repo.as_ref(), std::slice::from_ref(&published))
                .await;
            let entry = published.clone();
            self.mutate_in(id, &current.key.package, |ix| {
                ix.drafts.remove(name.as_str());
                ix.git.insert(entry.key.name().as_str().to_owned(), entry);
                ix.add_kpt(kpt);
            });
        }
        if let Some(stored) = stored
            && let Err(e) = self
                .inner
                .store
                .commit(vec![Change::DeleteDraft(
                    stored.meta.object_key(),
                    at(Some(stored.meta.resource_version)),
                )])
                .await
        {
            // The revision is published; a leftover draft record would shadow it after a
            // restart, so say so loudly.
            tracing::error!("published, but removing the stored draft failed: {e}");
        }
        failpoint::hit(failpoint::APPROVE_AFTER_COMMIT);
        self.refresh_package(id, &repo, current, Some(published))
            .await;
        self.get(&id.0, name.as_str())
    }

    /// After a publish refused as a conflict: when the draft's workspace is in fact
    /// published (an earlier approval pushed its tag and was cut short before removing the
    /// record, and no sync has healed it yet), finishes that approval: the record goes and
    /// the published revision is returned, so a retried approval succeeds. `None` when the
    /// workspace is not published (a real conflict).
    async fn adopt_published(
        &self,
        id: &RepoId,
        repo: &Arc<dyn Repository>,
        current: &PackageRevision,
        stored: &StoredDraft,
    ) -> Option<PackageRevision> {
        let filter = ListFilter {
            package: Some(current.key.package.clone()),
            workspace: Some(current.key.workspace.clone()),
            ..crate::engine::FULL
        };
        let published = repo.list(filter).await.ok()?.into_iter().find(|m| {
            m.key.workspace == current.key.workspace
                && m.key.revision.is_published_number()
                && m.lifecycle.is_published()
        })?;
        tracing::warn!(
            revision = %published.key.revision,
            "the workspace is already published (an earlier approval was interrupted); removing the leftover draft record"
        );
        if let Err(e) = self.forget(id, stored).await {
            tracing::error!("removing the leftover draft record failed: {e}");
            return None;
        }
        self.refresh_package(id, repo, current, Some(published))
            .await;
        self.get(&id.0, current.name().as_str()).ok()
    }

    /// Re-reads one package's git revisions (the placeholder moves on publish and delete).
    async fn refresh_package(
        &self,
        id: &RepoId,
        repo: &Arc<dyn Repository>,
        current: &PackageRevision,
        published: Option<porch_core::revision::PackageRevisionMeta>,
    ) {
        let filter = ListFilter {
            package: Some(current.key.package.clone()),
            ..crate::engine::FULL
        };
        let listed = repo.list(filter).await;
        let name = current.name();
        let deleted = published.is_none();
        let kpt = match &listed {
            Ok(metas) => self.load_kpt(id, repo.as_ref(), metas).await,
            Err(_) => Vec::new(),
        };
        self.mutate_in(id, &current.key.package, |ix| {
            if current.origin == Origin::Store {
                ix.drafts.remove(name.as_str());
            }
            if deleted {
                ix.meta.remove(name.as_str());
            }
            match listed {
                Ok(metas) => ix.replace_package(&current.key.package, metas),
                Err(e) => {
                    tracing::warn!("listing after a write failed: {e}");
                    if current.origin == Origin::Git {
                        ix.git.remove(name.as_str());
                    }
                }
            }
            // The listing normally has it already (with its task history).
            if let Some(m) = published {
                ix.git.entry(m.key.name().as_str().to_owned()).or_insert(m);
            }
            ix.add_kpt(kpt);
        });
    }

    /// Deletes revision `name` (spec §7.2, §8.4); returns its last state. A revision with
    /// finalizers is not deleted: it gets a `deletion_timestamp` (returned, with the
    /// finalizers, and reported MODIFIED) and goes when an update empties its finalizers.
    pub async fn delete(
        &self,
        namespace: &str,
        name: &str,
        resource_version: Option<&str>,
    ) -> Result<PackageRevision> {
        let id = Self::repo_of(namespace, name)?;
        let (repo, queue) = self.handle(&id)?;
        let guard = self.inner.in_flight.revision(namespace, name)?;
        let span = tracing::info_span!("delete", revision = %name, namespace);
        let (this, name, rv) = (
            self.clone(),
            name.to_owned(),
            resource_version.map(str::to_owned),
        );
        queue
            .run(
                async move {
                    let _guard = guard;
                    this.delete_now(&id, repo, &name, rv.as_deref()).await
                }
                .instrument(span),
            )
            .await?
    }

    async fn delete_now(
        &self,
        id: &RepoId,
        repo: Arc<dyn Repository>,
        name: &str,
        resource_version: Option<&str>,
    ) -> Result<PackageRevision> {
        let current = self.get(&id.0, name)?;
        if let Some(rv) = resource_version
            && rv != current.resource_version
        {
            return Err(EngineError::modified(name));
        }
        self.refuse_delete(&id.0, &current)?;
        if !current.finalizers.is_empty() {
            return self.mark_terminating(id, current).await;
        }
        self.delete_really(id, &repo, &current).await?;
        Ok(current)
    }

    /// A delete of a revision with finalizers only sets its deletionTimestamp (spec §8.6);
    /// the update that removes the last finalizer deletes it.
    async fn mark_terminating(
        &self,
        id: &RepoId,
        current: PackageRevision,
    ) -> Result<PackageRevision> {
        if current.deletion_timestamp.is_some() {
            return Ok(current);
        }
        let name = current.name();
        let old = self.object_meta(id, name.as_str()).ok_or_else(|| {
            EngineError::Internal(format!("finalizers of {name} are not in the index"))
        })?;
        let mut meta = old.clone();
        meta.deletion_timestamp = Some(crate::create::now());
        meta.resource_version = self
            .inner
            .store
            .commit(vec![Change::PutMeta {
                namespace: id.0.clone(),
                name: name.as_str().to_owned(),
                meta: meta.clone(),
                precondition: at(Some(old.resource_version)),
            }])
            .await
            .map_err(|e| conflict_or(name.as_str(), e))?
            .first()
            .copied()
            .unwrap_or_default();
        tracing::info!(finalizers = ?meta.finalizers, "deletion waits for finalizers");
        self.mutate_in(id, &current.key.package, |ix| {
            ix.meta.insert(name.as_str().to_owned(), meta);
        });
        self.get(&id.0, name.as_str())
    }

    /// Removes the revision and its object metadata.
    pub(crate) async fn delete_really(
        &self,
        id: &RepoId,
        repo: &Arc<dyn Repository>,
        current: &PackageRevision,
    ) -> Result<()> {
        let name = current.name();
        let name = name.as_str();
        let meta_rv = self.object_meta(id, name).map(|m| m.resource_version);
        match current.origin {
            Origin::Store => {
                let draft = self
                    .with_index(id, |ix| ix.drafts.get(name).cloned())
                    .flatten()
                    .ok_or_else(|| not_found(name))?;
                let key = object_key(&id.0, &current.name());
                // A mirrored draft's record stays, marked deleted, until its branch is
                // deleted too: it keeps the branch from being listed as a git draft.
                let mut tombstone = None;
                let first = if self.mirrored(&draft) {
                    let mut stored = self.inner.store.get_draft(key).await?;
                    stored.meta.deleted = true;
                    tombstone = Some(stored.meta.clone());
                    Change::PutDraft(Box::new(stored), at(Some(draft.resource_version)))
                } else {
                    Change::DeleteDraft(key, at(Some(draft.resource_version)))
                };
                let mut changes = vec![first];
                if let Some(rv) = meta_rv {
                    changes.push(Change::DeleteMeta(meta_key(&id.0, name), at(Some(rv))));
                }
                let rvs = self
                    .inner
                    .store
                    .commit(changes)
                    .await
                    .map_err(|e| conflict_or(name, e))?;
                let mirrored = tombstone.is_some();
                self.mutate_in(id, &current.key.package, |ix| {
                    ix.drafts.remove(name);
                    ix.meta.remove(name);
                    if let Some(mut t) = tombstone {
                        t.written(rvs.first().copied().unwrap_or_default());
                        ix.tombstones.insert(name.to_owned(), t);
                    }
                });
                if mirrored {
                    self.mirror_after_write(id, name).await;
                }
            }
            Origin::Git => {
                let commit = self
                    .with_index(id, |ix| ix.git.get(name).map(|m| m.commit.clone()))
                    .flatten()
                    .ok_or_else(|| not_found(name))?;
                repo.delete(current.key.clone(), Some(commit))
                    .await
                    .map_err(|e| EngineError::repo(&id.1, e))?;
                self.announce_git_write(id).await;
                if meta_rv.is_some()
                    && let Err(e) = self
                        .inner
                        .store
                        .commit(vec![Change::DeleteMeta(
                            meta_key(&id.0, name),
                            Precondition::None,
                        )])
                        .await
                {
                    // The revision is gone; a leftover record only matters if the name
                    // comes back, and create overwrites it then.
                    tracing::warn!("deleted, but removing the object metadata failed: {e}");
                }
                self.refresh_package(id, repo, current, None).await;
            }
        }
        tracing::info!("deleted");
        Ok(())
    }

    /// What [`Engine::update_lifecycle`] would refuse for moving `current` to `to` through
    /// `endpoint`, checked without writing anything (for a dry run).
    pub fn check_lifecycle(
        current: &PackageRevision,
        to: Lifecycle,
        endpoint: Endpoint,
    ) -> Result<Transition> {
        let step = transition(current.lifecycle, to, endpoint)?;
        if step == Transition::Approve && !readiness_met(current) {
            return Err(EngineError::Invalid("readiness conditions not met".into()));
        }
        Ok(step)
    }

    /// What [`Engine::delete`] would refuse for revision `name`, checked without deleting
    /// anything (a dry-run delete answers the same as the real one).
    pub fn check_delete(&self, namespace: &str, name: &str) -> Result<()> {
        let current = self.get(namespace, name)?;
        self.refuse_delete(namespace, &current)
    }

    fn refuse_delete(&self, namespace: &str, current: &PackageRevision) -> Result<()> {
        let name = current.name();
        if current.lifecycle == Lifecycle::Published {
            return Err(EngineError::Forbidden(format!(
                "packagerevisions.porch.kpt.dev \"{name}\" is forbidden: published PackageRevisions must be proposed for deletion by setting spec.lifecycle to 'DeletionProposed' prior to deletion"
            )));
        }
        if let Some(downstream) = self.referenced_by(namespace, name.as_str()) {
            return Err(EngineError::Forbidden(format!(
                "cannot delete package revision, it is referenced as upstream by: {downstream}"
            )));
        }
        Ok(())
    }

    /// A revision of the namespace (not a placeholder) whose clone/upgrade task names `name`.
    fn referenced_by(&self, namespace: &str, name: &str) -> Option<String> {
        self.all_in_namespace(namespace)
            .into_iter()
            .filter(|pr| pr.key.revision != Revision::PLACEHOLDER)
            .find(|pr| {
                pr.tasks.iter().any(|t| {
                    t.clone
                        .as_ref()
                        .and_then(|c| c.upstream.upstream_ref.as_ref())
                        .is_some_and(|r| r.name == name)
                        || t.upgrade
                            .as_ref()
                            .is_some_and(|u| u.new_upstream.name == name)
                })
            })
            .map(|pr| pr.name().as_str().to_owned())
    }
}
