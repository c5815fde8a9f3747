//! Config injection (upstream `injection.go`): in-package objects annotated
//! `kpt.dev/config-injection: required|optional` take the `data` (core ConfigMap) or `spec`
//! (any other kind) of the in-cluster object the first matching injector names, and the
//! Kptfile records the outcome of each as a condition (and a readiness gate when required).

use std::collections::BTreeMap;

use kpt::yaml::{Document, Node};
use porch_api::packagevariant::InjectionSelector;
use porch_core::repository::PackageFiles;
use serde_json::Value;

use super::MutationError;
use super::files::{Prr, holds_resources, parse_objects, single_object, str_at, write_back};
use super::gates::{PointCondition, set_conditions_and_gates};
use crate::objects::Objects;

const CONFIG_INJECTION: &str = "kpt.dev/config-injection";
const INJECTED_RESOURCE: &str = "kpt.dev/injected-resource";
const KPTFILE: &str = kpt::kptfile::KPTFILE;

/// Which field is copied from an in-cluster object, by its group and kind (`*`: any), first
/// match wins.
const INJECTABLE_FIELDS: [(&str, &str, &str); 2] = [("", "ConfigMap", "data"), ("*", "*", "spec")];

/// A parsed resource file: its documents and which of them are objects.
pub(crate) struct ParsedFile {
    pub docs: Vec<Document>,
    pub objects: Vec<usize>,
}

/// An in-package object to inject into, and what happened to it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct InjectionPoint {
    pub file: String,
    /// Index of the object's document in its file.
    pub doc: usize,
    pub api_version: String,
    pub kind: String,
    pub condition_type: String,
    pub required: bool,
    pub errors: Vec<String>,
    /// The in-cluster object injected, once done.
    pub injected: Option<String>,
}

/// Injects the in-cluster objects the PackageVariant selects and records the outcome in the
/// Kptfile.
pub(crate) async fn ensure_config_injection(
    pv: &porch_api::PackageVariant,
    prr: &Prr<'_>,
    files: &mut PackageFiles,
    cluster: &dyn Objects,
) -> Result<(), MutationError> {
    let mut parsed = parse_files(files).map_err(MutationError)?;
    let mut points = find_injection_points(&parsed);
    validate_injection_points(&points)?;
    let namespace = pv.metadata.namespace.as_deref().unwrap_or_default();
    let injectors = pv.spec.injectors.clone().unwrap_or_default();
    for point in &mut points {
        let Some(object) = parsed
            .get_mut(&point.file)
            .and_then(|f| f.docs.get_mut(point.doc))
        else {
            continue;
        };
        inject(point, &mut object.root, &injectors, cluster, namespace).await;
    }
    for (file, p) in &parsed {
        write_back(files, file, &p.docs);
    }
    let (mut docs, index) = single_object(files, prr, KPTFILE, "Kptfile", "")?;
    let conditions: Vec<PointCondition> = points.iter().map(condition_of).collect();
    set_conditions_and_gates(&mut docs[index].root, &conditions);
    write_back(files, KPTFILE, &docs);
    Ok(())
}

/// The resource files' objects; a file that is not KRM YAML is an error naming it.
pub(crate) fn parse_files(files: &PackageFiles) -> Result<BTreeMap<String, ParsedFile>, String> {
    let mut out = BTreeMap::new();
    for (path, bytes) in files.iter().filter(|(p, _)| holds_resources(p)) {
        let (docs, objects) = parse_objects(bytes).map_err(|e| format!("{path}: {e}"))?;
        out.insert(path.clone(), ParsedFile { docs, objects });
    }
    Ok(out)
}

/// Every object carrying the injection annotation; an annotation value other than
/// `required`/`optional` is recorded as the point's error.
pub(crate) fn find_injection_points(files: &BTreeMap<String, ParsedFile>) -> Vec<InjectionPoint> {
    let mut points = Vec::new();
    for (file, parsed) in files {
        for &doc in &parsed.objects {
            let object = &parsed.docs[doc].root;
            let Some(annotation) = object.get_path(&["metadata", "annotations", CONFIG_INJECTION])
            else {
                continue;
            };
            let value = annotation.as_str().unwrap_or_default();
            let kind = str_at(object, &["kind"]);
            let name = str_at(object, &["metadata", "name"]);
            let mut point = InjectionPoint {
                file: file.clone(),
                doc,
                api_version: str_at(object, &["apiVersion"]).to_string(),
                kind: kind.to_string(),
                condition_type: format!("config.injection.{kind}.{name}"),
                required: value == "required",
                ..InjectionPoint::default()
            };
            if value != "required" && value != "optional" {
                point.errors.push(format!(
                    "{file}: {kind}/{name} has invalid {CONFIG_INJECTION:?} annotation value of {value:?}"
                ));
            }
            points.push(point);
        }
    }
    points
}

/// Invalid annotations and condition types used twice make the whole injection fail.
pub(crate) fn validate_injection_points(points: &[InjectionPoint]) -> Result<(), MutationError> {
    let mut errors: Vec<String> = Vec::new();
    let mut seen: BTreeMap<&str, &str> = BTreeMap::new();
    for p in points {
        errors.extend(p.errors.iter().cloned());
        if let Some(first) = seen.insert(&p.condition_type, &p.file) {
            errors.push(format!(
                "duplicate injection conditionType {:?} ({first} and {})",
                p.condition_type, p.file
            ));
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(MutationError(format!(
            "errors in injection points: {}",
            errors.join(", ")
        )))
    }
}

/// `group/version` split as the KRM function SDK does (`v1` is the core group).
fn group_version(api_version: &str) -> (&str, &str) {
    api_version.split_once('/').unwrap_or(("", api_version))
}

/// Lists the in-cluster objects of the point's kind and injects the first injector's match;
/// failures are recorded on the point.
async fn inject(
    point: &mut InjectionPoint,
    object: &mut Node,
    injectors: &[InjectionSelector],
    cluster: &dyn Objects,
    namespace: &str,
) {
    if injectors.is_empty() {
        point.errors.push("no injectors defined".into());
        return;
    }
    let in_cluster =
        match list_in_cluster(cluster, namespace, &point.api_version, &point.kind).await {
            Ok(objects) => objects,
            Err(e) => {
                point.errors.push(e);
                return;
            }
        };
    if in_cluster.is_empty() {
        point.errors.push(format!(
            "no in-cluster resources of type {}.{}",
            point.api_version, point.kind
        ));
        return;
    }
    if let Some(selected) = injectors
        .iter()
        .find_map(|i| match_selector(point, i, &in_cluster))
    {
        inject_resource(point, object, selected);
    }
}

async fn list_in_cluster(
    cluster: &dyn Objects,
    namespace: &str,
    api_version: &str,
    kind: &str,
) -> Result<Vec<Value>, String> {
    let Some(resource) = cluster.resolve(api_version, kind) else {
        // controller-runtime's error for a kind the API server does not serve
        return Err(format!(
            "no matches for kind {kind:?} in version {api_version:?}"
        ));
    };
    cluster
        .list(&resource, Some(namespace), "")
        .await
        .map_err(|e| e.message)
}

fn name_of(object: &Value) -> &str {
    object["metadata"]["name"].as_str().unwrap_or_default()
}

/// The in-cluster object this injector selects for the point: its group, version and kind
/// (those set) match the in-package object and its name an in-cluster one.
fn match_selector<'a>(
    point: &InjectionPoint,
    injector: &InjectionSelector,
    in_cluster: &'a [Value],
) -> Option<&'a Value> {
    let (group, version) = group_version(&point.api_version);
    let differs = |want: &Option<String>, have: &str| want.as_deref().is_some_and(|w| w != have);
    if differs(&injector.group, group)
        || differs(&injector.version, version)
        || differs(&injector.kind, &point.kind)
    {
        return None;
    }
    in_cluster.iter().find(|u| name_of(u) == injector.name)
}

/// Copies the injectable field of `selected` into `object` and annotates it.
fn inject_resource(point: &mut InjectionPoint, object: &mut Node, selected: &Value) {
    let name = name_of(selected);
    let (group, _) = group_version(selected["apiVersion"].as_str().unwrap_or_default());
    let kind = selected["kind"].as_str().unwrap_or_default();
    let field = INJECTABLE_FIELDS
        .iter()
        .find(|(g, k, _)| (*g == "*" || *g == group) && (*k == "*" || *k == kind))
        .map_or("spec", |(_, _, f)| *f);
    let Some(value) = selected.get(field) else {
        point
            .errors
            .push(format!("field {field:?} not found in resource {name:?}"));
        return;
    };
    replace_field(object, field, value);
    object
        .ensure_mapping(&["metadata", "annotations"])
        .set_string(INJECTED_RESOURCE, name);
    point.injected = Some(name.to_string());
}

/// Sets `object.field` to `value`. A mapping already there is edited key by key, so keys
/// and comments that stay the same keep their text.
fn replace_field(object: &mut Node, field: &str, value: &Value) {
    let same =
        |n: Option<&Node>, v: &Value| n.and_then(|n| n.try_to_value().ok()).as_ref() == Some(v);
    if same(object.get(field), value) {
        return;
    }
    let current = object.get_mut(field).filter(|c| c.is_mapping());
    let (Some(current), Value::Object(wanted)) = (current, value) else {
        object.set(field, Node::from_value(value));
        return;
    };
    let gone: Vec<String> = current
        .entries()
        .iter()
        .filter_map(|(k, _)| k.as_str())
        .filter(|k| !wanted.contains_key(*k))
        .map(str::to_string)
        .collect();
    for k in gone {
        current.remove(&k);
    }
    for (k, v) in wanted {
        let existing = current.get(k);
        if same(existing, v) {
            continue;
        }
        match v {
            // keeps a quoted style; a plain scalar that reads as another type is requoted
            Value::String(s) if existing.is_some_and(|e| e.resolved_tag() == "!!str") => {
                current.set_string(k, s);
            }
            _ => {
                current.set(k, Node::from_value(v));
            }
        }
    }
}

fn condition_of(point: &InjectionPoint) -> PointCondition {
    let (status, reason, message) = match &point.injected {
        Some(name) => (
            "True",
            "ConfigInjected",
            format!("injected resource {name:?} from cluster"),
        ),
        None if point.errors.is_empty() => (
            "False",
            "NoResourceSelected",
            "no resource matched any injection selector for this injection point".to_string(),
        ),
        None => ("False", "NoResourceSelected", point.errors.join(", ")),
    };
    PointCondition {
        condition_type: point.condition_type.clone(),
        required: point.required,
        status,
        reason,
        message,
    }
}

#[cfg(test)]
mod tests;
