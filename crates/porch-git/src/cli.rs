//! Network operations through the `git` CLI: fetch, and atomic compare-and-swap push.
//!
//! libgit2 cannot request an atomic push nor a lease on arbitrary expected values, so every
//! push runs `git push --atomic --force-with-lease=<ref>:<expected>`: either all refs move
//! from exactly the values we expect, or none does. Fetch uses the CLI too so both share one
//! credential path. Credentials go through the child's environment, never its arguments.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use wait_timeout::ChildExt;

use crate::error::GitError;
use crate::redact::{redact_url, scrub};
use crate::spec::GitAuth;

/// Where and how to reach the remote.
#[derive(Clone)]
pub struct Remote {
    /// URL.
    pub url: String,
    /// Credentials.
    pub auth: GitAuth,
    /// Wall-clock limit per command.
    pub timeout: Duration,
}

impl std::fmt::Debug for Remote {
    // The URL may hold a password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Remote")
            .field("url", &redact_url(&self.url))
            .field("auth", &self.auth)
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// One ref update of an atomic push.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefUpdate {
    /// Full remote ref name (`refs/heads/main`, `refs/tags/pkg/v1`).
    pub remote_ref: String,
    /// New value; `None` deletes the ref.
    pub new: Option<git2::Oid>,
    /// Value the remote must have now; `None` means the ref must not exist.
    pub expected: Option<git2::Oid>,
}

/// Rejection reasons that mean "someone else moved the ref": the lease failed locally
/// (`stale info`), the remote refused a non-fast-forward, or the remote's own ref
/// transaction saw a different old value (`atomic transaction failed` + `cannot lock ref`).
pub(crate) const CONFLICT_MARKERS: [&str; 7] = [
    "stale info",
    "fetch first",
    "non-fast-forward",
    "already exists",
    "failed to update ref",
    "failed to lock",
    "atomic transaction failed",
];

/// The remote's branches and tags (`git ls-remote --refs`): ref name → object id.
pub fn ls_remote(git_dir: &Path, remote: &Remote) -> Result<HashMap<String, git2::Oid>, GitError> {
    let args = vec![
        "ls-remote".to_owned(),
        "--refs".into(),
        "--".into(),
        remote.url.clone(),
    ];
    let out = run(Some(git_dir), remote, &args)?;
    if !out.success {
        return Err(classify_failure(remote, &args, &out));
    }
    let mut refs = HashMap::new();
    for line in out.stdout.lines() {
        let Some((oid, name)) = line.split_once('\t') else {
            continue;
        };
        if !(name.starts_with("refs/heads/") || name.starts_with("refs/tags/")) {
            continue;
        }
        if let Ok(oid) = git2::Oid::from_str(oid) {
            refs.insert(name.to_owned(), oid);
        }
    }
    Ok(refs)
}

/// Fetches exactly `refs` (same names locally), forcing updates.
pub fn fetch_refs(git_dir: &Path, remote: &Remote, refs: &[&str]) -> Result<(), GitError> {
    // Keep command lines bounded; a fetch of many refs is split.
    for chunk in refs.chunks(2000) {
        let mut args: Vec<String> = [
            "fetch",
            "--no-tags",
            "--quiet",
            "--no-write-fetch-head",
            "--no-show-forced-updates",
            "--no-auto-maintenance",
            "--no-auto-gc",
            // Offer only branch tips as haves: with thousands of tags the default
            // negotiation dominates the cost of fetching one new revision.
            "--negotiation-tip=refs/heads/*",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        // `--`: nothing after it is an option, whatever the URL or a ref name starts with.
        args.push("--".into());
        args.push(remote.url.clone());
        args.extend(chunk.iter().map(|r| format!("+{r}:{r}")));
        let out = run(Some(git_dir), remote, &args)?;
        if !out.success {
            return Err(classify_failure(remote, &args, &out));
        }
    }
    Ok(())
}

/// First sync: `git clone --mirror` into `dest` (a fresh directory). Much faster than a
/// fetch into an empty repository, which writes one loose ref file per ref.
pub fn clone_mirror(dest: &Path, remote: &Remote) -> Result<(), GitError> {
    let args = vec![
        "clone".to_owned(),
        "--mirror".into(),
        "--quiet".into(),
        "--no-hardlinks".into(),
        "--".into(),
        remote.url.clone(),
        dest.display().to_string(),
    ];
    let out = run(None, remote, &args)?;
    if !out.success {
        return Err(classify_failure(remote, &args, &out));
    }
    Ok(())
}

/// Pushes `updates` atomically with a lease on every ref.
pub fn push(git_dir: &Path, remote: &Remote, updates: &[RefUpdate]) -> Result<(), GitError> {
    if updates.is_empty() {
        return Ok(());
    }
    let mut args = vec![
        "push".to_owned(),
        "--atomic".into(),
        "--porcelain".into(),
        "--no-verify".into(),
    ];
    for u in updates {
        let expect = u.expected.map(|o| o.to_string()).unwrap_or_default();
        args.push(format!("--force-with-lease={}:{}", u.remote_ref, expect));
    }
    args.push("--".into());
    args.push(remote.url.clone());
    for u in updates {
        match u.new {
            Some(oid) => args.push(format!("{oid}:{}", u.remote_ref)),
            None => args.push(format!(":{}", u.remote_ref)),
        }
    }
    let out = run(Some(git_dir), remote, &args)?;
    if out.success {
        return Ok(());
    }
    // Per-ref verdicts from --porcelain: `!\t<src>:<dst>\t[rejected] (<reason>)`.
    let rejected: Vec<&str> = out.stdout.lines().filter(|l| l.starts_with('!')).collect();
    let lost_race = rejected
        .iter()
        .any(|l| CONFLICT_MARKERS.iter().any(|r| l.contains(r)))
        || out.stderr.contains("cannot lock ref");
    if lost_race {
        let refs: Vec<String> = updates.iter().map(|u| u.remote_ref.clone()).collect();
        return Err(GitError::Conflict(format!(
            "push of {} was rejected because the remote changed: {}",
            refs.join(", "),
            rejected.join("; ")
        )));
    }
    Err(classify_failure(remote, &args, &out))
}

struct Output {
    success: bool,
    stdout: String,
    stderr: String,
}

fn classify_failure(remote: &Remote, args: &[String], out: &Output) -> GitError {
    // git quotes the URL in its messages; a password in it must not travel further.
    let stderr = scrub(&out.stderr, &remote.url);
    let e = stderr.to_lowercase();
    let network = [
        "could not resolve",
        "connection refused",
        "failed to connect",
        "timed out",
        "unable to access",
        "authentication failed",
        "could not read",
        "hung up",
        "rpc failed",
        "broken pipe",
        "empty reply",
        "connection reset",
        "does not appear to be a git repository",
        "repository not found",
        "not found",
        "permission denied",
        "returned error",
    ];
    if network.iter().any(|n| e.contains(n)) {
        return GitError::Unavailable {
            url: redact_url(&remote.url),
            message: stderr.trim().to_owned(),
        };
    }
    GitError::Command {
        args: redact(remote, args).join(" "),
        stderr: scrub(&format!("{}{}", out.stdout, out.stderr), &remote.url),
    }
}

/// Arguments as they may be shown: the URL without its password.
fn redact(remote: &Remote, args: &[String]) -> Vec<String> {
    args.iter().map(|a| scrub(a, &remote.url)).collect()
}

fn run(git_dir: Option<&Path>, remote: &Remote, args: &[String]) -> Result<Output, GitError> {
    let mut cmd = Command::new("git");
    if let Some(d) = git_dir {
        cmd.arg("--git-dir").arg(d);
    }
    cmd.args(args);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // Isolate from user/system configuration and never prompt.
    cmd.env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_ASKPASS", "true")
        .env("SSH_ASKPASS", "true");
    let mut config: Vec<(String, String)> = vec![
        ("credential.helper".into(), String::new()),
        ("http.lowSpeedLimit".into(), "1".into()),
        (
            "http.lowSpeedTime".into(),
            remote.timeout.as_secs().max(1).to_string(),
        ),
        ("core.hooksPath".into(), "/dev/null".into()),
    ];
    match &remote.auth {
        GitAuth::None => {}
        GitAuth::Basic { username, password } => config.push((
            "http.extraHeader".into(),
            format!(
                "Authorization: Basic {}",
                base64(format!("{username}:{password}").as_bytes())
            ),
        )),
        GitAuth::Bearer { token } => {
            config.push((
                "http.extraHeader".into(),
                format!("Authorization: Bearer {token}"),
            ));
        }
        GitAuth::SshKey { private_key } => {
            cmd.env(
                "GIT_SSH_COMMAND",
                format!(
                    "ssh -i {} -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=accept-new",
                    shell_quote(&private_key.display().to_string())
                ),
            );
        }
        GitAuth::SshKeyKnownHosts {
            private_key,
            known_hosts,
        } => {
            // `-F /dev/null`: no user or system ssh config, as git runs without its own.
            cmd.env(
                "GIT_SSH_COMMAND",
                format!(
                    "ssh -F /dev/null -i {} -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile={} -o ConnectTimeout={}",
                    shell_quote(&private_key.display().to_string()),
                    shell_quote(&known_hosts.display().to_string()),
                    remote.timeout.as_secs().max(1)
                ),
            );
        }
    }
    cmd.env("GIT_CONFIG_COUNT", config.len().to_string());
    for (i, (k, v)) in config.iter().enumerate() {
        cmd.env(format!("GIT_CONFIG_KEY_{i}"), k)
            .env(format!("GIT_CONFIG_VALUE_{i}"), v);
    }
    let mut child = cmd.spawn()?;
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let out_reader = std::thread::spawn(move || read_all(stdout));
    let err_reader = std::thread::spawn(move || read_all(stderr));
    let status = match child.wait_timeout(remote.timeout)? {
        Some(s) => s,
        None => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(GitError::Unavailable {
                url: redact_url(&remote.url),
                message: format!(
                    "git {} timed out after {:?}",
                    args.first().map(String::as_str).unwrap_or(""),
                    remote.timeout
                ),
            });
        }
    };
    let stdout = out_reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    tracing::debug!(
        args = ?redact(remote, args),
        success = status.success(),
        stderr = %scrub(&stderr, &remote.url),
        "git"
    );
    Ok(Output {
        success: status.success(),
        stdout,
        stderr,
    })
}

/// Quotes `s` for the shell git runs `GIT_SSH_COMMAND` with.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

fn read_all<R: Read>(r: Option<R>) -> String {
    let mut s = String::new();
    if let Some(mut r) = r {
        let _ = r.read_to_string(&mut s);
    }
    s
}

/// Standard base64 with padding.
pub(crate) fn base64(data: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(T[(n >> (18 - 6 * i) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_paths_for_the_shell() {
        assert_eq!(shell_quote("/k/id"), "'/k/id'");
        assert_eq!(shell_quote("/k/it's"), "'/k/it'\\''s'");
    }

    #[test]
    fn a_url_starting_with_a_dash_is_never_an_option() {
        let dir = tempfile::tempdir().expect("tempdir");
        let marker = dir.path().join("pwned");
        let git_dir = dir.path().join("m.git");
        let repo = git2::Repository::init_bare(&git_dir).expect("init");
        let tree = repo.treebuilder(None).expect("tb").write().expect("tree");
        let sig = git2::Signature::now("t", "t@example.com").expect("sig");
        let commit = repo
            .commit(
                None,
                &sig,
                &sig,
                "c",
                &repo.find_tree(tree).expect("tree"),
                &[],
            )
            .expect("commit");
        let remote = Remote {
            url: format!("--upload-pack=touch {}", marker.display()),
            auth: GitAuth::None,
            timeout: Duration::from_secs(20),
        };
        assert!(ls_remote(&git_dir, &remote).is_err());
        assert!(fetch_refs(&git_dir, &remote, &["refs/heads/main"]).is_err());
        assert!(clone_mirror(&dir.path().join("c.git"), &remote).is_err());
        let receive = Remote {
            url: format!("--receive-pack=touch {}", marker.display()),
            ..remote
        };
        let update = RefUpdate {
            remote_ref: "refs/heads/main".into(),
            new: Some(commit),
            expected: None,
        };
        assert!(push(&git_dir, &receive, &[update]).is_err());
        assert!(!marker.exists(), "git ran the URL as an option");
    }

    #[test]
    fn failures_never_show_the_password() {
        let dir = tempfile::tempdir().expect("tempdir");
        let git_dir = dir.path().join("m.git");
        git2::Repository::init_bare(&git_dir).expect("init");
        // Nothing listens on port 9: git fails and quotes the URL.
        let remote = Remote {
            url: "http://user:hunter2@127.0.0.1:9/r.git".into(),
            auth: GitAuth::None,
            timeout: Duration::from_secs(20),
        };
        let e = ls_remote(&git_dir, &remote).expect_err("unreachable");
        let shown = format!("{e} {e:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
        let e = clone_mirror(&dir.path().join("c.git"), &remote).expect_err("unreachable");
        let shown = format!("{e} {e:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
    }

    #[test]
    fn base64_encodes() {
        assert_eq!(base64(b"user:pass"), "dXNlcjpwYXNz");
        assert_eq!(base64(b"nephio:secret"), "bmVwaGlvOnNlY3JldA==");
        assert_eq!(base64(b"ab"), "YWI=");
    }
}
