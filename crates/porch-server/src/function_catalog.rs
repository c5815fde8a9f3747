//! The registry listing behind function repositories (`Repository` with `content:
//! Function` on an OCI registry): fn-container's OCI client, with the same insecure
//! registries and docker config as pulls.

use crate::cli::Args;

pub struct RegistryCatalog {
    options: fn_container::pull::PullOptions,
}

impl RegistryCatalog {
    pub fn new(args: &Args) -> Self {
        RegistryCatalog {
            options: fn_container::pull::PullOptions {
                insecure_registries: args.insecure_registries.clone(),
                docker_config: fn_container::auth::default_config_path(),
                max_image_bytes: None,
                credentials: Default::default(),
            },
        }
    }
}

#[async_trait::async_trait]
impl porch_resources::functions::ImageCatalog for RegistryCatalog {
    async fn images(&self, registry: &str) -> Result<Vec<(String, Vec<String>)>, String> {
        fn_container::catalog::list_images(registry, &self.options)
            .await
            .map_err(|e| e.to_string())
    }
}
