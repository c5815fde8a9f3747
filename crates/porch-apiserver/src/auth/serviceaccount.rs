//! ServiceAccount tokens: signed JWTs (ES256, the server's own key) issued by the TokenRequest
//! subresource (`kubectl create token`), authenticating as
//! `system:serviceaccount:<namespace>:<name>` while that ServiceAccount exists.

use std::sync::Arc;

use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header};
use serde::{Deserialize, Serialize};

use super::chain::{AuthError, TokenAuthenticator};
use super::jwt::{self, JwtError, Key, KeySet};
use super::{SERVICEACCOUNTS_GROUP, UserInfo};

/// kube-apiserver's default `expirationSeconds` of a TokenRequest.
pub const DEFAULT_EXPIRATION_SECS: i64 = 3600;
/// The shortest expiration a TokenRequest may ask for (kube-apiserver's minimum).
pub const MIN_EXPIRATION_SECS: i64 = 600;
/// The longest: longer asks are cut to it.
pub const MAX_EXPIRATION_SECS: i64 = 48 * 3600;

/// Finds a ServiceAccount; its uid binds a token to one incarnation of the name.
#[async_trait::async_trait]
pub trait ServiceAccountLookup: Send + Sync {
    /// The uid of the ServiceAccount, `None` when it does not exist.
    async fn uid(&self, namespace: &str, name: &str) -> Option<String>;
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct ObjectRef {
    name: String,
    uid: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct KubeClaims {
    namespace: String,
    serviceaccount: ObjectRef,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Claims {
    iss: String,
    sub: String,
    aud: Vec<String>,
    exp: i64,
    iat: i64,
    nbf: i64,
    jti: String,
    #[serde(rename = "kubernetes.io")]
    kube: KubeClaims,
}

/// A token just issued.
#[derive(Debug, Clone)]
pub struct IssuedToken {
    pub token: String,
    /// Unix seconds.
    pub expires_at: i64,
}

/// Issues and verifies ServiceAccount tokens.
pub struct ServiceAccountTokens {
    issuer: String,
    audiences: Vec<String>,
    kid: String,
    encoding: EncodingKey,
    keys: KeySet,
    lookup: Arc<dyn ServiceAccountLookup>,
}

/// The user name of a ServiceAccount.
pub fn username(namespace: &str, name: &str) -> String {
    format!("system:serviceaccount:{namespace}:{name}")
}

impl ServiceAccountTokens {
    /// `private_pem`: a PKCS#8 P-256 key; `public_pem`: its SPKI public key. Tokens carry
    /// `issuer` and authenticate when their audience is one of `audiences` (default: the
    /// issuer, as kube-apiserver's `--api-audiences`).
    pub fn new(
        issuer: &str,
        audiences: Vec<String>,
        private_pem: &[u8],
        public_pem: &[u8],
        lookup: Arc<dyn ServiceAccountLookup>,
    ) -> Result<Self, JwtError> {
        let encoding =
            EncodingKey::from_ec_pem(private_pem).map_err(|e| JwtError::KeySet(e.to_string()))?;
        let decoding =
            DecodingKey::from_ec_pem(public_pem).map_err(|e| JwtError::KeySet(e.to_string()))?;
        let kid = uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_OID, public_pem)
            .simple()
            .to_string();
        let audiences = if audiences.is_empty() {
            vec![issuer.to_string()]
        } else {
            audiences
        };
        Ok(Self {
            issuer: issuer.into(),
            audiences,
            keys: KeySet(vec![Key {
                kid: Some(kid.clone()),
                algorithm: Algorithm::ES256,
                key: decoding,
            }]),
            kid,
            encoding,
            lookup,
        })
    }

    /// The audiences a token gets when the request names none.
    pub fn default_audiences(&self) -> &[String] {
        &self.audiences
    }

    /// Signs a token for the ServiceAccount `namespace/name` (of `uid`), valid `seconds`
    /// from `now` (Unix seconds).
    pub fn issue(
        &self,
        namespace: &str,
        name: &str,
        uid: &str,
        audiences: &[String],
        now: i64,
        seconds: i64,
    ) -> Result<IssuedToken, JwtError> {
        let aud = if audiences.is_empty() {
            self.audiences.clone()
        } else {
            audiences.to_vec()
        };
        let claims = Claims {
            iss: self.issuer.clone(),
            sub: username(namespace, name),
            aud,
            exp: now + seconds,
            iat: now,
            nbf: now,
            jti: uuid::Uuid::new_v4().to_string(),
            kube: KubeClaims {
                namespace: namespace.into(),
                serviceaccount: ObjectRef {
                    name: name.into(),
                    uid: uid.into(),
                },
            },
        };
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(self.kid.clone());
        let token = jsonwebtoken::encode(&header, &claims, &self.encoding)
            .map_err(|e| JwtError::Invalid(e.to_string()))?;
        Ok(IssuedToken {
            token,
            expires_at: claims.exp,
        })
    }
}

#[async_trait::async_trait]
impl TokenAuthenticator for ServiceAccountTokens {
    fn name(&self) -> &'static str {
        "serviceaccount"
    }

    async fn authenticate_token(&self, token: &str) -> Result<Option<UserInfo>, AuthError> {
        if jwt::peek_issuer(token).as_deref() != Some(self.issuer.as_str()) {
            return Ok(None);
        }
        let claims: Claims = jwt::verify(token, &self.keys, &self.issuer, &self.audiences)
            .map_err(|e| AuthError::InvalidToken(format!("service account token: {e}")))?;
        let KubeClaims {
            namespace,
            serviceaccount,
        } = claims.kube;
        if claims.sub != username(&namespace, &serviceaccount.name) {
            return Err(AuthError::InvalidToken(
                "service account token: subject does not match its claims".into(),
            ));
        }
        match self.lookup.uid(&namespace, &serviceaccount.name).await {
            Some(uid) if uid == serviceaccount.uid => {}
            Some(_) => {
                return Err(AuthError::InvalidToken(format!(
                    "service account {namespace}/{} has been deleted and recreated",
                    serviceaccount.name
                )));
            }
            None => {
                return Err(AuthError::InvalidToken(format!(
                    "service account {namespace}/{} does not exist",
                    serviceaccount.name
                )));
            }
        }
        Ok(Some(UserInfo::authenticated(
            &claims.sub,
            &serviceaccount.uid,
            vec![
                SERVICEACCOUNTS_GROUP.into(),
                format!("{SERVICEACCOUNTS_GROUP}:{namespace}"),
            ],
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::AUTHENTICATED_GROUP;
    use std::collections::HashMap;
    use std::sync::Mutex;

    #[derive(Default)]
    struct Accounts(Mutex<HashMap<(String, String), String>>);

    #[async_trait::async_trait]
    impl ServiceAccountLookup for Accounts {
        async fn uid(&self, namespace: &str, name: &str) -> Option<String> {
            self.0
                .lock()
                .expect("lock")
                .get(&(namespace.to_string(), name.to_string()))
                .cloned()
        }
    }

    fn tokens(accounts: Arc<Accounts>) -> ServiceAccountTokens {
        let key = rcgen::KeyPair::generate().expect("key");
        ServiceAccountTokens::new(
            "porch-server",
            Vec::new(),
            key.serialize_pem().as_bytes(),
            key.public_key_pem().as_bytes(),
            accounts,
        )
        .expect("tokens")
    }

    fn now() -> i64 {
        i64::try_from(jwt::testing::now()).unwrap_or(0)
    }

    #[tokio::test]
    async fn issued_token_authenticates_until_the_account_goes() {
        let accounts = Arc::new(Accounts::default());
        accounts
            .0
            .lock()
            .expect("lock")
            .insert(("ci".into(), "deployer".into()), "uid-1".into());
        let t = tokens(accounts.clone());
        let issued = t
            .issue("ci", "deployer", "uid-1", &[], now(), 3600)
            .expect("issue");
        let user = t
            .authenticate_token(&issued.token)
            .await
            .expect("valid")
            .expect("user");
        assert_eq!(user.name, "system:serviceaccount:ci:deployer");
        assert_eq!(
            user.groups,
            vec![
                "system:serviceaccounts",
                "system:serviceaccounts:ci",
                AUTHENTICATED_GROUP
            ]
        );
        // Recreated under the same name: the old token is refused.
        accounts
            .0
            .lock()
            .expect("lock")
            .insert(("ci".into(), "deployer".into()), "uid-2".into());
        assert!(t.authenticate_token(&issued.token).await.is_err());
        accounts.0.lock().expect("lock").clear();
        let e = t
            .authenticate_token(&issued.token)
            .await
            .expect_err("refused");
        assert!(e.to_string().contains("does not exist"), "{e}");
    }

    #[tokio::test]
    async fn refuses_foreign_expired_and_other_audiences() {
        let accounts = Arc::new(Accounts::default());
        accounts
            .0
            .lock()
            .expect("lock")
            .insert(("ci".into(), "a".into()), "u".into());
        let t = tokens(accounts.clone());
        let expired = t
            .issue("ci", "a", "u", &[], now() - 7200, 600)
            .expect("issue");
        assert!(t.authenticate_token(&expired.token).await.is_err());
        let vault = t
            .issue("ci", "a", "u", &["vault".into()], now(), 600)
            .expect("issue");
        assert!(t.authenticate_token(&vault.token).await.is_err());
        // Another server's key with the same issuer name.
        let other = tokens(accounts);
        let foreign = other.issue("ci", "a", "u", &[], now(), 600).expect("issue");
        assert!(t.authenticate_token(&foreign.token).await.is_err());
        // Not a JWT of this issuer at all: someone else's to judge.
        assert_eq!(t.authenticate_token("opaque").await, Ok(None));
    }
}
