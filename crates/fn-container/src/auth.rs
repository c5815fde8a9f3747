//! Registry credentials from a docker config file (`$DOCKER_CONFIG/config.json` or
//! `~/.docker/config.json`): the `auths` map's basic credentials. Credential helpers
//! (`credsStore`) are not run: they are host programs outside the sandbox's reach.

use std::path::{Path, PathBuf};

use base64::Engine;
use oci_client::secrets::RegistryAuth;

/// Where docker keeps its config on this machine.
pub fn default_config_path() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("DOCKER_CONFIG") {
        return Some(PathBuf::from(dir).join("config.json"));
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".docker").join("config.json"))
}

/// `https://index.docker.io/v1/` and `ghcr.io/` both name their host.
fn host_of(key: &str) -> &str {
    let no_scheme = key
        .strip_prefix("https://")
        .or_else(|| key.strip_prefix("http://"))
        .unwrap_or(key);
    no_scheme.split('/').next().unwrap_or(no_scheme)
}

fn same_registry(key: &str, registry: &str) -> bool {
    let docker_hub =
        |h: &str| matches!(h, "docker.io" | "index.docker.io" | "registry-1.docker.io");
    let k = host_of(key);
    k == registry || (docker_hub(k) && docker_hub(registry))
}

/// One registry login.
#[derive(Clone, PartialEq, Eq)]
struct Login {
    /// The registry (`host[:port]`, or a docker config key naming one); `None`: any.
    registry: Option<String>,
    username: String,
    password: String,
}

impl std::fmt::Debug for Login {
    // Passwords stay out of logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Login")
            .field("registry", &self.registry)
            .field("username", &self.username)
            .finish_non_exhaustive()
    }
}

/// Registry logins handed to one pull (a FunctionConfig's pull Secrets), tried before the
/// docker config file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Credentials(Vec<Login>);

/// A docker config (or pull Secret) that is not one.
#[derive(Debug, thiserror::Error)]
#[error("not a docker config: {0}")]
pub struct InvalidDockerConfig(String);

impl InvalidDockerConfig {
    /// A short machine-readable kind.
    pub fn kind(&self) -> &'static str {
        "invalid-docker-config"
    }
}

impl Credentials {
    /// A login for whichever registry the image is on (a `kubernetes.io/basic-auth` Secret).
    pub fn basic(username: impl Into<String>, password: impl Into<String>) -> Self {
        Credentials(vec![Login {
            registry: None,
            username: username.into(),
            password: password.into(),
        }])
    }

    /// The logins of a docker config: `{"auths": {...}}` (`config.json`,
    /// `.dockerconfigjson`) or the legacy bare map (`.dockercfg`).
    pub fn from_docker_config(text: &str) -> Result<Self, InvalidDockerConfig> {
        let config: serde_json::Value =
            serde_json::from_str(text).map_err(|e| InvalidDockerConfig(e.to_string()))?;
        let auths = match config.get("auths") {
            Some(a) => a.as_object(),
            None => config.as_object(),
        }
        .ok_or_else(|| InvalidDockerConfig("`auths` is not an object".into()))?;
        let mut logins = Vec::new();
        for (key, entry) in auths {
            if let Some(encoded) = entry.get("auth").and_then(|a| a.as_str())
                && let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(encoded)
                && let Ok(pair) = String::from_utf8(bytes)
                && let Some((user, pass)) = pair.split_once(':')
            {
                logins.push(Login {
                    registry: Some(key.clone()),
                    username: user.to_string(),
                    password: pass.to_string(),
                });
                continue;
            }
            let field = |name: &str| entry.get(name).and_then(|v| v.as_str());
            if let (Some(user), Some(pass)) = (field("username"), field("password")) {
                logins.push(Login {
                    registry: Some(key.clone()),
                    username: user.to_string(),
                    password: pass.to_string(),
                });
            }
        }
        Ok(Credentials(logins))
    }

    /// Adds `other`'s logins after these.
    pub fn extend(&mut self, other: Credentials) {
        self.0.extend(other.0);
    }

    /// No logins.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The login for `registry`: one naming it first, then one for any registry.
    pub fn find(&self, registry: &str) -> Option<RegistryAuth> {
        let named = self.0.iter().find(|l| {
            l.registry
                .as_deref()
                .is_some_and(|k| same_registry(k, registry))
        });
        named
            .or_else(|| self.0.iter().find(|l| l.registry.is_none()))
            .map(|l| RegistryAuth::Basic(l.username.clone(), l.password.clone()))
    }
}

/// Credentials for `registry` in the docker config at `path` (anonymous when none).
pub fn lookup(path: Option<&Path>, registry: &str) -> RegistryAuth {
    let Some(text) = path.and_then(|p| std::fs::read_to_string(p).ok()) else {
        return RegistryAuth::Anonymous;
    };
    match Credentials::from_docker_config(&text) {
        Ok(c) => c.find(registry).unwrap_or(RegistryAuth::Anonymous),
        Err(e) => {
            tracing::warn!(path = ?path, error = %e, "unusable docker config; pulling anonymously");
            RegistryAuth::Anonymous
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_basic_credentials_by_host() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("config.json");
        let auth = base64::engine::general_purpose::STANDARD.encode("alice:s3cret");
        std::fs::write(
            &path,
            format!(
                r#"{{"auths":{{"https://index.docker.io/v1/":{{"auth":"{auth}"}},
                "127.0.0.1:5000":{{"username":"bob","password":"pw"}}}}}}"#
            ),
        )
        .expect("write");
        assert!(matches!(
            lookup(Some(&path), "docker.io"),
            RegistryAuth::Basic(u, p) if u == "alice" && p == "s3cret"
        ));
        assert!(matches!(
            lookup(Some(&path), "127.0.0.1:5000"),
            RegistryAuth::Basic(u, _) if u == "bob"
        ));
        assert!(matches!(
            lookup(Some(&path), "ghcr.io"),
            RegistryAuth::Anonymous
        ));
        assert!(matches!(lookup(None, "ghcr.io"), RegistryAuth::Anonymous));
    }

    #[test]
    fn pull_secret_logins_match_their_registry_or_any() {
        let auth = base64::engine::general_purpose::STANDARD.encode("carol:pw1");
        // `.dockercfg` is the bare map.
        let legacy = Credentials::from_docker_config(&format!(
            r#"{{"reg.example:5000":{{"auth":"{auth}"}}}}"#
        ))
        .expect("legacy");
        assert!(matches!(
            legacy.find("reg.example:5000"),
            Some(RegistryAuth::Basic(u, p)) if u == "carol" && p == "pw1"
        ));
        assert!(legacy.find("other.example").is_none());
        let mut both = legacy.clone();
        both.extend(Credentials::basic("dave", "pw2"));
        assert!(matches!(
            both.find("other.example"),
            Some(RegistryAuth::Basic(u, _)) if u == "dave"
        ));
        assert!(matches!(
            both.find("reg.example:5000"),
            Some(RegistryAuth::Basic(u, _)) if u == "carol"
        ));
        assert!(Credentials::from_docker_config("[1]").is_err());
        assert!(Credentials::default().is_empty());
        assert!(!format!("{both:?}").contains("pw1"));
    }
}
