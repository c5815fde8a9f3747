//! What the render budget costs on the normal path: two release porch-servers side by side in
//! one run, one with the default budget (time limit, output and starlark limits, cancellation)
//! and one with every limit off (`--render-*` flags at 0), each with a repository on a
//! `file://` remote. Times, interleaved, the resources update with render (50 ConfigMaps x 3
//! built-in mutators) and the propose (which re-renders), and prints p50/p90 and the ratio.
//!
//! `cargo bench -p porch-server --bench render_budget -- [updates]` (default 60).

use std::time::{Duration, Instant};

use anyhow::bail;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use serde_json::json;

mod common;

use common::{ServerProcess, api, object, start_server_with};

const NS: &str = "default";

async fn start(
    dir: &std::path::Path,
    flags: &[&str],
) -> anyhow::Result<(ServerProcess, kube::Client)> {
    let (proc, kc) = start_server_with(env!("CARGO_BIN_EXE_porch-server"), dir, flags)?;
    let config = kube::Config::from_custom_kubeconfig(kc, &Default::default()).await?;
    Ok((proc, kube::Client::try_from(config)?))
}

fn fifty_resources(value: usize) -> serde_json::Map<String, serde_json::Value> {
    let mut files = serde_json::Map::new();
    files.insert(
        "Kptfile".into(),
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\npipeline:\n  mutators:\n  - image: set-namespace:v0.4.1\n    configMap:\n      namespace: bench\n  - image: set-labels:v0.2.0\n    configMap:\n      app: bench\n  - image: set-annotations:v0.1.4\n    configMap:\n      owner: bench\n".into(),
    );
    for i in 0..50 {
        files.insert(
            format!("cm-{i:02}.yaml"),
            format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i:02} # generated\ndata:\n  value: \"{value}\"\n"
            )
            .into(),
        );
    }
    files
}

/// One server under test: its process, client and the remote it registered.
struct Side {
    label: &'static str,
    _proc: ServerProcess,
    prs: Api<DynamicObject>,
    prr: Api<DynamicObject>,
    updates: Vec<Duration>,
    proposes: Vec<Duration>,
}

async fn side(label: &'static str, root: &std::path::Path, flags: &[&str]) -> anyhow::Result<Side> {
    let dir = root.join(label);
    std::fs::create_dir_all(&dir)?;
    let bare = dir.join("remote.git");
    let repo = porch_testkit::repos::init_bare(&bare, "main")?;
    porch_testkit::repos::commit_files(
        &repo,
        "main",
        &porch_testkit::repos::files(&[("README.md", "bench\n")]),
        "init",
    )?;
    let (proc, client) = start(&dir, flags).await?;
    let repos = api(
        &client,
        "config.porch.kpt.dev",
        "Repository",
        "repositories",
    );
    let body = object(json!({
        "apiVersion": "config.porch.kpt.dev/v1alpha1", "kind": "Repository",
        "metadata": {"name": "r", "namespace": NS},
        "spec": {"type": "git", "git": {"repo": format!("file://{}", bare.display()), "branch": "main"}},
    }))?;
    // The server may still be starting: retry the registration for a while.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match repos.create(&PostParams::default(), &body).await {
            Ok(_) => break,
            Err(e) if Instant::now() < deadline => {
                let _ = e;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => return Err(e.into()),
        }
    }
    loop {
        let r = repos.get("r").await?;
        let ready = r.data["status"]["conditions"].as_array().is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == "Ready" && c["status"] == "True")
        });
        if ready {
            break;
        }
        if Instant::now() > deadline {
            bail!("{label}: repository never became ready");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(Side {
        label,
        _proc: proc,
        prs: api(
            &client,
            "porch.kpt.dev",
            "PackageRevision",
            "packagerevisions",
        ),
        prr: api(
            &client,
            "porch.kpt.dev",
            "PackageRevisionResources",
            "packagerevisionresources",
        ),
        updates: Vec::new(),
        proposes: Vec::new(),
    })
}

/// Creates draft `app-<i>`, writes its resources (timed) and proposes it (timed).
async fn round(s: &mut Side, i: usize) -> anyhow::Result<()> {
    let body = object(json!({
        "apiVersion": "porch.kpt.dev/v1alpha1", "kind": "PackageRevision", "metadata": {},
        "spec": {"repository": "r", "packageName": format!("app-{i}"), "workspaceName": "ws",
                 "tasks": [{"type": "init", "init": {"description": "bench"}}]},
    }))?;
    let name = s
        .prs
        .create(&PostParams::default(), &body)
        .await?
        .metadata
        .name
        .unwrap_or_default();
    let mut res = s.prr.get(&name).await?;
    res.data["spec"]["resources"] = json!(fifty_resources(i));
    let t = Instant::now();
    let res = s.prr.replace(&name, &PostParams::default(), &res).await?;
    s.updates.push(t.elapsed());
    if res.data["status"]["renderStatus"]["error"] != "" {
        bail!("render failed: {}", res.data["status"]["renderStatus"]);
    }
    let t = Instant::now();
    s.prs
        .patch(
            &name,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"lifecycle": "Proposed"}})),
        )
        .await?;
    s.proposes.push(t.elapsed());
    Ok(())
}

fn pct(v: &[Duration], p: f64) -> Duration {
    let mut v = v.to_vec();
    v.sort();
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v.get(i).copied().unwrap_or_default()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[tokio::main(flavor = "multi_thread", worker_threads = 4)]
async fn main() -> anyhow::Result<()> {
    let rounds: usize = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .and_then(|a| a.parse().ok())
        .unwrap_or(60);
    if cfg!(debug_assertions) {
        eprintln!("note: a debug build; run with `cargo bench` for meaningful figures");
    }
    let tmp = tempfile::tempdir()?;
    let off = [
        "--render-timeout-seconds",
        "0",
        "--render-max-resources",
        "0",
        "--render-max-output-bytes",
        "0",
        "--render-max-memory-mb",
        "0",
    ];
    let mut budgeted = side("budget", tmp.path(), &[]).await?;
    let mut unlimited = side("no-budget", tmp.path(), &off).await?;
    // Warm-up, then interleaved rounds so both servers see the same machine.
    for i in 0..3 {
        round(&mut budgeted, 1_000 + i).await?;
        round(&mut unlimited, 1_000 + i).await?;
    }
    budgeted.updates.clear();
    budgeted.proposes.clear();
    unlimited.updates.clear();
    unlimited.proposes.clear();
    for i in 0..rounds {
        if i % 2 == 0 {
            round(&mut budgeted, i).await?;
            round(&mut unlimited, i).await?;
        } else {
            round(&mut unlimited, i).await?;
            round(&mut budgeted, i).await?;
        }
    }
    println!("render budget on the normal path, {rounds} rounds each, interleaved");
    println!(
        "{:<34} {:>10} {:>10} {:>10} {:>10} {:>8}",
        "operation", "budget p50", "p90", "none p50", "p90", "ratio"
    );
    for (what, a, b) in [
        (
            "resources update, 50 res x 3 fns",
            &budgeted.updates,
            &unlimited.updates,
        ),
        (
            "propose (re-render)",
            &budgeted.proposes,
            &unlimited.proposes,
        ),
    ] {
        let (a50, b50) = (pct(a, 0.5), pct(b, 0.5));
        println!(
            "{what:<34} {:>8.2}ms {:>8.2}ms {:>8.2}ms {:>8.2}ms {:>8.3}",
            ms(a50),
            ms(pct(a, 0.9)),
            ms(b50),
            ms(pct(b, 0.9)),
            a50.as_secs_f64() / b50.as_secs_f64()
        );
    }
    let _ = (budgeted.label, unlimited.label);
    Ok(())
}
