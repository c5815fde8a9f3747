//! What the porch-server benchmarks share: starting the release server binary on a data
//! directory, reading its memory, and formatting figures.

#![allow(dead_code)]

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind};

const NS: &str = "default";

pub fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

pub fn pct(v: &mut [Duration], p: f64) -> Duration {
    v.sort();
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v.get(i).copied().unwrap_or_default()
}

pub fn api(client: &kube::Client, group: &str, kind: &str, plural: &str) -> Api<DynamicObject> {
    let ar =
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, "v1alpha1", kind), plural);
    Api::namespaced_with(client.clone(), NS, &ar)
}

pub fn object(v: serde_json::Value) -> anyhow::Result<DynamicObject> {
    Ok(serde_json::from_value(v)?)
}

pub struct ServerProcess(pub Child);
impl Drop for ServerProcess {
    fn drop(&mut self) {
        // SIGTERM first: the server shuts down gracefully (and an allocator asked for its
        // statistics, e.g. MIMALLOC_SHOW_STATS=1, prints them); SIGKILL if it hangs.
        // Quiet: a process the bench already killed (failover) is gone.
        let _ = Command::new("kill")
            .args(["-TERM", &self.0.id().to_string()])
            .stderr(Stdio::null())
            .status();
        // Open watches hold the server for its shutdown grace period (10 s by default).
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if matches!(self.0.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// CPU time (user + system) of a process so far: /proc/<pid>/stat fields 14 and 15, in
/// clock ticks of 1/100 s (counted after the command name, which may hold spaces).
pub fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<u64> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    let ticks = f.get(11).copied().unwrap_or(0) + f.get(12).copied().unwrap_or(0);
    Duration::from_millis(ticks * 10)
}

pub fn status_kib(pid: u32, key: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

pub fn rss_kib(pid: u32) -> (u64, u64) {
    (status_kib(pid, "VmRSS:"), status_kib(pid, "VmHWM:"))
}

/// RSS split into anonymous memory (heap) and file-backed pages (mapped git packs and
/// indexes, which the kernel can drop), in MiB.
pub fn rss_split(pid: u32) -> String {
    format!(
        "RSS {} MiB (anon {} MiB, file {} MiB)",
        status_kib(pid, "VmRSS:") / 1024,
        status_kib(pid, "RssAnon:") / 1024,
        status_kib(pid, "RssFile:") / 1024
    )
}

pub fn start_server(
    bin: &str,
    dir: &std::path::Path,
) -> anyhow::Result<(ServerProcess, kube::config::Kubeconfig)> {
    start_server_with(bin, dir, &[])
}

/// [`start_server`] with extra server flags.
pub fn start_server_with(
    bin: &str,
    dir: &std::path::Path,
    flags: &[&str],
) -> anyhow::Result<(ServerProcess, kube::config::Kubeconfig)> {
    let data = dir.join("data");
    // PORCH_BENCH_WRAP runs the server under a profiler, e.g. "heaptrack -o /tmp/server".
    let wrap: Vec<String> = std::env::var("PORCH_BENCH_WRAP")
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    let mut command = match wrap.split_first() {
        Some((program, args)) => {
            let mut c = Command::new(program);
            c.args(args).arg(bin);
            c
        }
        None => Command::new(bin),
    };
    let child = command
        .arg("--data-dir")
        .arg(&data)
        .args(["--listen", "127.0.0.1:0"])
        // The benchmarks' remotes are file:// paths.
        .args(["--allow-local-repositories", "/"])
        .args(flags)
        .env(
            "RUST_LOG",
            std::env::var("PORCH_BENCH_LOG").unwrap_or_else(|_| "warn".into()),
        )
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .context("start porch-server")?;
    let proc = ServerProcess(child);
    let kc = data.join("kubeconfig");
    let deadline = Instant::now() + Duration::from_secs(120);
    while !kc.exists() {
        if Instant::now() > deadline {
            bail!("porch-server did not write its kubeconfig");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(50));
    Ok((proc, kube::config::Kubeconfig::read_from(&kc)?))
}

/// A Kptfile with three built-in mutators and 50 ConfigMaps (the API and authz benches'
/// resources update with render).
pub fn fifty_resources(name: &str, value: usize) -> serde_json::Map<String, serde_json::Value> {
    let mut files = serde_json::Map::new();
    files.insert(
        "Kptfile".into(),
        format!(
            "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {name}\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\npipeline:\n  mutators:\n  - image: set-namespace:v0.4.1\n    configMap:\n      namespace: bench\n  - image: set-labels:v0.2.0\n    configMap:\n      app: bench\n  - image: set-annotations:v0.1.4\n    configMap:\n      owner: bench\n"
        )
        .into(),
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
