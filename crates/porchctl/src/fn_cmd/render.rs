//! `porchctl fn render [DIR]`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use kpt::package::fs;
use kpt::render::{RenderOptions, render_recorded};
use kpt::runtime::RunOptions;

use super::output::Output;

/// Arguments of `fn render`.
#[derive(Debug, Args)]
pub struct RenderArgs {
    /// Package directory (default: current directory).
    #[arg(default_value = ".")]
    pub dir: PathBuf,
    /// Allow `exec:` functions in pipelines.
    #[arg(long)]
    pub allow_exec: bool,
    /// kpt's alpha WebAssembly runtime: every function would run as wasm, which porchctl
    /// does not support yet, so each is refused before anything runs.
    #[arg(long)]
    pub allow_alpha_wasm: bool,
    /// Accepted for kpt compatibility; native functions never use the network.
    #[arg(long)]
    pub allow_network: bool,
    /// When function images are pulled: `Always`, `IfNotPresent` (a cached tag is used as
    /// is) or `Never` (only cached images run).
    #[arg(long, default_value = "IfNotPresent", value_parser = crate::cli::KptPullPolicy)]
    pub image_pull_policy: fn_container::PullPolicy,
    /// Write a FunctionResultList to this directory.
    #[arg(long)]
    pub results_dir: Option<PathBuf>,
    /// Seconds before an exec function is killed.
    #[arg(long, default_value_t = 300, value_parser = crate::cli::GoUint)]
    pub fn_timeout: u64,
    /// Output: `stdout` (ResourceList), `unwrap` (plain YAML) or a directory; default in place.
    #[arg(short = 'o', long)]
    pub output: Option<String>,
    /// kpt's `--truncate-output[=true|false]`; output is never truncated here.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub truncate_output: bool,
}

pub fn run(mut a: RenderArgs) -> anyhow::Result<ExitCode> {
    if let Ok(target) = std::fs::read_link(&a.dir) {
        eprintln!(
            "[WARN] resolved symlink {:?} to {:?}, please note that the symlinks within the package are ignored",
            a.dir.display().to_string(),
            clean_target(&target.display().to_string())
        );
        a.dir = std::fs::canonicalize(&a.dir)
            .with_context(|| format!("resolving symlink {}", a.dir.display()))?;
    }
    let output = Output::parse(a.output.as_deref(), false);
    // kpt refuses an output directory that exists before it reads the package
    // (`cmdutil.CheckDirectoryNotPresent`), in its lower-case `error:` form.
    if let Output::Dir(dir) = &output
        && std::fs::symlink_metadata(dir).is_ok()
    {
        eprintln!("error: directory {dir:?} already exists, please delete the directory and retry");
        return Ok(ExitCode::FAILURE);
    }
    // Symlinks inside the package are not followed (as kpt).
    let (before, _symlinks) =
        fs::read_dir(&a.dir).with_context(|| format!("reading package {}", a.dir.display()))?;
    let runtime = super::with_wasm_flag(
        super::runtimes_with(a.allow_exec, a.allow_network, a.image_pull_policy),
        a.allow_alpha_wasm,
    );
    let opts = RenderOptions {
        runtime: &runtime,
        run: RunOptions {
            timeout: std::time::Duration::from_secs(a.fn_timeout),
            working_dir: None,
            budget: Default::default(),
        },
        root_name: super::dir_name(&a.dir),
        write_status: output == Output::InPlace,
    };
    let recorded = render_recorded(&before, &opts);
    let out = &recorded.output;
    for line in &out.log {
        // Out of place, kpt keeps the progress lines but not the summary.
        if output == Output::InPlace || !line.starts_with("Successfully") {
            eprintln!("{line}");
        }
    }
    if output == Output::InPlace {
        fs::write_changes(&a.dir, &before, &out.files)
            .with_context(|| format!("writing package {}", a.dir.display()))?;
    } else if out.error.is_none() {
        super::output::write(&output, out.items.clone())?;
    }
    if let Some(dir) = &a.results_dir {
        // kpt's results list: the calls it recorded, in the order they ran.
        super::write_results(dir, &recorded.fn_results, recorded.fn_results_failed())?;
        eprintln!(
            "For complete results, see {}",
            dir.join("results.yaml").display()
        );
    }
    Ok(super::exit_code(out.error.as_ref(), &a.dir))
}

/// kpt prints a symlink target cleaned (`./` is `.`).
fn clean_target(t: &str) -> String {
    let trimmed = t.trim_end_matches('/');
    if trimmed.is_empty() {
        if t.is_empty() { ".".into() } else { "/".into() }
    } else {
        trimmed.to_string()
    }
}
