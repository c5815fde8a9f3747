//! Fetching a package directory from a git repository at a ref.
//!
//! Talking to the remote is done by the `git` CLI, with the commands kpt runs
//! (`GitUpstreamRepo` in kpt's `gitutil`): credentials come from the user's git setup
//! exactly as for kpt (credential helpers and URL user-info for http(s); ssh keys,
//! `~/.ssh/config`, the agent and `GIT_SSH_COMMAND` for ssh). Git never prompts
//! (`GIT_TERMINAL_PROMPT=0`): a missing credential is an error naming the repository.
//!
//! Every remote has a non-bare repository in a cache directory ([`RepoCache`]: kpt's
//! `$KPT_CACHE_DIR`, by default `~/.kpt/repos`, with kpt's directory names), whose
//! refs are listed with `ls-remote` and into which the one ref needed is fetched
//! (`fetch origin --depth=1 <ref>`, or a full `fetch origin` for a ref `ls-remote`
//! does not list). That fetch's own output is passed through to the [`Console`], as
//! kpt runs it verbosely; every other git command's output is kept. The fetched
//! objects are then read with libgit2.
//!
//! The pure parts ([`candidate_refs`], [`tree_to_files`]) are separate so a server
//! that already has the objects can reuse them without fetching.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use git2::Repository;

use super::console::{Console, Silent};
use crate::goquote::go_quote;
use crate::package::PackageFiles;

mod cache;

use cache::UpstreamRepo;
pub use cache::{RepoCache, cache_dir_name};

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
    /// A git command of the fetch failed; worded as kpt's error resolver words it.
    #[error("{}", git_exec_message(.kind, .command, .repo, .git_ref, .details))]
    GitExec {
        kind: GitErrorKind,
        /// The command without `git` (`show v9`).
        command: String,
        repo: String,
        git_ref: String,
        /// What git wrote (stdout, then stderr).
        details: String,
    },
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
            FetchError::GitExec {
                kind: GitErrorKind::UnknownReference,
                ..
            } => "ref-not-found",
            FetchError::GitExec { .. } => "git",
        }
    }
}

/// kpt's classes of git failures (`determineErrorType`, from git's stderr).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GitErrorKind {
    Unknown,
    UnknownReference,
    HttpsAuthRequired,
    RepositoryNotFound,
    RepositoryUnavailable,
}

impl GitErrorKind {
    fn of(stderr: &str) -> GitErrorKind {
        let not_found = stderr
            .find("fatal: repository '")
            .is_some_and(|i| stderr[i..].contains("' not found"));
        if stderr.contains("unknown revision or path not in the working tree") {
            GitErrorKind::UnknownReference
        } else if stderr.contains("could not read Username") {
            GitErrorKind::HttpsAuthRequired
        } else if stderr.contains("Could not resolve host") {
            GitErrorKind::RepositoryUnavailable
        } else if not_found {
            GitErrorKind::RepositoryNotFound
        } else {
            GitErrorKind::Unknown
        }
    }
}

/// kpt's `gitExecErrorResolver` text (without its `Error: ` prefix).
fn git_exec_message(
    kind: &GitErrorKind,
    command: &str,
    repo: &str,
    git_ref: &str,
    details: &str,
) -> String {
    let details = if details.is_empty() {
        String::new()
    } else {
        format!("\nDetails:\n{details}")
    };
    let head = match kind {
        GitErrorKind::UnknownReference => format!(
            "Unknown ref {}. Please verify that the reference exists in upstream repo {}.",
            go_quote(git_ref),
            go_quote(repo)
        ),
        GitErrorKind::HttpsAuthRequired => format!(
            "Repository {} requires authentication. kpt does not support this for the 'https' protocol. Please use the 'git' protocol instead.",
            go_quote(repo)
        ),
        GitErrorKind::RepositoryUnavailable => {
            format!("Unable to access repository {}.", go_quote(repo))
        }
        GitErrorKind::RepositoryNotFound => format!("Repository {} not found.", go_quote(repo)),
        GitErrorKind::Unknown => {
            let mut m = format!(
                "Failed to execute git command {}",
                go_quote(&format!("git {command}"))
            );
            if !repo.is_empty() {
                m.push_str(&format!(" against repo {}", go_quote(repo)));
            }
            if !git_ref.is_empty() {
                m.push_str(&format!(" for reference {}", go_quote(git_ref)));
            }
            m
        }
    };
    format!("{head}\n{details}")
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

#[derive(Debug)]
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn temp_dir() -> std::io::Result<TempDir> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let n = N.fetch_add(1, Ordering::Relaxed);
    let p = std::env::temp_dir().join(format!("kpt-fetch-{}-{nanos}-{n}", std::process::id()));
    std::fs::create_dir_all(&p)?;
    Ok(TempDir(p))
}

/// `url` without its secret, for messages (see [`super::redact`]).
pub use super::redact::redact_url as redact;

/// Run `git args...` (in `dir` when given), never prompting.
fn git_output(dir: Option<&Path>, args: &[&str]) -> Result<Output, String> {
    let mut cmd = Command::new("git");
    if let Some(d) = dir {
        cmd.current_dir(d);
    }
    cmd.args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run git: {e}"))
}

/// The trimmed stderr of a failed git command (passwords redacted).
fn failure_text(out: &Output, args: &[&str], repo: &str) -> String {
    let err = String::from_utf8_lossy(&out.stderr);
    let err = super::redact::scrub(err.trim(), repo);
    if err.is_empty() {
        format!("git {} failed with {}", args[0], out.status)
    } else {
        err
    }
}

/// Run `git args...` (in `dir` when given) against a remote; stdout on success,
/// the trimmed stderr (passwords redacted) on failure.
fn remote_git(dir: Option<&Path>, args: &[&str], repo: &str) -> Result<String, String> {
    let out = git_output(dir, args)?;
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    Err(failure_text(&out, args, repo))
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

/// Fetches packages the way kpt's `ClonerUsingGitExec` does, reporting to a
/// [`Console`].
pub struct Fetcher<'c> {
    cache: RepoCache,
    console: &'c mut dyn Console,
    /// `pkg update` keeps each remote's listing for the whole command and fetches a
    /// ref once; `pkg get` lists and fetches afresh for every package.
    keep_repos: bool,
    repos: HashMap<String, UpstreamRepo>,
}

impl<'c> Fetcher<'c> {
    /// A fetcher over `cache` reporting to `console`; `keep_repos` as kpt's `pkg
    /// update` (true) or `pkg get` (false).
    pub fn new(cache: RepoCache, console: &'c mut dyn Console, keep_repos: bool) -> Self {
        Fetcher {
            cache,
            console,
            keep_repos,
            repos: HashMap::new(),
        }
    }

    /// The console, for the callers' own lines.
    pub fn console(&mut self) -> &mut dyn Console {
        &mut *self.console
    }

    /// Fetch `directory` of `repo` at `git_ref` (branch, tag or commit).
    pub fn fetch(
        &mut self,
        repo: &str,
        directory: &str,
        git_ref: &str,
    ) -> Result<Fetched, FetchError> {
        let mut up = match self.repos.remove(repo) {
            Some(up) => up,
            None => UpstreamRepo::open(&self.cache, repo)?,
        };
        let result = self.fetch_from(&mut up, directory, git_ref);
        if self.keep_repos {
            self.repos.insert(repo.to_string(), up);
        }
        let fetched = result?;
        for link in &fetched.skipped_symlinks {
            self.console
                .print(&format!("[Warn] Ignoring symlink {} \n", go_quote(link)));
        }
        Ok(fetched)
    }

    /// A git command whose output kpt lets through (`RunVerbose`).
    fn verbose(
        &mut self,
        up: &UpstreamRepo,
        args: &[&str],
        git_ref: &str,
    ) -> Result<(), FetchError> {
        let out = git_output(Some(&up.dir), args).map_err(|m| FetchError::Git {
            repo: redact(&up.uri),
            message: m,
        })?;
        self.console.stdout(&out.stdout);
        self.console.stderr(&out.stderr);
        if out.status.success() {
            return Ok(());
        }
        Err(exec_error(up, args, git_ref, &out))
    }

    fn fetch_from(
        &mut self,
        up: &mut UpstreamRepo,
        directory: &str,
        git_ref: &str,
    ) -> Result<Fetched, FetchError> {
        let shown = redact(&up.uri);
        // A `<dir>/<ref>` tag for the package directory or one of its parents wins.
        let tried = candidate_refs(directory, git_ref);
        let chosen = tried[..tried.len() - 1]
            .iter()
            .find(|c| up.tag(c).is_some())
            .cloned()
            .unwrap_or_else(|| git_ref.to_string());
        let branch = up.branch(&chosen).cloned();
        let tag = up.tag(&chosen).cloned();
        if !up.fetched.contains(&chosen) {
            let verified = git_output(Some(&up.dir), &["rev-parse", "--verify", "-q", &chosen])
                .map(|o| String::from_utf8_lossy(&o.stdout).trim() == chosen)
                .unwrap_or(false);
            if branch.is_some() || tag.is_some() || verified {
                // A branch wins over a tag of the same name (kpt fetches the tag there,
                // then fails to check out the branch's commit).
                let what = if branch.is_some() && tag.is_some() && !chosen.starts_with("refs/") {
                    format!("refs/heads/{chosen}")
                } else {
                    chosen.clone()
                };
                self.verbose(up, &["fetch", "origin", "--depth=1", &what], &chosen)?;
            } else {
                // Not a branch, a tag or a full commit: everything, then the revision.
                self.verbose(up, &["fetch", "origin"], "")?;
                let args = ["show", chosen.as_str()];
                let out = git_output(Some(&up.dir), &args).map_err(|m| FetchError::Git {
                    repo: shown.clone(),
                    message: m,
                })?;
                if !out.status.success() {
                    return Err(exec_error(up, &args, &chosen, &out));
                }
            }
            up.fetched.insert(chosen.clone());
        }
        let lock_commit = branch.or(tag).unwrap_or_else(|| chosen.clone());
        let not_found = || FetchError::RefNotFound {
            repo: shown.clone(),
            git_ref: git_ref.to_string(),
            tried: tried.clone(),
        };
        let r = Repository::open(&up.dir).map_err(|e| FetchError::Git {
            repo: shown.clone(),
            message: e.message().to_string(),
        })?;
        let git_err = |e: git2::Error| FetchError::Git {
            repo: shown.clone(),
            message: e.message().to_string(),
        };
        let commit = r
            .revparse_single(&lock_commit)
            .and_then(|o| o.peel_to_commit())
            .map_err(|_| not_found())?;
        let tree = commit.tree().map_err(git_err)?;
        let dir = directory.trim_matches('/');
        let sub = if dir.is_empty() {
            tree
        } else {
            let missing = || FetchError::DirectoryNotFound {
                repo: shown.clone(),
                directory: directory.to_string(),
                git_ref: git_ref.to_string(),
            };
            let entry = tree.get_path(Path::new(dir)).map_err(|_| missing())?;
            r.find_tree(entry.id()).map_err(|_| missing())?
        };
        let (files, skipped_symlinks) = tree_to_files(&r, &sub).map_err(git_err)?;
        Ok(Fetched {
            files,
            resolved_ref: chosen,
            commit: lock_commit,
            skipped_symlinks,
        })
    }
}

/// A failed git command of the fetch, classified as kpt classifies it.
fn exec_error(up: &UpstreamRepo, args: &[&str], git_ref: &str, out: &Output) -> FetchError {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let redacted = |s: &str| super::redact::scrub(s, &up.uri);
    FetchError::GitExec {
        kind: GitErrorKind::of(&stderr),
        command: args.join(" "),
        repo: redact(&up.uri),
        git_ref: git_ref.to_string(),
        details: redacted(&format!("{stdout}{stderr}")),
    }
}

/// Fetch `directory` of `repo` at `git_ref` (branch, tag or commit) into a fresh
/// temporary cache, reporting nothing.
pub fn fetch(repo: &str, directory: &str, git_ref: &str) -> Result<Fetched, FetchError> {
    let mut quiet = Silent;
    Fetcher::new(RepoCache::temporary()?, &mut quiet, false).fetch(repo, directory, git_ref)
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
        // A token standing as an HTTP user name is a secret too (porch-git's rule, shared).
        assert_eq!(redact("https://tok@h/r.git"), "https://***@h/r.git");
    }

    #[test]
    fn cache_directories_are_named_as_kpt_names_them() {
        // kpt 1.0.0-beta.56's directory for this URL.
        assert_eq!(
            cache_dir_name("file:///tmp/kx/up"),
            "mzuwyzj2f4xs65dnoaxww6bpovynihmm3ghqbmqe5gaatghm7bbh4==="
        );
        // Padding for every remainder of the input length.
        assert!(cache_dir_name("a").ends_with("===="));
        assert_eq!(cache_dir_name("abcd").len() % 8, 0);
    }

    #[test]
    fn git_failures_read_as_kpts_resolver() {
        let e = FetchError::GitExec {
            kind: GitErrorKind::of(
                "fatal: ambiguous argument 'v9': unknown revision or path not in the working tree.\n",
            ),
            command: "show v9".into(),
            repo: "file:///r".into(),
            git_ref: "v9".into(),
            details: "fatal: x\n".into(),
        };
        assert_eq!(
            e.to_string(),
            "Unknown ref \"v9\". Please verify that the reference exists in upstream repo \"file:///r\".\n\nDetails:\nfatal: x\n"
        );
        let e = FetchError::GitExec {
            kind: GitErrorKind::of("fatal: boom\n"),
            command: "fetch origin --depth=1 v1".into(),
            repo: "file:///r".into(),
            git_ref: "v1".into(),
            details: String::new(),
        };
        assert_eq!(
            e.to_string(),
            "Failed to execute git command \"git fetch origin --depth=1 v1\" against repo \"file:///r\" for reference \"v1\"\n"
        );
    }
}
