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

/// Loads the local CA (`<dir>/pki/ca.crt`, `ca.key`) as an issuer; the server creates it on
/// first start.
fn local_issuer(dir: &Path) -> anyhow::Result<Issuer<'static, KeyPair>> {
    let key_path = dir.join("pki").join("ca.key");
    let pem = std::fs::read_to_string(&key_path).with_context(|| {
        format!(
            "cannot read the CA key {} (start the server once to create it)",
            key_path.display()
        )
    })?;
    let key = KeyPair::from_pem(&pem)
        .with_context(|| format!("invalid CA key {}", key_path.display()))?;
    Ok(Issuer::new(ca_params()?, key))
}

/// A client certificate and key.
pub struct ClientCert {
    pub cert_pem: String,
    pub key_pem: String,
}

/// Issues a client certificate from the local CA: CN = `user`, one O per group (kube-apiserver's
/// x509 convention), valid from `not_before` to `not_after`.
pub fn issue_client_cert(
    dir: &Path,
    user: &str,
    groups: &[String],
    not_before: time::OffsetDateTime,
    not_after: time::OffsetDateTime,
) -> anyhow::Result<ClientCert> {
    let issuer = local_issuer(dir)?;
    let mut params = CertificateParams::new(Vec::<String>::new())?;
    params.distinguished_name.push(DnType::CommonName, user);
    for g in groups {
        params
            .distinguished_name
            .push(DnType::OrganizationName, g.as_str());
    }
    params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    params.not_before = not_before;
    params.not_after = not_after;
    let key = KeyPair::generate()?;
    let cert = params.signed_by(&key, &issuer)?;
    Ok(ClientCert {
        cert_pem: cert.pem(),
        key_pem: key.serialize_pem(),
    })
}

/// Loads or creates the key that signs ServiceAccount tokens (`<dir>/pki/sa.key`, P-256);
/// returns (private PKCS#8 PEM, public SPKI PEM).
pub fn service_account_key(dir: &Path) -> anyhow::Result<(String, String)> {
    let pki = dir.join("pki");
    std::fs::create_dir_all(&pki).with_context(|| format!("cannot create {}", pki.display()))?;
    let path = pki.join("sa.key");
    let key = match std::fs::read_to_string(&path) {
        Ok(pem) => {
            KeyPair::from_pem(&pem).with_context(|| format!("invalid key {}", path.display()))?
        }
        Err(_) => {
            let key = KeyPair::generate()?;
            write_private(&path, key.serialize_pem().as_bytes())?;
            key
        }
    };
    Ok((key.serialize_pem(), key.public_key_pem()))
}
