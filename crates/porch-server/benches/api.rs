//! The issue-6 benchmark: the release porch-server over HTTPS with repositories on a
//! smart-HTTP git fixture, driven with kube-rs. Prints registration, list, resources update
//! with render, propose, approve-and-publish and watch latency figures and the server's RSS.
//!
//! `cargo bench -p porch-server --bench api -- [repositories] [packages] [revisions] [large]`
//! (default 100 x 20 x 5 = 10,000 published revisions plus 2,000 placeholders). At the end
//! a repository of `large` packages x 5 revisions (default 1,000: 5,000 revisions) is
//! registered and approvals into it are timed too, to show approval cost does not grow with
//! the repository (all figures before it are taken without it).

use std::collections::HashMap;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::bail;
use futures::{StreamExt, TryStreamExt};
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::api::{ListParams, WatchEvent, WatchParams};
use porch_testkit::GitServer;
use porch_testkit::generate::{Shape, maintain, porch_repository};
use serde_json::json;

mod common;

use common::{api, fifty_resources, ms, object, pct, rss_kib, rss_split, start_server, status_kib};

const NS: &str = "default";

/// Creates draft `edited-<i>` (workspace `ws`) in `repository` and writes its 50 resources
/// (rendered on write): its name and how long the resources update took.
async fn draft(
    prs: &Api<DynamicObject>,
    prr: &Api<DynamicObject>,
    repository: &str,
    i: usize,
    ws: &str,
) -> anyhow::Result<(String, Duration)> {
    let body = object(json!({
        "apiVersion": "porch.kpt.dev/v1alpha1", "kind": "PackageRevision", "metadata": {},
        "spec": {"repository": repository, "packageName": format!("edited-{i}"), "workspaceName": ws,
                 "tasks": [{"type": "init", "init": {"description": "bench"}}]},
    }))?;
    let name = prs
        .create(&PostParams::default(), &body)
        .await?
        .metadata
        .name
        .unwrap_or_default();
    let mut res = prr.get(&name).await?;
    res.data["spec"]["resources"] = json!(fifty_resources(&format!("edited-{i}"), i));
    let t = Instant::now();
    res = prr.replace(&name, &PostParams::default(), &res).await?;
    let took = t.elapsed();
    if res.data["status"]["renderStatus"]["error"] != "" {
        bail!("render failed: {}", res.data["status"]["renderStatus"]);
    }
    Ok((name, took))
}

/// Proposes draft `name`; the proposed object.
async fn propose(prs: &Api<DynamicObject>, name: &str) -> anyhow::Result<DynamicObject> {
    Ok(prs
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"lifecycle": "Proposed"}})),
        )
        .await?)
}

/// Approves the `proposed` revision `name` through the approval subresource.
async fn approve(
    prs: &Api<DynamicObject>,
    name: &str,
    mut proposed: DynamicObject,
) -> anyhow::Result<()> {
    proposed.data["spec"]["lifecycle"] = json!("Published");
    prs.replace_subresource("approval", name, &PostParams::default(), &proposed)
        .await?;
    Ok(())
}

#[tokio::main(flavor = "multi_thread", worker_threads = 4)]
async fn main() -> anyhow::Result<()> {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let (repos, packages, revisions) = (
        args.first().copied().unwrap_or(100),
        args.get(1).copied().unwrap_or(20),
        args.get(2).copied().unwrap_or(5),
    );
    let large = args.get(3).copied().unwrap_or(1_000);
    let dir = tempfile::tempdir()?;
    let root = dir.path().join("git");
    std::fs::create_dir_all(&root)?;
    let t = Instant::now();
    let shape = Shape {
        packages,
        revisions,
        resources: 1,
    };
    porch_repository(&root.join("r000.git"), &shape)?;
    // Served remotes are maintained (packed, commit-graph), as on a hosting service.
    maintain(&root.join("r000.git"))?;
    for r in 1..repos {
        let status = Command::new("cp")
            .arg("-a")
            .arg(root.join("r000.git"))
            .arg(root.join(format!("r{r:03}.git")))
            .status()?;
        if !status.success() {
            bail!("cp failed");
        }
    }
    let writable = root.join("bench.git");
    porch_repository(
        &writable,
        &Shape {
            packages: 1,
            revisions: 1,
            resources: 1,
        },
    )?;
    porch_repository(
        &root.join("large.git"),
        &Shape {
            packages: large,
            revisions: 5,
            resources: 1,
        },
    )?;
    maintain(&root.join("large.git"))?;
    eprintln!(
        "generated {repos} remotes of {packages} packages x {revisions} revisions and one of {large} x 5 in {}",
        ms(t.elapsed())
    );
    // PORCH_BENCH_BASELINE=<porch-server binary> runs the same scenario against that binary
    // first, on its own copy of the remotes, and prints both side by side.
    let mut runs: Vec<(String, String)> = Vec::new();
    if let Ok(bin) = std::env::var("PORCH_BENCH_BASELINE") {
        runs.push(("baseline".into(), bin));
    }
    runs.push((
        "this build".into(),
        env!("CARGO_BIN_EXE_porch-server").to_owned(),
    ));
    let p = Params {
        repos,
        packages,
        revisions,
        large,
    };
    let mut summaries = Vec::new();
    for (i, (label, bin)) in runs.iter().enumerate() {
        let run_dir = dir.path().join(format!("run{i}"));
        std::fs::create_dir_all(&run_dir)?;
        let status = Command::new("cp")
            .arg("-a")
            .arg(&root)
            .arg(run_dir.join("git"))
            .status()?;
        if !status.success() {
            bail!("cp failed");
        }
        println!("[{label}] {bin}");
        match scenario(bin, &run_dir, &p).await? {
            Some(summary) => summaries.push((label.clone(), summary)),
            None => return Ok(()),
        }
    }
    if let [(base_label, base), (label, this)] = &summaries[..] {
        println!("side by side (p50; ratio {label} / {base_label}):");
        let row = |what: &str, b: Duration, t: Duration| {
            println!(
                "  {what:<44} {:>10} {:>10}  {:.3}",
                ms(b),
                ms(t),
                t.as_secs_f64() / b.as_secs_f64().max(1e-9)
            );
        };
        row("list all package revisions (kube-rs)", base.list, this.list);
        row("the same list as raw JSON", base.raw, this.raw);
        row("resources update with render", base.update, this.update);
        row("propose", base.propose, this.propose);
        row("approve and publish", base.approve, this.approve);
    }
    Ok(())
}

#[derive(Clone, Copy)]
struct Params {
    repos: usize,
    packages: usize,
    revisions: usize,
    large: usize,
}

/// The p50s compared between two binaries.
struct Summary {
    list: Duration,
    raw: Duration,
    update: Duration,
    propose: Duration,
    approve: Duration,
}

/// One server binary over `run_dir/git`: registration, lists, writes, watch, large repo.
/// `None` when the run stopped early on request (`PORCH_BENCH_KILL_AFTER_LISTS`).
async fn scenario(
    bin: &str,
    run_dir: &std::path::Path,
    p: &Params,
) -> anyhow::Result<Option<Summary>> {
    let Params {
        repos,
        packages,
        revisions,
        large,
    } = *p;
    let git = GitServer::start(run_dir.join("git"), None)?;
    let (server, kc) = start_server(bin, run_dir)?;
    let cfg = kube::Config::from_custom_kubeconfig(kc, &Default::default()).await?;
    let client = kube::Client::try_from(cfg)?;
    let repos_api = api(
        &client,
        "config.porch.kpt.dev",
        "Repository",
        "repositories",
    );
    let prs = api(
        &client,
        "porch.kpt.dev",
        "PackageRevision",
        "packagerevisions",
    );
    let prr = api(
        &client,
        "porch.kpt.dev",
        "PackageRevisionResources",
        "packagerevisionresources",
    );

    // Registration to a complete listing.
    let t = Instant::now();
    let mut names: Vec<String> = (0..repos).map(|r| format!("r{r:03}")).collect();
    names.push("bench".into());
    for name in &names {
        let body = object(json!({
            "apiVersion": "config.porch.kpt.dev/v1alpha1", "kind": "Repository",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"type": "git", "git": {"repo": git.url_for(&format!("{name}.git")), "branch": "main"}},
        }))?;
        repos_api.create(&PostParams::default(), &body).await?;
    }
    let expected = repos * packages * (revisions + 1) + 2;
    loop {
        let n = prs.list(&ListParams::default()).await?.items.len();
        if n >= expected {
            break;
        }
        if t.elapsed() > Duration::from_secs(600) {
            bail!("only {n} of {expected} revisions listed after 10 minutes");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let registration = t.elapsed();
    let rss_registered = rss_split(server.0.id());

    // List p50.
    let mut list = Vec::new();
    for _ in 0..20 {
        let t = Instant::now();
        let n = prs.list(&ListParams::default()).await?.items.len();
        list.push(t.elapsed());
        assert!(n >= expected);
    }

    // The same list as raw bytes: the server's share, without kube-rs building 12,000
    // DynamicObjects.
    let mut raw = Vec::new();
    let mut raw_len = 0;
    for _ in 0..20 {
        let req = http::Request::get(format!(
            "/apis/porch.kpt.dev/v1alpha1/namespaces/{NS}/packagerevisions"
        ))
        .body(Vec::new())?;
        let t = Instant::now();
        raw_len = client.request_text(req).await?.len();
        raw.push(t.elapsed());
    }

    let rss_listed = rss_split(server.0.id());
    if let Some(to) = std::env::var_os("PORCH_BENCH_SMAPS") {
        // The server's memory map after the lists, for a breakdown by mapping.
        let pid = server.0.id();
        std::fs::copy(format!("/proc/{pid}/smaps"), &to)?;
        let threads = status_kib(pid, "Threads:");
        eprintln!("server threads after the lists: {threads}");
    }
    if std::env::var_os("PORCH_BENCH_KILL_AFTER_LISTS").is_some() {
        // For heap profiles of the steady state: what is still allocated when the server
        // dies here (SIGKILL, so nothing is freed on the way out) is its live set.
        let _ = Command::new("pkill")
            .args(["-KILL", "-f"])
            .arg(run_dir.join("data"))
            .status();
        println!("server killed after the lists: {rss_listed}");
        return Ok(None);
    }

    // Watch: when each change arrives, by object name and lifecycle.
    let seen: Arc<Mutex<HashMap<(String, String), Instant>>> = Arc::default();
    {
        let seen = seen.clone();
        let mut stream = prs.watch(&WatchParams::default(), "0").await?.boxed();
        tokio::spawn(async move {
            while let Ok(Some(ev)) = stream.try_next().await {
                if let WatchEvent::Added(o) | WatchEvent::Modified(o) = ev {
                    let lc = o.data["spec"]["lifecycle"]
                        .as_str()
                        .unwrap_or("")
                        .to_owned();
                    let name = o.metadata.name.clone().unwrap_or_default();
                    if let Ok(mut m) = seen.lock() {
                        m.entry((name, lc)).or_insert_with(Instant::now);
                    }
                }
            }
        });
    }

    // The watch first replays every revision as ADDED; measure only after that.
    let replayed = Instant::now();
    while seen.lock().map(|m| m.len()).unwrap_or(0) < expected {
        if replayed.elapsed() > Duration::from_secs(60) {
            bail!("the watch did not replay {expected} revisions");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // Drafts to edit, propose and approve in the writable repository.
    let ops = 20;
    let mut update = Vec::new();
    let mut propose_times = Vec::new();
    let mut approvals = Vec::new();
    let mut watch_lag = Vec::new();
    let mut watch_from_start = Vec::new();
    // When the event of a write arrived, after the write returned and after it started (an
    // upper bound of the server's write-to-event latency that includes the write itself).
    let mut lag = |name: &str, lc: &str, start: Instant, done: Instant| {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            if let Some(at) = seen
                .lock()
                .ok()
                .and_then(|m| m.get(&(name.to_owned(), lc.to_owned())).copied())
            {
                watch_lag.push(at.saturating_duration_since(done));
                watch_from_start.push(at.saturating_duration_since(start));
                return;
            }
            if Instant::now() > deadline {
                watch_lag.push(Duration::from_secs(5));
                watch_from_start.push(Duration::from_secs(5));
                return;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    };
    for i in 0..ops {
        let (name, took) = draft(&prs, &prr, "bench", i, &format!("b{i}")).await?;
        update.push(took);
        let t = Instant::now();
        let proposed = propose(&prs, &name).await?;
        propose_times.push(t.elapsed());
        lag(&name, "Proposed", t, Instant::now());
        let t = Instant::now();
        approve(&prs, &name, proposed).await?;
        approvals.push(t.elapsed());
        lag(&name, "Published", t, Instant::now());
    }
    let (_, hwm) = rss_kib(server.0.id());
    let rss_end = rss_split(server.0.id());

    // Approvals into a large repository: register it, wait for its listing, approve.
    let large_revisions = large * 5;
    let body = object(json!({
        "apiVersion": "config.porch.kpt.dev/v1alpha1", "kind": "Repository",
        "metadata": {"name": "large", "namespace": NS},
        "spec": {"type": "git", "git": {"repo": git.url_for("large.git"), "branch": "main"}},
    }))?;
    repos_api.create(&PostParams::default(), &body).await?;
    let in_large = ListParams::default().fields("spec.repository=large");
    let t = Instant::now();
    while prs.list(&in_large).await?.items.len() < large * 6 {
        if t.elapsed() > Duration::from_secs(300) {
            bail!("the large repository was not listed after 5 minutes");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut approve_large = Vec::new();
    for i in 0..ops {
        let (name, _) = draft(&prs, &prr, "large", i, "b").await?;
        let proposed = propose(&prs, &name).await?;
        let t = Instant::now();
        approve(&prs, &name, proposed).await?;
        approve_large.push(t.elapsed());
    }
    let (_, hwm_large) = rss_kib(server.0.id());

    println!(
        "porch-server API benchmark: {repos} repositories x {packages} packages x {revisions} revisions ({expected} package revisions incl. placeholders)"
    );
    println!(
        "  registration of {} repositories to a complete listing   {}",
        names.len(),
        ms(registration)
    );
    println!(
        "  list all package revisions in the namespace p50        {} (kube-rs into DynamicObjects)",
        ms(pct(&mut list, 0.5))
    );
    println!(
        "  the same list as raw JSON p50                          {} ({raw_len} bytes)",
        ms(pct(&mut raw, 0.5))
    );
    println!(
        "  resources update, render 50 resources x 3 mutators p50 {}",
        ms(pct(&mut update, 0.5))
    );
    println!(
        "  propose p50                                              {}",
        ms(pct(&mut propose_times, 0.5))
    );
    let first: Duration = approvals.iter().take(5).sum::<Duration>() / 5;
    let last: Duration = approvals.iter().rev().take(5).sum::<Duration>() / 5;
    println!(
        "  approve and publish p50                                  {} (first 5 mean {}, last 5 mean {})",
        ms(pct(&mut approvals, 0.5)),
        ms(first),
        ms(last)
    );
    println!(
        "  approve and publish, repository of {large_revisions} revisions p50    {} (p90 {})",
        ms(pct(&mut approve_large, 0.5)),
        ms(pct(&mut approve_large, 0.9))
    );
    println!(
        "  watch event after the write returned p50 / p99         {} / {}",
        ms(pct(&mut watch_lag, 0.5)),
        ms(pct(&mut watch_lag, 0.99))
    );
    println!(
        "  watch event after the write started p50 / p99         {} / {}",
        ms(pct(&mut watch_from_start, 0.5)),
        ms(pct(&mut watch_from_start, 0.99))
    );
    println!("  server after registration: {rss_registered}");
    println!("  server after the lists:    {rss_listed}");
    println!(
        "  server at the end:         {rss_end} (peak {} MiB)",
        hwm / 1024
    );
    println!(
        "  with the large repository: {} (peak {} MiB)",
        rss_split(server.0.id()),
        hwm_large / 1024
    );

    Ok(Some(Summary {
        list: pct(&mut list, 0.5),
        raw: pct(&mut raw, 0.5),
        update: pct(&mut update, 0.5),
        propose: pct(&mut propose_times, 0.5),
        approve: pct(&mut approvals, 0.5),
    }))
}
