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

/// The catalog prefix an empty `spec.prefixes` entry stands for.
const CATALOG: &str = "ghcr.io/kptdev/krm-functions-catalog";

/// The FunctionConfigs renders use now (replaced as a whole when one changes).
#[derive(Clone, Default)]
pub struct FunctionConfigs(Arc<RwLock<Arc<Vec<FunctionConfigSpec>>>>);

impl FunctionConfigs {
    pub fn set(&self, specs: Vec<FunctionConfigSpec>) {
        *self
            .0
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(specs);
    }

    pub fn get(&self) -> Arc<Vec<FunctionConfigSpec>> {
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
pub(crate) fn config_for<'a>(
    configs: &'a [FunctionConfigSpec],
    image: &str,
) -> Option<&'a FunctionConfigSpec> {
    let parts = split_image(image);
    configs
        .iter()
        .find(|c| c.image == parts.name && prefix_matches(c, parts.prefix))
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
        let Some(spec) = config_for(&configs, image) else {
            return self.default.run(function, input, options);
        };
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
            Choice::Image => match &self.executors.images {
                Some(images) => images.run(function, input, &run),
                None => Err(RuntimeError::NotFound(format!(
                    "the FunctionConfig of {image:?} asks for its image, but this server runs no function images"
                ))),
            },
            Choice::Default => self.default.run(function, input, &run),
        }
    }

    fn builtin_names(&self) -> Vec<String> {
        self.default.builtin_names()
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
        let configs = [spec()];
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
