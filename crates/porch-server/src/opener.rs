//! The `RepositoryOpener` hook: how a registered Repository is opened.
//!
//! The repository controller calls `open` whenever a Repository is created or its spec
//! changes, and `close` when it is deleted (which stops any sync). The git adapter (porch-git)
//! implements this trait; until it is wired in, [`ReachabilityOpener`] checks that the address
//! is reachable (a local path that is a git repository, or a TCP connection to the host).

use std::time::Duration;

use porch_api::RepositorySpec;

/// Credentials resolved from the Repository's `secretRef`. `Debug` never shows them.
#[derive(Clone)]
#[allow(dead_code)] // Read by the git adapter once it is wired in.
pub enum Credentials {
    Basic { username: String, password: String },
    Bearer(String),
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Credentials::Basic { username, .. } => write!(f, "Basic({username}, <redacted>)"),
            Credentials::Bearer(_) => f.write_str("Bearer(<redacted>)"),
        }
    }
}

/// A Repository to open.
#[derive(Debug, Clone)]
#[allow(dead_code)] // Read by the git adapter once it is wired in.
pub struct RepositoryTarget {
    pub namespace: String,
    pub name: String,
    pub spec: RepositorySpec,
    pub credentials: Option<Credentials>,
}

/// What an opened repository reports into its status.
#[derive(Debug, Clone, Default)]
pub struct Opened {
    pub git_commit_hash: Option<String>,
    pub package_count: Option<i64>,
}

/// Opens and closes registered repositories.
#[async_trait::async_trait]
pub trait RepositoryOpener: Send + Sync {
    /// Opens (or re-opens after a spec change) the repository. The error text becomes the
    /// message of the `Ready=False` condition.
    async fn open(&self, target: &RepositoryTarget) -> Result<Opened, String>;
    /// Forgets the repository and stops its sync.
    async fn close(&self, namespace: &str, name: &str);
}

/// Checks reachability only; stands in until the git adapter is wired.
pub struct ReachabilityOpener;

#[async_trait::async_trait]
impl RepositoryOpener for ReachabilityOpener {
    async fn open(&self, target: &RepositoryTarget) -> Result<Opened, String> {
        let spec = &target.spec;
        match spec.type_.as_deref() {
            Some("oci") => Err("OCI repositories are not supported by this server".into()),
            _ => {
                let git = spec.git.as_ref().ok_or("spec.git is missing")?;
                check_address(&git.repo).await.map(|_| Opened::default())
            }
        }
    }

    async fn close(&self, _namespace: &str, _name: &str) {}
}

async fn check_address(repo: &str) -> Result<(), String> {
    if let Some(path) = repo
        .strip_prefix("file://")
        .or_else(|| repo.starts_with('/').then_some(repo))
    {
        let p = std::path::Path::new(path);
        let is_git = p.join("HEAD").is_file() || p.join(".git").exists();
        return if is_git {
            Ok(())
        } else {
            Err(format!("{repo} is not a git repository"))
        };
    }
    let (scheme, rest) = repo
        .split_once("://")
        .ok_or_else(|| format!("unsupported repository address {repo:?}"))?;
    let default_port = match scheme {
        "https" => 443,
        "http" => 80,
        "ssh" => 22,
        "git" => 9418,
        other => return Err(format!("unsupported repository scheme {other:?}")),
    };
    let authority = rest.split('/').next().unwrap_or("");
    let host_port = authority.rsplit('@').next().unwrap_or(authority);
    let addr = if host_port
        .rsplit_once(':')
        .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
    {
        host_port.to_string()
    } else {
        format!("{host_port}:{default_port}")
    };
    match tokio::time::timeout(
        Duration::from_secs(5),
        tokio::net::TcpStream::connect(&addr),
    )
    .await
    {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(format!("cannot reach {addr}: {e}")),
        Err(_) => Err(format!("cannot reach {addr}: timed out")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn local_paths_must_be_git_repositories() {
        let dir = tempfile::tempdir().expect("tempdir");
        let url = format!("file://{}", dir.path().display());
        assert!(check_address(&url).await.is_err());
        std::fs::write(dir.path().join("HEAD"), "ref: refs/heads/main\n").expect("write");
        assert!(check_address(&url).await.is_ok());
        assert!(check_address("svn://x/y").await.is_err());
    }
}
