//! Moving a downstream package to a newer upstream revision, two ways, side by side:
//! - baseline: `upgrade`, a new Draft three-way merged from the published downstream
//!   revision (what kptdev's porchctl `rpkg upgrade` asks for);
//! - in place: an `update` task appended to the downstream Draft (Nephio porchctl's
//!   `rpkg update`), merged into that Draft.
//!
//! Both merge N ConfigMaps, each changed upstream and locally, render (no pipeline) and write
//! the store. `cargo run --release -p porch-engine --example in_place_bench [N...]`
//! (default 100 1000); prints the median of 7 runs in milliseconds.

use std::sync::Arc;
use std::time::Instant;

use krm_functions::Builtins;
use porch_core::lifecycle::{Endpoint, Lifecycle};
use porch_core::names::RepositoryName;
use porch_core::revision::{
    Author, CloneTask, EditTask, InitTask, RevisionRef, Task, UpdateTask, UpgradeTask,
    UpstreamPackage,
};
use porch_engine::{CreateRequest, Engine, EngineOptions};
use porch_git::{GitOptions, GitRepository, MirrorPool, RepoSpec};
use porch_store::{RedbStore, StoreOptions};

const NS: &str = "default";
const RUNS: usize = 7;

fn author() -> Author {
    Author {
        name: "bench".into(),
        email: "bench@example.com".into(),
    }
}

fn request(package: &str, ws: &str, task: Task) -> CreateRequest {
    CreateRequest {
        namespace: NS.into(),
        repository: "r".into(),
        package: package.into(),
        workspace: ws.into(),
        tasks: vec![task],
        ..CreateRequest::default()
    }
}

fn configmaps(n: usize, a: &str, b: &str) -> Vec<u8> {
    (0..n)
        .map(|i| {
            format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i}\ndata:\n  a: \"{a}\"\n  b: \"{b}\"\n"
            )
        })
        .collect::<Vec<_>>()
        .join("---\n")
        .into_bytes()
}

async fn set_file(e: &Engine, name: &str, bytes: Vec<u8>) -> anyhow::Result<()> {
    let pr = e.get(NS, name)?;
    let (_, mut files) = e.read_resources(NS, name).await?;
    files.insert("cms.yaml".into(), bytes);
    e.update_resources(NS, name, &pr.resource_version, files)
        .await?;
    Ok(())
}

async fn publish(e: &Engine, name: &str) -> anyhow::Result<()> {
    e.update_lifecycle(
        NS,
        name,
        None,
        Lifecycle::Proposed,
        Endpoint::Update,
        author(),
    )
    .await?;
    e.update_lifecycle(
        NS,
        name,
        None,
        Lifecycle::Published,
        Endpoint::Approval,
        author(),
    )
    .await?;
    Ok(())
}

/// A new published revision of `package` with `bytes`, copied from `from` (or init).
async fn revision(
    e: &Engine,
    package: &str,
    ws: &str,
    from: Option<&str>,
    bytes: Vec<u8>,
) -> anyhow::Result<String> {
    let task = match from {
        Some(source) => Task {
            task_type: "edit".into(),
            edit: Some(EditTask {
                source: RevisionRef {
                    name: source.into(),
                },
            }),
            ..Task::default()
        },
        None => Task::init(InitTask::default()),
    };
    let d = e.create(request(package, ws, task)).await?;
    let name = d.name().as_str().to_owned();
    set_file(e, &name, bytes).await?;
    publish(e, &name).await?;
    Ok(name)
}

fn median(mut ms: Vec<f64>) -> f64 {
    ms.sort_by(f64::total_cmp);
    ms[ms.len() / 2]
}

async fn bench(n: usize) -> anyhow::Result<(f64, f64)> {
    let tmp = tempfile::tempdir()?;
    let data = tmp.path().join("data");
    std::fs::create_dir_all(&data)?;
    let store = Arc::new(RedbStore::open(
        &data.join("store.redb"),
        StoreOptions::default(),
    )?);
    let e = Engine::with_options(store, Arc::new(Builtins), EngineOptions::default());
    let remote = tmp.path().join("r.git");
    let repo = git2::Repository::init_bare(&remote)?;
    let sig = git2::Signature::now("bench", "bench@example.com")?;
    let tree = repo.find_tree(repo.treebuilder(None)?.write()?)?;
    repo.commit(Some("refs/heads/main"), &sig, &sig, "init", &tree, &[])?;
    repo.set_head("refs/heads/main")?;
    let spec = RepoSpec::new(
        RepositoryName::new("r")?,
        format!("file://{}", remote.display()),
    );
    let git = GitRepository::open(&MirrorPool::new(&data), &GitOptions::new(&data), spec)?;
    e.register(NS, git).await?;

    let v1 = revision(&e, "base", "v1", None, configmaps(n, "1", "x")).await?;
    let v2 = revision(&e, "base", "v2", Some(&v1), configmaps(n, "2", "x")).await?;
    let clone = Task {
        task_type: "clone".into(),
        clone: Some(CloneTask {
            upstream: UpstreamPackage {
                upstream_ref: Some(RevisionRef { name: v1.clone() }),
                ..UpstreamPackage::default()
            },
            ..CloneTask::default()
        }),
        ..Task::default()
    };
    // Published downstream for the upgrade baseline, a Draft for the in-place update.
    let local = e.create(request("down", "pub", clone.clone())).await?;
    let local = local.name().as_str().to_owned();
    set_file(&e, &local, configmaps(n, "1", "local")).await?;
    publish(&e, &local).await?;
    let draft = e.create(request("other", "draft", clone)).await?;
    let draft = draft.name().as_str().to_owned();
    set_file(&e, &draft, configmaps(n, "1", "local")).await?;

    let mut upgrade_ms = Vec::new();
    for i in 0..RUNS {
        let task = Task {
            task_type: "upgrade".into(),
            upgrade: Some(UpgradeTask {
                old_upstream: RevisionRef { name: v1.clone() },
                new_upstream: RevisionRef { name: v2.clone() },
                local: RevisionRef {
                    name: local.clone(),
                },
                ..UpgradeTask::default()
            }),
            ..Task::default()
        };
        let t = Instant::now();
        e.create(request("down", &format!("up{i}"), task)).await?;
        upgrade_ms.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    let mut in_place_ms = Vec::new();
    for i in 0..RUNS {
        let current = e.get(NS, &draft)?;
        // Alternate the target so every run merges real changes.
        let to = if i % 2 == 0 { &v2 } else { &v1 };
        let mut tasks = current.tasks.clone();
        tasks.push(Task {
            task_type: "update".into(),
            update: Some(UpdateTask {
                upstream: UpstreamPackage {
                    upstream_ref: Some(RevisionRef { name: to.clone() }),
                    ..UpstreamPackage::default()
                },
            }),
            ..Task::default()
        });
        let t = Instant::now();
        e.update_tasks(NS, &draft, &current.resource_version, tasks)
            .await?
            .ok_or_else(|| anyhow::anyhow!("nothing updated"))?;
        in_place_ms.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    Ok((median(upgrade_ms), median(in_place_ms)))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse())
        .collect::<Result<_, _>>()?;
    let sizes = if sizes.is_empty() {
        vec![100, 1000]
    } else {
        sizes
    };
    println!("| resources | upgrade into a new Draft (ms) | update in place (ms) |");
    println!("| ---: | ---: | ---: |");
    for n in sizes {
        let (upgrade, in_place) = bench(n).await?;
        println!("| {n} | {upgrade:.1} | {in_place:.1} |");
    }
    Ok(())
}
