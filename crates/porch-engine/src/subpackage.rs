//! Independent subpackages (kptdev Porch): a `clone` or `upgrade` task carrying
//! `subpackageDir`, appended to a Draft whose only task is its creating one, clones an
//! upstream package into that directory of the Draft, or upgrades the subpackage there in
//! place (three-way merge of the old and new upstream revisions onto the subpackage as the
//! Draft has it). The task is applied, not recorded: the Draft keeps its one task, so further
//! subpackages can follow.

use std::collections::BTreeMap;

use porch_core::names::{Revision, check_subpackage_dir};
use porch_core::repository::PackageFiles;
use porch_core::revision::{CloneTask, Task, UpgradeTask};

use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::model::PackageRevision;
use crate::tasks;
use crate::upgrade::{merge_onto_upstream, parse_strategy};

/// A subpackage task appended to a Draft's tasks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SubpackageTask {
    Clone(CloneTask),
    Upgrade(UpgradeTask),
}

impl SubpackageTask {
    fn dir(&self) -> &str {
        match self {
            SubpackageTask::Clone(c) => &c.subpackage_dir,
            SubpackageTask::Upgrade(u) => &u.subpackage_dir,
        }
    }
}

/// The directory a task names as a subpackage, if any.
fn dir_of(task: &Task) -> &str {
    match task.task_type.as_str() {
        "clone" => task.clone.as_ref().map_or("", |c| &c.subpackage_dir),
        "upgrade" => task.upgrade.as_ref().map_or("", |u| &u.subpackage_dir),
        _ => "",
    }
}

/// A first task may not name a subpackage directory (it creates the package itself).
pub(crate) fn check_first_task(tasks: &[Task]) -> Result<()> {
    if tasks.first().is_some_and(|t| !dir_of(t).is_empty()) {
        return Err(EngineError::Invalid(
            "subpackage directory may not be specified as the first task on the task list".into(),
        ));
    }
    Ok(())
}

/// The subpackage task `new` appends to `old`, if it appends one (kptdev Porch's
/// `GetSubpackageDir` rules).
pub(crate) fn appended(old: &[Task], new: &[Task]) -> Result<Option<SubpackageTask>> {
    let Some(last) = new.last() else {
        return Ok(None);
    };
    if new.len() != old.len() + 1 || new[..old.len()] != *old || dir_of(last).is_empty() {
        return Ok(None);
    }
    check_first_task(new)?;
    if new.len() != 2 {
        return Err(EngineError::Invalid(
            "for subpackage tasks, the task list must contain exactly 2 tasks, the source task followed by the subpackage task".into(),
        ));
    }
    let task = match (&last.clone, &last.upgrade) {
        (Some(c), _) if last.task_type == "clone" => SubpackageTask::Clone(c.clone()),
        (_, Some(u)) if last.task_type == "upgrade" => SubpackageTask::Upgrade(u.clone()),
        _ => return Ok(None),
    };
    check_subpackage_dir(task.dir()).map_err(|e| {
        EngineError::Invalid(format!(
            "failed to apply subpackage task, subpackageDir is invalid: {e}"
        ))
    })?;
    Ok(Some(task))
}

/// The directory of a subpackage of the parent that `dir` lies in or is, if `path` is that
/// subpackage's Kptfile (kptdev's `parentSubpackageFound`).
fn enclosing_subpackage<'p>(dir: &str, path: &'p str) -> Option<&'p str> {
    let parent = path.strip_suffix("/Kptfile")?;
    (dir == parent || dir.starts_with(&format!("{parent}/"))).then_some(parent)
}

/// `files` moved under `dir/`.
fn under(dir: &str, files: PackageFiles) -> impl Iterator<Item = (String, Vec<u8>)> + '_ {
    files
        .into_iter()
        .map(move |(p, b)| (format!("{dir}/{p}"), b))
}

impl Engine {
    /// The files of Draft `parent` (as `files`) with `task` applied.
    pub(crate) async fn apply_subpackage(
        &self,
        parent: &PackageRevision,
        mut files: PackageFiles,
        task: &SubpackageTask,
    ) -> Result<PackageFiles> {
        let dir = task.dir().to_owned();
        let name = dir.rsplit('/').next().unwrap_or(&dir).to_owned();
        match task {
            SubpackageTask::Clone(clone) => {
                for path in files.keys() {
                    if let Some(at) = enclosing_subpackage(&dir, path) {
                        return Err(EngineError::Invalid(format!(
                            "cannot clone subpackage into another subpackage, parent already has a subpackage at {at:?} (requested subpackageDir: {dir:?})"
                        )));
                    }
                    if path.starts_with(&format!("{dir}/")) {
                        return Err(EngineError::Invalid(format!(
                            "cannot clone subpackage into parent, parent already has content at {dir:?}"
                        )));
                    }
                }
                let (upstream, lock) = self
                    .upstream_files(&parent.namespace, &clone.upstream)
                    .await?;
                let cloned = tasks::clone_files(upstream, &name, lock.as_ref())?;
                files.extend(under(&dir, cloned));
                Ok(files)
            }
            SubpackageTask::Upgrade(upgrade) => {
                let local_name = upgrade.local.name.as_str();
                if !local_name.is_empty() && local_name != parent.name().as_str() {
                    return Err(EngineError::Invalid(format!(
                        "a subpackage upgrade changes the Draft it is appended to: localPackageRevisionRef must name {}, not {local_name}",
                        parent.name()
                    )));
                }
                let strategy = parse_strategy(&upgrade.strategy)?;
                let old = self.published_upstream(parent, &upgrade.old_upstream.name, "old")?;
                let new = self.published_upstream(parent, &upgrade.new_upstream.name, "new")?;
                let prefix = format!("{dir}/");
                let mut local = BTreeMap::new();
                for path in files.keys() {
                    if let Some(rest) = path.strip_prefix(&prefix) {
                        local.insert(rest.to_owned(), files[path].clone());
                    } else if let Some(at) = enclosing_subpackage(&dir, path) {
                        return Err(EngineError::Invalid(format!(
                            "cannot upgrade subpackage in another subpackage, parent already has a subpackage at {at:?} (requested subpackageDir: {dir:?})"
                        )));
                    }
                }
                if local.is_empty() {
                    return Err(EngineError::Invalid(format!(
                        "subpackage {dir:?} not found in package {:?}",
                        parent.name()
                    )));
                }
                if !local.contains_key("Kptfile") {
                    return Err(EngineError::Invalid(format!(
                        "subpackage {dir:?} in package {:?} is missing Kptfile",
                        parent.name()
                    )));
                }
                let upgraded = merge_onto_upstream(
                    [
                        self.files_of(&old).await?,
                        self.files_of(&new).await?,
                        local,
                    ],
                    strategy,
                    &name,
                    new.self_lock.as_ref(),
                    "upgrade",
                )?;
                files.retain(|p, _| !p.starts_with(&prefix));
                files.extend(under(&dir, upgraded));
                Ok(files)
            }
        }
    }

    /// A published, numbered upstream revision an upgrade names.
    fn published_upstream(
        &self,
        parent: &PackageRevision,
        name: &str,
        which: &str,
    ) -> Result<PackageRevision> {
        if name.is_empty() {
            return Err(EngineError::Invalid(format!(
                "upgrade task requires the {which} upstream package revision name"
            )));
        }
        let pr = self.get(&parent.namespace, name)?;
        if !pr.lifecycle.is_published() || pr.key.revision == Revision::PLACEHOLDER {
            return Err(EngineError::Invalid(format!(
                "{which} upstream package revision {name} is not published"
            )));
        }
        Ok(pr)
    }
}

#[cfg(test)]
mod tests {
    use porch_core::revision::{RevisionRef, UpstreamPackage};

    use super::*;

    fn clone_into(dir: &str) -> Task {
        Task {
            task_type: "clone".into(),
            clone: Some(CloneTask {
                upstream: UpstreamPackage {
                    upstream_ref: Some(RevisionRef {
                        name: "bp.app.v1".into(),
                    }),
                    ..UpstreamPackage::default()
                },
                subpackage_dir: dir.into(),
                ..CloneTask::default()
            }),
            ..Task::default()
        }
    }

    #[test]
    fn an_appended_subpackage_task_is_found_and_checked() {
        let init = vec![Task::init(Default::default())];
        let with = |t: Task| [init.clone(), vec![t]].concat();
        assert!(matches!(
            appended(&init, &with(clone_into("sub/app"))),
            Ok(Some(SubpackageTask::Clone(c))) if c.subpackage_dir == "sub/app"
        ));
        // A plain clone appended is no subpackage task.
        assert_eq!(appended(&init, &with(clone_into(""))).expect("none"), None);
        let err = appended(&init, &with(clone_into("../up"))).expect_err("invalid");
        assert!(
            err.to_string().contains("subpackageDir is invalid"),
            "{err}"
        );
        // Only right after the creating task.
        let two = with(clone_into("a"));
        let err = appended(&two, &[two.clone(), vec![clone_into("b")]].concat())
            .expect_err("three tasks");
        assert!(err.to_string().contains("exactly 2 tasks"), "{err}");
        let err = check_first_task(&[clone_into("a")]).expect_err("first");
        assert!(err.to_string().contains("first task"), "{err}");
    }

    #[test]
    fn enclosing_subpackages_are_found_by_their_kptfiles() {
        assert_eq!(enclosing_subpackage("a/b", "a/Kptfile"), Some("a"));
        assert_eq!(enclosing_subpackage("a/b", "a/b/Kptfile"), Some("a/b"));
        assert_eq!(enclosing_subpackage("a/b", "Kptfile"), None);
        assert_eq!(enclosing_subpackage("a/b", "ab/Kptfile"), None);
        assert_eq!(enclosing_subpackage("a/b", "a/b/c/Kptfile"), None);
        assert_eq!(enclosing_subpackage("a", "a/cm.yaml"), None);
    }
}
