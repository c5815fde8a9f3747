//! Porch's try-locks (spec §7.2, §7.8): a second request for something already in progress
//! fails at once with Conflict instead of queueing behind the first.
//!
//! The set of in-flight keys is guarded by a std mutex held only to insert or remove one key,
//! never across `.await`; a [`Guard`] removes its key when dropped, so an operation that
//! errors, panics or is cancelled releases it.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

use crate::error::{EngineError, Result};

/// Keys of operations in progress.
#[derive(Debug, Clone, Default)]
pub(crate) struct InFlight {
    keys: Arc<Mutex<HashSet<String>>>,
}

/// Holds one key; releases it on drop.
#[derive(Debug)]
pub(crate) struct Guard {
    keys: Arc<Mutex<HashSet<String>>>,
    key: String,
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.keys
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.key);
    }
}

impl InFlight {
    /// Takes `key`, or fails with `InProgress(message)` when it is taken.
    fn acquire(&self, key: String, message: impl FnOnce() -> String) -> Result<Guard> {
        let fresh = self
            .keys
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key.clone());
        if !fresh {
            return Err(EngineError::InProgress(message()));
        }
        Ok(Guard {
            keys: self.keys.clone(),
            key,
        })
    }

    /// A create of (namespace, repository, package, workspace).
    pub(crate) fn create(
        &self,
        namespace: &str,
        repository: &str,
        package: &str,
        workspace: &str,
    ) -> Result<Guard> {
        self.acquire(
            format!("create\0{namespace}\0{repository}\0{package}\0{workspace}"),
            || {
                format!(
                    "another request is already in progress to create package revision with details namespace={namespace}, repository={repository}, package={package}, workspace={workspace}"
                )
            },
        )
    }

    /// An update, lifecycle change or delete of packagerevision `namespace/name`.
    pub(crate) fn revision(&self, namespace: &str, name: &str) -> Result<Guard> {
        self.acquire(format!("pr\0{namespace}\0{name}"), || {
            format!(
                "another request is already in progress on package revision \"{namespace}/{name}\""
            )
        })
    }

    /// An update of packagerevisionresources `namespace/name`.
    pub(crate) fn resources(&self, namespace: &str, name: &str) -> Result<Guard> {
        self.acquire(format!("prr\0{namespace}\0{name}"), || {
            format!(
                "another request is already in progress on package revision resources \"{namespace}/{name}\""
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_holder_conflicts_until_the_first_drops() {
        let f = InFlight::default();
        let g = f.revision("ns", "r.p.w").expect("free");
        let err = f.revision("ns", "r.p.w").expect_err("taken");
        assert_eq!(
            err.to_string(),
            "another request is already in progress on package revision \"ns/r.p.w\""
        );
        // Different resource, different key.
        let _prr = f.resources("ns", "r.p.w").expect("separate lock");
        drop(g);
        f.revision("ns", "r.p.w").expect("released on drop");
    }
}
