//! `metadata.managedFields` of package revisions.
//!
//! The REST layer computes them (server-side apply and field ownership) like for every kind;
//! the engine keeps no place for them, so this backend keeps them in memory per object, next
//! to the engine's revision. They are returned by get and by writes (not in lists or watch
//! events, which are built from the engine's cached JSON) and are lost on restart: the first
//! apply after a restart owns what it sends without pruning what it applied before.

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::Value;

type Key = (String, String);

#[derive(Default)]
pub struct ManagedFields {
    map: Mutex<HashMap<Key, Value>>,
}

impl ManagedFields {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Key, Value>> {
        // Entries are independent values; a panic elsewhere cannot leave one half-written.
        self.map
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Puts the stored managedFields of `namespace/name` into `obj`.
    pub fn attach(&self, namespace: &str, name: &str, obj: &mut Value) {
        let found = self
            .lock()
            .get(&(namespace.to_owned(), name.to_owned()))
            .cloned();
        if let (Some(mf), Some(meta)) = (
            found,
            obj.get_mut("metadata").and_then(Value::as_object_mut),
        ) {
            meta.insert("managedFields".into(), mf);
        }
    }

    /// Keeps the managedFields `obj` was written with.
    pub fn record(&self, namespace: &str, name: &str, obj: &Value) {
        let key = (namespace.to_owned(), name.to_owned());
        match obj.pointer("/metadata/managedFields") {
            Some(mf) if !mf.is_null() => {
                self.lock().insert(key, mf.clone());
            }
            _ => {
                self.lock().remove(&key);
            }
        }
    }

    pub fn forget(&self, namespace: &str, name: &str) {
        self.lock().remove(&(namespace.to_owned(), name.to_owned()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn recorded_fields_come_back_until_forgotten() {
        let m = ManagedFields::default();
        let mf = json!([{"manager": "m", "operation": "Apply"}]);
        m.record("ns", "r", &json!({"metadata": {"managedFields": mf}}));
        let mut o = json!({"metadata": {"name": "r"}});
        m.attach("ns", "r", &mut o);
        assert_eq!(o["metadata"]["managedFields"], mf);
        let mut other = json!({"metadata": {}});
        m.attach("ns2", "r", &mut other);
        assert!(other["metadata"].get("managedFields").is_none());
        m.forget("ns", "r");
        let mut o = json!({"metadata": {}});
        m.attach("ns", "r", &mut o);
        assert!(o["metadata"].get("managedFields").is_none());
    }
}
