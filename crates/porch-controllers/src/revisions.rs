//! The port to package revisions the controllers drive, and its implementation over the
//! engine in process (no HTTP, no cache lag: a revision the controller just created is in
//! the next listing, which is what keeps a reconcile from cloning twice).

use std::collections::BTreeMap;

use async_trait::async_trait;
use porch_core::ErrorKind;
use porch_core::lifecycle::Lifecycle;
use porch_core::names::RepositoryName;
use porch_core::repository::PackageFiles;
use porch_core::revision::{Author, Task};
use porch_engine::{
    CreateRequest, Endpoint, Engine, EngineError, LATEST_REVISION_LABEL, ListOptions,
    MetadataUpdate, OwnerReference, PackageRevision, RenderStatus,
};

/// Why a package revision operation failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct RevisionError {
    pub kind: ErrorKind,
    pub message: String,
    /// The render outcome when a resources write failed to render.
    pub render: Option<RenderStatus>,
}

impl From<EngineError> for RevisionError {
    fn from(e: EngineError) -> Self {
        let render = match &e {
            EngineError::Render { status, .. } => Some((**status).clone()),
            _ => None,
        };
        RevisionError {
            kind: e.kind(),
            message: e.to_string(),
            render,
        }
    }
}

/// A new draft: identity, its one creating task and its object metadata.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NewRevision {
    pub namespace: String,
    pub repository: String,
    pub package: String,
    pub workspace: String,
    pub task: Task,
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
    pub owner_references: Vec<OwnerReference>,
}

/// The object metadata a controller changes on an existing revision.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MetaChange {
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
    pub owner_references: Vec<OwnerReference>,
}

impl MetaChange {
    /// The current metadata of `pr` (without the computed latest-revision label).
    pub fn of(pr: &PackageRevision) -> Self {
        let mut labels = pr.labels.clone();
        labels.remove(LATEST_REVISION_LABEL);
        MetaChange {
            labels,
            annotations: pr.annotations.clone(),
            owner_references: pr.owner_references.clone(),
        }
    }
}

/// List, read and write package revisions.
#[async_trait]
pub trait Revisions: Send + Sync {
    /// The revisions of one package of one repository in `namespace`.
    fn list(&self, namespace: &str, repository: &str, package: &str) -> Vec<PackageRevision>;
    /// One revision by object name.
    fn get(&self, namespace: &str, name: &str) -> Option<PackageRevision>;
    async fn create(&self, new: NewRevision) -> Result<PackageRevision, RevisionError>;
    /// Replaces labels, annotations and ownerReferences (compare-and-swap on `pr`'s version).
    async fn update_meta(
        &self,
        pr: &PackageRevision,
        change: MetaChange,
    ) -> Result<PackageRevision, RevisionError>;
    /// Published ⇄ DeletionProposed.
    async fn set_lifecycle(
        &self,
        pr: &PackageRevision,
        to: Lifecycle,
    ) -> Result<PackageRevision, RevisionError>;
    async fn delete(&self, pr: &PackageRevision) -> Result<(), RevisionError>;
    async fn read_files(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<(PackageRevision, PackageFiles), RevisionError>;
    /// Saves the files of a Draft (rendered); the render outcome. A failed render is an
    /// error carrying its [`RenderStatus`].
    async fn write_files(
        &self,
        pr: &PackageRevision,
        files: PackageFiles,
    ) -> Result<RenderStatus, RevisionError>;
    /// Waits until the revisions read reflect every write committed before the call (a
    /// replica of a cluster catching up); at once on one server.
    async fn caught_up(&self) {}
}

/// [`Revisions`] over the engine of this process.
#[derive(Clone, Debug)]
pub struct EngineRevisions {
    pub engine: Engine,
}

/// Who the controllers write as (lifecycle changes record an author).
fn controller_author() -> Author {
    Author {
        name: "porch-controllers".into(),
        email: "porch-controllers@kpt.dev".into(),
    }
}

#[async_trait]
impl Revisions for EngineRevisions {
    async fn caught_up(&self) {
        self.engine.caught_up().await;
    }

    fn list(&self, namespace: &str, repository: &str, package: &str) -> Vec<PackageRevision> {
        // An invalid repository name names no repository.
        let Ok(repository) = RepositoryName::new(repository) else {
            return Vec::new();
        };
        self.engine.list(&ListOptions {
            namespace: Some(namespace.to_owned()),
            repository: Some(repository),
            package: Some(package.to_owned()),
            ..ListOptions::default()
        })
    }

    fn get(&self, namespace: &str, name: &str) -> Option<PackageRevision> {
        self.engine.get(namespace, name).ok()
    }

    async fn create(&self, new: NewRevision) -> Result<PackageRevision, RevisionError> {
        Ok(self
            .engine
            .create(CreateRequest {
                namespace: new.namespace,
                repository: new.repository,
                package: new.package,
                workspace: new.workspace,
                tasks: vec![new.task],
                labels: new.labels,
                annotations: new.annotations,
                owner_references: new.owner_references,
                ..CreateRequest::default()
            })
            .await?)
    }

    async fn update_meta(
        &self,
        pr: &PackageRevision,
        change: MetaChange,
    ) -> Result<PackageRevision, RevisionError> {
        Ok(self
            .engine
            .update_metadata(
                &pr.namespace,
                pr.name().as_str(),
                &pr.resource_version,
                MetadataUpdate {
                    labels: change.labels,
                    annotations: change.annotations,
                    finalizers: pr.finalizers.clone(),
                    owner_references: change.owner_references,
                    ..MetadataUpdate::default()
                },
            )
            .await?)
    }

    async fn set_lifecycle(
        &self,
        pr: &PackageRevision,
        to: Lifecycle,
    ) -> Result<PackageRevision, RevisionError> {
        Ok(self
            .engine
            .update_lifecycle(
                &pr.namespace,
                pr.name().as_str(),
                Some(&pr.resource_version),
                to,
                Endpoint::Update,
                controller_author(),
            )
            .await?)
    }

    async fn delete(&self, pr: &PackageRevision) -> Result<(), RevisionError> {
        self.engine
            .delete(&pr.namespace, pr.name().as_str(), None)
            .await?;
        Ok(())
    }

    async fn read_files(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<(PackageRevision, PackageFiles), RevisionError> {
        Ok(self.engine.read_resources(namespace, name).await?)
    }

    async fn write_files(
        &self,
        pr: &PackageRevision,
        files: PackageFiles,
    ) -> Result<RenderStatus, RevisionError> {
        let update = self
            .engine
            .update_resources(
                &pr.namespace,
                pr.name().as_str(),
                &pr.resource_version,
                files,
            )
            .await?;
        if update.render_status.error.is_empty() {
            Ok(update.render_status)
        } else {
            // Saved because of push-on-render-failure: still a failure to report.
            Err(RevisionError {
                kind: ErrorKind::Invalid,
                message: update.render_status.error.clone(),
                render: Some(update.render_status),
            })
        }
    }
}
