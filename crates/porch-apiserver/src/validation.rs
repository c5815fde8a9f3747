//! Generic object validation: names, metadata shape, and schema-driven decoding (unknown-field
//! pruning for strict field validation, type, enum and required checks).

use serde_json::{Map, Value};

use crate::error::FieldError;

const DNS1123_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const DNS1123_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

/// Whether `s` is an RFC 1123 label (at most 63 characters).
pub fn is_dns1123_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// Whether `s` is an RFC 1123 subdomain (at most 253 characters).
pub fn is_dns1123_subdomain(s: &str) -> bool {
    s.len() <= 253 && !s.is_empty() && s.split('.').all(is_dns1123_label)
}

/// Checks `metadata.name` as a subdomain (or, with `label`, as a label).
pub fn validate_name(name: &str, label: bool) -> Option<FieldError> {
    let v = Value::String(name.to_string());
    if name.is_empty() {
        return Some(FieldError::required("metadata.name"));
    }
    if label {
        if name.len() > 63 {
            return Some(FieldError::invalid(
                "metadata.name",
                &v,
                "must be no more than 63 characters",
            ));
        }
        if !is_dns1123_label(name) {
            return Some(FieldError::invalid("metadata.name", &v, DNS1123_LABEL_MSG));
        }
    } else {
        if name.len() > 253 {
            return Some(FieldError::invalid(
                "metadata.name",
                &v,
                "must be no more than 253 characters",
            ));
        }
        if !is_dns1123_subdomain(name) {
            return Some(FieldError::invalid(
                "metadata.name",
                &v,
                DNS1123_SUBDOMAIN_MSG,
            ));
        }
    }
    None
}

/// A name taken from the URL path: what `rest.ValidatePathSegmentName` refuses.
pub fn path_segment_problem(name: &str) -> Option<String> {
    if name == "." || name == ".." {
        return Some(format!("name may not be {name:?}"));
    }
    if name.contains('/') || name.contains('%') {
        return Some(format!("name may not contain '/' or '%': {name:?}"));
    }
    None
}

const META_FIELDS: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

/// Label and annotation maps must hold strings; labels must be valid keys and values.
pub fn validate_metadata(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(meta) = obj.get("metadata") else {
        return errs;
    };
    for (field, is_label) in [("labels", true), ("annotations", false)] {
        if let Some(map) = meta.get(field) {
            let Some(map) = map.as_object() else {
                if !map.is_null() {
                    errs.push(FieldError::invalid(
                        format!("metadata.{field}"),
                        map,
                        "must be a map of strings",
                    ));
                }
                continue;
            };
            for (k, v) in map {
                if !v.is_string() {
                    errs.push(FieldError::invalid(
                        format!("metadata.{field}.{k}"),
                        v,
                        "must be a string",
                    ));
                } else if is_label {
                    let val = v.as_str().unwrap_or_default();
                    if !valid_label_value(val) {
                        errs.push(FieldError::invalid("metadata.labels".to_string(), v, "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"));
                    }
                }
                if is_label && !valid_qualified_name(k) {
                    errs.push(FieldError::invalid("metadata.labels", &Value::String(k.clone()), "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"));
                }
            }
        }
    }
    errs
}

fn valid_label_value(v: &str) -> bool {
    v.is_empty() || (v.len() <= 63 && valid_name_part(v))
}

fn valid_name_part(v: &str) -> bool {
    let b = v.as_bytes();
    !b.is_empty()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || b"-_.".contains(c))
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
}

fn valid_qualified_name(k: &str) -> bool {
    match k.rsplit_once('/') {
        Some((prefix, name)) => {
            is_dns1123_subdomain(prefix) && name.len() <= 63 && valid_name_part(name)
        }
        None => k.len() <= 63 && valid_name_part(k),
    }
}

/// The outcome of decoding an object against its schema.
#[derive(Debug, Default)]
pub struct Decoded {
    /// Paths of fields the schema does not know (already pruned from the object).
    pub unknown: Vec<String>,
    /// Type, enum and required violations.
    pub errors: Vec<FieldError>,
}

/// Prunes unknown fields (recording them) and checks types against an OpenAPI v3 schema.
pub fn decode_against_schema(obj: &mut Value, schema: &Value) -> Decoded {
    let mut out = Decoded::default();
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        let unknown: Vec<String> = meta
            .keys()
            .filter(|k| !META_FIELDS.contains(&k.as_str()))
            .cloned()
            .collect();
        for k in unknown {
            meta.remove(&k);
            out.unknown.push(format!("metadata.{k}"));
        }
    }
    if let Some(map) = obj.as_object_mut() {
        walk_object(map, schema, "", &mut out, true);
    }
    out
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn walk(value: &mut Value, schema: &Value, path: &str, out: &mut Decoded) {
    if value.is_null() {
        if schema.get("nullable").and_then(Value::as_bool) != Some(true) && !path.is_empty() {
            // Kubernetes drops explicit nulls of non-nullable fields instead of failing.
        }
        return;
    }
    if schema
        .get("x-kubernetes-int-or-string")
        .and_then(Value::as_bool)
        == Some(true)
    {
        if !(value.is_string() || value.is_i64() || value.is_u64()) {
            out.errors.push(FieldError::invalid(
                path,
                value,
                format!("{path} in body must be of type int-or-string"),
            ));
        }
        return;
    }
    let ty = schema.get("type").and_then(Value::as_str).unwrap_or("");
    let ok = match ty {
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => true,
    };
    if !ok {
        out.errors.push(FieldError::invalid(
            path,
            &Value::String(json_type(value).into()),
            format!(
                "{path} in body must be of type {ty}: \"{}\"",
                json_type(value)
            ),
        ));
        return;
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !allowed.contains(value)
    {
        let names: Vec<&str> = allowed.iter().filter_map(Value::as_str).collect();
        out.errors
            .push(FieldError::not_supported(path, value, &names));
    }
    match value {
        Value::Object(map) => walk_object(map, schema, path, out, false),
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter_mut().enumerate() {
                    walk(item, item_schema, &format!("{path}[{i}]"), out);
                }
            }
        }
        _ => {}
    }
}

fn walk_object(
    map: &mut Map<String, Value>,
    schema: &Value,
    path: &str,
    out: &mut Decoded,
    root: bool,
) {
    if schema
        .get("x-kubernetes-preserve-unknown-fields")
        .and_then(Value::as_bool)
        == Some(true)
        && schema.get("properties").is_none()
    {
        return;
    }
    if let Some(req) = schema.get("required").and_then(Value::as_array) {
        for r in req.iter().filter_map(Value::as_str) {
            if root && (r == "metadata" || r == "apiVersion" || r == "kind") {
                continue;
            }
            if map.get(r).is_none_or(Value::is_null) {
                out.errors.push(FieldError::required(join(path, r)));
            }
        }
    }
    let props = schema.get("properties").and_then(Value::as_object);
    let additional = schema.get("additionalProperties");
    let preserve = schema
        .get("x-kubernetes-preserve-unknown-fields")
        .and_then(Value::as_bool)
        == Some(true);
    let keys: Vec<String> = map.keys().cloned().collect();
    for k in keys {
        if root && (k == "apiVersion" || k == "kind" || k == "metadata") {
            continue;
        }
        let child = join(path, &k);
        if let Some(s) = props.and_then(|p| p.get(&k)) {
            if let Some(v) = map.get_mut(&k) {
                walk(v, s, &child, out);
            }
        } else if let Some(s) = additional.filter(|a| a.is_object()) {
            if let Some(v) = map.get_mut(&k) {
                walk(v, s, &child, out);
            }
        } else if additional.and_then(Value::as_bool) == Some(true) || preserve {
            // Free-form.
        } else if props.is_some() || additional.is_some() {
            map.remove(&k);
            out.unknown.push(child);
        }
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names() {
        assert!(is_dns1123_label("a-b1"));
        assert!(!is_dns1123_label("A"));
        assert!(!is_dns1123_label("-a"));
        assert!(is_dns1123_subdomain("a.b-c"));
        assert!(validate_name("Bad_Name", false).is_some());
        assert!(path_segment_problem("..").is_some());
    }

    #[test]
    fn prunes_unknown_and_checks_types() {
        let schema = json!({"type": "object", "properties": {
            "spec": {"type": "object", "required": ["a"], "properties": {
                "a": {"type": "string", "enum": ["x", "y"]},
                "m": {"type": "object", "additionalProperties": {"type": "string"}}}}}});
        let mut obj = json!({"apiVersion": "v", "kind": "K", "metadata": {"name": "n", "bogus": 1},
                             "spec": {"a": "z", "b": 1, "m": {"k": 2}}});
        let d = decode_against_schema(&mut obj, &schema);
        assert_eq!(d.unknown, vec!["metadata.bogus", "spec.b"]);
        assert_eq!(d.errors.len(), 2, "{:?}", d.errors);
        assert!(obj["spec"].get("b").is_none());
    }
}
