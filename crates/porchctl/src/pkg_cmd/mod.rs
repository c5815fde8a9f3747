//! `porchctl pkg init|get|update`: kpt's package commands on local directories,
//! backed by `kpt::pkg`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};
use kpt::package::{PackageFiles, fs};
use kpt::pkg::Strategy;
use kpt::pkg::context::customize_dir;
use kpt::pkg::get::{GetOptions, destination, get_with_warnings, resolve_package_arg};
use kpt::pkg::init::{DEFAULT_DESCRIPTION, InitOptions, init};
use kpt::pkg::update::UpdateError;
use kpt::pkg::update::driver::update_dir;

/// `porchctl pkg ...`
#[derive(Debug, Subcommand)]
pub enum PkgCommand {
    /// Initialize an empty package in a directory.
    Init(InitArgs),
    /// Fetch a package from a git repository.
    Get(GetArgs),
    /// Update a local package to a new upstream version.
    Update(UpdateArgs),
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// Package directory (created if missing).
    #[arg(default_value = ".")]
    dir: PathBuf,
    /// Short description of the package.
    #[arg(long, default_value = DEFAULT_DESCRIPTION)]
    description: String,
    /// Comma-separated keywords (kpt's string slice: each value a CSV record, repeatable).
    #[arg(long, value_parser = crate::cli::GoCsv, action = clap::ArgAction::Append)]
    keywords: Vec<crate::cli::CsvElements>,
    /// Link to the package's site.
    #[arg(long, default_value = "")]
    site: String,
}

#[derive(Debug, Args)]
pub struct GetArgs {
    /// REPO_URI[.git]/PKG_PATH[@VERSION] (without `.git`, only GitHub URLs; without
    /// a version, the repository's default branch)
    package: String,
    /// Local destination: a new directory, or an existing one to fetch into a new
    /// sub-directory named after the package.
    #[arg(default_value = ".")]
    dest: PathBuf,
    /// Update strategy recorded in the Kptfile.
    #[arg(long, default_value = "resource-merge")]
    strategy: String,
    /// (Experimental) the package will be deployed to a cluster: generate its
    /// package context (`package-context.yaml`) as kpt does.
    #[arg(long)]
    for_deployment: bool,
}

#[derive(Debug, Args)]
pub struct UpdateArgs {
    /// LOCAL_PKG_DIR[@VERSION]
    #[arg(default_value = ".")]
    package: String,
    /// resource-merge, fast-forward, force-delete-replace or copy-merge.
    #[arg(long)]
    strategy: Option<String>,
}

/// Run a `pkg` subcommand.
pub fn run(cmd: PkgCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        PkgCommand::Init(a) => run_init(a),
        PkgCommand::Get(a) => run_get(a),
        PkgCommand::Update(a) => run_update(a),
    }
}

fn base_name(p: &Path) -> String {
    let abs = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    abs.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn run_init(a: InitArgs) -> anyhow::Result<ExitCode> {
    std::fs::create_dir_all(&a.dir).with_context(|| format!("creating {}", a.dir.display()))?;
    let (existing, _) = fs::read_dir(&a.dir)?;
    let opts = InitOptions {
        name: base_name(&a.dir),
        description: a.description,
        keywords: crate::cli::csv_elements(&a.keywords),
        site: a.site,
    };
    let files = init(&existing, "", &opts);
    for p in files.paths() {
        eprintln!("writing {}", a.dir.join(p).display());
    }
    let mut after = existing.clone();
    for (p, b) in files.into_map() {
        after.insert(p, b);
    }
    fs::write_changes(&a.dir, &existing, &after)?;
    Ok(ExitCode::SUCCESS)
}

fn run_get(a: GetArgs) -> anyhow::Result<ExitCode> {
    let (repo, directory, git_ref) = resolve_package_arg(&a.package)?;
    let strategy: Strategy = a.strategy.parse()?;
    let dest = destination(&a.dest, &repo, &directory)?;
    let opts = GetOptions {
        repo,
        directory,
        git_ref,
        name: base_name(&dest),
        strategy,
    };
    eprintln!("Package {:?}:", base_name(&dest));
    let (files, warnings): (PackageFiles, _) = get_with_warnings(&dest, &opts)?;
    for w in warnings {
        // kpt's printer ends the line with a space after the quoted path.
        eprintln!("{w} ");
    }
    eprintln!("\nFetched {} file(s).", files.len());
    if a.for_deployment {
        eprintln!("\nCustomizing package for deployment.");
        let log = customize_dir(&dest, &base_name(&dest))?;
        for line in log.iter().filter(|l| !l.is_empty()) {
            eprintln!("{line}");
        }
        eprintln!("\nCustomized package for deployment.");
    }
    Ok(ExitCode::SUCCESS)
}

fn run_update(a: UpdateArgs) -> anyhow::Result<ExitCode> {
    let (dir, new_ref) = match a.package.rsplit_once('@') {
        Some((d, r)) => (PathBuf::from(d), Some(r.to_string())),
        None => (PathBuf::from(&a.package), None),
    };
    // kpt's preRunE: without --strategy the update is a resource-merge, and the Kptfile's
    // updateStrategy is set to it (whatever `pkg get --strategy` recorded).
    let strategy = match a.strategy.as_deref() {
        Some(s) => s.parse::<Strategy>()?,
        None => Strategy::ResourceMerge,
    };
    let result = update_dir(&dir, new_ref.as_deref(), Some(strategy));
    // kpt names the package only once the root Kptfile is read and has an upstream;
    // nothing else is printed before the update's own outcome.
    if !matches!(
        result,
        Err(UpdateError::NotUpdatable(_) | UpdateError::Kptfile { .. })
    ) {
        eprintln!("Package {:?}:", base_name(&dir));
    }
    result?;
    eprintln!("\nUpdated 1 package(s).");
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests;
