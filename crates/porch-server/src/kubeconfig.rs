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

/// Renders a kubeconfig for `user` authenticating with a client certificate (PEM).
pub fn render_client_cert(
    server: &str,
    ca_pem: Option<&str>,
    user: &str,
    cert_pem: &str,
    key_pem: &str,
) -> anyhow::Result<String> {
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let mut cluster = json!({"server": server});
    if let Some(ca) = ca_pem {
        cluster["certificate-authority-data"] = b64(ca).into();
    }
    let cfg = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "porch", "cluster": cluster}],
        "users": [{"name": user, "user": {
            "client-certificate-data": b64(cert_pem),
            "client-key-data": b64(key_pem),
        }}],
        "contexts": [{"name": "porch", "context": {"cluster": "porch", "user": user, "namespace": "default"}}],
        "current-context": "porch",
        "preferences": {},
    });
    Ok(serde_yaml::to_string(&cfg)?)
}

/// The server URL and CA (PEM) of a kubeconfig this server wrote.
pub fn server_of(kubeconfig: &str) -> anyhow::Result<(String, Option<String>)> {
    let v: serde_json::Value = serde_yaml::from_str(kubeconfig)?;
    let cluster = &v["clusters"][0]["cluster"];
    let server = cluster["server"]
        .as_str()
        .ok_or_else(|| anyhow::anyhow!("the kubeconfig names no server"))?
        .to_string();
    let ca = cluster["certificate-authority-data"]
        .as_str()
        .map(|d| base64::engine::general_purpose::STANDARD.decode(d))
        .transpose()?
        .map(String::from_utf8)
        .transpose()?;
    Ok((server, ca))
}
