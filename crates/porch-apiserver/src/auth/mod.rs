//! Who is asking: the authenticated identity of a request, as kube-apiserver's `user.Info`.
//!
//! Authentication middleware puts a [`UserInfo`] into the request's extensions; everything after
//! it (authorization, audit, the resources that record authors) reads it from there. What this
//! module does not do: decide what the user may do (authorization) or log it (audit).
//!
//! The authenticators, tried in kube-apiserver's order: client certificate, then bearer tokens
//! (bootstrap admin token, `--token-auth-file`, ServiceAccount tokens, OIDC ID tokens), then
//! anonymous when allowed ([`chain::Authenticator`]).

pub mod chain;
pub mod jwt;
pub mod oidc;
pub mod serviceaccount;
pub mod token_file;
pub mod x509;

use std::collections::BTreeMap;
use std::sync::Arc;

pub use chain::{AuthError, Authenticator, TokenAuthenticator};

/// The group every authenticated user belongs to.
pub const AUTHENTICATED_GROUP: &str = "system:authenticated";
/// The group that may do everything (kube-apiserver's superuser group).
pub const MASTERS_GROUP: &str = "system:masters";
/// The group of requests without credentials.
pub const UNAUTHENTICATED_GROUP: &str = "system:unauthenticated";
/// The user of requests without credentials.
pub const ANONYMOUS_USER: &str = "system:anonymous";
/// The group of every ServiceAccount.
pub const SERVICEACCOUNTS_GROUP: &str = "system:serviceaccounts";

/// The client certificate chain of the connection (DER, leaf first) and the verdict of its
/// verification against the client CA; the listener puts it into each request's extensions.
/// As kube-apiserver, the TLS handshake takes any certificate the client proves it holds, and
/// a chain that does not verify is a 401 here, not a failed handshake.
#[derive(Debug, Clone)]
pub struct PeerCertificates {
    pub chain: Arc<Vec<Vec<u8>>>,
    /// Why the chain was refused (expired, unknown CA, ...); `None` when it verified.
    pub rejected: Option<String>,
}

/// An authenticated identity (kube-apiserver's `user.Info`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UserInfo {
    pub name: String,
    pub uid: String,
    pub groups: Vec<String>,
    pub extra: BTreeMap<String, Vec<String>>,
}

impl UserInfo {
    /// The bootstrap administrator: the holder of the server's admin token.
    pub fn bootstrap_admin() -> Self {
        Self {
            name: "admin".into(),
            uid: String::new(),
            groups: vec![MASTERS_GROUP.into(), AUTHENTICATED_GROUP.into()],
            extra: BTreeMap::new(),
        }
    }

    /// An in-process component (a controller) acting under its own name.
    pub fn system(name: &str) -> Self {
        Self {
            name: name.into(),
            uid: String::new(),
            groups: vec![MASTERS_GROUP.into(), AUTHENTICATED_GROUP.into()],
            extra: BTreeMap::new(),
        }
    }

    /// A request without credentials (kube-apiserver's anonymous user).
    pub fn anonymous() -> Self {
        Self {
            name: ANONYMOUS_USER.into(),
            uid: String::new(),
            groups: vec![UNAUTHENTICATED_GROUP.into()],
            extra: BTreeMap::new(),
        }
    }

    /// A user with `groups` plus `system:authenticated` (added once).
    pub fn authenticated(name: &str, uid: &str, groups: Vec<String>) -> Self {
        let mut groups = groups;
        if !groups.iter().any(|g| g == AUTHENTICATED_GROUP) {
            groups.push(AUTHENTICATED_GROUP.into());
        }
        Self {
            name: name.into(),
            uid: uid.into(),
            groups,
            extra: BTreeMap::new(),
        }
    }

    pub fn in_group(&self, group: &str) -> bool {
        self.groups.iter().any(|g| g == group)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admin_is_a_master() {
        assert!(UserInfo::bootstrap_admin().in_group(MASTERS_GROUP));
        assert!(!UserInfo::default().in_group(MASTERS_GROUP));
    }

    #[test]
    fn authenticated_adds_the_group_once() {
        let u = UserInfo::authenticated("alice", "1", vec![AUTHENTICATED_GROUP.into()]);
        assert_eq!(u.groups, vec![AUTHENTICATED_GROUP.to_string()]);
        let u = UserInfo::authenticated("bob", "", vec!["dev".into()]);
        assert_eq!(
            u.groups,
            vec!["dev".to_string(), AUTHENTICATED_GROUP.into()]
        );
        assert!(!UserInfo::anonymous().in_group(AUTHENTICATED_GROUP));
    }
}
