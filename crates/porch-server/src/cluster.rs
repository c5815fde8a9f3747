//! Running as one of several replicas on PostgreSQL.
//!
//! * Git writes and syncs of a repository hold its cluster lease (a PostgreSQL advisory lock,
//!   released when the holding replica dies), so revision numbers and ref updates are decided
//!   by one replica at a time (`porch_engine::cluster`).
//! * Each replica's engine index follows the shared event log: a change to a draft or to
//!   object metadata made through another replica refreshes that repository here.
//! * Requests wait at a read barrier until this replica has applied every write committed
//!   before they arrived (`ReadBarrier`), so a client sees its writes whichever replica
//!   serves the next request.
//! * Every replica opens and syncs each repository into its own mirror (reads are served from
//!   it; fetches are read-only and git writes hold the lease), but only the leader writes
//!   Repository status and readiness Events.
//! * The fan-out controllers (PackageVariant, PackageVariantSet) run on the leader only:
//!   a leader lease is campaigned for; when it is lost (the leader died, or its database
//!   session did) the controllers stop and the next leader starts them.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use porch_apiserver::WatchHub;
use porch_engine::Engine;
use porch_engine::cluster::{CatchUp, LeaseFuture, LeaseGuard, RepositoryLeases};
use porch_store_postgres::{LeaderElection, PgStore};
use tokio::sync::{broadcast, watch};

/// The repository leases of the engine, on PostgreSQL advisory locks.
pub struct PgLeases {
    pub pg: Arc<PgStore>,
    /// The store's current resourceVersion, and how far this replica applied the log: a job
    /// skips its catch-up when nothing is left to apply.
    pub probe: Arc<porch_store_postgres::RvProbe>,
    pub applied: watch::Receiver<Applied>,
}

impl RepositoryLeases for PgLeases {
    fn acquire(&self, namespace: &str, name: &str) -> LeaseFuture {
        let (pg, lease) = (self.pg.clone(), format!("repository:{namespace}/{name}"));
        Box::pin(async move {
            let guard = pg.lease(&lease).await?;
            Ok(Box::new(guard) as LeaseGuard)
        })
    }

    fn acquire_shared(&self, namespace: &str, name: &str) -> LeaseFuture {
        let (pg, lease) = (self.pg.clone(), format!("repository:{namespace}/{name}"));
        Box::pin(async move {
            let guard = pg.lease_shared(&lease).await?;
            Ok(Box::new(guard) as LeaseGuard)
        })
    }

    fn up_to_date(&self) -> Pin<Box<dyn Future<Output = bool> + Send>> {
        let (probe, applied) = (self.probe.clone(), self.applied.clone());
        Box::pin(async move {
            match probe.current().await {
                Ok(rv) => applied.borrow().applied >= rv,
                Err(_) => false,
            }
        })
    }
}

/// How far this replica has applied the shared event log: every event up to `applied` has
/// reached the watch hub and its repository refreshes are done; `repositories` is the
/// resourceVersion of the last Repository event among them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Applied {
    pub applied: u64,
    pub repositories: u64,
}

const REPOSITORIES: &str = "config.porch.kpt.dev/repositories";

/// Refreshes the engine's repositories whose records other replicas changed, serves the
/// kinds of CRDs they created (and stops serving deleted ones), and reports through `applied`
/// how far it got. `rx` is subscribed to `hub` when `applied` starts. Batches that arrive
/// while a refresh runs are taken together afterwards (one refresh per repository for all of
/// them). This replica's own commits (`local`) refresh nothing: its engine changed its index
/// as it wrote them.
pub async fn follow(
    engine: Engine,
    hub: Arc<WatchHub>,
    mut rx: broadcast::Receiver<Arc<Vec<porch_core::store::StoreEvent>>>,
    crds: Arc<porch_resources::crd::Crds>,
    applied: watch::Sender<Applied>,
    local: Arc<porch_store_postgres::LocalWrites>,
) {
    loop {
        let mut batches = match rx.recv().await {
            Ok(batch) => vec![Ok(batch)],
            Err(broadcast::error::RecvError::Closed) => return,
            Err(e @ broadcast::error::RecvError::Lagged(_)) => vec![Err(e)],
        };
        loop {
            match rx.try_recv() {
                Ok(batch) => batches.push(Ok(batch)),
                Err(broadcast::error::TryRecvError::Lagged(n)) => {
                    batches.push(Err(broadcast::error::RecvError::Lagged(n)))
                }
                Err(_) => break,
            }
        }
        // Each repository to refresh, and how far (a git fetch only for changes that moved refs).
        let mut ids: HashMap<_, CatchUp> = HashMap::new();
        let mut refresh = |id, level| {
            let at = ids.entry(id).or_insert(CatchUp::Records);
            if level == CatchUp::Everything {
                *at = CatchUp::Everything;
            }
        };
        let mut next = *applied.borrow();
        for batch in batches {
            match batch {
                Ok(batch) => {
                    for e in batch.iter() {
                        let rv = e.object.resource_version;
                        next.applied = next.applied.max(rv);
                        if e.object.key.resource == REPOSITORIES {
                            next.repositories = next.repositories.max(rv);
                        }
                        if !local.contains(rv) {
                            let level = Engine::catch_up_for(
                                &e.object.key,
                                e.event_type == porch_core::store::EventType::Deleted,
                            );
                            for id in engine.repositories_of_record(&e.object.key) {
                                refresh(id, level);
                            }
                        }
                        crds.apply_event(e);
                    }
                }
                // Missed events: every repository may be stale, and a Repository may have
                // changed.
                Err(_) => {
                    if let Err(e) = crds.restore().await {
                        tracing::warn!(error = %e, "cannot reload the CRDs");
                    }
                    for id in engine.repositories(None) {
                        refresh(id, CatchUp::Everything);
                    }
                    next.applied = next.applied.max(hub.latest());
                    next.repositories = next.applied;
                }
            }
        }
        let mut refreshes = tokio::task::JoinSet::new();
        for (id, level) in ids {
            let engine = engine.clone();
            refreshes.spawn(async move {
                if let Err(e) = engine.refresh_repository(&id, level).await {
                    tracing::debug!(repository = %id.1, error = %e, "cluster refresh failed");
                }
            });
        }
        while refreshes.join_next().await.is_some() {}
        applied.send_if_modified(|a| std::mem::replace(a, next) != next);
    }
}

/// How long a request waits for this replica to catch up before it is served as is.
const BARRIER_TIMEOUT: Duration = Duration::from_secs(10);

/// Read-your-writes across replicas: before a request is served, this replica catches up
/// with every write committed (through any replica) before the request arrived: the event
/// log up to the store's current resourceVersion is applied (drafts, object metadata) and
/// the repository controller has handled the Repository events among them, including the
/// first open of a Repository the leader already reports Ready. A client that created
/// something through one replica thus finds it through the next. Costs one small query per
/// request, shared by the requests that arrive together (`porch_store_postgres::RvProbe`);
/// waits only while this replica lags.
#[derive(Clone)]
pub struct ReadBarrier {
    probe: Arc<porch_store_postgres::RvProbe>,
    applied: watch::Receiver<Applied>,
    controller: Option<watch::Receiver<porch_resources::controller::GateProgress>>,
    authorizer: Option<Arc<porch_apiserver::authz::Authorizer>>,
}

impl ReadBarrier {
    pub fn new(
        probe: Arc<porch_store_postgres::RvProbe>,
        applied: watch::Receiver<Applied>,
        controller: Option<watch::Receiver<porch_resources::controller::GateProgress>>,
        authorizer: Option<Arc<porch_apiserver::authz::Authorizer>>,
    ) -> Self {
        Self {
            probe,
            applied,
            controller,
            authorizer,
        }
    }

    /// Waits (bounded) until this replica has applied every write committed so far.
    pub async fn wait(&self) {
        let started = std::time::Instant::now();
        let Ok(rv) = self.probe.current().await else {
            return; // the request meets the outage itself
        };
        let probed = started.elapsed();
        self.reach(rv).await;
        tracing::trace!(
            resource_version = rv,
            probe_us = probed.as_micros() as u64,
            total_us = started.elapsed().as_micros() as u64,
            "read barrier passed"
        );
    }

    /// For a read at `resourceVersion=N` (kube's "not older than N"): waits until this
    /// replica has applied N, without asking the database when it already has.
    pub async fn wait_for(&self, rv: u64) {
        if self.applied.borrow().applied >= rv {
            self.reach(rv).await; // the controller and RBAC views, at once when current
        } else {
            // N may be newer than anything committed yet: the latest version bounds the wait.
            self.wait().await;
        }
    }

    /// Waits (bounded) until this replica has applied `rv`.
    async fn reach(&self, rv: u64) {
        let caught_up = async {
            let mut applied = self.applied.clone();
            // Copied out: the receiver's guard must not live across the next wait.
            let repositories = match applied.wait_for(|a| a.applied >= rv).await {
                Ok(a) => a.repositories,
                Err(_) => return,
            };
            if let Some(mut controller) = self.controller.clone() {
                let _ = controller
                    .wait_for(|p| p.seen >= repositories && p.lagging == 0)
                    .await;
            }
            // RBAC decisions made inside handlers (package-level access) read the authorizer's
            // index: it must include the bindings written before the request.
            if let Some(authorizer) = &self.authorizer {
                while authorizer.seen() < rv {
                    tokio::time::sleep(Duration::from_millis(2)).await;
                }
            }
        };
        if tokio::time::timeout(BARRIER_TIMEOUT, caught_up)
            .await
            .is_err()
        {
            tracing::debug!(
                resource_version = rv,
                "read barrier timed out; serving what this replica has"
            );
        }
    }
}

/// What a request waits for before it is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wait {
    /// Nothing: watches (they resume from a resourceVersion and follow the log), health
    /// probes, and reads at `resourceVersion=0` ("any", served from this replica's index as
    /// kube-apiserver serves them from its watch cache).
    Nothing,
    /// Every write committed before the request (the default of a read or a write).
    Latest,
    /// A read at `resourceVersion=N` ("not older than N").
    AtLeast(u64),
}

fn wait_of(method: &axum::http::Method, path: &str, query: Option<&str>) -> Wait {
    let params = || query.into_iter().flat_map(|q| q.split('&'));
    let watch = params().any(|p| p == "watch=true" || p == "watch=1");
    let probe = matches!(path, "/readyz" | "/livez" | "/healthz" | "/metrics")
        || path.starts_with("/readyz/")
        || path.starts_with("/livez/");
    if watch || probe || path.contains("/watch/") {
        return Wait::Nothing;
    }
    if method != axum::http::Method::GET {
        return Wait::Latest;
    }
    match params().find_map(|p| p.strip_prefix("resourceVersion=")) {
        Some("0") => Wait::Nothing,
        Some(n) => n.parse().map_or(Wait::Latest, Wait::AtLeast),
        None => Wait::Latest,
    }
}

/// The barrier as an axum middleware (see [`Wait`] for what each request waits for).
pub async fn barrier_layer(
    axum::extract::State(barrier): axum::extract::State<ReadBarrier>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    // Decided before awaiting: the request's body is not `Sync`, so no borrow of it may
    // live across the wait.
    let wait = wait_of(
        request.method(),
        request.uri().path(),
        request.uri().query(),
    );
    match wait {
        Wait::Nothing => {}
        Wait::Latest => barrier.wait().await,
        Wait::AtLeast(rv) => barrier.wait_for(rv).await,
    }
    next.run(request).await
}

/// Runs `start(stop)` while this replica leads and `ready` is true, stopping it (through the
/// `stop` receiver it was given) when leadership is lost or on `shutdown`.
pub async fn while_leading<F, Fut>(
    election: LeaderElection,
    mut ready: watch::Receiver<bool>,
    mut shutdown: watch::Receiver<bool>,
    start: F,
) where
    F: Fn(watch::Receiver<bool>) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let mut leading = election.leading();
    if !until(&mut ready, true).await {
        return;
    }
    loop {
        tokio::select! {
            ok = until(&mut leading, true) => if !ok { return },
            _ = until(&mut shutdown, true) => return,
        }
        tracing::info!("leading: starting the PackageVariant and PackageVariantSet controllers");
        let (stop_tx, stop_rx) = watch::channel(false);
        let task = tokio::spawn(start(stop_rx));
        tokio::select! {
            _ = until(&mut leading, false) => {
                tracing::warn!("no longer leading: stopping the controllers");
                let _ = stop_tx.send(true);
                let _ = task.await;
            }
            _ = until(&mut shutdown, true) => {
                let _ = stop_tx.send(true);
                let _ = task.await;
                return;
            }
        }
    }
}

/// Waits until `rx` holds `value`; false when its sender is gone.
async fn until(rx: &mut watch::Receiver<bool>, value: bool) -> bool {
    rx.wait_for(|v| *v == value).await.is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::Method;

    #[test]
    fn what_each_request_waits_for() {
        let get = |path: &str, query: Option<&str>| wait_of(&Method::GET, path, query);
        let prs = "/apis/porch.kpt.dev/v1alpha1/namespaces/default/packagerevisions";
        assert_eq!(get(prs, None), Wait::Latest);
        assert_eq!(get(prs, Some("limit=5")), Wait::Latest);
        assert_eq!(get(prs, Some("resourceVersion=0")), Wait::Nothing);
        assert_eq!(
            get(prs, Some("limit=5&resourceVersion=42")),
            Wait::AtLeast(42)
        );
        assert_eq!(get(prs, Some("resourceVersion=x")), Wait::Latest);
        assert_eq!(
            get(prs, Some("watch=true&resourceVersion=7")),
            Wait::Nothing
        );
        assert_eq!(get(&format!("{prs}/a"), Some("watch=1")), Wait::Nothing);
        assert_eq!(get("/readyz", None), Wait::Nothing);
        assert_eq!(get("/livez/ping", None), Wait::Nothing);
        // Writes always see the latest state, whatever their query says.
        assert_eq!(
            wait_of(&Method::PUT, &format!("{prs}/a"), Some("resourceVersion=0")),
            Wait::Latest
        );
        assert_eq!(wait_of(&Method::POST, prs, None), Wait::Latest);
    }
}
