//! The authenticator chain: who sent a request, from its client certificate or bearer token.
//!
//! As kube-apiserver's union authenticator: the first authenticator that recognizes the
//! credentials decides; credentials that none accepts are a 401, even when anonymous requests
//! are allowed (anonymous is only for requests that present nothing).

use std::sync::Arc;

use axum::http::HeaderMap;
use axum::http::header::AUTHORIZATION;

use super::{PeerCertificates, UserInfo};

/// Why credentials were refused. The message never holds the secret itself.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    /// A bearer token no authenticator accepts (unknown, tampered, expired, wrong audience).
    #[error("invalid bearer token: {0}")]
    InvalidToken(String),
    /// A verified client certificate that names no user.
    #[error("invalid client certificate: {0}")]
    InvalidCertificate(String),
    /// No credentials and anonymous requests are not allowed.
    #[error("no credentials")]
    NoCredentials,
}

/// Turns a bearer token into a user.
#[async_trait::async_trait]
pub trait TokenAuthenticator: Send + Sync {
    /// Named in logs.
    fn name(&self) -> &'static str;
    /// `Ok(None)`: not a token of this kind (the next authenticator tries); `Err`: one of
    /// this kind, but invalid.
    async fn authenticate_token(&self, token: &str) -> Result<Option<UserInfo>, AuthError>;
}

/// The bootstrap admin token(s): user `admin` in `system:masters`.
pub struct BootstrapTokens(pub Vec<String>);

#[async_trait::async_trait]
impl TokenAuthenticator for BootstrapTokens {
    fn name(&self) -> &'static str {
        "bootstrap-token"
    }
    async fn authenticate_token(&self, token: &str) -> Result<Option<UserInfo>, AuthError> {
        Ok(self
            .0
            .iter()
            .any(|t| constant_eq(t.as_bytes(), token.as_bytes()))
            .then(UserInfo::bootstrap_admin))
    }
}

/// Compares without leaking where the first difference is.
pub fn constant_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Every way this server recognizes a user.
#[derive(Clone, Default)]
pub struct Authenticator {
    /// No authentication at all: everyone is the bootstrap admin (the loopback-only plain
    /// HTTP mode, where kubectl sends no token).
    pub disabled: bool,
    /// Accept verified client certificates (CN = user, O = groups).
    pub client_certificates: bool,
    /// Tried in order.
    pub tokens: Vec<Arc<dyn TokenAuthenticator>>,
    /// Requests without credentials are `system:anonymous` instead of a 401.
    pub anonymous: bool,
}

impl std::fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authenticator")
            .field("disabled", &self.disabled)
            .field("client_certificates", &self.client_certificates)
            .field(
                "tokens",
                &self.tokens.iter().map(|t| t.name()).collect::<Vec<_>>(),
            )
            .field("anonymous", &self.anonymous)
            .finish()
    }
}

impl Authenticator {
    /// Everyone is the admin (no credentials checked).
    pub fn disabled() -> Self {
        Self {
            disabled: true,
            ..Self::default()
        }
    }

    /// Only the bootstrap admin tokens.
    pub fn bootstrap(tokens: Vec<String>) -> Self {
        Self {
            tokens: vec![Arc::new(BootstrapTokens(tokens))],
            ..Self::default()
        }
    }

    /// The user of a request with these headers and (TLS-verified) client certificates.
    pub async fn authenticate(
        &self,
        headers: &HeaderMap,
        peer: Option<&PeerCertificates>,
    ) -> Result<UserInfo, AuthError> {
        if self.disabled {
            return Ok(UserInfo::bootstrap_admin());
        }
        let mut refused = None;
        if self.client_certificates
            && let Some(peer) = peer
            && let Some(leaf) = peer.chain.first()
        {
            let user = match &peer.rejected {
                Some(why) => Err(AuthError::InvalidCertificate(why.clone())),
                None => super::x509::user_of(leaf),
            };
            match user {
                Ok(user) => return Ok(user),
                Err(e) => refused = Some(e),
            }
        }
        if let Some(token) = bearer(headers) {
            for a in &self.tokens {
                match a.authenticate_token(token).await {
                    Ok(Some(user)) => return Ok(user),
                    Ok(None) => {}
                    Err(e) => {
                        refused = Some(e);
                        break;
                    }
                }
            }
            return Err(refused.unwrap_or_else(|| AuthError::InvalidToken("unknown token".into())));
        }
        if let Some(e) = refused {
            return Err(e);
        }
        if self.anonymous {
            Ok(UserInfo::anonymous())
        } else {
            Err(AuthError::NoCredentials)
        }
    }
}

/// The token of an `Authorization: Bearer` header (the scheme case-insensitive, as Go's).
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(AUTHORIZATION)?.to_str().ok()?.trim();
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn with_token(t: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(
            AUTHORIZATION,
            HeaderValue::from_str(&format!("Bearer {t}")).expect("header"),
        );
        h
    }

    #[tokio::test]
    async fn bootstrap_token_is_the_admin_and_others_are_refused() {
        let a = Authenticator::bootstrap(vec!["s3cret".into()]);
        let user = a
            .authenticate(&with_token("s3cret"), None)
            .await
            .expect("admin");
        assert_eq!(user, UserInfo::bootstrap_admin());
        let e = a
            .authenticate(&with_token("guess"), None)
            .await
            .expect_err("unknown token");
        assert!(!e.to_string().contains("guess"), "{e}");
        assert_eq!(
            a.authenticate(&HeaderMap::new(), None).await,
            Err(AuthError::NoCredentials)
        );
    }

    #[tokio::test]
    async fn anonymous_only_without_credentials() {
        let mut a = Authenticator::bootstrap(vec!["s3cret".into()]);
        a.anonymous = true;
        assert_eq!(
            a.authenticate(&HeaderMap::new(), None).await,
            Ok(UserInfo::anonymous())
        );
        assert!(a.authenticate(&with_token("nope"), None).await.is_err());
    }

    #[tokio::test]
    async fn disabled_makes_everyone_the_admin() {
        let a = Authenticator::disabled();
        assert_eq!(
            a.authenticate(&HeaderMap::new(), None).await,
            Ok(UserInfo::bootstrap_admin())
        );
    }

    #[test]
    fn bearer_scheme_is_case_insensitive() {
        let mut h = HeaderMap::new();
        h.insert(AUTHORIZATION, HeaderValue::from_static("bearer abc"));
        assert_eq!(bearer(&h), Some("abc"));
        h.insert(AUTHORIZATION, HeaderValue::from_static("Basic abc"));
        assert_eq!(bearer(&h), None);
    }
}
