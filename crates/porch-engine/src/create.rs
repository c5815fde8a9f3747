//! Creating a Draft with exactly one task (spec §9.1–9.4). Everything is computed in memory
//! and written to the store in one compare-and-swap at the end, so a failed create leaves
//! nothing behind.

use porch_core::lifecycle::Lifecycle;
use porch_core::names::{PackagePath, PackageRevisionName, RepositoryName, WorkspaceName};
use porch_core::repository::PackageFiles;
use porch_core::revision::{InitTask, Locator, Task, Timestamp};
use porch_core::store::{Precondition, StoreError};
use porch_core::upstream::UpstreamFetch;
use tracing::Instrument;

use crate::drafts::{DraftMeta, StoredDraft};
use crate::engine::{Engine, not_found};
use crate::error::{EngineError, Result};
use crate::index::RepoId;
use crate::kptinfo::KptfileEdit;
use crate::model::{CreateRequest, LATEST_REVISION_LABEL, PackageRevision};
use crate::objmeta::{ObjectMeta, meta_key};
use crate::store::{Change, at};
use crate::tasks;

/// The checks of a create request that need no repository state (task count, managed label,
/// names): shared by [`Engine::create`] and its dry run.
pub(crate) fn validate_request(
    id: &RepoId,
    req: &CreateRequest,
) -> Result<(PackagePath, WorkspaceName, PackageRevisionName)> {
    if req.tasks.len() > 1 {
        return Err(EngineError::Invalid(
            "task list must not contain more than one task".into(),
        ));
    }
    if req.labels.contains_key(LATEST_REVISION_LABEL) {
        return Err(EngineError::Invalid(format!(
            "metadata.labels[{LATEST_REVISION_LABEL}]: label is managed by porch and cannot be set by users"
        )));
    }
    let package = PackagePath::new(&req.package)?;
    let workspace = WorkspaceName::new(&req.workspace)?;
    let name = PackageRevisionName::compose_validated(&id.1, &package, &workspace)?;
    Ok((package, workspace, name))
}

/// A create computed outside the write queue: identity, task and rendered files.
struct PreparedCreate {
    package: PackagePath,
    workspace: WorkspaceName,
    name: PackageRevisionName,
    task: Task,
    upstream_lock: Option<Locator>,
    files: PackageFiles,
}

/// A clone into a deployment repository gets its package context (spec §9.3) as Porch's
/// `clonePackageMutation` makes it: kpt's `builtins/gen-pkg-context` over the whole package
/// with the new package's path as `package-path`, so every `kptfile.kpt.dev` ConfigMap the
/// upstream carried is dropped and each Kptfile (sub-packages too) gets a fresh
/// `package-context.yaml` naming its package.
async fn deployment_context(files: PackageFiles, package: &PackagePath) -> Result<PackageFiles> {
    let (root, path) = (package.package().to_owned(), package.as_str().to_owned());
    let out = tokio::task::spawn_blocking(move || {
        let files = kpt::package::PackageFiles::from_map(files);
        kpt::pkg::context::generate_package_context(&files, &root, Some(&path))
    })
    .await
    .map_err(|e| EngineError::Internal(format!("package context task failed: {e}")))?;
    match out.error {
        Some(e) => Err(EngineError::Invalid(format!(
            "failed to generate deployment context: {e}"
        ))),
        None => Ok(out.files.into_map()),
    }
}

impl Engine {
    /// Creates a Draft from `req` (validation, uniqueness, task, render, store).
    pub async fn create(&self, req: CreateRequest) -> Result<PackageRevision> {
        let repository = RepositoryName::new(&req.repository)?;
        let id: RepoId = (req.namespace.clone(), repository);
        let (_, queue) = self.handle(&id)?;
        let guard = self.inner.in_flight.create(
            &req.namespace,
            &req.repository,
            &req.package,
            &req.workspace,
        )?;
        let span = tracing::info_span!(
            "create",
            revision = %format!("{}.{}.{}", req.repository, req.package.replace('/', "."), req.workspace)
        );
        // The task and the render run outside the repository's queue (a clone fetches, a
        // render may take its whole budget); the write re-checks uniqueness inside it. The
        // in-flight guard keeps a second create of the same identity out meanwhile.
        let prepared = self
            .prepare_create(&id, &req)
            .instrument(span.clone())
            .await?;
        let this = self.clone();
        queue
            .run(
                async move {
                    let _guard = guard;
                    this.write_create(id, req, prepared).await
                }
                .instrument(span),
            )
            .await?
    }

    /// Validation, the task and the render of a create: everything but the write.
    async fn prepare_create(&self, id: &RepoId, req: &CreateRequest) -> Result<PreparedCreate> {
        let (package, workspace, name) = validate_request(id, req)?;
        crate::subpackage::check_first_task(&req.tasks)?;
        let task = req.tasks.first().cloned().unwrap_or_else(|| {
            Task::init(InitTask {
                description: format!("{package} description"),
                ..InitTask::default()
            })
        });
        self.check_unique(id, &package, &workspace, &task.task_type)?;

        let (mut files, upstream_lock) = match task.task_type.as_str() {
            "init" => (
                tasks::init_files(&package, &task.init.clone().unwrap_or_default()),
                None,
            ),
            "clone" => self.clone_source(&req.namespace, &package, &task).await?,
            "edit" => self.edit_source(id, &package, &task).await?,
            "upgrade" => self.upgrade_source(id, &package, &task).await?,
            other => {
                return Err(EngineError::Invalid(format!(
                    "task type {other:?} cannot create a package revision; use one of init, clone, edit, upgrade"
                )));
            }
        };

        if task.task_type == "clone" && self.is_deployment(id) {
            files = deployment_context(files, &package).await?;
        }
        KptfileEdit {
            package_metadata: req.package_metadata.as_ref(),
            readiness_gates: (!req.readiness_gates.is_empty())
                .then_some(req.readiness_gates.as_slice()),
            conditions: None,
            additive: true,
        }
        .apply(&mut files)?;

        let rendered = self.render(id, files, package.package().to_owned()).await?;
        if !rendered.status.error.is_empty() {
            return Err(rendered.into_error());
        }
        Ok(PreparedCreate {
            package,
            workspace,
            name,
            task,
            upstream_lock,
            files: rendered.files,
        })
    }

    /// Writes a prepared create (on the repository's queue).
    async fn write_create(
        &self,
        id: RepoId,
        req: CreateRequest,
        prepared: PreparedCreate,
    ) -> Result<PackageRevision> {
        let PreparedCreate {
            package,
            workspace,
            name,
            task,
            upstream_lock,
            files,
        } = prepared;
        self.check_unique(&id, &package, &workspace, &task.task_type)?;

        // A deleted draft of this name whose branch is not deleted yet: the new draft takes
        // its record and its branch (written next, on top of the old head).
        let tombstone = self
            .with_index(&id, |ix| ix.tombstones.get(name.as_str()).cloned())
            .flatten();
        let meta = DraftMeta {
            namespace: req.namespace.clone(),
            repository: id.1.clone(),
            package,
            workspace,
            lifecycle: Lifecycle::Draft,
            tasks: vec![task],
            upstream_lock,
            created: now(),
            resource_version: 0,
            content_version: 0,
            mirror: tombstone.as_ref().and_then(|t| t.mirror.clone()).map(|m| {
                crate::drafts::Mirror {
                    version: 0,
                    failure: None,
                    failure_version: 0,
                    ..m
                }
            }),
            deleted: false,
            kpt: Default::default(),
        };
        let draft = StoredDraft::new(meta, &files);
        let mut meta = draft.meta.clone();
        let mut object = ObjectMeta::new(
            req.labels,
            req.annotations,
            req.finalizers,
            req.owner_references,
        );
        // A record left by an earlier revision of this name is replaced, never inherited.
        let stale = self.object_meta(&id, name.as_str()).is_some();
        let mut changes = vec![Change::PutDraft(
            Box::new(draft),
            at(tombstone.as_ref().map(|t| t.resource_version)),
        )];
        let store_meta = !object.same_content(&ObjectMeta::default());
        if store_meta {
            changes.push(Change::PutMeta {
                namespace: id.0.clone(),
                name: name.as_str().to_owned(),
                meta: object.clone(),
                precondition: Precondition::None,
            });
        } else if stale {
            changes.push(Change::DeleteMeta(
                meta_key(&id.0, name.as_str()),
                Precondition::None,
            ));
        }
        let rvs = self
            .inner
            .store
            .commit(changes)
            .await
            .map_err(|e| match e {
                EngineError::Store(StoreError::AlreadyExists(_)) => EngineError::AlreadyExists(
                    format!("packagerevisions.porch.kpt.dev \"{name}\" already exists"),
                ),
                other => other,
            })?;
        meta.written(rvs.first().copied().unwrap_or_default());
        object.resource_version = rvs.get(1).copied().unwrap_or_default();
        tracing::info!("draft created");
        let package = meta.package.clone();
        self.mutate_in(&id, &package, |ix| {
            ix.tombstones.remove(name.as_str());
            ix.drafts.insert(name.as_str().to_owned(), meta);
            if store_meta {
                ix.meta.insert(name.as_str().to_owned(), object);
            } else {
                ix.meta.remove(name.as_str());
            }
        });
        self.mirror_after_write(&id, name.as_str()).await;
        self.get(&id.0, name.as_str())
    }

    /// Workspace uniqueness, package existence and nesting, on full paths (fixes quirk §20.6).
    pub(crate) fn check_unique(
        &self,
        id: &RepoId,
        package: &PackagePath,
        workspace: &WorkspaceName,
        task_type: &str,
    ) -> Result<()> {
        let (ns, repo) = id;
        self.with_index(id, |ix| {
            let taken = ix
                .views_of(ns, Some(&std::collections::BTreeSet::from([package.clone()])))
                .values()
                .any(|pr| pr.key.workspace == *workspace);
            if taken {
                return Err(EngineError::AlreadyExists(format!(
                    "package revision workspaceNames must be unique; package revision with name {package} in repo {repo} with workspaceName {workspace} already exists"
                )));
            }
            if task_type != "init" && task_type != "clone" {
                return Ok(());
            }
            for existing in ix.packages() {
                if existing == package {
                    return Err(EngineError::AlreadyExists(if task_type == "clone" {
                        format!(
                            "`clone` cannot create a new revision for package \"{package}\" that already exists in repo \"{repo}\"; make subsequent revisions using `copy`"
                        )
                    } else {
                        format!("package \"{package}\" already exists in repository \"{repo}\"")
                    }));
                }
                let (a, b) = (existing.as_str(), package.as_str());
                if b.starts_with(&format!("{a}/")) || a.starts_with(&format!("{b}/")) {
                    return Err(EngineError::Invalid(format!(
                        "package path \"{b}\" conflicts with existing package \"{a}\": packages cannot be nested"
                    )));
                }
            }
            Ok(())
        })
        .unwrap_or(Ok(()))
    }

    async fn clone_source(
        &self,
        namespace: &str,
        package: &PackagePath,
        task: &Task,
    ) -> Result<(PackageFiles, Option<Locator>)> {
        let upstream = task
            .clone
            .as_ref()
            .map(|c| &c.upstream)
            .ok_or_else(|| EngineError::Invalid("clone task has no clone parameters".into()))?;
        let (files, lock) = self.upstream_files(namespace, upstream).await?;
        let files = tasks::clone_files(files, package.package(), lock.as_ref())?;
        Ok((files, lock))
    }

    /// The files of the package `upstream` names (a registered revision or a git location)
    /// as they are there, and the lock that records them.
    pub(crate) async fn upstream_files(
        &self,
        namespace: &str,
        upstream: &porch_core::revision::UpstreamPackage,
    ) -> Result<(PackageFiles, Option<Locator>)> {
        let Some(source_name) = upstream
            .upstream_ref
            .as_ref()
            .map(|r| r.name.as_str())
            .filter(|n| !n.is_empty())
        else {
            return match (&upstream.git, upstream.origin_type.as_str()) {
                (Some(git), "git" | "") => self.fetch_git(namespace, git).await,
                (_, "oci") => Err(EngineError::Invalid(
                    "clone from OCI is not implemented".into(),
                )),
                _ => Err(EngineError::Invalid(
                    "clone task must name an upstream: upstreamRef.name or git".into(),
                )),
            };
        };
        let source = self.get(namespace, source_name)?;
        if source.key.revision == porch_core::names::Revision::PLACEHOLDER {
            return Err(EngineError::Invalid(format!(
                "upstream revision may not be the placeholder package revision {}/{}",
                source.key.repository, source_name
            )));
        }
        let files = self.files_of(&source).await?;
        Ok((files, source.self_lock))
    }

    /// A package in a git repository that is not registered (§9.3), through the fetcher.
    async fn fetch_git(
        &self,
        namespace: &str,
        git: &porch_core::revision::GitUpstream,
    ) -> Result<(PackageFiles, Option<Locator>)> {
        let fetcher = self.fetcher().ok_or_else(|| {
            EngineError::Invalid(
                "clone from a git repository that is not registered is not enabled on this server"
                    .into(),
            )
        })?;
        if git.repo.is_empty() || git.git_ref.is_empty() {
            return Err(EngineError::Invalid(
                "clone.upstreamRef.git needs repo and ref".into(),
            ));
        }
        let fetched = fetcher
            .fetch(UpstreamFetch {
                namespace: namespace.to_owned(),
                repo: git.repo.clone(),
                git_ref: git.git_ref.clone(),
                directory: git.directory.clone(),
                secret_ref: Some(git.secret_ref.name.clone()).filter(|s| !s.is_empty()),
            })
            .await
            .map_err(|e| EngineError::repo(&git.repo, e))?;
        // Go Porch accepts `/dir` (e2e TestCloneLeadingSlash) but records `dir`, as the
        // locks of registered revisions have it.
        let lock = Locator::git(porch_core::revision::GitLock {
            repo: git.repo.clone(),
            directory: git.directory.trim_start_matches('/').to_owned(),
            git_ref: git.git_ref.clone(),
            commit: fetched.commit,
        });
        Ok((fetched.files, Some(lock)))
    }

    async fn edit_source(
        &self,
        id: &RepoId,
        package: &PackagePath,
        task: &Task,
    ) -> Result<(PackageFiles, Option<Locator>)> {
        let source_name = task
            .edit
            .as_ref()
            .map(|e| e.source.name.clone())
            .filter(|n| !n.is_empty())
            .ok_or_else(|| EngineError::Invalid("edit task requires sourceRef.name".into()))?;
        let source = self
            .get(&id.0, &source_name)
            .map_err(|_| not_found(&source_name))?;
        if source.key.repository != id.1 || source.key.package != *package {
            return Err(EngineError::Invalid(format!(
                "source revision must be from same package {}/{}",
                id.1, package
            )));
        }
        if source.key.revision == porch_core::names::Revision::PLACEHOLDER {
            return Err(EngineError::Invalid(format!(
                "source revision may not be the placeholder package revision {}/{}",
                id.1, source_name
            )));
        }
        if !source.lifecycle.is_published() {
            return Err(EngineError::Invalid(
                "source revision must be published".into(),
            ));
        }
        let files = self.files_of(&source).await?;
        Ok((files, source.upstream_lock))
    }
}

impl Engine {
    fn is_deployment(&self, id: &RepoId) -> bool {
        self.with_index(id, |ix| ix.deployment).unwrap_or(false)
    }
}

pub(crate) fn now() -> Timestamp {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    Timestamp(i64::try_from(secs).unwrap_or(i64::MAX))
}
