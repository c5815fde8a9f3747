//! The registry of every kind porch-server serves, with their columns, schemas and hooks.

use std::sync::Arc;

use porch_apiserver::{LiveRegistry, Registry, WatchHub};
use porch_core::store::MetadataStore;

use crate::events::{EventSink, NoEvents};
use crate::{core, crd, events, packagerevisions, repository, variants};

/// [`registry_with_events`] recording no Events.
pub fn registry(
    store: &Arc<dyn MetadataStore>,
    hub: &Arc<WatchHub>,
    engine: &porch_engine::Engine,
    live: &LiveRegistry,
) -> (Registry, Arc<crd::Crds>) {
    registry_with_events(store, hub, engine, live, Arc::new(NoEvents))
}

/// Builds the registry: core `v1` namespaces, secrets, configmaps and events,
/// `events.k8s.io/v1` events, `apiextensions.k8s.io` CustomResourceDefinitions, the
/// `config.porch.kpt.dev` kinds, and the `porch.kpt.dev` kinds served by `engine`, whose
/// lifecycle changes and render failures go to `sink`; and serves it through `live`, where the
/// kinds of CRDs come and go (call `Crds::restore` to serve the stored ones).
pub fn registry_with_events(
    store: &Arc<dyn MetadataStore>,
    hub: &Arc<WatchHub>,
    engine: &porch_engine::Engine,
    live: &LiveRegistry,
    sink: Arc<dyn EventSink>,
) -> (Registry, Arc<crd::Crds>) {
    let mut reg = Registry::new();
    core::register(&mut reg, store, hub, live);
    events::register(&mut reg, store, hub);
    porch_apiserver::authz::register(&mut reg, store, hub);
    let crds = crd::register(&mut reg, store, hub, live);
    reg.add_generic(repository::kind(), store, hub);
    variants::register(&mut reg, store, hub);
    reg.add_generic(crate::functions::config::kind(), store, hub);
    packagerevisions::register(&mut reg, engine, store, sink);
    reg.prefer(porch_api::CONFIG_GROUP, "v1alpha1");
    live.update(|served| *served = reg.clone());
    (reg, crds)
}
