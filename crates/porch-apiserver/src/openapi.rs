//! OpenAPI v3: the `/openapi/v3` index and one document per group-version.
//!
//! kubectl's `create`/`apply`/`replace` read these before sending: a PATCH operation carrying
//! `x-kubernetes-group-version-kind` and a `fieldValidation` parameter makes kubectl leave
//! validation to the server (`?fieldValidation=Strict`); `components.schemas` serves
//! `kubectl explain`.

use serde_json::{Map, Value, json};

use crate::registry::Registry;
use crate::resource::ResourceKind;

const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/// `apis/<g>/<v>` or `api/v1`: the path key of a group-version in the index.
pub fn gv_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// Schema name of a kind: the reversed group, version and kind (`dev.kpt.porch.config.v1alpha1.Repository`).
pub fn schema_name(k: &ResourceKind) -> String {
    if k.group.is_empty() {
        return format!("io.k8s.api.core.{}.{}", k.version, k.kind);
    }
    let mut parts: Vec<&str> = k.group.split('.').collect();
    parts.reverse();
    format!("{}.{}.{}", parts.join("."), k.version, k.kind)
}

/// Every group-version served, as (group, version).
pub fn group_versions(registry: &Registry) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for r in registry.resources() {
        let gv = (r.kind.group.clone(), r.kind.version.clone());
        if !out.contains(&gv) {
            out.push(gv);
        }
    }
    out
}

/// A short, stable hash of a document (the `hash` query parameter clients cache by).
pub fn doc_hash(doc: &Value) -> String {
    // FNV-1a 64: stable across runs, no dependency.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in doc.to_string().bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016X}")
}

/// `/openapi/v3`.
pub fn index(registry: &Registry) -> Value {
    let mut paths = Map::new();
    for (g, v) in group_versions(registry) {
        let doc = document(registry, &g, &v);
        let p = gv_path(&g, &v);
        paths.insert(
            p.clone(),
            json!({"serverRelativeURL": format!("/openapi/v3/{p}?hash={}", doc_hash(&doc))}),
        );
    }
    json!({"paths": paths})
}

fn gvk(k: &ResourceKind) -> Value {
    json!({"group": k.group, "version": k.version, "kind": k.kind})
}

fn param(name: &str, description: &str) -> Value {
    json!({"name": name, "in": "query", "description": description, "schema": {"type": "string", "uniqueItems": true}})
}

fn op(k: &ResourceKind, action: &str, id: &str, body: bool, schema_ref: &str) -> Value {
    let mut params = vec![param(
        "dryRun",
        "When present, indicates that modifications should not be persisted.",
    )];
    if body {
        params.push(param("fieldManager", "fieldManager is a name associated with the actor or entity that is making these changes."));
        params.push(param("fieldValidation", "fieldValidation instructs the server on how to handle objects in the request containing unknown or duplicate fields. Valid values are: Ignore, Warn, Strict."));
    }
    let mut o = json!({
        "operationId": format!("{id}{}", k.kind),
        "parameters": params,
        "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": schema_ref}}}}},
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": gvk(k),
    });
    if body {
        let ct = if action == "patch" {
            let mut types = json!({
                "application/json-patch+json": {"schema": {"type": "object"}},
                "application/merge-patch+json": {"schema": {"type": "object"}},
                "application/apply-patch+yaml": {"schema": {"type": "object"}},
            });
            // kubectl (apply, diff) sends a strategic merge patch only where this is listed.
            if !k.custom_resource {
                types["application/strategic-merge-patch+json"] =
                    json!({"schema": {"type": "object"}});
            }
            types
        } else {
            json!({"application/json": {"schema": {"$ref": schema_ref}}})
        };
        o["requestBody"] = json!({"content": ct, "required": true});
    }
    o
}

/// The document of one group-version.
pub fn document(registry: &Registry, group: &str, version: &str) -> Value {
    let mut paths = Map::new();
    let mut schemas = Map::new();
    schemas.insert(OBJECT_META.into(), object_meta_schema());
    for r in registry.in_group_version(group, version) {
        let k = &r.kind;
        let name = schema_name(k);
        let schema_ref = format!("#/components/schemas/{name}");
        let mut schema = k.schema.clone();
        if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
            props.insert("metadata".into(), json!({"allOf": [{"$ref": format!("#/components/schemas/{OBJECT_META}")}], "default": {}}));
        }
        schema["x-kubernetes-group-version-kind"] = json!([gvk(k)]);
        schemas.insert(name, schema);

        let base = format!("/{}", gv_path(group, version));
        let collection = if k.namespaced {
            format!("{base}/namespaces/{{namespace}}/{}", k.plural)
        } else {
            format!("{base}/{}", k.plural)
        };
        let item = format!("{collection}/{{name}}");
        let path_params = |with_name: bool| {
            let mut ps = Vec::new();
            if with_name {
                ps.push(json!({"name": "name", "in": "path", "required": true, "schema": {"type": "string", "uniqueItems": true}}));
            }
            if k.namespaced {
                ps.push(json!({"name": "namespace", "in": "path", "required": true, "schema": {"type": "string", "uniqueItems": true}}));
            }
            Value::Array(ps)
        };
        paths.insert(
            collection.clone(),
            json!({
                "get": op(k, "list", "list", false, &schema_ref),
                "post": op(k, "post", "create", true, &schema_ref),
                "parameters": path_params(false),
            }),
        );
        paths.insert(
            item.clone(),
            json!({
                "get": op(k, "get", "read", false, &schema_ref),
                "put": op(k, "put", "replace", true, &schema_ref),
                "patch": op(k, "patch", "patch", true, &schema_ref),
                "delete": op(k, "delete", "delete", false, &schema_ref),
                "parameters": path_params(true),
            }),
        );
        if k.status_subresource {
            paths.insert(
                format!("{item}/status"),
                json!({
                    "get": op(k, "get", "readStatus", false, &schema_ref),
                    "put": op(k, "put", "replaceStatus", true, &schema_ref),
                    "patch": op(k, "patch", "patchStatus", true, &schema_ref),
                    "parameters": path_params(true),
                }),
            );
        }
    }
    json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.32.0"},
        "paths": paths,
        "components": {"schemas": schemas},
    })
}

fn object_meta_schema() -> Value {
    let s = json!({"type": "string"});
    let smap = json!({"type": "object", "additionalProperties": {"type": "string", "default": ""}});
    json!({
        "description": "ObjectMeta is metadata that all persisted resources must have, which includes all objects users must create.",
        "type": "object",
        "properties": {
            "annotations": smap, "labels": smap,
            "creationTimestamp": {"type": "string", "format": "date-time"},
            "deletionTimestamp": {"type": "string", "format": "date-time"},
            "deletionGracePeriodSeconds": {"type": "integer", "format": "int64"},
            "finalizers": {"type": "array", "items": s},
            "generateName": s, "generation": {"type": "integer", "format": "int64"},
            "managedFields": {"type": "array", "items": {"type": "object"}},
            "name": s, "namespace": s,
            "ownerReferences": {"type": "array", "items": {"type": "object"}},
            "resourceVersion": s, "selfLink": s, "uid": s,
        },
    })
}
