//! `kpt pkg get`: a local package from a git repository — fresh Kptfile with
//! `upstream`/`upstreamLock`, upstream Kptfile merged in, remote sub-packages
//! fetched, identity markers added.

use std::path::{Path, PathBuf};

use super::console::{Silent, display_name, package_line};
use super::git::{self, FetchError, Fetched, Fetcher, RepoCache};
use super::ids;
use super::update::{Strategy, UpdateError, kptfile::merge_kptfiles, read_kptfile};
use super::url::{self, ParseError};
use crate::goquote::go_quote;
use crate::kptfile::{Git, GitLock, KPTFILE, Kptfile, Locator, Upstream};
use crate::package::{PackageFiles, fs, join, relative_to};

/// Errors of `get`.
#[derive(Debug, thiserror::Error)]
pub enum GetError {
    #[error(transparent)]
    Fetch(#[from] FetchError),
    #[error(transparent)]
    Update(#[from] UpdateError),
    #[error(transparent)]
    Parse(#[from] ParseError),
    #[error(
        "destination {0:?} already exists and is not an empty directory\nhint: choose another directory"
    )]
    DestinationExists(String),
    #[error("parent directory {0:?} does not exist")]
    NoParent(String),
    #[error("LOCAL_PKG_DEST must be a directory: {0:?}")]
    DestinationNotDirectory(String),
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

impl GetError {
    /// A short machine-readable kind.
    pub fn kind(&self) -> &'static str {
        match self {
            GetError::Fetch(e) => e.kind(),
            GetError::Update(e) => e.kind(),
            GetError::Parse(e) => e.kind(),
            GetError::DestinationExists(_) => "destination-exists",
            GetError::NoParent(_) => "no-parent",
            GetError::DestinationNotDirectory(_) => "destination-not-directory",
            GetError::Io { .. } => "io",
        }
    }
}

/// Where to get a package from.
#[derive(Debug, Clone)]
pub struct GetOptions {
    pub repo: String,
    /// Directory inside the repository (kpt writes it with a leading `/`).
    pub directory: String,
    pub git_ref: String,
    /// Local package name.
    pub name: String,
    pub strategy: Strategy,
}

/// Build the local package from a fetched upstream (pure).
pub fn build(opts: &GetOptions, fetched: &Fetched) -> Result<PackageFiles, UpdateError> {
    let mut files = PackageFiles::new();
    for (p, b) in fetched.files.as_map() {
        if p != KPTFILE {
            files.insert(p.clone(), b.clone());
        }
    }
    let mut k = Kptfile {
        api_version: "kpt.dev/v1".into(),
        kind: "Kptfile".into(),
        ..Kptfile::default()
    };
    k.metadata.name = opts.name.clone();
    k.upstream = Some(Upstream {
        origin_type: "git".into(),
        git: Some(Git {
            repo: opts.repo.clone(),
            directory: opts.directory.clone(),
            git_ref: opts.git_ref.clone(),
        }),
        update_strategy: opts.strategy.as_str().into(),
    });
    if let Some(up) = read_kptfile(&fetched.files, KPTFILE)? {
        k = merge_kptfiles(&k, &up, None, false, KPTFILE)?;
    }
    k.upstream_lock = Some(lock(&opts.repo, &opts.directory, fetched));
    files.insert(KPTFILE, k.to_yaml().into_bytes());
    Ok(files)
}

/// The `upstreamLock` for a fetch.
pub fn lock(repo: &str, directory: &str, fetched: &Fetched) -> Locator {
    Locator {
        origin_type: "git".into(),
        git: Some(GitLock {
            repo: repo.to_string(),
            directory: directory.to_string(),
            git_ref: fetched.resolved_ref.clone(),
            commit: fetched.commit.clone(),
        }),
        generic: None,
    }
}

/// Fetch the sub-package at `dir` of `files` whose Kptfile `k` (at `kf`) has an
/// `upstream` but no `upstreamLock`: its upstream's files are copied in, its
/// Kptfile merged with upstream's and locked.
fn add_subpackage(
    files: &mut PackageFiles,
    dir: &str,
    k: &Kptfile,
    g: &Git,
    fetched: &Fetched,
) -> Result<(), GetError> {
    let kf = join(dir, KPTFILE);
    let mut merged = k.clone();
    if let Some(upk) = read_kptfile(&fetched.files, KPTFILE)? {
        merged = merge_kptfiles(&merged, &upk, None, false, &kf)?;
    }
    merged.upstream_lock = Some(lock(&g.repo, &g.directory, fetched));
    for (p, b) in fetched.files.as_map() {
        if p != KPTFILE {
            files.insert(join(dir, p), b.clone());
        }
    }
    files.insert(kf, merged.to_yaml().into_bytes());
    Ok(())
}

/// kpt's `fetchPackages`: walk the packages from the root (a stack: a package's
/// direct sub-packages are pushed in path order, so the last is fetched first), and
/// fetch each one that has an `upstream` but no `upstreamLock`, printing its
/// `Package` line, `Fetching <repo>@<ref>`, git's fetch output and `Adding package
/// "<directory>".`; the root is fetched as `opts` says. Returns how many packages
/// were fetched.
fn fetch_packages(
    files: &mut PackageFiles,
    opts: &GetOptions,
    display: &str,
    fx: &mut Fetcher<'_>,
) -> Result<usize, GetError> {
    let mut count = 0;
    let mut stack = vec![String::new()];
    while let Some(dir) = stack.pop() {
        let (k, g) = if dir.is_empty() {
            let g = Git {
                repo: opts.repo.clone(),
                directory: opts.directory.clone(),
                git_ref: opts.git_ref.clone(),
            };
            (None, g)
        } else {
            let k = read_kptfile(files, &join(&dir, KPTFILE))?;
            let unfetched = k
                .as_ref()
                .and_then(|k| match (&k.upstream, &k.upstream_lock) {
                    (Some(up), None) => up.git.clone(),
                    _ => None,
                });
            let Some(g) = unfetched else {
                stack.extend(files.direct_subpackages(&dir));
                continue;
            };
            (k, g)
        };
        count += 1;
        let shown = if dir.is_empty() {
            display.to_string()
        } else {
            format!("{display}/{dir}")
        };
        let c = fx.console();
        c.print(&package_line(&shown, !dir.is_empty()));
        // A password in the URL is never shown (kpt prints it).
        c.print(&format!(
            "Fetching {}@{}\n",
            git::redact(&g.repo),
            g.git_ref
        ));
        let fetched = fx.fetch(&g.repo, &g.directory, &g.git_ref)?;
        let added = g.directory.strip_prefix('/').unwrap_or(&g.directory);
        fx.console()
            .print(&format!("Adding package {}.\n", go_quote(added)));
        match k {
            None => *files = build(opts, &fetched)?,
            Some(k) => add_subpackage(files, &dir, &k, &g, &fetched)?,
        }
        stack.extend(files.direct_subpackages(&dir));
    }
    Ok(count)
}

/// `kpt pkg get` into directory `dest`, reporting nothing.
pub fn get(dest: &Path, opts: &GetOptions) -> Result<PackageFiles, GetError> {
    let mut quiet = Silent;
    let mut fx = Fetcher::new(RepoCache::temporary()?, &mut quiet, false);
    get_into(dest, opts, &mut fx)
}

/// `kpt pkg get` into directory `dest`, fetching through `fx` and printing to its
/// console what kpt prints: for each package fetched (the root, then every remote
/// sub-package without an `upstreamLock`) its `Package` line, `Fetching …`, git's
/// fetch output, any `[Warn] Ignoring symlink` line and `Adding package …`; then
/// `Fetched N package(s).` after a blank line. Nothing is written on an error.
pub fn get_into(
    dest: &Path,
    opts: &GetOptions,
    fx: &mut Fetcher<'_>,
) -> Result<PackageFiles, GetError> {
    let io = |e: std::io::Error| GetError::Io {
        path: dest.display().to_string(),
        source: e,
    };
    if dest.exists() && std::fs::read_dir(dest).map_err(io)?.next().is_some() {
        return Err(GetError::DestinationExists(dest.display().to_string()));
    }
    let mut files = PackageFiles::new();
    let count = fetch_packages(&mut files, opts, &display_name(dest), fx)?;
    fx.console()
        .print(&format!("\nFetched {count} package(s).\n"));
    ids::add_identities(&mut files);
    std::fs::create_dir_all(dest).map_err(io)?;
    fs::write_changes(dest, &PackageFiles::new(), &files).map_err(io)?;
    Ok(files)
}

/// Split a `kpt pkg get` argument `REPO_URI[.git]/PKG_PATH[@VERSION]` into
/// repository, directory and ref as kpt does ([`url::parse`]): GitHub URLs without
/// `.git` list the repository's branches, and a missing version is the remote's
/// default branch.
pub fn resolve_package_arg(arg: &str) -> Result<(String, String, String), GetError> {
    let u = url::parse(arg, git::branches)??;
    let git_ref = match u.git_ref {
        Some(r) => r,
        None => git::default_branch(&u.repo)?,
    };
    Ok((u.repo, u.directory, git_ref))
}

/// kpt's `getDest`: a missing `dest` is the package directory itself (its parent
/// must exist); an existing directory receives the package in a new sub-directory
/// named after the package path (or the repository for `/`).
pub fn destination(dest: &Path, repo: &str, directory: &str) -> Result<PathBuf, GetError> {
    let dest = PathBuf::from(url::clean(&dest.to_string_lossy()));
    if !dest.exists() {
        let parent = match dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if !parent.exists() {
            return Err(GetError::NoParent(parent.display().to_string()));
        }
        return Ok(dest);
    }
    if !dest.is_dir() {
        return Err(GetError::DestinationNotDirectory(
            dest.display().to_string(),
        ));
    }
    let repo = repo.strip_suffix('/').unwrap_or(repo);
    let repo = repo.strip_suffix(".git").unwrap_or(repo);
    let joined = url::clean(&format!("{}/{}", url::clean(repo), url::clean(directory)));
    let base = joined.rsplit('/').find(|s| !s.is_empty()).unwrap_or("/");
    let out = dest.join(base);
    if out.exists() {
        return Err(GetError::DestinationExists(out.display().to_string()));
    }
    Ok(out)
}

/// Files of `files` under `dir`, re-rooted.
pub fn subtree(files: &PackageFiles, dir: &str) -> PackageFiles {
    let mut out = PackageFiles::new();
    for (p, b) in files.as_map() {
        if let Some(rel) = relative_to(p, dir) {
            out.insert(rel.to_string(), b.clone());
        }
    }
    out
}
