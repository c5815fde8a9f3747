//! Fetching a few moved refs in-process with libgit2.
//!
//! After `git ls-remote` (CLI, with a timeout) has told which refs moved, fetching them with
//! the git CLI costs a process, a full-ref connectivity check and ref negotiation over every
//! local ref; libgit2 does the same transfer in-process. libgit2 has no network timeout, so
//! the transfer runs on a helper thread and is abandoned (reported Unavailable) when it
//! exceeds the remote's timeout. SSH remotes and large updates use the CLI.

use std::path::Path;
use std::sync::mpsc;

use crate::cli::{self, Remote};
use crate::error::GitError;
use crate::spec::GitAuth;

/// Above this many moved refs the CLI is as good (one negotiation either way).
const MAX_IN_PROCESS: usize = 64;

/// Fetches exactly `refs` (same names locally), forcing updates.
pub(crate) fn fetch_refs(git_dir: &Path, remote: &Remote, refs: &[&str]) -> Result<(), GitError> {
    let header = match &remote.auth {
        GitAuth::None => None,
        GitAuth::Basic { username, password } => Some(format!(
            "Authorization: Basic {}",
            cli::base64(format!("{username}:{password}").as_bytes())
        )),
        GitAuth::Bearer { token } => Some(format!("Authorization: Bearer {token}")),
        GitAuth::SshKey { .. } => return cli::fetch_refs(git_dir, remote, refs),
    };
    if refs.len() > MAX_IN_PROCESS
        || !(remote.url.starts_with("http://") || remote.url.starts_with("https://"))
    {
        return cli::fetch_refs(git_dir, remote, refs);
    }
    let specs: Vec<String> = refs.iter().map(|r| format!("+{r}:{r}")).collect();
    let (dir, url) = (git_dir.to_path_buf(), remote.url.clone());
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("git-fetch".into())
        .spawn(move || {
            let result = (|| -> Result<(), git2::Error> {
                let repo = git2::Repository::open_bare(&dir)?;
                let mut r = repo.remote_anonymous(&url)?;
                let mut opts = git2::FetchOptions::new();
                opts.download_tags(git2::AutotagOption::None)
                    .update_fetchhead(false);
                if let Some(h) = header.as_deref() {
                    opts.custom_headers(&[h]);
                }
                r.fetch(&specs, Some(&mut opts), None)
            })();
            let _ = tx.send(result);
        })?;
    match rx.recv_timeout(remote.timeout) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(GitError::Unavailable {
            url: remote.url.clone(),
            message: e.message().to_owned(),
        }),
        Err(_) => Err(GitError::Unavailable {
            url: remote.url.clone(),
            message: format!("fetch timed out after {:?}", remote.timeout),
        }),
    }
}
