//! The registry of every kind porch-server serves, with their columns, schemas and hooks.

use std::sync::Arc;

use porch_apiserver::{LiveRegistry, Registry, WatchHub};
use porch_core::store::MetadataStore;

use crate::{core, crd, packagerevisions, repository, variants};

/// Builds the registry: core `v1` namespaces, secrets and configmaps,
/// `apiextensions.k8s.io` CustomResourceDefinitions, the `config.porch.kpt.dev` kinds, and the
/// `porch.kpt.dev` kinds served by `engine`; and serves it through `live`, where the kinds of
/// CRDs come and go (call `Crds::restore` to serve the stored ones).
pub fn registry(
    store: &Arc<dyn MetadataStore>,
    hub: &Arc<WatchHub>,
    engine: &porch_engine::Engine,
    live: &LiveRegistry,
) -> (Registry, Arc<crd::Crds>) {
    let mut reg = Registry::new();
    core::register(&mut reg, store, hub, live);
    let crds = crd::register(&mut reg, store, hub, live);
    reg.add_generic(repository::kind(), store, hub);
    reg.add_generic(variants::package_variant_kind(), store, hub);
    reg.add_generic(variants::package_variant_set_kind(), store, hub);
    packagerevisions::register(&mut reg, engine);
    reg.prefer(porch_api::CONFIG_GROUP, "v1alpha1");
    live.update(|served| *served = reg.clone());
    (reg, crds)
}
