//! Runs the PackageVariantSet controller of `porch-controllers` in this server: objects
//! through the registry ([`RegistryObjects`]), woken by the watches of PackageVariantSets,
//! PackageVariants and Repositories (the streams clients get), by every other stored
//! object's change (what an `objectSelector` may select, custom kinds included), and by the
//! engine's events (an upstream revision appearing), with a periodic sweep behind them.

use std::sync::Arc;
use std::time::Duration;

use porch_apiserver::{LiveRegistry, WatchHub};
use porch_controllers::objects::Objects;
use porch_controllers::packagevariant::runner::stopped;
use porch_controllers::packagevariantset::runner::{self, Wake};
use serde_json::Value;
use tokio::sync::{mpsc, watch};

use crate::objects::RegistryObjects;

/// Who the controller acts as.
const USER: &str = "system:packagevariantset-controller";

/// Every set is looked at this often even without a wake.
const RESYNC: Duration = Duration::from_secs(300);

/// What a watched object's change wakes.
#[derive(Clone, Copy)]
enum Wakes {
    /// The set itself.
    Set,
    /// Every set of the object's namespace.
    Namespace,
}

/// Runs until `stop` turns true; waits for `ready` first (start-up repositories loaded).
pub async fn run(
    registry: LiveRegistry,
    engine: porch_engine::Engine,
    hub: Arc<WatchHub>,
    mut ready: watch::Receiver<bool>,
    mut stop: watch::Receiver<bool>,
) {
    tokio::select! {
        _ = stopped(&mut ready) => {}
        _ = stopped(&mut stop) => return,
    }
    let objects: Arc<dyn Objects> = Arc::new(RegistryObjects::new(registry.clone(), USER));
    let (tx, rx) = mpsc::unbounded_channel();
    let mut feeds = Vec::new();
    for (group, version, plural, wakes) in [
        (
            porch_api::CONFIG_GROUP,
            "v1alpha2",
            "packagevariantsets",
            Wakes::Set,
        ),
        (
            porch_api::CONFIG_GROUP,
            "v1alpha1",
            "packagevariants",
            Wakes::Namespace,
        ),
        (
            porch_api::CONFIG_GROUP,
            "v1alpha1",
            "repositories",
            Wakes::Namespace,
        ),
    ] {
        feeds.push(tokio::spawn(feed_from_watch(
            registry.clone(),
            (group, version, plural),
            wakes,
            tx.clone(),
            stop.clone(),
        )));
    }
    feeds.push(tokio::spawn(feed_from_engine(
        engine,
        tx.clone(),
        stop.clone(),
    )));
    feeds.push(tokio::spawn(feed_from_store(hub, tx.clone(), stop.clone())));
    drop(tx);
    tracing::info!("PackageVariantSet controller started");
    // The runner returns when every feed (sender) has stopped.
    runner::run(objects, rx, RESYNC).await;
    for f in feeds {
        let _ = f.await;
    }
    tracing::info!("PackageVariantSet controller stopped");
}

/// Sends a wake for every change of one kind until `stop`.
async fn feed_from_watch(
    registry: LiveRegistry,
    resource: (&'static str, &'static str, &'static str),
    wakes: Wakes,
    tx: mpsc::UnboundedSender<Wake>,
    stop: watch::Receiver<bool>,
) {
    let initial = matches!(wakes, Wakes::Set);
    crate::objects::follow(&registry, resource, initial, USER, stop, |obj| {
        let s = |p: &str| obj.pointer(p).and_then(Value::as_str).map(str::to_owned);
        let wake = match (wakes, s("/metadata/namespace"), s("/metadata/name")) {
            (Wakes::Set, Some(namespace), Some(name)) => Wake::Set { namespace, name },
            (Wakes::Namespace, Some(ns), _) => Wake::Namespace(ns),
            _ => return true,
        };
        tx.send(wake).is_ok()
    })
    .await;
}

/// A package revision change may be the upstream a set waits for: wake its namespace.
async fn feed_from_engine(
    engine: porch_engine::Engine,
    tx: mpsc::UnboundedSender<Wake>,
    mut stop: watch::Receiver<bool>,
) {
    let mut rx = engine.subscribe();
    loop {
        let event = tokio::select! {
            e = rx.recv() => e,
            _ = stopped(&mut stop) => return,
        };
        let wake = match event {
            Ok(e) => Wake::Namespace(e.revision.namespace.clone()),
            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => Wake::All,
            Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
        };
        if tx.send(wake).is_err() {
            return;
        }
    }
}

/// Any stored object may be what a set's `objectSelector` selects: a change wakes the sets of
/// its namespace. Events are left out (every controller action writes one).
async fn feed_from_store(
    hub: Arc<WatchHub>,
    tx: mpsc::UnboundedSender<Wake>,
    mut stop: watch::Receiver<bool>,
) {
    let mut rx = hub.subscribe();
    loop {
        let batch = tokio::select! {
            b = rx.recv() => b,
            _ = stopped(&mut stop) => return,
        };
        let batch = match batch {
            Ok(b) => b,
            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                if tx.send(Wake::All).is_err() {
                    return;
                }
                continue;
            }
            Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
        };
        let mut namespaces: Vec<&str> = batch
            .iter()
            .filter(|e| !e.object.key.resource.ends_with("/events"))
            .map(|e| e.object.key.namespace.as_str())
            .filter(|ns| !ns.is_empty())
            .collect();
        namespaces.sort_unstable();
        namespaces.dedup();
        for ns in namespaces {
            if tx.send(Wake::Namespace(ns.to_owned())).is_err() {
                return;
            }
        }
    }
}
