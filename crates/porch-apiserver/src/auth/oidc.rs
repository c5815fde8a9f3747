//! OIDC ID tokens, as kube-apiserver's `--oidc-*` flags: a token whose `iss` is the issuer is
//! verified against the issuer's key set (signature, `iss`, `aud` = the client id, `exp`,
//! `nbf`), then the username and groups claims name the user.
//!
//! Fetching the key set is not done here (this crate has no HTTP client): a [`KeySource`]
//! supplies it, fetched again when a token names a key the cached set lacks.

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::UserInfo;
use super::chain::{AuthError, TokenAuthenticator};
use super::jwt::{self, JwtError, KeySet};

/// A key set is fetched again at most this often when tokens name unknown keys.
const REFETCH_EVERY: Duration = Duration::from_secs(10);

/// Where the issuer's keys come from (its discovery document and JWKS, or a file).
#[async_trait::async_trait]
pub trait KeySource: Send + Sync {
    async fn fetch(&self) -> Result<KeySet, String>;
}

/// The `--oidc-*` settings.
#[derive(Debug, Clone, Default)]
pub struct OidcConfig {
    pub issuer_url: String,
    pub client_id: String,
    /// Default `sub`.
    pub username_claim: String,
    /// `None`: kube-apiserver's default (`<issuer>#` unless the claim is `email`); `-`: none.
    pub username_prefix: Option<String>,
    pub groups_claim: Option<String>,
    pub groups_prefix: String,
}

impl OidcConfig {
    fn prefix(&self) -> String {
        match self.username_prefix.as_deref() {
            Some("-") => String::new(),
            Some(p) => p.to_string(),
            None if self.username_claim == "email" => String::new(),
            None => format!("{}#", self.issuer_url),
        }
    }
}

struct Cached {
    keys: Option<KeySet>,
    fetched: Option<Instant>,
}

/// The OIDC authenticator.
pub struct Oidc {
    config: OidcConfig,
    source: Arc<dyn KeySource>,
    cache: RwLock<Cached>,
}

impl Oidc {
    pub fn new(mut config: OidcConfig, source: Arc<dyn KeySource>) -> Self {
        if config.username_claim.is_empty() {
            config.username_claim = "sub".into();
        }
        Self {
            config,
            source,
            cache: RwLock::new(Cached {
                keys: None,
                fetched: None,
            }),
        }
    }

    fn cached(&self) -> Option<KeySet> {
        self.cache
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .keys
            .clone()
    }

    /// Fetches the key set unless it was fetched moments ago; returns the current set.
    async fn refetch(&self) -> Option<KeySet> {
        let recent = self
            .cache
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .fetched
            .is_some_and(|t| t.elapsed() < REFETCH_EVERY);
        if recent {
            return self.cached();
        }
        let fetched = self.source.fetch().await;
        let mut c = self.cache.write().unwrap_or_else(|e| e.into_inner());
        c.fetched = Some(Instant::now());
        match fetched {
            Ok(keys) => c.keys = Some(keys),
            Err(e) => {
                tracing::warn!(issuer = %self.config.issuer_url, "cannot fetch the OIDC key set: {e}")
            }
        }
        c.keys.clone()
    }

    fn user_of(&self, claims: &Value) -> Result<UserInfo, AuthError> {
        let bad = |m: String| AuthError::InvalidToken(format!("oidc: {m}"));
        let claim = &self.config.username_claim;
        let name = claims
            .get(claim)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| bad(format!("claim {claim:?} not present")))?;
        if claim == "email"
            && let Some(verified) = claims.get("email_verified")
            && verified != &Value::Bool(true)
        {
            return Err(bad("email not verified".into()));
        }
        let mut groups = Vec::new();
        if let Some(gc) = &self.config.groups_claim {
            match claims.get(gc) {
                None | Some(Value::Null) => {}
                Some(Value::String(g)) => groups.push(g.clone()),
                Some(Value::Array(gs)) => {
                    for g in gs {
                        let g = g
                            .as_str()
                            .ok_or_else(|| bad(format!("claim {gc:?} is not a list of strings")))?;
                        groups.push(g.to_string());
                    }
                }
                Some(_) => return Err(bad(format!("claim {gc:?} is not a list of strings"))),
            }
        }
        let groups = groups
            .into_iter()
            .map(|g| format!("{}{g}", self.config.groups_prefix))
            .collect();
        let uid = claims.get("sub").and_then(Value::as_str).unwrap_or("");
        Ok(UserInfo::authenticated(
            &format!("{}{name}", self.config.prefix()),
            uid,
            groups,
        ))
    }
}

#[async_trait::async_trait]
impl TokenAuthenticator for Oidc {
    fn name(&self) -> &'static str {
        "oidc"
    }

    async fn authenticate_token(&self, token: &str) -> Result<Option<UserInfo>, AuthError> {
        if jwt::peek_issuer(token).as_deref() != Some(self.config.issuer_url.as_str()) {
            return Ok(None);
        }
        let audiences = [self.config.client_id.clone()];
        let verify =
            |keys: &KeySet| jwt::verify::<Value>(token, keys, &self.config.issuer_url, &audiences);
        let first = match self.cached() {
            Some(keys) => verify(&keys),
            None => Err(JwtError::UnknownKey(None)),
        };
        let claims = match first {
            Err(JwtError::UnknownKey(_)) => match self.refetch().await {
                // The issuer may have rotated its keys since the last fetch.
                Some(keys) => verify(&keys),
                None => Err(JwtError::KeySet("no key set from the issuer".into())),
            },
            other => other,
        }
        .map_err(|e| AuthError::InvalidToken(format!("oidc: {e}")))?;
        self.user_of(&claims).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::AUTHENTICATED_GROUP;
    use crate::auth::jwt::testing::{TestKey, now};
    use serde_json::json;
    use std::sync::atomic::{AtomicUsize, Ordering};

    struct Fixed(Value, AtomicUsize);

    #[async_trait::async_trait]
    impl KeySource for Fixed {
        async fn fetch(&self) -> Result<KeySet, String> {
            self.1.fetch_add(1, Ordering::SeqCst);
            KeySet::from_jwks(self.0.to_string().as_bytes()).map_err(|e| e.to_string())
        }
    }

    fn oidc(key: &TestKey, config: OidcConfig) -> (Oidc, Arc<Fixed>) {
        let source = Arc::new(Fixed(key.jwks(), AtomicUsize::new(0)));
        (Oidc::new(config, source.clone()), source)
    }

    fn config() -> OidcConfig {
        OidcConfig {
            issuer_url: "https://idp.example".into(),
            client_id: "porch".into(),
            username_claim: "email".into(),
            groups_claim: Some("groups".into()),
            groups_prefix: "oidc:".into(),
            ..OidcConfig::default()
        }
    }

    #[tokio::test]
    async fn names_the_user_from_claims() {
        let k = TestKey::new("k");
        let (a, source) = oidc(&k, config());
        let t = k.sign(
            &json!({"iss": "https://idp.example", "aud": "porch", "exp": now() + 60,
            "sub": "123", "email": "alice@example.com", "groups": ["approvers", "authors"]}),
        );
        let user = a.authenticate_token(&t).await.expect("ok").expect("user");
        assert_eq!(user.name, "alice@example.com");
        assert_eq!(
            user.groups,
            vec!["oidc:approvers", "oidc:authors", AUTHENTICATED_GROUP]
        );
        // The key set is cached between requests.
        a.authenticate_token(&t).await.expect("ok");
        assert_eq!(source.1.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn default_prefix_is_the_issuer_for_sub() {
        let k = TestKey::new("k");
        let mut c = config();
        c.username_claim = "sub".into();
        let (a, _) = oidc(&k, c);
        let t = k.sign(
            &json!({"iss": "https://idp.example", "aud": "porch", "exp": now() + 60, "sub": "123"}),
        );
        let user = a.authenticate_token(&t).await.expect("ok").expect("user");
        assert_eq!(user.name, "https://idp.example#123");
    }

    #[tokio::test]
    async fn refuses_wrong_audience_expired_unverified_and_foreign_keys() {
        let k = TestKey::new("k");
        let (a, _) = oidc(&k, config());
        let claims = |aud: &str, exp: u64| {
            json!({"iss": "https://idp.example", "aud": aud, "exp": exp, "sub": "1",
                   "email": "a@example.com"})
        };
        assert!(
            a.authenticate_token(&k.sign(&claims("other", now() + 60)))
                .await
                .is_err()
        );
        assert!(
            a.authenticate_token(&k.sign(&claims("porch", now() - 3600)))
                .await
                .is_err()
        );
        let unverified = json!({"iss": "https://idp.example", "aud": "porch", "exp": now() + 60,
            "email": "a@example.com", "email_verified": false});
        assert!(a.authenticate_token(&k.sign(&unverified)).await.is_err());
        let stranger = TestKey::new("other-kid");
        assert!(
            a.authenticate_token(&stranger.sign(&claims("porch", now() + 60)))
                .await
                .is_err()
        );
        // Another issuer's token is not ours to judge.
        let t = k.sign(&json!({"iss": "https://elsewhere", "aud": "porch", "exp": now() + 60}));
        assert_eq!(a.authenticate_token(&t).await, Ok(None));
    }
}
