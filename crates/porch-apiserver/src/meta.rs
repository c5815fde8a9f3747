//! Small helpers over object metadata in JSON form.

use serde_json::{Map, Value};

/// Now, in the RFC 3339 second-precision form Kubernetes uses for `metav1.Time`.
pub fn now_rfc3339() -> String {
    k8s_openapi::jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// `metadata`, created when missing (the object must be a JSON object).
pub fn metadata_mut(obj: &mut Value) -> &mut Map<String, Value> {
    if !obj.is_object() {
        *obj = Value::Object(Map::new());
    }
    let map = obj.as_object_mut().expect("made an object above");
    let meta = map
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    meta.as_object_mut().expect("made an object above")
}

pub fn name(obj: &Value) -> &str {
    obj.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// `metadata.resourceVersion` as a number; `None` when absent or empty.
pub fn resource_version(obj: &Value) -> Result<Option<u64>, String> {
    match obj.pointer("/metadata/resourceVersion") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.is_empty() => Ok(None),
        Some(Value::String(s)) => s
            .parse()
            .map(Some)
            .map_err(|_| format!("invalid resourceVersion {s:?}")),
        Some(other) => Err(format!("invalid resourceVersion {other}")),
    }
}

pub fn set_resource_version(obj: &mut Value, rv: u64) {
    metadata_mut(obj).insert("resourceVersion".into(), Value::String(rv.to_string()));
}

/// Renders an object with its new resourceVersion (the store's stamp).
pub fn stamp_bytes(mut obj: Value, rv: u64) -> Vec<u8> {
    set_resource_version(&mut obj, rv);
    serde_json::to_vec(&obj).unwrap_or_default()
}

/// Re-stamps stored bytes with a new resourceVersion (the last state of a deleted object).
pub fn restamp(old: &[u8], rv: u64) -> Vec<u8> {
    match serde_json::from_slice::<Value>(old) {
        Ok(v) => stamp_bytes(v, rv),
        Err(_) => old.to_vec(),
    }
}

/// Everything but `metadata` and `status`: what `metadata.generation` tracks.
pub fn spec_part(obj: &Value) -> Value {
    let mut v = obj.clone();
    if let Some(m) = v.as_object_mut() {
        m.remove("metadata");
        m.remove("status");
        m.remove("apiVersion");
        m.remove("kind");
    }
    v
}
