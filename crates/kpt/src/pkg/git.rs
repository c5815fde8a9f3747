//! Fetching a package directory from a git repository at a ref.
//!
//! Talking to the remote is done by the `git` CLI, as kpt does: credentials come
//! from the user's git setup exactly as for kpt (credential helpers and URL
//! user-info for http(s); ssh keys, `~/.ssh/config`, the agent and
//! `GIT_SSH_COMMAND` for ssh). Git never prompts (`GIT_TERMINAL_PROMPT=0`): a
//! missing credential is an error naming the repository. The fetched objects are
//! then read with libgit2.
//!
//! The pure parts ([`candidate_refs`], [`tree_to_files`]) are separate so a server
//! that already has the objects can reuse them without fetching.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use git2::Repository;

use crate::package::PackageFiles;

/// Errors fetching from git.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error(
        "failed to fetch from repository {repo:?}: {message}\nhint: check the URL, network access and credentials (git credential helper, ssh key or agent, GIT_SSH_COMMAND)"
    )]
    Unreachable { repo: String, message: String },
    #[error("ref {git_ref:?} not found in repository {repo:?} (tried {tried:?})")]
    RefNotFound {
        repo: String,
        git_ref: String,
        tried: Vec<String>,
    },
    #[error("package directory {directory:?} not found in repository {repo:?} at ref {git_ref:?}")]
    DirectoryNotFound {
        repo: String,
        directory: String,
        git_ref: String,
    },
    #[error(
        "cannot find the default branch of repository {repo:?}: {message}\nhint: give a version, REPO.git/PKG@VERSION"
    )]
    NoDefaultBranch { repo: String, message: String },
    #[error("git error in repository {repo:?}: {message}")]
    Git { repo: String, message: String },
}

impl FetchError {
    /// A short machine-readable kind.
    pub fn kind(&self) -> &'static str {
        match self {
            FetchError::Unreachable { .. } => "unreachable",
            FetchError::RefNotFound { .. } => "ref-not-found",
            FetchError::DirectoryNotFound { .. } => "directory-not-found",
            FetchError::NoDefaultBranch { .. } => "no-default-branch",
            FetchError::Git { .. } => "git",
        }
    }
}

/// A fetched package directory.
#[derive(Debug, Clone)]
pub struct Fetched {
    pub files: PackageFiles,
    /// The ref actually used (a directory-prefixed tag when one exists).
    pub resolved_ref: String,
    /// Commit SHA.
    pub commit: String,
    /// Symlinks that were skipped.
    pub skipped_symlinks: Vec<String>,
}

/// Refs kpt tries for `git_ref` in `directory`: `<dir>/<ref>` for the directory and
/// each shorter prefix, then `<ref>` itself.
pub fn candidate_refs(directory: &str, git_ref: &str) -> Vec<String> {
    let dir = directory.trim_matches('/');
    let mut out = Vec::new();
    if !dir.is_empty() {
        let parts: Vec<&str> = dir.split('/').collect();
        for n in (1..=parts.len()).rev() {
            out.push(format!("{}/{git_ref}", parts[..n].join("/")));
        }
    }
    out.push(git_ref.to_string());
    out
}

struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn temp_dir() -> std::io::Result<TempDir> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let p = std::env::temp_dir().join(format!("kpt-fetch-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&p)?;
    Ok(TempDir(p))
}

/// `url` without the password of its user-info, for messages.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let host_end = rest.find('/').unwrap_or(rest.len());
    match rest[..host_end].rsplit_once('@') {
        Some((userinfo, host)) if userinfo.contains(':') => {
            let user = userinfo.split(':').next().unwrap_or_default();
            format!("{scheme}://{user}:***@{host}{}", &rest[host_end..])
        }
        _ => url.to_string(),
    }
}

/// Run `git args...` (in `dir` when given) against a remote; stdout on success,
/// the trimmed stderr (passwords redacted) on failure.
fn remote_git(dir: Option<&Path>, args: &[&str], repo: &str) -> Result<String, String> {
    let mut cmd = Command::new("git");
    if let Some(d) = dir {
        cmd.arg("-C").arg(d);
    }
    let out = cmd
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    let err = String::from_utf8_lossy(&out.stderr);
    let err = err.trim().replace(repo, &redact(repo));
    Err(if err.is_empty() {
        format!("git {} failed with {}", args[0], out.status)
    } else {
        err
    })
}

/// The branch the remote's `HEAD` points to (kpt's default when no version is
/// given).
pub fn default_branch(repo: &str) -> Result<String, FetchError> {
    let out = remote_git(None, &["ls-remote", "--symref", repo, "HEAD"], repo).map_err(|m| {
        FetchError::Unreachable {
            repo: redact(repo),
            message: m,
        }
    })?;
    out.lines()
        .find_map(|l| {
            let (target, name) = l.strip_prefix("ref: ")?.split_once('\t')?;
            (name.trim() == "HEAD").then_some(target.strip_prefix("refs/heads/")?.to_string())
        })
        .ok_or_else(|| FetchError::NoDefaultBranch {
            repo: redact(repo),
            message: "the remote HEAD is no branch".into(),
        })
}

/// The branch names of a remote.
pub fn branches(repo: &str) -> Result<Vec<String>, FetchError> {
    let out = remote_git(None, &["ls-remote", "--heads", repo], repo).map_err(|m| {
        FetchError::Unreachable {
            repo: redact(repo),
            message: m,
        }
    })?;
    Ok(out
        .lines()
        .filter_map(|l| l.split_once('\t')?.1.strip_prefix("refs/heads/"))
        .map(str::to_string)
        .collect())
}

/// Fetch `directory` of `repo` at `git_ref` (branch, tag or commit).
pub fn fetch(repo: &str, directory: &str, git_ref: &str) -> Result<Fetched, FetchError> {
    let tmp = temp_dir().map_err(|e| FetchError::Git {
        repo: redact(repo),
        message: e.to_string(),
    })?;
    fetch_into(&tmp.0, repo, directory, git_ref)
}

fn fetch_into(
    tmp: &Path,
    repo: &str,
    directory: &str,
    git_ref: &str,
) -> Result<Fetched, FetchError> {
    let shown = redact(repo);
    let git_err = |e: git2::Error| FetchError::Git {
        repo: shown.clone(),
        message: e.message().to_string(),
    };
    let r = Repository::init_bare(tmp).map_err(git_err)?;
    remote_git(
        Some(tmp),
        &[
            "fetch",
            "--quiet",
            "--no-tags",
            repo,
            "+refs/heads/*:refs/remotes/origin/*",
            "+refs/tags/*:refs/tags/*",
        ],
        repo,
    )
    .map_err(|m| FetchError::Unreachable {
        repo: shown.clone(),
        message: m,
    })?;
    let Some(Resolved {
        git_ref: resolved_ref,
        lock_commit,
        commit: oid,
    }) = resolve(&r, directory, git_ref)
    else {
        return Err(FetchError::RefNotFound {
            repo: shown,
            git_ref: git_ref.to_string(),
            tried: candidate_refs(directory, git_ref),
        });
    };
    let commit = r.find_commit(oid).map_err(git_err)?;
    let tree = commit.tree().map_err(git_err)?;
    let dir = directory.trim_matches('/');
    let sub = if dir.is_empty() {
        tree
    } else {
        let entry = tree
            .get_path(Path::new(dir))
            .map_err(|_| FetchError::DirectoryNotFound {
                repo: shown.clone(),
                directory: directory.to_string(),
                git_ref: git_ref.to_string(),
            })?;
        r.find_tree(entry.id())
            .map_err(|_| FetchError::DirectoryNotFound {
                repo: shown.clone(),
                directory: directory.to_string(),
                git_ref: git_ref.to_string(),
            })?
    };
    let (files, skipped_symlinks) = tree_to_files(&r, &sub).map_err(git_err)?;
    Ok(Fetched {
        files,
        resolved_ref,
        commit: lock_commit,
        skipped_symlinks,
    })
}

/// A ref resolved as kpt's `ClonerUsingGitExec` resolves it.
struct Resolved {
    /// The ref kpt records (a directory-prefixed tag when one exists).
    git_ref: String,
    /// What kpt records as `upstreamLock.commit`: the id `ls-remote` lists for a
    /// branch or tag (an annotated tag's own object), else the ref as given.
    lock_commit: String,
    commit: git2::Oid,
}

fn ref_target(r: &Repository, name: &str) -> Option<(git2::Oid, git2::Oid)> {
    let reference = r.find_reference(name).ok()?;
    let listed = reference.target()?;
    let commit = reference.peel_to_commit().ok()?.id();
    Some((listed, commit))
}

/// kpt first looks for a tag `<dir>/<ref>` for the package directory and each of
/// its parents; then resolves the ref as a branch (`refs/heads/` optional), then
/// as a tag (`refs/tags/` optional), and last as anything `git show` accepts after
/// a full fetch (a commit, short or full).
fn resolve(r: &Repository, directory: &str, git_ref: &str) -> Option<Resolved> {
    let tried = candidate_refs(directory, git_ref);
    let mut chosen = git_ref.to_string();
    for cand in &tried[..tried.len().saturating_sub(1)] {
        if ref_target(r, &format!("refs/tags/{cand}")).is_some() {
            chosen = cand.clone();
            break;
        }
    }
    let branch = chosen.strip_prefix("refs/heads/").unwrap_or(&chosen);
    let tag = chosen.strip_prefix("refs/tags/").unwrap_or(&chosen);
    let listed = ref_target(r, &format!("refs/remotes/origin/{branch}"))
        .or_else(|| ref_target(r, &format!("refs/tags/{tag}")));
    if let Some((listed, commit)) = listed {
        return Some(Resolved {
            git_ref: chosen,
            lock_commit: listed.to_string(),
            commit,
        });
    }
    let commit = r.revparse_single(&chosen).ok()?.peel_to_commit().ok()?.id();
    Some(Resolved {
        lock_commit: chosen.clone(),
        git_ref: chosen,
        commit,
    })
}

/// The blobs of a tree as package files (symlinks skipped and reported, `.git`
/// ignored, submodules ignored).
pub fn tree_to_files(
    r: &Repository,
    tree: &git2::Tree<'_>,
) -> Result<(PackageFiles, Vec<String>), git2::Error> {
    let mut files = PackageFiles::new();
    let mut links = Vec::new();
    let mut err = None;
    tree.walk(git2::TreeWalkMode::PreOrder, |root, entry| {
        let name = entry.name().unwrap_or_default();
        let path = format!("{root}{name}");
        if name == ".git" {
            return git2::TreeWalkResult::Skip;
        }
        if entry.kind() != Some(git2::ObjectType::Blob) {
            return git2::TreeWalkResult::Ok;
        }
        if entry.filemode() == 0o120000 {
            links.push(path);
            return git2::TreeWalkResult::Ok;
        }
        match r.find_blob(entry.id()) {
            Ok(b) => files.insert(path, b.content().to_vec()),
            Err(e) => {
                err = Some(e);
                return git2::TreeWalkResult::Abort;
            }
        }
        git2::TreeWalkResult::Ok
    })?;
    if let Some(e) = err {
        return Err(e);
    }
    Ok((files, links))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_redacted_from_urls() {
        assert_eq!(
            redact("https://u:secret@h:8080/r.git"),
            "https://u:***@h:8080/r.git"
        );
        assert_eq!(redact("ssh://git@h/r"), "ssh://git@h/r");
        assert_eq!(redact("https://h/a@b"), "https://h/a@b");
        assert_eq!(redact("/local/path"), "/local/path");
    }
}
