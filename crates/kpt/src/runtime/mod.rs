//! Function runtimes: how a pipeline step is actually executed.
//!
//! [`FunctionRuntime`] is the port; [`exec::ExecRuntime`] runs `exec:` functions as
//! subprocesses speaking the ResourceList protocol; the `krm-functions` crate provides
//! native built-ins chosen by image name; [`Runtimes`] tries several in order and
//! produces the "no runtime" error that tells the user what is available.

pub mod budget;
pub mod exec;
pub mod wait;

pub use budget::{Budget, BudgetExceeded, CancelOnDrop, CancelToken};

use std::time::Duration;

use crate::resource_list::ResourceList;

/// The function a pipeline step names: an OCI image or an `exec:` command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FunctionRef {
    /// A container image reference, e.g. `ghcr.io/kptdev/krm-functions-catalog/set-namespace:v0.4`.
    Image(String),
    /// A command line run directly (shell-split, no shell).
    Exec(String),
}

impl FunctionRef {
    /// The text kpt shows for the step (`image` or `exec` value).
    pub fn display(&self) -> &str {
        match self {
            FunctionRef::Image(s) | FunctionRef::Exec(s) => s,
        }
    }
}

/// Short name of a function image: the last path segment without tag or digest.
/// `gcr.io/kpt-fn/set-namespace:v0.4.1` and
/// `ghcr.io/kptdev/krm-functions-catalog/set-namespace:latest` are both `set-namespace`.
pub fn image_short_name(image: &str) -> &str {
    let no_digest = image.split('@').next().unwrap_or(image);
    let last = no_digest.rsplit('/').next().unwrap_or(no_digest);
    last.split(':').next().unwrap_or(last)
}

/// The tag of an image reference ("" when it has none, e.g. a digest only).
pub fn image_tag(image: &str) -> &str {
    let no_digest = image.split('@').next().unwrap_or(image);
    let last = no_digest.rsplit('/').next().unwrap_or(no_digest);
    last.split_once(':').map_or("", |(_, t)| t)
}

/// What a function run produced. A non-zero exit code fails the step.
#[derive(Debug, Clone, Default)]
pub struct FunctionOutput {
    /// The function's output list (items and results).
    pub list: ResourceList,
    /// Process exit code (native functions: 0, or 1 when they report an error).
    pub exit_code: i32,
    /// Captured stderr (free text).
    pub stderr: String,
}

/// Options every runtime honours.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Kill an exec function after this long.
    pub timeout: Duration,
    /// Directory relative `exec:` paths resolve against.
    pub working_dir: Option<std::path::PathBuf>,
    /// What the render may spend (cancellation, deadline, output and memory limits).
    pub budget: Budget,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            timeout: Duration::from_secs(300),
            working_dir: None,
            budget: Budget::default(),
        }
    }
}

/// A function could not be run at all (as opposed to running and failing).
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// No runtime handles this function.
    #[error("{0}")]
    NotFound(String),
    /// The process could not be started.
    #[error("failed to start {function:?}: {reason}")]
    Start { function: String, reason: String },
    /// The function ran longer than the timeout.
    #[error("function {function:?} timed out after {seconds}s")]
    Timeout { function: String, seconds: u64 },
    /// The function wrote something that is not a ResourceList.
    #[error("function {function:?} wrote invalid output: {reason}")]
    BadOutput { function: String, reason: String },
    /// The render's budget stopped the function.
    #[error("function {function:?} stopped: {reason}")]
    Budget {
        function: String,
        reason: BudgetExceeded,
    },
    /// The function panicked (a bug in a built-in function, reported as its failure).
    #[error("function {function:?} failed unexpectedly: {reason}")]
    Panicked { function: String, reason: String },
    /// exec functions are disabled.
    #[error("exec function {0:?} is not allowed; hint: pass --allow-exec to run exec functions")]
    ExecNotAllowed(String),
    /// The runtime refuses the function before it starts (see [`FunctionRuntime::refusal`]).
    #[error("{0}")]
    Refused(String),
}

/// A way to execute KRM functions.
pub trait FunctionRuntime: Send + Sync {
    /// Does this runtime handle the function?
    fn handles(&self, function: &FunctionRef) -> bool;
    /// Run it on `input`.
    fn run(
        &self,
        function: &FunctionRef,
        input: ResourceList,
        options: &RunOptions,
    ) -> Result<FunctionOutput, RuntimeError>;
    /// Names of the images this runtime provides natively (for error messages).
    fn builtin_names(&self) -> Vec<String> {
        Vec::new()
    }
    /// Why this runtime handles the function only to refuse it (an exec function
    /// without kpt's `--allow-exec`), if it does. A render asks before it runs anything.
    fn refusal(&self, _function: &FunctionRef) -> Option<String> {
        None
    }
    /// The tags of `image` (a repository, no tag) as each of this runtime's tag
    /// listers sees them (kpt HEAD's `TagLister`s, asked when a step's `tag:` is a
    /// version constraint): one entry per lister, its failure as text. None by default.
    fn list_tags(&self, _image: &str) -> Vec<Result<Vec<String>, String>> {
        Vec::new()
    }
}

/// An ordered set of runtimes: the first that handles a function runs it.
#[derive(Default)]
pub struct Runtimes {
    runtimes: Vec<Box<dyn FunctionRuntime>>,
}

impl std::fmt::Debug for Runtimes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtimes")
            .field("count", &self.runtimes.len())
            .finish()
    }
}

impl Runtimes {
    /// An empty set (every function is "not found").
    pub fn new() -> Self {
        Self::default()
    }
    /// Add a runtime after the existing ones.
    pub fn with(mut self, runtime: impl FunctionRuntime + 'static) -> Self {
        self.runtimes.push(Box::new(runtime));
        self
    }
    /// Add a boxed runtime.
    pub fn push(&mut self, runtime: Box<dyn FunctionRuntime>) {
        self.runtimes.push(runtime);
    }
}

impl FunctionRuntime for Runtimes {
    fn handles(&self, function: &FunctionRef) -> bool {
        self.runtimes.iter().any(|r| r.handles(function))
    }

    fn run(
        &self,
        function: &FunctionRef,
        input: ResourceList,
        options: &RunOptions,
    ) -> Result<FunctionOutput, RuntimeError> {
        match self.runtimes.iter().find(|r| r.handles(function)) {
            Some(r) => r.run(function, input, options),
            None => Err(RuntimeError::NotFound(self.not_found_message(function))),
        }
    }

    fn refusal(&self, function: &FunctionRef) -> Option<String> {
        self.runtimes
            .iter()
            .find(|r| r.handles(function))
            .and_then(|r| r.refusal(function))
    }

    fn list_tags(&self, image: &str) -> Vec<Result<Vec<String>, String>> {
        self.runtimes
            .iter()
            .flat_map(|r| r.list_tags(image))
            .collect()
    }

    fn builtin_names(&self) -> Vec<String> {
        let mut all: Vec<String> = self
            .runtimes
            .iter()
            .flat_map(|r| r.builtin_names())
            .collect();
        all.sort();
        all.dedup();
        all
    }
}

impl Runtimes {
    fn not_found_message(&self, function: &FunctionRef) -> String {
        match function {
            FunctionRef::Image(image) => {
                let names = self.builtin_names();
                let list = if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                };
                format!(
                    "no runtime for function image {image:?}: container runtimes are not available; \
                     built-in functions (any registry and tag): {list}; \
                     hint: map the image to a local executable with an `exec:` function \
                     (or --exec for `fn eval`)"
                )
            }
            FunctionRef::Exec(cmd) => {
                format!("exec function {cmd:?} is not allowed; hint: pass --allow-exec")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_of_image_references() {
        assert_eq!(
            image_tag("ghcr.io/kptdev/krm-functions-catalog/apply-setters:v0.2"),
            "v0.2"
        );
        assert_eq!(image_tag("localhost:5000/apply-setters:v0.1.1"), "v0.1.1");
        assert_eq!(image_tag("localhost:5000/apply-setters"), "");
        assert_eq!(image_tag("apply-setters@sha256:abcd"), "");
        assert_eq!(image_tag("x/starlark:v1@sha256:abcd"), "v1");
    }

    #[test]
    fn short_names_ignore_registry_and_tag() {
        assert_eq!(
            image_short_name("gcr.io/kpt-fn/set-namespace:v0.4.1"),
            "set-namespace"
        );
        assert_eq!(
            image_short_name("ghcr.io/kptdev/krm-functions-catalog/set-namespace:latest"),
            "set-namespace"
        );
        assert_eq!(image_short_name("set-labels"), "set-labels");
        assert_eq!(
            image_short_name("example.com:5000/x/starlark@sha256:abcd"),
            "starlark"
        );
    }

    #[test]
    fn empty_runtime_set_explains_what_is_missing() {
        let rt = Runtimes::new();
        let err = rt
            .run(
                &FunctionRef::Image("gcr.io/kpt-fn/kubeval:v0.3".into()),
                ResourceList::default(),
                &RunOptions::default(),
            )
            .expect_err("nothing handles it");
        let msg = err.to_string();
        assert!(msg.contains("kubeval"), "{msg}");
        assert!(msg.contains("exec"), "{msg}");
    }
}
