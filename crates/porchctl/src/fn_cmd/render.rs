//! `porchctl fn render [DIR]`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use kpt::package::fs;
use kpt::render::{RenderOptions, render};
use kpt::runtime::RunOptions;

/// Arguments of `fn render`.
#[derive(Debug, Args)]
pub struct RenderArgs {
    /// Package directory (default: current directory).
    #[arg(default_value = ".")]
    pub dir: PathBuf,
    /// Allow `exec:` functions in pipelines.
    #[arg(long)]
    pub allow_exec: bool,
    /// Accepted for kpt compatibility; native functions never use the network.
    #[arg(long)]
    pub allow_network: bool,
    /// Accepted for kpt compatibility (no container images are pulled).
    #[arg(long, default_value = "IfNotPresent")]
    pub image_pull_policy: String,
    /// Write a FunctionResultList to this directory.
    #[arg(long)]
    pub results_dir: Option<PathBuf>,
    /// Seconds before an exec function is killed.
    #[arg(long, default_value_t = 300)]
    pub fn_timeout: u64,
}

pub fn run(a: RenderArgs) -> anyhow::Result<ExitCode> {
    let (before, symlinks) =
        fs::read_dir(&a.dir).with_context(|| format!("reading package {}", a.dir.display()))?;
    for s in symlinks {
        eprintln!("[WARN] ignoring symlink {s:?}: symlinks within the package are ignored");
    }
    let runtime = super::runtimes(a.allow_exec);
    let opts = RenderOptions {
        runtime: &runtime,
        run: RunOptions {
            timeout: std::time::Duration::from_secs(a.fn_timeout),
            working_dir: None,
        },
        root_name: super::dir_name(&a.dir),
        write_status: true,
    };
    let out = render(&before, &opts);
    for line in &out.log {
        eprintln!("{line}");
    }
    fs::write_changes(&a.dir, &before, &out.files)
        .with_context(|| format!("writing package {}", a.dir.display()))?;
    if let Some(dir) = &a.results_dir {
        let mut steps = out.mutation_steps.clone();
        steps.extend(out.validation_steps.iter().cloned());
        super::write_results(dir, &steps, out.error.is_some())?;
        eprintln!(
            "For complete results, see {}",
            dir.join("results.yaml").display()
        );
    }
    match &out.error {
        None => Ok(ExitCode::SUCCESS),
        Some(e) => {
            let msg = e.console_message();
            // kpt already printed the failing step; it does not repeat it.
            if msg != "already handled error" {
                eprintln!("Error: {msg}");
            }
            Ok(ExitCode::FAILURE)
        }
    }
}
