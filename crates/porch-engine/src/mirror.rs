//! Mirroring stored drafts to Porch-layout git branches (`--push-drafts-to-git`, spec §13.2).
//!
//! The store is the source of truth. Right after every store write of a draft (in the same
//! job of the repository's queue) its branch is brought to the stored state: the files at
//! `drafts/<path>/<ws>` or `proposed/<path>/<ws>`, the other branch deleted in the same
//! push; the branch of a deleted draft is deleted. Each git write is a compare-and-swap
//! against the commit this server last wrote, which the draft's store record keeps with the
//! content version it holds ([`Mirror`]), so a draft whose branch lags is known after a
//! restart.
//!
//! A branch is this server's when it is at the recorded commit, or holds content this server
//! wrote or tried to write (a push whose answer was lost, or a crash between the push and the
//! record). Anything else was written by someone else: it is never overwritten; the draft
//! carries a `Conflict` condition instead. Any other failure leaves the request successful
//! (the store write is durable), is recorded, served as a condition and retried
//! (`reconcile.rs`).

use std::sync::Arc;

use porch_core::ErrorKind;
use porch_core::names::Revision;
use porch_core::repository::{DraftWrite, PackageFiles, PublishContent, Repository};
use porch_core::revision::{Author, PackageRevisionMeta, Task};
use porch_core::store::ObjectKey;
use tracing::Instrument;

use crate::drafts::{DRAFT_RESOURCE, DraftMeta, StoredDraft};
use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::index::RepoId;

/// What a mirror step did to the branch.
pub(crate) enum Done {
    /// Wrote (or found) the branch at this revision.
    Written(Box<PackageRevisionMeta>),
    /// The branch is gone.
    Deleted,
}

impl Engine {
    /// Is draft `d` mirrored? With the option on every draft is; without it only a draft that
    /// already has a branch (written while the option was on), so that branch never goes
    /// stale, and is removed with the draft.
    pub(crate) fn mirrored(&self, d: &DraftMeta) -> bool {
        self.inner.options.push_drafts_to_git
            || d.mirror
                .as_ref()
                .is_some_and(|m| m.commit.is_some() || !m.unconfirmed.is_empty())
    }

    /// Does the branch of mirrored draft `d` lag behind the store?
    pub(crate) fn mirror_behind(&self, d: &DraftMeta) -> bool {
        self.mirrored(d)
            && (d.deleted || d.mirror.as_ref().map_or(0, |m| m.version) != d.content_version)
    }

    /// After a store write of draft `name` (on the repository's queue): brings its branch
    /// up to date. A failure is recorded, logged and retried, never returned.
    pub(crate) async fn mirror_after_write(&self, id: &RepoId, name: &str) {
        let behind = self
            .with_index(id, |ix| {
                ix.drafts
                    .get(name)
                    .or_else(|| ix.tombstones.get(name))
                    .is_some_and(|d| self.mirror_behind(d))
            })
            .unwrap_or(false);
        if !behind {
            return;
        }
        let Ok((repo, _)) = self.handle(id) else {
            return;
        };
        // Already logged and recorded: the write that called us succeeded.
        let _ = self.mirror_draft(id, &repo, name).await;
    }

    /// Brings the branch of stored draft `name` to its stored state (or deletes it for a
    /// deleted draft). Runs on the repository's queue. `Ok` when the branch is up to date
    /// (or there is nothing to mirror); the error of a failed attempt otherwise, after it
    /// was recorded.
    pub(crate) async fn mirror_draft(
        &self,
        id: &RepoId,
        repo: &Arc<dyn Repository>,
        name: &str,
    ) -> Result<()> {
        let key = ObjectKey::new(DRAFT_RESOURCE, id.0.clone(), name);
        // One look at the remote per attempt at most: a branch that is not where we left it
        // is judged on fresh refs.
        let mut synced = false;
        loop {
            let stored = match self.inner.store.get_draft(key.clone()).await {
                Ok(s) => s,
                Err(EngineError::NotFound(_)) => return Ok(()),
                Err(e) => return Err(e),
            };
            let (entry, published) = self
                .with_index(id, |ix| {
                    (
                        ix.git.get(name).cloned(),
                        ix.published_in_git(name, &stored.meta),
                    )
                })
                .unwrap_or_default();
            if published {
                // The workspace is published: an approval pushed, and a crash came before the
                // draft's record was removed.
                tracing::warn!(
                    "the draft's workspace is published in git; removing its leftover record"
                );
                self.forget(id, &stored).await?;
                return Ok(());
            }
            if !self.mirror_behind(&stored.meta) {
                return Ok(());
            }
            let mirror = stored.meta.mirror.clone().unwrap_or_default();
            let branch = entry.filter(|e| e.key.revision == Revision::UNPUBLISHED);
            let at_commit = branch.as_ref().map(|b| b.commit.clone());
            if !synced && (at_commit != mirror.commit || !mirror.unconfirmed.is_empty()) {
                synced = true;
                if let Err(e) = self.sync_now(id, repo).await {
                    return Err(self.mirror_failed(id, stored, e, None).await);
                }
                continue;
            }
            let files = stored.files()?;
            let ours = fingerprint(&files);
            let expected = match &branch {
                None => None,
                Some(b) if mirror.commit.as_ref() == Some(&b.commit) => Some(b.commit.clone()),
                Some(b) => {
                    let theirs = match repo.read_files(b.key.clone()).await {
                        Ok(f) => fingerprint(&f),
                        Err(e) => {
                            let e = EngineError::repo(&id.1, e);
                            return Err(self.mirror_failed(id, stored, e, None).await);
                        }
                    };
                    if theirs != ours && !mirror.unconfirmed.contains(&theirs) {
                        return self.foreign_branch(id, stored, b).await;
                    }
                    tracing::info!(commit = %b.commit, "the branch holds content this server wrote; taking it as the last write");
                    Some(b.commit.clone())
                }
            };
            let result = if stored.meta.deleted {
                self.delete_branch(id, repo, &stored.meta, expected).await
            } else {
                if branch.is_none() && mirror.commit.is_some() {
                    tracing::info!("the draft's branch is gone from git; writing it again");
                }
                self.write_branch(id, repo, &stored, files, expected).await
            };
            match result {
                Ok(done) => return self.mirror_done(id, stored, done).await,
                Err(e) if e.kind() == ErrorKind::Conflict && !synced => {
                    synced = true;
                    if let Err(e) = self.sync_now(id, repo).await {
                        return Err(self.mirror_failed(id, stored, e, None).await);
                    }
                }
                Err(e) => return Err(self.mirror_failed(id, stored, e, Some(ours)).await),
            }
        }
    }

    /// What approving mirrored draft `name` publishes: its branch, brought up to date first.
    /// Porch's approval deletes that branch in the same push as the tag and branch update.
    pub(crate) async fn mirrored_publish_content(
        &self,
        id: &RepoId,
        repo: &Arc<dyn Repository>,
        name: &str,
    ) -> Result<(PublishContent, StoredDraft)> {
        self.mirror_draft(id, repo, name).await?;
        let stored = self
            .inner
            .store
            .get_draft(ObjectKey::new(DRAFT_RESOURCE, id.0.clone(), name))
            .await?;
        let commit = stored
            .meta
            .mirror
            .as_ref()
            .filter(|m| m.version == stored.meta.content_version)
            .and_then(|m| m.commit.clone())
            .ok_or_else(|| {
                EngineError::Internal(format!("the branch of draft {name} is not up to date"))
            })?;
        Ok((
            PublishContent::MirroredDraft {
                expected_commit: Some(commit),
            },
            stored,
        ))
    }

    async fn write_branch(
        &self,
        id: &RepoId,
        repo: &Arc<dyn Repository>,
        stored: &StoredDraft,
        files: PackageFiles,
        expected: Option<String>,
    ) -> Result<Done> {
        let d = &stored.meta;
        // Porch's commit message follows the task (spec §11.3): a draft's first commit
        // carries its creating task, which discovery reads back as `spec.tasks` (also on a
        // branch a deleted draft of the same name left); later writes are renders.
        let first = expected.is_none() || d.mirror.as_ref().is_none_or(|m| m.version == 0);
        let task = if first {
            d.tasks.first().cloned()
        } else {
            Some(Task {
                task_type: "render".into(),
                ..Task::default()
            })
        };
        let written = repo
            .write_draft(DraftWrite {
                package: d.package.clone(),
                workspace: d.workspace.clone(),
                lifecycle: d.lifecycle,
                files,
                task,
                author: Author::porch(),
                expected_commit: expected,
            })
            .instrument(tracing::debug_span!("write_draft"))
            .await
            .map_err(|e| EngineError::repo(&id.1, e))?;
        tracing::info!(commit = %written.commit, lifecycle = %d.lifecycle, "draft mirrored to git");
        Ok(Done::Written(Box::new(written)))
    }

    async fn delete_branch(
        &self,
        id: &RepoId,
        repo: &Arc<dyn Repository>,
        d: &DraftMeta,
        expected: Option<String>,
    ) -> Result<Done> {
        let Some(commit) = expected else {
            return Ok(Done::Deleted);
        };
        match repo.delete(d.key(), Some(commit)).await {
            Ok(()) => {
                tracing::info!("mirror branch of the deleted draft deleted");
                Ok(Done::Deleted)
            }
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(Done::Deleted),
            Err(e) => Err(EngineError::repo(&id.1, e)),
        }
    }
}

/// A stable digest of a package's files (paths and contents), to recognise content this
/// server wrote without keeping it.
pub(crate) fn fingerprint(files: &PackageFiles) -> String {
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
    for (path, content) in files {
        // Lengths first, so no two different file sets hash the same bytes.
        ctx.update(&(path.len() as u64).to_be_bytes());
        ctx.update(path.as_bytes());
        ctx.update(&(content.len() as u64).to_be_bytes());
        ctx.update(content);
    }
    ctx.finish()
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_tell_file_sets_apart() {
        let a: PackageFiles = [("Kptfile".to_owned(), b"ab".to_vec())].into();
        let b: PackageFiles = [("Kptfilea".to_owned(), b"b".to_vec())].into();
        assert_ne!(fingerprint(&a), fingerprint(&b));
        assert_eq!(fingerprint(&a), fingerprint(&a.clone()));
        assert_eq!(fingerprint(&a).len(), 64);
    }
}
