//! One reconciliation of one PackageVariantSet (upstream `Reconcile` and
//! `ensurePackageVariants`), and the collection of PackageVariants whose set is gone.

use crate::access::CREATOR_ANNOTATION;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{SystemTime, UNIX_EPOCH};

use porch_api::packagevariant::Upstream;
use porch_api::packagevariantset::PackageVariantSetSpec;
use porch_core::ErrorKind;
use serde_json::{Value, json};

use super::status::{self, Condition};
use super::targets::{self, PvContext};
use super::{
    OWNER_LABEL, PV_FINALIZER, PvsError, naming, packagerevisions_gvr, packagevariants_gvr,
    packagevariantsets_gvr, render, repositories_gvr, validate,
};
use crate::objects::Objects;

/// What a reconciliation did.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The set does not exist; the PackageVariants of vanished sets in its namespace were
    /// deleted (their names).
    Gone { orphans_deleted: Vec<String> },
    /// The set cannot make progress: the reason and message of its Stalled condition.
    Stalled { reason: String, message: String },
    /// The PackageVariants match the set.
    Reconciled(Changes),
}

/// The PackageVariants written, by name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Changes {
    pub created: Vec<String>,
    pub updated: Vec<String>,
    pub deleted: Vec<String>,
}

/// Reconciles the set `namespace/name`. Errors are failures to read the set and its inputs or
/// to write its status (worth a retry); everything else ends up in the status conditions.
pub async fn reconcile(
    objects: &dyn Objects,
    namespace: &str,
    name: &str,
) -> Result<Outcome, PvsError> {
    let Some(mut pvs) = objects
        .get(&packagevariantsets_gvr(), namespace, name)
        .await?
    else {
        let orphans_deleted = collect_orphans(objects, namespace).await?;
        return Ok(Outcome::Gone { orphans_deleted });
    };
    let prs = objects
        .list(&packagerevisions_gvr(), Some(namespace), "")
        .await?;
    let repos = objects
        .list(&repositories_gvr(), Some(namespace), "")
        .await?;

    let mut conditions: Vec<Value> = pvs
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let now = now_rfc3339();
    let outcome = converge(objects, namespace, &pvs, &prs, &repos).await;
    let changed = match &outcome {
        Outcome::Stalled { reason, message } => {
            status::stalled(&mut conditions, reason, message, &now)
        }
        Outcome::Reconciled(_) => {
            let a = status::set_condition(
                &mut conditions,
                &Condition {
                    type_: status::STALLED,
                    status: "False",
                    reason: "Valid".into(),
                    message: "all validation checks passed".into(),
                },
                &now,
            );
            let b = status::set_condition(
                &mut conditions,
                &Condition {
                    type_: status::READY,
                    status: "True",
                    reason: "Reconciled".into(),
                    message: "package variants successfully reconciled".into(),
                },
                &now,
            );
            a || b
        }
        Outcome::Gone { .. } => false,
    };
    if changed {
        match pvs.get_mut("status") {
            Some(Value::Object(st)) => {
                st.insert("conditions".into(), Value::Array(conditions));
            }
            _ => pvs["status"] = json!({"conditions": conditions}),
        }
        objects
            .update_status(&packagevariantsets_gvr(), namespace, pvs)
            .await?;
    }
    Ok(outcome)
}

/// Steps 1–4 of the module doc; never fails, a failure is a Stalled outcome.
async fn converge(
    objects: &dyn Objects,
    namespace: &str,
    pvs: &Value,
    prs: &[Value],
    repos: &[Value],
) -> Outcome {
    let stalled = |reason: &str, message: String| Outcome::Stalled {
        reason: reason.into(),
        message,
    };
    let spec: PackageVariantSetSpec =
        match serde_json::from_value(pvs.get("spec").cloned().unwrap_or_else(|| json!({}))) {
            Ok(s) => s,
            Err(e) => return stalled("ValidationError", format!("spec: {e}")),
        };
    let errs = validate::validate(&spec);
    if !errs.is_empty() {
        return stalled("ValidationError", validate::combine(&errs));
    }
    let Some(upstream) = spec.upstream.clone() else {
        return stalled(
            "ValidationError",
            "spec.upstream is a required field".into(),
        );
    };
    let upstream_pr = match find_upstream(&upstream, prs) {
        Ok(pr) => pr,
        Err(message) => return stalled("UpstreamNotFound", message),
    };
    let downstreams = match targets::unroll(objects, namespace, &spec).await {
        Ok(d) => d,
        Err(e @ PvsError::NoMatch { .. }) => return stalled("NoMatchingTargets", e.to_string()),
        Err(e) => return stalled("UnexpectedError", e.to_string()),
    };
    match ensure_package_variants(
        objects,
        namespace,
        pvs,
        &upstream,
        repos,
        upstream_pr,
        &downstreams,
    )
    .await
    {
        Ok(changes) => Outcome::Reconciled(changes),
        Err(e) => stalled("UnexpectedError", e.to_string()),
    }
}

/// The first PackageRevision of the upstream repository and package with the upstream's
/// revision or workspace name (upstream `getUpstreamPR`; an unset revision or workspace name
/// matches nothing rather than every draft).
pub fn find_upstream<'a>(upstream: &Upstream, prs: &'a [Value]) -> Result<&'a Value, String> {
    let repo = upstream.repo.as_deref().unwrap_or("");
    let package = upstream.package.as_deref().unwrap_or("");
    let revision = upstream.revision.filter(|r| *r != 0);
    let workspace = upstream.workspace_name.as_deref().filter(|w| !w.is_empty());
    prs.iter()
        .find(|pr| {
            let spec = pr.get("spec");
            let field = |k: &str| spec.and_then(|s| s.get(k));
            field("repository").and_then(Value::as_str) == Some(repo)
                && field("packageName").and_then(Value::as_str) == Some(package)
                && (revision.is_some_and(|r| field("revision").and_then(Value::as_i64) == Some(r))
                    || workspace
                        .is_some_and(|w| field("workspaceName").and_then(Value::as_str) == Some(w)))
        })
        .ok_or_else(|| {
            let which = match (revision, workspace) {
                (Some(r), _) => r.to_string(),
                (None, Some(w)) => w.to_string(),
                (None, None) => "0".to_string(),
            };
            format!("could not find upstream package revision '{package}/{which}' in repo '{repo}'")
        })
}

/// Converges the PackageVariants labelled with the set's UID on the rendered ones.
pub async fn ensure_package_variants(
    objects: &dyn Objects,
    namespace: &str,
    pvs: &Value,
    upstream: &Upstream,
    repos: &[Value],
    upstream_pr: &Value,
    downstreams: &[PvContext],
) -> Result<Changes, PvsError> {
    let pvs_name = meta_str(pvs, "name");
    let uid = meta_str(pvs, "uid");
    if uid.is_empty() {
        // The UID is what ties the generated PackageVariants to this set.
        return Err(PvsError::Malformed("metadata.uid is not set".into()));
    }
    let gvr = packagevariants_gvr();
    // The generated variants act with the set's creator's rights.
    let creator = pvs
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(CREATOR_ANNOTATION))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let creator_of = |pv: &Value| {
        pv.pointer("/metadata/annotations")
            .and_then(|a| a.get(CREATOR_ANNOTATION))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };

    // Rendered first, so a template error writes nothing.
    let mut desired: BTreeMap<String, Value> = BTreeMap::new();
    for d in downstreams {
        let spec =
            render::render_spec(upstream, repos, upstream_pr, d).map_err(PvsError::Render)?;
        let (repo, package) = downstream_of(&spec.downstream);
        let id = naming::identifier(pvs_name, &repo, &package);
        let spec = serde_json::to_value(&spec).map_err(|e| PvsError::Malformed(e.to_string()))?;
        // As upstream's map: a later target with the same identifier wins.
        desired.insert(id, spec);
    }

    let selector = format!("{OWNER_LABEL}={uid}");
    let mut existing: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for pv in objects.list(&gvr, Some(namespace), &selector).await? {
        let repo = pv
            .pointer("/spec/downstream/repo")
            .and_then(Value::as_str)
            .unwrap_or("");
        let package = pv
            .pointer("/spec/downstream/package")
            .and_then(Value::as_str)
            .unwrap_or("");
        existing
            .entry(naming::identifier(pvs_name, repo, package))
            .or_default()
            .push(pv);
    }

    let mut changes = Changes::default();
    let mut keep: BTreeMap<String, Value> = BTreeMap::new();
    for (id, mut pvs_for_id) in existing {
        if desired.contains_key(&id) {
            // Keep the one carrying the expected name (else the first); any other with the
            // same downstream is a duplicate.
            let want = naming::name(&id);
            let at = pvs_for_id
                .iter()
                .position(|pv| meta_str(pv, "name") == want)
                .unwrap_or(0);
            keep.insert(id, pvs_for_id.remove(at));
        }
        for pv in pvs_for_id {
            let name = meta_str(&pv, "name").to_string();
            match objects.delete(&gvr, namespace, &name).await {
                Ok(()) => changes.deleted.push(name),
                Err(e) if e.kind == ErrorKind::NotFound => {}
                Err(e) => return Err(e.into()),
            }
        }
    }

    for (id, spec) in desired {
        if let Some(mut pv) = keep.remove(&id) {
            let same_creator = creator.is_none() || creator_of(&pv) == creator;
            if same_spec(pv.get("spec").unwrap_or(&Value::Null), &spec) && same_creator {
                continue;
            }
            // Only the spec changes: updating in place keeps the PackageVariant and so its
            // downstream package revisions (a delete would propose them for deletion).
            pv["spec"] = spec;
            if let Some(c) = &creator {
                if !pv["metadata"]["annotations"].is_object() {
                    pv["metadata"]["annotations"] = json!({});
                }
                pv["metadata"]["annotations"][CREATOR_ANNOTATION] = json!(c);
            }
            let name = meta_str(&pv, "name").to_string();
            objects.update(&gvr, namespace, pv).await?;
            changes.updated.push(name);
        } else {
            let name = naming::name(&id);
            let pv = json!({
                "apiVersion": "config.porch.kpt.dev/v1alpha1",
                "kind": "PackageVariant",
                "metadata": {
                    "name": name,
                    "namespace": namespace,
                    "finalizers": [PV_FINALIZER],
                    "labels": {OWNER_LABEL: uid},
                    "ownerReferences": [{
                        "apiVersion": "config.porch.kpt.dev/v1alpha2",
                        "kind": "PackageVariantSet",
                        "name": pvs_name,
                        "uid": uid,
                        "controller": true,
                    }],
                },
                "spec": spec,
            });
            let mut pv = pv;
            if let Some(c) = &creator {
                pv["metadata"]["annotations"] = json!({CREATOR_ANNOTATION: c});
            }
            objects.create(&gvr, namespace, pv).await?;
            changes.created.push(name);
        }
    }
    Ok(changes)
}

/// Deletes the PackageVariants of `namespace` generated by a set that no longer exists: the
/// owner label and a controller owner reference to a PackageVariantSet agree on a UID no set
/// of the namespace has. What Kubernetes garbage collection does in a cluster.
pub async fn collect_orphans(
    objects: &dyn Objects,
    namespace: &str,
) -> Result<Vec<String>, PvsError> {
    let live: BTreeSet<String> = objects
        .list(&packagevariantsets_gvr(), Some(namespace), "")
        .await?
        .iter()
        .map(|s| meta_str(s, "uid").to_string())
        .collect();
    let gvr = packagevariants_gvr();
    let mut deleted = Vec::new();
    for pv in objects.list(&gvr, Some(namespace), OWNER_LABEL).await? {
        let Some(uid) = pv
            .pointer("/metadata/labels")
            .and_then(|l| l.get(OWNER_LABEL))
            .and_then(Value::as_str)
        else {
            continue;
        };
        let owned = pv
            .pointer("/metadata/ownerReferences")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .any(|r| {
                r.get("kind").and_then(Value::as_str) == Some("PackageVariantSet")
                    && r.get("controller").and_then(Value::as_bool) == Some(true)
                    && r.get("uid").and_then(Value::as_str) == Some(uid)
            });
        if !owned || live.contains(uid) {
            continue;
        }
        let name = meta_str(&pv, "name").to_string();
        match objects.delete(&gvr, namespace, &name).await {
            Ok(()) => deleted.push(name),
            Err(e) if e.kind == ErrorKind::NotFound => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(deleted)
}

/// Whether two PackageVariant specs mean the same: absent, null and empty fields are alike,
/// as are the policies' defaults and their absence (the PackageVariant controller may write
/// them back).
pub fn same_spec(a: &Value, b: &Value) -> bool {
    normalized(a) == normalized(b)
}

fn normalized(v: &Value) -> Value {
    let mut v = prune(v).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut v {
        for (k, default) in [
            ("adoptionPolicy", "adoptNone"),
            ("deletionPolicy", "delete"),
        ] {
            if m.get(k).and_then(Value::as_str) == Some(default) {
                m.remove(k);
            }
        }
    }
    v
}

/// `v` without nulls, empty maps and empty lists; `None` when nothing is left.
fn prune(v: &Value) -> Option<Value> {
    match v {
        Value::Null => None,
        Value::Object(m) => {
            let out: serde_json::Map<String, Value> = m
                .iter()
                .filter_map(|(k, v)| prune(v).map(|v| (k.clone(), v)))
                .collect();
            (!out.is_empty()).then_some(Value::Object(out))
        }
        Value::Array(a) => {
            let out: Vec<Value> = a.iter().map(|v| prune(v).unwrap_or(Value::Null)).collect();
            (!out.is_empty()).then_some(Value::Array(out))
        }
        other => Some(other.clone()),
    }
}

fn downstream_of(d: &Option<porch_api::packagevariant::Downstream>) -> (String, String) {
    let d = d.clone().unwrap_or_default();
    (d.repo.unwrap_or_default(), d.package.unwrap_or_default())
}

fn meta_str<'a>(obj: &'a Value, key: &str) -> &'a str {
    obj.get("metadata")
        .and_then(|m| m.get(key))
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn now_rfc3339() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    porch_core::revision::Timestamp(secs).to_rfc3339()
}

#[cfg(test)]
#[path = "reconcile_tests.rs"]
mod tests;
