//! Functions on the server: the `functionconfigs` kind and the runtime that honours it
//! ([`routing`], kept current by [`apply`]), and the read-only `functions` discovery kind
//! ([`discovery`]). [`pull`]: how a FunctionConfig's image is pulled (Secrets, policy).

pub mod apply;
pub(crate) mod config;
pub mod discovery;
pub mod pull;
pub mod routing;

use std::sync::Arc;

use porch_apiserver::LiveRegistry;

pub use config::{parse_duration, parse_quantity};
pub use discovery::{FunctionsBackend, ImageCatalog};
pub use pull::{ConfiguredImages, ImagePullSettings, PullSecret, PullSecretSource, pull_secret};
pub use routing::{Configured, ConfiguredRuntime, Executors, FunctionConfigs};

/// Serves `porch.kpt.dev/v1alpha1` `functions` from `live`: built-ins, the images of
/// `configs`, and the images `catalog` lists for function repositories.
pub fn serve(
    live: &LiveRegistry,
    configs: FunctionConfigs,
    catalog: Option<Arc<dyn ImageCatalog>>,
) {
    let backend = Arc::new(FunctionsBackend::new(live.clone(), configs, catalog));
    live.update(|reg| {
        reg.add(discovery::kind(), backend);
    });
}
