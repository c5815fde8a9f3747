//! The `upgrade` task (spec §9.5): a new Draft of the local package, 3-way merged from the
//! old upstream (original), the new upstream (updated) and the local revision, pointing its
//! Kptfile at the new upstream.

use kpt::package::PackageFiles as KptFiles;
use kpt::pkg::update::{Strategy, UpdateOptions, update_package};
use porch_core::names::{PackagePath, Revision};
use porch_core::repository::PackageFiles;
use porch_core::revision::{Locator, Task};

use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::index::RepoId;
use crate::model::PackageRevision;
use crate::tasks;

impl Engine {
    pub(crate) async fn upgrade_source(
        &self,
        id: &RepoId,
        package: &PackagePath,
        task: &Task,
    ) -> Result<(PackageFiles, Option<Locator>)> {
        let spec = task
            .upgrade
            .as_ref()
            .ok_or_else(|| EngineError::Invalid("upgrade task has no upgrade parameters".into()))?;
        let strategy = parse_strategy(&spec.strategy)?;
        let old = self.upgrade_ref(&id.0, &spec.old_upstream.name, "old upstream")?;
        let new = self.upgrade_ref(&id.0, &spec.new_upstream.name, "new upstream")?;
        let local = self.upgrade_ref(&id.0, &spec.local.name, "local")?;
        if new.key.revision == Revision::PLACEHOLDER {
            return Err(EngineError::Invalid(format!(
                "target upstream revision may not be the placeholder package revision {}/{}",
                new.key.repository,
                new.name()
            )));
        }
        if local.key.revision == Revision::PLACEHOLDER {
            return Err(EngineError::Invalid(format!(
                "source revision may not be the placeholder package revision {}/{}",
                local.key.repository,
                local.name()
            )));
        }
        for pr in [&old, &new, &local] {
            if !pr.lifecycle.is_published() {
                return Err(EngineError::Invalid(format!(
                    "all source PackageRevisions of upgrade task must be published, \"{}\" is not",
                    pr.name()
                )));
            }
        }
        if local.key.repository != id.1 || local.key.package != *package {
            return Err(EngineError::Invalid(format!(
                "an upgrade creates a new revision of the local package {}/{}; spec.repository and spec.packageName must name it",
                local.key.repository, local.key.package
            )));
        }
        let files = merge_onto_upstream(
            [
                self.files_of(&old).await?,
                self.files_of(&new).await?,
                self.files_of(&local).await?,
            ],
            strategy,
            package.package(),
            new.self_lock.as_ref(),
            "upgrade",
        )?;
        Ok((files, new.self_lock))
    }

    fn upgrade_ref(&self, namespace: &str, name: &str, what: &str) -> Result<PackageRevision> {
        if name.is_empty() {
            return Err(EngineError::Invalid(format!(
                "upgrade task requires the {what} package revision name"
            )));
        }
        self.get(namespace, name)
    }
}

/// kpt's update of a local package from its `original` upstream to the `updated` one with
/// `strategy`, then pointed at `lock` as package `name`: what an
/// `upgrade`, an appended `update` and a subpackage upgrade all do. `what` names the
/// operation in a merge error.
pub(crate) fn merge_onto_upstream(
    [original, updated, local]: [PackageFiles; 3],
    strategy: Strategy,
    name: &str,
    lock: Option<&Locator>,
    what: &str,
) -> Result<PackageFiles> {
    let merged = update_package(
        &KptFiles::from_map(original),
        &KptFiles::from_map(updated),
        &KptFiles::from_map(local),
        strategy,
        &UpdateOptions::default(),
    )
    .map_err(|e| EngineError::Invalid(format!("{what} failed: {e}")))?
    .into_map();
    tasks::clone_files(merged, name, lock)
}

/// A task's merge strategy (empty: resource-merge); an unknown one is invalid.
pub(crate) fn parse_strategy(strategy: &str) -> Result<Strategy> {
    strategy
        .parse()
        .map_err(|e: kpt::pkg::update::UpdateError| EngineError::Invalid(e.to_string()))
}
