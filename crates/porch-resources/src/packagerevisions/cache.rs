//! Serialized `PackageRevision` objects, reused while the revision is unchanged: a list of
//! ten thousand revisions is then mostly a concatenation of cached bytes instead of building
//! and serializing every object again.
//!
//! An entry is valid while everything its JSON depends on is unchanged: the engine's version
//! (content, lifecycle and stored metadata), the computed latest label, the repository's
//! deployment flag, the task history (filled in after a sync) and the managedFields record
//! (by its generation).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use porch_engine::PackageRevision;
use serde_json::Value;

use super::convert::revision_json;

/// Beyond this many entries the cache starts over (revisions that no longer exist are
/// never looked up again; this bounds what they hold).
const MAX_ENTRIES: usize = 200_000;

#[derive(PartialEq, Eq)]
struct Stamp {
    version: String,
    latest: bool,
    deployment: bool,
    tasks: usize,
    managed: u64,
}

impl Stamp {
    fn of(pr: &PackageRevision, managed: u64) -> Self {
        Stamp {
            version: pr.resource_version.clone(),
            latest: pr.latest,
            deployment: pr.deployment,
            tasks: pr.tasks.len(),
            managed,
        }
    }
}

/// A managedFields record and its generation (see `managed::ManagedFields::peek`).
pub type Managed = Option<(u64, Arc<Value>)>;

/// (namespace, object name) -> what the bytes were built from, and the bytes.
type Entries = HashMap<(String, String), (Stamp, Arc<[u8]>)>;

#[derive(Default)]
pub struct JsonCache {
    map: Mutex<Entries>,
}

impl JsonCache {
    fn lock(&self) -> std::sync::MutexGuard<'_, Entries> {
        // Entries are independent values; a panic elsewhere cannot leave one half-written.
        self.map
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The serialized object with its managedFields; `built` is its JSON (without them) when
    /// the caller already has it.
    pub fn bytes(
        &self,
        pr: &PackageRevision,
        built: Option<&Value>,
        managed: Managed,
    ) -> Arc<[u8]> {
        let key = (pr.namespace.clone(), pr.name().as_str().to_owned());
        let stamp = Stamp::of(pr, managed.as_ref().map_or(0, |(g, _)| *g));
        if let Some((s, b)) = self.lock().get(&key)
            && *s == stamp
        {
            return b.clone();
        }
        // Built outside the lock: serializing must not hold up other readers.
        let bytes: Arc<[u8]> = match (built, managed) {
            (Some(v), None) => serde_json::to_vec(v),
            (None, None) => serde_json::to_vec(&revision_json(pr)),
            (built, Some((_, fields))) => {
                let mut obj = built.cloned().unwrap_or_else(|| revision_json(pr));
                if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
                    meta.insert("managedFields".into(), Value::clone(&fields));
                }
                serde_json::to_vec(&obj)
            }
        }
        .unwrap_or_default()
        .into();
        let mut map = self.lock();
        if map.len() >= MAX_ENTRIES {
            map.clear();
        }
        map.insert(key, (stamp, bytes.clone()));
        bytes
    }
}
