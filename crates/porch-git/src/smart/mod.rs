//! Git's smart-HTTP protocol (v0, stateless RPC), in process.
//!
//! Why: a `git` child per fetch or push costs a process start, and `git push` downloads and
//! parses the whole ref advertisement (5,000 tags) and starts `pack-objects` just to send a
//! handful of new objects. Here:
//! - the ref check of a sync is one `GET info/refs?service=git-upload-pack`;
//! - a fetch is one `POST git-upload-pack` (wants, our branch tips as haves, `done`), its
//!   pack streamed from the side band into libgit2's pack indexer;
//! - a push is one `POST git-receive-pack`: `atomic` and `report-status`, the expected old
//!   value of every ref on its command line (the server's ref transaction checks them, so a
//!   lost race is still a Conflict and nothing is overwritten), and a pack of exactly the
//!   objects the new commits add, built with libgit2's PackBuilder. receive-pack's
//!   capabilities are read once per mirror (`GET info/refs?service=git-receive-pack`).
//!
//! `file://` and `ssh://` remotes, URLs with credentials in them, proxies (`http_proxy` and
//! friends) and `GIT_SSL_NO_VERIFY` keep using the `git` CLI ([`crate::cli`]), as does a
//! server that answers with the dumb protocol.

mod advert;
mod fetch;
mod http;
pub(crate) mod pack;
pub(crate) mod pktline;
mod push;

use std::collections::HashMap;

pub(crate) use fetch::{fetch, ls_refs};
pub(crate) use push::push;

use crate::cli::Remote;
use crate::error::GitError;

/// Why a smart-HTTP exchange failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SmartError {
    /// Network, TLS, timeout or an HTTP error status.
    #[error("{0}")]
    Unavailable(String),
    /// The server answered, but not in the smart protocol (a dumb HTTP server).
    #[error("the server does not speak git's smart HTTP protocol")]
    NotSmart,
    /// A malformed, truncated or unexpected answer.
    #[error("protocol error: {0}")]
    Protocol(String),
    /// The remote's refs are not what the push expected.
    #[error("{0}")]
    Conflict(String),
    /// The remote refused the push (hook, permissions, policy).
    #[error("{0}")]
    Rejected(String),
    /// libgit2 failed on the local mirror.
    #[error("{0}")]
    Git(#[from] git2::Error),
}

impl SmartError {
    /// The adapter's error for a failure on the local mirror (packing objects).
    pub(crate) fn into_local(self) -> GitError {
        match self {
            SmartError::Git(e) => GitError::Git(e),
            other => GitError::Command {
                args: "pack-objects (in process)".into(),
                stderr: other.to_string(),
            },
        }
    }

    /// The adapter's error for an exchange with `url`.
    pub(crate) fn into_git(self, url: &str) -> GitError {
        match self {
            SmartError::Unavailable(m) => GitError::Unavailable {
                url: url.to_owned(),
                message: m,
            },
            e @ (SmartError::NotSmart | SmartError::Protocol(_)) => GitError::Unavailable {
                url: url.to_owned(),
                message: e.to_string(),
            },
            SmartError::Conflict(m) => GitError::Conflict(m),
            SmartError::Rejected(m) => GitError::Rejected {
                url: url.to_owned(),
                message: m,
            },
            SmartError::Git(e) => GitError::Git(e),
        }
    }
}

/// Per-mirror protocol state: the HTTP client (kept-alive connections), the repository's
/// base URL after redirects, and receive-pack's capabilities once known.
pub(crate) struct Session {
    client: http::HttpClient,
    /// Base URL of the repository (`info/refs` and the services live below it).
    base: String,
    upload_caps: Option<advert::Caps>,
    receive_caps: Option<advert::Caps>,
}

impl Session {
    fn new(remote: &Remote) -> Result<Session, SmartError> {
        let https = remote.url.starts_with("https://");
        Ok(Session {
            client: http::HttpClient::new(https, remote.timeout)?,
            base: remote.url.trim_end_matches('/').to_owned(),
            upload_caps: None,
            receive_caps: None,
        })
    }
}

/// The smart sessions of one mirror, by URL (one in practice: a mirror serves one URL).
#[derive(Default)]
pub(crate) struct Sessions {
    by_url: HashMap<String, Session>,
    /// URLs whose server turned out not to speak the smart protocol.
    dumb: std::collections::HashSet<String>,
}

impl Sessions {
    /// The session for `remote`, or `None` when `remote` must go through the `git` CLI.
    pub(crate) fn get(&mut self, remote: &Remote) -> Result<Option<&mut Session>, GitError> {
        if !in_process(&remote.url) || self.dumb.contains(&remote.url) {
            return Ok(None);
        }
        if !self.by_url.contains_key(&remote.url) {
            let s = Session::new(remote).map_err(|e| e.into_git(&remote.url))?;
            self.by_url.insert(remote.url.clone(), s);
        }
        Ok(self.by_url.get_mut(&remote.url))
    }

    /// Remembers that `url` serves the dumb protocol: later operations use the CLI.
    pub(crate) fn mark_dumb(&mut self, url: &str) {
        tracing::info!(
            url,
            "remote does not speak smart HTTP; using the git CLI for it"
        );
        self.by_url.remove(url);
        self.dumb.insert(url.to_owned());
    }
}

/// Environment variables under which git's own HTTP stack behaves differently from ours
/// (`GIT_SSL_CAINFO`/`GIT_SSL_CAPATH` are honoured in process, see `http.rs`).
const CLI_ENV: [&str; 6] = [
    "http_proxy",
    "https_proxy",
    "HTTPS_PROXY",
    "all_proxy",
    "ALL_PROXY",
    "GIT_SSL_NO_VERIFY",
];

/// Is `url` served in process? Plain `http(s)://host/path` without user info, and no
/// proxy or git TLS override in the environment.
pub(crate) fn in_process(url: &str) -> bool {
    plain_http_url(url)
        && !CLI_ENV
            .iter()
            .any(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty()))
}

fn plain_http_url(url: &str) -> bool {
    let Some(rest) = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))
    else {
        return false;
    };
    let authority = rest.split('/').next().unwrap_or("");
    !authority.is_empty() && !authority.contains('@')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_in_process_for_plain_http_urls_only() {
        assert!(plain_http_url("http://127.0.0.1:8080/repo.git"));
        assert!(plain_http_url("https://github.com/org/repo"));
        assert!(!plain_http_url("https://user:pw@github.com/org/repo"));
        assert!(!plain_http_url("file:///tmp/repo.git"));
        assert!(!plain_http_url("ssh://git@host/repo.git"));
        assert!(!plain_http_url("https:///nohost"));
    }
}
