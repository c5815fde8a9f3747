//! The local CA, the serving certificate and the admin token, generated on first start and kept
//! in the data directory (keys and token readable by the owner only).

use std::path::{Path, PathBuf};

use anyhow::Context;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};

/// PEM material for the TLS listener and for clients.
pub struct TlsMaterial {
    pub cert_pem: String,
    pub key_pem: String,
    /// The CA clients must trust (None when a given certificate came without one).
    pub ca_pem: Option<String>,
}

/// Writes a file readable by its owner only.
pub fn write_private(path: &Path, contents: &[u8]) -> anyhow::Result<()> {
    use std::io::Write;
    #[cfg(unix)]
    use std::os::unix::fs::OpenOptionsExt;
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    opts.mode(0o600);
    let mut f = opts
        .open(path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    f.write_all(contents)?;
    f.sync_all()?;
    Ok(())
}

fn ca_params() -> anyhow::Result<CertificateParams> {
    let mut params = CertificateParams::new(Vec::<String>::new())?;
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params
        .distinguished_name
        .push(DnType::CommonName, "porch-server local CA");
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    Ok(params)
}

/// Loads or creates the CA under `<dir>/pki`, then issues a fresh serving certificate for
/// `hosts` (so a changed listen address is always covered).
pub fn local_tls(dir: &Path, hosts: &[String]) -> anyhow::Result<TlsMaterial> {
    let pki = dir.join("pki");
    std::fs::create_dir_all(&pki).with_context(|| format!("cannot create {}", pki.display()))?;
    let ca_key_path = pki.join("ca.key");
    let ca_cert_path = pki.join("ca.crt");
    let (ca_key, ca_pem) = if ca_key_path.exists() && ca_cert_path.exists() {
        let key = KeyPair::from_pem(&std::fs::read_to_string(&ca_key_path)?)
            .with_context(|| format!("invalid CA key {}", ca_key_path.display()))?;
        (key, std::fs::read_to_string(&ca_cert_path)?)
    } else {
        let key = KeyPair::generate()?;
        let cert = ca_params()?.self_signed(&key)?;
        write_private(&ca_key_path, key.serialize_pem().as_bytes())?;
        std::fs::write(&ca_cert_path, cert.pem())?;
        tracing::info!(path = %ca_cert_path.display(), "generated a local CA");
        (key, cert.pem())
    };
    // The issuer only needs the CA's subject and key: rebuilding the same parameters keeps the
    // issuer name identical to the stored CA certificate's subject.
    let issuer = Issuer::new(ca_params()?, ca_key);
    let mut params = CertificateParams::new(hosts.to_vec())?;
    params
        .distinguished_name
        .push(DnType::CommonName, "porch-server");
    params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
    let key = KeyPair::generate()?;
    let cert = params.signed_by(&key, &issuer)?;
    write_private(&pki.join("server.key"), key.serialize_pem().as_bytes())?;
    std::fs::write(pki.join("server.crt"), cert.pem())?;
    Ok(TlsMaterial {
        cert_pem: cert.pem(),
        key_pem: key.serialize_pem(),
        ca_pem: Some(ca_pem),
    })
}

/// Loads a given certificate and key (and optional CA for the kubeconfig).
pub fn given_tls(cert: &Path, key: &Path, ca: Option<&PathBuf>) -> anyhow::Result<TlsMaterial> {
    let read = |p: &Path| {
        std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))
    };
    Ok(TlsMaterial {
        cert_pem: read(cert)?,
        key_pem: read(key)?,
        ca_pem: ca.map(|p| read(p)).transpose()?,
    })
}

/// Loads or creates the admin bearer token (`<dir>/token`).
pub fn admin_token(dir: &Path) -> anyhow::Result<String> {
    let path = dir.join("token");
    if let Ok(t) = std::fs::read_to_string(&path) {
        let t = t.trim().to_string();
        if !t.is_empty() {
            return Ok(t);
        }
    }
    let token = format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    );
    write_private(&path, token.as_bytes())?;
    Ok(token)
}
