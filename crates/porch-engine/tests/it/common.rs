//! Fixtures: bare remotes, an engine over redb + porch-git, helpers.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use krm_functions::Builtins;
use porch_core::names::RepositoryName;
use porch_core::revision::{Author, InitTask, Task};
use porch_core::store::{ListQuery, MetadataStore};
use porch_engine::{
    CreateRequest, Engine, EngineOptions, ListOptions, PackageRevision, RegisterOptions,
};
use porch_git::{GitOptions, GitRepository, MirrorPool, RepoSpec};
use porch_store::{RedbStore, StoreOptions};
use porch_testkit::repos;

pub const NS: &str = "default";

pub fn init_tracing() {
    let _ = tracing_subscriber::fmt()
        .with_test_writer()
        .with_env_filter("porch_engine=debug")
        .try_init();
}

/// A temporary world: remotes under `remotes/`, the server data under `data/`.
pub struct World {
    pub tmp: tempfile::TempDir,
    pub store: Arc<RedbStore>,
    pub engine: Engine,
    pool: MirrorPool,
}

impl World {
    pub fn new() -> anyhow::Result<World> {
        Self::with_options(EngineOptions::default())
    }

    /// A world whose engine mirrors drafts to git (`--push-drafts-to-git`).
    pub fn pushing() -> anyhow::Result<World> {
        Self::with_options(EngineOptions {
            push_drafts_to_git: true,
            ..EngineOptions::default()
        })
    }

    pub fn with_options(options: EngineOptions) -> anyhow::Result<World> {
        init_tracing();
        let tmp = tempfile::tempdir()?;
        std::fs::create_dir_all(tmp.path().join("data"))?;
        let store = Arc::new(RedbStore::open(
            &tmp.path().join("data/store.redb"),
            StoreOptions::default(),
        )?);
        let engine = Engine::with_options(store.clone(), Arc::new(Builtins), options);
        let pool = MirrorPool::new(&tmp.path().join("data"));
        Ok(World {
            tmp,
            store,
            engine,
            pool,
        })
    }

    pub fn remote_dir(&self, name: &str) -> PathBuf {
        self.tmp.path().join("remotes").join(name)
    }

    /// A bare remote with a README on `main`; returns its `file://` URL.
    pub fn empty_remote(&self, name: &str) -> anyhow::Result<String> {
        let dir = self.remote_dir(name);
        let repo = repos::init_bare(&dir, "main")?;
        repos::commit_files(
            &repo,
            "main",
            &repos::files(&[("README.md", "# test\n")]),
            "init",
        )?;
        Ok(url(&dir))
    }

    /// Registers `url` as repository `name` in [`NS`].
    pub async fn register(&self, name: &str, url: &str) -> anyhow::Result<Arc<GitRepository>> {
        self.register_with(name, url, RegisterOptions::default())
            .await
    }

    /// Registers `url` as repository `name` in [`NS`] with `options`.
    pub async fn register_with(
        &self,
        name: &str,
        url: &str,
        options: RegisterOptions,
    ) -> anyhow::Result<Arc<GitRepository>> {
        let spec = RepoSpec::new(RepositoryName::new(name)?, url);
        let repo = GitRepository::open(
            &self.pool,
            &GitOptions::new(self.tmp.path().join("data")),
            spec,
        )?;
        self.engine.register_with(NS, repo.clone(), options).await?;
        Ok(repo)
    }

    /// A second engine on the same store with `url` registered as `name` (the first engine's
    /// memory is not shared), as after a restart.
    pub async fn restart(&self, name: &str, url: &str) -> anyhow::Result<Engine> {
        self.restart_with(name, url, EngineOptions::default()).await
    }

    /// [`World::restart`] with engine `options`.
    pub async fn restart_with(
        &self,
        name: &str,
        url: &str,
        options: EngineOptions,
    ) -> anyhow::Result<Engine> {
        let engine = Engine::with_options(self.store.clone(), Arc::new(Builtins), options);
        let data = self.tmp.path().join(format!("data-restart-{name}"));
        let spec = RepoSpec::new(RepositoryName::new(name)?, url);
        let repo = GitRepository::open(&MirrorPool::new(&data), &GitOptions::new(&data), spec)?;
        engine.register(NS, repo).await?;
        Ok(engine)
    }

    /// Number of drafts in the store.
    pub fn stored_drafts(&self) -> anyhow::Result<usize> {
        Ok(self
            .store
            .list(&ListQuery {
                resource: "engine.porch.kpt.dev/drafts".into(),
                ..ListQuery::default()
            })?
            .items
            .len())
    }

    pub fn list(&self) -> Vec<PackageRevision> {
        self.engine.list(&ListOptions::default())
    }
}

/// Events received so far, as `<TYPE> <name> <lifecycle>`.
pub fn drain(rx: &mut tokio::sync::broadcast::Receiver<porch_engine::EngineEvent>) -> Vec<String> {
    let mut seen = Vec::new();
    while let Ok(e) = rx.try_recv() {
        seen.push(format!(
            "{} {} {}",
            e.event_type.as_str(),
            e.revision.name(),
            e.revision.lifecycle
        ));
    }
    seen
}

pub fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

pub fn url(dir: &Path) -> String {
    format!("file://{}", dir.display())
}

/// Commits `files` on `main` of the bare repo at `dir` and tags the commit `tag`.
pub fn commit_and_tag(dir: &Path, files: &[(&str, &str)], tag: &str) -> anyhow::Result<()> {
    let repo = git2::Repository::open_bare(dir)?;
    let head = repo.find_reference("refs/heads/main")?.peel_to_commit()?;
    // Keep what is on main and add/replace the given files.
    let mut all: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    head.tree()?
        .walk(git2::TreeWalkMode::PreOrder, |root, entry| {
            if let Some(blob) = entry.to_object(&repo).ok().and_then(|o| o.into_blob().ok()) {
                all.insert(
                    format!("{root}{}", entry.name().unwrap_or_default()),
                    blob.content().to_vec(),
                );
            }
            git2::TreeWalkResult::Ok
        })?;
    for (p, c) in files {
        all.insert((*p).to_owned(), c.as_bytes().to_vec());
    }
    let oid = repos::commit_files(&repo, "main", &all, &format!("add {tag}"))?;
    repo.reference(&format!("refs/tags/{tag}"), oid, false, "tag")?;
    Ok(())
}

pub fn kptfile(name: &str) -> String {
    format!(
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {name}\ninfo:\n  description: {name} package\n"
    )
}

pub fn init_req(repo: &str, package: &str, workspace: &str) -> CreateRequest {
    CreateRequest {
        namespace: NS.into(),
        repository: repo.into(),
        package: package.into(),
        workspace: workspace.into(),
        tasks: vec![Task::init(InitTask {
            description: format!("{package} description"),
            ..InitTask::default()
        })],
        ..CreateRequest::default()
    }
}

/// Proposes and approves revision `name` as alice.
pub async fn publish(e: &Engine, name: &str) -> anyhow::Result<()> {
    use porch_core::lifecycle::{Endpoint, Lifecycle};
    e.update_lifecycle(
        NS,
        name,
        None,
        Lifecycle::Proposed,
        Endpoint::Update,
        alice(),
    )
    .await?;
    e.update_lifecycle(
        NS,
        name,
        None,
        Lifecycle::Published,
        Endpoint::Approval,
        alice(),
    )
    .await?;
    Ok(())
}

pub fn alice() -> Author {
    Author {
        name: "alice".into(),
        email: "alice@example.com".into(),
    }
}

/// `<name> rev=<n> <lifecycle> latest=<bool>` per revision, in listing order.
pub fn summary(items: &[PackageRevision]) -> Vec<String> {
    items
        .iter()
        .map(|p| {
            format!(
                "{} rev={} {} latest={}",
                p.name(),
                p.key.revision,
                p.lifecycle,
                p.labels
                    .get(porch_engine::LATEST_REVISION_LABEL)
                    .map_or("false", String::as_str)
            )
        })
        .collect()
}

/// Ref names of the remote.
pub fn remote_refs(dir: &Path) -> anyhow::Result<Vec<String>> {
    Ok(repos::list_refs(dir)?.into_iter().map(|(r, _)| r).collect())
}
