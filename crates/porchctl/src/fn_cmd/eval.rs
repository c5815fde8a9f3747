//! `porchctl fn eval [DIR] --image IMG|--exec CMD [-- key=value...]`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;
use kpt::kptfile::Selector;
use kpt::package::fs;
use kpt::render::{EvalFlags, EvalOptions, RenderOptions, eval_items, eval_with};
use kpt::runtime::{FunctionRef, RunOptions};
use kpt::yaml::Node;

/// Arguments of `fn eval`.
#[derive(Debug, Args)]
pub struct EvalArgs {
    /// Directory of resources (default: current directory).
    #[arg(default_value = ".")]
    pub dir: PathBuf,
    /// Function image (built-in functions run natively).
    /// kpt takes the image when `--exec` is given too.
    #[arg(short = 'i', long)]
    pub image: Option<String>,
    /// Executable to run as the function.
    #[arg(long)]
    pub exec: Option<String>,
    /// File holding the function config.
    #[arg(long)]
    pub fn_config: Option<PathBuf>,
    /// Only resources with this apiVersion.
    #[arg(long)]
    pub match_api_version: Option<String>,
    /// Only resources of this kind.
    #[arg(long)]
    pub match_kind: Option<String>,
    /// Only resources with this name.
    #[arg(long)]
    pub match_name: Option<String>,
    /// Only resources in this namespace.
    #[arg(long)]
    pub match_namespace: Option<String>,
    /// Exclude resources with this apiVersion.
    #[arg(long)]
    pub exclude_api_version: Option<String>,
    /// Exclude resources of this kind.
    #[arg(long)]
    pub exclude_kind: Option<String>,
    /// Exclude resources with this name.
    #[arg(long)]
    pub exclude_name: Option<String>,
    /// Exclude resources in this namespace.
    #[arg(long)]
    pub exclude_namespace: Option<String>,
    /// Accepted and refused as kpt does: meta resources (Kptfiles, function configs)
    /// are in the function input by default.
    #[arg(short = 'm', long, hide = true)]
    pub include_meta_resources: bool,
    /// Let a container function reach the network.
    #[arg(long)]
    pub network: bool,
    /// Environment variables for container functions (`KEY=VALUE`, or `KEY` for the
    /// host's value), set over the image's.
    #[arg(short = 'e', long)]
    pub env: Vec<String>,
    /// Storage mounts for container functions (`type=bind|tmpfs,src=..,dst=..[,rw=true]`).
    #[arg(long)]
    pub mount: Vec<String>,
    /// Run a container function as the current user (the sandbox always does).
    #[arg(long)]
    pub as_current_user: bool,
    /// Override the image's tag (an exact version or tag; kpt HEAD also takes semver
    /// constraints, which need the registry's tag list).
    #[arg(long, default_value = "")]
    pub tag: String,
    /// Save the function and its arguments to the Kptfile pipeline (needs `--type`).
    #[arg(short = 's', long)]
    pub save: bool,
    /// `mutator` or `validator`: where `--save` records the function.
    #[arg(short = 't', long = "type", default_value = "")]
    pub fn_type: String,
    /// Only resources with these labels (`key=value`, repeatable).
    #[arg(long)]
    pub match_labels: Vec<String>,
    /// Only resources with these annotations (`key=value`, repeatable).
    #[arg(long)]
    pub match_annotations: Vec<String>,
    /// Exclude resources with these labels (`key=value`, repeatable).
    #[arg(long)]
    pub exclude_labels: Vec<String>,
    /// Exclude resources with these annotations (`key=value`, repeatable).
    #[arg(long)]
    pub exclude_annotations: Vec<String>,
    /// A CEL expression over the input (`resources`); when it is false the function
    /// is skipped (kpt HEAD).
    #[arg(long, default_value = "")]
    pub when: String,
    /// Write a FunctionResultList to this directory.
    #[arg(long)]
    pub results_dir: Option<PathBuf>,
    /// When function images are pulled: `Always`, `IfNotPresent` (a cached tag is used as
    /// is) or `Never` (only cached images run).
    #[arg(long, default_value = "IfNotPresent", value_parser = crate::cli::KptPullPolicy)]
    pub image_pull_policy: fn_container::PullPolicy,
    /// Seconds before an exec function is killed.
    #[arg(long, default_value_t = 300, value_parser = crate::cli::GoUint)]
    pub fn_timeout: u64,
    /// Output: `stdout` (ResourceList), `unwrap` (plain YAML) or a directory; default in
    /// place (stdout when the input is `-`).
    #[arg(short = 'o', long)]
    pub output: Option<String>,
    /// Filter functions that match one or more keywords (kpt's function search for
    /// completion; accepted, no effect here).
    #[arg(short = 'k', long)]
    pub keywords: Vec<String>,
    /// kpt's root `--truncate-output[=true|false]`: at most 4 lines of a function's
    /// stderr are shown unless it is false.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub truncate_output: bool,
    /// kpt's alpha WebAssembly runtime: the function would run as wasm, which porchctl
    /// does not support yet, so it is refused.
    #[arg(long)]
    pub allow_alpha_wasm: bool,
    /// Arguments after the directory and before `--`: kpt refuses them (cobra hands
    /// them over; `preRunE` counts them).
    #[arg(hide = true, num_args = 0..)]
    pub extra_args: Vec<String>,
    /// `key=value` pairs for a ConfigMap function config (after `--`).
    #[arg(last = true)]
    pub fn_args: Vec<String>,
}

/// kpt's `getCLIFunctionConfig`: whenever an image or exec is given the function gets
/// a `function-input` ConfigMap (empty `data` without arguments); `key=value` arguments
/// fill `data` in order as strings, a leading word without `=` names the kind. Fields
/// in kpt's order: metadata, data, kind, apiVersion.
fn config_from_args(args: &[String]) -> anyhow::Result<Node> {
    let mut kind = "ConfigMap".to_string();
    let mut data = Node::mapping();
    // kpt fills the `data: {}` of a template, so the function reads a flow mapping.
    data.style = kpt::yaml::Style::Flow;
    for (i, a) in args.iter().enumerate() {
        match a.split_once('=') {
            Some((k, v)) => {
                data.set(k, Node::string(v));
            }
            None if i == 0 => kind = a.clone(),
            None => bail!("args must have keys and values separated by ="),
        }
    }
    let mut cm = Node::mapping();
    cm.ensure_mapping(&["metadata"])
        .set("name", Node::string("function-input"));
    cm.set("data", data);
    cm.set("kind", Node::string(kind));
    cm.set("apiVersion", Node::string("v1"));
    Ok(cm)
}

/// `key=value` selector flags as a map (kpt splits on `=`; a missing value is empty).
fn selector_map(items: &[String]) -> BTreeMap<String, String> {
    items
        .iter()
        .map(|s| {
            let (k, v) = s.split_once('=').unwrap_or((s.as_str(), ""));
            (
                k.to_string(),
                v.split('=').next().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// The `--fn-config` file, checked as kpt's `GetValidatedFnConfigFromPath`: one
/// document, a mapping, a KRM resource.
fn read_fn_config(path: &std::path::Path) -> anyhow::Result<Node> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("failed to read file {:?}", path.display()))?;
    let docs = kpt::yaml::parse_stream(&text)
        .with_context(|| format!("failed to read function config {:?}", path.display()))?;
    let mut nodes: Vec<Node> = docs
        .into_iter()
        .map(|d| d.root)
        .filter(|n| !(n.is_scalar() && n.as_str().is_some_and(str::is_empty) && n.tag.is_none()))
        .collect();
    // kyaml's reader annotates every document, which fails on a non-mapping one (in
    // the words of the kyaml kpt HEAD is built with: e2e fn-eval/invalid-fn-config-file).
    if let Some(bad) = nodes.iter().find(|n| !n.is_mapping()) {
        use kpt::yaml::{SeqIndent, emit_node, kyaml_kind};
        // kyaml shows the document's content: a head comment that a blank line parts
        // from it is the document's (kept before the last blank line here), not the node's.
        let mut shown = bad.clone();
        if let Some(i) = shown.head_comment.rfind("\n\n") {
            shown.head_comment = shown.head_comment[i + 2..].to_string();
        }
        bail!(kyaml_kind::wrong_kind_now(
            "MappingNode",
            kyaml_kind::kind_name(bad),
            &emit_node(&shown, SeqIndent::default())
        ));
    }
    match nodes.len() {
        0 => bail!("functionConfig {:?} is empty", path.display()),
        1 => {}
        n => bail!(
            "functionConfig {:?} must not contain more than one config, got {n}",
            path.display()
        ),
    }
    let node = nodes.remove(0);
    if let Err(m) = kpt::render::check_krm(&node) {
        bail!(
            "functionConfig {:?}: {}",
            path.display(),
            m.rsplit(": ").next().unwrap_or_default()
        );
    }
    Ok(node)
}

/// kpt HEAD's `ValidateFunctionImageURL` (`distribution/reference.Parse`), on the name
/// with the catalog prefix a bare name gets, as kpt's eval validates it.
fn validate_image(image: &str) -> anyhow::Result<()> {
    match kpt::image_ref::parse(image) {
        Ok(()) => Ok(()),
        Err(e) => bail!(
            "function image reference {} is invalid: {e}",
            kpt::goquote::go_quote(image)
        ),
    }
}

/// kpt's `validateOptionalFlags` and the other checks it makes before reading anything.
fn validate(a: &EvalArgs) -> anyhow::Result<()> {
    if a.include_meta_resources {
        bail!(
            "--include-meta-resources is no longer necessary because meta resources are now included by default"
        );
    }
    if a.save {
        if a.fn_type.is_empty() {
            bail!("--type must be specified if saving functions to Kptfile (--save=true)");
        }
        if a.fn_type != "mutator" && a.fn_type != "validator" {
            bail!("--type must be either `mutator` or `validator`");
        }
    }
    // The results directory is made before anything runs.
    if let Some(dir) = &a.results_dir
        && let Err(e) = std::fs::create_dir_all(dir)
    {
        bail!(
            "cannot read or create results dir {:?}: {e}",
            dir.display().to_string()
        );
    }
    if let Some(dir) = a.output.as_deref()
        && dir != "stdout"
        && dir != "unwrap"
        && std::fs::symlink_metadata(dir).is_ok()
    {
        bail!("directory {dir:?} already exists, please delete the directory and retry");
    }
    if a.image.is_none() && a.exec.is_none() {
        bail!("must specify --image or --exec");
    }
    if !a.extra_args.is_empty() {
        bail!("0 or 1 arguments supported, function arguments go after '--'");
    }
    if !a.fn_args.is_empty() && a.fn_config.is_some() {
        bail!("function arguments can only be specified without function config file");
    }
    // `getCLIFunctionConfig`: the `--` arguments, then `getFunctionSpec`: the image
    // reference (resolved) or the flags an exec function cannot take.
    config_from_args(&a.fn_args)?;
    if let Some(image) = &a.image {
        validate_image(&kpt::render::resolve_image(image))?;
    } else if a.as_current_user || a.network || !a.mount.is_empty() || !a.env.is_empty() {
        bail!(
            "--mount, --as-current-user, --network and --env can only be used with container functions"
        );
    }
    if let Some(path) = &a.fn_config
        && !path.exists()
    {
        bail!("missing function config file: {}", path.display());
    }
    if a.save
        && let Some(path) = &a.fn_config
    {
        let pkg = std::path::absolute(&a.dir)?;
        let cfg = std::path::absolute(path)?;
        if !cfg.starts_with(&pkg) {
            bail!(
                "--fn-config must be under {} if saving functions to Kptfile (--save=true)",
                pkg.display()
            );
        }
    }
    Ok(())
}

pub fn run(mut a: EvalArgs) -> anyhow::Result<ExitCode> {
    // kpt's preRunE errors are plain ones: the caller prints them as kubectl's CheckErr.
    validate(&a)?;
    if a.dir.as_os_str() != "-" {
        a.dir = super::resolve_symlink(&a.dir)?;
    }
    let function = match (&a.image, &a.exec) {
        (Some(i), _) if !a.tag.is_empty() => FunctionRef::Image(
            kpt::render::resolve_image_tag(
                i,
                &a.tag,
                &super::runtimes_with(false, a.network, a.image_pull_policy),
            )
            .map_err(anyhow::Error::msg)?,
        ),
        (Some(i), _) => FunctionRef::Image(i.clone()),
        (None, Some(e)) => FunctionRef::Exec(e.clone()),
        _ => bail!(
            "must specify --image or --exec\nhint: porchctl fn eval DIR --image set-namespace -- namespace=prod"
        ),
    };
    let from_stdin = a.dir.as_os_str() == "-";
    let output = super::output::Output::parse(a.output.as_deref(), from_stdin);
    let stdin_list = if from_stdin {
        Some(super::output::read_stdin()?)
    } else {
        None
    };
    let (before, _) = if from_stdin {
        (kpt::package::PackageFiles::new(), Vec::new())
    } else {
        fs::read_dir(&a.dir).with_context(|| format!("reading directory {}", a.dir.display()))?
    };
    let mut config = Some(config_from_args(&a.fn_args)?);
    if let Some(path) = &a.fn_config {
        // runfn reads the file's config in place of the command line's ConfigMap. A config
        // file inside the package stays in the input too (kpt HEAD includes the meta
        // resources; only kpt before 1.0 left the function config out).
        config = Some(read_fn_config(path)?);
    }
    let selector = Selector {
        api_version: a.match_api_version.clone().unwrap_or_default(),
        kind: a.match_kind.clone().unwrap_or_default(),
        name: a.match_name.clone().unwrap_or_default(),
        namespace: a.match_namespace.clone().unwrap_or_default(),
        labels: selector_map(&a.match_labels),
        annotations: selector_map(&a.match_annotations),
        ..Default::default()
    };
    let exclusion = Selector {
        api_version: a.exclude_api_version.clone().unwrap_or_default(),
        kind: a.exclude_kind.clone().unwrap_or_default(),
        name: a.exclude_name.clone().unwrap_or_default(),
        namespace: a.exclude_namespace.clone().unwrap_or_default(),
        labels: selector_map(&a.exclude_labels),
        annotations: selector_map(&a.exclude_annotations),
        ..Default::default()
    };
    let runtime = super::with_wasm_flag(
        super::runtimes_for_eval(
            a.exec.is_some(),
            a.network,
            a.image_pull_policy,
            &a.env,
            &a.mount,
        ),
        a.allow_alpha_wasm,
    );
    let ropts = RenderOptions {
        runtime: &runtime,
        run: RunOptions {
            timeout: std::time::Duration::from_secs(a.fn_timeout),
            working_dir: None,
            budget: Default::default(),
        },
        root_name: if from_stdin {
            "-".to_string()
        } else {
            super::dir_name(&a.dir)
        },
        write_status: false,
    };
    let eopts = EvalOptions {
        function,
        function_config: config,
        config_in_package: None,
        selector,
        exclusion,
    };
    let flags = EvalFlags {
        when: a.when.clone(),
        full_output: !a.truncate_output,
    };
    let saved = a.save.then(|| super::save::SavedFunction {
        image: match &eopts.function {
            FunctionRef::Image(i) => kpt::render::resolve_image(i),
            FunctionRef::Exec(_) => String::new(),
        },
        exec: a.exec.clone().unwrap_or_default(),
        selector: eopts.selector.clone(),
        exclusion: eopts.exclusion.clone(),
        config_path: a.fn_config.as_ref().and_then(|p| {
            let pkg = std::path::absolute(&a.dir).ok()?;
            let cfg = std::path::absolute(p).ok()?;
            cfg.strip_prefix(&pkg)
                .ok()
                .map(|r| r.to_string_lossy().replace('\\', "/"))
        }),
        data: a.fn_args.clone(),
    });
    let out = match stdin_list {
        // kpt reads only the items of a ResourceList on stdin: its functionConfig is not
        // the function's (the command line's is).
        Some(list) => eval_items(list.items, &ropts, &eopts, &flags),
        None => eval_with(&before, &ropts, &eopts, &flags),
    };
    for line in &out.log {
        eprintln!("{line}");
        // fnruntime's `printFnExecErr` ends the exit code line with a blank line.
        if line.starts_with("  Exit code: ") {
            eprintln!();
        }
    }
    if output == super::output::Output::InPlace {
        fs::write_changes(&a.dir, &before, &out.files)?;
    } else if out.error.is_none() {
        super::output::write(&output, out.items.clone())?;
    }
    if let Some(dir) = &a.results_dir {
        super::write_results(dir, &out.mutation_steps, out.error.is_some())?;
        // runfn's `PrintFnResultInfo(ctx, resultsFile, true)`: a blank line first, on
        // success and on failure alike.
        eprintln!(
            "\nFor complete results, see {}",
            dir.join("results.yaml").display()
        );
    }
    if out.error.is_none()
        && let Some(saved) = &saved
        && !from_stdin
    {
        eprintln!("{}", super::save::save(&a.dir, saved, &a.fn_type));
    }
    Ok(super::eval_exit_code(out.error.as_ref(), &a.dir))
}
