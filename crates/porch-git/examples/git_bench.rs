//! Benchmark: 1,000 packages × 5 published revisions (5,000 tags, Porch-shaped two-parent
//! approval commits) served over smart HTTP; prints listing, sync and publish figures and
//! `git clone --mirror` + `git for-each-ref` for comparison.
//!
//! `cargo run --release -p porch-git --example git_bench [packages] [revisions]`

use std::fmt::Write as _;
use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use porch_core::names::{PackagePath, RepositoryName, WorkspaceName};
use porch_core::repository::{ListFilter, PublishContent, PublishRequest, Repository};
use porch_core::revision::{Author, InitTask, Task};
use porch_git::{GitAuth, GitOptions, GitRepository, MirrorPool, RepoSpec};
use porch_testkit::{GitServer, repos};

const GROUPS: usize = 25;

/// The small remote publish latency is compared with: 2 packages x 5 revisions.
const SMALL_PACKAGES: usize = 2;
const SMALL_REVISIONS: usize = 5;

/// CPU time so far: this process (all threads, the fixture's HTTP shim included) and its
/// reaped children (`git http-backend` and the git commands it runs, `git` CLI calls).
#[derive(Debug, Clone, Copy)]
struct Cpu {
    own_ticks: u64,
    children_ticks: u64,
}

fn cpu() -> Cpu {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after "pid (comm) ": state is field 3, utime 14, stime 15, cutime 16, cstime 17.
    let rest = stat.rsplit_once(") ").map(|(_, r)| r).unwrap_or("");
    let f: Vec<u64> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    let at = |i: usize| f.get(i - 3).copied().unwrap_or(0);
    Cpu {
        own_ticks: at(14) + at(15),
        children_ticks: at(16) + at(17),
    }
}

/// CPU per operation between two readings (Linux clock ticks are 10 ms).
fn cpu_per_op(a: Cpu, b: Cpu, ops: usize) -> String {
    let per = |t: u64| t as f64 * 10.0 / ops.max(1) as f64;
    format!(
        "CPU per op: porch {:.1} ms, git processes {:.1} ms",
        per(b.own_ticks - a.own_ticks),
        per(b.children_ticks - a.children_ticks)
    )
}

fn pkg_path(p: usize) -> String {
    format!("g{:02}/pkg-{p:04}", p % GROUPS)
}

fn kptfile(name: &str, rev: usize) -> String {
    format!(
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {name}\ninfo:\n  description: revision {rev}\n"
    )
}

/// A `git fast-import` stream with Porch's shape: per revision a draft commit (init task
/// annotation) and a two-parent approval commit on main, tagged `<path>/v<N>`.
fn fast_import_stream(packages: usize, revisions: usize) -> String {
    let mut s = String::new();
    let mut mark = 1;
    let mut main = 1usize;
    let mut t = 1_600_000_000u64;
    let readme = "bench repository\n";
    let _ = write!(
        s,
        "commit refs/heads/main\nmark :{mark}\ncommitter Bench <bench@example.com> {t} +0000\ndata 7\nInitial\nM 100644 inline README.md\ndata {}\n{readme}\n",
        readme.len()
    );
    mark += 1;
    for rev in 1..=revisions {
        for p in 0..packages {
            t += 1;
            let path = pkg_path(p);
            let name = format!("pkg-{p:04}");
            let ws = format!("ws{rev}");
            let kf = kptfile(&name, rev);
            let cm = format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  rev: \"{rev}\"\n"
            );
            let task = r#"{"type":"init","init":{"description":"bench"}}"#;
            let dmsg = format!(
                "Creating new empty revision\n\n\nkpt:{{\"package\":\"{path}\",\"workspaceName\":\"{ws}\",\"revision\":\"0\",\"task\":{task}}}\n"
            );
            let amsg = format!(
                "Approving package revision {path}/{rev}\n\nkpt:{{\"package\":\"{path}\",\"workspaceName\":\"{ws}\",\"revision\":\"{rev}\"}}\n"
            );
            let base = main;
            let draft = mark;
            let _ = write!(
                s,
                "commit refs/heads/draft\nmark :{draft}\nauthor Alice <alice@example.com> {t} +0000\ncommitter Package Orchestration Service <porch@kpt.dev> {t} +0000\ndata {}\n{dmsg}from :{base}\nM 100644 inline {path}/Kptfile\ndata {}\n{kf}\nM 100644 inline {path}/cm.yaml\ndata {}\n{cm}\n",
                dmsg.len(),
                kf.len(),
                cm.len()
            );
            let approval = mark + 1;
            let _ = write!(
                s,
                "commit refs/heads/main\nmark :{approval}\nauthor Alice <alice@example.com> {t} +0000\ncommitter Package Orchestration Service <porch@kpt.dev> {t} +0000\ndata {}\n{amsg}from :{base}\nmerge :{draft}\nM 100644 inline {path}/Kptfile\ndata {}\n{kf}\nM 100644 inline {path}/cm.yaml\ndata {}\n{cm}\n",
                amsg.len(),
                kf.len(),
                cm.len()
            );
            let _ = write!(s, "reset refs/tags/{path}/v{rev}\nfrom :{approval}\n\n");
            main = approval;
            mark += 2;
        }
    }
    s
}

fn rss_kib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |k: &str| {
        status
            .lines()
            .find(|l| l.starts_with(k))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

fn publish_req(pkg: &str, ws: &str) -> anyhow::Result<PublishRequest> {
    publish_req_with(pkg, ws, 1)
}

/// A package of a Kptfile and `resources` ConfigMap files.
fn publish_req_with(pkg: &str, ws: &str, resources: usize) -> anyhow::Result<PublishRequest> {
    let mut files = vec![(
        "Kptfile".to_owned(),
        kptfile(pkg.rsplit('/').next().unwrap_or(pkg), 0).into_bytes(),
    )];
    for r in 0..resources {
        let name = if r == 0 {
            "cm.yaml".to_owned()
        } else {
            format!("cm-{r:02}.yaml")
        };
        files.push((
            name,
            format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{r}\ndata:\n  value: {ws}\n"
            )
            .into_bytes(),
        ));
    }
    Ok(PublishRequest {
        package: PackagePath::new(pkg)?,
        workspace: WorkspaceName::new(ws)?,
        content: PublishContent::Files {
            files: files.into_iter().collect(),
            task: Some(Task::init(InitTask::default())),
        },
        published_by: Author {
            name: "bench".into(),
            email: "bench@example.com".into(),
        },
    })
}

fn open(
    data: &std::path::Path,
    url: &str,
) -> anyhow::Result<(MirrorPool, std::sync::Arc<GitRepository>)> {
    let opts = GitOptions::new(data);
    let pool = MirrorPool::new(data);
    let mut spec = RepoSpec::new(RepositoryName::new("bench")?, url);
    spec.auth = GitAuth::Basic {
        username: "nephio".into(),
        password: "secret".into(),
    };
    let repo = GitRepository::open(&pool, &opts, spec)?;
    Ok((pool, repo))
}

/// A served bare repository of `packages` x `revisions` published revisions, maintained as a
/// hosted repository is (packed, packed refs, bitmap, commit-graph).
fn generate_remote(
    remote_dir: &std::path::Path,
    packages: usize,
    revisions: usize,
) -> anyhow::Result<()> {
    repos::init_bare(remote_dir, "main")?;
    let mut fi = Command::new("git")
        .arg("-C")
        .arg(remote_dir)
        .args(["fast-import", "--quiet"])
        .stdin(Stdio::piped())
        .spawn()?;
    fi.stdin
        .take()
        .ok_or_else(|| anyhow::anyhow!("no stdin"))?
        .write_all(fast_import_stream(packages, revisions).as_bytes())?;
    anyhow::ensure!(fi.wait()?.success(), "fast-import failed");
    repos::run(Command::new("git").arg("-C").arg(remote_dir).args([
        "update-ref",
        "-d",
        "refs/heads/draft",
    ]))?;
    repos::run(Command::new("git").arg("-C").arg(remote_dir).args([
        "repack",
        "-adq",
        "--write-bitmap-index",
    ]))?;
    repos::run(
        Command::new("git")
            .arg("-C")
            .arg(remote_dir)
            .args(["pack-refs", "--all"]),
    )?;
    // A served repository is maintained (`git gc`/`git maintenance`), which writes a
    // commit-graph; receive-pack's connectivity check against 5,000 refs uses it.
    repos::run(Command::new("git").arg("-C").arg(remote_dir).args([
        "commit-graph",
        "write",
        "--reachable",
    ]))?;
    Ok(())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .try_init();
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let packages = args.first().copied().unwrap_or(1000);
    let revisions = args.get(1).copied().unwrap_or(5);
    let tmp = tempfile::tempdir()?;
    let srv = tmp.path().join("srv");
    let remote_dir = srv.join("bench.git");

    let t = Instant::now();
    generate_remote(&remote_dir, packages, revisions)?;
    println!(
        "generated remote: {packages} packages x {revisions} revisions ({} tags, {} commits) in {}",
        packages * revisions,
        1 + 2 * packages * revisions,
        ms(t.elapsed())
    );

    generate_remote(&srv.join("small.git"), SMALL_PACKAGES, SMALL_REVISIONS)?;
    let server = GitServer::start(&srv, Some(("nephio", "secret")))?;
    let url = server.url_for("bench.git");

    // git CLI baseline.
    let t = Instant::now();
    repos::run(
        Command::new("git")
            .args([
                "-c",
                "http.extraHeader=Authorization: Basic bmVwaGlvOnNlY3JldA==",
                "clone",
                "--quiet",
                "--mirror",
            ])
            .arg(&url)
            .arg(tmp.path().join("cli-mirror")),
    )?;
    let clone = t.elapsed();
    let t = Instant::now();
    let refs = repos::run(
        Command::new("git")
            .arg("-C")
            .arg(tmp.path().join("cli-mirror"))
            .arg("for-each-ref"),
    )?;
    let fer = t.elapsed();
    println!(
        "baseline: git clone --mirror {} + git for-each-ref {} ({} refs)",
        ms(clone),
        ms(fer),
        refs.lines().count()
    );

    // Registration → first listing (fetch + discovery), fresh data directory.
    let (rss0, _) = rss_kib();
    let t = Instant::now();
    let (_pool, repo) = open(&tmp.path().join("data-a"), &url)?;
    // With each revision's task history, as the engine loads a registration.
    let full = ListFilter {
        with_tasks: true,
        ..ListFilter::default()
    };
    let listed = repo.list(full).await?;
    let first = t.elapsed();
    let (rss1, hwm1) = rss_kib();
    println!(
        "registration -> list: {} for {} revisions (target < 2 s)",
        ms(first),
        listed.len()
    );
    println!(
        "memory: RSS {} MiB -> {} MiB (+{} MiB), peak {} MiB (target < 100 MiB)",
        rss0 / 1024,
        rss1 / 1024,
        rss1.saturating_sub(rss0) / 1024,
        hwm1 / 1024
    );
    drop(listed);
    let t = Instant::now();
    let again = repo.list(ListFilter::default()).await?;
    println!(
        "re-list from snapshot: {} ({} revisions)",
        ms(t.elapsed()),
        again.len()
    );
    let mut idle = Vec::new();
    let c0 = cpu();
    for _ in 0..10 {
        let t = Instant::now();
        let nothing = repo.sync().await?;
        idle.push(t.elapsed());
        anyhow::ensure!(nothing.is_empty(), "unexpected changes: {nothing:?}");
    }
    println!(
        "sync with no change: median {} (runs: {}); {}",
        ms(median(idle.clone())),
        runs(&idle),
        cpu_per_op(c0, cpu(), idle.len())
    );

    // Incremental sync after one new revision published by another writer.
    let (_pool_b, other) = open(&tmp.path().join("data-b"), &url)?;
    other.sync().await?;
    let mut syncs = Vec::new();
    let (mut own, mut children) = (0, 0);
    for i in 0..5 {
        other
            .publish(publish_req(&pkg_path(i), &format!("other{i}"))?)
            .await?;
        let c = cpu();
        let t = Instant::now();
        let report = repo.sync().await?;
        syncs.push(t.elapsed());
        let d = cpu();
        own += d.own_ticks - c.own_ticks;
        children += d.children_ticks - c.children_ticks;
        anyhow::ensure!(
            report
                .added
                .iter()
                .any(|m| m.key.workspace.as_str() == format!("other{i}")),
            "new revision not reported"
        );
    }
    let zero = Cpu {
        own_ticks: 0,
        children_ticks: 0,
    };
    let spent = Cpu {
        own_ticks: own,
        children_ticks: children,
    };
    println!(
        "incremental sync after one new revision: median {} (runs: {}) (target < 50 ms); {}",
        ms(median(syncs.clone())),
        runs(&syncs),
        cpu_per_op(zero, spent, syncs.len())
    );

    // Publish latency on an up-to-date mirror, next to a small remote's.
    let (pubs, c) = publish_runs(&repo, |i| pkg_path(100 + i)).await?;
    println!(
        "publish ({} existing revisions): median {} (runs: {}) (target < 100 ms); {c}",
        packages * revisions,
        ms(median(pubs.clone())),
        runs(&pubs)
    );
    let (_pool_c, small) = open(&tmp.path().join("data-c"), &server.url_for("small.git"))?;
    small.list(ListFilter::default()).await?;
    let (small_pubs, c) = publish_runs(&small, |i| format!("small/pkg-{i:02}")).await?;
    println!(
        "publish ({} existing revisions): median {} (runs: {}); {c}",
        SMALL_PACKAGES * SMALL_REVISIONS,
        ms(median(small_pubs.clone())),
        runs(&small_pubs)
    );
    let (fat_pubs, c) = publish_runs_with(&small, |i| format!("small/fat-{i:02}"), 50).await?;
    println!(
        "publish of a 50-resource package ({} existing revisions): median {} (runs: {}); {c}",
        SMALL_PACKAGES * SMALL_REVISIONS + 10,
        ms(median(fat_pubs.clone())),
        runs(&fat_pubs)
    );
    let (rss2, hwm2) = rss_kib();
    println!(
        "memory at end: RSS {} MiB, peak {} MiB; HTTP requests served: {}",
        rss2 / 1024,
        hwm2 / 1024,
        server.request_count()
    );
    Ok(())
}

fn runs(v: &[Duration]) -> String {
    v.iter().map(|d| ms(*d)).collect::<Vec<_>>().join(", ")
}

/// Ten publishes of new packages; their latencies and CPU per publish.
async fn publish_runs(
    repo: &GitRepository,
    pkg: impl Fn(usize) -> String,
) -> anyhow::Result<(Vec<Duration>, String)> {
    publish_runs_with(repo, pkg, 1).await
}

/// Ten publishes of new packages of `resources` files each.
async fn publish_runs_with(
    repo: &GitRepository,
    pkg: impl Fn(usize) -> String,
    resources: usize,
) -> anyhow::Result<(Vec<Duration>, String)> {
    let mut pubs = Vec::new();
    let c0 = cpu();
    for i in 0..10 {
        let t = Instant::now();
        repo.publish(publish_req_with(&pkg(i), &format!("mine{i}"), resources)?)
            .await?;
        pubs.push(t.elapsed());
    }
    Ok((pubs, cpu_per_op(c0, cpu(), 10)))
}
