//! `porchctl pkg init|get|update`: kpt's package commands on local directories,
//! backed by `kpt::pkg`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};
use kpt::package::fs;
use kpt::pkg::Strategy;
use kpt::pkg::console::{Console, Terminal, absolute_clean, display_name};
use kpt::pkg::context::customize_dir;
use kpt::pkg::get::{GetOptions, destination, get_into, resolve_package_arg};
use kpt::pkg::git::{Fetcher, RepoCache};
use kpt::pkg::init::{DEFAULT_DESCRIPTION, InitOptions, init};
use kpt::pkg::merge3::MergeOptions;
use kpt::pkg::update::driver::update_dir_into;

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

fn run_init(a: InitArgs) -> anyhow::Result<ExitCode> {
    std::fs::create_dir_all(&a.dir).with_context(|| format!("creating {}", a.dir.display()))?;
    let (existing, _) = fs::read_dir(&a.dir)?;
    let opts = InitOptions {
        name: display_name(&a.dir),
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

/// kpt's `handleErr` for the package commands: `Error: <message> ` and a line
/// break, exit code 1.
fn kpt_error(e: impl std::fmt::Display) -> ExitCode {
    Terminal.print(&format!("Error: {e} \n"));
    ExitCode::FAILURE
}

fn run_get(a: GetArgs) -> anyhow::Result<ExitCode> {
    let mut console = Terminal;
    let result = RepoCache::kpt()
        .map_err(anyhow::Error::from)
        .and_then(|cache| get_to(a, cache, &mut console));
    match result {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e) => Ok(kpt_error(format!("{e:#}"))),
    }
}

/// `pkg get` with kpt's repository cache `cache`, printing to `console`.
fn get_to(a: GetArgs, cache: RepoCache, console: &mut dyn Console) -> anyhow::Result<()> {
    let (repo, directory, git_ref) = resolve_package_arg(&a.package)?;
    let strategy: Strategy = a.strategy.parse()?;
    let dest = destination(&a.dest, &repo, &directory)?;
    let opts = GetOptions {
        repo,
        directory,
        git_ref,
        name: display_name(&dest),
        strategy,
    };
    let mut fx = Fetcher::new(cache, console, false);
    get_into(&dest, &opts, &mut fx)?;
    if a.for_deployment {
        let c = fx.console();
        c.print("\nCustomizing package for deployment.\n");
        let log = customize_dir(&dest, &display_name(&dest))?;
        for line in log.iter().filter(|l| !l.is_empty()) {
            c.print(&format!("{line}\n"));
        }
        c.print("\nCustomized package for deployment.\n");
    }
    Ok(())
}

/// The first element of `path` (given as the user wrote it) that does not exist, as
/// Go's `filepath.EvalSymlinks` finds it.
fn first_missing(path: &Path) -> Option<PathBuf> {
    let mut prefix = PathBuf::new();
    for c in path.components() {
        prefix.push(c);
        if let Err(e) = std::fs::symlink_metadata(&prefix)
            && e.kind() == std::io::ErrorKind::NotFound
        {
            return Some(prefix);
        }
    }
    None
}

fn run_update(a: UpdateArgs) -> anyhow::Result<ExitCode> {
    let (dir, new_ref) = match a.package.rsplit_once('@') {
        Some((d, r)) => (Path::new(d), Some(r)),
        None => (Path::new(a.package.as_str()), None),
    };
    // kpt resolves the directory before anything else: a missing element is a plain
    // Go error (kubectl's `error: ` prefix), a directory without a Kptfile kpt's own.
    if let Some(missing) = first_missing(dir) {
        Terminal.print(&format!(
            "error: lstat {}: no such file or directory\n",
            missing.display()
        ));
        return Ok(ExitCode::FAILURE);
    }
    if !dir.join(kpt::kptfile::KPTFILE).exists() {
        return Ok(kpt_error(format!(
            "No Kptfile found at {}.",
            kpt::goquote::go_quote(&absolute_clean(dir).to_string_lossy())
        )));
    }
    let mut console = Terminal;
    match update_to(dir, new_ref, a.strategy.as_deref(), &mut console) {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e) => Ok(kpt_error(format!("{e:#}"))),
    }
}

/// `pkg update` of `dir` to `new_ref` (or its upstream's ref), printing to `console`.
fn update_to(
    dir: &Path,
    new_ref: Option<&str>,
    strategy: Option<&str>,
    console: &mut dyn Console,
) -> anyhow::Result<()> {
    // kpt's preRunE: without --strategy the update is a resource-merge, and the Kptfile's
    // updateStrategy is set to it (whatever `pkg get --strategy` recorded).
    let strategy = match strategy {
        Some(s) => s.parse::<Strategy>()?,
        None => Strategy::ResourceMerge,
    };
    let mut fx = Fetcher::new(RepoCache::kpt()?, console, true);
    update_dir_into(
        dir,
        new_ref,
        Some(strategy),
        &MergeOptions::default(),
        &mut fx,
    )?;
    Ok(())
}

#[cfg(test)]
mod tests;
