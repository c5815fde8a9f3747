//! The collector's index: owner uid → dependents, and dependent → owner uids.

use std::collections::{HashMap, HashSet};

use porch_core::store::ObjectKey;

/// Owner uid → dependents, and back.
#[derive(Default)]
pub(super) struct Index {
    pub(super) dependents: HashMap<String, HashSet<ObjectKey>>,
    pub(super) owners: HashMap<ObjectKey, Vec<String>>,
}

impl Index {
    pub(super) fn set(&mut self, key: &ObjectKey, uids: Vec<String>) {
        self.remove(key);
        if uids.is_empty() {
            return;
        }
        for uid in &uids {
            self.dependents
                .entry(uid.clone())
                .or_default()
                .insert(key.clone());
        }
        self.owners.insert(key.clone(), uids);
    }

    pub(super) fn remove(&mut self, key: &ObjectKey) {
        for uid in self.owners.remove(key).unwrap_or_default() {
            if let Some(set) = self.dependents.get_mut(&uid) {
                set.remove(key);
                if set.is_empty() {
                    self.dependents.remove(&uid);
                }
            }
        }
    }

    pub(super) fn dependents_of(&self, uid: &str) -> Vec<ObjectKey> {
        self.dependents
            .get(uid)
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(name: &str) -> ObjectKey {
        ObjectKey::new("/configmaps", "default", name)
    }

    #[test]
    fn index_follows_owner_changes() {
        let mut idx = Index::default();
        idx.set(&key("a"), vec!["u1".into(), "u2".into()]);
        idx.set(&key("b"), vec!["u1".into()]);
        assert_eq!(idx.dependents_of("u1").len(), 2);
        idx.set(&key("a"), vec!["u2".into()]);
        assert_eq!(idx.dependents_of("u1"), vec![key("b")]);
        idx.remove(&key("b"));
        assert!(idx.dependents_of("u1").is_empty());
        assert!(
            !idx.dependents.contains_key("u1"),
            "empty entries are dropped"
        );
        idx.set(&key("a"), Vec::new());
        assert!(idx.owners.is_empty() && idx.dependents.is_empty());
    }
}
