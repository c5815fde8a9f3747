//! Who is asking: the authenticated identity of a request, as kube-apiserver's `user.Info`.
//!
//! Authentication middleware puts a [`UserInfo`] into the request's extensions; everything after
//! it (authorization, audit, the resources that record authors) reads it from there. What this
//! module does not do: decide what the user may do (authorization) or log it (audit).

use std::collections::BTreeMap;

/// The group every authenticated user belongs to.
pub const AUTHENTICATED_GROUP: &str = "system:authenticated";
/// The group that may do everything (kube-apiserver's superuser group).
pub const MASTERS_GROUP: &str = "system:masters";

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
}
