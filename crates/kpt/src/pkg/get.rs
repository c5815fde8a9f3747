//! `kpt pkg get`: a local package from a git repository — fresh Kptfile with
//! `upstream`/`upstreamLock`, upstream Kptfile merged in, remote sub-packages
//! fetched, identity markers added.

use std::path::{Path, PathBuf};

use super::git::{self, FetchError, Fetched};
use super::ids;
use super::update::{Strategy, UpdateError, kptfile::merge_kptfiles, read_kptfile};
use super::url::{self, ParseError};
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

/// Fetch every sub-package that has an `upstream` but no `upstreamLock`.
pub fn fetch_remote_subpackages(files: &mut PackageFiles) -> Result<(), GetError> {
    let mut stack: Vec<String> = files.package_dirs();
    while let Some(dir) = stack.pop() {
        if dir.is_empty() {
            continue;
        }
        let kf = join(&dir, KPTFILE);
        let Some(k) = read_kptfile(files, &kf)? else {
            continue;
        };
        let (Some(up), None) = (&k.upstream, &k.upstream_lock) else {
            continue;
        };
        let Some(g) = &up.git else { continue };
        let fetched = git::fetch(&g.repo, &g.directory, &g.git_ref)?;
        let mut merged = k.clone();
        if let Some(upk) = read_kptfile(&fetched.files, KPTFILE)? {
            merged = merge_kptfiles(&merged, &upk, None, false, &kf)?;
        }
        merged.upstream_lock = Some(lock(&g.repo, &g.directory, &fetched));
        for (p, b) in fetched.files.as_map() {
            if p != KPTFILE {
                files.insert(join(&dir, p), b.clone());
            }
        }
        files.insert(kf, merged.to_yaml().into_bytes());
        for d in fetched.files.package_dirs() {
            if !d.is_empty() {
                stack.push(join(&dir, &d));
            }
        }
    }
    Ok(())
}

/// `kpt pkg get` into directory `dest`.
pub fn get(dest: &Path, opts: &GetOptions) -> Result<PackageFiles, GetError> {
    get_with_warnings(dest, opts).map(|(files, _)| files)
}

/// [`get`], also returning the warnings kpt prints (`[Warn] Ignoring symlink
/// "PATH"` for each symlink of the fetched package, which is not copied).
pub fn get_with_warnings(
    dest: &Path,
    opts: &GetOptions,
) -> Result<(PackageFiles, Vec<String>), GetError> {
    let io = |e: std::io::Error| GetError::Io {
        path: dest.display().to_string(),
        source: e,
    };
    if dest.exists() && std::fs::read_dir(dest).map_err(io)?.next().is_some() {
        return Err(GetError::DestinationExists(dest.display().to_string()));
    }
    let fetched = git::fetch(&opts.repo, &opts.directory, &opts.git_ref)?;
    let warnings = fetched
        .skipped_symlinks
        .iter()
        .map(|l| format!("[Warn] Ignoring symlink {l:?}"))
        .collect();
    let mut files = build(opts, &fetched)?;
    fetch_remote_subpackages(&mut files)?;
    ids::add_identities(&mut files);
    std::fs::create_dir_all(dest).map_err(io)?;
    fs::write_changes(dest, &PackageFiles::new(), &files).map_err(io)?;
    Ok((files, warnings))
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
