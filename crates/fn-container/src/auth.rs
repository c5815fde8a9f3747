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

/// Credentials for `registry` in the docker config at `path` (anonymous when none).
pub fn lookup(path: Option<&Path>, registry: &str) -> RegistryAuth {
    let Some(text) = path.and_then(|p| std::fs::read_to_string(p).ok()) else {
        return RegistryAuth::Anonymous;
    };
    let Ok(config) = serde_json::from_str::<serde_json::Value>(&text) else {
        tracing::warn!(path = ?path, "docker config is not JSON; pulling anonymously");
        return RegistryAuth::Anonymous;
    };
    let Some(auths) = config.get("auths").and_then(|a| a.as_object()) else {
        return RegistryAuth::Anonymous;
    };
    for (key, entry) in auths {
        if !same_registry(key, registry) {
            continue;
        }
        if let Some(encoded) = entry.get("auth").and_then(|a| a.as_str())
            && let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(encoded)
            && let Ok(pair) = String::from_utf8(bytes)
            && let Some((user, pass)) = pair.split_once(':')
        {
            return RegistryAuth::Basic(user.to_string(), pass.to_string());
        }
        let field = |name: &str| entry.get(name).and_then(|v| v.as_str());
        if let (Some(user), Some(pass)) = (field("username"), field("password")) {
            return RegistryAuth::Basic(user.to_string(), pass.to_string());
        }
    }
    RegistryAuth::Anonymous
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
}
