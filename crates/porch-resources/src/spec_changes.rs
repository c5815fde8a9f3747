//! Tells a controller's watch feed whether an object changed in a way that needs a
//! reconcile: anything but its `status` (and the bookkeeping that moves with every write,
//! `resourceVersion` and `managedFields`).
//!
//! A controller writes the status of the objects it reconciles; without this filter each of
//! those writes woke the controller again, and a PackageVariantSet was swept (listing every
//! variant of its namespace) after every status write of any of its variants — quadratic in
//! the number of variants during a fan-out or roll-out. Deletions always count.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use porch_core::store::EventType;
use serde_json::Value;

/// The last fingerprint seen of each object, by `(namespace, name)`.
#[derive(Default)]
pub struct SpecChanges(HashMap<(String, String), u64>);

/// A hash of `obj` without what a status write changes (no copy of the object is made).
fn fingerprint(obj: &Value) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    let Some(map) = obj.as_object() else {
        obj.to_string().hash(&mut h);
        return h.finish();
    };
    // serde_json's maps keep a stable order for one object's successive versions (the server
    // writes them in the same order), and a spurious difference only costs a wake.
    for (key, value) in map {
        if key == "status" {
            continue;
        }
        key.hash(&mut h);
        match (key.as_str(), value.as_object()) {
            ("metadata", Some(meta)) => {
                for (k, v) in meta {
                    if k != "resourceVersion" && k != "managedFields" {
                        k.hash(&mut h);
                        v.to_string().hash(&mut h);
                    }
                }
            }
            _ => value.to_string().hash(&mut h),
        }
    }
    h.finish()
}

impl SpecChanges {
    /// Whether this event of `obj` needs a reconcile: a deletion, an object not seen
    /// before, or a change outside its status.
    pub fn changed(&mut self, event_type: EventType, obj: &Value) -> bool {
        let s = |p: &str| obj.pointer(p).and_then(Value::as_str).unwrap_or("");
        let key = (
            s("/metadata/namespace").to_owned(),
            s("/metadata/name").to_owned(),
        );
        if event_type == EventType::Deleted {
            self.0.remove(&key);
            return true;
        }
        let print = fingerprint(obj);
        self.0.insert(key, print) != Some(print)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn status_writes_are_not_changes_spec_and_metadata_writes_and_deletions_are() {
        let mut f = SpecChanges::default();
        let mut pv = json!({
            "metadata": {"namespace": "ns", "name": "a", "resourceVersion": "1", "labels": {"x": "1"}},
            "spec": {"upstream": {"repo": "r"}},
        });
        assert!(f.changed(EventType::Added, &pv), "first sight");
        pv["status"] = json!({"conditions": [{"type": "Ready"}]});
        pv["metadata"]["resourceVersion"] = json!("2");
        pv["metadata"]["managedFields"] = json!([{"manager": "c"}]);
        assert!(!f.changed(EventType::Modified, &pv), "status only");
        pv["metadata"]["labels"]["x"] = json!("2");
        assert!(f.changed(EventType::Modified, &pv), "labels");
        pv["spec"]["upstream"]["repo"] = json!("s");
        assert!(f.changed(EventType::Modified, &pv), "spec");
        pv["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        assert!(f.changed(EventType::Modified, &pv), "deletion started");
        assert!(f.changed(EventType::Deleted, &pv), "deleted");
        let mut other = pv.clone();
        other["metadata"]["name"] = json!("b");
        assert!(f.changed(EventType::Modified, &other), "another object");
    }
}
