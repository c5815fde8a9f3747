//! The issue-19 benchmark: the same workload on the embedded redb store and on PostgreSQL
//! with 1 and with 3 replicas, side by side, through the real porch-server binary over
//! HTTPS with smart-HTTP remotes.
//!
//! `cargo bench -p porch-server --bench replicas -- [repositories] [packages] [writes] [gets]`
//! (default 12 repositories x 200 packages x 5 revisions = 12,000 published revisions, and
//! 30 timed writes, 500 gets per replica). For each setup it prints p50s of: create (init), resources update with
//! render, propose, approve-and-publish (writes spread over the replicas), the list of every
//! revision and the get of one (on each replica), the p50/p99 delay between a write
//! acknowledged by replica 0 and its watch event on the last replica, with 3 replicas the
//! failover time (from a kill -9 of the leader, replica 0, which starts first, until a
//! PackageVariant created afterwards has its downstream draft), and the throughput per core:
//! write steps and gets per CPU-second the server processes spent on them (user + system
//! time from /proc, all replicas together).
//!
//! PostgreSQL is the test fixture's cluster (`porch_testkit::PostgresServer`, fsync off):
//! its figures leave out the database's own durability cost. State CPU per core with the
//! machine's core count when quoting them.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::bail;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube::api::{WatchEvent, WatchParams};
use porch_testkit::generate::{Shape, maintain, package_path, porch_repository};
use porch_testkit::{GitServer, PostgresServer};
use serde_json::json;

use common::{ServerProcess, api, ms, object, pct, start_server_with};

const NS: &str = "default";

/// A Kptfile with a built-in mutator and 20 ConfigMaps.
fn resources(name: &str, value: usize) -> serde_json::Map<String, serde_json::Value> {
    let mut files = serde_json::Map::new();
    files.insert(
        "Kptfile".into(),
        format!(
            "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {name}\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\npipeline:\n  mutators:\n  - image: set-namespace:v0.4.1\n    configMap:\n      namespace: bench\n"
        )
        .into(),
    );
    for i in 0..20 {
        files.insert(
            format!("cm-{i:02}.yaml"),
            format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i:02}\ndata:\n  value: \"{value}\"\n"
            )
            .into(),
        );
    }
    files
}

struct Replica {
    process: ServerProcess,
    client: kube::Client,
}

struct Figures {
    create: Duration,
    update: Duration,
    propose: Duration,
    approve: Duration,
    list: Vec<Duration>,
    get: Vec<Duration>,
    /// Write steps per CPU-second of the servers.
    writes_per_cpu_s: f64,
    /// Gets per CPU-second of the servers.
    gets_per_cpu_s: f64,
    watch_p50: Duration,
    watch_p99: Duration,
    failover: Option<Duration>,
}

#[tokio::main(flavor = "multi_thread", worker_threads = 4)]
async fn main() -> anyhow::Result<()> {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let repos = args.first().copied().unwrap_or(12);
    let packages = args.get(1).copied().unwrap_or(200);
    let writes = args.get(2).copied().unwrap_or(30);
    let gets = args.get(3).copied().unwrap_or(500);
    let dir = tempfile::tempdir()?;
    let root = dir.path().join("git");
    std::fs::create_dir_all(&root)?;
    let shape = Shape {
        packages,
        revisions: 5,
        resources: 1,
    };
    porch_repository(&root.join("r000.git"), &shape)?;
    maintain(&root.join("r000.git"))?;
    for r in 1..repos {
        copy(&root.join("r000.git"), &root.join(format!("r{r:03}.git")))?;
    }
    porch_repository(
        &root.join("bench.git"),
        &Shape {
            packages: 1,
            revisions: 1,
            resources: 1,
        },
    )?;
    let bin = env!("CARGO_BIN_EXE_porch-server");
    let setups = [
        ("redb, 1 replica", false, 1),
        ("postgres, 1 replica", true, 1),
        ("postgres, 3 replicas", true, 3),
    ];
    let mut results = Vec::new();
    for (i, (label, postgres, n)) in setups.into_iter().enumerate() {
        let run = dir.path().join(format!("run{i}"));
        std::fs::create_dir_all(&run)?;
        copy(&root, &run.join("git"))?;
        println!("[{label}]");
        let figures = setup(bin, &run, postgres, n, (repos, packages, writes, gets)).await?;
        results.push((label, figures));
    }
    let revisions = repos * packages * 6 + 2;
    println!(
        "side by side (p50 unless noted; list = all {revisions} revisions; throughput per core = \
         operations per CPU-second of the server processes, on {} cores):",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!(
        "  {:<22} {:>9} {:>9} {:>9} {:>9} {:>10} {:>9} {:>10} {:>10} {:>9} {:>12} {:>11}",
        "",
        "create",
        "update",
        "propose",
        "approve",
        "list",
        "get",
        "watch p50",
        "watch p99",
        "failover",
        "writes/core·s",
        "gets/core·s"
    );
    for (label, f) in &results {
        let (mut list, mut get) = (f.list.clone(), f.get.clone());
        println!(
            "  {label:<22} {:>9} {:>9} {:>9} {:>9} {:>10} {:>9} {:>10} {:>10} {:>9} {:>12.1} {:>11.1}",
            ms(f.create),
            ms(f.update),
            ms(f.propose),
            ms(f.approve),
            ms(pct(&mut list, 0.5)),
            ms(pct(&mut get, 0.5)),
            ms(f.watch_p50),
            ms(f.watch_p99),
            f.failover.map(ms).unwrap_or_else(|| "-".into()),
            f.writes_per_cpu_s,
            f.gets_per_cpu_s,
        );
    }
    // The goal's ratios, from the unrounded p50s (the first setup is the baseline).
    if let Some((_, base)) = results.first() {
        let p50 = |v: &[Duration]| pct(&mut v.to_vec(), 0.5).as_secs_f64();
        let (list0, get0) = (p50(&base.list), p50(&base.get));
        for (label, f) in results.iter().skip(1) {
            println!(
                "  {label:<22} list {:.2}x, get {:.2}x of {} (p50 get {:.1} µs against {:.1} µs)",
                p50(&f.list) / list0.max(1e-9),
                p50(&f.get) / get0.max(1e-9),
                results[0].0,
                p50(&f.get) * 1e6,
                get0 * 1e6,
            );
        }
    }
    Ok(())
}

/// User + system CPU time of processes `pids` so far, in seconds.
fn cpu_seconds(pids: &[u32]) -> f64 {
    pids.iter()
        .map(|pid| common::cpu_time(*pid).as_secs_f64())
        .sum()
}

fn copy(from: &std::path::Path, to: &std::path::Path) -> anyhow::Result<()> {
    if !Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()?
        .success()
    {
        bail!("cp failed");
    }
    Ok(())
}

async fn setup(
    bin: &str,
    run: &std::path::Path,
    postgres: bool,
    n: usize,
    (repos, packages, writes, gets): (usize, usize, usize, usize),
) -> anyhow::Result<Figures> {
    let git = GitServer::start(run.join("git"), None)?;
    let pg = if postgres {
        Some(PostgresServer::start()?)
    } else {
        None
    };
    let url = pg.as_ref().map(PostgresServer::url);
    let mut replicas = Vec::new();
    for r in 0..n {
        let dir = run.join(format!("replica{r}"));
        std::fs::create_dir_all(&dir)?;
        let flags: Vec<&str> = match &url {
            Some(u) => vec!["--store", u.as_str()],
            None => Vec::new(),
        };
        let (process, kc) = start_server_with(bin, &dir, &flags)?;
        let cfg = kube::Config::from_custom_kubeconfig(kc, &Default::default()).await?;
        replicas.push(Replica {
            process,
            client: kube::Client::try_from(cfg)?,
        });
    }
    let prs = |r: usize| {
        api(
            &replicas[r % n].client,
            "porch.kpt.dev",
            "PackageRevision",
            "packagerevisions",
        )
    };
    let prr = |r: usize| {
        api(
            &replicas[r % n].client,
            "porch.kpt.dev",
            "PackageRevisionResources",
            "packagerevisionresources",
        )
    };
    let repos_api = api(
        &replicas[0].client,
        "config.porch.kpt.dev",
        "Repository",
        "repositories",
    );
    let mut names: Vec<String> = (0..repos).map(|r| format!("r{r:03}")).collect();
    names.push("bench".into());
    for name in &names {
        repos_api
            .create(
                &PostParams::default(),
                &object(json!({
                    "apiVersion": "config.porch.kpt.dev/v1alpha1", "kind": "Repository",
                    "metadata": {"name": name, "namespace": NS},
                    "spec": {"type": "git", "git": {"repo": git.url_for(&format!("{name}.git")), "branch": "main"}},
                }))?,
            )
            .await?;
    }
    let expected = repos * packages * 6 + 2;
    let t = Instant::now();
    for r in 0..n {
        loop {
            let got = prs(r).list(&ListParams::default()).await?.items.len();
            if got >= expected {
                break;
            }
            if t.elapsed() > Duration::from_secs(900) {
                bail!("replica {r} lists {got} of {expected} revisions after 15 minutes");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    println!(
        "  registered {expected} revisions on {n} replica(s) in {}",
        ms(t.elapsed())
    );

    let pids: Vec<u32> = replicas.iter().map(|r| r.process.0.id()).collect();

    // Lists: 10 on each replica; gets of one published revision: `gets` on each replica.
    let mut list = Vec::new();
    let mut some = String::new();
    for r in 0..n {
        for _ in 0..10 {
            let t = Instant::now();
            let items = prs(r).list(&ListParams::default()).await?.items;
            list.push(t.elapsed());
            if items.len() < expected {
                bail!("replica {r} lists {} of {expected}", items.len());
            }
            if let Some(p) = items
                .iter()
                .find(|p| p.data["spec"]["lifecycle"] == "Published")
            {
                some = p.metadata.name.clone().unwrap_or_default();
            }
        }
    }
    let mut get = Vec::new();
    let cpu = cpu_seconds(&pids);
    for r in 0..n {
        for _ in 0..gets {
            let t = Instant::now();
            prs(r).get(&some).await?;
            get.push(t.elapsed());
        }
    }
    let gets_per_cpu_s = get.len() as f64 / (cpu_seconds(&pids) - cpu).max(1e-3);

    // Writes spread over the replicas: create, update with render, propose, approve.
    let (mut create, mut update, mut propose, mut approve) = (vec![], vec![], vec![], vec![]);
    let cpu = cpu_seconds(&pids);
    for i in 0..writes {
        let body = object(json!({
            "apiVersion": "porch.kpt.dev/v1alpha1", "kind": "PackageRevision", "metadata": {},
            "spec": {"repository": "bench", "packageName": format!("edited-{i}"), "workspaceName": "ws",
                     "tasks": [{"type": "init", "init": {"description": "bench"}}]},
        }))?;
        let t = Instant::now();
        let pr = prs(i).create(&PostParams::default(), &body).await?;
        create.push(t.elapsed());
        let name = pr.metadata.name.unwrap_or_default();
        let mut res = prr(i + 1).get(&name).await?;
        res.data["spec"]["resources"] = json!(resources(&format!("edited-{i}"), i));
        let t = Instant::now();
        prr(i + 1)
            .replace(&name, &PostParams::default(), &res)
            .await?;
        update.push(t.elapsed());
        let t = Instant::now();
        let mut proposed = prs(i + 2)
            .patch(
                &name,
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"lifecycle": "Proposed"}})),
            )
            .await?;
        propose.push(t.elapsed());
        proposed.data["spec"]["lifecycle"] = json!("Published");
        let t = Instant::now();
        prs(i)
            .replace_subresource("approval", &name, &PostParams::default(), &proposed)
            .await?;
        approve.push(t.elapsed());
    }

    let writes_per_cpu_s = (4 * writes) as f64 / (cpu_seconds(&pids) - cpu).max(1e-3);

    // Watch delay: writes acknowledged by replica 0, events on the last replica.
    let cms = |r: usize| -> Api<ConfigMap> { Api::namespaced(replicas[r].client.clone(), NS) };
    let mut stream = cms(n - 1)
        .watch(&WatchParams::default().timeout(290), "0")
        .await?
        .boxed();
    let mut delays = Vec::new();
    for i in 0..200 {
        cms(0)
            .create(
                &PostParams::default(),
                &serde_json::from_value(json!({"metadata": {"name": format!("w-{i}")}}))?,
            )
            .await?;
        let acked = Instant::now();
        loop {
            match tokio::time::timeout(Duration::from_secs(10), stream.try_next()).await {
                Ok(Ok(Some(WatchEvent::Added(o))))
                    if o.metadata.name.as_deref() == Some(&format!("w-{i}")) =>
                {
                    delays.push(acked.elapsed());
                    break;
                }
                Ok(Ok(Some(_))) => {}
                other => bail!("watch ended: {:?}", other.map(|r| r.map(|_| ()))),
            }
        }
    }

    // Failover: kill -9 the leader (replica 0 started first and campaigns first).
    let failover = if n > 1 {
        let mut first = replicas.remove(0);
        let _ = first.process.0.kill();
        let _ = first.process.0.wait();
        let killed = Instant::now();
        let pvs = api(
            &replicas[0].client,
            "config.porch.kpt.dev",
            "PackageVariant",
            "packagevariants",
        );
        pvs.create(
            &PostParams::default(),
            &object(json!({
                "apiVersion": "config.porch.kpt.dev/v1alpha1", "kind": "PackageVariant",
                "metadata": {"name": "after-failover", "namespace": NS},
                "spec": {"upstream": {"repo": "r000", "package": package_path(0), "revision": 1},
                         "downstream": {"repo": "bench", "package": "variant"}},
            }))?,
        )
        .await?;
        let prs0 = api(
            &replicas[0].client,
            "porch.kpt.dev",
            "PackageRevision",
            "packagerevisions",
        );
        loop {
            let found = prs0
                .list(&ListParams::default())
                .await?
                .items
                .iter()
                .any(|p| p.data["spec"]["packageName"] == "variant");
            if found {
                break Some(killed.elapsed());
            }
            if killed.elapsed() > Duration::from_secs(120) {
                bail!("no downstream draft 2 minutes after the leader was killed");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    } else {
        None
    };
    drop(replicas);
    drop(pg);
    Ok(Figures {
        create: pct(&mut create, 0.5),
        update: pct(&mut update, 0.5),
        propose: pct(&mut propose, 0.5),
        approve: pct(&mut approve, 0.5),
        list,
        get,
        writes_per_cpu_s,
        gets_per_cpu_s,
        watch_p50: pct(&mut delays.clone(), 0.5),
        watch_p99: pct(&mut delays, 0.99),
        failover,
    })
}
