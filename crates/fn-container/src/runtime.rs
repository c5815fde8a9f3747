//! [`ContainerRuntime`]: the [`FunctionRuntime`] for images.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Instant;

use kpt::resource_list::ResourceList;
use kpt::runtime::exec::ExecRuntime;
use kpt::runtime::wait::{Waited, wait_within};
use kpt::runtime::{FunctionOutput, FunctionRef, FunctionRuntime, RunOptions, RuntimeError};

use crate::ContainerError;
use crate::cache::{Cache, CachedImage};
use crate::pull::PullOptions;
use crate::sandbox::{self, SandboxOptions};
use crate::unpack::resolve_in;

/// Settings of the container runtime.
#[derive(Debug, Clone)]
pub struct ContainerOptions {
    /// Where unpacked images are kept.
    pub cache_dir: PathBuf,
    /// Bound of the cache (least recently used images are evicted past it).
    pub max_cache_bytes: u64,
    /// Registries reached over plain HTTP besides loopback ones.
    pub insecure_registries: Vec<String>,
    /// Docker config file with registry credentials (default `$DOCKER_CONFIG` or `~/.docker`).
    pub docker_config: Option<PathBuf>,
    /// Functions may use the network (kpt's `--network`).
    pub allow_network: bool,
    /// Address-space limit of a function's processes.
    pub memory_limit: Option<u64>,
    /// The bubblewrap program.
    pub bwrap: String,
    /// When to ask the registry (kpt's `--image-pull-policy`).
    pub pull_policy: PullPolicy,
    /// kpt's `fn eval --env`, set in every function's environment.
    pub env: Vec<sandbox::EnvVar>,
    /// kpt's `fn eval --mount`, made in every function's sandbox.
    pub mounts: Vec<sandbox::StorageMount>,
}

/// kpt's `--image-pull-policy`: when a tag already in the cache is pulled again.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PullPolicy {
    /// Pull on every run (the cache keeps the result; an unchanged digest is not unpacked
    /// twice).
    Always,
    /// Pull only what the cache lacks.
    #[default]
    IfNotPresent,
    /// Never pull: a missing image fails the function.
    Never,
}

impl std::str::FromStr for PullPolicy {
    type Err = String;
    /// kpt's values, case-insensitively.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "always" => Ok(PullPolicy::Always),
            "ifnotpresent" => Ok(PullPolicy::IfNotPresent),
            "never" => Ok(PullPolicy::Never),
            _ => Err(format!(
                "invalid image pull policy {s:?}: must be one of Always, IfNotPresent, Never"
            )),
        }
    }
}

/// The pull settings of one image (its FunctionConfig's), over the runtime's own.
#[derive(Debug, Clone, Default)]
pub struct ImagePull {
    /// Logins tried before the docker config's.
    pub credentials: crate::auth::Credentials,
    /// Replaces the runtime's pull policy for this image.
    pub policy: Option<PullPolicy>,
}

impl ContainerOptions {
    /// Defaults with the cache at `cache_dir`: 10 GiB of images, 2 GiB of memory per
    /// function, no network, credentials from the user's docker config.
    pub fn new(cache_dir: impl Into<PathBuf>) -> Self {
        ContainerOptions {
            cache_dir: cache_dir.into(),
            max_cache_bytes: 10 << 30,
            insecure_registries: Vec::new(),
            docker_config: crate::auth::default_config_path(),
            allow_network: false,
            memory_limit: Some(2 << 30),
            bwrap: "bwrap".into(),
            pull_policy: PullPolicy::IfNotPresent,
            env: Vec::new(),
            mounts: Vec::new(),
        }
    }
}

/// Runs function images from OCI registries in a bubblewrap sandbox.
#[derive(Debug, Clone)]
pub struct ContainerRuntime {
    cache: Cache,
    options: ContainerOptions,
}

/// The directories bwrap mounts over, and the working directory, must exist in the rootfs.
fn prepare_rootfs(rootfs: &Path, config_json: &Path) -> Result<(), ContainerError> {
    let config = crate::image::RunConfig::from_json(&std::fs::read_to_string(config_json)?)?;
    for dir in ["proc", "dev", "tmp", config.working_dir()] {
        let parts: Vec<String> = dir
            .split('/')
            .filter(|p| !p.is_empty())
            .map(String::from)
            .collect();
        std::fs::create_dir_all(resolve_in(rootfs, &parts)?)?;
    }
    Ok(())
}

/// Names the image instead of the sandbox command line in exec's errors.
fn rename(err: RuntimeError, image: &str) -> RuntimeError {
    let function = image.to_string();
    match err {
        RuntimeError::Start { reason, .. } => RuntimeError::Start { function, reason },
        RuntimeError::Timeout { seconds, .. } => RuntimeError::Timeout { function, seconds },
        RuntimeError::BadOutput { reason, .. } => RuntimeError::BadOutput { function, reason },
        RuntimeError::Budget { reason, .. } => RuntimeError::Budget { function, reason },
        RuntimeError::Panicked { reason, .. } => RuntimeError::Panicked { function, reason },
        other => other,
    }
}

impl ContainerRuntime {
    /// A runtime with its cache opened (created) at `options.cache_dir`.
    pub fn new(options: ContainerOptions) -> Result<Self, ContainerError> {
        let cache = Cache::open(&options.cache_dir, options.max_cache_bytes)?;
        // reqwest is built without a bundled crypto provider; the workspace uses ring.
        let _ = rustls::crypto::ring::default_provider().install_default();
        Ok(ContainerRuntime { cache, options })
    }

    /// The cache this runtime uses.
    pub fn cache(&self) -> &Cache {
        &self.cache
    }

    /// The image for `image`, pulled as the pull policy says (by default only when not
    /// cached). Waits within the run's budget.
    pub fn ensure_image(&self, image: &str, run: &RunOptions) -> Result<CachedImage, RuntimeError> {
        self.ensure_image_with(image, run, &ImagePull::default())
    }

    /// [`ContainerRuntime::ensure_image`] with `pull`'s credentials and policy.
    pub fn ensure_image_with(
        &self,
        image: &str,
        run: &RunOptions,
        pull: &ImagePull,
    ) -> Result<CachedImage, RuntimeError> {
        let start = |e: ContainerError| RuntimeError::Start {
            function: image.to_string(),
            reason: e.to_string(),
        };
        let reference = crate::reference::resolve(image).map_err(start)?;
        let key = reference.whole();
        let policy = pull.policy.unwrap_or(self.options.pull_policy);
        if policy != PullPolicy::Always
            && let Some(found) = self.cache.lookup(&key)
        {
            return Ok(found);
        }
        if policy == PullPolicy::Never {
            return Err(RuntimeError::Start {
                function: image.to_string(),
                reason: format!(
                    "image {key} is not in the function image cache and the image pull policy \
                     is Never; hint: pull it once with the policy IfNotPresent (porchctl \
                     --image-pull-policy, a FunctionConfig's spec.imagePullPolicy)"
                ),
            });
        }
        let (tx, rx) = mpsc::channel();
        let cache = self.cache.clone();
        let pull_options = PullOptions {
            insecure_registries: self.options.insecure_registries.clone(),
            docker_config: self.options.docker_config.clone(),
            max_image_bytes: Some(self.options.max_cache_bytes),
            credentials: pull.credentials.clone(),
        };
        // The pull runs on its own thread and runtime: callers may be async tasks already.
        std::thread::spawn(move || {
            let result = (|| {
                let mut lock = cache.ref_lock(&key)?;
                let _pulling = lock.write()?;
                // Someone else pulled it meanwhile (Always pulls regardless).
                if policy != PullPolicy::Always
                    && let Some(found) = cache.lookup(&key)
                {
                    return Ok(found);
                }
                let staging = cache.staging()?;
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()?;
                tracing::info!(image = %key, "pulling function image");
                let digest =
                    rt.block_on(crate::pull::pull(&reference, staging.path(), &pull_options))?;
                prepare_rootfs(
                    &staging.path().join("rootfs"),
                    &staging.path().join("config.json"),
                )?;
                cache.insert(&key, &digest, staging)
            })();
            let _ = tx.send(result);
        });
        let deadline = Instant::now() + run.timeout;
        match wait_within(&rx, &run.budget, deadline) {
            Waited::Done(result) => result.map_err(|e| RuntimeError::Start {
                function: image.to_string(),
                reason: format!(
                    "{e}; hint: check the image name and that its registry is reachable \
                     (credentials come from the image's FunctionConfig pull Secrets, then \
                     the docker config; plain-HTTP registries must be allowed as \
                     insecure); built-in functions run without a pull"
                ),
            }),
            Waited::Abandoned => Err(RuntimeError::Panicked {
                function: image.to_string(),
                reason: "the image pull stopped unexpectedly".into(),
            }),
            // The pull goes on in the background and lands in the cache for the next run.
            Waited::Stopped(reason) => Err(RuntimeError::Budget {
                function: image.to_string(),
                reason,
            }),
            Waited::TimedOut => Err(RuntimeError::Timeout {
                function: image.to_string(),
                seconds: run.timeout.as_secs(),
            }),
        }
    }
}

impl ContainerRuntime {
    /// Runs `function` as [`FunctionRuntime::run`] does, pulling its image with `pull`.
    pub fn run_with(
        &self,
        function: &FunctionRef,
        input: ResourceList,
        options: &RunOptions,
        pull: &ImagePull,
    ) -> Result<FunctionOutput, RuntimeError> {
        let FunctionRef::Image(image) = function else {
            return Err(RuntimeError::NotFound(format!(
                "{} is not a function image",
                function.display()
            )));
        };
        let start = |e: ContainerError| RuntimeError::Start {
            function: image.clone(),
            reason: e.to_string(),
        };
        let cached = self.ensure_image_with(image, options, pull)?;
        // Held shared while the function runs so eviction leaves its rootfs alone.
        let lock = self.cache.image_lock(&cached.digest).map_err(start)?;
        let _running = lock.read().map_err(|e| start(e.into()))?;
        let rootfs = cached.rootfs();
        let (uid, gid) = cached.config.ids(&rootfs).map_err(start)?;
        if cached.config.argv().is_empty() {
            return Err(RuntimeError::Start {
                function: image.clone(),
                reason: "the image has neither Entrypoint nor Cmd".into(),
            });
        }
        let argv = sandbox::command(
            &rootfs,
            &cached.config,
            uid,
            gid,
            &SandboxOptions {
                bwrap: self.options.bwrap.clone(),
                allow_network: self.options.allow_network,
                memory_limit: options
                    .budget
                    .sandbox_memory_bytes
                    .or(self.options.memory_limit),
                env: self.options.env.clone(),
                mounts: self.options.mounts.clone(),
            },
        )
        .map_err(|reason| RuntimeError::Start {
            function: image.clone(),
            reason,
        })?;
        let line = argv
            .iter()
            .map(|w| sandbox::quote(w))
            .collect::<Vec<_>>()
            .join(" ");
        let run = RunOptions {
            working_dir: None,
            ..options.clone()
        };
        ExecRuntime::allowed()
            .run(&FunctionRef::Exec(line), input, &run)
            .map_err(|e| rename(e, image))
    }
}

/// The registry's tag list for `image`, asked on a thread of its own with its own
/// runtime (callers may already be async tasks).
fn registry_tags(image: &str, options: &ContainerOptions) -> Result<Vec<String>, String> {
    let image = image.to_string();
    let pull_options = PullOptions {
        insecure_registries: options.insecure_registries.clone(),
        docker_config: options.docker_config.clone(),
        max_image_bytes: None,
        credentials: Default::default(),
    };
    // The HTTP client needs a TLS provider, as for pulls.
    let _ = rustls::crypto::ring::default_provider().install_default();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        rt.block_on(crate::catalog::list_tags(&image, &pull_options))
            .map_err(|e| e.to_string())
    })
    .join()
    .unwrap_or_else(|_| Err("tag listing panicked".to_string()))
}

impl FunctionRuntime for ContainerRuntime {
    fn handles(&self, function: &FunctionRef) -> bool {
        matches!(function, FunctionRef::Image(_))
    }

    fn list_tags(&self, image: &str) -> Vec<Result<Vec<String>, String>> {
        vec![registry_tags(image, &self.options)]
    }

    fn run(
        &self,
        function: &FunctionRef,
        input: ResourceList,
        options: &RunOptions,
    ) -> Result<FunctionOutput, RuntimeError> {
        self.run_with(function, input, options, &ImagePull::default())
    }
}

/// A [`ContainerRuntime`] whose cache is opened on the first image it runs, so commands
/// that only use built-ins never touch the cache directory.
#[derive(Debug)]
pub struct LazyContainerRuntime {
    options: ContainerOptions,
    inner: std::sync::OnceLock<Result<ContainerRuntime, String>>,
}

impl LazyContainerRuntime {
    /// A runtime with these options, not opened yet.
    pub fn new(options: ContainerOptions) -> Self {
        LazyContainerRuntime {
            options,
            inner: std::sync::OnceLock::new(),
        }
    }
}

impl FunctionRuntime for LazyContainerRuntime {
    fn handles(&self, function: &FunctionRef) -> bool {
        matches!(function, FunctionRef::Image(_))
    }

    /// Listing needs no cache: the runtime stays unopened.
    fn list_tags(&self, image: &str) -> Vec<Result<Vec<String>, String>> {
        vec![registry_tags(image, &self.options)]
    }

    fn run(
        &self,
        function: &FunctionRef,
        input: ResourceList,
        options: &RunOptions,
    ) -> Result<FunctionOutput, RuntimeError> {
        let inner = self
            .inner
            .get_or_init(|| ContainerRuntime::new(self.options.clone()).map_err(|e| e.to_string()));
        match inner {
            Ok(rt) => rt.run(function, input, options),
            Err(reason) => Err(RuntimeError::Start {
                function: function.display().to_string(),
                reason: reason.clone(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lazy_runtime_creates_its_cache_only_when_an_image_runs() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = dir.path().join("cache");
        let rt = LazyContainerRuntime::new(ContainerOptions::new(&cache));
        assert!(rt.handles(&FunctionRef::Image("x".into())));
        assert!(!rt.handles(&FunctionRef::Exec("x".into())));
        assert!(!cache.exists());
        // A file where the cache should be: the error names the image and the cause.
        std::fs::write(&cache, "").expect("write");
        let err = rt
            .run(
                &FunctionRef::Image("example.invalid/fn:v1".into()),
                ResourceList::default(),
                &RunOptions::default(),
            )
            .expect_err("no cache");
        assert!(err.to_string().contains("example.invalid/fn:v1"), "{err}");
        assert!(err.to_string().contains("cache"), "{err}");
    }
}
