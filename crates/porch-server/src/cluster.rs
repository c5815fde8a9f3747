//! Running as one of several replicas on PostgreSQL.
//!
//! * Git writes and syncs of a repository hold its cluster lease (a PostgreSQL advisory lock,
//!   released when the holding replica dies), so revision numbers and ref updates are decided
//!   by one replica at a time (`porch_engine::cluster`).
//! * Each replica's engine index follows the shared event log: a change to a draft or to
//!   object metadata made through another replica refreshes that repository here.
//! * The fan-out controllers (PackageVariant, PackageVariantSet) run on the leader only:
//!   a leader lease is campaigned for; when it is lost (the leader died, or its database
//!   session did) the controllers stop and the next leader starts them.

use std::collections::HashSet;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use porch_apiserver::WatchHub;
use porch_engine::Engine;
use porch_engine::cluster::{LeaseFuture, LeaseGuard, RepositoryLeases};
use porch_store_postgres::{LeaderElection, PgStore};
use tokio::sync::{broadcast, watch};

/// The repository leases of the engine, on PostgreSQL advisory locks.
pub struct PgLeases(pub Arc<PgStore>);

impl RepositoryLeases for PgLeases {
    fn acquire(&self, namespace: &str, name: &str) -> LeaseFuture {
        let (pg, lease) = (self.0.clone(), format!("repository:{namespace}/{name}"));
        Box::pin(async move {
            let guard = pg.lease(&lease).await?;
            Ok(Box::new(guard) as LeaseGuard)
        })
    }
}

/// Refreshes the engine's repositories whose records other replicas changed.
pub async fn follow(engine: Engine, hub: Arc<WatchHub>) {
    let mut rx = hub.subscribe();
    let pending: Arc<Mutex<HashSet<(String, porch_core::names::RepositoryName)>>> = Arc::default();
    loop {
        let ids = match rx.recv().await {
            Ok(batch) => batch
                .iter()
                .flat_map(|e| engine.repositories_of_record(&e.object.key))
                .collect::<HashSet<_>>(),
            // Missed events: every repository may be stale.
            Err(broadcast::error::RecvError::Lagged(_)) => {
                engine.repositories(None).into_iter().collect()
            }
            Err(broadcast::error::RecvError::Closed) => return,
        };
        for id in ids {
            let first = pending
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .insert(id.clone());
            if !first {
                continue; // a refresh is queued that has not read the store yet
            }
            let (engine, pending) = (engine.clone(), pending.clone());
            tokio::spawn(async move {
                // Cleared before the refresh reads, so a change after this point queues
                // another refresh rather than being lost.
                pending
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .remove(&id);
                if let Err(e) = engine.refresh_repository(&id).await {
                    tracing::debug!(repository = %id.1, error = %e, "cluster refresh failed");
                }
            });
        }
    }
}

/// Runs `start(stop)` while this replica leads and `ready` is true, stopping it (through the
/// `stop` receiver it was given) when leadership is lost or on `shutdown`.
pub async fn while_leading<F, Fut>(
    pg: Arc<PgStore>,
    mut ready: watch::Receiver<bool>,
    mut shutdown: watch::Receiver<bool>,
    start: F,
) where
    F: Fn(watch::Receiver<bool>) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let election = LeaderElection::start(
        pg.connection_config().clone(),
        "controllers",
        Duration::from_millis(500),
    );
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
