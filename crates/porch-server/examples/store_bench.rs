//! Benchmark of the real server binary (release build), printing figures; not part of the
//! test run. Run with `cargo run --release -p porch-server --example store_bench [-- N]`.
//!
//! With N (default 10,000) PackageVariant objects stored it measures: create and update
//! throughput (64 concurrent clients), get p50/p99, full-list p50 next to serde_json
//! serializing the same objects in memory, watch delivery latency (write start → event
//! received), and the server's resident memory.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use kube::api::{Api, PostParams, WatchEvent, WatchParams};
use porch_api::PackageVariant;
use porch_api::packagevariant::{Downstream, PackageVariantSpec, Upstream};

const CONCURRENCY: usize = 64;

fn pv(name: &str, i: usize) -> PackageVariant {
    let mut p = PackageVariant::new(
        name,
        PackageVariantSpec {
            upstream: Some(Upstream {
                repo: Some("blueprints".into()),
                package: Some(format!("base-package-{}", i % 50)),
                workspace_name: Some("v1".into()),
                revision: None,
            }),
            downstream: Some(Downstream {
                repo: Some("deployments".into()),
                package: Some(format!("edge-site-{i}")),
            }),
            adoption_policy: Some("adoptNone".into()),
            deletion_policy: Some("delete".into()),
            labels: Some(
                [
                    ("site".to_string(), format!("edge-{i}")),
                    ("tier".into(), "bench".into()),
                ]
                .into(),
            ),
            annotations: Some(
                [("bench.porch.kpt.dev/padding".to_string(), "x".repeat(200))].into(),
            ),
            ..Default::default()
        },
    );
    p.metadata.namespace = Some("default".into());
    p
}

fn percentile(v: &mut [Duration], p: f64) -> Duration {
    v.sort();
    let idx = ((v.len() as f64 - 1.0) * p).round() as usize;
    v.get(idx).copied().unwrap_or_default()
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

fn start_server(dir: &std::path::Path) -> anyhow::Result<Child> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(&cargo)
        .args([
            "build",
            "--release",
            "-q",
            "-p",
            "porch-server",
            "--bin",
            "porch-server",
        ])
        .status()?;
    anyhow::ensure!(status.success(), "building porch-server failed");
    let exe = std::env::current_exe()?;
    let bin: PathBuf = exe
        .parent()
        .and_then(|p| p.parent())
        .map(|p| p.join("porch-server"))
        .ok_or_else(|| anyhow::anyhow!("no target dir"))?;
    let child = Command::new(bin)
        .args(["--data-dir"])
        .arg(dir.join("data"))
        .args(["--listen", "127.0.0.1:0"])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()?;
    let kc = dir.join("data").join("kubeconfig");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !kc.exists() {
        anyhow::ensure!(Instant::now() < deadline, "server did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(100));
    Ok(child)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10_000);
    let dir = tempfile::tempdir()?;
    let mut child = start_server(dir.path())?;
    let pid = child.id();
    let kc = kube::config::Kubeconfig::read_from(dir.path().join("data").join("kubeconfig"))?;
    let cfg = kube::Config::from_custom_kubeconfig(kc, &Default::default()).await?;
    let client = kube::Client::try_from(cfg)?;
    let api: Api<PackageVariant> = Api::namespaced(client.clone(), "default");
    println!("porch-server bench: {n} PackageVariant objects, {CONCURRENCY} concurrent writers");
    println!("rss at start: {} MiB", rss_kib(pid) / 1024);

    // Create throughput.
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..CONCURRENCY {
        let api = api.clone();
        let next = next.clone();
        tasks.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                if i >= n {
                    return Ok::<_, kube::Error>(());
                }
                api.create(&PostParams::default(), &pv(&format!("pv-{i:05}"), i))
                    .await?;
            }
        }));
    }
    for t in tasks {
        t.await??;
    }
    let create = started.elapsed();
    println!(
        "create: {n} in {:.2} s = {:.0} objects/s",
        create.as_secs_f64(),
        n as f64 / create.as_secs_f64()
    );

    println!("rss after create: {} MiB", rss_kib(pid) / 1024);

    // Update throughput.
    let updates = n.min(5_000);
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..CONCURRENCY {
        let api = api.clone();
        let next = next.clone();
        tasks.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                if i >= updates {
                    return Ok::<_, kube::Error>(());
                }
                let mut obj = pv(&format!("pv-{i:05}"), i);
                obj.spec.deletion_policy = Some("orphan".into());
                // Unconditional update (no resourceVersion): the server applies it to the latest.
                obj.metadata.resource_version = None;
                api.replace(&format!("pv-{i:05}"), &PostParams::default(), &obj)
                    .await?;
            }
        }));
    }
    for t in tasks {
        t.await??;
    }
    let update = started.elapsed();
    println!(
        "update: {updates} in {:.2} s = {:.0} objects/s",
        update.as_secs_f64(),
        updates as f64 / update.as_secs_f64()
    );

    // Get latency.
    let mut gets = Vec::new();
    for i in 0..2_000 {
        let name = format!("pv-{:05}", (i * 7919) % n);
        let t = Instant::now();
        let req = http::Request::get(format!(
            "/apis/config.porch.kpt.dev/v1alpha1/namespaces/default/packagevariants/{name}"
        ))
        .body(Vec::new())?;
        client.request_text(req).await?;
        gets.push(t.elapsed());
    }
    println!(
        "get: p50 {} p99 {}",
        ms(percentile(&mut gets, 0.5)),
        ms(percentile(&mut gets, 0.99))
    );

    // List latency vs serde_json serializing the same objects in memory.
    let mut lists = Vec::new();
    let mut body = String::new();
    for _ in 0..20 {
        let t = Instant::now();
        let req = http::Request::get(
            "/apis/config.porch.kpt.dev/v1alpha1/namespaces/default/packagevariants",
        )
        .body(Vec::new())?;
        body = client.request_text(req).await?;
        lists.push(t.elapsed());
    }
    let list_p50 = percentile(&mut lists, 0.5);
    let parsed: serde_json::Value = serde_json::from_str(&body)?;
    let items = parsed["items"].as_array().map(Vec::len).unwrap_or(0);
    let mut sers = Vec::new();
    for _ in 0..20 {
        let t = Instant::now();
        let bytes = serde_json::to_vec(&parsed)?;
        std::hint::black_box(bytes);
        sers.push(t.elapsed());
    }
    let ser_p50 = percentile(&mut sers, 0.5);
    println!(
        "list ({items} items, {:.1} MB): p50 {} p99 {}; serde_json::to_vec of the same list in memory: p50 {}; ratio {:.2}x",
        body.len() as f64 / 1e6,
        ms(list_p50),
        ms(percentile(&mut lists, 0.99)),
        ms(ser_p50),
        list_p50.as_secs_f64() / ser_p50.as_secs_f64()
    );
    println!("rss after list: {} MiB", rss_kib(pid) / 1024);

    // Watch delivery latency: write start -> event received.
    let current = parsed["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or("0")
        .to_string();
    let mut stream = Box::pin(api.watch(&WatchParams::default(), &current).await?);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Some(Ok(ev)) = stream.next().await {
            if let WatchEvent::Modified(o) = ev {
                let _ = tx.send((o.spec.description_marker(), Instant::now()));
            }
        }
    });
    let mut lat: Vec<Duration> = Vec::new();
    let mut writes: Vec<Duration> = Vec::new();
    let mut after_ack: Vec<Duration> = Vec::new();
    for i in 0..1_000 {
        let name = format!("pv-{:05}", i % n);
        let mut obj = pv(&name, i % n);
        obj.spec
            .labels
            .get_or_insert_default()
            .insert("round".into(), i.to_string());
        let t = Instant::now();
        api.replace(&name, &PostParams::default(), &obj).await?;
        let acked = Instant::now();
        writes.push(acked.duration_since(t));
        loop {
            let (marker, at) = rx
                .recv()
                .await
                .ok_or_else(|| anyhow::anyhow!("watch ended"))?;
            if marker == i.to_string() {
                lat.push(at.duration_since(t));
                after_ack.push(at.saturating_duration_since(acked));
                break;
            }
        }
    }
    println!(
        "watch delivery (write start -> event): p50 {} p99 {}",
        ms(percentile(&mut lat, 0.5)),
        ms(percentile(&mut lat, 0.99))
    );
    println!(
        "  the durable write itself (start -> ack): p50 {} p99 {}",
        ms(percentile(&mut writes, 0.5)),
        ms(percentile(&mut writes, 0.99))
    );
    println!(
        "  event arrival after the ack: p50 {} p99 {}",
        ms(percentile(&mut after_ack, 0.5)),
        ms(percentile(&mut after_ack, 0.99))
    );
    println!("rss at end: {} MiB", rss_kib(pid) / 1024);
    let _ = child.kill();
    let _ = child.wait();
    Ok(())
}

trait Marker {
    fn description_marker(&self) -> String;
}

impl Marker for PackageVariantSpec {
    fn description_marker(&self) -> String {
        self.labels
            .as_ref()
            .and_then(|l| l.get("round"))
            .cloned()
            .unwrap_or_default()
    }
}
