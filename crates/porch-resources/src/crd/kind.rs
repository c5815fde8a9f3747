//! What a CustomResourceDefinition means: its validation and defaulting (as kube-apiserver's
//! apiextensions strategy does them), the status kube-apiserver's controllers would set, and
//! the `ResourceKind` of each served version.

use std::sync::Arc;

use porch_apiserver::{Column, FieldError, ResourceHooks, ResourceKind};
use serde_json::{Value, json};

use super::schema::CustomResourceHooks;
use super::validate::validate;

pub const GROUP: &str = "apiextensions.k8s.io";
pub const PLURAL: &str = "customresourcedefinitions";

/// The `customresourcedefinitions` kind itself (cluster-scoped, v1).
pub fn crd_kind() -> ResourceKind {
    let mut k = ResourceKind::new(GROUP, "v1", "CustomResourceDefinition", PLURAL);
    k.namespaced = false;
    k.short_names = vec!["crd".into(), "crds".into()];
    k.categories = vec!["api-extensions".into()];
    k.status_subresource = true;
    k.garbage_collected = true;
    k.schema = crd_schema();
    k.columns = vec![Column::path(
        "Created At",
        "date",
        ".metadata.creationTimestamp",
    )];
    k.age_column = false;
    k.hooks = Arc::new(CrdHooks);
    k
}

fn crd_schema() -> Value {
    let s = json!({"type": "string"});
    let strings = json!({"type": "array", "items": {"type": "string"}});
    let free = json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true});
    let names = json!({"type": "object", "required": ["plural", "kind"], "properties": {
        "plural": s, "singular": s, "kind": s, "listKind": s,
        "shortNames": strings, "categories": strings}});
    let column = json!({"type": "object", "required": ["name", "type", "jsonPath"], "properties": {
        "name": s, "type": s, "format": s, "description": s, "jsonPath": s,
        "priority": {"type": "integer", "format": "int32"}}});
    let version = json!({"type": "object", "required": ["name", "served", "storage"], "properties": {
        "name": s, "served": {"type": "boolean"}, "storage": {"type": "boolean"},
        "deprecated": {"type": "boolean"}, "deprecationWarning": s,
        "schema": {"type": "object", "properties": {"openAPIV3Schema": free}},
        "subresources": free,
        "additionalPrinterColumns": {"type": "array", "items": column},
        "selectableFields": {"type": "array", "items": {"type": "object", "properties": {"jsonPath": s}}}}});
    json!({
        "description": "CustomResourceDefinition represents a resource that should be exposed on the API server.  Its name MUST be in the format <.spec.name>.<.spec.group>.",
        "type": "object",
        "required": ["spec"],
        "properties": {
            "apiVersion": s, "kind": s, "metadata": {"type": "object"},
            "spec": {"type": "object", "required": ["group", "names", "scope", "versions"], "properties": {
                "group": s, "names": names, "scope": s,
                "versions": {"type": "array", "items": version},
                "conversion": free,
                "preserveUnknownFields": {"type": "boolean"}}},
            "status": free,
        },
    })
}

pub(super) fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

pub(super) fn versions(crd: &Value) -> &[Value] {
    crd.pointer("/spec/versions")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

pub(super) fn flag(v: &Value, key: &str) -> bool {
    v.get(key).and_then(Value::as_bool) == Some(true)
}

/// The storage version's name.
pub fn storage_version(crd: &Value) -> Option<&str> {
    versions(crd)
        .iter()
        .find(|v| flag(v, "storage"))
        .and_then(|v| v.get("name"))
        .and_then(Value::as_str)
}

/// `(group, plural)` of a CRD.
pub fn group_plural(crd: &Value) -> (String, String) {
    (
        str_at(crd, "/spec/group").to_string(),
        str_at(crd, "/spec/names/plural").to_string(),
    )
}

/// Kubernetes' version priority: GA > beta > alpha, higher numbers first, then the rest by name.
fn version_priority(v: &str) -> (u8, u64, u64, String) {
    let parse = |rest: &str| -> Option<(u8, u64, u64)> {
        let (major, tail) = match rest.find(|c: char| !c.is_ascii_digit()) {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        };
        let major: u64 = major.parse().ok()?;
        if tail.is_empty() {
            return Some((3, major, 0));
        }
        for (prefix, rank) in [("beta", 2), ("alpha", 1)] {
            if let Some(n) = tail.strip_prefix(prefix)
                && let Ok(minor) = n.parse::<u64>()
            {
                return Some((rank, major, minor));
            }
        }
        None
    };
    match v.strip_prefix('v').and_then(parse) {
        Some((rank, major, minor)) => (rank, major, minor, String::new()),
        None => (0, 0, 0, v.to_string()),
    }
}

/// Served version names, most preferred first.
pub fn served_versions(crd: &Value) -> Vec<String> {
    let mut out: Vec<String> = versions(crd)
        .iter()
        .filter(|v| flag(v, "served"))
        .filter_map(|v| v.get("name").and_then(Value::as_str).map(String::from))
        .collect();
    out.sort_by(|a, b| {
        let (pa, pb) = (version_priority(a), version_priority(b));
        pb.0.cmp(&pa.0)
            .then(pb.1.cmp(&pa.1))
            .then(pb.2.cmp(&pa.2))
            .then(pa.3.cmp(&pb.3))
    });
    out
}

/// The `ResourceKind` of every served version, most preferred first.
pub fn served_kinds(crd: &Value) -> Vec<ResourceKind> {
    let (group, plural) = group_plural(crd);
    let names = accepted_names(crd);
    let namespaced = str_at(crd, "/spec/scope") != "Cluster";
    let mut out = Vec::new();
    for name in served_versions(crd) {
        let Some(v) = versions(crd)
            .iter()
            .find(|v| v.get("name").and_then(Value::as_str) == Some(&name))
        else {
            continue;
        };
        let kind_name = str_at(&names, "/kind");
        let mut k = ResourceKind::new(&group, &name, kind_name, &plural);
        k.singular = str_at(&names, "/singular").to_string();
        k.short_names = string_list(names.get("shortNames"));
        k.categories = string_list(names.get("categories"));
        k.namespaced = namespaced;
        k.custom_resource = true;
        k.garbage_collected = true;
        k.status_subresource = v.pointer("/subresources/status").is_some();
        k.schema = v
            .pointer("/schema/openAPIV3Schema")
            .cloned()
            .unwrap_or_else(
                || json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}),
            );
        if let Some(props) = k
            .schema
            .get_mut("properties")
            .and_then(Value::as_object_mut)
        {
            props
                .entry("apiVersion")
                .or_insert_with(|| json!({"type": "string"}));
            props
                .entry("kind")
                .or_insert_with(|| json!({"type": "string"}));
            props
                .entry("metadata")
                .or_insert_with(|| json!({"type": "object"}));
        }
        k.field_selectors = v
            .get("selectableFields")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|f| f.get("jsonPath").and_then(Value::as_str))
            .map(|p| p.trim_start_matches('.').to_string())
            .collect();
        let (columns, age) = printer_columns(v);
        k.columns = columns;
        k.age_column = age;
        k.hooks = Arc::new(CustomResourceHooks::new(k.schema.clone()));
        out.push(k);
    }
    out
}

fn string_list(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

/// Table columns of a version. Without printer columns kube-apiserver shows Name and Age. A
/// trailing `date` column on `.metadata.creationTimestamp` (the usual "Age") is served as the
/// built-in Age column, computed at each request as kube-apiserver computes `date` cells.
fn printer_columns(version: &Value) -> (Vec<Column>, bool) {
    let Some(defs) = version
        .get("additionalPrinterColumns")
        .and_then(Value::as_array)
        .filter(|a| !a.is_empty())
    else {
        return (Vec::new(), true);
    };
    let mut columns = Vec::new();
    let mut age = false;
    for (i, d) in defs.iter().enumerate() {
        let path = str_at(d, "/jsonPath");
        let type_ = str_at(d, "/type");
        if i + 1 == defs.len()
            && type_ == "date"
            && path == ".metadata.creationTimestamp"
            && str_at(d, "/name") == "Age"
        {
            age = true;
            continue;
        }
        let mut c = Column::path(str_at(d, "/name"), type_, path)
            .priority(d.get("priority").and_then(Value::as_i64).unwrap_or(0) as i32)
            .description(str_at(d, "/description"));
        c.format = str_at(d, "/format").to_string();
        columns.push(c);
    }
    (columns, age)
}

/// `spec.names` with kube-apiserver's defaults (singular, listKind).
fn accepted_names(crd: &Value) -> Value {
    let mut names = crd
        .pointer("/spec/names")
        .cloned()
        .unwrap_or_else(|| json!({}));
    let kind = str_at(&names, "/kind").to_string();
    if let Some(m) = names.as_object_mut() {
        if m.get("singular")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            m.insert("singular".into(), kind.to_lowercase().into());
        }
        if m.get("listKind")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            m.insert("listKind".into(), format!("{kind}List").into());
        }
    }
    names
}

/// Validation and defaulting of CustomResourceDefinitions; the status is what the
/// establishing and naming controllers of kube-apiserver set once the names are served.
struct CrdHooks;

fn condition(old: &Value, type_: &str, reason: &str, message: &str) -> Value {
    let previous = old
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|cs| {
            cs.iter().find(|c| {
                c.get("type").and_then(Value::as_str) == Some(type_)
                    && c.get("status").and_then(Value::as_str) == Some("True")
            })
        })
        .and_then(|c| c.get("lastTransitionTime"))
        .cloned();
    json!({
        "type": type_, "status": "True", "reason": reason, "message": message,
        "lastTransitionTime": previous.unwrap_or_else(|| porch_apiserver::now_rfc3339().into()),
    })
}

impl ResourceHooks for CrdHooks {
    fn default(&self, obj: &mut Value) {
        let names = accepted_names(obj);
        if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
            spec.insert("names".into(), names.clone());
            let conversion = spec
                .entry("conversion")
                .or_insert_with(|| json!({"strategy": "None"}));
            if let Some(c) = conversion.as_object_mut() {
                c.entry("strategy").or_insert_with(|| "None".into());
            }
        }
        let mut stored = string_list(obj.pointer("/status/storedVersions"));
        if let Some(v) = storage_version(obj)
            && !stored.iter().any(|s| s == v)
        {
            stored.push(v.to_string());
        }
        let status = json!({
            "conditions": [
                condition(obj, "NamesAccepted", "NoConflicts", "no conflicts found"),
                condition(obj, "Established", "InitialNamesAccepted", "the initial names have been accepted"),
            ],
            "acceptedNames": names,
            "storedVersions": stored,
        });
        if let Some(m) = obj.as_object_mut() {
            m.insert("status".into(), status);
        }
    }

    fn validate_create(&self, obj: &Value) -> Vec<FieldError> {
        validate(obj)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = validate(new);
        if str_at(new, "/spec/scope") != str_at(old, "/spec/scope") {
            errs.push(FieldError::immutable("spec.scope"));
        }
        errs
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    pub(in crate::crd) fn widget_crd() -> Value {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {
                "group": "example.com", "scope": "Namespaced",
                "names": {"plural": "widgets", "kind": "Widget", "shortNames": ["wd"]},
                "versions": [
                    {"name": "v1alpha1", "served": true, "storage": false,
                     "schema": {"openAPIV3Schema": {"type": "object"}}},
                    {"name": "v1", "served": true, "storage": true,
                     "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                         "spec": {"type": "object", "properties": {"size": {"type": "integer"}}}}}},
                     "subresources": {"status": {}},
                     "additionalPrinterColumns": [
                         {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
                         {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}]},
                ],
            },
        })
    }

    #[test]
    fn a_valid_crd_is_defaulted_and_established() {
        let mut crd = widget_crd();
        assert!(validate(&crd).is_empty(), "{:?}", validate(&crd));
        CrdHooks.default(&mut crd);
        assert_eq!(crd["spec"]["names"]["singular"], "widget");
        assert_eq!(crd["spec"]["names"]["listKind"], "WidgetList");
        assert_eq!(crd["spec"]["conversion"]["strategy"], "None");
        assert_eq!(crd["status"]["acceptedNames"]["kind"], "Widget");
        assert_eq!(crd["status"]["storedVersions"], json!(["v1"]));
        let types: Vec<&str> = crd["status"]["conditions"]
            .as_array()
            .expect("conditions")
            .iter()
            .map(|c| c["type"].as_str().expect("type"))
            .collect();
        assert_eq!(types, ["NamesAccepted", "Established"]);
    }

    #[test]
    fn served_kinds_follow_the_versions() {
        let mut crd = widget_crd();
        CrdHooks.default(&mut crd);
        let kinds = served_kinds(&crd);
        let names: Vec<&str> = kinds.iter().map(|k| k.version.as_str()).collect();
        assert_eq!(names, ["v1", "v1alpha1"], "preferred version first");
        let v1 = &kinds[0];
        assert!(v1.namespaced && v1.custom_resource && v1.status_subresource);
        assert_eq!(v1.short_names, ["wd"]);
        assert_eq!(v1.columns.len(), 1);
        assert!(
            v1.age_column,
            "the trailing Age date column is the built-in one"
        );
        assert!(v1.schema.pointer("/properties/metadata").is_some());
        assert!(!kinds[1].status_subresource);
    }

    #[test]
    fn version_priority_orders_like_kubernetes() {
        let mut crd = widget_crd();
        crd["spec"]["versions"] = json!([
            {"name": "v1beta1", "served": true, "storage": false},
            {"name": "foo", "served": true, "storage": false},
            {"name": "v2", "served": true, "storage": true},
            {"name": "v1alpha2", "served": true, "storage": false},
            {"name": "v3", "served": false, "storage": false},
        ]);
        assert_eq!(served_versions(&crd), ["v2", "v1beta1", "v1alpha2", "foo"]);
    }
}
