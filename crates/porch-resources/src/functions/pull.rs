//! How a FunctionConfig's image is pulled (porch-rs extensions of the kind): the registry
//! credentials of the Secrets `spec.imagePullSecrets` names, read from the FunctionConfig's
//! namespace at each pull so a rotated Secret is used at once, and `spec.imagePullPolicy`.
//! The in-process sandbox honours both; a remote function runner cannot be given them
//! (Porch's gRPC request carries an image name only) and uses its own docker config.

use std::sync::Arc;

use base64::Engine;
use kpt::resource_list::ResourceList;
use kpt::runtime::{FunctionOutput, FunctionRef, RunOptions, RuntimeError};
use serde_json::Value;

/// The registry logins of one pull Secret.
#[derive(Clone, PartialEq, Eq)]
pub enum PullSecret {
    /// A docker config (`.dockerconfigjson`, or the legacy `.dockercfg` map): logins per
    /// registry.
    DockerConfig(String),
    /// A `kubernetes.io/basic-auth` Secret: a login for the image's registry, whichever.
    Basic { username: String, password: String },
}

impl std::fmt::Debug for PullSecret {
    // Credentials stay out of logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PullSecret::DockerConfig(_) => f.write_str("PullSecret::DockerConfig(..)"),
            PullSecret::Basic { username, .. } => write!(f, "PullSecret::Basic({username}, ..)"),
        }
    }
}

/// The pull settings of one image, from its FunctionConfig.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImagePullSettings {
    /// The named Secrets' logins, in the order named.
    pub secrets: Vec<PullSecret>,
    /// `Always`, `IfNotPresent` or `Never` (validated when the FunctionConfig is written).
    pub policy: Option<String>,
}

/// Reads pull Secret `name` of namespace `ns` (porch-server: through its own API).
pub type PullSecretSource = Arc<dyn Fn(&str, &str) -> Result<PullSecret, String> + Send + Sync>;

/// Runs function images with per-image pull settings: the in-process sandbox.
pub trait ConfiguredImages: Send + Sync {
    fn run(
        &self,
        function: &FunctionRef,
        input: ResourceList,
        options: &RunOptions,
        pull: &ImagePullSettings,
    ) -> Result<FunctionOutput, RuntimeError>;
}

/// The image pull policies a FunctionConfig may name (kpt's).
pub const POLICIES: [&str; 3] = ["Always", "IfNotPresent", "Never"];

/// The registry logins of a stored Secret (`data` base64, as the API keeps it).
pub fn pull_secret(secret: &Value) -> Result<PullSecret, String> {
    let name = secret
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let field = |k: &str| {
        let encoded = secret.get("data")?.get(k)?.as_str()?;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .ok()?;
        Some(String::from_utf8_lossy(&bytes).into_owned())
    };
    let kind = secret
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("Opaque");
    let docker = field(".dockerconfigjson").or_else(|| field(".dockercfg"));
    match (kind, docker) {
        ("kubernetes.io/dockerconfigjson" | "kubernetes.io/dockercfg" | "Opaque", Some(text)) => {
            Ok(PullSecret::DockerConfig(text))
        }
        ("kubernetes.io/basic-auth", _) => match (field("username"), field("password")) {
            (Some(username), Some(password)) => Ok(PullSecret::Basic { username, password }),
            _ => Err(format!(
                "secret {name:?} of type kubernetes.io/basic-auth needs data.username and data.password"
            )),
        },
        (kind, _) => Err(format!(
            "secret {name:?} of type {kind} holds no registry credentials (use a \
             kubernetes.io/dockerconfigjson or kubernetes.io/basic-auth Secret)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn b64(s: &str) -> String {
        base64::engine::general_purpose::STANDARD.encode(s)
    }

    #[test]
    fn secrets_of_the_registry_types_give_logins() {
        let docker = json!({"metadata": {"name": "a"}, "type": "kubernetes.io/dockerconfigjson",
            "data": {".dockerconfigjson": b64(r#"{"auths":{}}"#)}});
        assert_eq!(
            pull_secret(&docker),
            Ok(PullSecret::DockerConfig(r#"{"auths":{}}"#.into()))
        );
        let legacy = json!({"type": "kubernetes.io/dockercfg", "data": {".dockercfg": b64("{}")}});
        assert_eq!(
            pull_secret(&legacy),
            Ok(PullSecret::DockerConfig("{}".into()))
        );
        let basic = json!({"type": "kubernetes.io/basic-auth",
            "data": {"username": b64("u"), "password": b64("pw-9")}});
        assert_eq!(
            pull_secret(&basic),
            Ok(PullSecret::Basic {
                username: "u".into(),
                password: "pw-9".into()
            })
        );
        assert!(!format!("{:?}", pull_secret(&basic)).contains("pw-9"));
        let token = json!({"metadata": {"name": "tok"}, "type": "Opaque",
            "data": {"bearerToken": b64("t")}});
        let err = pull_secret(&token).expect_err("no registry credentials");
        assert!(
            err.contains("\"tok\"") && err.contains("dockerconfigjson"),
            "{err}"
        );
        let half = json!({"type": "kubernetes.io/basic-auth", "data": {"username": b64("u")}});
        assert!(pull_secret(&half).is_err());
    }
}
