//! The `RepositoryOpener` backed by porch-git: registers the repository on a shared mirror
//! pool and with the engine (whose first sync the Ready condition reports), and keeps it
//! synced on its schedule, feeding change reports to the engine, until the Repository is
//! deleted or changed. A Repository proves its own credentials against the remote before it
//! is registered (mirrors are shared by URL), and local URLs must be under an allowed
//! directory (`porch_resources::local_repos`).

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use porch_core::names::RepositoryName;
use porch_core::repository::Repository as _;
use porch_engine::Engine;
use porch_git::{GitAuth, GitOptions, GitRepository, MirrorPool, RepoSpec, SyncLoop};

use porch_resources::opener::{Credentials, Opened, RepoState, RepositoryOpener, RepositoryTarget};

type Key = (String, String);

/// Opens git repositories through porch-git.
pub struct GitOpener {
    pool: MirrorPool,
    options: GitOptions,
    engine: Engine,
    open: Mutex<HashMap<Key, (Arc<GitRepository>, SyncLoop)>>,
    /// On a cluster, whether this replica leads (it alone writes Repository status).
    leading: Option<tokio::sync::watch::Receiver<bool>>,
}

impl GitOpener {
    /// Mirrors live under `<data_dir>/git`; `timeout` bounds each network command.
    pub fn new(data_dir: &Path, engine: Engine, timeout: std::time::Duration) -> Self {
        let mut options = GitOptions::new(data_dir);
        options.network_timeout = timeout;
        Self {
            pool: MirrorPool::new(data_dir),
            options,
            engine,
            open: Mutex::new(HashMap::new()),
            leading: None,
        }
    }

    /// As one replica of a cluster: Repository status is written while `leading` is true.
    pub fn with_leader(mut self, leading: tokio::sync::watch::Receiver<bool>) -> Self {
        self.leading = Some(leading);
        self
    }

    fn spec(target: &RepositoryTarget) -> Result<RepoSpec, String> {
        let git = target.spec.git.as_ref().ok_or("spec.git is missing")?;
        let name = RepositoryName::new(&target.name).map_err(|e| e.to_string())?;
        let mut spec = RepoSpec::new(name, git.repo.clone());
        if let Some(b) = git.branch.as_ref().filter(|b| !b.is_empty()) {
            spec.branch = b.clone();
        }
        spec.directory = git.directory.clone().unwrap_or_default();
        spec.create_branch = git.create_branch.unwrap_or(false);
        spec.sync_schedule = target
            .spec
            .sync
            .as_ref()
            .and_then(|s| s.schedule.clone())
            .filter(|s| !s.is_empty());
        spec.auth = match &target.credentials {
            None => GitAuth::None,
            Some(Credentials::Basic { username, password }) => GitAuth::Basic {
                username: username.clone(),
                password: password.clone(),
            },
            Some(Credentials::Bearer(token)) => GitAuth::Bearer {
                token: token.clone(),
            },
        };
        Ok(spec)
    }
}

/// The image a guardrail names: its `image`, or the image of the built-in or FunctionConfig
/// `Function` its `functionRef` names (`builtin:<name>:<version>`).
fn guardrail_image(f: &porch_api::FunctionEval) -> Result<String, String> {
    if let Some(image) = f.image.as_ref().filter(|i| !i.is_empty()) {
        return Ok(image.clone());
    }
    let name = f
        .function_ref
        .as_ref()
        .map(|r| r.name.as_str())
        .ok_or("a mutator or validator names neither image nor functionRef")?;
    match name.splitn(3, ':').collect::<Vec<_>>()[..] {
        [repo, function, version] if repo == "builtin" || repo == "functionconfig" => {
            Ok(format!("{function}:{version}"))
        }
        _ => Err(format!(
            "functionRef {name:?}: only built-in and FunctionConfig functions can be referenced; name the image instead"
        )),
    }
}

fn guardrails(spec: &porch_api::RepositorySpec) -> Result<porch_engine::Guardrails, String> {
    let convert = |list: &[porch_api::FunctionEval]| {
        list.iter()
            .map(|f| {
                Ok(porch_engine::GuardrailFunction {
                    image: guardrail_image(f)?,
                    config_map: f.config_map.clone().unwrap_or_default(),
                })
            })
            .collect::<Result<Vec<_>, String>>()
    };
    Ok(porch_engine::Guardrails {
        mutators: convert(&spec.mutators)?,
        validators: convert(&spec.validators)?,
    })
}

#[async_trait::async_trait]
impl RepositoryOpener for GitOpener {
    async fn open(&self, target: &RepositoryTarget) -> Result<Opened, String> {
        if target.spec.type_.as_deref() == Some("oci") {
            // A registry of function images holds no packages: its images are listed as
            // `functions` when read.
            if target.spec.content.as_deref() == Some("Function") {
                return Ok(Opened::default());
            }
            return Err("OCI package repositories are not supported by this server".into());
        }
        let guardrails = guardrails(&target.spec)?;
        let key = (target.namespace.clone(), target.name.clone());
        // A changed spec replaces the previous registration (and stops its sync loop).
        if let Ok(mut open) = self.open.lock() {
            open.remove(&key);
        }
        let spec = Self::spec(target)?;
        if let Some(problem) = porch_resources::local_repos::problem(&spec.url) {
            return Err(problem);
        }
        let repo =
            GitRepository::open(&self.pool, &self.options, spec).map_err(|e| e.to_string())?;
        // Before anything of a shared mirror is served: this Repository's own credentials.
        repo.check_access()
            .await
            .map_err(|e| format!("cannot access the repository with its credentials: {e}"))?;
        let name = repo.name().clone();
        self.engine.unregister(&target.namespace, &name);
        let options = porch_engine::RegisterOptions {
            deployment: target.spec.deployment.unwrap_or(false),
            guardrails,
        };
        self.engine
            .register_with(&target.namespace, repo.clone(), options)
            .await
            .map_err(|e| e.to_string())?;
        if let Some(status) = self.engine.repository_status(&target.namespace, &name)
            && !status.ready
        {
            self.engine.unregister(&target.namespace, &name);
            return Err(status.message);
        }
        let status = repo.status();
        let (engine, namespace) = (self.engine.clone(), target.namespace.clone());
        let sync = porch_git::spawn_sync_loop(
            repo.clone(),
            self.options.default_sync_period,
            Arc::new(move |name, report| engine.apply_change_report(&namespace, name, report)),
        )
        .map_err(|e| e.to_string())?;
        if let Ok(mut open) = self.open.lock() {
            open.insert(key, (repo, sync));
        }
        Ok(Opened {
            git_commit_hash: status.branch_commit,
            package_count: i64::try_from(status.package_count).ok(),
        })
    }

    async fn close(&self, namespace: &str, name: &str) {
        if let Ok(mut open) = self.open.lock() {
            // Dropping the SyncLoop aborts it.
            open.remove(&(namespace.to_string(), name.to_string()));
        }
        if let Ok(name) = RepositoryName::discovered(name) {
            self.engine.unregister(namespace, &name);
        }
    }

    async fn sync_now(&self, namespace: &str, name: &str) -> Result<(), String> {
        let repo = self
            .open
            .lock()
            .ok()
            .and_then(|open| {
                open.get(&(namespace.to_string(), name.to_string()))
                    .map(|(repo, _)| repo.clone())
            })
            .ok_or("the repository is not open")?;
        let report = repo.sync().await.map_err(|e| e.to_string())?;
        if !report.is_empty() {
            self.engine
                .apply_change_report(namespace, repo.name(), report);
        }
        Ok(())
    }

    fn writes_status(&self) -> bool {
        self.leading.as_ref().is_none_or(|l| *l.borrow())
    }

    fn state(&self, namespace: &str, name: &str) -> Option<RepoState> {
        let status = self
            .open
            .lock()
            .ok()?
            .get(&(namespace.to_string(), name.to_string()))?
            .0
            .status();
        Some(RepoState {
            ready: status.ready,
            message: status.message,
            last_sync: status.last_sync.map(|t| t.to_rfc3339()),
            git_commit_hash: status.branch_commit,
            package_count: i64::try_from(status.package_count).ok(),
        })
    }
}
