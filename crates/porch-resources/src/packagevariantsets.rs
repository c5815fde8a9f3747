//! Runs the PackageVariantSet controller of `porch-controllers` in this server: objects
//! through the registry ([`RegistryObjects`]), woken by the watches of PackageVariantSets,
//! PackageVariants and Repositories (the streams clients get), by changes of the stored
//! objects of a kind some set's `objectSelector` names (custom kinds included; other kinds
//! wake nothing), and by the engine's events about a set's upstream package, with a periodic
//! sweep behind them. A set with nothing to do is not looked at.

mod interest;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use porch_apiserver::{LiveRegistry, WatchHub};
use porch_controllers::objects::Objects;
use porch_controllers::packagevariant::runner::stopped;
use porch_controllers::packagevariantset::packagevariantsets_gvr;
use porch_controllers::packagevariantset::runner::{self, Wake};
use porch_core::store::EventType;
use serde_json::Value;
use tokio::sync::{mpsc, watch};

use crate::objects::RegistryObjects;
use interest::Interest;

/// The sets' dependencies, shared by the feeds (never locked across an await).
type SharedInterest = Arc<Mutex<Interest>>;

fn lock(interest: &SharedInterest) -> std::sync::MutexGuard<'_, Interest> {
    interest
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

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
    let interest = SharedInterest::default();
    // Subscribed before the sets are listed, so no set's change falls in between.
    let store_events = hub.subscribe();
    relearn(objects.as_ref(), &interest).await;
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
    let barrier = engine.clone();
    feeds.push(tokio::spawn(feed_from_engine(
        engine,
        interest.clone(),
        tx.clone(),
        stop.clone(),
    )));
    feeds.push(tokio::spawn(feed_from_store(
        registry.clone(),
        objects.clone(),
        store_events,
        interest,
        tx.clone(),
        stop.clone(),
    )));
    drop(tx);
    tracing::info!("PackageVariantSet controller started");
    // The runner returns when every feed (sender) has stopped.
    // On a replica, each sweep decides from an index that has every write made before.
    let caught_up: runner::CaughtUp = Arc::new(move || {
        let engine = barrier.clone();
        Box::pin(async move { engine.caught_up().await })
    });
    runner::run(objects, rx, RESYNC, caught_up).await;
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
    let mut changes = crate::spec_changes::SpecChanges::default();
    crate::objects::follow(
        &registry,
        resource,
        initial,
        USER,
        stop,
        |event_type, obj| {
            // Status writes (the controllers' own, of sets and variants) wake nothing: neither
            // the set's reconcile nor the variants it generates depend on a status.
            if !changes.changed(event_type, &obj) {
                return true;
            }
            let s = |p: &str| obj.pointer(p).and_then(Value::as_str).map(str::to_owned);
            let wake = match (wakes, s("/metadata/namespace"), s("/metadata/name")) {
                (Wakes::Set, Some(namespace), Some(name)) => Wake::Set { namespace, name },
                (Wakes::Namespace, Some(ns), _) => Wake::Namespace(ns),
                _ => return true,
            };
            tx.send(wake).is_ok()
        },
    )
    .await;
}

/// A package revision change may be the upstream a set waits for: wake the namespace when
/// some set of it takes that package as its upstream.
async fn feed_from_engine(
    engine: porch_engine::Engine,
    interest: SharedInterest,
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
            Ok(e) => {
                let r = &e.revision;
                if !lock(&interest).wants_upstream(
                    &r.namespace,
                    r.key.repository.as_str(),
                    r.key.package.as_str(),
                ) {
                    continue;
                }
                Wake::Namespace(r.namespace.clone())
            }
            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => Wake::All,
            Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
        };
        if tx.send(wake).is_err() {
            return;
        }
    }
}

/// Keeps the sets' dependencies current from the store's changes of PackageVariantSets, and
/// wakes the sets of a namespace when an object of a kind one of them selects
/// (`objectSelector`) changes there. Every other write (drafts, events, ConfigMaps nobody
/// selects) wakes nothing.
async fn feed_from_store(
    registry: LiveRegistry,
    objects: Arc<dyn Objects>,
    mut rx: tokio::sync::broadcast::Receiver<Arc<Vec<porch_core::store::StoreEvent>>>,
    interest: SharedInterest,
    tx: mpsc::UnboundedSender<Wake>,
    mut stop: watch::Receiver<bool>,
) {
    let sets_resource = registry
        .load()
        .find(porch_api::CONFIG_GROUP, "v1alpha2", "packagevariantsets")
        .map(|r| r.kind.store_resource());
    loop {
        let batch = tokio::select! {
            b = rx.recv() => b,
            _ = stopped(&mut stop) => return,
        };
        let batch = match batch {
            Ok(b) => b,
            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                // Missed changes, the sets' own among them.
                relearn(objects.as_ref(), &interest).await;
                if tx.send(Wake::All).is_err() {
                    return;
                }
                continue;
            }
            Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
        };
        // The sets' own changes first, so a set and an object it selects written together
        // are seen together.
        for e in batch.iter() {
            if sets_resource.as_deref() == Some(e.object.key.resource.as_str())
                && let Ok(obj) = serde_json::from_slice::<Value>(&e.object.data)
            {
                lock(&interest).update(&obj, e.event_type == EventType::Deleted);
            }
        }
        let selected = {
            let reg = registry.load();
            lock(&interest).selected(|api_version, kind| {
                reg.resources()
                    .iter()
                    .find(|r| r.kind.api_version() == api_version && r.kind.kind == kind)
                    .map(|r| r.kind.store_resource())
            })
        };
        if selected.is_empty() {
            continue;
        }
        let namespaces: BTreeSet<&str> = batch
            .iter()
            .filter(|e| {
                selected.contains(&(
                    e.object.key.namespace.clone(),
                    e.object.key.resource.clone(),
                ))
            })
            .map(|e| e.object.key.namespace.as_str())
            .collect();
        for ns in namespaces {
            if tx.send(Wake::Namespace(ns.to_owned())).is_err() {
                return;
            }
        }
    }
}

/// Rebuilds the sets' dependencies from a listing of every set.
async fn relearn(objects: &dyn Objects, interest: &SharedInterest) {
    match objects.list(&packagevariantsets_gvr(), None, "").await {
        Ok(sets) => {
            let mut fresh = Interest::default();
            for set in &sets {
                fresh.update(set, false);
            }
            *lock(interest) = fresh;
        }
        Err(e) => tracing::warn!(error = %e, "cannot list PackageVariantSets"),
    }
}
