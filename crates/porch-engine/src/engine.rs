//! The [`Engine`] handle: registered repositories, the index, reads, syncs and the event bus.
//! Write operations live in `create.rs`, `resources.rs` and `lifecycle.rs`.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, RwLock};

use kpt::runtime::FunctionRuntime;
use porch_core::names::{PackagePath, PackageRevisionName, RepositoryName};
use porch_core::repository::{
    ChangeReport, ListFilter, PackageFiles, Repository, RepositoryStatus,
};
use porch_core::store::MetadataStore;
use porch_core::upstream::UpstreamFetcher;
use tokio::sync::broadcast;
use tracing::Instrument;

use crate::error::{EngineError, Result};
use crate::index::{self, RepoId, RepoIndex};
use crate::inflight::InFlight;
use crate::model::{
    EngineEvent, EngineOptions, ListOptions, Origin, PackageRevision, RegisterOptions,
};
use crate::queue::SerialQueue;
use crate::reconcile::MirrorRetry;
use crate::store::Store;

/// Listings the index loads: with each revision's creating task (`spec.tasks`), which the
/// adapter caches by commit.
pub(crate) const FULL: ListFilter = ListFilter {
    package: None,
    workspace: None,
    revision: None,
    lifecycle: None,
    with_tasks: true,
};

/// How many events a slow subscriber may lag behind before it sees `Lagged` (and must relist).
/// Registering a hundred repositories at once emits an ADDED per revision in a burst (1,024
/// overflowed). The buffer also keeps its last events alive (memory), hence not larger.
const EVENT_BUFFER: usize = 8_192;

/// One registered repository.
struct RepoState {
    repo: Arc<dyn Repository>,
    queue: SerialQueue,
    index: RepoIndex,
    /// Retry timer of its mirror branches (`reconcile.rs`).
    retry: Arc<MirrorRetry>,
}

pub(crate) struct Inner {
    repos: RwLock<HashMap<RepoId, RepoState>>,
    pub(crate) store: Store,
    pub(crate) runtime: Arc<dyn FunctionRuntime>,
    pub(crate) options: EngineOptions,
    events: broadcast::Sender<EngineEvent>,
    /// Operations in progress, for Porch's try-locks.
    pub(crate) in_flight: InFlight,
    /// Fetches raw git upstreams for `clone` tasks (none: such clones are refused).
    pub(crate) fetcher: RwLock<Option<Arc<dyn UpstreamFetcher>>>,
    /// Parent of every render's cancellation token ([`Engine::cancel_renders`]).
    pub(crate) renders: kpt::runtime::CancelToken,
    /// Leases of a cluster of engines on one store (`cluster.rs`); none standalone.
    pub(crate) cluster: RwLock<Option<Arc<dyn crate::cluster::RepositoryLeases>>>,
    pub(crate) barrier: RwLock<Option<crate::cluster::Barrier>>,
    /// Repositories whose next job must catch up with the cluster in full (a refresh failed).
    pub(crate) stale: std::sync::Mutex<std::collections::HashSet<RepoId>>,
}

/// The package orchestration engine. Cheap to clone (a shared handle).
#[derive(Clone)]
pub struct Engine {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine").finish_non_exhaustive()
    }
}

impl Engine {
    /// An engine keeping drafts in `store` and rendering with `runtime`.
    pub fn new(store: Arc<dyn MetadataStore>, runtime: Arc<dyn FunctionRuntime>) -> Self {
        Self::with_options(store, runtime, EngineOptions::default())
    }

    /// [`Engine::new`] with engine-wide `options` (e.g. mirroring drafts to git).
    pub fn with_options(
        store: Arc<dyn MetadataStore>,
        runtime: Arc<dyn FunctionRuntime>,
        options: EngineOptions,
    ) -> Self {
        let (events, _) = broadcast::channel(EVENT_BUFFER);
        Engine {
            inner: Arc::new(Inner {
                repos: RwLock::new(HashMap::new()),
                store: Store::new(store),
                runtime,
                options,
                events,
                in_flight: InFlight::default(),
                fetcher: RwLock::new(None),
                renders: kpt::runtime::CancelToken::new(),
                cluster: RwLock::new(None),
                barrier: RwLock::new(None),
                stale: std::sync::Mutex::default(),
            }),
        }
    }

    /// Every change from now on: subscribe first, then list, to miss nothing.
    pub fn subscribe(&self) -> broadcast::Receiver<EngineEvent> {
        self.inner.events.subscribe()
    }

    /// Lets `clone` tasks fetch raw git upstreams (`clone.upstreamRef.git`) through `fetcher`.
    pub fn set_upstream_fetcher(&self, fetcher: Arc<dyn UpstreamFetcher>) {
        *self
            .inner
            .fetcher
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(fetcher);
    }

    pub(crate) fn fetcher(&self) -> Option<Arc<dyn UpstreamFetcher>> {
        self.inner
            .fetcher
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// [`Engine::register_with`] with default options (not a deployment repository).
    pub async fn register(&self, namespace: &str, repo: Arc<dyn Repository>) -> Result<()> {
        self.register_with(namespace, repo, RegisterOptions::default())
            .await
    }

    /// Registers a repository of `namespace`: loads its drafts and object metadata from the
    /// store and syncs it (which brings lagging mirror branches of its drafts up to date).
    /// A failing sync does not fail the registration (the repository shows as not ready and
    /// lists what it has); it is returned by [`Engine::repository_status`]. Must be called
    /// inside a tokio runtime.
    pub async fn register_with(
        &self,
        namespace: &str,
        repo: Arc<dyn Repository>,
        options: RegisterOptions,
    ) -> Result<()> {
        let id: RepoId = (namespace.to_owned(), repo.name().clone());
        let drafts = self.inner.store.list_drafts(namespace, &id.1).await?;
        let metas = self.inner.store.list_meta(namespace, &id.1).await?;
        {
            let mut repos = self.write_repos();
            if repos.contains_key(&id) {
                return Err(EngineError::AlreadyExists(format!(
                    "repository {}/{} is already registered",
                    id.0, id.1
                )));
            }
            let git_location = repo.git_location();
            repos.insert(
                id.clone(),
                RepoState {
                    repo,
                    queue: SerialQueue::spawn_gated(self.gate(&id)),
                    index: RepoIndex {
                        git_location,
                        deployment: options.deployment,
                        guardrails: Arc::new(options.guardrails),
                        ..RepoIndex::default()
                    },
                    retry: Arc::default(),
                },
            );
        }
        self.mutate(&id, |ix| {
            for d in drafts {
                let name = d.key().name().as_str().to_owned();
                if d.deleted {
                    ix.tombstones.insert(name, d);
                } else {
                    ix.drafts.insert(name, d);
                }
            }
            ix.meta.extend(metas);
        });
        if let Err(e) = self.sync(namespace, &id.1).await {
            tracing::warn!(repository = %id.1, "initial sync failed: {e}");
        }
        Ok(())
    }

    /// Applies changed registration options (e.g. the Repository's `spec.deployment` was
    /// edited); revisions whose view changes are reported MODIFIED. `NotFound` when the
    /// repository is not registered.
    pub fn set_repository_options(
        &self,
        namespace: &str,
        name: &RepositoryName,
        options: RegisterOptions,
    ) -> Result<()> {
        let id: RepoId = (namespace.to_owned(), name.clone());
        self.handle(&id)?;
        self.mutate(&id, |ix| {
            ix.deployment = options.deployment;
            ix.guardrails = Arc::new(options.guardrails);
        });
        Ok(())
    }

    /// Forgets a repository; its revisions are reported DELETED. Stored drafts stay.
    pub fn unregister(&self, namespace: &str, name: &RepositoryName) {
        let removed = self
            .write_repos()
            .remove(&(namespace.to_owned(), name.clone()));
        if let Some(state) = removed {
            for (_, revision) in state.index.views(namespace) {
                let _ = self.inner.events.send(EngineEvent {
                    event_type: porch_core::store::EventType::Deleted,
                    revision: Arc::new(revision),
                });
            }
        }
    }

    /// Fetches the repository and applies what changed (serialized with its writes); then
    /// brings lagging mirror branches of its drafts up to date.
    pub async fn sync(&self, namespace: &str, name: &RepositoryName) -> Result<()> {
        let id: RepoId = (namespace.to_owned(), name.clone());
        let (repo, queue) = self.handle(&id)?;
        let this = self.clone();
        let span = tracing::info_span!("sync", repository = %name, namespace);
        queue
            .run(
                async move {
                    this.sync_now(&id, &repo).await?;
                    this.reconcile_mirrors_now(&id, &repo).await;
                    Ok(())
                }
                .instrument(span),
            )
            .await?
    }

    /// The body of [`Engine::sync`], for jobs already on the repository's queue.
    pub(crate) async fn sync_now(&self, id: &RepoId, repo: &Arc<dyn Repository>) -> Result<()> {
        let loaded = self.with_index(id, |ix| ix.loaded).unwrap_or(false);
        let result = match repo.sync().await {
            Ok(report) if loaded => Ok(Some(with_tasks(repo.as_ref(), report).await)),
            Ok(_) => match repo.list(FULL).await {
                Ok(all) => {
                    let kpt = self.load_kpt(id, repo.as_ref(), &all).await;
                    self.mutate(id, |ix| {
                        ix.replace_git(all);
                        ix.add_kpt(kpt);
                    });
                    Ok(None)
                }
                Err(e) => Err(e),
            },
            Err(e) => Err(e),
        };
        match result {
            Ok(Some(report)) => {
                let metas: Vec<_> = report
                    .added
                    .iter()
                    .chain(&report.changed)
                    .cloned()
                    .collect();
                let kpt = self.load_kpt(id, repo.as_ref(), &metas).await;
                if !report.is_empty() {
                    let packages = report_packages(&report);
                    self.mutate_packages(id, &packages, |ix| {
                        ix.apply_report(report);
                        ix.add_kpt(kpt);
                    });
                }
                Ok(())
            }
            Ok(None) => Ok(()),
            Err(e) => {
                let msg = e.to_string();
                self.mutate(id, |ix| ix.error = Some(msg));
                Err(EngineError::repo(&id.1, e))
            }
        }
    }

    /// Applies a change report obtained elsewhere (e.g. a `porch_git::SyncLoop` callback).
    /// The report is applied at once; the Kptfile fields of new commits are read afterwards
    /// on the repository's queue (their revisions then show a MODIFIED event).
    pub fn apply_change_report(
        &self,
        namespace: &str,
        name: &RepositoryName,
        report: ChangeReport,
    ) {
        if report.is_empty() {
            return;
        }
        let id = (namespace.to_owned(), name.clone());
        let packages = report_packages(&report);
        self.mutate_packages(&id, &packages, |ix| ix.apply_report(report));
        self.spawn_kpt_fill(id.clone());
        // The remote answers again: a good moment for mirror branches that lag.
        self.spawn_mirror_reconcile(id);
    }

    /// The adapter's status plus the last sync error the engine saw.
    pub fn repository_status(
        &self,
        namespace: &str,
        name: &RepositoryName,
    ) -> Option<RepositoryStatus> {
        let repos = self.read_repos();
        let state = repos.get(&(namespace.to_owned(), name.clone()))?;
        let mut status = state.repo.status();
        if let Some(err) = &state.index.error {
            status.ready = false;
            status.message = err.clone();
        }
        Some(status)
    }

    /// Registered repositories of `namespace` (all namespaces for `None`).
    pub fn repositories(&self, namespace: Option<&str>) -> Vec<(String, RepositoryName)> {
        let mut v: Vec<RepoId> = self
            .read_repos()
            .keys()
            .filter(|(ns, _)| namespace.is_none_or(|n| n == ns))
            .cloned()
            .collect();
        v.sort();
        v
    }

    /// Lists from the index (never touches git); Porch's order. With a package, only that
    /// package's views are built (a controller lists one package of a large repository).
    pub fn list(&self, opts: &ListOptions) -> Vec<PackageRevision> {
        let package: Option<BTreeSet<PackagePath>> = opts
            .package
            .as_deref()
            .and_then(|p| PackagePath::new(p).ok())
            .map(|p| BTreeSet::from([p]));
        let mut out: Vec<PackageRevision> = {
            let repos = self.read_repos();
            repos
                .iter()
                .filter(|((ns, name), _)| {
                    opts.namespace.as_ref().is_none_or(|n| n == ns)
                        && opts.repository.as_ref().is_none_or(|r| r == name)
                })
                .flat_map(|((ns, _), s)| s.index.views_of(ns, package.as_ref()).into_values())
                .filter(|pr| opts.matches(pr))
                .collect()
        };
        index::sort(&mut out);
        out
    }

    /// One revision by object name.
    pub fn get(&self, namespace: &str, name: &str) -> Result<PackageRevision> {
        let id = Self::repo_of(namespace, name)?;
        self.with_index(&id, |ix| ix.view(namespace, name))
            .flatten()
            .ok_or_else(|| not_found(name))
    }

    /// A revision and its files (`packagerevisionresources`).
    pub async fn read_resources(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<(PackageRevision, PackageFiles)> {
        let pr = self.get(namespace, name)?;
        match self.files_of(&pr).await {
            // The draft was published between reading the index and reading its record
            // (the publish puts the published revision in the index, then removes the
            // record): read what the name is now. On a replica the index can also still
            // hold a draft another replica has just published (its record is gone from the
            // shared store, the tag not yet fetched here): catch up with the cluster first.
            Err(EngineError::NotFound(_)) if pr.origin == Origin::Store => {
                if self.is_clustered() {
                    self.caught_up().await;
                }
                let pr = self.get(namespace, name)?;
                let files = self.files_of(&pr).await?;
                Ok((pr, files))
            }
            Err(e) => Err(e),
            Ok(files) => Ok((pr, files)),
        }
    }

    pub(crate) async fn files_of(&self, pr: &PackageRevision) -> Result<PackageFiles> {
        match pr.origin {
            Origin::Store => {
                let key = crate::drafts::object_key(&pr.namespace, &pr.name());
                self.inner.store.get_draft(key).await?.files()
            }
            Origin::Git => {
                let (repo, _) = self.handle(&(pr.namespace.clone(), pr.key.repository.clone()))?;
                repo.read_files(pr.key.clone())
                    .await
                    .map_err(|e| EngineError::repo(&pr.key.repository, e))
            }
        }
    }

    // ---- internals shared by the operations ----

    pub(crate) fn repo_of(namespace: &str, name: &str) -> Result<RepoId> {
        let (repo, _, _) = PackageRevisionName::from_raw(name)
            .parse()
            .map_err(|_| not_found(name))?;
        Ok((namespace.to_owned(), repo))
    }

    pub(crate) fn handle(&self, id: &RepoId) -> Result<(Arc<dyn Repository>, SerialQueue)> {
        self.read_repos()
            .get(id)
            .map(|s| (s.repo.clone(), s.queue.clone()))
            .ok_or_else(|| {
                EngineError::NotFound(format!("repositories.config.porch.kpt.dev \"{}\"", id.1))
            })
    }

    pub(crate) fn retry_of(&self, id: &RepoId) -> Option<Arc<MirrorRetry>> {
        self.read_repos().get(id).map(|s| s.retry.clone())
    }

    pub(crate) fn with_index<R>(&self, id: &RepoId, f: impl FnOnce(&RepoIndex) -> R) -> Option<R> {
        self.read_repos().get(id).map(|s| f(&s.index))
    }

    /// Changes one repository's index and emits the resulting events (in index order, since
    /// the write lock is held while sending; sending never blocks).
    pub(crate) fn mutate<R>(&self, id: &RepoId, f: impl FnOnce(&mut RepoIndex) -> R) -> Option<R> {
        self.mutate_scoped(id, None, f)
    }

    /// [`Engine::mutate`] for a change confined to the revisions of `package` (a write to
    /// one revision).
    pub(crate) fn mutate_in<R>(
        &self,
        id: &RepoId,
        package: &PackagePath,
        f: impl FnOnce(&mut RepoIndex) -> R,
    ) -> Option<R> {
        self.mutate_scoped(id, Some(&BTreeSet::from([package.clone()])), f)
    }

    /// [`Engine::mutate`] for a change confined to the revisions of `packages`.
    pub(crate) fn mutate_packages<R>(
        &self,
        id: &RepoId,
        packages: &BTreeSet<PackagePath>,
        f: impl FnOnce(&mut RepoIndex) -> R,
    ) -> Option<R> {
        self.mutate_scoped(id, Some(packages), f)
    }

    /// Applies `f` to the index of `id` and sends the events of what changed. With
    /// `packages`, only their views are built and diffed, so the cost of a write or of a
    /// sync that found a few changes does not grow with the repository (building all 6,000
    /// views of a repository twice per write was most of an approval). The latest-revision
    /// label, the only thing a revision's view takes from others, is per package.
    ///
    /// Debug builds also diff the whole repository for a scoped change and panic if it
    /// reached another package, so every test checks the confinement.
    fn mutate_scoped<R>(
        &self,
        id: &RepoId,
        packages: Option<&BTreeSet<PackagePath>>,
        f: impl FnOnce(&mut RepoIndex) -> R,
    ) -> Option<R> {
        let mut repos = self.write_repos();
        let state = repos.get_mut(id)?;
        let full_before =
            (cfg!(debug_assertions) && packages.is_some()).then(|| state.index.views(&id.0));
        let before = state.index.views_of(&id.0, packages);
        let r = f(&mut state.index);
        let after = state.index.views_of(&id.0, packages);
        let events = index::diff(&before, &after);
        if let Some(full_before) = full_before {
            let full = index::diff(&full_before, &state.index.views(&id.0));
            let key = |e: &EngineEvent| (e.event_type, e.revision.name().as_str().to_owned());
            let scoped: Vec<_> = events.iter().map(key).collect();
            let all: Vec<_> = full.iter().map(key).collect();
            assert_eq!(
                scoped, all,
                "a write scoped to packages {packages:?} changed revisions outside them"
            );
        }
        for event in events {
            // No subscribers is fine.
            let _ = self.inner.events.send(event);
        }
        Some(r)
    }

    /// Every revision of `namespace`, across repositories.
    pub(crate) fn all_in_namespace(&self, namespace: &str) -> Vec<PackageRevision> {
        self.list(&ListOptions {
            namespace: Some(namespace.to_owned()),
            ..ListOptions::default()
        })
    }

    fn read_repos(&self) -> std::sync::RwLockReadGuard<'_, HashMap<RepoId, RepoState>> {
        // A panic while holding the lock cannot leave the map half-updated in a way that
        // matters more than stopping every request; keep serving.
        self.inner
            .repos
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn write_repos(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<RepoId, RepoState>> {
        self.inner
            .repos
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The packages a change report touches.
fn report_packages(report: &ChangeReport) -> BTreeSet<PackagePath> {
    report
        .added
        .iter()
        .chain(&report.changed)
        .map(|m| m.key.package.clone())
        .chain(report.removed.iter().map(|k| k.package.clone()))
        .collect()
}

/// Fills the task history of new or changed revisions (reports come without it).
async fn with_tasks(repo: &dyn Repository, mut report: ChangeReport) -> ChangeReport {
    for m in report.added.iter_mut().chain(report.changed.iter_mut()) {
        if m.tasks.is_empty() {
            match repo.get(m.key.clone()).await {
                Ok(full) => m.tasks = full.tasks,
                Err(e) => tracing::debug!(revision = %m.key, "no task history: {e}"),
            }
        }
    }
    report
}

pub(crate) fn not_found(name: &str) -> EngineError {
    EngineError::NotFound(format!("packagerevisions.porch.kpt.dev \"{name}\""))
}
