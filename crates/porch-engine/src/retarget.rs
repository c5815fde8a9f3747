//! Moving a Draft to another upstream by editing its `spec.tasks`, as older Porch clients
//! (Nephio's `porchctl rpkg update`) do: either the first task, a `clone`, now names another
//! upstream (Go Porch's reclone-and-replay trigger), or one `update` task is appended naming
//! the new upstream.
//!
//! Go Porch re-clones on a changed clone task, which drops every edit pushed to the Draft,
//! and merges an appended `update` from the clone's *first* upstream however many updates
//! came before. Here both are one three-way merge, with the clone task's `strategy`: the
//! package as the Draft's current upstream has it (original), as the new upstream has it
//! (updated), and the Draft (local). A subpackage task appended after the creating task is
//! `subpackage.rs`'s. What Go Porch refuses is refused with its words (tasks removed, a
//! type changed, an appended task that is no `update`, ...); any other change of the tasks
//! already there (an init task's description, say) means nothing for an existing Draft and
//! is left alone, as Go Porch leaves it.

use porch_core::revision::{Task, UpstreamPackage};
use tracing::Instrument;

use crate::drafts::StoredDraft;
use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::model::PackageRevision;
use crate::resources::{check_modifiable, check_rv};
use crate::upgrade::{merge_onto_upstream, parse_strategy};

/// What a change of a Draft's tasks asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Retarget {
    /// The upstream the Draft follows now.
    pub from: UpstreamPackage,
    /// The upstream it moves to.
    pub to: UpstreamPackage,
    /// The clone task's merge strategy (empty: resource-merge).
    pub strategy: String,
}

/// The upstream a task list follows: the last `update` task's, else the first `clone`'s.
fn current_upstream(tasks: &[Task]) -> Option<&UpstreamPackage> {
    let clone = tasks
        .first()
        .filter(|t| t.task_type == "clone")?
        .clone
        .as_ref()?;
    Some(
        tasks
            .iter()
            .rev()
            .find_map(|t| t.update.as_ref().filter(|_| t.task_type == "update"))
            .map_or(&clone.upstream, |u| &u.upstream),
    )
}

/// The move `new` asks of a Draft of `package` whose tasks are `old`, if any (see the
/// module doc). A change Go Porch refuses (`DoPRMutations`) is refused with its words:
/// tasks removed, a task's type changed, more than one task appended, an appended task
/// that is no `update`, or an `update` appended to a package that was not cloned.
pub(crate) fn plan(old: &[Task], new: &[Task], package: &str) -> Result<Option<Retarget>> {
    if old.len() > new.len() {
        return Err(EngineError::Invalid(
            "removing tasks is not yet supported".into(),
        ));
    }
    if old.iter().zip(new).any(|(o, n)| o.task_type != n.task_type) {
        return Err(EngineError::Invalid(
            "changing task types is not yet supported".into(),
        ));
    }
    if new.len() > old.len() + 1 {
        return Err(EngineError::Invalid(
            "can only append one task at a time".into(),
        ));
    }
    let appended = new.get(old.len());
    if let Some(task) = appended {
        if task.task_type != "update" {
            return Err(EngineError::Invalid(format!(
                "appended task is type {:?}, must be type \"update\"",
                task.task_type
            )));
        }
        if task.update.is_none() {
            return Err(EngineError::Invalid(
                "update not set for updateTask of type \"update\"".into(),
            ));
        }
        if old.first().is_none_or(|t| t.task_type != "clone") {
            return Err(EngineError::Invalid(format!(
                "upstream source not found for package rev {package:?}; only cloned packages can be updated"
            )));
        }
    }
    // Go Porch's `currUpstream`: a clone task must say where it cloned from.
    let from = |tasks: &[Task]| {
        current_upstream(tasks).cloned().ok_or_else(|| {
            EngineError::Invalid(format!(
                "package {package} does not have original upstream info"
            ))
        })
    };
    let (Some(first_old), Some(first_new)) = (old.first(), new.first()) else {
        return Ok(None);
    };
    let strategy = first_new
        .clone
        .as_ref()
        .map(|c| c.strategy.clone())
        .unwrap_or_default();
    if first_old.task_type == "clone" && first_old != first_new {
        return Ok(Some(Retarget {
            from: from(old)?,
            to: from(new)?,
            strategy,
        }));
    }
    // An appended update; other changes of the tasks already there mean nothing for a
    // Draft and are left alone, as Go Porch leaves them.
    let Some(to) = appended.and_then(|t| t.update.as_ref()) else {
        return Ok(None);
    };
    Ok(Some(Retarget {
        from: from(old)?,
        to: to.upstream.clone(),
        strategy,
    }))
}

/// What a change of a Draft's tasks does.
enum TaskChange {
    /// Moves the Draft to another upstream.
    Retarget(Retarget),
    /// Clones or upgrades an independent subpackage (see `subpackage.rs`).
    Subpackage(crate::subpackage::SubpackageTask),
}

impl Engine {
    /// The Draft's files (`local`) merged onto `plan`'s new upstream, and its lock.
    async fn retarget_files(
        &self,
        namespace: &str,
        plan: &Retarget,
        local: porch_core::repository::PackageFiles,
        package_name: &str,
    ) -> Result<(
        porch_core::repository::PackageFiles,
        Option<porch_core::revision::Locator>,
    )> {
        let strategy = parse_strategy(&plan.strategy)?;
        let (original, _) = self.upstream_files(namespace, &plan.from).await?;
        let (updated, lock) = self.upstream_files(namespace, &plan.to).await?;
        let files = merge_onto_upstream(
            [original, updated, local],
            strategy,
            package_name,
            lock.as_ref(),
            "update",
        )?;
        Ok((files, lock))
    }

    /// Applies a change of Draft `name`'s tasks to `tasks` (see the module doc). `Ok(None)`
    /// when the change asks for nothing (the tasks are then left as they were).
    pub async fn update_tasks(
        &self,
        namespace: &str,
        name: &str,
        resource_version: &str,
        tasks: Vec<Task>,
    ) -> Result<Option<PackageRevision>> {
        let current = self.get(namespace, name)?;
        let change = match crate::subpackage::appended(&current.tasks, &tasks)? {
            Some(sub) => TaskChange::Subpackage(sub),
            None => match plan(&current.tasks, &tasks, current.key.package.package())? {
                Some(plan) => TaskChange::Retarget(plan),
                None => return Ok(None),
            },
        };
        let id = Self::repo_of(namespace, name)?;
        let (_, queue) = self.handle(&id)?;
        let guard = self.inner.in_flight.resources(namespace, name)?;
        let span = tracing::info_span!("update_tasks", revision = %name, namespace);
        check_modifiable(&current, "change the tasks", resource_version)?;
        let stored = self.stored_draft_of(&id, &current).await?;
        let expected = stored.meta.resource_version;
        let mut meta = stored.meta.clone();
        let package = current.key.package.clone();
        let files = match change {
            TaskChange::Subpackage(task) => {
                // Applied, not recorded: the Draft keeps its tasks and its upstream.
                self.apply_subpackage(&current, stored.files()?, &task)
                    .instrument(span.clone())
                    .await?
            }
            TaskChange::Retarget(plan) => {
                let (files, lock) = self
                    .retarget_files(namespace, &plan, stored.files()?, package.package())
                    .instrument(span.clone())
                    .await?;
                meta.tasks = tasks;
                meta.upstream_lock = lock;
                files
            }
        };
        let rendered = self
            .render(&id, files, package.package().to_owned())
            .instrument(span.clone())
            .await?;
        if !rendered.status.error.is_empty() {
            return Err(rendered.into_error());
        }
        let (this, name, rv) = (self.clone(), name.to_owned(), resource_version.to_owned());
        queue
            .run(
                async move {
                    let _guard = guard;
                    let now = this.get(&id.0, &name)?;
                    check_rv(&name, &rv, &now.resource_version)?;
                    let draft = StoredDraft::new(meta, &rendered.files);
                    this.save_draft(&id, &name, draft, expected).await?;
                    tracing::info!("draft tasks applied");
                    this.get(&id.0, &name).map(Some)
                }
                .instrument(span),
            )
            .await?
    }
}

#[cfg(test)]
mod tests {
    use porch_core::revision::{CloneTask, GitUpstream, RevisionRef, UpdateTask};

    use super::*;

    fn by_name(name: &str) -> UpstreamPackage {
        UpstreamPackage {
            upstream_ref: Some(RevisionRef { name: name.into() }),
            ..UpstreamPackage::default()
        }
    }

    fn git(git_ref: &str) -> UpstreamPackage {
        UpstreamPackage {
            origin_type: "git".into(),
            git: Some(GitUpstream {
                repo: "https://example.com/bp.git".into(),
                git_ref: git_ref.into(),
                directory: "update".into(),
                ..GitUpstream::default()
            }),
            upstream_ref: None,
        }
    }

    fn clone(upstream: UpstreamPackage, strategy: &str) -> Task {
        Task {
            task_type: "clone".into(),
            clone: Some(CloneTask {
                upstream,
                strategy: strategy.into(),
                ..CloneTask::default()
            }),
            ..Task::default()
        }
    }

    fn update(upstream: UpstreamPackage) -> Task {
        Task {
            task_type: "update".into(),
            update: Some(UpdateTask { upstream }),
            ..Task::default()
        }
    }

    #[test]
    fn a_changed_clone_task_moves_from_the_old_source_to_the_new() {
        let old = [clone(git("update/v1"), "copy-merge")];
        let new = [clone(git("v2"), "copy-merge")];
        assert_eq!(
            plan(&old, &new, "a").expect("plan"),
            Some(Retarget {
                from: git("update/v1"),
                to: git("v2"),
                strategy: "copy-merge".into()
            })
        );
        // Go porchctl's update changes the clone task too (a shared pointer) while it
        // appends the update: the update names where to go.
        let old = [clone(by_name("bp.a.v1"), "")];
        let new = [clone(by_name("bp.a.v2"), ""), update(by_name("bp.a.v2"))];
        assert_eq!(
            plan(&old, &new, "a").expect("plan").map(|p| (p.from, p.to)),
            Some((by_name("bp.a.v1"), by_name("bp.a.v2")))
        );
    }

    #[test]
    fn an_appended_update_moves_from_the_latest_upstream() {
        let mut old = vec![clone(by_name("bp.a.v1"), "")];
        let new = [old.clone(), vec![update(by_name("bp.a.v2"))]].concat();
        assert_eq!(
            plan(&old, &new, "a").expect("plan").map(|p| (p.from, p.to)),
            Some((by_name("bp.a.v1"), by_name("bp.a.v2")))
        );
        // A second update starts from where the first one went (Go Porch: from the clone).
        old = new.clone();
        let newer = [old.clone(), vec![update(by_name("bp.a.v3"))]].concat();
        assert_eq!(
            plan(&old, &newer, "a")
                .expect("plan")
                .map(|p| (p.from, p.to)),
            Some((by_name("bp.a.v2"), by_name("bp.a.v3")))
        );
    }

    #[test]
    fn other_changes_ask_for_nothing() {
        let cloned = [clone(by_name("bp.a.v1"), "")];
        let init = [Task::init(Default::default())];
        let mut described = init.clone();
        if let Some(i) = described[0].init.as_mut() {
            i.description = "another".into();
        }
        for (old, new) in [
            (&cloned[..], &cloned[..]),
            (&init[..], &init[..]),
            (&init[..], &described[..]),
            (&[][..], &[][..]),
        ] {
            assert_eq!(
                plan(old, new, "a").expect("plan"),
                None,
                "{old:?} -> {new:?}"
            );
        }
    }

    #[test]
    fn changes_go_porch_refuses_are_refused_with_its_words() {
        let cloned = [clone(by_name("bp.a.v1"), "")];
        let init = [Task::init(Default::default())];
        let upgrade = Task {
            task_type: "upgrade".into(),
            ..Task::default()
        };
        let twice = [
            cloned[0].clone(),
            update(by_name("x")),
            update(by_name("y")),
        ];
        for (old, new, want) in [
            (&cloned[..], &[][..], "removing tasks is not yet supported"),
            (
                &twice[..],
                &cloned[..],
                "removing tasks is not yet supported",
            ),
            (
                &cloned[..],
                &init[..],
                "changing task types is not yet supported",
            ),
            (
                &cloned[..],
                &twice[..],
                "can only append one task at a time",
            ),
            (
                &cloned[..],
                &[cloned[0].clone(), upgrade][..],
                "appended task is type \"upgrade\", must be type \"update\"",
            ),
            (
                &init[..],
                &[init[0].clone(), update(by_name("x"))][..],
                "upstream source not found for package rev \"a\"; only cloned packages can be updated",
            ),
            (
                &[][..],
                &[update(by_name("x"))][..],
                "upstream source not found for package rev \"a\"; only cloned packages can be updated",
            ),
        ] {
            let err = plan(old, new, "a").expect_err("refused");
            assert_eq!(err.to_string(), want, "{old:?} -> {new:?}");
        }
        // A clone task that names no upstream has nothing to update from.
        let bare = Task {
            task_type: "clone".into(),
            ..Task::default()
        };
        let appended = [bare.clone(), update(by_name("x"))];
        let err = plan(&appended[..1], &appended, "a").expect_err("refused");
        assert!(
            err.to_string()
                .contains("does not have original upstream info"),
            "{err}"
        );
    }

    #[test]
    fn an_update_task_without_parameters_is_refused() {
        let old = [clone(by_name("bp.a.v1"), "")];
        let bare = Task {
            task_type: "update".into(),
            ..Task::default()
        };
        let err = plan(&old, &[old[0].clone(), bare], "a").expect_err("refused");
        assert!(err.to_string().contains("update not set"), "{err}");
    }
}
