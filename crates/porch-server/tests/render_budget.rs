//! Renders on the server under hostile pipelines (issue: hostile input and crashes): large
//! starlark inputs render (they crashed the server once), a render that never ends is stopped
//! by its budget without holding up other writes to its repository, an abandoned render
//! stops, SIGTERM stops a rendering server, and oversized output is refused naming the limit.

mod common;

use std::time::{Duration, Instant};

use common::porch::*;
use kube::api::{Api, DynamicObject};
use serde_json::json;

const NS: &str = "default";

/// A Kptfile whose pipeline runs `source` with the built-in starlark function, and the
/// function's config file.
fn starlark_pkg(name: &str, source: &str) -> [(&'static str, String); 2] {
    let indented: String = source.lines().map(|l| format!("  {l}\n")).collect();
    [
        (
            "Kptfile",
            format!(
                "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {name}\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\npipeline:\n  mutators:\n    - image: gcr.io/kpt-fn/starlark:v0.4.3\n      configPath: star.yaml\n"
            ),
        ),
        (
            "star.yaml",
            format!(
                "apiVersion: fn.kpt.dev/v1alpha1\nkind: StarlarkRun\nmetadata:\n  name: run\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\nsource: |\n{indented}"
            ),
        ),
    ]
}

/// `put_files` with owned pairs.
async fn put(
    prrs: &Api<DynamicObject>,
    name: &str,
    files: &[(&'static str, String)],
) -> Result<DynamicObject, kube::Error> {
    let refs: Vec<(&str, &str)> = files.iter().map(|(k, v)| (*k, v.as_str())).collect();
    put_files(prrs, name, &refs).await
}

fn config_maps(n: usize) -> String {
    (0..n)
        .map(|i| {
            format!("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i}\ndata:\n  key: value-{i}\n")
        })
        .collect()
}

/// Nested loops of 2^31 iterations each: never ends in practice.
const FOREVER: &str = "for i in range(2147483647):\n  for j in range(2147483647):\n    pass\n";

/// Generates `n` ConfigMaps into one file (idempotent: a re-render replaces them).
fn generator(n: usize) -> String {
    format!(
        "items = [r for r in ctx.resource_list[\"items\"] if not r[\"metadata\"][\"name\"].startswith(\"gen-\")]\nfor i in range({n}):\n  items.append({{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {{\"name\": \"gen-%d\" % i, \"annotations\": {{\"config.kubernetes.io/path\": \"generated.yaml\", \"config.kubernetes.io/index\": str(i)}}}}, \"data\": {{\"k\": \"v\"}}}})\nctx.resource_list[\"items\"] = items\n"
    )
}

async fn setup(flags: &[&str], packages: &[&str]) -> (Env, Api<DynamicObject>, Api<DynamicObject>) {
    let env = Env::start_with(flags).await;
    let url = env.empty_repo("git");
    env.register(NS, "git", &url, json!({})).await;
    let prs = env.prs(NS);
    let prrs = env.prrs(NS);
    for p in packages {
        init(&prs, "git", p, "ws").await;
    }
    (env, prs, prrs)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn starlark_over_many_config_maps_renders_and_proposes() {
    let (_env, prs, prrs) = setup(&[], &["small", "large"]).await;
    for (pkg, n) in [("small", 200), ("large", 10_000)] {
        let pr = format!("git.{pkg}.ws");
        let cms = config_maps(n);
        let [kf, star] = starlark_pkg(pkg, "pass\n");
        put(&prrs, &pr, &[kf, star, ("cms.yaml", cms)])
            .await
            .unwrap_or_else(|e| panic!("update {pr} with {n} ConfigMaps: {e:?}"));
        let files = files_of(&prrs, &pr).await;
        let saved = files["cms.yaml"].as_str().expect("cms.yaml");
        assert_eq!(saved.matches("kind: ConfigMap").count(), n);
        // Propose re-renders.
        let proposed = propose(&prs, &pr).await;
        assert_eq!(spec(&proposed)["lifecycle"], "Proposed");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_render_that_never_ends_is_stopped_and_other_writes_proceed() {
    let (env, prs, prrs) = setup(&["--render-timeout-seconds", "6"], &["forever", "other"]).await;
    let forever = {
        let prrs = prrs.clone();
        tokio::spawn(async move {
            let r = put(&prrs, "git.forever.ws", &starlark_pkg("forever", FOREVER)).await;
            (Instant::now(), r)
        })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    // Writes to the same repository while the render runs: create, update, propose.
    init(&prs, "git", "third", "ws").await;
    put_files(&prrs, "git.other.ws", &[("cm.yaml", &config_maps(1))])
        .await
        .expect("update another package while a render runs");
    propose(&prs, "git.other.ws").await;
    let others_done = Instant::now();

    let (forever_done, r) = forever.await.expect("join");
    let (code, msg) = api_err(r);
    assert_eq!(code, 422, "{msg}");
    assert!(msg.contains("time limit of 6s"), "{msg}");
    assert!(
        others_done < forever_done,
        "the other writes waited for the endless render"
    );
    let files = files_of(&prrs, "git.forever.ws").await;
    assert!(
        !files.contains_key("star.yaml"),
        "nothing of the failed update was saved"
    );
    drop(env);
}

/// CPU seconds the process has used (utime + stime, from /proc).
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
    let after = stat.rsplit_once(')').expect("comm").1;
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks: f64 = f[11].parse::<f64>().expect("utime") + f[12].parse::<f64>().expect("stime");
    ticks / 100.0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_abandoned_render_stops_and_sigterm_stops_the_server() {
    // No time budget: only abandonment and shutdown can stop these renders.
    let (mut env, _prs, prrs) = setup(
        &[
            "--render-timeout-seconds",
            "0",
            "--shutdown-grace-seconds",
            "2",
        ],
        &["a", "b"],
    )
    .await;
    let pid = env.server.child.as_ref().expect("running").id();
    let abandoned = tokio::time::timeout(
        Duration::from_secs(2),
        put(&prrs, "git.a.ws", &starlark_pkg("a", FOREVER)),
    )
    .await;
    assert!(
        abandoned.is_err(),
        "the endless render answered: {abandoned:?}"
    );
    // The client has gone; the server must stop burning a core.
    let mut idle = false;
    for _ in 0..20 {
        let before = cpu_seconds(pid);
        tokio::time::sleep(Duration::from_millis(1000)).await;
        if cpu_seconds(pid) - before < 0.3 {
            idle = true;
            break;
        }
    }
    assert!(idle, "the abandoned render kept running");

    // A render in flight at SIGTERM does not keep the server alive.
    let prrs2 = prrs.clone();
    let running =
        tokio::spawn(async move { put(&prrs2, "git.b.ws", &starlark_pkg("b", FOREVER)).await });
    tokio::time::sleep(Duration::from_millis(500)).await;
    let status = env.server.terminate();
    assert!(status.success(), "{status:?}");
    let _ = running.await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_million_resources_are_refused_naming_the_limit() {
    let (_env, _prs, prrs) = setup(&[], &["huge"]).await;
    let r = put(
        &prrs,
        "git.huge.ws",
        &starlark_pkg("huge", &generator(1_000_000)),
    )
    .await;
    let (code, msg) = api_err(r);
    assert_eq!(code, 422, "{msg}");
    assert!(
        msg.contains("1000003 resources, more than the limit of 250000 resources per function"),
        "{msg}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_generated_package_of_100000_resources_is_proposed() {
    let (_env, prs, prrs) = setup(&[], &["big"]).await;
    put(
        &prrs,
        "git.big.ws",
        &starlark_pkg("big", &generator(100_000)),
    )
    .await
    .expect("render 100,000 generated resources");
    let files = files_of(&prrs, "git.big.ws").await;
    let generated = files["generated.yaml"].as_str().expect("generated.yaml");
    assert_eq!(generated.matches("kind: ConfigMap").count(), 100_000);
    let proposed = propose(&prs, "git.big.ws").await;
    assert_eq!(spec(&proposed)["lifecycle"], "Proposed");
}
