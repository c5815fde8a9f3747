//! Runs the PackageVariant controller of `porch-controllers` in this server: objects through
//! the registry ([`RegistryObjects`]), package revisions through the engine, fed by the
//! PackageVariant watch (the same stream clients get) and the engine's events.

use std::sync::Arc;

use porch_apiserver::LiveRegistry;
use porch_controllers::events::EventSink;
use porch_controllers::objects::Objects;
use porch_controllers::packagevariant::{Reconciler, WorkQueue, runner};
use porch_controllers::revisions::EngineRevisions;
use serde_json::Value;
use tokio::sync::watch;

use crate::objects::RegistryObjects;

/// Who the controller acts as.
const USER: &str = "system:packagevariant-controller";

/// Reconciles at once at most this many variants.
const WORKERS: usize = 2;

/// Runs until `stop` turns true. Waits for `ready` first (every Repository of the start-up
/// listing loaded), so that no variant is found Stalled for an upstream still loading.
pub async fn run(
    registry: LiveRegistry,
    engine: porch_engine::Engine,
    events: Arc<dyn EventSink>,
    mut ready: watch::Receiver<bool>,
    mut stop: watch::Receiver<bool>,
) {
    tokio::select! {
        _ = runner::stopped(&mut ready) => {}
        _ = runner::stopped(&mut stop) => return,
    }
    let objects: Arc<dyn Objects> = Arc::new(RegistryObjects::new(registry.clone(), USER));
    let reconciler = Reconciler {
        objects: objects.clone(),
        revisions: Arc::new(EngineRevisions {
            engine: engine.clone(),
        }),
        events,
    };
    let queue = Arc::new(WorkQueue::default());
    let workers = tokio::spawn(runner::run_workers(
        reconciler,
        queue.clone(),
        WORKERS,
        stop.clone(),
    ));
    let feed = tokio::spawn(runner::feed_from_engine(
        engine,
        objects,
        queue.clone(),
        stop.clone(),
    ));
    tracing::info!("PackageVariant controller started");
    crate::objects::follow(
        &registry,
        (porch_api::CONFIG_GROUP, "v1alpha1", "packagevariants"),
        true,
        USER,
        stop.clone(),
        |obj| {
            let s = |p: &str| obj.pointer(p).and_then(Value::as_str).map(str::to_owned);
            if let (Some(ns), Some(name)) = (s("/metadata/namespace"), s("/metadata/name")) {
                queue.add((ns, name));
            }
            true
        },
    )
    .await;
    let _ = workers.await;
    let _ = feed.await;
    tracing::info!("PackageVariant controller stopped");
}

/// The PackageVariant controller's actions as Kubernetes Events (through the server's
/// recorder), and in the log.
pub struct ControllerEvents(pub Arc<dyn crate::events::EventSink>);

impl EventSink for ControllerEvents {
    fn record(
        &self,
        object: &porch_controllers::events::InvolvedObject,
        event_type: porch_controllers::events::EventType,
        reason: &str,
        message: &str,
    ) {
        porch_controllers::events::TracingEvents.record(object, event_type, reason, message);
        let involved = crate::events::ObjectRef {
            api_version: object.api_version.clone(),
            kind: object.kind.clone(),
            namespace: object.namespace.clone(),
            name: object.name.clone(),
            uid: object.uid.clone(),
        };
        let type_ = match event_type {
            porch_controllers::events::EventType::Normal => crate::events::EventType::Normal,
            porch_controllers::events::EventType::Warning => crate::events::EventType::Warning,
        };
        // The reason is the verb of the action (Created, Upgraded, Orphaned, ...).
        self.0.record(&involved, type_, reason, reason, message);
    }
}
