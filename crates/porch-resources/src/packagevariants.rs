//! Runs the PackageVariant controller of `porch-controllers` in this server: objects through
//! the registry ([`RegistryObjects`]), package revisions through the engine, fed by the
//! PackageVariant watch (the same stream clients get), the engine's events, and the changes
//! of the objects the variants' injectors name (a ConfigMap or custom object injected into
//! the downstream package).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use porch_apiserver::auth::UserInfo;
use porch_apiserver::authz::{Attributes, Authorizer};
use porch_apiserver::{LiveRegistry, WatchHub};
use porch_controllers::access::{Access, Action, Creator};
use porch_controllers::events::EventSink;
use porch_controllers::objects::Objects;
use porch_controllers::packagevariant::{ConcernIndex, Reconciler, WorkQueue, runner};
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
    hub: Arc<WatchHub>,
    events: Arc<dyn EventSink>,
    authorizer: Option<Arc<Authorizer>>,
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
        access: authorizer.map(|a| Arc::new(RbacAccess(a)) as Arc<dyn Access>),
    };
    let queue = Arc::new(WorkQueue::default());
    let workers = tokio::spawn(runner::run_workers(
        reconciler,
        queue.clone(),
        WORKERS,
        stop.clone(),
    ));
    let concerns = Arc::new(ConcernIndex::default());
    let feed = tokio::spawn(runner::feed_from_engine(
        engine,
        objects,
        concerns.clone(),
        queue.clone(),
        stop.clone(),
    ));
    let injectors = Injectors::default();
    let injected = tokio::spawn(feed_from_injected(
        registry.clone(),
        hub.subscribe(),
        injectors.clone(),
        queue.clone(),
        stop.clone(),
    ));
    let mut changes = crate::spec_changes::SpecChanges::default();
    tracing::info!("PackageVariant controller started");
    crate::objects::follow(
        &registry,
        (porch_api::CONFIG_GROUP, "v1alpha1", "packagevariants"),
        true,
        USER,
        stop.clone(),
        |event_type, obj| {
            let s = |p: &str| obj.pointer(p).and_then(Value::as_str).map(str::to_owned);
            if let (Some(ns), Some(name)) = (s("/metadata/namespace"), s("/metadata/name")) {
                injectors.update(&ns, &name, &obj);
                concerns.update(&obj);
                // The controller's own status writes need no reconcile.
                if changes.changed(event_type, &obj) {
                    queue.add((ns, name));
                }
            }
            true
        },
    )
    .await;
    let _ = workers.await;
    let _ = feed.await;
    let _ = injected.await;
    tracing::info!("PackageVariant controller stopped");
}

/// A variant's creator's rights, from the server's RBAC authorizer (the same answers its
/// requests would get).
struct RbacAccess(Arc<Authorizer>);

#[async_trait::async_trait]
impl Access for RbacAccess {
    async fn check(&self, who: &Creator, a: &Action) -> Result<(), String> {
        let user = UserInfo {
            name: who.username.clone(),
            uid: who.uid.clone(),
            groups: who.groups.clone(),
            extra: Default::default(),
        };
        let attrs = Attributes {
            verb: a.verb.clone(),
            resource_request: true,
            api_group: a.group.clone(),
            resource: a.resource.clone(),
            subresource: a.subresource.clone(),
            namespace: a.namespace.clone(),
            name: a.name.clone(),
            ..Default::default()
        };
        if self.0.authorize_fresh(&user, &attrs).await.allowed {
            Ok(())
        } else {
            Err(porch_apiserver::authz::forbidden(&user.name, &attrs, &a.why).message)
        }
    }
}

/// `(group, kind, name)` of an injector; an unset group or kind matches any.
type Injector = (Option<String>, Option<String>, String);

/// Injectors by variant `(namespace, name)`.
type ByVariant = BTreeMap<(String, String), Vec<Injector>>;

/// The injectors of every variant seen, by `(namespace, name)`. A deleted variant's entry
/// stays until its name is reused: it can only cause a needless wake.
#[derive(Clone, Default)]
struct Injectors(Arc<Mutex<ByVariant>>);

impl Injectors {
    fn lock(&self) -> std::sync::MutexGuard<'_, ByVariant> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn update(&self, namespace: &str, name: &str, pv: &Value) {
        let list: Vec<Injector> = pv
            .pointer("/spec/injectors")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|i| {
                let f = |k: &str| i.get(k).and_then(Value::as_str).map(str::to_owned);
                Some((f("group"), f("kind"), f("name")?))
            })
            .collect();
        let key = (namespace.to_owned(), name.to_owned());
        let mut map = self.lock();
        if list.is_empty() {
            map.remove(&key);
        } else {
            map.insert(key, list);
        }
    }

    /// The variants of `namespace` with an injector naming object `name` of `group`/`kind`.
    fn naming(&self, namespace: &str, group: &str, kind: &str, name: &str) -> Vec<String> {
        let matches = |(g, k, n): &Injector| {
            n == name
                && g.as_deref().is_none_or(|g| g == group)
                && k.as_deref().is_none_or(|k| k == kind)
        };
        self.lock()
            .iter()
            .filter(|((ns, _), list)| ns == namespace && list.iter().any(matches))
            .map(|((_, pv), _)| pv.clone())
            .collect()
    }

    fn names(&self) -> BTreeSet<String> {
        self.lock()
            .values()
            .flatten()
            .map(|(_, _, n)| n.clone())
            .collect()
    }
}

/// Queues the variants whose injectors name an object that changed (a ConfigMap edited, a
/// required object created), so the downstream follows it; other writes queue nothing.
async fn feed_from_injected(
    registry: LiveRegistry,
    mut rx: tokio::sync::broadcast::Receiver<Arc<Vec<porch_core::store::StoreEvent>>>,
    injectors: Injectors,
    queue: Arc<WorkQueue>,
    mut stop: watch::Receiver<bool>,
) {
    use tokio::sync::broadcast::error::RecvError;
    loop {
        let batch = tokio::select! {
            b = rx.recv() => b,
            _ = runner::stopped(&mut stop) => return,
        };
        let batch = match batch {
            Ok(b) => b,
            Err(RecvError::Lagged(_)) => {
                // Missed changes: look at every variant with injectors.
                for (ns, name) in injectors.lock().keys() {
                    queue.add((ns.clone(), name.clone()));
                }
                continue;
            }
            Err(RecvError::Closed) => return,
        };
        let names = injectors.names();
        if names.is_empty() {
            continue;
        }
        let mut reg = None;
        for e in batch.iter() {
            let key = &e.object.key;
            if !names.contains(&key.name) || key.namespace.is_empty() {
                continue;
            }
            let reg = reg.get_or_insert_with(|| registry.load());
            let Some(r) = reg
                .resources()
                .iter()
                .find(|r| r.kind.store_resource() == key.resource)
            else {
                continue;
            };
            for pv in injectors.naming(&key.namespace, &r.kind.group, &r.kind.kind, &key.name) {
                queue.add((key.namespace.clone(), pv));
            }
        }
    }
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
