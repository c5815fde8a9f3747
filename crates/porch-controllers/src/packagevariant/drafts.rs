//! The drafts a PackageVariant creates and what it writes into them (upstream
//! `createUpgradeDraft`, `createEditDraft`, `calculateDraftResources`,
//! `updatePackageResources`): clone, upgrade and edit drafts in the next free
//! `packagevariant-<n>` workspace, the mutations, and their render outcome in the status.

use porch_core::lifecycle::Lifecycle;
use porch_core::repository::PackageFiles;
use porch_core::revision::{CloneTask, EditTask, RevisionRef, Task, UpgradeTask, UpstreamPackage};
use porch_engine::PackageRevision;

use super::downstream::owner_reference;
use super::mutate;
use super::reconcile::{ReconcileError, Reconciler, Variant};
use super::status::Status;
use super::upstream::{self, new_workspace_name, published_by_revision};
use crate::events::EventType;
use crate::revisions::NewRevision;

impl Reconciler {
    /// Applies the mutations to `target`; a published target that would change gets an
    /// edit draft first. The revision the mutations live in.
    pub(super) async fn mutate_target(
        &self,
        v: &Variant,
        target: PackageRevision,
        existing: &mut Vec<PackageRevision>,
        repo: &str,
        package: &str,
        status: &mut Status,
    ) -> Result<PackageRevision, ReconcileError> {
        let (current, mut files) = self
            .revisions
            .read_files(&v.namespace, target.name().as_str())
            .await?;
        let changed = mutate::apply(&v.pv, &mut files, &*self.objects)
            .await
            .map_err(|e| ReconcileError::Failed(e.to_string()))?;
        status.note_injections(files.get(kpt::kptfile::KPTFILE).map(Vec::as_slice));
        if !changed {
            return Ok(current);
        }
        match current.lifecycle {
            Lifecycle::Draft => {
                self.save(&current, files, status).await?;
                Ok(current)
            }
            Lifecycle::Published | Lifecycle::DeletionProposed => {
                let task = edit_task(&current);
                let draft = self.create_draft(v, existing, repo, package, task).await?;
                v.event(
                    &*self.events,
                    EventType::Normal,
                    "Edited",
                    &format!(
                        "created package revision {:?} to apply changes to {:?}",
                        draft.name().as_str(),
                        current.name().as_str()
                    ),
                );
                existing.push(draft.clone());
                self.mutate_and_save(v, &draft, status).await?;
                Ok(draft)
            }
            // Waiting for approval: the content is not ours to change now; once published,
            // an edit draft carries the changes.
            Lifecycle::Proposed => Ok(current),
        }
    }

    /// Applies the mutations to a draft just created and saves them when they change it.
    pub(super) async fn mutate_and_save(
        &self,
        v: &Variant,
        draft: &PackageRevision,
        status: &mut Status,
    ) -> Result<(), ReconcileError> {
        let (current, mut files) = self
            .revisions
            .read_files(&v.namespace, draft.name().as_str())
            .await?;
        let changed = mutate::apply(&v.pv, &mut files, &*self.objects)
            .await
            .map_err(|e| ReconcileError::Failed(e.to_string()))?;
        status.note_injections(files.get(kpt::kptfile::KPTFILE).map(Vec::as_slice));
        if changed {
            self.save(&current, files, status).await?;
        }
        Ok(())
    }

    /// Writes the mutated files of a draft and records the render outcome in the status,
    /// a failed render included.
    async fn save(
        &self,
        draft: &PackageRevision,
        files: PackageFiles,
        status: &mut Status,
    ) -> Result<(), ReconcileError> {
        let name = draft.name().as_str().to_owned();
        match self.revisions.write_files(draft, files).await {
            Ok(render) => {
                status.set_render(&name, &render);
                Ok(())
            }
            Err(e) => {
                if let Some(render) = &e.render {
                    status.set_render(&name, render);
                }
                Err(e.into())
            }
        }
    }

    /// A new draft of the downstream package owned by the variant, with its labels and
    /// annotations, in the next free `packagevariant-<n>` workspace.
    pub(super) async fn create_draft(
        &self,
        v: &Variant,
        existing: &[PackageRevision],
        repo: &str,
        package: &str,
        task: Task,
    ) -> Result<PackageRevision, ReconcileError> {
        Ok(self
            .revisions
            .create(NewRevision {
                namespace: v.namespace.clone(),
                repository: repo.to_owned(),
                package: package.to_owned(),
                workspace: new_workspace_name(existing),
                task,
                labels: v.pv.spec.labels.clone().unwrap_or_default(),
                annotations: v.pv.spec.annotations.clone().unwrap_or_default(),
                owner_references: vec![owner_reference(v)],
            })
            .await?)
    }

    /// Upstream `createUpgradeDraft`'s task: old upstream = the published upstream revision
    /// the target's lock names, new = the resolved upstream, local = the target.
    pub(super) fn upgrade_task(
        &self,
        v: &Variant,
        target: &PackageRevision,
        upstream: &PackageRevision,
        candidates: &[PackageRevision],
    ) -> Result<Task, ReconcileError> {
        let old_revision = upstream::upstream_ref(target)
            .map(upstream::revision_from_ref)
            .unwrap_or(-1);
        let old = published_by_revision(&v.upstream(), old_revision, candidates)
            .map_err(ReconcileError::Failed)?;
        Ok(Task {
            task_type: "upgrade".into(),
            upgrade: Some(UpgradeTask {
                old_upstream: RevisionRef {
                    name: old.name().as_str().to_owned(),
                },
                new_upstream: RevisionRef {
                    name: upstream.name().as_str().to_owned(),
                },
                local: RevisionRef {
                    name: target.name().as_str().to_owned(),
                },
                strategy: "resource-merge".into(),
                ..Default::default()
            }),
            ..Task::default()
        })
    }
}
/// Upstream's single clone task from the upstream revision's name.
pub(super) fn clone_task(upstream: &PackageRevision) -> Task {
    Task {
        task_type: "clone".into(),
        clone: Some(CloneTask {
            upstream: UpstreamPackage {
                upstream_ref: Some(RevisionRef {
                    name: upstream.name().as_str().to_owned(),
                }),
                ..UpstreamPackage::default()
            },
            ..Default::default()
        }),
        ..Task::default()
    }
}

/// Upstream `createEditDraft`'s task: a copy of a published revision.
pub(super) fn edit_task(source: &PackageRevision) -> Task {
    Task {
        task_type: "edit".into(),
        edit: Some(EditTask {
            source: RevisionRef {
                name: source.name().as_str().to_owned(),
            },
        }),
        ..Task::default()
    }
}
