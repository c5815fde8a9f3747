//! [`GitRepository`]: the porch-core `Repository` port over a shared local mirror.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{SystemTime, UNIX_EPOCH};

use porch_core::names::RepositoryName;
use porch_core::repository::{
    BoxFuture, ChangeReport, DraftWrite, ListFilter, PackageFiles, PublishRequest, Repository,
    RepositoryError, RepositoryStatus,
};
use porch_core::revision::{PackageRevisionKey, PackageRevisionMeta, Timestamp};

use crate::cli::Remote;
use crate::discovery::{Scope, Snapshot};
use crate::error::GitError;
use crate::mirror::{Mirror, MirrorPool, MirrorState};
use crate::spec::{GitOptions, RepoSpec};
use crate::worker::{self, OpContext};
use crate::{objects, publish, write};

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// One registered git repository. Cheap to share (`Arc`); all git work goes to the
/// mirror's worker thread, reads of the listing never wait for it.
pub struct GitRepository {
    name: RepositoryName,
    mirror: Arc<Mirror>,
    ctx: OpContext,
    spec: RepoSpec,
    snapshot: RwLock<Option<Arc<Snapshot>>>,
    status: Mutex<RepositoryStatus>,
}

impl std::fmt::Debug for GitRepository {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitRepository")
            .field("name", &self.name)
            .field("url", &crate::redact::redact_url(&self.spec.url))
            .finish()
    }
}

impl GitRepository {
    /// Registers `spec`: opens (or creates) the local mirror for its URL. No network I/O:
    /// the first [`Repository::sync`] or [`Repository::list`] fetches.
    pub fn open(
        pool: &MirrorPool,
        opts: &GitOptions,
        spec: RepoSpec,
    ) -> Result<Arc<Self>, GitError> {
        if spec.branch.is_empty()
            || spec.branch.contains("..")
            || spec.branch.starts_with('/')
            || spec.branch.starts_with('-')
            || spec.branch.contains(char::is_whitespace)
        {
            return Err(GitError::Invalid(format!(
                "branch name {:?} invalid",
                spec.branch
            )));
        }
        crate::spec::check_url(&spec.url)?;
        let mirror = pool.get(&spec.url)?;
        let ctx = OpContext {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            scope: Scope {
                repo: spec.name.clone(),
                // Shown in every revision's selfLock (and from there in downstream
                // Kptfiles): never with its password.
                url: crate::redact::redact_url(&spec.url),
                branch: spec.branch.clone(),
                dir: spec.dir().to_owned(),
            },
            remote: Remote {
                url: spec.url.clone(),
                auth: spec.auth.clone(),
                timeout: opts.network_timeout,
            },
            create_branch: spec.create_branch,
            author: spec.author.clone(),
            publish_retries: opts.publish_retries,
        };
        Ok(Arc::new(GitRepository {
            name: spec.name.clone(),
            mirror,
            ctx,
            spec,
            snapshot: RwLock::new(None),
            status: Mutex::new(RepositoryStatus {
                message: "Repository reconciliation in progress".into(),
                ..Default::default()
            }),
        }))
    }

    /// The registration.
    pub fn spec(&self) -> &RepoSpec {
        &self.spec
    }

    /// Directory of the local bare mirror.
    pub fn mirror_path(&self) -> &Path {
        self.mirror.path()
    }

    /// Proves this registration's own credentials against the remote (one ref
    /// advertisement). The mirror is shared by every registration of the URL: without this,
    /// a registration with no or wrong credentials would serve what another one fetched.
    /// (Every sync proves them again: its fetch asks the remote with this registration's
    /// credentials before anything moves.)
    pub async fn check_access(&self) -> Result<(), GitError> {
        let remote = self.ctx.remote.clone();
        self.mirror
            .run(move |state| crate::transport::ls_remote(state, &remote).map(|_| ()))
            .await?
    }

    /// Runs `f` on the mirror worker and publishes the registration's snapshot afterwards.
    async fn op<R, F>(&self, f: F) -> Result<R, GitError>
    where
        R: Send + 'static,
        F: FnOnce(&mut MirrorState, &OpContext) -> Result<R, GitError> + Send + 'static,
    {
        let ctx = self.ctx.clone();
        let (r, snap) = self
            .mirror
            .run(move |state| {
                let r = f(state, &ctx);
                let snap = state
                    .indexes
                    .get(&ctx.id)
                    .filter(|i| i.synced)
                    .map(|i| Arc::clone(&i.snapshot));
                (r, snap)
            })
            .await?;
        if let Some(s) = snap {
            *self
                .snapshot
                .write()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(s);
        }
        r
    }

    fn current(&self) -> Option<Arc<Snapshot>> {
        self.snapshot
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    async fn ensure_snapshot(&self) -> Result<Arc<Snapshot>, RepositoryError> {
        if let Some(s) = self.current() {
            return Ok(s);
        }
        self.sync().await?;
        self.current().ok_or_else(|| {
            RepositoryError::Unavailable(format!("repository {} has never synced", self.name))
        })
    }

    fn record_sync(&self, result: &Result<ChangeReport, GitError>) {
        let mut st = self
            .status
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match result {
            Ok(_) => {
                let snap = self.current();
                st.ready = true;
                st.message = "Repository Ready".into();
                st.last_sync = Some(now());
                st.branch_commit = snap
                    .as_ref()
                    .and_then(|s| s.branch_head)
                    .map(|o| o.to_string());
                st.package_count = snap.map(|s| s.entries.len()).unwrap_or(0);
            }
            Err(e) => {
                st.ready = false;
                st.message = e.to_string();
            }
        }
    }

    async fn with_tasks(
        &self,
        metas: Vec<PackageRevisionMeta>,
        snap: Arc<Snapshot>,
    ) -> Result<Vec<PackageRevisionMeta>, GitError> {
        self.op(move |state, _| {
            let MirrorState {
                repo,
                caches,
                tasks,
                ..
            } = state;
            metas
                .into_iter()
                .map(|mut m| {
                    if let Some(e) = snap.entries.get(&m.key) {
                        m.tasks = crate::tasks::load_tasks(repo, caches, tasks, e)?;
                    }
                    Ok(m)
                })
                .collect()
        })
        .await
    }
}

fn now() -> Timestamp {
    Timestamp(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0),
    )
}

impl Drop for GitRepository {
    fn drop(&mut self) {
        let id = self.ctx.id;
        self.mirror.spawn(move |state| {
            state.indexes.remove(&id);
        });
    }
}

impl Repository for GitRepository {
    fn name(&self) -> &RepositoryName {
        &self.name
    }

    fn git_location(&self) -> Option<(String, String)> {
        let spec = self.spec();
        // As in the locks of its git revisions: a password in the URL is never shown.
        Some((
            crate::redact::redact_url(&spec.url),
            spec.directory.trim_matches('/').to_owned(),
        ))
    }

    fn list(
        &self,
        filter: ListFilter,
    ) -> BoxFuture<'_, Result<Vec<PackageRevisionMeta>, RepositoryError>> {
        Box::pin(async move {
            let snap = self.ensure_snapshot().await?;
            let metas: Vec<PackageRevisionMeta> = snap
                .entries
                .values()
                .map(|e| &e.meta)
                .filter(|m| filter.matches(m))
                .cloned()
                .collect();
            if filter.with_tasks {
                return Ok(self.with_tasks(metas, snap).await?);
            }
            Ok(metas)
        })
    }

    fn get(
        &self,
        key: PackageRevisionKey,
    ) -> BoxFuture<'_, Result<PackageRevisionMeta, RepositoryError>> {
        Box::pin(async move {
            let snap = self.ensure_snapshot().await?;
            let meta = publish::entry(&snap, &key)?.meta.clone();
            let mut v = self.with_tasks(vec![meta], snap).await?;
            v.pop()
                .ok_or_else(|| RepositoryError::NotFound(key.name().to_string()))
        })
    }

    fn read_files(
        &self,
        key: PackageRevisionKey,
    ) -> BoxFuture<'_, Result<PackageFiles, RepositoryError>> {
        Box::pin(async move {
            let snap = self.ensure_snapshot().await?;
            let tree = publish::entry(&snap, &key)?.tree;
            Ok(self
                .op(move |state, _| objects::read_tree_files(&state.repo, tree))
                .await?)
        })
    }

    fn publish(
        &self,
        req: PublishRequest,
    ) -> BoxFuture<'_, Result<PackageRevisionMeta, RepositoryError>> {
        Box::pin(async move {
            Ok(self
                .op(move |state, ctx| publish::publish(state, ctx, &req))
                .await?
                .meta)
        })
    }

    fn delete(
        &self,
        key: PackageRevisionKey,
        expected_commit: Option<String>,
    ) -> BoxFuture<'_, Result<(), RepositoryError>> {
        Box::pin(async move {
            Ok(self
                .op(move |state, ctx| write::delete(state, ctx, &key, expected_commit.as_deref()))
                .await?)
        })
    }

    fn set_deletion_proposed(
        &self,
        key: PackageRevisionKey,
        proposed: bool,
    ) -> BoxFuture<'_, Result<PackageRevisionMeta, RepositoryError>> {
        Box::pin(async move {
            Ok(self
                .op(move |state, ctx| write::set_deletion_proposed(state, ctx, &key, proposed))
                .await?
                .meta)
        })
    }

    fn write_draft(
        &self,
        req: DraftWrite,
    ) -> BoxFuture<'_, Result<PackageRevisionMeta, RepositoryError>> {
        Box::pin(async move {
            Ok(self
                .op(move |state, ctx| write::write_draft(state, ctx, &req))
                .await?
                .meta)
        })
    }

    fn sync(&self) -> BoxFuture<'_, Result<ChangeReport, RepositoryError>> {
        Box::pin(async move {
            let result = self.op(worker::sync).await;
            self.record_sync(&result);
            if let Err(e) = &result {
                tracing::warn!(repository = %self.name, error = %e, "sync failed; repository not ready");
            }
            Ok(result?)
        })
    }

    fn status(&self) -> RepositoryStatus {
        self.status
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}
