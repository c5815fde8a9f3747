//! Recording the outcome of a mirror step (`mirror.rs`) in the draft's store record and the
//! index: the branch commit and the content version it holds, or why it lags (served as the
//! `porch.kpt.dev/GitMirror` condition and retried unless someone else wrote the branch).

use porch_core::ErrorKind;
use porch_core::names::Revision;
use porch_core::revision::PackageRevisionMeta;

use crate::drafts::{Mirror, MirrorFailure, StoredDraft};
use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::index::RepoId;
use crate::mirror::Done;
use crate::store::{Change, at};

/// Fingerprints of unconfirmed pushes kept per draft; older ones are forgotten (a branch
/// holding one of them then counts as someone else's, which is safe).
const MAX_UNCONFIRMED: usize = 8;

impl Engine {
    /// Records a successful step: the branch commit and the content version it holds, or
    /// for a deleted draft the end of its record.
    pub(crate) async fn mirror_done(
        &self,
        id: &RepoId,
        mut stored: StoredDraft,
        done: Done,
    ) -> Result<()> {
        let name = stored.meta.key().name().as_str().to_owned();
        let written = match done {
            Done::Deleted => {
                self.delete_record(&stored).await?;
                self.mutate_in(id, &stored.meta.package, |ix| {
                    ix.tombstones.remove(&name);
                    if ix
                        .git
                        .get(&name)
                        .is_some_and(|m| m.key.revision == Revision::UNPUBLISHED)
                    {
                        ix.git.remove(&name);
                    }
                });
                return Ok(());
            }
            Done::Written(meta) => meta,
        };
        let old = stored.meta.mirror.take().unwrap_or_default();
        let failure_changed = old.failure.is_some();
        stored.meta.mirror = Some(Mirror {
            commit: Some(written.commit.clone()),
            version: stored.meta.content_version,
            unconfirmed: Vec::new(),
            failure: None,
            failure_version: old.failure_version,
        });
        self.record(id, stored, failure_changed, Some(*written))
            .await
    }

    /// Records a failed step (served as the condition; retried unless it is a conflict) and
    /// returns its error. `attempted` is the fingerprint of content whose push may have
    /// landed although it failed.
    pub(crate) async fn mirror_failed(
        &self,
        id: &RepoId,
        mut stored: StoredDraft,
        error: EngineError,
        attempted: Option<String>,
    ) -> EngineError {
        let kind = error.kind();
        let reason = match kind {
            ErrorKind::Conflict => "Conflict",
            ErrorKind::Unavailable => "Unavailable",
            _ => "Error",
        };
        if kind == ErrorKind::Conflict {
            tracing::warn!(
                reason,
                "the draft is stored, but its git branch is not written: {error}"
            );
        } else {
            tracing::warn!(
                reason,
                "the draft is stored; writing its git branch failed and is retried: {error}"
            );
        }
        let mut mirror = stored.meta.mirror.take().unwrap_or_default();
        // A rejected push changed nothing; any other failure may have come after the remote
        // applied it.
        if let Some(fp) = attempted
            && !matches!(
                kind,
                ErrorKind::Conflict | ErrorKind::Invalid | ErrorKind::NotFound
            )
            && !mirror.unconfirmed.contains(&fp)
        {
            mirror.unconfirmed.push(fp);
            if mirror.unconfirmed.len() > MAX_UNCONFIRMED {
                mirror.unconfirmed.remove(0);
            }
        }
        let failure = Some(MirrorFailure {
            reason: reason.to_owned(),
            message: format!("the draft is stored but not yet in git: {error}"),
        });
        let failure_changed = mirror.failure != failure;
        mirror.failure = failure;
        stored.meta.mirror = Some(mirror);
        if let Err(e) = self.record(id, stored, failure_changed, None).await {
            tracing::error!("recording the mirror failure failed: {e}");
        }
        if kind != ErrorKind::Conflict {
            self.schedule_mirror_retry(id);
        }
        error
    }

    /// A branch someone else wrote: a live draft gets a `Conflict` condition; a deleted
    /// draft lets go of it (it is listed as that writer's draft again).
    pub(crate) async fn foreign_branch(
        &self,
        id: &RepoId,
        stored: StoredDraft,
        branch: &PackageRevisionMeta,
    ) -> Result<()> {
        let git_ref = branch
            .self_lock
            .git
            .as_ref()
            .map_or("", |g| g.git_ref.as_str());
        if stored.meta.deleted {
            tracing::warn!(
                commit = %branch.commit,
                "the branch of the deleted draft was changed by someone else; leaving it in place"
            );
            return self.forget(id, &stored).await;
        }
        let error = EngineError::Conflict(format!(
            "branch {git_ref} was changed by someone else (it is at {}); it is not overwritten: delete the branch to let this server write it again, or delete this draft",
            branch.commit
        ));
        Err(self.mirror_failed(id, stored, error, None).await)
    }

    /// Removes a draft's record (not its object metadata, which belongs to the name).
    pub(crate) async fn forget(&self, id: &RepoId, stored: &StoredDraft) -> Result<()> {
        let name = stored.meta.key().name().as_str().to_owned();
        self.delete_record(stored).await?;
        self.mutate_in(id, &stored.meta.package, |ix| {
            ix.drafts.remove(&name);
            ix.tombstones.remove(&name);
        });
        Ok(())
    }

    /// Deletes the store record of `stored` if it is unchanged since it was read.
    async fn delete_record(&self, stored: &StoredDraft) -> Result<()> {
        self.inner
            .store
            .commit(vec![Change::DeleteDraft(
                stored.meta.object_key(),
                at(Some(stored.meta.resource_version)),
            )])
            .await?;
        Ok(())
    }

    /// Writes the mirror state of `stored` and puts it (and the branch's revision) in the
    /// index.
    async fn record(
        &self,
        id: &RepoId,
        stored: StoredDraft,
        failure_changed: bool,
        branch: Option<PackageRevisionMeta>,
    ) -> Result<()> {
        let name = stored.meta.key().name().as_str().to_owned();
        let mut meta = stored.meta.clone();
        let rv = self
            .inner
            .store
            .commit(vec![Change::RecordMirror {
                precondition: at(Some(stored.meta.resource_version)),
                draft: Box::new(stored),
                failure_changed,
            }])
            .await?
            .first()
            .copied()
            .unwrap_or_default();
        meta.resource_version = rv;
        if failure_changed && let Some(m) = meta.mirror.as_mut() {
            m.failure_version = rv;
        }
        let package = meta.package.clone();
        self.mutate_in(id, &package, |ix| {
            if meta.deleted {
                ix.tombstones.insert(name.clone(), meta);
            } else {
                ix.drafts.insert(name.clone(), meta);
            }
            // Shadowed by the stored draft; kept so the next write knows where the branch is.
            if let Some(b) = branch {
                ix.git.insert(name, b);
            }
        });
        Ok(())
    }
}
