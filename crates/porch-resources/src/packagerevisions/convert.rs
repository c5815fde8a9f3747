//! Engine values to and from the wire: `PackageRevision`, `PackageRevisionResources` and
//! `PorchPackage` JSON (spec §2-4), resourceVersions, and engine errors as `Status` errors.

use std::collections::BTreeMap;

use porch_apiserver::ApiError;
use porch_apiserver::FieldError;
use porch_core::ErrorKind;
use porch_core::revision::Task;
use porch_engine::{EngineError, PackageRevision, RenderStatus};
use serde_json::{Map, Value, json};

pub const GROUP: &str = "porch.kpt.dev";
pub const API_VERSION: &str = "porch.kpt.dev/v1alpha1";

/// The prefix Porch puts on engine failures (it answers them as 500 InternalError). We answer
/// with the status code the error kind calls for but keep the text: porchctl's golden outputs
/// and scripts match on it.
pub const PORCH_PREFIX: &str = "Internal error occurred: ";

/// Git-backed resourceVersions (commit SHAs) live above this; store counters below it.
const SHA_SPACE: u64 = 1 << 60;

/// The wire resourceVersion of an engine version: the store's counter as is; anything else
/// (a commit SHA, `<sha>.<store version>` when metadata is stored beside a git revision) as a
/// 60-bit FNV-1a hash above the counters' range. Deterministic, so every reader of one state
/// sees the same value, and it changes whenever any part of the engine version does.
pub fn wire_rv(engine_rv: &str) -> u64 {
    if let Ok(n) = engine_rv.parse::<u64>() {
        return n;
    }
    let hash = engine_rv.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    SHA_SPACE + (hash & (SHA_SPACE - 1))
}

fn map_or_skip(m: &BTreeMap<String, String>) -> Option<Value> {
    (!m.is_empty()).then(|| json!(m))
}

fn insert_opt(map: &mut Map<String, Value>, key: &str, v: Option<Value>) {
    if let Some(v) = v {
        map.insert(key.into(), v);
    }
}

/// `metadata` shared by a revision and its resources.
fn metadata(pr: &PackageRevision, with_labels: bool) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), pr.name().as_str().into());
    m.insert("namespace".into(), pr.namespace.clone().into());
    m.insert("uid".into(), pr.key.uid(&pr.namespace).to_string().into());
    m.insert(
        "resourceVersion".into(),
        wire_rv(&pr.resource_version).to_string().into(),
    );
    if let Some(t) = pr.creation_timestamp.or(pr.publish_timestamp) {
        m.insert("creationTimestamp".into(), t.to_rfc3339().into());
    }
    if with_labels {
        insert_opt(&mut m, "labels", map_or_skip(&pr.labels));
        insert_opt(&mut m, "annotations", map_or_skip(&pr.annotations));
    }
    if !pr.finalizers.is_empty() {
        m.insert("finalizers".into(), json!(pr.finalizers));
    }
    if !pr.owner_references.is_empty() {
        m.insert("ownerReferences".into(), json!(pr.owner_references));
    }
    if let Some(t) = pr.deletion_timestamp {
        m.insert("deletionTimestamp".into(), t.to_rfc3339().into());
        m.insert("deletionGracePeriodSeconds".into(), 0.into());
    }
    Value::Object(m)
}

/// A `PackageRevision` object.
pub fn revision_json(pr: &PackageRevision) -> Value {
    let mut spec = Map::new();
    spec.insert("packageName".into(), pr.key.package.as_str().into());
    spec.insert("repository".into(), pr.key.repository.as_str().into());
    spec.insert("workspaceName".into(), pr.key.workspace.as_str().into());
    let revision = pr.key.revision.get();
    if revision != 0 {
        spec.insert("revision".into(), revision.into());
    }
    spec.insert("lifecycle".into(), pr.lifecycle.as_str().into());
    if !pr.tasks.is_empty() {
        spec.insert("tasks".into(), json!(pr.tasks));
    }
    if !pr.readiness_gates.is_empty() {
        let gates: Vec<Value> = pr
            .readiness_gates
            .iter()
            .map(|g| json!({"conditionType": g}))
            .collect();
        spec.insert("readinessGates".into(), gates.into());
    }
    let mut package_metadata = Map::new();
    insert_opt(
        &mut package_metadata,
        "labels",
        map_or_skip(&pr.package_metadata.labels),
    );
    insert_opt(
        &mut package_metadata,
        "annotations",
        map_or_skip(&pr.package_metadata.annotations),
    );
    spec.insert("packageMetadata".into(), package_metadata.into());
    let mut status = Map::new();
    insert_opt(
        &mut status,
        "upstreamLock",
        pr.upstream_lock.as_ref().map(|l| json!(l)),
    );
    insert_opt(
        &mut status,
        "selfLock",
        pr.self_lock.as_ref().map(|l| json!(l)),
    );
    if pr.lifecycle.is_published() {
        insert_opt(
            &mut status,
            "publishedBy",
            pr.published_by.clone().map(Value::from),
        );
        insert_opt(
            &mut status,
            "publishTimestamp",
            pr.publish_timestamp.map(|t| t.to_rfc3339().into()),
        );
    }
    if pr.deployment {
        status.insert("deployment".into(), true.into());
    }
    if !pr.conditions.is_empty() {
        status.insert("conditions".into(), json!(pr.conditions));
    }
    json!({
        "apiVersion": API_VERSION,
        "kind": "PackageRevision",
        "metadata": metadata(pr, true),
        "spec": spec,
        "status": status,
    })
}

/// Files as the wire map. Only UTF-8 text: files of other bytes (images, archives) are left
/// out, as Porch does, rather than sent with replacement characters that a client would
/// write back; an update keeps them (the engine keeps stored files that are not UTF-8).
pub fn files_json(files: &porch_core::repository::PackageFiles) -> Value {
    let map: Map<String, Value> = files
        .iter()
        .filter_map(|(k, v)| {
            std::str::from_utf8(v)
                .ok()
                .map(|s| (k.clone(), Value::from(s)))
        })
        .collect();
    Value::Object(map)
}

/// A `PackageRevisionResources` object; `render` only in update responses.
pub fn resources_json(
    pr: &PackageRevision,
    files: &porch_core::repository::PackageFiles,
    render: Option<&RenderStatus>,
) -> Value {
    let mut spec = Map::new();
    spec.insert("packageName".into(), pr.key.package.as_str().into());
    spec.insert("workspaceName".into(), pr.key.workspace.as_str().into());
    let revision = pr.key.revision.get();
    if revision != 0 {
        spec.insert("revision".into(), revision.into());
    }
    spec.insert("repository".into(), pr.key.repository.as_str().into());
    spec.insert("resources".into(), files_json(files));
    let render_status = match render {
        Some(r) if !r.results.is_empty() || !r.error.is_empty() => json!({
            "result": result_list(r),
            "error": r.error,
        }),
        _ => json!({"error": ""}),
    };
    json!({
        "apiVersion": API_VERSION,
        "kind": "PackageRevisionResources",
        "metadata": metadata(pr, true),
        "spec": spec,
        "status": {"renderStatus": render_status},
    })
}

/// kpt's `FunctionResultList` for `status.renderStatus.result`.
fn result_list(r: &RenderStatus) -> Value {
    let items: Vec<Value> = r
        .results
        .iter()
        .map(|s| serde_json::to_value(s).unwrap_or(Value::Null))
        .collect();
    let failed = r
        .results
        .iter()
        .find_map(|s| (s.exit_code != 0).then_some(s.exit_code))
        .unwrap_or(i32::from(!r.error.is_empty()));
    json!({
        "apiVersion": "kpt.dev/v1",
        "kind": "FunctionResultList",
        "metadata": {"name": "fnresults"},
        "exitCode": failed,
        "items": items,
    })
}

/// Reads a string at a JSON pointer.
pub fn str_at<'a>(obj: &'a Value, pointer: &str) -> &'a str {
    obj.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// A string map at a JSON pointer (non-string values are skipped).
pub fn string_map(obj: &Value, pointer: &str) -> BTreeMap<String, String> {
    obj.pointer(pointer)
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_owned())))
                .collect()
        })
        .unwrap_or_default()
}

/// A typed value at a JSON pointer; `None` when absent or null.
pub fn typed_at<T: serde::de::DeserializeOwned>(
    obj: &Value,
    pointer: &str,
) -> Result<Option<T>, ApiError> {
    match obj.pointer(pointer) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => serde_json::from_value(v.clone()).map(Some).map_err(|e| {
            ApiError::bad_request(format!(
                "{}: {e}",
                pointer.trim_start_matches('/').replace('/', ".")
            ))
        }),
    }
}

/// `spec.readinessGates` condition types.
pub fn readiness_gates(obj: &Value) -> Option<Vec<String>> {
    obj.pointer("/spec/readinessGates")
        .and_then(Value::as_array)
        .map(|gates| {
            gates
                .iter()
                .filter_map(|g| g.get("conditionType").and_then(Value::as_str))
                .map(str::to_owned)
                .collect()
        })
}

/// `spec.tasks` of a request.
pub fn tasks(obj: &Value) -> Result<Vec<Task>, ApiError> {
    match obj.pointer("/spec/tasks") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(v) => serde_json::from_value(v.clone())
            .map_err(|e| ApiError::bad_request(format!("spec.tasks: {e}"))),
    }
}

/// Maps an engine error to the `Status` Porch clients expect for `name`.
pub fn api_error(e: EngineError, plural: &str, name: &str) -> ApiError {
    let kind = e.kind();
    let message = e.to_string();
    match (&e, kind) {
        (EngineError::Store(porch_core::store::StoreError::Unavailable(m)), _) => {
            ApiError::from(porch_core::store::StoreError::Unavailable(m.clone()))
        }
        (EngineError::NotFound(_), _) | (_, ErrorKind::NotFound) => {
            ApiError::new(ErrorKind::NotFound, message).with_details(name, GROUP, plural)
        }
        (EngineError::Forbidden(_), _) => {
            ApiError::new(ErrorKind::Forbidden, message).with_details(name, GROUP, plural)
        }
        (EngineError::Transition(_), _) | (EngineError::Name(_), _) => {
            let mut err = ApiError::new(
                ErrorKind::Invalid,
                format!("PackageRevision.{GROUP} \"{name}\" is invalid: {message}"),
            )
            .with_details(name, GROUP, "PackageRevision");
            // Every lifecycle refusal is about spec.lifecycle, also those whose text does not
            // say so (kubectl prints the causes).
            if let (EngineError::Transition(_), Some(d)) = (&e, err.details.as_mut()) {
                d.causes = vec![porch_apiserver::FieldError {
                    reason: "FieldValueInvalid",
                    field: "spec.lifecycle".into(),
                    message: message
                        .strip_prefix("spec.lifecycle: ")
                        .unwrap_or(&message)
                        .to_owned(),
                }];
            }
            err
        }
        // The pipeline is the user's content: 422, Porch's message (clients match on it)
        // and the failure as the cause kubectl prints.
        (EngineError::Render { .. }, _) => {
            let mut e = ApiError::new(ErrorKind::Invalid, message.clone())
                .with_details(name, GROUP, plural);
            if let Some(d) = e.details.as_mut() {
                d.causes = vec![FieldError {
                    reason: "FieldValueInvalid",
                    field: "spec.resources".into(),
                    message,
                }];
            }
            e
        }
        (EngineError::InProgress(_), _) => {
            ApiError::new(ErrorKind::Conflict, message).with_details(name, GROUP, plural)
        }
        (EngineError::Modified { .. }, _) => conflict(plural, name),
        _ => ApiError::new(kind, format!("{PORCH_PREFIX}{message}"))
            .with_details(name, GROUP, plural),
    }
}

/// 409 with Porch's optimistic-concurrency text (Porch answers it as a 500).
pub fn conflict(plural: &str, name: &str) -> ApiError {
    ApiError::new(
        ErrorKind::Conflict,
        format!(
            "{PORCH_PREFIX}Operation cannot be fulfilled on {plural}.{GROUP} \"{name}\": the object has been modified; please apply your changes to the latest version and try again"
        ),
    )
    .with_details(name, GROUP, plural)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_versions_are_stable_and_disjoint() {
        assert_eq!(wire_rv("42"), 42);
        let a = wire_rv("0123456789abcdef0123456789abcdef01234567");
        assert_eq!(a, wire_rv("0123456789abcdef0123456789abcdef01234567"));
        assert!(a >= SHA_SPACE);
        assert_ne!(a, wire_rv("1123456789abcdef0123456789abcdef01234567"));
        assert_ne!(a, wire_rv("0123456789abcdef0123456789abcdef01234567.7"));
    }

    #[test]
    fn binary_files_are_left_out_of_the_wire_map() {
        let files = porch_core::repository::PackageFiles::from([
            ("Kptfile".to_owned(), b"kind: Kptfile".to_vec()),
            ("logo.png".to_owned(), vec![0x89, b'P', b'N', b'G', 0xff]),
        ]);
        assert_eq!(files_json(&files), json!({"Kptfile": "kind: Kptfile"}));
    }

    /// A revision with every field the server can serve set.
    fn full_revision() -> PackageRevision {
        use porch_core::lifecycle::Lifecycle;
        use porch_core::names::{PackagePath, RepositoryName, Revision, WorkspaceName};
        use porch_core::revision::{GitLock, Locator, PackageRevisionKey, Timestamp};
        let lock = |r: &str| {
            Locator::git(GitLock {
                repo: "https://example.com/r.git".into(),
                directory: "p".into(),
                git_ref: r.into(),
                commit: "0123456789abcdef0123456789abcdef01234567".into(),
            })
        };
        let tasks = serde_json::from_value(json!([
            {"type": "clone", "clone": {"upstreamRef": {"type": "git", "git": {
                "repo": "https://example.com/u.git", "ref": "v1", "directory": "u", "secretRef": {"name": "s"}}}}},
            {"type": "upgrade", "upgrade": {"oldUpstreamRef": {"name": "a"}, "newUpstreamRef": {"name": "b"},
                "localPackageRevisionRef": {"name": "c"}, "strategy": "copy-merge"}},
            {"type": "init", "init": {"description": "d", "keywords": ["k"], "site": "s", "subpackage": "x"}},
            {"type": "edit", "edit": {"sourceRef": {"name": "e"}}}
        ]))
        .expect("tasks");
        PackageRevision {
            namespace: "ns".into(),
            key: PackageRevisionKey {
                repository: RepositoryName::discovered("r").expect("name"),
                package: PackagePath::new("a/p").expect("path"),
                workspace: WorkspaceName::new("w").expect("workspace"),
                revision: Revision::from_raw(2),
            },
            lifecycle: Lifecycle::DeletionProposed,
            resource_version: "7".into(),
            labels: BTreeMap::from([("kpt.dev/latest-revision".into(), "true".into())]),
            annotations: BTreeMap::from([("a".into(), "b".into())]),
            tasks,
            self_lock: Some(lock("a/p/v2")),
            upstream_lock: Some(lock("v1")),
            published_by: Some("me@example.com".into()),
            publish_timestamp: Some(Timestamp(1_661_554_055)),
            creation_timestamp: Some(Timestamp(1_661_554_000)),
            latest: true,
            origin: porch_engine::Origin::Git,
            package_metadata: porch_engine::PackageMetadata {
                labels: BTreeMap::from([("team".into(), "edge".into())]),
                annotations: BTreeMap::from([("note".into(), "x".into())]),
            },
            readiness_gates: vec!["Ready".into()],
            conditions: serde_json::from_value(
                json!([{"type": "Ready", "status": "True", "reason": "Done", "message": "ok"}]),
            )
            .expect("conditions"),
            deployment: true,
            finalizers: vec!["f".into()],
            owner_references: serde_json::from_value(json!([
                {"apiVersion": "config.porch.kpt.dev/v1alpha1", "kind": "PackageVariant", "name": "pv", "uid": "u", "controller": true}
            ]))
            .expect("owners"),
            deletion_timestamp: Some(Timestamp(1_661_554_100)),
        }
    }

    /// The typed wire structs (whose schemas `/openapi/v3` serves and strict validation
    /// checks) carry every field the server emits: decoding and re-encoding loses nothing.
    #[test]
    fn served_json_fits_the_typed_wire_structs() {
        let pr = full_revision();
        let served = revision_json(&pr);
        let typed: porch_api::PackageRevision =
            serde_json::from_value(served.clone()).expect("decodes");
        assert_eq!(serde_json::to_value(&typed).expect("encodes"), served);

        let files = porch_core::repository::PackageFiles::from([(
            "Kptfile".to_owned(),
            b"kind: Kptfile".to_vec(),
        )]);
        let render = RenderStatus {
            results: serde_json::from_value(json!([{
                "name": "check", "image": "ghcr.io/kptdev/krm-functions-catalog/kubeconform:v0.1",
                "executionError": "boom", "stderr": "bad", "exitCode": 1,
                "results": [{"message": "m", "severity": "error",
                    "resourceRef": {"apiVersion": "v1", "kind": "ConfigMap", "name": "c", "namespace": "n"},
                    "field": {"path": "data", "currentValue": "1", "proposedValue": "2"},
                    "file": {"path": "cm.yaml", "index": 1}, "tags": {"t": "v"}}],
                "errorResults": [{"message": "m2"}]
            }]))
            .expect("results"),
            error: "render failed".into(),
        };
        for served in [
            resources_json(&pr, &files, Some(&render)),
            resources_json(&pr, &files, None),
        ] {
            let typed: porch_api::PackageRevisionResources =
                serde_json::from_value(served.clone()).expect("decodes");
            assert_eq!(serde_json::to_value(&typed).expect("encodes"), served);
        }
    }

    #[test]
    fn conflict_keeps_porch_text() {
        let e = conflict("packagerevisionresources", "git.p.ws");
        assert_eq!(e.code_and_reason().0, 409);
        assert!(e.message.starts_with("Internal error occurred: Operation cannot be fulfilled on packagerevisionresources.porch.kpt.dev \"git.p.ws\""));
    }
}
