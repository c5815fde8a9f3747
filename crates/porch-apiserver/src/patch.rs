//! PATCH bodies: JSON patch (RFC 6902) and JSON merge patch (RFC 7396) applied as
//! kube-apiserver applies them, strategic merge patch (as a merge patch after removing its `$`
//! directives). Server-side apply bodies are parsed here and applied by `crate::apply` (field
//! ownership, pruning, conflicts).
//!
//! kube-apiserver (`handlers/patch.go`, `jsonPatcher.applyJSPatch`) applies a JSON patch or a
//! merge patch to the JSON encoding of the stored object with gopkg.in/evanphx/json-patch.v4
//! (v4.12.0), after decoding the body strictly (fieldValidation `Warn`, the default, and
//! `Strict`). What clients see of it is followed here, RFC or not:
//!
//! - a body that is not JSON, or of the wrong shape (a JSON patch that is not an array of
//!   objects whose `op`/`path`/`from` are strings, a merge patch that is not an object), is 400
//!   `error decoding patch: <Go's encoding/json error>`; a merge patch `null` is 400
//!   `Invalid JSON Patch`; a JSON patch `null` changes nothing; more than 10,000 operations is
//!   413;
//! - an operation that does not apply is 422 with kube-apiserver's one message for all of them
//!   ([`REJECTED`]); kube-apiserver keeps the library's own words to itself, ours gives them as
//!   the Status's cause (`JSON patch failed: …`);
//! - the library's rules: array indices as Go's `strconv.Atoi` reads them (`+1`, `01`) and
//!   negative ones counted from the end; a path's first segment is not read (`a/b` is `/b`), `""`
//!   is the whole document for `replace` and `test` only; `replace` of a missing member adds
//!   it; `copy` or `test` of a missing member reads null; a missing `value` is null, except
//!   that `test` then fails on anything but null; `test` compares numbers and strings by their
//!   text (`1` is not `1.0`, `"<"` is not the stored `"\u003c"`: Go escapes `<`, `>`, `&` when
//!   it encodes the object) and an added `null` differs from a stored one; copies add up to at
//!   most 3 MiB (`JSONPatchMaxCopyBytes`);
//! - the bodies that make the library panic (`test` of an array holding a null, or of the whole
//!   document without `value`; `replace` of the whole document without `value`; writing into
//!   the copy of an added `null`) are 500, as kube-apiserver's panic filter answers;
//! - a merge patch removes nulls from what it adds, also from objects inside added arrays when
//!   the member it replaces was not an object.
//!
//! Different: fieldValidation `Ignore` (which skips the strict decode on kube-apiserver) is
//! treated as `Warn`; unknown and duplicate fields in a body give no warning (and `Strict`
//! does not refuse them); bodies nested deeper than 128 levels are refused (Go: 10,000); the
//! 500 of a panic is a Status (kube-apiserver's is plain text); where Go's random map order
//! decides (a `test` that finds both a member that differs and one that panics), ours takes
//! the object's order.

use std::ops::Deref;

use serde_json::{Map, Value};

use crate::error::{ApiError, Details, FieldError};

/// kube-apiserver's `maxJSONPatchOperations`.
const MAX_OPERATIONS: usize = 10_000;
/// `jsonpatch.AccumulatedCopySizeLimit` as the generic API server sets it
/// (`JSONPatchMaxCopyBytes`, 3 MiB).
const MAX_COPY_BYTES: usize = 3 * 1024 * 1024;
/// kube-apiserver's 422 for every JSON patch that does not apply: it builds the Status with
/// `NewGenericServerResponse`, which keeps none of the library's own words.
const REJECTED: &str = "the server rejected our request due to an error in our request";
/// kube-apiserver's answer (`WithPanicRecovery`) to the bodies that make the library panic.
const PANICKED: &str = "This request caused apiserver to panic. Look in the logs for details.";
/// How deep a JSON or merge patch body may nest (stored objects are read back with
/// serde_json's limit of 128).
const MAX_DEPTH: usize = 128;

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

/// A PATCH body as read. JSON and merge patches are applied from its bytes, and their errors
/// come when they are applied (after the object was read, as on kube-apiserver); the handler
/// reads the JSON value for its own checks (`Null` when a JSON or merge patch is not JSON).
#[derive(Debug, Clone)]
pub struct PatchBody {
    bytes: Vec<u8>,
    value: Value,
}

impl Deref for PatchBody {
    type Target = Value;
    fn deref(&self) -> &Value {
        &self.value
    }
}

impl From<PatchBody> for Value {
    fn from(body: PatchBody) -> Value {
        body.value
    }
}

/// Reads a patch body (JSON, or YAML for apply).
pub fn parse_body(kind: PatchType, body: &[u8]) -> Result<PatchBody, ApiError> {
    let value = match kind {
        PatchType::Apply => serde_yaml::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?,
        PatchType::Strategic => serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?,
        PatchType::Json | PatchType::Merge => serde_json::from_slice(body).unwrap_or(Value::Null),
    };
    Ok(PatchBody {
        bytes: body.to_vec(),
        value,
    })
}

/// Applies `patch` to `target` in place.
pub fn apply(kind: PatchType, target: &mut Value, patch: &PatchBody) -> Result<(), ApiError> {
    match kind {
        PatchType::Json => *target = apply_json_patch(target, &patch.bytes)?,
        PatchType::Merge => *target = apply_merge_patch(target, &patch.bytes)?,
        PatchType::Apply => json_patch::merge(target, &patch.value),
        PatchType::Strategic => json_patch::merge(target, &strip_directives(&patch.value)),
    }
    Ok(())
}

/// A JSON patch body (`application/json-patch+json`) applied to `target` as kube-apiserver
/// applies it (see the module's notes); what the handler answers when it does not apply.
pub fn apply_json_patch(target: &Value, body: &[u8]) -> Result<Value, ApiError> {
    let ops = gojson::parse(body)
        .and_then(|j| gojson::check_json_patch(&j).map(|()| j))
        .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
    let ops: &[gojson::J] = match &ops {
        gojson::J::Arr(items) => items,
        _ => &[],
    };
    if ops.len() > MAX_OPERATIONS {
        return Err(ApiError::too_large(format!(
            "Request entity too large: The allowed maximum operations in a JSON patch is \
             {MAX_OPERATIONS}, got {}",
            ops.len()
        )));
    }
    evanphx::apply(target, ops).map_err(|failure| match failure {
        // kube-apiserver's Status has no causes; ours names the library's reason in one.
        evanphx::Failure::Error(detail) => {
            let mut e = ApiError::new(porch_core::ErrorKind::Invalid, REJECTED);
            e.details = Some(Box::new(Details {
                causes: vec![FieldError {
                    reason: "FieldValueInvalid",
                    field: String::new(),
                    message: format!("JSON patch failed: {detail}"),
                }],
                ..Details::default()
            }));
            e
        }
        evanphx::Failure::Panic(what) => {
            tracing::debug!(what, "JSON patch that makes kube-apiserver's library panic");
            ApiError::internal(PANICKED)
        }
    })
}

/// A merge patch body (`application/merge-patch+json`) applied to `target` as kube-apiserver
/// applies it (see the module's notes).
pub fn apply_merge_patch(target: &Value, body: &[u8]) -> Result<Value, ApiError> {
    let decoded = gojson::parse(body)
        .and_then(|j| gojson::check_merge_patch(&j).map(|()| j))
        .and_then(|j| j.to_value())
        .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
    let Value::Object(patch) = decoded else {
        return Err(ApiError::bad_request("Invalid JSON Patch"));
    };
    match target {
        Value::Object(doc) => {
            let mut doc = doc.clone();
            merge_members(&mut doc, patch);
            Ok(Value::Object(doc))
        }
        Value::Null => Err(ApiError::internal("Invalid JSON Document")),
        // Not an object: the library answers the patch.
        _ => Ok(prune_nulls(Value::Object(patch))),
    }
}

/// evanphx's `mergeDocs`: a null deletes; a member that was missing or null takes the patch's
/// value without its nulls; an object merges into an object.
fn merge_members(doc: &mut Map<String, Value>, patch: Map<String, Value>) {
    for (key, value) in patch {
        if value.is_null() {
            doc.shift_remove(&key);
            continue;
        }
        match doc.get_mut(&key) {
            Some(current) if !current.is_null() => {
                let old = std::mem::take(current);
                *current = match (old, value) {
                    (Value::Object(mut old), Value::Object(value)) => {
                        merge_members(&mut old, value);
                        Value::Object(old)
                    }
                    // An object replaced by anything else: as sent, nulls and all.
                    (Value::Object(_), value) => value,
                    (_, value) => prune_nulls(value),
                };
            }
            _ => {
                doc.insert(key, prune_nulls(value));
            }
        }
    }
}

/// evanphx's `pruneNulls`: the null members of objects go, at any depth, also inside arrays;
/// the null items of arrays stay.
fn prune_nulls(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, prune_nulls(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(prune_nulls).collect()),
        other => other,
    }
}

mod gojson;

mod evanphx;

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
mod tests;
