//! Function images run in process with their FunctionConfig's pull settings: the Secrets
//! `spec.imagePullSecrets` names, read through the server's own `secrets` resource when an
//! image is pulled, become fn-container logins; `spec.imagePullPolicy` its pull policy.

use std::sync::{Arc, OnceLock};

use kpt::resource_list::ResourceList;
use kpt::runtime::{FunctionOutput, FunctionRef, RunOptions, RuntimeError};
use porch_resources::functions::{ConfiguredImages, ImagePullSettings, PullSecret};

/// The in-process sandbox as [`ConfiguredImages`].
pub struct SandboxImages(pub Arc<fn_container::ContainerRuntime>);

impl ConfiguredImages for SandboxImages {
    fn run(
        &self,
        function: &FunctionRef,
        input: ResourceList,
        options: &RunOptions,
        pull: &ImagePullSettings,
    ) -> Result<FunctionOutput, RuntimeError> {
        let start = |reason: String| RuntimeError::Start {
            function: function.display().to_string(),
            reason,
        };
        let mut credentials = fn_container::auth::Credentials::default();
        for secret in &pull.secrets {
            credentials.extend(match secret {
                PullSecret::DockerConfig(text) => {
                    fn_container::auth::Credentials::from_docker_config(text)
                        .map_err(|e| start(format!("pull Secret: {e}")))?
                }
                PullSecret::Basic { username, password } => {
                    fn_container::auth::Credentials::basic(username, password)
                }
            });
        }
        let policy = pull
            .policy
            .as_deref()
            .map(str::parse::<fn_container::PullPolicy>)
            .transpose()
            .map_err(start)?;
        let pull = fn_container::ImagePull {
            credentials,
            policy,
        };
        self.0.run_with(function, input, options, &pull)
    }
}

/// Reads pull Secrets through the `secrets` resource, once the registry serving it exists
/// (it is built after the runtime that needs it).
pub fn secret_source(
    secrets: Arc<OnceLock<porch_apiserver::Resource>>,
) -> porch_resources::functions::PullSecretSource {
    let handle = tokio::runtime::Handle::current();
    Arc::new(move |namespace: &str, name: &str| {
        let secrets = secrets
            .get()
            .ok_or_else(|| "this server serves no secrets".to_string())?;
        let ctx = porch_apiserver::RequestContext::system("system:function-image-pull");
        let read = async {
            secrets
                .backend
                .get(&ctx, namespace, name)
                .await
                .map_err(|e| format!("cannot read it: {}", e.message))
        };
        // Renders run on their own threads, outside the runtime: block on it there; from a
        // worker of the (multi-threaded) runtime, let it hand its tasks on first.
        let secret = match tokio::runtime::Handle::try_current() {
            Ok(_) => tokio::task::block_in_place(|| handle.block_on(read)),
            Err(_) => handle.block_on(read),
        }?;
        porch_resources::functions::pull_secret(&secret)
    })
}
