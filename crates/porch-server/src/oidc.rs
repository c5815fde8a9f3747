//! Where the OIDC issuer's keys come from: its discovery document
//! (`<issuer>/.well-known/openid-configuration`) and the `jwks_uri` named there, or a file.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use porch_apiserver::auth::jwt::KeySet;
use porch_apiserver::auth::oidc::KeySource;

/// Largest discovery document or key set read.
const MAX_BODY: usize = 1 << 20;
const TIMEOUT: Duration = Duration::from_secs(10);

/// Fetches the key set over HTTP(S) from the issuer's discovery document.
pub struct DiscoveryKeys {
    issuer: String,
    client: Client<HttpsConnector<HttpConnector>, Empty<Bytes>>,
}

/// Plain `http` is allowed only on a loopback host (a test's or a local issuer): the key set
/// decides who is who, so it must not travel unprotected.
fn check_url(url: &str) -> anyhow::Result<()> {
    let uri: http::Uri = url
        .parse()
        .with_context(|| format!("invalid URL {url:?}"))?;
    match uri.scheme_str() {
        Some("https") => Ok(()),
        Some("http")
            if matches!(
                uri.host(),
                Some("localhost" | "127.0.0.1" | "[::1]" | "::1")
            ) =>
        {
            Ok(())
        }
        _ => bail!("{url:?}: the OIDC issuer must be https (http only on a loopback host)"),
    }
}

impl DiscoveryKeys {
    pub fn new(issuer: &str, ca_file: Option<&PathBuf>) -> anyhow::Result<Self> {
        check_url(issuer)?;
        let mut roots = rustls::RootCertStore::empty();
        match ca_file {
            Some(path) => {
                let pem = std::fs::read(path)
                    .with_context(|| format!("cannot read {}", path.display()))?;
                use rustls::pki_types::pem::PemObject;
                for c in rustls::pki_types::CertificateDer::pem_slice_iter(&pem) {
                    roots.add(c.with_context(|| format!("invalid CA {}", path.display()))?)?;
                }
            }
            None => {
                for c in rustls_native_certs::load_native_certs().certs {
                    let _ = roots.add(c);
                }
            }
        }
        let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth();
        let mut connector = HttpConnector::new();
        connector.enforce_http(false);
        connector.set_connect_timeout(Some(TIMEOUT));
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http1()
            .wrap_connector(connector);
        Ok(Self {
            issuer: issuer.trim_end_matches('/').to_string(),
            client: Client::builder(TokioExecutor::new()).build(https),
        })
    }

    async fn get(&self, url: &str) -> Result<Vec<u8>, String> {
        check_url(url).map_err(|e| e.to_string())?;
        let uri: http::Uri = url.parse().map_err(|e| format!("{url}: {e}"))?;
        let fetch = async {
            let resp = self
                .client
                .get(uri)
                .await
                .map_err(|e| format!("{url}: {e}"))?;
            if !resp.status().is_success() {
                return Err(format!("{url}: HTTP {}", resp.status()));
            }
            let body = http_body_util::Limited::new(resp.into_body(), MAX_BODY)
                .collect()
                .await
                .map_err(|e| format!("{url}: {e}"))?;
            Ok(body.to_bytes().to_vec())
        };
        tokio::time::timeout(TIMEOUT, fetch)
            .await
            .map_err(|_| format!("{url}: timed out"))?
    }
}

#[async_trait::async_trait]
impl KeySource for DiscoveryKeys {
    async fn fetch(&self) -> Result<KeySet, String> {
        let url = format!("{}/.well-known/openid-configuration", self.issuer);
        let doc: serde_json::Value =
            serde_json::from_slice(&self.get(&url).await?).map_err(|e| format!("{url}: {e}"))?;
        // As kube-apiserver (go-oidc): the document must name the configured issuer.
        let named = doc["issuer"].as_str().unwrap_or("").trim_end_matches('/');
        if named != self.issuer {
            return Err(format!(
                "{url}: the discovery document names issuer {named:?}, not {:?}",
                self.issuer
            ));
        }
        let jwks_uri = doc["jwks_uri"]
            .as_str()
            .ok_or_else(|| format!("{url}: no jwks_uri"))?;
        KeySet::from_jwks(&self.get(jwks_uri).await?).map_err(|e| format!("{jwks_uri}: {e}"))
    }
}

/// The key set of a file (`--oidc-jwks-file`), read again on every fetch.
pub struct FileKeys(pub PathBuf);

#[async_trait::async_trait]
impl KeySource for FileKeys {
    async fn fetch(&self) -> Result<KeySet, String> {
        let bytes = tokio::fs::read(&self.0)
            .await
            .map_err(|e| format!("{}: {e}", self.0.display()))?;
        KeySet::from_jwks(&bytes).map_err(|e| format!("{}: {e}", self.0.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_only_on_loopback() {
        assert!(check_url("https://idp.example.com").is_ok());
        assert!(check_url("http://127.0.0.1:5556/dex").is_ok());
        assert!(check_url("http://localhost:5556").is_ok());
        assert!(check_url("http://idp.example.com").is_err());
        assert!(check_url("ftp://idp").is_err());
    }
}
