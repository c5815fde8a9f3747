//! `porch.kpt.dev/v1alpha1`: `packagerevisions` (with `approval`), `packagerevisionresources`
//! and `packages`, served from the engine (spec §2-4, §7).
//!
//! This module only translates: names, columns, validation that Porch does in its REST
//! strategy, JSON conversion and watch. Every rule about revisions lives in porch-engine.

mod access;
mod backend;
mod cache;
mod convert;
mod events;
mod legacy;
mod managed;
mod packages;
mod paging;
mod prr;
mod record;
mod select;
#[cfg(test)]
mod testing;

use std::sync::Arc;

use porch_apiserver::{Column, FieldError, Registry, ResourceHooks, ResourceKind};
use porch_core::store::MetadataStore;
use porch_engine::{Engine, LATEST_REVISION_LABEL};
use serde_json::{Value, json};

use convert::{GROUP, str_at};

const VERSION: &str = "v1alpha1";

/// Registers the three resources, backed by `engine` (`store` keeps the revisions'
/// managedFields); lifecycle changes and render failures are reported to `sink`.
pub fn register(
    reg: &mut Registry,
    engine: &Engine,
    store: &Arc<dyn MetadataStore>,
    sink: Arc<dyn crate::events::EventSink>,
) {
    let log = events::EventLog::start(engine);
    reg.add(
        revisions_kind(),
        Arc::new(backend::RevisionBackend {
            engine: engine.clone(),
            log: log.clone(),
            cache: cache::JsonCache::default(),
            events: sink.clone(),
            managed: managed::ManagedFields::new(store.clone()),
        }),
    );
    reg.add(
        resources_kind(),
        Arc::new(prr::ResourcesBackend {
            engine: engine.clone(),
            log: log.clone(),
            events: sink,
        }),
    );
    reg.add(
        packages_kind(),
        Arc::new(packages::PackagesBackend {
            engine: engine.clone(),
            log,
        }),
    );
}

fn revision_cell(o: &Value) -> Value {
    json!(
        o.pointer("/spec/revision")
            .and_then(Value::as_i64)
            .unwrap_or(0)
    )
}

/// A kind of the group with the schema derived from its typed wire struct: `kubectl explain`
/// reads it from `/openapi/v3`, and field validation finds unknown fields with it.
fn porch_kind(kind: &str, plural: &str, schema: Value) -> ResourceKind {
    let mut k = ResourceKind::new(GROUP, VERSION, kind, plural);
    k.schema = schema;
    k.age_column = false;
    k.conflict_prefix = convert::PORCH_PREFIX;
    k
}

fn revisions_kind() -> ResourceKind {
    let mut k = porch_kind(
        "PackageRevision",
        "packagerevisions",
        porch_api::aggregated_schema::<porch_api::PackageRevision>(),
    );
    k.columns = vec![
        Column::path("Package", "string", ".spec.packageName"),
        Column::path("WorkspaceName", "string", ".spec.workspaceName"),
        Column::computed("Revision", "integer", revision_cell),
        Column::computed("Latest", "boolean", |o| {
            json!(
                o.pointer("/metadata/labels")
                    .and_then(|l| l.get(LATEST_REVISION_LABEL))
                    .and_then(Value::as_str)
                    == Some("true")
            )
        }),
        Column::path("Lifecycle", "string", ".spec.lifecycle"),
        Column::path("Repository", "string", ".spec.repository"),
    ];
    k.field_selectors = select::field_paths();
    k.subresources = vec!["approval".into()];
    k.hooks = Arc::new(RevisionHooks);
    k
}

fn resources_kind() -> ResourceKind {
    let mut k = porch_kind(
        "PackageRevisionResources",
        "packagerevisionresources",
        porch_api::aggregated_schema::<porch_api::PackageRevisionResources>(),
    );
    k.columns = vec![
        Column::path("Package", "string", ".spec.packageName"),
        Column::path("WorkspaceName", "string", ".spec.workspaceName"),
        Column::computed("Revision", "integer", revision_cell),
        Column::path("Repository", "string", ".spec.repository"),
        Column::computed("Files", "integer", |o| {
            json!(
                o.pointer("/spec/resources")
                    .and_then(Value::as_object)
                    .map_or(0, |m| m.len())
            )
        }),
    ];
    k.field_selectors = select::field_paths();
    k.verbs = ["get", "list", "patch", "update"]
        .map(String::from)
        .to_vec();
    k
}

fn packages_kind() -> ResourceKind {
    let mut k = porch_kind(
        "PorchPackage",
        "packages",
        porch_api::aggregated_schema::<porch_api::PorchPackage>(),
    );
    k.singular = "package".into();
    k.columns = vec![
        Column::path("Package", "string", ".spec.packageName"),
        Column::path("Repository", "string", ".spec.repository"),
        Column::path("Latest Revision", "integer", ".status.latestRevision"),
    ];
    k.field_selectors = vec!["spec.packageName".into(), "spec.repository".into()];
    k.verbs = ["get", "list"].map(String::from).to_vec();
    k
}

/// The fields that name a revision never change (kube-apiserver's `field is immutable`).
fn immutable_identity(new: &Value, old: &Value) -> Vec<FieldError> {
    [
        ("/spec/packageName", "spec.packageName"),
        ("/spec/repository", "spec.repository"),
        ("/spec/workspaceName", "spec.workspaceName"),
    ]
    .into_iter()
    .filter(|(path, _)| str_at(new, path) != str_at(old, path))
    .map(|(path, field)| {
        FieldError::invalid(field, &json!(str_at(new, path)), "field is immutable")
    })
    .collect()
}

/// What Porch's REST strategy checks before the engine sees a request.
struct RevisionHooks;

fn latest_label(o: &Value) -> Option<&Value> {
    o.pointer("/metadata/labels")
        .and_then(|l| l.get(LATEST_REVISION_LABEL))
}

/// `spec` without the parts an update of a published revision may change.
fn fixed_spec(o: &Value) -> Value {
    let mut spec = o.get("spec").cloned().unwrap_or(Value::Null);
    if let Some(m) = spec.as_object_mut() {
        m.remove("lifecycle");
        m.remove("tasks");
    }
    spec
}

impl ResourceHooks for RevisionHooks {
    fn default(&self, obj: &mut Value) {
        // The name is derived from the spec (Porch ignores a name sent on create).
        if str_at(obj, "/metadata/name").is_empty() {
            let name = format!(
                "{}.{}.{}",
                str_at(obj, "/spec/repository"),
                str_at(obj, "/spec/packageName").replace('/', "."),
                str_at(obj, "/spec/workspaceName")
            );
            if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
                m.insert("name".into(), name.into());
            }
        }
    }

    fn validate_create(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        if str_at(obj, "/spec/repository").is_empty() {
            errs.push(FieldError::required("spec.repositoryName"));
        }
        if str_at(obj, "/spec/packageName").is_empty() {
            errs.push(FieldError::required("spec.packageName"));
        }
        if str_at(obj, "/spec/workspaceName").is_empty() {
            errs.push(FieldError::required("spec.workspaceName"));
        }
        if latest_label(obj).is_some() {
            errs.push(FieldError::forbidden(
                format!("metadata.labels[{LATEST_REVISION_LABEL}]"),
                "label is managed by porch and cannot be set by users",
            ));
        }
        let lifecycle = str_at(obj, "/spec/lifecycle");
        if !lifecycle.is_empty() && lifecycle != "Draft" {
            errs.push(FieldError::invalid(
                "spec.lifecycle",
                &json!(lifecycle),
                "value can be only created as Draft",
            ));
        }
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = immutable_identity(new, old);
        if latest_label(new) != latest_label(old) && latest_label(new).is_some() {
            errs.push(FieldError::forbidden(
                format!("metadata.labels[{LATEST_REVISION_LABEL}]"),
                "label is managed by porch and cannot be set by users",
            ));
        }
        let old_lifecycle = str_at(old, "/spec/lifecycle");
        if matches!(old_lifecycle, "Published" | "DeletionProposed")
            && fixed_spec(new) != fixed_spec(old)
        {
            errs.push(FieldError::invalid(
                "spec",
                &json!(old_lifecycle),
                "spec can only update package with lifecycle value one of Draft,Proposed",
            ));
        }
        errs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn revision() -> Value {
        json!({"metadata": {"name": "r.p.ws"},
               "spec": {"packageName": "p", "repository": "r", "workspaceName": "ws", "lifecycle": "Draft"}})
    }

    #[test]
    fn identity_fields_are_immutable() {
        let old = revision();
        for (key, field) in [
            ("packageName", "spec.packageName"),
            ("repository", "spec.repository"),
            ("workspaceName", "spec.workspaceName"),
        ] {
            let mut new = old.clone();
            new["spec"][key] = json!("other");
            let errs = RevisionHooks.validate_update(&new, &old);
            assert_eq!(
                errs,
                vec![FieldError {
                    reason: "FieldValueInvalid",
                    field: field.into(),
                    message: "Invalid value: \"other\": field is immutable".into(),
                }]
            );
        }
        let mut labelled = old.clone();
        labelled["metadata"]["labels"] = json!({"a": "b"});
        assert!(RevisionHooks.validate_update(&labelled, &old).is_empty());
    }
}
