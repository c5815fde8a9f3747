//! Lists the function images of a registry (`/v2/_catalog`, then each repository's tags),
//! for the function repositories the server shows as `functions`.

use std::time::Duration;

use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::{Client, Reference};

use crate::ContainerError;
use crate::pull::PullOptions;
use crate::reference::is_loopback;

/// Most repositories and tags asked for in one page (registries cap it themselves).
const PAGE: usize = 1000;

/// The repositories under `registry` (`host[:port][/path]`) with their tags, sorted.
pub async fn list_images(
    registry: &str,
    options: &PullOptions,
) -> Result<Vec<(String, Vec<String>)>, ContainerError> {
    let (host, under) = match registry.split_once('/') {
        Some((h, p)) => (h, p.trim_matches('/')),
        None => (registry, ""),
    };
    let err = |e: oci_client::errors::OciDistributionError| ContainerError::Registry {
        image: registry.to_string(),
        reason: e.to_string(),
    };
    let mut plain_http = options.insecure_registries.clone();
    if is_loopback(host) {
        plain_http.push(host.to_string());
    }
    let client = Client::new(ClientConfig {
        protocol: ClientProtocol::HttpsExcept(plain_http),
        connect_timeout: Some(Duration::from_secs(15)),
        read_timeout: Some(Duration::from_secs(30)),
        ..ClientConfig::default()
    });
    let auth = crate::auth::lookup(options.docker_config.as_deref(), host);
    let probe = Reference::with_tag(host.to_string(), "catalog".into(), "latest".into());
    let catalog = client
        .catalog(&probe, &auth, Some(PAGE), None)
        .await
        .map_err(err)?;
    let mut out = Vec::new();
    for repo in catalog.repositories {
        let inside = under.is_empty()
            || repo
                .strip_prefix(under)
                .is_some_and(|rest| rest.starts_with('/'));
        if !inside {
            continue;
        }
        let image = Reference::with_tag(host.to_string(), repo.clone(), "latest".into());
        let mut tags = client
            .list_tags(&image, &auth, Some(PAGE), None)
            .await
            .map_err(err)?
            .tags;
        tags.sort();
        if !tags.is_empty() {
            out.push((repo, tags));
        }
    }
    out.sort();
    Ok(out)
}

/// The tags of one repository (`host[:port]/path`, any tag or digest ignored) as its
/// registry lists them: kpt HEAD's registry tag lister for a step's version
/// constraint. Loopback and `insecure_registries` hosts are reached over plain HTTP.
pub async fn list_tags(image: &str, options: &PullOptions) -> Result<Vec<String>, ContainerError> {
    let err = |reason: String| ContainerError::Registry {
        image: image.to_string(),
        reason,
    };
    let reference: Reference = image.parse().map_err(|e| err(format!("{e}")))?;
    let host = reference.resolve_registry().to_string();
    let mut plain_http = options.insecure_registries.clone();
    if is_loopback(&host) {
        plain_http.push(host.clone());
    }
    let client = Client::new(ClientConfig {
        protocol: ClientProtocol::HttpsExcept(plain_http),
        connect_timeout: Some(Duration::from_secs(15)),
        read_timeout: Some(Duration::from_secs(30)),
        ..ClientConfig::default()
    });
    let auth = crate::auth::lookup(options.docker_config.as_deref(), &host);
    let repo = Reference::with_tag(
        reference.registry().to_string(),
        reference.repository().to_string(),
        "latest".into(),
    );
    let mut tags = client
        .list_tags(&repo, &auth, Some(PAGE), None)
        .await
        .map_err(|e| err(e.to_string()))?
        .tags;
    tags.sort();
    Ok(tags)
}
