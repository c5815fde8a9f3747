//! `metadata.managedFields` of package revisions.
//!
//! The REST layer computes them (server-side apply and field ownership) like for every kind;
//! the engine's object metadata has no place for them, so this backend keeps them itself: one
//! record per revision in the metadata store (its own resource, next to the engine's object
//! metadata), read through a cache. They are returned by get, by writes and in lists (the
//! cache holds every record once a list has asked, and each entry has a generation the
//! serialized-object cache is stamped with), not in watch events: an event is logged by the
//! engine's write, before the record of that write exists. The record is written after
//! the engine's write, not in its transaction: a crash in between leaves the previous owners.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use porch_apiserver::{ApiError, blocking};
use porch_core::store::{ListQuery, MetadataStore, ObjectKey, Precondition, Write, WriteOp};
use serde_json::Value;

/// Store resource of the records (internal; not served).
const RESOURCE: &str = "porch.kpt.dev/packagerevisions.managedfields";

type Key = (String, String);

/// A cached record: its generation (unique per value ever cached) and the value.
type Entry = (u64, Option<Arc<Value>>);

pub struct ManagedFields {
    store: Arc<dyn MetadataStore>,
    /// What the store holds per object (`None`: known to hold nothing).
    cache: Mutex<HashMap<Key, Entry>>,
    /// Every record of the store is in `cache`: a miss means "none".
    complete: AtomicBool,
    generation: AtomicU64,
}

impl ManagedFields {
    pub fn new(store: Arc<dyn MetadataStore>) -> Self {
        Self {
            store,
            cache: Mutex::new(HashMap::new()),
            complete: AtomicBool::new(false),
            generation: AtomicU64::new(0),
        }
    }

    fn next_generation(&self) -> u64 {
        self.generation.fetch_add(1, Ordering::Relaxed) + 1
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Key, Entry>> {
        // Entries are independent values; a panic elsewhere cannot leave one half-written.
        self.cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    async fn load(&self, namespace: &str, name: &str) -> Result<Option<Value>, ApiError> {
        let key = (namespace.to_owned(), name.to_owned());
        if let Some((_, v)) = self.lock().get(&key) {
            return Ok(v.as_deref().cloned());
        }
        if self.complete.load(Ordering::Acquire) {
            return Ok(None);
        }
        let store = self.store.clone();
        let skey = ObjectKey::new(RESOURCE, namespace, name);
        let found = blocking(move || store.get(&skey)).await?;
        let value = found.and_then(|o| serde_json::from_slice::<Value>(&o.data).ok());
        let generation = self.next_generation();
        self.lock()
            .entry(key)
            .or_insert((generation, value.clone().map(Arc::new)));
        Ok(value)
    }

    /// Reads every record into the cache once, so that [`Self::peek`] answers for all.
    pub async fn load_all(&self) -> Result<(), ApiError> {
        if self.complete.load(Ordering::Acquire) {
            return Ok(());
        }
        let store = self.store.clone();
        let query = ListQuery {
            resource: RESOURCE.into(),
            namespace: None,
            start_after: None,
            limit: None,
        };
        let page = blocking(move || store.list(&query)).await?;
        let mut cache = self.lock();
        for item in page.items {
            let key = (item.key.namespace.clone(), item.key.name.clone());
            let value = serde_json::from_slice::<Value>(&item.data)
                .ok()
                .map(Arc::new);
            let generation = self.next_generation();
            // An entry already cached is newer than (or as new as) the listed one.
            cache.entry(key).or_insert((generation, value));
        }
        self.complete.store(true, Ordering::Release);
        Ok(())
    }

    /// The cached record of `namespace/name` with its generation, without reading the store
    /// (complete after [`Self::load_all`]).
    pub fn peek(&self, namespace: &str, name: &str) -> Option<(u64, Arc<Value>)> {
        let cache = self.lock();
        let (generation, value) = cache.get(&(namespace.to_owned(), name.to_owned()))?;
        value.as_ref().map(|v| (*generation, v.clone()))
    }

    /// Puts the managedFields of `namespace/name` into `obj`. They are advisory: a store
    /// failure is logged and the object is answered without them.
    pub async fn attach(&self, namespace: &str, name: &str, obj: &mut Value) {
        let found = match self.load(namespace, name).await {
            Ok(found) => found,
            Err(e) => {
                tracing::warn!(namespace, name, error = %e, "cannot read managedFields");
                None
            }
        };
        if let (Some(mf), Some(meta)) = (
            found,
            obj.get_mut("metadata").and_then(Value::as_object_mut),
        ) {
            meta.insert("managedFields".into(), mf);
        }
    }

    /// Keeps the managedFields `obj` was written with. The revision's own write already
    /// succeeded, so a failure here is logged, not answered.
    pub async fn record(&self, namespace: &str, name: &str, obj: &Value) {
        if let Err(e) = self.try_record(namespace, name, obj).await {
            tracing::warn!(namespace, name, error = %e, "cannot store managedFields");
        }
    }

    async fn try_record(&self, namespace: &str, name: &str, obj: &Value) -> Result<(), ApiError> {
        let want = obj
            .pointer("/metadata/managedFields")
            .filter(|m| !m.is_null())
            .cloned();
        if self.load(namespace, name).await? == want {
            return Ok(());
        }
        let key = ObjectKey::new(RESOURCE, namespace, name);
        let write = match &want {
            Some(mf) => {
                let bytes = serde_json::to_vec(mf).unwrap_or_default();
                Write {
                    key,
                    precondition: Precondition::None,
                    op: WriteOp::Put(Box::new(move |_, _| bytes)),
                }
            }
            None => Write {
                key,
                precondition: Precondition::None,
                op: WriteOp::Delete(Box::new(|_, old| old.unwrap_or_default().to_vec())),
            },
        };
        let store = self.store.clone();
        blocking(move || store.write(vec![write])).await?;
        let generation = self.next_generation();
        self.lock().insert(
            (namespace.to_owned(), name.to_owned()),
            (generation, want.map(Arc::new)),
        );
        Ok(())
    }

    /// Drops the record of a deleted revision.
    pub async fn forget(&self, namespace: &str, name: &str) {
        self.record(namespace, name, &Value::Null).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use porch_store::{RedbStore, StoreOptions};
    use serde_json::json;

    fn store(dir: &std::path::Path) -> Arc<dyn MetadataStore> {
        Arc::new(RedbStore::open(&dir.join("store.redb"), StoreOptions::default()).expect("store"))
    }

    #[tokio::test]
    async fn recorded_fields_come_back_and_survive_a_new_cache() {
        let dir = tempfile::tempdir().expect("tempdir");
        let s = store(dir.path());
        let m = ManagedFields::new(s.clone());
        let mf = json!([{"manager": "m", "operation": "Apply"}]);
        m.record("ns", "r", &json!({"metadata": {"managedFields": mf}}))
            .await;
        let mut o = json!({"metadata": {"name": "r"}});
        m.attach("ns", "r", &mut o).await;
        assert_eq!(o["metadata"]["managedFields"], mf);
        let mut other = json!({"metadata": {}});
        m.attach("ns2", "r", &mut other).await;
        assert!(other["metadata"].get("managedFields").is_none());

        // A new cache (a restarted server) reads them from the store.
        let fresh = ManagedFields::new(s.clone());
        let mut o = json!({"metadata": {}});
        fresh.attach("ns", "r", &mut o).await;
        assert_eq!(o["metadata"]["managedFields"], mf);

        fresh.forget("ns", "r").await;
        let again = ManagedFields::new(s);
        let mut o = json!({"metadata": {}});
        again.attach("ns", "r", &mut o).await;
        assert!(o["metadata"].get("managedFields").is_none());
        // Forgetting what is not there is fine.
        again.forget("ns", "none").await;
    }
}
