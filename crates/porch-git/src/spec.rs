//! What a registration says about a git repository, and adapter options.

use std::path::PathBuf;
use std::time::Duration;

use porch_core::names::RepositoryName;
use porch_core::revision::Author;

use crate::error::GitError;

/// Credentials for the remote (resolved from the Repository's secret by the caller).
#[derive(Clone, Default, PartialEq, Eq)]
pub enum GitAuth {
    /// Anonymous (or `file://`).
    #[default]
    None,
    /// HTTP basic auth (`kubernetes.io/basic-auth` secrets).
    Basic {
        /// User name.
        username: String,
        /// Password or token.
        password: String,
    },
    /// HTTP `Authorization: Bearer` (Opaque secrets with `bearerToken`).
    Bearer {
        /// The token.
        token: String,
    },
    /// An SSH private key for `ssh://` URLs.
    SshKey {
        /// Path of the private key file.
        private_key: PathBuf,
    },
    /// An SSH private key for `ssh://` URLs, with the server's host key pinned by a
    /// `known_hosts` file: a server presenting any other key is refused, and nothing is
    /// written to the user's `~/.ssh`.
    SshKeyKnownHosts {
        /// Path of the private key file (no passphrase: git runs non-interactively).
        private_key: PathBuf,
        /// `known_hosts` file holding the server's host key (`[host]:port` for other ports).
        known_hosts: PathBuf,
    },
}

impl std::fmt::Debug for GitAuth {
    // Never print secrets.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GitAuth::None => f.write_str("None"),
            GitAuth::Basic { username, .. } => write!(f, "Basic({username}, ***)"),
            GitAuth::Bearer { .. } => f.write_str("Bearer(***)"),
            GitAuth::SshKey { private_key } => write!(f, "SshKey({})", private_key.display()),
            GitAuth::SshKeyKnownHosts {
                private_key,
                known_hosts,
            } => write!(
                f,
                "SshKeyKnownHosts({}, {})",
                private_key.display(),
                known_hosts.display()
            ),
        }
    }
}

/// A registered git repository (`spec.git` of a Repository object).
#[derive(Clone)]
pub struct RepoSpec {
    /// Repository object name.
    pub name: RepositoryName,
    /// Remote URL: `file://`, `http(s)://` or `ssh://`.
    pub url: String,
    /// Registered branch (default `main`).
    pub branch: String,
    /// Directory holding the packages (`""` or `/` = root).
    pub directory: String,
    /// Create the branch when the remote lacks it.
    pub create_branch: bool,
    /// Credentials.
    pub auth: GitAuth,
    /// `spec.git.author`/`email`: overrides the commit author when set.
    pub author: Option<Author>,
    /// `spec.sync.schedule` (5-field cron); `None` uses [`GitOptions::default_sync_period`].
    pub sync_schedule: Option<String>,
}

/// Refuses a remote URL git could read as something else: one starting with `-` would be an
/// option (`--upload-pack=<command>`) wherever an argument list lacks `--`; control
/// characters and an empty URL are never a remote.
pub fn check_url(url: &str) -> Result<(), GitError> {
    let shown = crate::redact::redact_url(url);
    if url.trim().is_empty() {
        return Err(GitError::Invalid("repository URL must not be empty".into()));
    }
    if url.starts_with('-') {
        return Err(GitError::Invalid(format!(
            "repository URL {shown:?} is invalid: it must not start with '-'"
        )));
    }
    if url.chars().any(char::is_control) {
        return Err(GitError::Invalid(format!(
            "repository URL {shown:?} is invalid: it must not contain control characters"
        )));
    }
    Ok(())
}

impl std::fmt::Debug for RepoSpec {
    // The URL may hold a password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RepoSpec")
            .field("name", &self.name)
            .field("url", &crate::redact::redact_url(&self.url))
            .field("branch", &self.branch)
            .field("directory", &self.directory)
            .field("create_branch", &self.create_branch)
            .field("auth", &self.auth)
            .field("author", &self.author)
            .field("sync_schedule", &self.sync_schedule)
            .finish()
    }
}

impl RepoSpec {
    /// A spec with Porch's defaults (`main`, root directory, no auth).
    pub fn new(name: RepositoryName, url: impl Into<String>) -> Self {
        RepoSpec {
            name,
            url: url.into(),
            branch: "main".into(),
            directory: String::new(),
            create_branch: false,
            auth: GitAuth::None,
            author: None,
            sync_schedule: None,
        }
    }

    /// The directory without leading/trailing `/`.
    pub fn dir(&self) -> &str {
        self.directory.trim_matches('/')
    }
}

/// Default wall-clock limit of one network command (porch-server's `--git-timeout`).
pub const DEFAULT_NETWORK_TIMEOUT: Duration = Duration::from_secs(20);

/// Settings of the adapter shared by all repositories.
#[derive(Debug, Clone)]
pub struct GitOptions {
    /// Mirrors live in `<data_dir>/git/<url with / and : replaced by ->` (a URL with a
    /// password: its redacted form and a hash).
    pub data_dir: PathBuf,
    /// Wall-clock limit for one fetch or push.
    pub network_timeout: Duration,
    /// How often a publish is re-applied on a moved branch head before giving up with Conflict.
    pub publish_retries: u32,
    /// Sync period when a repository has no cron schedule.
    pub default_sync_period: Duration,
}

impl GitOptions {
    /// Defaults: 20 s network timeout, 3 publish retries, 60 s sync period.
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        GitOptions {
            data_dir: data_dir.into(),
            network_timeout: DEFAULT_NETWORK_TIMEOUT,
            publish_retries: 3,
            default_sync_period: Duration::from_secs(60),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_that_git_would_read_as_options_are_invalid() {
        for bad in [
            "--upload-pack=touch /tmp/x",
            "-oProxyCommand=x",
            "",
            "http://h/\nx",
        ] {
            let e = check_url(bad).expect_err(bad);
            assert_eq!(e.kind(), porch_core::ErrorKind::Invalid, "{bad:?}");
        }
        for ok in [
            "https://h/r.git",
            "ssh://git@h/r",
            "file:///tmp/r.git",
            "/srv/r-1.git",
        ] {
            assert!(check_url(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn debug_output_hides_the_password() {
        let name = RepositoryName::new("r").expect("name");
        let spec = RepoSpec::new(name, "https://u:hunter2@h/r.git");
        let shown = format!("{spec:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains("https://u:***@h/r.git"), "{shown}");
    }

    #[test]
    fn the_default_network_timeout_is_20_seconds() {
        assert_eq!(
            GitOptions::new("/d").network_timeout,
            Duration::from_secs(20)
        );
    }
}
