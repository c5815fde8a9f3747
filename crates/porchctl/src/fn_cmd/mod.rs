//! `porchctl fn render` and `porchctl fn eval`, with kpt's flags and output.

mod eval;
mod list;
mod output;
mod render;
mod save;
mod source_sink;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Subcommand;
use kpt::kptfile::StepResult;
use kpt::runtime::Runtimes;
use kpt::runtime::exec::ExecRuntime;

/// `porchctl fn ...`
#[derive(Debug, Subcommand)]
pub enum FnCommand {
    /// Render a package: run its Kptfile pipelines (sub-packages first) in place.
    Render(Box<render::RenderArgs>),
    /// Run one function over a directory's resources.
    Eval(Box<eval::EvalArgs>),
    /// Print a directory's resources as a ResourceList (the start of a function pipe).
    Source(Box<source_sink::SourceArgs>),
    /// Write the resources of a ResourceList from stdin into a directory.
    Sink(Box<source_sink::SinkArgs>),
    /// List the functions a Porch server offers to pipelines (`functions`).
    #[command(visible_alias = "ls")]
    List(Box<list::ListArgs>),
}

/// Run a `fn` subcommand.
pub fn run(cmd: FnCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        FnCommand::Render(a) => render::run(*a),
        FnCommand::Eval(a) => Ok(kubectl_style(eval::run(*a))),
        FnCommand::List(a) => list::run(*a),
        FnCommand::Source(a) => Ok(kubectl_style(source_sink::source(*a))),
        FnCommand::Sink(a) => Ok(kubectl_style(source_sink::sink(*a))),
    }
}

/// How kpt prints the plain errors of `fn eval`, `fn source` and `fn sink`: they are not
/// kpt's own error type, so its main hands them to kubectl's `CheckErr`, which prints
/// `error: <message>` and a line break (kpt's own errors, as render's, are `Error: ... `).
fn kubectl_style(result: anyhow::Result<ExitCode>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(e) => {
            eprint!("{}", kubectl_error_line(&format!("{e:#}")));
            ExitCode::FAILURE
        }
    }
}

/// kubectl's `CheckErr` text for a message: `error: ` unless it already starts so, and a
/// final line break unless it has one.
pub fn kubectl_error_line(message: &str) -> String {
    let mut line = if message.starts_with("error: ") {
        message.to_string()
    } else {
        format!("error: {message}")
    };
    if !line.ends_with('\n') {
        line.push('\n');
    }
    line
}

/// What `--allow-alpha-wasm` asks for: kpt then runs every function as WebAssembly, which
/// porchctl cannot do yet. Put in front of the other runtimes, it refuses each function
/// before anything runs, so a pipeline never half-runs a wasm image as a container.
struct NoWasm;

const NO_WASM: &str = "wasm functions are not supported by porchctl yet (--allow-alpha-wasm); \
     hint: run the function's container image without --allow-alpha-wasm";

impl kpt::runtime::FunctionRuntime for NoWasm {
    fn handles(&self, _function: &kpt::runtime::FunctionRef) -> bool {
        true
    }

    fn run(
        &self,
        _function: &kpt::runtime::FunctionRef,
        _input: kpt::resource_list::ResourceList,
        _options: &kpt::runtime::RunOptions,
    ) -> Result<kpt::runtime::FunctionOutput, kpt::runtime::RuntimeError> {
        Err(kpt::runtime::RuntimeError::Refused(NO_WASM.to_string()))
    }

    fn refusal(&self, _function: &kpt::runtime::FunctionRef) -> Option<String> {
        Some(NO_WASM.to_string())
    }
}

/// `runtimes`, refusing every function when `--allow-alpha-wasm` is given.
pub fn with_wasm_flag(runtimes: Runtimes, allow_alpha_wasm: bool) -> Runtimes {
    if allow_alpha_wasm {
        Runtimes::new().with(NoWasm).with(runtimes)
    } else {
        runtimes
    }
}

/// The function runtimes available locally: native built-ins, then exec when allowed, then
/// other images pulled (as kpt's `--image-pull-policy` says) and run in a sandbox, with the
/// network only when allowed (`fn render --allow-network`).
pub fn runtimes_with(
    allow_exec: bool,
    allow_network: bool,
    pull_policy: fn_container::PullPolicy,
) -> Runtimes {
    runtimes_for_eval(allow_exec, allow_network, pull_policy, &[], &[])
}

/// [`runtimes_with`] plus `fn eval`'s `--env` and `--mount` for container functions.
pub fn runtimes_for_eval(
    allow_exec: bool,
    allow_network: bool,
    pull_policy: fn_container::PullPolicy,
    env: &[String],
    mounts: &[String],
) -> Runtimes {
    let exec = if allow_exec {
        ExecRuntime::allowed()
    } else {
        ExecRuntime::denied()
    };
    let mut all = Runtimes::new().with(krm_functions::Builtins).with(exec);
    if let Some(mut options) = container_options(allow_network, pull_policy) {
        options.env = fn_container::sandbox::parse_env(env);
        options.mounts = mounts
            .iter()
            .map(|m| fn_container::sandbox::StorageMount::parse(m))
            .collect();
        all.push(Box::new(fn_container::LazyContainerRuntime::new(options)));
    }
    all
}

/// Images cache under `$PORCHCTL_FN_CACHE_DIR`, else the user's cache directory (opened
/// only when an image runs); `$PORCHCTL_INSECURE_REGISTRIES` (comma-separated `host[:port]`)
/// are reached over plain HTTP. Without any cache directory images are not run.
fn container_options(
    allow_network: bool,
    pull_policy: fn_container::PullPolicy,
) -> Option<fn_container::ContainerOptions> {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let cache = env("PORCHCTL_FN_CACHE_DIR").or_else(|| {
        env("XDG_CACHE_HOME")
            .or_else(|| env("HOME").map(|h| h.join(".cache")))
            .map(|c| c.join("porchctl").join("fn-images"))
    })?;
    let mut options = fn_container::ContainerOptions::new(cache);
    options.allow_network = allow_network;
    options.pull_policy = pull_policy;
    options.insecure_registries = std::env::var("PORCHCTL_INSECURE_REGISTRIES")
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .map(String::from)
        .collect();
    Some(options)
}

/// kpt's `argutil.ResolveSymlink` for a package argument: a missing path fails as Go's
/// `filepath.EvalSymlinks` does (`lstat <first missing prefix>: no such file or
/// directory`); a symlink is followed with kpt's warning. Returns the path to read.
pub fn resolve_symlink(path: &Path) -> anyhow::Result<PathBuf> {
    let mut prefix = PathBuf::new();
    for part in path.components() {
        prefix.push(part);
        if std::fs::symlink_metadata(&prefix).is_err() {
            anyhow::bail!("lstat {}: no such file or directory", prefix.display());
        }
    }
    if std::fs::read_link(path).is_err() {
        return Ok(path.to_path_buf());
    }
    let resolved = std::fs::canonicalize(path)?;
    // EvalSymlinks keeps a relative argument relative (to the working directory).
    let shown = if path.is_absolute() {
        resolved.clone()
    } else {
        std::env::current_dir()
            .and_then(std::fs::canonicalize)
            .map(|cwd| relative_to(&resolved, &cwd))
            .unwrap_or_else(|_| resolved.clone())
    };
    eprintln!(
        "[WARN] resolved symlink {:?} to {:?}, please note that the symlinks within the package are ignored",
        path.display().to_string(),
        shown.display().to_string()
    );
    Ok(resolved)
}

/// `path` as seen from `base` (both absolute and canonical): `.` when equal.
fn relative_to(path: &Path, base: &Path) -> PathBuf {
    let p: Vec<_> = path.components().collect();
    let b: Vec<_> = base.components().collect();
    let common = p.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out = PathBuf::new();
    for _ in common..b.len() {
        out.push("..");
    }
    for c in &p[common..] {
        out.push(c);
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

/// Name kpt shows for a package directory.
pub fn dir_name(dir: &Path) -> String {
    let abs = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    abs.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| ".".to_string())
}

/// One `FunctionResultList` item: kpt's `fnresult.Result` (image or exec, stderr,
/// exit code, results). The renderStatus-only fields of a step (`errorResults`,
/// `executionError`, `when`, `skipped`, `name`) are not part of it.
fn result_item(s: &StepResult) -> anyhow::Result<kpt::yaml::Node> {
    let mut v = serde_json::to_value(s)?;
    if let Some(o) = v.as_object_mut() {
        o.retain(|k, _| {
            matches!(
                k.as_str(),
                "image" | "exec" | "stderr" | "exitCode" | "results"
            )
        });
    }
    Ok(kpt::yaml::Node::from_value(&v))
}

/// Write `results.yaml` (a kpt `FunctionResultList`) into `dir`.
pub fn write_results(dir: &PathBuf, steps: &[StepResult], failed: bool) -> anyhow::Result<()> {
    use kpt::yaml::{Node, SeqIndent, emit_node};
    std::fs::create_dir_all(dir)?;
    let mut root = Node::mapping();
    root.set("apiVersion", Node::string("kpt.dev/v1"));
    root.set("kind", Node::string("FunctionResultList"));
    root.ensure_mapping(&["metadata"])
        .set("name", Node::string("fnresults"));
    root.set(
        "exitCode",
        Node::tagged_scalar(if failed { "1" } else { "0" }, "!!int"),
    );
    // kpt's `fnresult.ResultList` marks `items` omitempty: no call, no key.
    if !steps.is_empty() {
        let mut items = Node::sequence();
        if let Some(seq) = items.items_mut() {
            for s in steps {
                seq.push(result_item(s)?);
            }
        }
        root.set("items", items);
    }
    std::fs::write(dir.join("results.yaml"), emit_node(&root, SeqIndent::Wide))?;
    Ok(())
}

/// `fn eval`'s ending: an error not already shown (the failing function's own report)
/// printed as kubectl's `CheckErr` prints kpt's plain errors.
pub fn eval_exit_code(error: Option<&kpt::render::RenderError>, root: &Path) -> ExitCode {
    match error.map(|e| with_full_path(e, root)) {
        None => ExitCode::SUCCESS,
        Some(e) => {
            if !e.already_reported() {
                eprint!("{}", kubectl_error_line(&e.console_message()));
            }
            ExitCode::FAILURE
        }
    }
}

/// Print the error (unless the failing step was already shown) and pick the exit code.
/// `root` is the package directory, which kpt's messages about a Kptfile name.
pub fn exit_code(error: Option<&kpt::render::RenderError>, root: &Path) -> ExitCode {
    match error.map(|e| with_full_path(e, root)) {
        None => ExitCode::SUCCESS,
        Some(e) => {
            if !e.already_reported() {
                // kpt's main prints every error followed by " \n".
                eprintln!("{} ", console_error(&e, root));
            }
            ExitCode::FAILURE
        }
    }
}

/// kyaml's package reader names a file it cannot read by the path it walked: the
/// package directory (absolute, as kpt resolves it) joined with the file.
fn with_full_path(e: &kpt::render::RenderError, root: &Path) -> kpt::render::RenderError {
    use kpt::package::resources::ResourceError;
    use kpt::render::RenderError;
    match e {
        RenderError::Resources(ResourceError::Yaml { path, message }) if root != Path::new("-") => {
            let abs = std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
            RenderError::Resources(ResourceError::Yaml {
                path: abs.join(path).display().to_string(),
                message: message.clone(),
            })
        }
        other => other.clone(),
    }
}

/// What kpt prints for an error: its resolver's text for a Kptfile that does not
/// decode (`Error: Kptfile at "<dir>" can't be read.` ...) and for a missing one, a
/// validation block as it is, anything else as `Error: <message>`.
fn console_error(e: &kpt::render::RenderError, root: &Path) -> String {
    use kpt::kptfile::KptfileError;
    use kpt::render::RenderError;
    let abs = std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
    if let RenderError::MissingKptfile(_) = e {
        return format!(
            "Error: No Kptfile found at {:?}.",
            abs.display().to_string()
        );
    }
    let Some((dir, problem)) = e.kptfile_problem() else {
        let message = e.console_message();
        // A validation block found while rendering (a config in a sub-package) is
        // kpt's ValidateError too: printed as it is.
        if message.starts_with("Kptfile is invalid:") {
            return message;
        }
        return format!("Error: {message}");
    };
    let at = if dir.is_empty() { abs } else { abs.join(&dir) };
    let at = format!("{:?}", at.display().to_string());
    match problem {
        KptfileError::Syntax(details) => {
            format!("Error: Kptfile at {at} can't be read.\n\nDetails:\n{details}")
        }
        KptfileError::Unmarshal(_) => {
            format!("Error: Kptfile at {at} can't be read.\n\nDetails:\n{problem}")
        }
        KptfileError::OldVersion(v) => format!(
            "Error: Kptfile at {at} has an old version ({v:?}) of the Kptfile schema.\nPlease run \"kpt fn eval <PKG_PATH> -i gcr.io/kpt-fn/fix:v0.2 --include-meta-resources\" to upgrade the package and retry."
        ),
        KptfileError::UnknownType(t) => {
            format!("Error: Kptfile at {at} has an unknown resource type ({t:?}).")
        }
        KptfileError::Invalid { .. } => problem.to_string(),
    }
}
