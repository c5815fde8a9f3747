//! Client certificates: the TLS layer has verified the chain against the client CA (and its
//! validity period); here the subject becomes the user, as kube-apiserver's x509
//! authenticator: CN is the user name, each O a group.

use x509_parser::prelude::{FromDer, X509Certificate};

use super::UserInfo;
use super::chain::AuthError;

/// The user a verified leaf certificate (DER) names.
pub fn user_of(der: &[u8]) -> Result<UserInfo, AuthError> {
    let (_, cert) = X509Certificate::from_der(der)
        .map_err(|e| AuthError::InvalidCertificate(format!("cannot parse: {e}")))?;
    // Defence in depth: rustls checked the dates already at the handshake, but a long-lived
    // connection may outlast the certificate.
    if !cert.validity().is_valid() {
        return Err(AuthError::InvalidCertificate(
            "the certificate has expired or is not yet valid".into(),
        ));
    }
    let subject = cert.subject();
    let name = subject
        .iter_common_name()
        .next()
        .and_then(|cn| cn.as_str().ok())
        .map(str::to_string)
        .unwrap_or_default();
    if name.is_empty() {
        return Err(AuthError::InvalidCertificate(
            "the certificate has no common name".into(),
        ));
    }
    let groups = subject
        .iter_organization()
        .filter_map(|o| o.as_str().ok())
        .map(str::to_string)
        .collect();
    Ok(UserInfo::authenticated(&name, "", groups))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::AUTHENTICATED_GROUP;

    #[test]
    fn reads_cn_and_organizations() {
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "alice");
        params
            .distinguished_name
            .push(rcgen::DnType::OrganizationName, "porch-approvers");
        let key = rcgen::KeyPair::generate().expect("key");
        let cert = params.self_signed(&key).expect("cert");
        let user = user_of(cert.der()).expect("user");
        assert_eq!(user.name, "alice");
        assert_eq!(user.groups, vec!["porch-approvers", AUTHENTICATED_GROUP]);
    }

    #[test]
    fn refuses_garbage_and_nameless() {
        assert!(user_of(b"not a certificate").is_err());
        let params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
        let key = rcgen::KeyPair::generate().expect("key");
        let mut params = params;
        params.distinguished_name = rcgen::DistinguishedName::new();
        let cert = params.self_signed(&key).expect("cert");
        assert!(user_of(cert.der()).is_err());
    }
}
