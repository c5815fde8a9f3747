//! Image references as kpt resolves them.
//!
//! kpt expands a bare function name (`set-labels:v0.2`, no `/`) with its catalog prefix;
//! anything with a `/` is a normal Docker reference (`docker.io` and `library/` defaults,
//! `:latest` when neither tag nor digest is given).

use oci_client::Reference;

use crate::ContainerError;

/// kpt's catalog registry prefix for bare function names.
pub const DEFAULT_IMAGE_PREFIX: &str = "ghcr.io/kptdev/krm-functions-catalog/";

/// The full reference kpt would pull for `image`.
pub fn resolve(image: &str) -> Result<Reference, ContainerError> {
    let image = image.trim();
    let full = if image.contains('/') {
        image.to_string()
    } else {
        format!("{DEFAULT_IMAGE_PREFIX}{image}")
    };
    full.parse::<Reference>()
        .map_err(|e| ContainerError::Reference {
            image: image.to_string(),
            reason: e.to_string(),
        })
}

/// Whether the registry host is a loopback address (plain HTTP allowed, as docker does).
pub fn is_loopback(registry: &str) -> bool {
    let host = match registry.strip_prefix('[') {
        // [::1]:5000
        Some(rest) => rest.split(']').next().unwrap_or(rest),
        None => match registry.rsplit_once(':') {
            Some((h, port)) if port.chars().all(|c| c.is_ascii_digit()) => h,
            _ => registry,
        },
    };
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    host.parse::<std::net::IpAddr>()
        .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_names_get_the_catalog_prefix() {
        let r = resolve("set-labels:v0.2").expect("valid");
        assert_eq!(
            r.whole(),
            "ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.2"
        );
        let r = resolve("set-labels").expect("valid");
        assert_eq!(r.tag(), Some("latest"));
        assert_eq!(r.registry(), "ghcr.io");
    }

    #[test]
    fn docker_defaults_tags_and_digests() {
        let r = resolve("example/fn:1").expect("valid");
        assert_eq!(r.registry(), "docker.io");
        assert_eq!(r.repository(), "example/fn");
        let d = format!("sha256:{}", "a".repeat(64));
        let r = resolve(&format!("127.0.0.1:5000/x/fn@{d}")).expect("valid");
        assert_eq!(r.registry(), "127.0.0.1:5000");
        assert_eq!(r.digest(), Some(d.as_str()));
        assert!(resolve("UPPER/Case").is_err());
    }

    #[test]
    fn loopback_registries() {
        assert!(is_loopback("127.0.0.1:5000"));
        assert!(is_loopback("localhost:5000"));
        assert!(is_loopback("[::1]:5000"));
        assert!(is_loopback("127.0.0.2"));
        assert!(!is_loopback("ghcr.io"));
        assert!(!is_loopback("10.0.0.1:5000"));
    }
}
