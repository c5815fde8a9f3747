//! Custom resources against their version's `openAPIV3Schema`, beyond what the REST layer
//! checks for every kind (types, enums, required, unknown-field pruning): structural
//! defaulting (`default`) and the value constraints of OpenAPI v3 (`minimum`, `maximum`,
//! `exclusiveMinimum`/`exclusiveMaximum`, `minLength`, `maxLength`, `pattern`, `minItems`,
//! `maxItems`, `uniqueItems`, `minProperties`, `maxProperties`), with kube-apiserver's messages.
//!
//! Not enforced: `x-kubernetes-validations` (CEL rules), `format`, `oneOf`/`anyOf`/`allOf`/`not`.

use porch_apiserver::{FieldError, ResourceHooks};
use serde_json::{Map, Value};

/// Hooks of a custom resource kind: its schema's defaults and constraints.
pub struct CustomResourceHooks {
    schema: Value,
}

impl CustomResourceHooks {
    pub fn new(schema: Value) -> Self {
        Self { schema }
    }
}

impl ResourceHooks for CustomResourceHooks {
    fn default(&self, obj: &mut Value) {
        apply_defaults(obj, &self.schema, true);
    }

    fn validate_create(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        check(obj, &self.schema, "", &mut errs, true);
        errs
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// Fills missing properties that have a `default`, recursively into present objects and arrays.
fn apply_defaults(value: &mut Value, schema: &Value, root: bool) {
    match value {
        Value::Object(map) => {
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                for (k, s) in props {
                    if root && k == "metadata" {
                        continue;
                    }
                    if !map.contains_key(k)
                        && let Some(d) = s.get("default")
                    {
                        map.insert(k.clone(), d.clone());
                    }
                    if let Some(child) = map.get_mut(k) {
                        apply_defaults(child, s, false);
                    }
                }
            }
            if let Some(s) = schema.get("additionalProperties").filter(|a| a.is_object()) {
                for (_, child) in map.iter_mut() {
                    apply_defaults(child, s, false);
                }
            }
        }
        Value::Array(items) => {
            if let Some(s) = schema.get("items") {
                for item in items {
                    apply_defaults(item, s, false);
                }
            }
        }
        _ => {}
    }
}

fn number(schema: &Value, key: &str) -> Option<f64> {
    schema.get(key).and_then(Value::as_f64)
}

fn count(schema: &Value, key: &str) -> Option<usize> {
    schema
        .get(key)
        .and_then(Value::as_u64)
        .and_then(|n| usize::try_from(n).ok())
}

fn exclusive(schema: &Value, key: &str) -> bool {
    schema.get(key).and_then(Value::as_bool) == Some(true)
}

fn check(value: &Value, schema: &Value, path: &str, errs: &mut Vec<FieldError>, root: bool) {
    let invalid = |errs: &mut Vec<FieldError>, msg: String| {
        errs.push(FieldError::invalid(
            path,
            value,
            format!("{path} in body {msg}"),
        ));
    };
    match value {
        Value::Number(n) => {
            let Some(x) = n.as_f64() else { return };
            if let Some(min) = number(schema, "minimum") {
                if exclusive(schema, "exclusiveMinimum") && x <= min {
                    invalid(errs, format!("should be greater than {min}"));
                } else if x < min {
                    invalid(errs, format!("should be greater than or equal to {min}"));
                }
            }
            if let Some(max) = number(schema, "maximum") {
                if exclusive(schema, "exclusiveMaximum") && x >= max {
                    invalid(errs, format!("should be less than {max}"));
                } else if x > max {
                    invalid(errs, format!("should be less than or equal to {max}"));
                }
            }
            if let Some(m) = number(schema, "multipleOf")
                && m > 0.0
                && (x / m).fract() != 0.0
            {
                invalid(errs, format!("should be a multiple of {m}"));
            }
        }
        Value::String(s) => {
            let chars = s.chars().count();
            if let Some(min) = count(schema, "minLength")
                && chars < min
            {
                invalid(errs, format!("should be at least {min} chars long"));
            }
            if let Some(max) = count(schema, "maxLength")
                && chars > max
            {
                errs.push(FieldError {
                    reason: "FieldValueTooLong",
                    field: path.to_string(),
                    message: format!("Too long: may not be more than {max} bytes"),
                });
            }
            if let Some(p) = schema.get("pattern").and_then(Value::as_str) {
                match regex::Regex::new(p) {
                    Ok(re) if !re.is_match(s) => invalid(errs, format!("should match '{p}'")),
                    Ok(_) => {}
                    Err(_) => invalid(errs, format!("has an invalid pattern '{p}'")),
                }
            }
        }
        Value::Array(items) => {
            if let Some(min) = count(schema, "minItems")
                && items.len() < min
            {
                invalid(errs, format!("should have at least {min} items"));
            }
            if let Some(max) = count(schema, "maxItems")
                && items.len() > max
            {
                errs.push(FieldError {
                    reason: "FieldValueTooMany",
                    field: path.to_string(),
                    message: format!("Too many: {}: must have at most {max} items", items.len()),
                });
            }
            if exclusive(schema, "uniqueItems")
                && items
                    .iter()
                    .enumerate()
                    .any(|(i, a)| items[..i].contains(a))
            {
                invalid(errs, "shouldn't contain duplicates".into());
            }
            if let Some(s) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    check(item, s, &format!("{path}[{i}]"), errs, false);
                }
            }
        }
        Value::Object(map) => check_object(map, schema, path, errs, root),
        _ => {}
    }
}

fn check_object(
    map: &Map<String, Value>,
    schema: &Value,
    path: &str,
    errs: &mut Vec<FieldError>,
    root: bool,
) {
    let value = Value::Object(map.clone());
    if let Some(min) = count(schema, "minProperties")
        && map.len() < min
    {
        errs.push(FieldError::invalid(
            path,
            &value,
            format!("{path} in body should have at least {min} properties"),
        ));
    }
    if let Some(max) = count(schema, "maxProperties")
        && map.len() > max
    {
        errs.push(FieldError::invalid(
            path,
            &value,
            format!("{path} in body should have at most {max} properties"),
        ));
    }
    let props = schema.get("properties").and_then(Value::as_object);
    let additional = schema.get("additionalProperties").filter(|a| a.is_object());
    for (k, child) in map {
        if root && (k == "metadata" || k == "apiVersion" || k == "kind") {
            continue;
        }
        if let Some(s) = props.and_then(|p| p.get(k)).or(additional) {
            check(child, s, &join(path, k), errs, false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "replicas": {"type": "integer", "minimum": 1, "maximum": 5, "default": 1},
            "name": {"type": "string", "minLength": 2, "maxLength": 4, "pattern": "^[a-z]+$"},
            "tags": {"type": "array", "maxItems": 2, "items": {"type": "object",
                     "properties": {"k": {"type": "string", "default": "x"}}}},
        }}}})
    }

    #[test]
    fn defaults_fill_missing_fields_only() {
        let hooks = CustomResourceHooks::new(schema());
        let mut obj = json!({"spec": {"tags": [{}, {"k": "y"}]}});
        hooks.default(&mut obj);
        assert_eq!(
            obj,
            json!({"spec": {"replicas": 1, "tags": [{"k": "x"}, {"k": "y"}]}})
        );
    }

    #[test]
    fn constraints_are_checked_with_kube_messages() {
        let hooks = CustomResourceHooks::new(schema());
        let ok = json!({"spec": {"replicas": 3, "name": "abc", "tags": []}});
        assert!(hooks.validate_create(&ok).is_empty());
        let bad = json!({"spec": {"replicas": 9, "name": "ABCDEF", "tags": [{}, {}, {}]}});
        let errs = hooks.validate_create(&bad);
        let messages: Vec<&str> = errs.iter().map(|e| e.message.as_str()).collect();
        assert_eq!(errs.len(), 4, "{messages:?}");
        assert!(
            messages
                .iter()
                .any(|m| m.contains("spec.replicas in body should be less than or equal to 5")),
            "{messages:?}"
        );
        assert!(
            messages
                .iter()
                .any(|m| m.contains("should match '^[a-z]+$'")),
            "{messages:?}"
        );
    }
}
