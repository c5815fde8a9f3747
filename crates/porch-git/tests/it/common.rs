//! Shared fixtures: a served remote, registrations, and listing helpers.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use porch_core::names::{PackagePath, RepositoryName, WorkspaceName};
use porch_core::repository::{
    ListFilter, PackageFiles, PublishContent, PublishRequest, Repository,
};
use porch_core::revision::{Author, InitTask, PackageRevisionMeta, Task};
use porch_git::{GitAuth, GitOptions, GitRepository, MirrorPool, RepoSpec};
use porch_testkit::{GitServer, repos};

pub const USER: &str = "nephio";
pub const PASS: &str = "secret";

pub fn init_tracing() {
    let _ = tracing_subscriber::fmt()
        .with_test_writer()
        .with_env_filter("porch_git=debug")
        .try_init();
}

/// A smart-HTTP server with basic auth over a temporary directory of bare repos.
pub struct Remote {
    pub tmp: tempfile::TempDir,
    pub server: GitServer,
}

impl Remote {
    pub fn new() -> anyhow::Result<Remote> {
        init_tracing();
        let tmp = tempfile::tempdir()?;
        std::fs::create_dir_all(tmp.path().join("srv"))?;
        let server = GitServer::start(tmp.path().join("srv"), Some((USER, PASS)))?;
        Ok(Remote { tmp, server })
    }

    pub fn repo_dir(&self, name: &str) -> PathBuf {
        self.tmp.path().join("srv").join(name)
    }

    /// A new bare repo `name` with one commit on `main` (a README), like Porch's e2e `porch-test`.
    pub fn empty_repo(&self, name: &str) -> anyhow::Result<String> {
        let repo = repos::init_bare(&self.repo_dir(name), "main")?;
        repos::commit_files(
            &repo,
            "main",
            &repos::files(&[("README.md", "# test\n")]),
            "Initial commit",
        )?;
        Ok(self.server.url_for(name))
    }

    /// A data directory of its own (a separate "process").
    pub fn data_dir(&self, name: &str) -> PathBuf {
        self.tmp.path().join("data").join(name)
    }
}

pub fn repo_name(s: &str) -> RepositoryName {
    RepositoryName::new(s).expect("valid test repository name")
}

pub fn spec(name: &str, url: &str) -> RepoSpec {
    let mut s = RepoSpec::new(repo_name(name), url);
    s.auth = GitAuth::Basic {
        username: USER.into(),
        password: PASS.into(),
    };
    s
}

pub fn open(data_dir: &Path, spec: RepoSpec) -> anyhow::Result<(MirrorPool, Arc<GitRepository>)> {
    let opts = GitOptions::new(data_dir);
    let pool = MirrorPool::new(data_dir);
    let repo = GitRepository::open(&pool, &opts, spec)?;
    Ok((pool, repo))
}

pub fn open_with(
    opts: GitOptions,
    spec: RepoSpec,
) -> anyhow::Result<(MirrorPool, Arc<GitRepository>)> {
    let pool = MirrorPool::new(&opts.data_dir);
    let repo = GitRepository::open(&pool, &opts, spec)?;
    Ok((pool, repo))
}

pub fn pkg_files(name: &str, data: &str) -> PackageFiles {
    let kptfile = format!(
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {name}\ninfo:\n  description: test package\n"
    );
    BTreeMap::from([
        ("Kptfile".to_owned(), kptfile.into_bytes()),
        (
            "cm.yaml".to_owned(),
            format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  v: {data:?}\n"
            )
            .into_bytes(),
        ),
    ])
}

pub fn publish_req(pkg: &str, ws: &str) -> PublishRequest {
    PublishRequest {
        package: PackagePath::new(pkg).expect("valid package"),
        workspace: WorkspaceName::new(ws).expect("valid workspace"),
        content: PublishContent::Files {
            files: pkg_files(pkg.rsplit('/').next().unwrap_or(pkg), ws),
            task: Some(Task::init(InitTask {
                description: format!("{pkg} description"),
                ..Default::default()
            })),
        },
        published_by: Author {
            name: "alice".into(),
            email: "alice@example.com".into(),
        },
    }
}

pub async fn list(repo: &GitRepository) -> anyhow::Result<Vec<PackageRevisionMeta>> {
    Ok(repo.list(ListFilter::default()).await?)
}

/// `<package> <revision> <workspace> <lifecycle>` per revision, sorted.
pub fn summary(metas: &[PackageRevisionMeta]) -> Vec<String> {
    let mut v: Vec<String> = metas
        .iter()
        .map(|m| {
            format!(
                "{} {} {} {}",
                m.key.package, m.key.revision, m.key.workspace, m.lifecycle
            )
        })
        .collect();
    v.sort();
    v
}

/// Full listing for snapshots, without the server's port.
pub fn describe(metas: &[PackageRevisionMeta]) -> String {
    let mut out = String::new();
    for m in metas {
        let lock = m.self_lock.git.clone().unwrap_or_default();
        out.push_str(&format!(
            "{name}\n  package={pkg} revision={rev} workspace={ws} lifecycle={lc}\n  selfLock: dir={dir} ref={r} commit={c}\n  publishedBy={by:?} publishTimestamp={ts:?}\n",
            name = m.key.name(),
            pkg = m.key.package,
            rev = m.key.revision,
            ws = m.key.workspace,
            lc = m.lifecycle,
            dir = lock.directory,
            r = lock.git_ref,
            c = lock.commit,
            by = m.published_by,
            ts = m.publish_timestamp.map(|t| t.to_rfc3339()),
        ));
        if let Some(u) = m.upstream_lock.as_ref().and_then(|u| u.git.as_ref()) {
            out.push_str(&format!(
                "  upstreamLock: {} {} {} {}\n",
                u.repo, u.directory, u.git_ref, u.commit
            ));
        }
    }
    out
}
