//! Pulls an image from its registry into a staging directory of the cache.
//!
//! The manifest (OCI or Docker schema 2; an index resolves to linux/amd64) and the config
//! come through `oci-client`; each layer is downloaded to a file, its sha256 checked against
//! the manifest, then applied onto `rootfs/` in order.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use oci_client::client::{ClientConfig, ClientProtocol, linux_amd64_resolver};
use oci_client::errors::{OciDistributionError, OciErrorCode};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};
use sha2::{Digest, Sha256};

use crate::ContainerError;
use crate::auth::Credentials;
use crate::reference::is_loopback;

/// How to reach registries.
#[derive(Debug, Clone, Default)]
pub struct PullOptions {
    /// Registries (`host[:port]`) reached over plain HTTP besides loopback ones.
    pub insecure_registries: Vec<String>,
    /// The docker config file credentials come from.
    pub docker_config: Option<PathBuf>,
    /// Most bytes the unpacked image may take (`None`: unbounded).
    pub max_image_bytes: Option<u64>,
    /// Logins tried before the docker config's (a FunctionConfig's pull Secrets).
    pub credentials: Credentials,
}

/// The registry said who we are is not enough: no credentials, or the wrong ones.
fn is_denied(e: &OciDistributionError) -> bool {
    match e {
        OciDistributionError::AuthenticationFailure(_)
        | OciDistributionError::UnauthorizedError { .. } => true,
        OciDistributionError::RegistryError { envelope, .. } => envelope
            .errors
            .iter()
            .any(|e| matches!(e.code, OciErrorCode::Unauthorized | OciErrorCode::Denied)),
        OciDistributionError::ServerError { code, .. } => matches!(code, 401 | 403),
        _ => false,
    }
}

fn registry_err(image: &Reference, authenticated: bool, e: OciDistributionError) -> ContainerError {
    if is_denied(&e) {
        return ContainerError::Denied {
            image: image.whole(),
            registry: image.resolve_registry().to_string(),
            with: if authenticated {
                "with the credentials given"
            } else {
                "without credentials"
            },
            reason: e.to_string(),
        };
    }
    ContainerError::Registry {
        image: image.whole(),
        reason: e.to_string(),
    }
}

fn sha256_file(path: &Path) -> Result<String, ContainerError> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    let hex: String = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    Ok(format!("sha256:{hex}"))
}

/// Pulls `image` into `staging` (`rootfs/` and `config.json`); returns the manifest digest.
pub async fn pull(
    image: &Reference,
    staging: &Path,
    options: &PullOptions,
) -> Result<String, ContainerError> {
    // Registries are matched by `host[:port]` as written in the reference.
    let registry = image.resolve_registry().to_string();
    let mut plain_http = options.insecure_registries.clone();
    if is_loopback(&registry) {
        plain_http.push(registry.clone());
    }
    let client = Client::new(ClientConfig {
        protocol: ClientProtocol::HttpsExcept(plain_http),
        platform_resolver: Some(Box::new(linux_amd64_resolver)),
        // An unreachable registry fails the step instead of holding it until the budget ends.
        connect_timeout: Some(Duration::from_secs(15)),
        read_timeout: Some(Duration::from_secs(60)),
        ..ClientConfig::default()
    });
    let auth = options
        .credentials
        .find(image.registry())
        .unwrap_or_else(|| crate::auth::lookup(options.docker_config.as_deref(), image.registry()));
    let authenticated = !matches!(auth, RegistryAuth::Anonymous);
    let (manifest, digest, config) = client
        .pull_manifest_and_config(image, &auth)
        .await
        .map_err(|e| registry_err(image, authenticated, e))?;
    let rootfs = staging.join("rootfs");
    std::fs::create_dir_all(&rootfs)?;
    let mut room = options.max_image_bytes.unwrap_or(u64::MAX);
    let compressed: u64 = manifest
        .layers
        .iter()
        .map(|l| u64::try_from(l.size).unwrap_or(0))
        .sum();
    if compressed > room {
        return Err(ContainerError::Unpack(format!(
            "the image's layers ({compressed} bytes) are larger than the function image cache"
        )));
    }
    for layer in &manifest.layers {
        let blob_path = staging.join("layer.blob");
        let file = tokio::fs::File::create(&blob_path).await?;
        client
            .pull_blob(image, layer, file)
            .await
            .map_err(|e| registry_err(image, authenticated, e))?;
        // oci-client checks digests too; checking the bytes on disk is what we unpack.
        let actual = sha256_file(&blob_path)?;
        if actual != layer.digest {
            return Err(ContainerError::Digest {
                image: image.whole(),
                expected: layer.digest.clone(),
                actual,
            });
        }
        crate::unpack::apply_layer_limited(&rootfs, std::fs::File::open(&blob_path)?, &mut room)?;
        std::fs::remove_file(&blob_path)?;
    }
    std::fs::write(staging.join("config.json"), config)?;
    Ok(digest)
}
