//! The HTTP side of the smart protocol: hyper's pooled HTTP/1.1 client (rustls for https)
//! driven by a current-thread runtime owned by the mirror's worker thread, so a request
//! blocks only that worker, exactly as a `git` child process did.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

use super::SmartError;
use crate::cli::{Remote, base64};
use crate::spec::GitAuth;

/// What git sends; some hosts pick the smart protocol by a `git/` user agent.
const USER_AGENT: &str = concat!("git/2.0 (porch-rs ", env!("CARGO_PKG_VERSION"), ")");

/// Longest error body quoted in a message.
const ERROR_BODY_MAX: usize = 512;

/// A request to send.
pub(crate) struct Request<'a> {
    /// `GET` or `POST`.
    pub method: &'static str,
    /// Absolute URL.
    pub url: String,
    /// `Content-Type` of the body (`POST`).
    pub content_type: Option<&'static str>,
    /// `Accept`.
    pub accept: &'static str,
    /// The body (empty for `GET`).
    pub body: Vec<u8>,
    /// Credentials.
    pub auth: &'a GitAuth,
}

/// Status line and the headers the protocol looks at.
#[derive(Debug)]
pub(crate) struct Head {
    pub status: u16,
    pub content_type: String,
    pub location: Option<String>,
}

/// One HTTP client per mirror worker; connections are kept alive between requests.
pub(crate) struct HttpClient {
    rt: tokio::runtime::Runtime,
    client: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
}

impl HttpClient {
    /// A client for `https` (system roots) or plain `http` remotes.
    pub(crate) fn new(https: bool, connect_timeout: Duration) -> Result<Self, SmartError> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| SmartError::Unavailable(format!("cannot start HTTP runtime: {e}")))?;
        let tls = if https {
            Arc::unwrap_or_clone(system_tls()?)
        } else {
            // Never used: the mirror's URL is plain http. Skips loading the system roots.
            tls_config(rustls::RootCertStore::empty())?
        };
        let mut connector = HttpConnector::new();
        connector.enforce_http(false);
        connector.set_nodelay(true);
        connector.set_connect_timeout(Some(connect_timeout));
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http1()
            .wrap_connector(connector);
        let client = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(30))
            .build(https);
        Ok(HttpClient { rt, client })
    }

    /// Sends `req`, hands the body of a 2xx answer to `sink` chunk by chunk as it arrives,
    /// and returns the head. A non-2xx answer is an error quoting the start of its body.
    /// The whole exchange must finish within `remote.timeout`.
    pub(crate) fn exchange(
        &self,
        remote: &Remote,
        req: Request<'_>,
        sink: &mut dyn FnMut(&[u8]) -> Result<(), SmartError>,
    ) -> Result<Head, SmartError> {
        let timeout = remote.timeout;
        let fut = self.send(req, sink);
        self.rt
            .block_on(async { tokio::time::timeout(timeout, fut).await })
            .unwrap_or_else(|_| {
                Err(SmartError::Unavailable(format!(
                    "request timed out after {timeout:?}"
                )))
            })
    }

    async fn send(
        &self,
        req: Request<'_>,
        sink: &mut dyn FnMut(&[u8]) -> Result<(), SmartError>,
    ) -> Result<Head, SmartError> {
        let mut builder = http::Request::builder()
            .method(req.method)
            .uri(&req.url)
            .header("user-agent", USER_AGENT)
            .header("accept", req.accept)
            .header("pragma", "no-cache");
        if let Some(ct) = req.content_type {
            builder = builder.header("content-type", ct);
        }
        if let Some(value) = authorization(req.auth) {
            builder = builder.header("authorization", value);
        }
        let request = builder
            .body(Full::new(Bytes::from(req.body)))
            .map_err(|e| SmartError::Unavailable(format!("invalid request: {e}")))?;
        let response = self
            .client
            .request(request)
            .await
            .map_err(|e| SmartError::Unavailable(describe_client_error(&e)))?;
        let (parts, mut body) = response.into_parts();
        let header = |name: http::header::HeaderName| {
            parts
                .headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let head = Head {
            status: parts.status.as_u16(),
            content_type: header(http::header::CONTENT_TYPE).unwrap_or_default(),
            location: header(http::header::LOCATION),
        };
        let success = parts.status.is_success();
        let mut quoted = Vec::new();
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| {
                SmartError::Unavailable(format!("connection lost while reading the answer: {e}"))
            })?;
            let Ok(data) = frame.into_data() else {
                continue;
            };
            if success {
                sink(&data)?;
            } else if quoted.len() < ERROR_BODY_MAX {
                quoted.extend_from_slice(&data[..data.len().min(ERROR_BODY_MAX - quoted.len())]);
            }
        }
        if success || parts.status.is_redirection() {
            return Ok(head);
        }
        Err(status_error(head.status, &quoted))
    }
}

/// The `Authorization` header for `auth` (SSH keys have none).
fn authorization(auth: &GitAuth) -> Option<String> {
    match auth {
        GitAuth::Basic { username, password } => Some(format!(
            "Basic {}",
            base64(format!("{username}:{password}").as_bytes())
        )),
        GitAuth::Bearer { token } => Some(format!("Bearer {token}")),
        GitAuth::None | GitAuth::SshKey { .. } | GitAuth::SshKeyKnownHosts { .. } => None,
    }
}

fn status_error(status: u16, body: &[u8]) -> SmartError {
    let body = String::from_utf8_lossy(body);
    let body = body.trim();
    let what = match status {
        401 | 403 => "authentication failed",
        404 => "repository not found",
        _ => "the server returned an error",
    };
    if body.is_empty() {
        SmartError::Unavailable(format!("{what} (HTTP {status})"))
    } else {
        SmartError::Unavailable(format!("{what} (HTTP {status}): {body}"))
    }
}

/// hyper's error plus its causes (the cause says "connection refused", "tls handshake ...").
fn describe_client_error(e: &hyper_util::client::legacy::Error) -> String {
    let mut msg = format!("request failed: {e}");
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        msg.push_str(&format!(": {s}"));
        source = s.source();
    }
    msg
}

fn tls_config(roots: rustls::RootCertStore) -> Result<rustls::ClientConfig, SmartError> {
    Ok(rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| SmartError::Unavailable(format!("TLS setup failed: {e}")))?
    .with_root_certificates(roots)
    .with_no_client_auth())
}

/// The trust roots git would use: `GIT_SSL_CAINFO` (a PEM bundle) and `GIT_SSL_CAPATH` (a
/// directory of PEM files) when set, else the system's (honouring `SSL_CERT_FILE` and
/// `SSL_CERT_DIR`). Loaded once per process.
fn system_tls() -> Result<Arc<rustls::ClientConfig>, SmartError> {
    static CONFIG: OnceLock<Result<Arc<rustls::ClientConfig>, String>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let (certs, source) = match git_ca_certs() {
                Some(certs) => (certs, "GIT_SSL_CAINFO/GIT_SSL_CAPATH"),
                None => (rustls_native_certs::load_native_certs().certs, "the system"),
            };
            let mut roots = rustls::RootCertStore::empty();
            let (added, _) = roots.add_parsable_certificates(certs);
            if added == 0 {
                return Err(format!("no usable CA certificates from {source}"));
            }
            tls_config(roots).map(Arc::new).map_err(|e| e.to_string())
        })
        .clone()
        .map_err(SmartError::Unavailable)
}

/// Certificates named by git's own variables, if any is set.
fn git_ca_certs() -> Option<Vec<rustls::pki_types::CertificateDer<'static>>> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let file = std::env::var_os("GIT_SSL_CAINFO").filter(|v| !v.is_empty());
    let dir = std::env::var_os("GIT_SSL_CAPATH").filter(|v| !v.is_empty());
    if file.is_none() && dir.is_none() {
        return None;
    }
    let mut paths: Vec<std::path::PathBuf> = file.into_iter().map(Into::into).collect();
    if let Some(dir) = dir
        && let Ok(entries) = std::fs::read_dir(dir)
    {
        paths.extend(entries.filter_map(|e| e.ok()).map(|e| e.path()));
    }
    let mut certs = Vec::new();
    for p in paths {
        match CertificateDer::pem_file_iter(&p) {
            Ok(iter) => certs.extend(iter.filter_map(Result::ok)),
            Err(e) => tracing::warn!(path = %p.display(), error = %e, "cannot read CA file"),
        }
    }
    Some(certs)
}
