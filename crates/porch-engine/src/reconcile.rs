//! Reconciling a repository's stored drafts with git: a pass over one repository's stored
//! drafts runs after each of its syncs (so at start-up too, after the registration's first
//! sync), after a change report from a sync loop, and on a backoff timer while a retryable
//! failure remains.
//!
//! A pass first removes the record of every draft whose workspace is published in git, in
//! every mode: an approval pushes its tag and then removes the record, so a crash between
//! the two leaves both, and the record would hide the published revision (and its latest
//! label) for good. Git is the truth for what is published. Then it catches up mirror
//! branches that lag behind the store (`mirror.rs`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use porch_core::repository::Repository;
use tracing::Instrument;

use crate::drafts::DraftMeta;
use crate::engine::Engine;
use crate::error::EngineError;
use crate::index::RepoId;

/// First retry after a failure; each further one waits twice as long, up to [`MAX_DELAY`].
const FIRST_DELAY: Duration = Duration::from_secs(1);
const MAX_DELAY: Duration = Duration::from_secs(60);

/// The retry timer of one repository's mirror work: at most one pending at a time.
#[derive(Debug, Default)]
pub(crate) struct MirrorRetry {
    scheduled: AtomicBool,
    /// Timers fired in a row without the repository's drafts getting in sync.
    attempts: AtomicU32,
}

impl MirrorRetry {
    fn delay(attempts: u32) -> Duration {
        FIRST_DELAY
            .saturating_mul(1u32 << attempts.min(16))
            .min(MAX_DELAY)
    }
}

impl Engine {
    /// Removes the records of drafts published in git, then brings every lagging mirror
    /// branch of the repository up to date (on its queue). Failures are recorded per draft
    /// and retried on the timer.
    pub(crate) async fn reconcile_mirrors_now(&self, id: &RepoId, repo: &Arc<dyn Repository>) {
        self.drop_published_drafts(id).await;
        let todo: Vec<String> = self
            .with_index(id, |ix| {
                ix.drafts
                    .iter()
                    .chain(&ix.tombstones)
                    .filter(|(name, d)| {
                        self.mirrored(d) && (self.mirror_behind(d) || ix.published_in_git(name, d))
                    })
                    .map(|(name, _)| name.clone())
                    .collect()
            })
            .unwrap_or_default();
        for name in todo {
            let span = tracing::info_span!("mirror", revision = %name, namespace = %id.0);
            // Recorded and logged by the step.
            let _ = self.mirror_draft(id, repo, &name).instrument(span).await;
        }
        let retryable = self
            .with_index(id, |ix| {
                ix.drafts.values().chain(ix.tombstones.values()).any(|d| {
                    self.mirror_behind(d)
                        && d.mirror
                            .as_ref()
                            .and_then(|m| m.failure.as_ref())
                            .is_some_and(|f| f.reason != "Conflict")
                })
            })
            .unwrap_or(false);
        match self.retry_of(id) {
            Some(retry) if !retryable => retry.attempts.store(0, Ordering::SeqCst),
            Some(_) => self.schedule_mirror_retry(id),
            None => {}
        }
    }

    /// Removes the store record of every draft of the repository whose workspace is
    /// published in git (on its queue); the published revision shows in its place. A failure
    /// is logged and retried by the next pass.
    pub(crate) async fn drop_published_drafts(&self, id: &RepoId) {
        let todo: Vec<DraftMeta> = self
            .with_index(id, |ix| {
                ix.drafts
                    .iter()
                    .filter(|(name, d)| ix.published_in_git(name, d))
                    .map(|(_, d)| d.clone())
                    .collect()
            })
            .unwrap_or_default();
        for d in todo {
            let span = tracing::info_span!("heal", revision = %d.key().name(), namespace = %id.0);
            self.drop_published_draft(id, d).instrument(span).await;
        }
    }

    async fn drop_published_draft(&self, id: &RepoId, d: DraftMeta) {
        let stored = match self.inner.store.get_draft(d.object_key()).await {
            Ok(stored) => stored,
            Err(EngineError::NotFound(_)) => {
                // Already gone from the store: only the index is behind.
                let name = d.key().name();
                self.mutate_in(id, &d.package, |ix| ix.drafts.remove(name.as_str()));
                return;
            }
            Err(e) => {
                tracing::warn!("reading a draft whose workspace is published failed: {e}");
                return;
            }
        };
        tracing::warn!(
            lifecycle = %stored.meta.lifecycle,
            "the draft's workspace is published in git (an approval was interrupted); removing its leftover record"
        );
        if let Err(e) = self.forget(id, &stored).await {
            tracing::warn!("removing the leftover draft record failed: {e}");
        }
    }

    /// Queues a reconcile pass on the repository's queue (from outside it) when any of its
    /// drafts is mirrored or published in git.
    pub(crate) fn spawn_mirror_reconcile(&self, id: RepoId) {
        let any = self
            .with_index(&id, |ix| {
                ix.drafts
                    .iter()
                    .chain(&ix.tombstones)
                    .any(|(name, d)| self.mirrored(d) || ix.published_in_git(name, d))
            })
            .unwrap_or(false);
        if !any {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let this = self.clone();
        runtime.spawn(async move { this.run_mirror_reconcile(id).await });
    }

    async fn run_mirror_reconcile(&self, id: RepoId) {
        let Ok((repo, queue)) = self.handle(&id) else {
            return;
        };
        let this = self.clone();
        let span = tracing::info_span!("mirror_reconcile", repository = %id.1, namespace = %id.0);
        let job = async move { this.reconcile_mirrors_now(&id, &repo).await };
        if let Err(e) = queue.run(job.instrument(span)).await {
            tracing::warn!("mirror reconcile did not run: {e}");
        }
    }

    /// Starts the repository's retry timer unless one is pending.
    pub(crate) fn schedule_mirror_retry(&self, id: &RepoId) {
        let Some(retry) = self.retry_of(id) else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        if retry.scheduled.swap(true, Ordering::SeqCst) {
            return;
        }
        let delay = MirrorRetry::delay(retry.attempts.fetch_add(1, Ordering::SeqCst));
        tracing::debug!(repository = %id.1, ?delay, "mirror retry scheduled");
        let (this, id) = (self.clone(), id.clone());
        runtime.spawn(async move {
            tokio::time::sleep(delay).await;
            retry.scheduled.store(false, Ordering::SeqCst);
            this.run_mirror_reconcile(id).await;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_back_off_up_to_a_minute() {
        assert_eq!(MirrorRetry::delay(0), Duration::from_secs(1));
        assert_eq!(MirrorRetry::delay(3), Duration::from_secs(8));
        assert_eq!(MirrorRetry::delay(40), MAX_DELAY);
    }
}
