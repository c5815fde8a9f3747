//! JSON Web Token verification shared by ServiceAccount tokens and OIDC ID tokens
//! (`jsonwebtoken`): signature against a key set, `iss`, `aud`, `exp` and `nbf`.

use base64::Engine;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::de::DeserializeOwned;

/// Clock skew tolerated on `exp` and `nbf`, in seconds.
const LEEWAY_SECS: u64 = 30;

/// Why a token was refused (never quotes the token).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JwtError {
    #[error("malformed token: {0}")]
    Malformed(String),
    #[error("no key matches the token (kid {0:?})")]
    UnknownKey(Option<String>),
    #[error("token verification failed: {0}")]
    Invalid(String),
    #[error("invalid key set: {0}")]
    KeySet(String),
}

/// One verification key.
#[derive(Clone)]
pub struct Key {
    pub kid: Option<String>,
    pub algorithm: Algorithm,
    pub key: DecodingKey,
}

/// The keys a token may be signed with.
#[derive(Clone, Default)]
pub struct KeySet(pub Vec<Key>);

impl KeySet {
    /// A JWKS document (`{"keys": [...]}`); keys of unsupported types are skipped.
    pub fn from_jwks(json: &[u8]) -> Result<Self, JwtError> {
        let set: JwkSet =
            serde_json::from_slice(json).map_err(|e| JwtError::KeySet(e.to_string()))?;
        let mut keys = Vec::new();
        for jwk in &set.keys {
            let algorithm = match (&jwk.common.key_algorithm, &jwk.algorithm) {
                (Some(a), _) => match a.to_string().parse::<Algorithm>() {
                    // Only public-key algorithms: a shared secret in a published set is none.
                    Ok(Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512) | Err(_) => {
                        continue;
                    }
                    Ok(a) => a,
                },
                (None, AlgorithmParameters::RSA(_)) => Algorithm::RS256,
                (None, AlgorithmParameters::EllipticCurve(ec)) => match ec.curve {
                    EllipticCurve::P256 => Algorithm::ES256,
                    EllipticCurve::P384 => Algorithm::ES384,
                    _ => continue,
                },
                (None, AlgorithmParameters::OctetKeyPair(_)) => Algorithm::EdDSA,
                (None, _) => continue,
            };
            let Ok(key) = DecodingKey::from_jwk(jwk) else {
                continue;
            };
            keys.push(Key {
                kid: jwk.common.key_id.clone(),
                algorithm,
                key,
            });
        }
        if keys.is_empty() {
            return Err(JwtError::KeySet("no usable key".into()));
        }
        Ok(Self(keys))
    }
}

/// The unverified claims of a token: only to pick the authenticator that owns it (by `iss`)
/// before its signature is checked.
pub fn peek_claims(token: &str) -> Option<serde_json::Value> {
    let mut parts = token.split('.');
    let (_, payload, _, None) = (parts.next()?, parts.next()?, parts.next()?, parts.next()) else {
        return None;
    };
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// The unverified issuer of a token.
pub fn peek_issuer(token: &str) -> Option<String> {
    peek_claims(token)?.get("iss")?.as_str().map(str::to_string)
}

/// Verifies signature, `iss`, `aud` (one of `audiences`), `exp` and `nbf`; returns the claims.
pub fn verify<T: DeserializeOwned>(
    token: &str,
    keys: &KeySet,
    issuer: &str,
    audiences: &[String],
) -> Result<T, JwtError> {
    let header =
        jsonwebtoken::decode_header(token).map_err(|e| JwtError::Malformed(e.to_string()))?;
    let candidates: Vec<&Key> = keys
        .0
        .iter()
        .filter(|k| k.algorithm == header.alg)
        .filter(|k| header.kid.is_none() || k.kid.is_none() || k.kid == header.kid)
        .collect();
    if candidates.is_empty() {
        return Err(JwtError::UnknownKey(header.kid));
    }
    let mut validation = Validation::new(header.alg);
    validation.leeway = LEEWAY_SECS;
    validation.validate_nbf = true;
    validation.set_issuer(&[issuer]);
    validation.set_audience(audiences);
    validation.set_required_spec_claims(&["exp", "iss", "aud"]);
    let mut last = JwtError::UnknownKey(header.kid.clone());
    for k in candidates {
        match jsonwebtoken::decode::<T>(token, &k.key, &validation) {
            Ok(data) => return Ok(data.claims),
            Err(e) => {
                last = JwtError::Invalid(describe(&e));
                if !matches!(e.kind(), jsonwebtoken::errors::ErrorKind::InvalidSignature) {
                    break;
                }
            }
        }
    }
    Err(last)
}

fn describe(e: &jsonwebtoken::errors::Error) -> String {
    use jsonwebtoken::errors::ErrorKind as K;
    match e.kind() {
        K::ExpiredSignature => "token has expired".into(),
        K::ImmatureSignature => "token is not valid yet".into(),
        K::InvalidAudience => "invalid audience".into(),
        K::InvalidIssuer => "invalid issuer".into(),
        K::InvalidSignature => "invalid signature".into(),
        K::MissingRequiredClaim(c) => format!("missing claim {c}"),
        other => format!("{other:?}"),
    }
}

#[cfg(test)]
pub(crate) mod testing {
    //! A local ES256 key for tests: signs tokens and publishes itself as a JWKS.

    use base64::Engine;
    use jsonwebtoken::{Algorithm, EncodingKey, Header};
    use serde_json::json;

    pub struct TestKey {
        pub kid: String,
        pub key: rcgen::KeyPair,
    }

    impl TestKey {
        pub fn new(kid: &str) -> Self {
            Self {
                kid: kid.into(),
                key: rcgen::KeyPair::generate().expect("key"),
            }
        }
        pub fn jwks(&self) -> serde_json::Value {
            let raw = self.key.public_key_raw();
            let b64 = |b: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b);
            json!({"keys": [{"kty": "EC", "crv": "P-256", "kid": self.kid, "use": "sig",
                             "x": b64(&raw[1..33]), "y": b64(&raw[33..65])}]})
        }
        pub fn sign(&self, claims: &serde_json::Value) -> String {
            let mut header = Header::new(Algorithm::ES256);
            header.kid = Some(self.kid.clone());
            let key = EncodingKey::from_ec_pem(self.key.serialize_pem().as_bytes()).expect("pem");
            jsonwebtoken::encode(&header, claims, &key).expect("sign")
        }
    }

    pub fn now() -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{TestKey, now};
    use super::*;
    use serde_json::{Value, json};

    fn keys(k: &TestKey) -> KeySet {
        KeySet::from_jwks(k.jwks().to_string().as_bytes()).expect("jwks")
    }

    #[test]
    fn verifies_and_refuses() {
        let k = TestKey::new("k1");
        let set = keys(&k);
        let aud = vec!["porch".to_string()];
        let good = json!({"iss": "https://idp", "aud": "porch", "sub": "a", "exp": now() + 60});
        let claims: Value = verify(&k.sign(&good), &set, "https://idp", &aud).expect("valid");
        assert_eq!(claims["sub"], "a");

        let expired = json!({"iss": "https://idp", "aud": "porch", "exp": now() - 3600});
        let e = verify::<Value>(&k.sign(&expired), &set, "https://idp", &aud).expect_err("refused");
        assert_eq!(e, JwtError::Invalid("token has expired".into()));

        let wrong_aud = json!({"iss": "https://idp", "aud": "other", "exp": now() + 60});
        let e =
            verify::<Value>(&k.sign(&wrong_aud), &set, "https://idp", &aud).expect_err("refused");
        assert_eq!(e, JwtError::Invalid("invalid audience".into()));

        let not_yet =
            json!({"iss": "https://idp", "aud": "porch", "exp": now() + 7200, "nbf": now() + 3600});
        assert!(verify::<Value>(&k.sign(&not_yet), &set, "https://idp", &aud).is_err());

        let wrong_iss = json!({"iss": "https://evil", "aud": "porch", "exp": now() + 60});
        assert!(verify::<Value>(&k.sign(&wrong_iss), &set, "https://idp", &aud).is_err());

        // Tampered: the payload changed after signing.
        let token = k.sign(&good);
        let mut parts: Vec<&str> = token.split('.').collect();
        let forged = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(
            json!({"iss": "https://idp", "aud": "porch", "sub": "root", "exp": now() + 60})
                .to_string(),
        );
        parts[1] = &forged;
        let e = verify::<Value>(&parts.join("."), &set, "https://idp", &aud).expect_err("refused");
        assert_eq!(e, JwtError::Invalid("invalid signature".into()));

        // Signed by another key with the same kid.
        let other = TestKey::new("k1");
        assert!(verify::<Value>(&other.sign(&good), &set, "https://idp", &aud).is_err());
    }

    #[test]
    fn peeks_the_issuer() {
        let k = TestKey::new("k1");
        let t = k.sign(&json!({"iss": "https://idp"}));
        assert_eq!(peek_issuer(&t).as_deref(), Some("https://idp"));
        assert_eq!(peek_issuer("opaque-token"), None);
    }
}
