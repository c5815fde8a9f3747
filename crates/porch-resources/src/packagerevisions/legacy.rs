//! The legacy `update` task (`{type: update, update: {upstreamRef: {upstreamRef: {name}}}}`)
//! that older clients such as the Backstage plugin still send to move a package to a new
//! upstream revision. Porch replaced it with `upgrade`; we translate it to the `upgrade` the
//! same request means: the local revision is the package's latest published one, and the old
//! upstream is the one that revision was cloned or last upgraded from.

use porch_apiserver::ApiError;
use porch_core::ErrorKind;
use porch_core::revision::{RevisionRef, Task, UpgradeTask};
use porch_engine::{Engine, ListOptions, PackageRevision};
use serde_json::Value;

use super::convert::str_at;

fn invalid(message: String) -> ApiError {
    ApiError::new(ErrorKind::Invalid, message)
}

/// The upstream a published revision came from, per its creating task.
fn upstream_of(pr: &PackageRevision) -> Option<String> {
    pr.tasks.iter().find_map(|t| match t.task_type.as_str() {
        "clone" => t
            .clone
            .as_ref()
            .and_then(|c| c.upstream.upstream_ref.as_ref())
            .map(|r| r.name.clone()),
        "upgrade" => t.upgrade.as_ref().map(|u| u.new_upstream.name.clone()),
        _ => None,
    })
}

/// Replaces a single `update` task in `tasks` by the equivalent `upgrade`.
pub fn translate(
    engine: &Engine,
    namespace: &str,
    obj: &Value,
    tasks: &mut [Task],
) -> Result<(), ApiError> {
    let [task] = tasks else {
        return Ok(());
    };
    if task.task_type != "update" {
        return Ok(());
    }
    let new = str_at(obj, "/spec/tasks/0/update/upstreamRef/upstreamRef/name");
    if new.is_empty() {
        return Err(invalid(
            "the update task needs update.upstreamRef.upstreamRef.name (the new upstream revision); \
             hint: send an upgrade task instead"
                .into(),
        ));
    }
    let (repository, package) = (
        str_at(obj, "/spec/repository"),
        str_at(obj, "/spec/packageName"),
    );
    let local = engine
        .list(&ListOptions {
            namespace: Some(namespace.to_owned()),
            repository: porch_core::names::RepositoryName::discovered(repository).ok(),
            package: Some(package.to_owned()),
            ..ListOptions::default()
        })
        .into_iter()
        .filter(|p| p.lifecycle.is_published() && p.key.revision.get() > 0)
        .max_by_key(|p| p.key.revision.get())
        .ok_or_else(|| {
            invalid(format!(
                "the update task needs a published revision of package {package:?} in repository {repository:?} to update"
            ))
        })?;
    let old = upstream_of(&local).ok_or_else(|| {
        invalid(format!(
            "package revision {} was not cloned from a registered upstream; it cannot be updated",
            local.name()
        ))
    })?;
    *task = Task {
        task_type: "upgrade".into(),
        upgrade: Some(UpgradeTask {
            old_upstream: RevisionRef { name: old },
            new_upstream: RevisionRef {
                name: new.to_owned(),
            },
            local: RevisionRef {
                name: local.name().as_str().to_owned(),
            },
            strategy: String::new(),
            ..Default::default()
        }),
        ..Task::default()
    };
    Ok(())
}
