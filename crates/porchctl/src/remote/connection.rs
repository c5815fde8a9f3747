//! The connection to porch-server: kubectl's global flags, kubeconfig loading
//! (`--kubeconfig`, `KUBECONFIG`, `~/.kube/config`), and a kube-rs client over rustls
//! that trusts the kubeconfig's CA.

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use clap::Args;
use kube::config::{KubeConfigOptions, Kubeconfig};

use super::error::RemoteError;

/// kubectl's connection flags, as upstream porchctl takes them (global to `repo`/`rpkg`).
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Connection options (kubectl's)")]
pub struct ConnectionFlags {
    /// Path to the kubeconfig file to use for CLI requests.
    #[arg(long, global = true, value_name = "PATH")]
    pub kubeconfig: Option<PathBuf>,
    /// The name of the kubeconfig context to use.
    #[arg(long, global = true, value_name = "NAME")]
    pub context: Option<String>,
    /// The name of the kubeconfig cluster to use.
    #[arg(long, global = true, value_name = "NAME")]
    pub cluster: Option<String>,
    /// The name of the kubeconfig user to use.
    #[arg(long, global = true, value_name = "NAME")]
    pub user: Option<String>,
    /// If present, the namespace scope for this CLI request (default: the context's namespace,
    /// else `default`).
    #[arg(short = 'n', long, global = true, value_name = "NAMESPACE")]
    pub namespace: Option<String>,
    /// The address and port of the Kubernetes API server (overrides the kubeconfig's).
    #[arg(short = 's', long, global = true, value_name = "URL")]
    pub server: Option<String>,
    /// Bearer token for authentication to the API server.
    #[arg(long, global = true, value_name = "TOKEN")]
    pub token: Option<String>,
    /// Path to a client certificate file for TLS.
    #[arg(long, global = true, value_name = "PATH")]
    pub client_certificate: Option<PathBuf>,
    /// Path to a client key file for TLS.
    #[arg(long, global = true, value_name = "PATH")]
    pub client_key: Option<PathBuf>,
    /// Username to impersonate for the operation.
    #[arg(long = "as", global = true, value_name = "USER")]
    pub as_user: Option<String>,
    /// Group to impersonate for the operation (repeatable).
    #[arg(long = "as-group", global = true, value_name = "GROUP")]
    pub as_group: Vec<String>,
    /// UID to impersonate for the operation.
    #[arg(long = "as-uid", global = true, value_name = "UID")]
    pub as_uid: Option<String>,
    /// Default cache directory (accepted for kubectl compatibility; porchctl keeps no cache).
    #[arg(long, global = true, value_name = "DIR", hide = true)]
    pub cache_dir: Option<PathBuf>,
    /// Log level verbosity (accepted for compatibility; set RUST_LOG for logs).
    #[arg(
        short = 'v',
        long = "v",
        global = true,
        value_name = "LEVEL",
        hide = true,
        value_parser = crate::cli::KlogLevel
    )]
    pub verbosity: Option<i32>,
    /// Path to a cert file for the certificate authority.
    #[arg(long, global = true, value_name = "PATH")]
    pub certificate_authority: Option<PathBuf>,
    /// If true, the server's certificate will not be checked for validity (insecure).
    #[arg(long, global = true)]
    pub insecure_skip_tls_verify: bool,
    /// Server name to use for server certificate validation.
    #[arg(long, global = true, value_name = "NAME")]
    pub tls_server_name: Option<String>,
    /// If true, opt-out of response compression for all requests to the server.
    #[arg(long, global = true)]
    pub disable_compression: bool,
    /// The length of time to wait before giving up on a single server request
    /// (e.g. 1s, 2m, 3h; 0 = no timeout).
    #[arg(long, global = true, value_name = "DURATION", default_value = "0")]
    pub request_timeout: String,
}

static SERVER_URL: OnceLock<http::Uri> = OnceLock::new();

/// client-go's `DefaultKubernetesUserAgent`: `<command>/<version> (<os>/<arch>)
/// kubernetes/<commit>`, with Go's names for the platform.
fn user_agent() -> String {
    let command = std::env::args()
        .next()
        .and_then(|a| {
            std::path::Path::new(&a)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| "porchctl".into());
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        other => other,
    };
    format!(
        "{command}/v{} ({}/{arch}) kubernetes/$Format",
        env!("CARGO_PKG_VERSION"),
        std::env::consts::OS
    )
}

/// The API server this run connected to (set by `connect`).
pub fn server_url() -> Option<&'static http::Uri> {
    SERVER_URL.get()
}

/// A ready client plus the namespace commands act in.
pub struct Remote {
    pub client: kube::Client,
    pub namespace: String,
}

impl ConnectionFlags {
    /// Loads the kubeconfig, applies the flags and builds the client.
    pub async fn connect(&self) -> Result<Remote, RemoteError> {
        let mut config = self.config().await?;
        let namespace = match &self.namespace {
            Some(ns) if !ns.is_empty() => ns.clone(),
            _ => config.default_namespace.clone(),
        };
        config.default_namespace = namespace.clone();
        // One server per run: kept for error texts that name the request's URL.
        let _ = SERVER_URL.set(config.cluster_url.clone());
        let client = kube::Client::try_from(config)
            .map_err(|e| RemoteError::Config(format!("cannot create the client: {e}")))?;
        Ok(Remote { client, namespace })
    }

    async fn config(&self) -> Result<kube::Config, RemoteError> {
        let options = KubeConfigOptions {
            context: self.context.clone(),
            cluster: self.cluster.clone(),
            user: self.user.clone(),
        };
        let mut config = match self.kubeconfig_file()? {
            Some(kc) => kube::Config::from_custom_kubeconfig(kc, &options)
                .await
                .map_err(|e| RemoteError::Config(format!("invalid configuration: {e}")))?,
            None => {
                let Some(server) = &self.server else {
                    return Err(RemoteError::Config(
                        "invalid configuration: no configuration has been provided, try setting KUBERNETES_MASTER environment variable".into(),
                    ));
                };
                kube::Config::new(parse_url(server)?)
            }
        };
        if let Some(server) = &self.server {
            config.cluster_url = parse_url(server)?;
        }
        // client-go's default User-Agent: the API server names the field manager of a
        // write without `fieldManager` after its first word (`porchctl`).
        if let Ok(agent) = http::HeaderValue::from_str(&user_agent()) {
            config.headers.push((http::header::USER_AGENT, agent));
        }
        if let Some(token) = &self.token {
            // AuthInfo keeps its token in a secrecy type; building it through serde keeps
            // that crate out of our dependencies.
            let with_token: kube::config::AuthInfo =
                serde_json::from_value(serde_json::json!({ "token": token }))
                    .map_err(|e| RemoteError::Config(format!("invalid token: {e}")))?;
            config.auth_info.token = with_token.token;
            config.auth_info.token_file = None;
        }
        let path_text = |p: &PathBuf| p.to_string_lossy().into_owned();
        if let Some(cert) = &self.client_certificate {
            config.auth_info.client_certificate = Some(path_text(cert));
            config.auth_info.client_certificate_data = None;
        }
        if let Some(key) = &self.client_key {
            config.auth_info.client_key = Some(path_text(key));
            config.auth_info.client_key_data = None;
        }
        if let Some(user) = &self.as_user {
            config.auth_info.impersonate = Some(user.clone());
        }
        if !self.as_group.is_empty() {
            config.auth_info.impersonate_groups = Some(self.as_group.clone());
        }
        if let Some(uid) = &self.as_uid {
            config.auth_info.impersonate_uid = Some(uid.clone());
        }
        if let Some(ca) = &self.certificate_authority {
            let pem = std::fs::read(ca).map_err(|e| {
                RemoteError::Config(format!(
                    "unable to read certificate-authority {}: {e}",
                    ca.display()
                ))
            })?;
            config.root_cert = Some(pem_certificates(&pem)?);
        }
        if self.insecure_skip_tls_verify {
            config.accept_invalid_certs = true;
        }
        if let Some(name) = &self.tls_server_name {
            config.tls_server_name = Some(name.clone());
        }
        if self.disable_compression {
            config.disable_compression = true;
        }
        if let Some(timeout) = parse_timeout(&self.request_timeout)? {
            config.read_timeout = Some(timeout);
            config.write_timeout = Some(timeout);
        }
        Ok(config)
    }

    /// `--kubeconfig`, else `KUBECONFIG` (merged, `:`-separated), else `~/.kube/config`
    /// when it exists. `None` when there is none at all.
    fn kubeconfig_file(&self) -> Result<Option<Kubeconfig>, RemoteError> {
        let invalid = |e: kube::config::KubeconfigError| {
            RemoteError::Config(format!("invalid configuration: {e}"))
        };
        if let Some(path) = &self.kubeconfig {
            return Kubeconfig::read_from(path).map(Some).map_err(|e| {
                RemoteError::Config(format!(
                    "stat {}: cannot read the kubeconfig: {e}",
                    path.display()
                ))
            });
        }
        if std::env::var_os("KUBECONFIG").is_some_and(|v| !v.is_empty()) {
            return Kubeconfig::from_env().map_err(invalid);
        }
        let Some(home) = std::env::var_os("HOME") else {
            return Ok(None);
        };
        let default = PathBuf::from(home).join(".kube").join("config");
        if !default.exists() {
            return Ok(None);
        }
        Kubeconfig::read_from(default).map(Some).map_err(invalid)
    }
}

fn parse_url(server: &str) -> Result<http::Uri, RemoteError> {
    // kubectl accepts a bare host:port and assumes https.
    let with_scheme = if server.contains("://") {
        server.to_string()
    } else {
        format!("https://{server}")
    };
    with_scheme
        .parse()
        .map_err(|e| RemoteError::Config(format!("invalid server address {server:?}: {e}")))
}

/// The DER certificates in a PEM bundle.
fn pem_certificates(pem: &[u8]) -> Result<Vec<Vec<u8>>, RemoteError> {
    use base64::Engine as _;
    let text = String::from_utf8_lossy(pem);
    let mut certs = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let line = line.trim();
        if line == "-----BEGIN CERTIFICATE-----" {
            current = Some(String::new());
        } else if line == "-----END CERTIFICATE-----" {
            if let Some(b64) = current.take() {
                let der = base64::engine::general_purpose::STANDARD
                    .decode(b64)
                    .map_err(|e| RemoteError::Config(format!("invalid certificate: {e}")))?;
                certs.push(der);
            }
        } else if let Some(buf) = current.as_mut() {
            buf.push_str(line);
        }
    }
    if certs.is_empty() {
        return Err(RemoteError::Config(
            "no certificates found in certificate-authority".into(),
        ));
    }
    Ok(certs)
}

/// kubectl's `--request-timeout`: a Go duration or a bare number of seconds; 0 = none.
fn parse_timeout(s: &str) -> Result<Option<Duration>, RemoteError> {
    let d = parse_go_duration(s).ok_or_else(|| {
        RemoteError::Usage(
            "invalid timeout value. Timeout must be a single integer in seconds, or an integer followed by a corresponding time unit (e.g. 1s | 2m | 3h)".to_string(),
        )
    })?;
    Ok((!d.is_zero()).then_some(d))
}

/// Parses Go's `time.ParseDuration` syntax (`1h2m3.5s`, `90s`, `500ms`) plus a bare integer
/// meaning seconds. Negative durations are not accepted.
pub fn parse_go_duration(s: &str) -> Option<Duration> {
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    if let Ok(secs) = s.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let mut rest = s.strip_prefix('+').unwrap_or(s);
    let mut total = 0f64;
    while !rest.is_empty() {
        let num_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if num_end == 0 {
            return None;
        }
        let value: f64 = rest[..num_end].parse().ok()?;
        rest = &rest[num_end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let factor = match &rest[..unit_end] {
            "ns" => 1e-9,
            "us" | "µs" | "μs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return None,
        };
        total += value * factor;
        rest = &rest[unit_end..];
    }
    Some(Duration::from_secs_f64(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations() {
        assert_eq!(parse_go_duration("90s"), Some(Duration::from_secs(90)));
        assert_eq!(parse_go_duration("2h30m"), Some(Duration::from_secs(9000)));
        assert_eq!(parse_go_duration("1.5m"), Some(Duration::from_secs(90)));
        assert_eq!(parse_go_duration("5"), Some(Duration::from_secs(5)));
        assert_eq!(parse_go_duration("10x"), None);
        assert_eq!(parse_go_duration(""), None);
    }

    #[test]
    fn server_without_scheme_is_https() {
        let u = parse_url("127.0.0.1:6443").expect("valid");
        assert_eq!(u.scheme_str(), Some("https"));
    }

    #[test]
    fn no_kubeconfig_and_no_server_is_a_config_error() {
        let flags = ConnectionFlags {
            kubeconfig: Some(PathBuf::from("/nonexistent/kubeconfig")),
            ..Default::default()
        };
        let err = flags.kubeconfig_file().expect_err("missing file");
        assert_eq!(err.kind(), super::super::error::ErrorKind::Config);
    }
}
