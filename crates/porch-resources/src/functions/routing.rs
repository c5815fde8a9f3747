//! The function runtime porch-server renders with: FunctionConfig decides, per image, which
//! executor runs it (a built-in, a local binary, or the image in the sandbox) and what one
//! call may spend; without a matching FunctionConfig, built-ins win for their images,
//! `exec:` steps go to the exec runtime and every other image to the sandbox.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::Instant;

use kpt::resource_list::ResourceList;
use kpt::runtime::{FunctionOutput, FunctionRef, FunctionRuntime, RunOptions, RuntimeError};
use porch_api::FunctionConfigSpec;

use super::config::{parse_duration, parse_quantity};
use super::pull::{ConfiguredImages, ImagePullSettings, PullSecretSource};

/// The catalog prefix an empty `spec.prefixes` entry stands for.
const CATALOG: &str = "ghcr.io/kptdev/krm-functions-catalog";

/// One applied FunctionConfig: its spec and where it lives (its pull Secrets are there).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Configured {
    pub namespace: String,
    pub name: String,
    pub spec: FunctionConfigSpec,
}

/// The FunctionConfigs renders use now (replaced as a whole when one changes).
#[derive(Clone, Default)]
pub struct FunctionConfigs(Arc<RwLock<Arc<Vec<Configured>>>>);

impl FunctionConfigs {
    pub fn set(&self, configs: Vec<Configured>) {
        *self
            .0
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(configs);
    }

    pub fn get(&self) -> Arc<Vec<Configured>> {
        self.0
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

/// The executors a FunctionConfig chooses between.
pub struct Executors {
    /// Functions built into the server (`goExecutor`; images they name by default).
    pub builtins: Arc<dyn FunctionRuntime>,
    /// `exec:` pipeline steps (allowed or denied by the server's flag).
    pub exec: Arc<dyn FunctionRuntime>,
    /// Runs a `binaryExecutor` path (always allowed: FunctionConfigs are the admin's).
    pub binary: Arc<dyn FunctionRuntime>,
    /// Function images (`podExecutor`; every other image); `None`: none run.
    pub images: Option<Arc<dyn FunctionRuntime>>,
    /// The same images run with a FunctionConfig's pull settings (`None`: `images` cannot
    /// take them, as a remote function runner, and pulls with its own credentials).
    pub configured_images: Option<Arc<dyn ConfiguredImages>>,
    /// Reads the pull Secrets FunctionConfigs name.
    pub pull_secrets: Option<PullSecretSource>,
    /// What relative `binaryExecutor` paths are relative to.
    pub functions_dir: PathBuf,
}

/// [`FunctionRuntime`] honouring FunctionConfigs.
pub struct ConfiguredRuntime {
    executors: Executors,
    configs: FunctionConfigs,
    /// The runtimes tried in order when no FunctionConfig decides.
    default: kpt::runtime::Runtimes,
}

struct Shared(Arc<dyn FunctionRuntime>);

impl FunctionRuntime for Shared {
    fn handles(&self, f: &FunctionRef) -> bool {
        self.0.handles(f)
    }
    fn run(
        &self,
        f: &FunctionRef,
        input: ResourceList,
        o: &RunOptions,
    ) -> Result<FunctionOutput, RuntimeError> {
        self.0.run(f, input, o)
    }
    fn builtin_names(&self) -> Vec<String> {
        self.0.builtin_names()
    }
    fn list_tags(&self, image: &str) -> Vec<Result<Vec<String>, String>> {
        self.0.list_tags(image)
    }
}

/// The parts of an image reference a FunctionConfig matches on.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct ImageParts<'a> {
    pub prefix: &'a str,
    pub name: &'a str,
    pub tag: &'a str,
}

pub(crate) fn split_image(image: &str) -> ImageParts<'_> {
    let no_digest = image.split('@').next().unwrap_or(image);
    let (prefix, last) = match no_digest.rsplit_once('/') {
        Some((p, l)) => (p, l),
        None => ("", no_digest),
    };
    let (name, tag) = last.split_once(':').unwrap_or((last, ""));
    ImageParts { prefix, name, tag }
}

fn prefix_matches(spec: &FunctionConfigSpec, prefix: &str) -> bool {
    let prefix = prefix.trim_end_matches('/');
    if spec.prefixes.is_empty() {
        return prefix.is_empty();
    }
    spec.prefixes.iter().any(|p| {
        let p = p.trim_end_matches('/');
        p == prefix || (p.is_empty() && prefix == CATALOG)
    })
}

/// The FunctionConfig of `image`, if any.
pub(crate) fn config_for<'a>(configs: &'a [Configured], image: &str) -> Option<&'a Configured> {
    let parts = split_image(image);
    configs
        .iter()
        .find(|c| c.spec.image == parts.name && prefix_matches(&c.spec, parts.prefix))
}

/// Which executor a FunctionConfig picks for a tag.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Choice {
    Builtin(String),
    Binary(String),
    Image,
    /// The config names no executor for this tag.
    Default,
}

pub(crate) fn choose(spec: &FunctionConfigSpec, tag: &str) -> Choice {
    let has = |tags: &[String]| tags.iter().any(|t| t == tag);
    if let Some(go) = &spec.go_executor
        && has(&go.tags)
    {
        return Choice::Builtin(
            go.id
                .clone()
                .filter(|i| !i.is_empty())
                .unwrap_or_else(|| spec.image.clone()),
        );
    }
    if let Some(bin) = &spec.binary_executor
        && has(&bin.tags)
    {
        return Choice::Binary(bin.path.clone());
    }
    if let Some(pod) = &spec.pod_executor
        && (pod.tags.is_empty() || has(&pod.tags))
    {
        return Choice::Image;
    }
    Choice::Default
}

/// The options of one call under `spec`'s limits (unset limits keep the server's).
pub(crate) fn limited(spec: &FunctionConfigSpec, options: &RunOptions) -> RunOptions {
    let mut run = options.clone();
    let memory = spec
        .limits
        .as_ref()
        .and_then(|l| l.memory.as_deref())
        .or_else(|| pod_memory(spec))
        .and_then(parse_quantity);
    if let Some(m) = memory {
        run.budget.sandbox_memory_bytes = Some(m);
        run.budget.max_memory_bytes = usize::try_from(m).ok();
    }
    let Some(limits) = &spec.limits else {
        return run;
    };
    if let Some(t) = limits.timeout.as_deref().and_then(parse_duration) {
        run.timeout = t;
        // In-process functions (starlark) stop at the budget's deadline, not the timeout.
        let deadline = Instant::now() + t;
        if run.budget.deadline.is_none_or(|d| deadline < d) {
            run.budget.deadline = Some(deadline);
            run.budget.time_limit = Some(t);
        }
    }
    let positive = |n: Option<i64>| n.filter(|n| *n > 0).and_then(|n| usize::try_from(n).ok());
    if let Some(n) = positive(limits.max_output_resources) {
        run.budget.max_output_items = Some(n);
    }
    if let Some(n) = positive(limits.max_output_bytes) {
        run.budget.max_output_bytes = Some(n);
    }
    if let Some(n) = positive(limits.max_steps) {
        run.budget.max_steps = u64::try_from(n).ok();
    }
    run
}

/// Porch's `podExecutor.templateOverrides.container.resources.limits.memory`.
fn pod_memory(spec: &FunctionConfigSpec) -> Option<&str> {
    spec.pod_executor
        .as_ref()?
        .template_overrides
        .as_ref()?
        .container
        .as_ref()?
        .resources
        .as_ref()?
        .pointer("/limits/memory")?
        .as_str()
}

/// Names the image, not the binary standing in for it, in a run's error.
fn named(err: RuntimeError, image: &str) -> RuntimeError {
    let function = image.to_string();
    match err {
        RuntimeError::Start { reason, .. } => RuntimeError::Start { function, reason },
        RuntimeError::Timeout { seconds, .. } => RuntimeError::Timeout { function, seconds },
        RuntimeError::BadOutput { reason, .. } => RuntimeError::BadOutput { function, reason },
        RuntimeError::Budget { reason, .. } => RuntimeError::Budget { function, reason },
        other => other,
    }
}

impl ConfiguredRuntime {
    pub fn new(executors: Executors, configs: FunctionConfigs) -> Self {
        let mut default = kpt::runtime::Runtimes::new()
            .with(Shared(executors.builtins.clone()))
            .with(Shared(executors.exec.clone()));
        if let Some(images) = &executors.images {
            default.push(Box::new(Shared(images.clone())));
        }
        ConfiguredRuntime {
            executors,
            configs,
            default,
        }
    }
}

impl ConfiguredRuntime {
    /// Runs the image itself, pulled with its FunctionConfig's Secrets and policy.
    fn run_image(
        &self,
        configured: &Configured,
        function: &FunctionRef,
        input: ResourceList,
        run: &RunOptions,
    ) -> Result<FunctionOutput, RuntimeError> {
        let image = function.display();
        let Some(images) = &self.executors.images else {
            return Err(RuntimeError::NotFound(format!(
                "the FunctionConfig of {image:?} asks for its image, but this server runs no function images"
            )));
        };
        let spec = &configured.spec;
        let configured_pull =
            !spec.image_pull_secrets.is_empty() || spec.image_pull_policy.is_some();
        let Some(with_settings) = self
            .executors
            .configured_images
            .as_ref()
            .filter(|_| configured_pull)
        else {
            return images.run(function, input, run);
        };
        let mut pull = ImagePullSettings {
            secrets: Vec::new(),
            policy: spec.image_pull_policy.clone(),
        };
        for secret in &spec.image_pull_secrets {
            let read = match &self.executors.pull_secrets {
                Some(source) => source(&configured.namespace, &secret.name),
                None => Err("this server reads no Secrets".to_string()),
            };
            pull.secrets
                .push(read.map_err(|reason| RuntimeError::Start {
                    function: image.to_string(),
                    reason: format!(
                        "pull Secret {:?} of FunctionConfig {}/{}: {reason}",
                        secret.name, configured.namespace, configured.name
                    ),
                })?);
        }
        with_settings.run(function, input, run, &pull)
    }
}

impl FunctionRuntime for ConfiguredRuntime {
    fn handles(&self, function: &FunctionRef) -> bool {
        self.default.handles(function)
            || matches!(function, FunctionRef::Image(i) if config_for(&self.configs.get(), i).is_some())
    }

    fn run(
        &self,
        function: &FunctionRef,
        input: ResourceList,
        options: &RunOptions,
    ) -> Result<FunctionOutput, RuntimeError> {
        let FunctionRef::Image(image) = function else {
            return self.default.run(function, input, options);
        };
        let configs = self.configs.get();
        let Some(configured) = config_for(&configs, image) else {
            return self.default.run(function, input, options);
        };
        let spec = &configured.spec;
        let run = limited(spec, options);
        match choose(spec, split_image(image).tag) {
            Choice::Builtin(id) => {
                let builtin = FunctionRef::Image(id.clone());
                if !self.executors.builtins.handles(&builtin) {
                    return Err(RuntimeError::NotFound(format!(
                        "the FunctionConfig of {image:?} names the built-in {id:?}, which this server does not have"
                    )));
                }
                self.executors.builtins.run(&builtin, input, &run)
            }
            Choice::Binary(path) => {
                let path = self.executors.functions_dir.join(path);
                let exec = FunctionRef::Exec(path.to_string_lossy().into_owned());
                self.executors
                    .binary
                    .run(&exec, input, &run)
                    .map_err(|e| named(e, image))
            }
            Choice::Image => self.run_image(configured, function, input, &run),
            // Built-ins still win for their images; any other image is pulled as configured.
            Choice::Default if !self.executors.builtins.handles(function) => {
                self.run_image(configured, function, input, &run)
            }
            Choice::Default => self.default.run(function, input, &run),
        }
    }

    fn builtin_names(&self) -> Vec<String> {
        self.default.builtin_names()
    }

    /// A step's `tag:` constraint is resolved against the image runtime's registry.
    fn list_tags(&self, image: &str) -> Vec<Result<Vec<String>, String>> {
        self.default.list_tags(image)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use porch_api::functionconfig::{
        BinaryExecutorConfig, FunctionLimits, GoExecutorConfig, PodExecutorConfig,
    };

    fn spec() -> FunctionConfigSpec {
        FunctionConfigSpec {
            image: "set-namespace".into(),
            prefixes: vec!["".into(), "example.com/fns".into()],
            go_executor: Some(GoExecutorConfig {
                tags: vec!["v0.4".into()],
                id: None,
            }),
            binary_executor: Some(BinaryExecutorConfig {
                tags: vec!["v0.5".into()],
                path: "bin/ns".into(),
            }),
            pod_executor: Some(PodExecutorConfig::default()),
            ..Default::default()
        }
    }

    #[test]
    fn images_match_by_name_and_prefix() {
        let configs = [Configured {
            spec: spec(),
            ..Configured::default()
        }];
        for image in [
            "set-namespace:v0.4",
            "ghcr.io/kptdev/krm-functions-catalog/set-namespace:v0.4",
            "example.com/fns/set-namespace:v1",
        ] {
            assert!(config_for(&configs, image).is_some(), "{image}");
        }
        assert!(config_for(&configs, "other.io/set-namespace:v0.4").is_none());
        assert!(config_for(&configs, "set-labels:v0.4").is_none());
    }

    #[test]
    fn the_executor_follows_the_tag() {
        let s = spec();
        assert_eq!(choose(&s, "v0.4"), Choice::Builtin("set-namespace".into()));
        assert_eq!(choose(&s, "v0.5"), Choice::Binary("bin/ns".into()));
        assert_eq!(choose(&s, "v9"), Choice::Image);
        let no_pod = FunctionConfigSpec {
            pod_executor: None,
            ..spec()
        };
        assert_eq!(choose(&no_pod, "v9"), Choice::Default);
    }

    /// Records the pull settings each image run gets.
    #[derive(Default)]
    struct Recorder(std::sync::Mutex<Vec<(String, ImagePullSettings)>>);

    impl ConfiguredImages for Recorder {
        fn run(
            &self,
            f: &FunctionRef,
            input: ResourceList,
            _: &RunOptions,
            pull: &ImagePullSettings,
        ) -> Result<FunctionOutput, RuntimeError> {
            self.0
                .lock()
                .expect("lock")
                .push((f.display().to_string(), pull.clone()));
            Ok(FunctionOutput {
                list: input,
                exit_code: 0,
                stderr: String::new(),
            })
        }
    }

    impl FunctionRuntime for Recorder {
        fn handles(&self, f: &FunctionRef) -> bool {
            matches!(f, FunctionRef::Image(_))
        }
        fn run(
            &self,
            f: &FunctionRef,
            input: ResourceList,
            o: &RunOptions,
        ) -> Result<FunctionOutput, RuntimeError> {
            ConfiguredImages::run(self, f, input, o, &ImagePullSettings::default())
        }
        fn list_tags(&self, image: &str) -> Vec<Result<Vec<String>, String>> {
            vec![Ok(vec![format!("{image}-v1")])]
        }
    }

    /// `tag:` constraints in the server's renders reach the image runtime's tag lister
    /// through the FunctionConfig routing.
    /// Built-ins, exec denied, and `recorder` as the image runtime.
    fn executors(recorder: &Arc<Recorder>) -> Executors {
        let images: Arc<dyn FunctionRuntime> = recorder.clone();
        let exec: Arc<dyn FunctionRuntime> = Arc::new(kpt::runtime::exec::ExecRuntime::denied());
        Executors {
            builtins: Arc::new(krm_functions::Builtins),
            exec: exec.clone(),
            binary: exec,
            images: Some(images),
            configured_images: None,
            pull_secrets: None,
            functions_dir: PathBuf::from("/nonexistent"),
        }
    }

    #[test]
    fn tag_listing_reaches_the_image_runtime() {
        let recorder = Arc::new(Recorder::default());
        let rt = ConfiguredRuntime::new(executors(&recorder), FunctionConfigs::default());
        assert_eq!(
            rt.list_tags("reg.example/fn"),
            vec![Ok(vec!["reg.example/fn-v1".to_string()])]
        );
    }

    #[test]
    fn a_config_s_pull_secrets_are_read_from_its_namespace_for_its_image() {
        use crate::functions::pull::PullSecret;
        let recorder = Arc::new(Recorder::default());
        let executors = Executors {
            configured_images: Some(recorder.clone()),
            pull_secrets: Some(Arc::new(|ns: &str, name: &str| match (ns, name) {
                ("team", "creds") => Ok(PullSecret::Basic {
                    username: "u".into(),
                    password: "p".into(),
                }),
                _ => Err(format!("secrets \"{name}\" not found")),
            })),
            ..executors(&recorder)
        };
        let configs = FunctionConfigs::default();
        let with = |name: &str, image: &str, secret: &str| Configured {
            namespace: "team".into(),
            name: name.into(),
            spec: FunctionConfigSpec {
                image: image.into(),
                prefixes: vec!["reg.example".into()],
                image_pull_secrets: vec![porch_api::SecretRef {
                    name: secret.into(),
                }],
                image_pull_policy: Some("Always".into()),
                ..Default::default()
            },
        };
        configs.set(vec![
            with("private", "private", "creds"),
            with("broken", "broken", "missing"),
        ]);
        let rt = ConfiguredRuntime::new(executors, configs);
        let run = |image: &str| {
            rt.run(
                &FunctionRef::Image(image.into()),
                ResourceList::default(),
                &RunOptions::default(),
            )
        };
        run("reg.example/private:v1").expect("ran");
        run("reg.example/other:v1").expect("ran");
        let err = run("reg.example/broken:v1").expect_err("unreadable Secret");
        assert!(err.to_string().contains("team/broken"), "{err}");
        assert!(err.to_string().contains("\"missing\""), "{err}");
        let calls = recorder.0.lock().expect("lock").clone();
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].0, "reg.example/private:v1");
        assert_eq!(
            calls[0].1,
            ImagePullSettings {
                secrets: vec![PullSecret::Basic {
                    username: "u".into(),
                    password: "p".into()
                }],
                policy: Some("Always".into()),
            }
        );
        // Without a FunctionConfig, the server's settings.
        assert_eq!(calls[1].1, ImagePullSettings::default());
    }

    #[test]
    fn limits_replace_the_server_budget_for_one_call() {
        let s = FunctionConfigSpec {
            limits: Some(FunctionLimits {
                timeout: Some("2s".into()),
                memory: Some("64Mi".into()),
                max_output_resources: Some(10),
                ..Default::default()
            }),
            ..spec()
        };
        let server = RunOptions::default();
        let run = limited(&s, &server);
        assert_eq!(run.timeout, std::time::Duration::from_secs(2));
        assert_eq!(run.budget.max_output_items, Some(10));
        assert_eq!(run.budget.sandbox_memory_bytes, Some(64 << 20));
        assert!(run.budget.deadline.is_some());
        assert_eq!(limited(&spec(), &server).timeout, server.timeout);
    }
}
