//! The kubeconfig written for kubectl, porchctl and kube-rs clients.

use base64::Engine;
use serde_json::json;

/// Renders a kubeconfig for `server` with the admin token (and the CA, for HTTPS).
pub fn render(server: &str, ca_pem: Option<&str>, token: Option<&str>) -> anyhow::Result<String> {
    let mut cluster = json!({"server": server});
    if let Some(ca) = ca_pem {
        cluster["certificate-authority-data"] =
            base64::engine::general_purpose::STANDARD.encode(ca).into();
    }
    let cfg = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "porch", "cluster": cluster}],
        "users": [{"name": "porch-admin", "user": match token {
            Some(t) => json!({"token": t}),
            None => json!({}),
        }}],
        "contexts": [{"name": "porch", "context": {"cluster": "porch", "user": "porch-admin", "namespace": "default"}}],
        "current-context": "porch",
        "preferences": {},
    });
    Ok(serde_yaml::to_string(&cfg)?)
}
