//! The registry of every kind porch-server serves, with their columns, schemas and hooks.

use std::sync::Arc;

use porch_apiserver::{Registry, WatchHub};
use porch_core::store::MetadataStore;

use crate::{core, packagerevisions, repository, variants};

/// Builds the registry: core `v1` namespaces and secrets, the `config.porch.kpt.dev` kinds,
/// and the `porch.kpt.dev` kinds served by `engine`.
pub fn registry(
    store: &Arc<dyn MetadataStore>,
    hub: &Arc<WatchHub>,
    engine: &porch_engine::Engine,
) -> Registry {
    let mut reg = Registry::new();
    core::register(&mut reg, store, hub);
    reg.add_generic(repository::kind(), store, hub);
    reg.add_generic(variants::package_variant_kind(), store, hub);
    reg.add_generic(variants::package_variant_set_kind(), store, hub);
    packagerevisions::register(&mut reg, engine, store);
    reg.prefer(porch_api::CONFIG_GROUP, "v1alpha1");
    reg
}
