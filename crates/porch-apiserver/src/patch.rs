//! PATCH bodies: JSON merge patch (RFC 7396), JSON patch (RFC 6902), strategic merge patch (as
//! a merge patch after removing its `$` directives). Server-side apply bodies are parsed here and
//! applied by `crate::apply` (field ownership, pruning, conflicts).

use serde_json::{Map, Value};

use crate::error::ApiError;

/// The patch flavours, from the request's Content-Type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    Merge,
    Json,
    Strategic,
    Apply,
}

impl PatchType {
    pub fn from_content_type(ct: &str) -> Result<Self, ApiError> {
        match crate::rest::media_type(ct).as_str() {
            "application/merge-patch+json" => Ok(PatchType::Merge),
            "application/json-patch+json" => Ok(PatchType::Json),
            "application/strategic-merge-patch+json" => Ok(PatchType::Strategic),
            "application/apply-patch+yaml" | "application/apply-patch+json" => Ok(PatchType::Apply),
            // kube-apiserver's words (negotiation.NewUnsupportedMediaTypeError).
            _ => Err(ApiError::unsupported_media_type(
                "the body of the request was in an unknown format - accepted media types include: \
                 application/json-patch+json, application/merge-patch+json, \
                 application/apply-patch+yaml, application/strategic-merge-patch+json",
            )),
        }
    }
}

/// Parses a patch body (JSON, or YAML for apply).
pub fn parse_body(kind: PatchType, body: &[u8]) -> Result<Value, ApiError> {
    let v: Value = if kind == PatchType::Apply {
        serde_yaml::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?
    } else {
        serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?
    };
    Ok(v)
}

/// Applies `patch` to `target` in place.
pub fn apply(kind: PatchType, target: &mut Value, patch: &Value) -> Result<(), ApiError> {
    match kind {
        PatchType::Merge | PatchType::Apply => {
            json_patch::merge(target, patch);
            Ok(())
        }
        PatchType::Strategic => {
            let cleaned = strip_directives(patch);
            json_patch::merge(target, &cleaned);
            Ok(())
        }
        PatchType::Json => {
            let p: json_patch::Patch = serde_json::from_value(patch.clone())
                .map_err(|e| ApiError::bad_request(format!("invalid JSON patch: {e}")))?;
            json_patch::patch(target, &p).map_err(|e| {
                ApiError::new(
                    porch_core::ErrorKind::Invalid,
                    format!("the JSON patch failed: {e}"),
                )
            })
        }
    }
}

/// Turns a strategic merge patch into a merge patch: drops `$setElementOrder/…`, `$retainKeys`
/// and similar directives, and `{"$patch": "delete"}` maps become deletions.
fn strip_directives(v: &Value) -> Value {
    match v {
        Value::Object(map) => {
            if map.get("$patch").and_then(Value::as_str) == Some("delete") {
                return Value::Null;
            }
            let mut out = Map::new();
            for (k, val) in map {
                if k.starts_with('$') {
                    continue;
                }
                out.insert(k.clone(), strip_directives(val));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .filter(|i| !i.as_object().is_some_and(|m| m.contains_key("$patch")))
                .map(strip_directives)
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merge_and_json_patch() {
        let mut o = json!({"a": 1, "b": {"c": 2}});
        apply(PatchType::Merge, &mut o, &json!({"b": {"c": null, "d": 3}})).expect("merges");
        assert_eq!(o, json!({"a": 1, "b": {"d": 3}}));
        apply(
            PatchType::Json,
            &mut o,
            &json!([{"op": "replace", "path": "/a", "value": 5}]),
        )
        .expect("patches");
        assert_eq!(o["a"], 5);
        assert!(
            apply(
                PatchType::Json,
                &mut o,
                &json!([{"op": "remove", "path": "/zz"}])
            )
            .is_err()
        );
    }

    #[test]
    fn strategic_directives_are_dropped() {
        let mut o = json!({"metadata": {"labels": {"a": "1"}}});
        let p = json!({"$setElementOrder/x": [], "metadata": {"labels": {"b": "2"}}});
        apply(PatchType::Strategic, &mut o, &p).expect("merges");
        assert_eq!(o, json!({"metadata": {"labels": {"a": "1", "b": "2"}}}));
    }
}
