//! Several engines (porch-server replicas) on one shared store.
//!
//! Each replica keeps its own in-memory index and its own git mirror. Two things keep them
//! coherent once a [`RepositoryLeases`] port is set (`Engine::set_cluster`):
//! * every job on a repository's queue (writes, syncs) first takes the repository's
//!   cluster-wide lease, then reloads the repository's drafts and object metadata from the
//!   store and fetches git, so checks-then-writes (next revision number, resourceVersion,
//!   uniqueness) see what other replicas committed and cannot interleave with theirs;
//! * [`Engine::refresh_record`] runs such a (no-op) job when the shared event log shows a
//!   change to one of the engine's records, so reads and watches on every replica follow
//!   writes made through the others.
//!
//! Without the port (one server on the embedded store) nothing changes: the index is fed by
//! the engine's own writes only, as before.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use porch_core::store::ObjectKey;

use crate::drafts::DRAFT_RESOURCE;
use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::index::RepoId;
use crate::objmeta::META_RESOURCE;
use crate::store::{Change, GIT_WRITES_RESOURCE};

/// A held lease; dropping it releases the lease.
pub type LeaseGuard = Box<dyn Send + Sync>;

/// The future of [`RepositoryLeases::acquire`].
pub type LeaseFuture = Pin<Box<dyn Future<Output = Result<LeaseGuard>> + Send>>;

/// Cluster-wide mutual exclusion per repository (e.g. PostgreSQL advisory locks). A lease must
/// be released when its holder dies.
pub trait RepositoryLeases: Send + Sync {
    /// Waits for the lease of repository `name` in `namespace`.
    fn acquire(&self, namespace: &str, name: &str) -> LeaseFuture;

    /// Waits for the lease in shared mode, for jobs that only read the repository (refreshes):
    /// shared holders exclude exclusive ones, not each other. The default takes it exclusively.
    fn acquire_shared(&self, namespace: &str, name: &str) -> LeaseFuture {
        self.acquire(namespace, name)
    }

    /// Whether this replica has already applied every change committed in the cluster
    /// (answered without waiting). Asked under a lease: when true, the previous holders'
    /// writes are in this replica's index and git mirror, and the job skips its catch-up
    /// (a git fetch and a reload from the store). The default never skips.
    fn up_to_date(&self) -> Pin<Box<dyn Future<Output = bool> + Send>> {
        Box::pin(async { false })
    }
}

/// Waits until this replica has applied every write committed in the cluster so far (the
/// server's read barrier).
pub type Barrier = Arc<dyn Fn() -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

/// What a queue runs before each job: take the lease, then catch up with the cluster as far
/// as the job asks.
pub(crate) type Gate = Arc<dyn Fn(CatchUp) -> LeaseFuture + Send + Sync>;

/// How much of a repository a job reloads under its lease before it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CatchUp {
    /// Everything, unless this replica has already applied the whole event log (a write
    /// job: it must see what the previous lease holders did).
    Auto,
    /// The drafts and object metadata from the store, without a git fetch (a refresh for
    /// records another replica wrote with no git change: draft edits, metadata).
    Records,
    /// A git fetch, then the records (a refresh for a change that moved git refs: a
    /// publish, a deletion, an announced git write).
    Everything,
}

impl Engine {
    /// Joins a cluster of engines sharing this engine's store: repository jobs are serialized
    /// across the cluster by `leases`. Call before registering repositories.
    pub fn set_cluster(&self, leases: Arc<dyn RepositoryLeases>) {
        *self
            .inner
            .cluster
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(leases);
    }

    /// Sets the read barrier in-process readers (the controllers) pass before deciding from
    /// the index, as requests do before they are served.
    pub fn set_read_barrier(&self, barrier: Barrier) {
        *self
            .inner
            .barrier
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(barrier);
    }

    /// Waits at the read barrier (at once without a cluster): what was committed through
    /// other replicas before now is in the index afterwards.
    pub async fn caught_up(&self) {
        let barrier = self
            .inner
            .barrier
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        if let Some(b) = barrier {
            b().await;
        }
    }

    /// Whether [`Engine::set_cluster`] was called.
    pub fn is_clustered(&self) -> bool {
        self.cluster().is_some()
    }

    fn cluster(&self) -> Option<Arc<dyn RepositoryLeases>> {
        self.inner
            .cluster
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The gate of the queue of repository `id`, when clustered.
    pub(crate) fn gate(&self, id: &RepoId) -> Option<Gate> {
        let leases = self.cluster()?;
        let weak = Arc::downgrade(&self.inner);
        let id = id.clone();
        Some(Arc::new(move |level: CatchUp| {
            let (leases, weak, id) = (leases.clone(), weak.clone(), id.clone());
            Box::pin(async move {
                let started = std::time::Instant::now();
                // Refreshes only read (a fetch into this replica's mirror, the records into
                // its index): the other replicas may refresh at the same time.
                let guard = match level {
                    CatchUp::Auto => leases.acquire(&id.0, id.1.as_str()).await?,
                    CatchUp::Records | CatchUp::Everything => {
                        leases.acquire_shared(&id.0, id.1.as_str()).await?
                    }
                };
                let leased = started.elapsed();
                if let Some(inner) = weak.upgrade() {
                    let engine = Engine { inner };
                    // A repository whose last refresh failed is caught up in full whatever
                    // the log says: the events were applied, the refresh was not.
                    let level = if engine.take_stale(&id) {
                        CatchUp::Everything
                    } else {
                        level
                    };
                    let fetch = match level {
                        CatchUp::Everything => Some(true),
                        // Mirrored drafts move their git branches with every record.
                        CatchUp::Records => Some(engine.inner.options.push_drafts_to_git),
                        CatchUp::Auto if leases.up_to_date().await => None,
                        CatchUp::Auto => Some(true),
                    };
                    if let Some(fetch) = fetch
                        && let Err(e) = engine.catch_up_now(&id, fetch).await
                    {
                        engine.mark_stale(&id);
                        return Err(e);
                    }
                    tracing::debug!(
                        repository = %id.1,
                        ?level,
                        ?fetch,
                        lease_us = leased.as_micros() as u64,
                        total_us = started.elapsed().as_micros() as u64,
                        "cluster gate passed"
                    );
                }
                Ok(guard)
            })
        }))
    }

    /// Fetches git (when `fetch`), then reloads the drafts and object metadata of `id` from
    /// the store; for jobs on the repository's queue. A git failure is recorded (as by any
    /// sync) but does not stop the job: drafts need no remote.
    ///
    /// Git before the index changes: a revision approved through another replica is then
    /// seen published (the tag) as its draft goes, so the index never passes through a state
    /// without either (a watcher sees it MODIFIED to Published rather than DELETED then
    /// ADDED, and a controller never finds its downstream missing and creates it again).
    async fn catch_up_now(&self, id: &RepoId, fetch: bool) -> Result<()> {
        // Under the lease nobody in the cluster writes this repository, so the store read
        // first and git fetched after agree.
        let drafts = self.inner.store.list_drafts(&id.0, &id.1).await?;
        let metas = self.inner.store.list_meta(&id.0, &id.1).await?;
        // A draft whose record went was published or deleted: git moved too, even when the
        // refresh was asked for records only.
        let fetch = fetch || {
            let live: std::collections::HashSet<String> = drafts
                .iter()
                .filter(|d| !d.deleted)
                .map(|d| d.key().name().as_str().to_owned())
                .collect();
            self.with_index(id, |ix| ix.drafts.keys().any(|name| !live.contains(name)))
                .unwrap_or(false)
        };
        if fetch
            && let Ok((repo, _)) = self.handle(id)
            && let Err(e) = self.sync_now(id, &repo).await
        {
            tracing::debug!(repository = %id.1, error = %e, "sync before a cluster job failed");
        }
        self.mutate(id, |ix| {
            ix.drafts.clear();
            ix.tombstones.clear();
            for d in drafts {
                let name = d.key().name().as_str().to_owned();
                if d.deleted {
                    ix.tombstones.insert(name, d);
                } else {
                    ix.drafts.insert(name, d);
                }
            }
            ix.meta = metas.into_iter().collect();
        });
        Ok(())
    }

    /// The repositories whose records `key` may be (drafts and object metadata are named
    /// `<repository>.<…>`); empty for other resources.
    pub fn repositories_of_record(&self, key: &ObjectKey) -> Vec<RepoId> {
        if key.resource != DRAFT_RESOURCE
            && key.resource != META_RESOURCE
            && key.resource != GIT_WRITES_RESOURCE
        {
            return Vec::new();
        }
        self.repositories(Some(&key.namespace))
            .into_iter()
            .filter(|(_, name)| {
                key.name
                    .strip_prefix(name.as_str())
                    .is_some_and(|rest| rest.starts_with('.'))
            })
            .collect()
    }

    /// Tells the other replicas (through the shared log) that this one changed `id`'s git refs
    /// in a way no record shows; they refresh the repository, and their read barrier waits
    /// for that. Without a cluster it writes nothing. Called under the repository's lease,
    /// after the git write.
    pub(crate) async fn announce_git_write(&self, id: &RepoId) {
        if !self.is_clustered() {
            return;
        }
        let change = Change::GitWritten {
            namespace: id.0.clone(),
            repository: id.1.as_str().to_owned(),
        };
        if let Err(e) = self.inner.store.commit(vec![change]).await {
            // Git holds the change; the other replicas see it at their next sync.
            tracing::warn!(repository = %id.1, error = %e, "cannot announce a git write to the cluster");
        }
    }

    /// Brings repository `id` up to date with the cluster (a no-op job: the queue's gate
    /// catches up as far as `level` says). Without a cluster it does nothing. Should it
    /// fail, the repository's next job catches up in full.
    pub async fn refresh_repository(&self, id: &RepoId, level: CatchUp) -> Result<()> {
        if !self.is_clustered() {
            return Ok(());
        }
        let (_, queue) = self.handle(id)?;
        let result = queue
            .run_with(level, async { Ok::<(), EngineError>(()) })
            .await
            .and_then(|r| r);
        if result.is_err() {
            self.mark_stale(id);
        }
        result
    }

    /// How far a change to `key` (an event of the shared log, `deleted` or not) makes the
    /// other replicas refresh its repository: a draft record's removal follows a publish or a
    /// deletion, and the git-write marker announces moved refs, so those fetch git; other
    /// record changes reload records only.
    pub fn catch_up_for(key: &ObjectKey, deleted: bool) -> CatchUp {
        if key.resource == GIT_WRITES_RESOURCE || (key.resource == DRAFT_RESOURCE && deleted) {
            CatchUp::Everything
        } else {
            CatchUp::Records
        }
    }

    fn mark_stale(&self, id: &RepoId) {
        self.inner
            .stale
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(id.clone());
    }

    /// Whether `id` must be caught up in full, clearing the mark.
    fn take_stale(&self, id: &RepoId) -> bool {
        self.inner
            .stale
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_changes_that_move_git_refs_fetch() {
        let key = |resource: &str| ObjectKey::new(resource, "default", "repo.pkg.ws");
        let draft = key(DRAFT_RESOURCE);
        let meta = key(META_RESOURCE);
        let marker = key(GIT_WRITES_RESOURCE);
        assert_eq!(Engine::catch_up_for(&draft, false), CatchUp::Records);
        assert_eq!(
            Engine::catch_up_for(&draft, true),
            CatchUp::Everything,
            "a draft record goes when it is published or deleted"
        );
        assert_eq!(Engine::catch_up_for(&meta, false), CatchUp::Records);
        assert_eq!(Engine::catch_up_for(&meta, true), CatchUp::Records);
        assert_eq!(Engine::catch_up_for(&marker, false), CatchUp::Everything);
        assert_eq!(Engine::catch_up_for(&marker, true), CatchUp::Everything);
    }
}
