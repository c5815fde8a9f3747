//! Schemas for the derived types.

use kube::CustomResourceExt;
use serde_json::{Value, json};

/// The structural OpenAPI v3 schema kube derives for a custom resource (first version).
pub fn crd_schema<K: CustomResourceExt>() -> Value {
    let crd = K::crd();
    crd.spec
        .versions
        .first()
        .and_then(|v| v.schema.as_ref())
        .and_then(|s| s.open_api_v3_schema.as_ref())
        .and_then(|s| serde_json::to_value(s).ok())
        .unwrap_or_else(|| json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}))
}

/// The schema of a kind Porch serves from its aggregated apiserver (not a CRD): the derived
/// schema without any `required` lists. Porch's Go strategies check required fields with
/// their own messages; its OpenAPI only documents them, so an object the server emits (which
/// may omit empty fields) always decodes back.
pub fn aggregated_schema<K: CustomResourceExt>() -> Value {
    let mut schema = crd_schema::<K>();
    drop_required(&mut schema);
    if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        props.insert(
            "apiVersion".into(),
            json!({"type": "string", "description": "The versioned schema of this object: `porch.kpt.dev/v1alpha1`."}),
        );
        props.insert(
            "kind".into(),
            json!({"type": "string", "description": "The kind of this object, in CamelCase."}),
        );
    }
    schema
}

fn drop_required(v: &mut Value) {
    match v {
        Value::Object(m) => {
            if m.get("required").is_some_and(Value::is_array) {
                m.remove("required");
            }
            m.values_mut().for_each(drop_required);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_required),
        _ => {}
    }
}

/// `schema_with` helper: an arbitrary JSON object kept as is.
pub(crate) fn preserve_unknown(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "object", "x-kubernetes-preserve-unknown-fields": true})
}

/// `schema_with` helper: a Kubernetes `metav1.Time` (RFC 3339 string).
pub(crate) fn date_time(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "string", "format": "date-time", "nullable": true})
}

/// `schema_with` helper: a Kubernetes `metav1.Condition` list.
pub(crate) fn conditions(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "array",
        "nullable": true,
        "items": {
            "type": "object",
            "required": ["type", "status", "lastTransitionTime", "reason", "message"],
            "properties": {
                "type": {"type": "string"},
                "status": {"type": "string", "enum": ["True", "False", "Unknown"]},
                "observedGeneration": {"type": "integer", "format": "int64"},
                "lastTransitionTime": {"type": "string", "format": "date-time"},
                "reason": {"type": "string"},
                "message": {"type": "string"}
            }
        }
    })
}
