//! Per-call cost of a warm container function on 100 resources: run in process (the
//! sandbox runtime porch-server uses) against run through a `porch-fn-runner` process over
//! gRPC (porch-server `--function-runner`). The image is built and pushed to a local
//! registry first and pulled once by each side (warm-up), so only calls are timed; the
//! two sides alternate so that machine noise hits both. Prints p50/p90 of each.
//!
//! `cargo bench -p porch-server --bench fn_runner -- [calls]` (default 100). The runner
//! binary is the one next to porch-server's (`cargo build --release -p porch-fn-runner`).

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use kpt::resource_list::ResourceList;
use kpt::runtime::{FunctionRef, FunctionRuntime, RunOptions};
use porch_testkit::registry::{Registry, function_image};

mod common;

use common::{ms, pct};

/// Labels every resource (sed over the ResourceList): cheap, so the runtime's cost shows.
const SET_LABEL: &str = "sed 's/^  metadata:$/  metadata:\\n    labels:\\n      color: blue/'\n";

struct RunnerProcess(Child);

impl Drop for RunnerProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_runner(cache: &std::path::Path) -> anyhow::Result<(RunnerProcess, String)> {
    let binary =
        PathBuf::from(env!("CARGO_BIN_EXE_porch-server")).with_file_name("porch-fn-runner");
    if !binary.exists() {
        bail!(
            "{} is missing: build it with the same profile (cargo build --release -p porch-fn-runner)",
            binary.display()
        );
    }
    let mut child = Command::new(&binary)
        .args([
            "--port",
            "0",
            "--bind-address",
            "127.0.0.1",
            "--log-level",
            "1",
        ])
        .arg("--function-cache-dir")
        .arg(cache)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("starting {}", binary.display()))?;
    let stdout = child.stdout.take().context("runner stdout")?;
    let process = RunnerProcess(child);
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line)?;
    let address = line
        .trim()
        .strip_prefix("listening on ")
        .with_context(|| format!("unexpected runner output {line:?}"))?
        .to_owned();
    Ok((process, address))
}

fn input(resources: usize) -> anyhow::Result<ResourceList> {
    let mut text =
        String::from("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n");
    for i in 0..resources {
        text.push_str(&format!(
            "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: cm-{i:03}\n  data:\n    value: \"{i}\"\n"
        ));
    }
    Ok(ResourceList::from_yaml(&text)?)
}

/// One timed call; checks the function did its work.
fn call(
    runtime: &dyn FunctionRuntime,
    image: &str,
    list: &ResourceList,
) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let out = runtime.run(
        &FunctionRef::Image(image.to_owned()),
        list.clone(),
        &RunOptions::default(),
    )?;
    let took = started.elapsed();
    if out.exit_code != 0 || !out.list.to_yaml().contains("color: blue") {
        bail!(
            "the function failed: exit {}: {}",
            out.exit_code,
            out.stderr
        );
    }
    Ok(took)
}

fn main() -> anyhow::Result<()> {
    let calls: usize = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .and_then(|a| a.parse().ok())
        .unwrap_or(100);
    let registry = Registry::start();
    let image = registry.push(&function_image(SET_LABEL), "bench/set-label:v1", false);
    let dir = tempfile::tempdir()?;
    let list = input(100)?;

    let in_process = fn_container::ContainerRuntime::new(fn_container::ContainerOptions::new(
        dir.path().join("local"),
    ))?;
    let (_runner, address) = start_runner(&dir.path().join("runner"))?;
    let remote = porch_fn_proto::RemoteRuntime::connect(&address, 64 << 20)?;

    // Warm-up: the pull, the unpack and the connection.
    call(&in_process, &image, &list)?;
    call(&remote, &image, &list)?;

    let mut local = Vec::with_capacity(calls);
    let mut through = Vec::with_capacity(calls);
    for _ in 0..calls {
        local.push(call(&in_process, &image, &list)?);
        through.push(call(&remote, &image, &list)?);
    }
    println!("warm container function, 100 resources, {calls} calls each");
    println!(
        "in process:      p50 {}  p90 {}",
        ms(pct(&mut local, 0.5)),
        ms(pct(&mut local, 0.9))
    );
    println!(
        "through runner:  p50 {}  p90 {}",
        ms(pct(&mut through, 0.5)),
        ms(pct(&mut through, 0.9))
    );
    Ok(())
}
