//! Clone from a git repository that is not registered (spec §9.3) through porch-git's
//! `GitUpstreamFetcher`, and clones into deployment repositories (package context).

use std::sync::Arc;

use porch_core::ErrorKind;
use porch_core::revision::{CloneTask, GitUpstream, RevisionRef, Task, UpstreamPackage};
use porch_engine::{CreateRequest, RegisterOptions};
use porch_git::GitUpstreamFetcher;

use crate::common::{NS, World, commit_and_tag, init_req, kptfile};
use crate::create::publish_init;

fn git_clone(repo: &str, package: &str, url: &str, git_ref: &str, dir: &str) -> CreateRequest {
    CreateRequest {
        tasks: vec![Task {
            task_type: "clone".into(),
            clone: Some(CloneTask {
                upstream: UpstreamPackage {
                    origin_type: "git".into(),
                    git: Some(GitUpstream {
                        repo: url.into(),
                        git_ref: git_ref.into(),
                        directory: dir.into(),
                        ..GitUpstream::default()
                    }),
                    upstream_ref: None,
                },
                ..Default::default()
            }),
            ..Task::default()
        }],
        ..init_req(repo, package, "ws")
    }
}

const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: v\n";

#[tokio::test]
async fn clone_from_a_raw_git_url_resolves_package_tags_and_branches() -> anyhow::Result<()> {
    let w = World::new()?;
    let up = w.empty_remote("up.git")?;
    commit_and_tag(
        &w.remote_dir("up.git"),
        &[
            ("blueprints/basens/Kptfile", &kptfile("basens")),
            ("blueprints/basens/cm.yaml", CM),
        ],
        "blueprints/basens/v1",
    )?;
    let url = w.empty_remote("r.git")?;
    w.register("r", &url).await?;

    let err = w
        .engine
        .create(git_clone("r", "a", &up, "v1", "blueprints/basens"))
        .await
        .expect_err("no fetcher configured");
    assert_eq!(err.kind(), ErrorKind::Invalid);
    w.engine
        .set_upstream_fetcher(Arc::new(GitUpstreamFetcher::new(w.tmp.path().join("data"))));

    // `<dir>/<ref>` (a package tag), with a leading slash in the directory.
    let a = w
        .engine
        .create(git_clone("r", "a", &up, "v1", "/blueprints/basens"))
        .await?;
    let lock = a
        .upstream_lock
        .as_ref()
        .and_then(|l| l.git.clone())
        .expect("upstream lock");
    assert_eq!(
        (lock.repo.as_str(), lock.git_ref.as_str()),
        (up.as_str(), "v1")
    );
    assert_eq!(lock.commit.len(), 40);
    let (_, files) = w.engine.read_resources(NS, "r.a.ws").await?;
    // Copied with kpt's merge keys added (spec §9.3).
    assert_eq!(
        String::from_utf8_lossy(&files["cm.yaml"]),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: # kpt-merge: /cm\n  name: cm\n  annotations:\n    internal.kpt.dev/upstream-identifier: '|ConfigMap|default|cm'\ndata:\n  k: v\n"
    );
    let kf = String::from_utf8_lossy(&files["Kptfile"]).into_owned();
    assert!(kf.contains("name: a"), "{kf}");
    assert!(kf.contains("upstreamLock:"), "{kf}");
    assert!(kf.contains(&lock.commit), "{kf}");

    // `<ref>` (a branch).
    let b = w
        .engine
        .create(git_clone("r", "b", &up, "main", "blueprints/basens"))
        .await?;
    assert!(b.upstream_lock.is_some());

    // Missing ref or directory: an error and nothing behind.
    let before = w.list().len();
    for (r, d) in [("nope", "blueprints/basens"), ("main", "missing")] {
        let err = w
            .engine
            .create(git_clone("r", "c", &up, r, d))
            .await
            .expect_err("not found");
        assert_eq!(err.kind(), ErrorKind::NotFound, "{err}");
    }
    let mut secret = git_clone("r", "c", &up, "v1", "blueprints/basens");
    if let Some(g) = secret.tasks[0]
        .clone
        .as_mut()
        .and_then(|c| c.upstream.git.as_mut())
    {
        g.secret_ref.name = "creds".into();
    }
    let err = w.engine.create(secret).await.expect_err("no resolver");
    assert_eq!(err.kind(), ErrorKind::Invalid, "{err}");
    assert!(err.to_string().contains("creds"), "{err}");
    assert_eq!(w.list().len(), before);
    assert_eq!(w.stored_drafts()?, 2);
    let leftovers = std::fs::read_dir(w.tmp.path().join("data/upstream"))?.count();
    assert_eq!(leftovers, 0, "temporary clones are removed");

    let err = w
        .engine
        .create(CreateRequest {
            tasks: vec![Task {
                task_type: "clone".into(),
                clone: Some(CloneTask {
                    upstream: UpstreamPackage {
                        origin_type: "oci".into(),
                        ..UpstreamPackage::default()
                    },
                    ..Default::default()
                }),
                ..Task::default()
            }],
            ..init_req("r", "d", "ws")
        })
        .await
        .expect_err("oci");
    assert_eq!(err.to_string(), "clone from OCI is not implemented");
    Ok(())
}

/// Registers an empty remote `<name>.git` as deployment repository `name`.
async fn register_deployment(w: &World, name: &str) -> anyhow::Result<()> {
    let url = w.empty_remote(&format!("{name}.git"))?;
    let options = RegisterOptions {
        deployment: true,
        ..Default::default()
    };
    w.register_with(name, &url, options).await?;
    Ok(())
}

#[tokio::test]
async fn clone_into_a_deployment_repository_writes_the_package_context() -> anyhow::Result<()> {
    let w = World::new()?;
    let bp = w.empty_remote("bp.git")?;
    w.register("bp", &bp).await?;
    register_deployment(&w, "dep").await?;
    let source = publish_init(&w.engine, "bp", "basens", "v1").await?;
    assert!(!w.engine.get(NS, &source)?.deployment);
    let c = w
        .engine
        .create(CreateRequest {
            tasks: vec![Task {
                task_type: "clone".into(),
                clone: Some(CloneTask {
                    upstream: UpstreamPackage {
                        upstream_ref: Some(RevisionRef { name: source }),
                        ..UpstreamPackage::default()
                    },
                    ..Default::default()
                }),
                ..Task::default()
            }],
            ..init_req("dep", "sites/edge1", "ws")
        })
        .await?;
    assert!(c.deployment);
    let (_, files) = w.engine.read_resources(NS, "dep.sites.edge1.ws").await?;
    let ctx = String::from_utf8_lossy(&files["package-context.yaml"]).into_owned();
    assert!(ctx.contains("name: edge1"), "{ctx}");
    assert!(ctx.contains("package-path: sites/edge1"), "{ctx}");
    // The flag follows the Repository.
    let mut events = w.engine.subscribe();
    w.engine.set_repository_options(
        NS,
        &porch_core::names::RepositoryName::new("dep")?,
        RegisterOptions {
            deployment: false,
            ..Default::default()
        },
    )?;
    assert!(!w.engine.get(NS, "dep.sites.edge1.ws")?.deployment);
    assert_eq!(
        crate::common::drain(&mut events),
        vec!["MODIFIED dep.sites.edge1.ws Draft"]
    );
    Ok(())
}

/// Porch runs kpt's package-context generator over the whole clone: a `kptfile.kpt.dev`
/// ConfigMap the blueprint carried (in any file) is dropped, and every Kptfile, a
/// sub-package's too, gets its own `package-context.yaml` with the clone's path.
#[tokio::test]
async fn deployment_context_is_generated_for_every_kptfile() -> anyhow::Result<()> {
    let w = World::new()?;
    let up = w.empty_remote("blueprints.git")?;
    let stale = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kptfile.kpt.dev\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\ndata:\n  name: example\n";
    commit_and_tag(
        &w.remote_dir("blueprints.git"),
        &[
            ("app/Kptfile", &kptfile("app")),
            ("app/context.yaml", stale),
            ("app/db/Kptfile", &kptfile("db")),
            (
                "app/db/cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n",
            ),
        ],
        "app/v1",
    )?;
    register_deployment(&w, "dep").await?;
    w.engine
        .set_upstream_fetcher(Arc::new(GitUpstreamFetcher::new(w.tmp.path().join("data"))));
    w.engine
        .create(git_clone("dep", "sites/edge2", &up, "v1", "app"))
        .await?;
    let (_, files) = w.engine.read_resources(NS, "dep.sites.edge2.ws").await?;
    assert!(!files.contains_key("context.yaml"), "{:?}", files.keys());
    let text = |p: &str| String::from_utf8_lossy(&files[p]).into_owned();
    let root = text("package-context.yaml");
    assert!(
        root.ends_with("data:\n  name: edge2\n  package-path: sites/edge2\n"),
        "{root}"
    );
    let sub = text("db/package-context.yaml");
    assert!(
        sub.ends_with("data:\n  name: db\n  package-path: sites/edge2\n"),
        "{sub}"
    );
    assert!(text("db/cm.yaml").contains("name: cm"));
    Ok(())
}
