//! Schemas of the core `v1` kinds the standalone server stores: `Namespace` and `Secret`.

use serde_json::{Value, json};

fn string_map() -> Value {
    json!({"type": "object", "additionalProperties": {"type": "string"}})
}

/// `v1` `Namespace`.
pub fn namespace_schema() -> Value {
    json!({
        "type": "object",
        "description": "Namespace provides a scope for Names.",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": {"type": "object", "properties": {
                "finalizers": {"type": "array", "items": {"type": "string"}}}},
            "status": {"type": "object", "properties": {
                "phase": {"type": "string"},
                "conditions": {"type": "array", "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
        },
    })
}

/// `v1` `Secret`. `data` values are base64; `stringData` is write-only and merged into `data`.
pub fn secret_schema() -> Value {
    json!({
        "type": "object",
        "description": "Secret holds secret data of a certain type.",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "data": {"type": "object", "additionalProperties": {"type": "string", "format": "byte"}},
            "stringData": string_map(),
            "type": {"type": "string"},
            "immutable": {"type": "boolean"},
        },
    })
}

/// The OpenAPI schema of core `v1` `ConfigMap`.
pub fn config_map_schema() -> Value {
    json!({
        "type": "object",
        "description": "ConfigMap holds configuration data for pods to consume.",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "data": string_map(),
            "binaryData": {"type": "object", "additionalProperties": {"type": "string", "format": "byte"}},
            "immutable": {"type": "boolean"},
        },
    })
}
