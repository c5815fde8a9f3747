//! The cache of repositories fetched from, one per remote URL, as kpt keeps them
//! (`$KPT_CACHE_DIR`, by default `~/.kpt/repos`), and one remote's repository in it with
//! the refs `ls-remote` listed (kpt's `GitUpstreamRepo`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::*;

/// Where the repositories fetched from are kept, one per remote URL, as kpt keeps
/// them: the state of these repositories decides what `git fetch` reports (a branch
/// seen for the first time is a `[new branch]`, a moved one a forced update).
#[derive(Debug)]
pub struct RepoCache {
    root: PathBuf,
    _temp: Option<TempDir>,
}

impl RepoCache {
    /// kpt's cache: `$KPT_CACHE_DIR`, else `~/.kpt/repos`.
    pub fn kpt() -> Result<RepoCache, FetchError> {
        if let Some(d) = std::env::var_os("KPT_CACHE_DIR").filter(|d| !d.is_empty()) {
            return Ok(RepoCache::at(d));
        }
        match std::env::var_os("HOME").filter(|d| !d.is_empty()) {
            Some(home) => Ok(RepoCache::at(
                PathBuf::from(home).join(".kpt").join("repos"),
            )),
            None => Err(FetchError::Git {
                repo: String::new(),
                message: "error looking up user home dir: $HOME is not defined".into(),
            }),
        }
    }

    /// A cache in `root`.
    pub fn at(root: impl Into<PathBuf>) -> RepoCache {
        RepoCache {
            root: root.into(),
            _temp: None,
        }
    }

    /// A fresh cache in a temporary directory, removed when dropped.
    pub fn temporary() -> Result<RepoCache, FetchError> {
        let t = temp_dir().map_err(|e| FetchError::Git {
            repo: String::new(),
            message: e.to_string(),
        })?;
        Ok(RepoCache {
            root: t.0.clone(),
            _temp: Some(t),
        })
    }

    /// The cache directory.
    pub fn root(&self) -> &Path {
        &self.root
    }
}

/// kpt's directory name for a remote in its cache (`getRepoDir`): kpt hashes with
/// `md5.New().Sum(uri)`, which is the URL followed by the MD5 digest of nothing; that,
/// base32-encoded (RFC 4648, padded) and lower-cased.
pub fn cache_dir_name(uri: &str) -> String {
    const MD5_OF_NOTHING: [u8; 16] = [
        0xd4, 0x1d, 0x8c, 0xd9, 0x8f, 0x00, 0xb2, 0x04, 0xe9, 0x80, 0x09, 0x98, 0xec, 0xf8, 0x42,
        0x7e,
    ];
    const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";
    let mut bytes = uri.as_bytes().to_vec();
    bytes.extend_from_slice(&MD5_OF_NOTHING);
    let mut out = String::new();
    for chunk in bytes.chunks(5) {
        let mut block = [0u8; 5];
        block[..chunk.len()].copy_from_slice(chunk);
        let bits = block.iter().fold(0u64, |acc, b| (acc << 8) | u64::from(*b));
        let chars = (chunk.len() * 8).div_ceil(5);
        for i in 0..8 {
            if i < chars {
                out.push(ALPHABET[((bits >> (35 - 5 * i)) & 31) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// One remote's repository in the cache, with the refs `ls-remote` listed (kpt's
/// `GitUpstreamRepo`).
#[derive(Debug)]
pub(super) struct UpstreamRepo {
    pub(super) uri: String,
    pub(super) dir: PathBuf,
    pub(super) heads: BTreeMap<String, String>,
    pub(super) tags: BTreeMap<String, String>,
    /// Refs already fetched by this command.
    pub(super) fetched: BTreeSet<String>,
    /// The private cache of a URL that carries a password.
    pub(super) _private: Option<TempDir>,
}

impl UpstreamRepo {
    /// Create the cache repository if needed (`git init`, `git remote add origin`)
    /// and list the remote's branches and tags. A URL with a password in it gets a
    /// cache of its own, removed afterwards: kpt would keep the password in its
    /// cache's git config (and directory name).
    pub(super) fn open(cache: &RepoCache, uri: &str) -> Result<UpstreamRepo, FetchError> {
        let shown = redact(uri);
        let git_err = |m: String| FetchError::Git {
            repo: shown.clone(),
            message: m,
        };
        let private = if shown != uri {
            Some(RepoCache::temporary()?)
        } else {
            None
        };
        let cache = private.as_ref().unwrap_or(cache);
        std::fs::create_dir_all(&cache.root).map_err(|e| {
            git_err(format!(
                "error creating cache directory for repo: {}: {e}",
                cache.root.display()
            ))
        })?;
        let name = cache_dir_name(uri);
        let dir = cache.root.join(&name);
        if !dir.exists() {
            remote_git(Some(&cache.root), &["init", &name], uri)
                .map_err(|m| git_err(format!("error running `git init`: {m}")))?;
            remote_git(Some(&dir), &["remote", "add", "origin", uri], uri)
                .map_err(|m| git_err(format!("error adding origin remote: {m}")))?;
        }
        let listed = remote_git(
            Some(&dir),
            &["ls-remote", "--heads", "--tags", "--refs", "origin"],
            uri,
        )
        .map_err(|m| FetchError::Unreachable {
            repo: shown.clone(),
            message: m,
        })?;
        let mut heads = BTreeMap::new();
        let mut tags = BTreeMap::new();
        for line in listed.lines() {
            let mut it = line.split_whitespace();
            let (Some(id), Some(name)) = (it.next(), it.next()) else {
                continue;
            };
            if let Some(h) = name.strip_prefix("refs/heads/") {
                heads.insert(h.to_string(), id.to_string());
            } else if let Some(t) = name.strip_prefix("refs/tags/") {
                tags.insert(t.to_string(), id.to_string());
            }
        }
        Ok(UpstreamRepo {
            uri: uri.to_string(),
            dir,
            heads,
            tags,
            fetched: BTreeSet::new(),
            _private: private.and_then(|c| c._temp),
        })
    }

    pub(super) fn branch(&self, r: &str) -> Option<&String> {
        self.heads.get(r.strip_prefix("refs/heads/").unwrap_or(r))
    }

    pub(super) fn tag(&self, r: &str) -> Option<&String> {
        self.tags.get(r.strip_prefix("refs/tags/").unwrap_or(r))
    }
}
