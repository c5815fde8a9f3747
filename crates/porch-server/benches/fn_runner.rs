//! Per-call cost of one function on 100 resources, evaluated in process (as porch-server
//! renders without `--function-runner`) against through a `porch-fn-runner` process over
//! gRPC (porch-server `--function-runner`), for each evaluator: a built-in (`set-labels`),
//! an exec function (a shell script; the runner maps an image to it with Porch's exec
//! `--config`) and a warm container function (an image pushed to a local registry, pulled
//! once by each side before timing). The two sides alternate call by call so that machine
//! noise hits both. Prints p50 and p99 of each, side by side.
//!
//! `cargo bench -p porch-server --bench fn_runner -- [calls]` (default 100). The runner is
//! the `porch-fn-runner` of the same profile, next to porch-server's; the bench builds it
//! first (`cargo build -p porch-fn-runner` with that profile, a no-op when it is current).

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
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

/// The image the runner's exec `--config` maps to the script.
const EXEC_IMAGE: &str = "example.com/bench/exec-set-label:v1";

/// The built-in, by a catalog image name.
const BUILTIN_IMAGE: &str = "ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.2.0";

struct RunnerProcess(Child);

impl Drop for RunnerProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `porch-fn-runner` of the profile this bench was built with, built (or brought up to
/// date) by cargo first.
fn runner_binary() -> anyhow::Result<PathBuf> {
    let server = PathBuf::from(env!("CARGO_BIN_EXE_porch-server"));
    let binary = server.with_file_name("porch-fn-runner");
    let profile_dir = server
        .parent()
        .and_then(Path::file_name)
        .and_then(|d| d.to_str())
        .context("porch-server's directory")?
        .to_owned();
    let mut cargo = Command::new(env!("CARGO"));
    cargo.args(["build", "--quiet", "-p", "porch-fn-runner"]);
    match profile_dir.as_str() {
        "debug" => {}
        "release" => {
            cargo.arg("--release");
        }
        other => {
            cargo.args(["--profile", other]);
        }
    }
    let status = cargo
        .status()
        .context("running cargo build -p porch-fn-runner")?;
    if !status.success() || !binary.exists() {
        bail!(
            "{} is missing and could not be built: cargo build -p porch-fn-runner with the {profile_dir} profile",
            binary.display()
        );
    }
    Ok(binary)
}

fn start_runner(dir: &Path, functions: &Path) -> anyhow::Result<(RunnerProcess, String)> {
    let binary = runner_binary()?;
    let config = dir.join("exec-config.yaml");
    std::fs::write(
        &config,
        format!("functions:\n- function: set-label.sh\n  images:\n  - {EXEC_IMAGE}\n"),
    )?;
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
        .arg(dir.join("images"))
        .arg("--functions")
        .arg(functions)
        .arg("--config")
        .arg(&config)
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
    // The functionConfig is the built-in's; the script ignores it.
    let mut text = String::from(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: fn-config\n  data:\n    color: blue\nitems:\n",
    );
    for i in 0..resources {
        text.push_str(&format!(
            "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: cm-{i:03}\n  data:\n    value: \"{i}\"\n"
        ));
    }
    Ok(ResourceList::from_yaml(&text)?)
}

/// One timed call; checks the function did its work (every resource labelled).
fn call(
    runtime: &dyn FunctionRuntime,
    function: &FunctionRef,
    list: &ResourceList,
) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let out = runtime.run(function, list.clone(), &RunOptions::default())?;
    let took = started.elapsed();
    let labelled = out.list.to_yaml().matches("color: blue").count();
    if out.exit_code != 0 || labelled < list.items.len() {
        bail!(
            "{} failed: exit {}: {}",
            function.display(),
            out.exit_code,
            out.stderr
        );
    }
    Ok(took)
}

/// One evaluator's two ways of being called.
struct Case<'a> {
    name: &'static str,
    local: &'a dyn FunctionRuntime,
    local_ref: FunctionRef,
    remote_ref: FunctionRef,
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
    let functions = dir.path().join("functions");
    std::fs::create_dir_all(&functions)?;
    let script = functions.join("set-label.sh");
    std::fs::write(&script, format!("#!/bin/sh\n{SET_LABEL}"))?;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))?;
    let list = input(100)?;

    let builtins = krm_functions::Builtins;
    let exec = kpt::runtime::exec::ExecRuntime::allowed();
    let container = fn_container::ContainerRuntime::new(fn_container::ContainerOptions::new(
        dir.path().join("local"),
    ))?;
    let runner_dir = dir.path().join("runner");
    std::fs::create_dir_all(&runner_dir)?;
    let (_runner, address) = start_runner(&runner_dir, &functions)?;
    let remote = porch_fn_proto::RemoteRuntime::connect(&address, 64 << 20)?;

    let cases = [
        Case {
            name: "built-in",
            local: &builtins,
            local_ref: FunctionRef::Image(BUILTIN_IMAGE.into()),
            remote_ref: FunctionRef::Image(BUILTIN_IMAGE.into()),
        },
        Case {
            name: "exec",
            local: &exec,
            local_ref: FunctionRef::Exec(script.to_string_lossy().into_owned()),
            remote_ref: FunctionRef::Image(EXEC_IMAGE.into()),
        },
        Case {
            name: "container",
            local: &container,
            local_ref: FunctionRef::Image(image.clone()),
            remote_ref: FunctionRef::Image(image.clone()),
        },
    ];

    println!("one function on 100 resources, {calls} calls each (container: warm image)");
    println!(
        "{:<10} {:>12} {:>12}   {:>12} {:>12}",
        "evaluator", "in-proc p50", "in-proc p99", "runner p50", "runner p99"
    );
    for case in &cases {
        // Warm-up: the pull, the unpack and the connection.
        call(case.local, &case.local_ref, &list)?;
        call(&remote, &case.remote_ref, &list)?;
        let mut local = Vec::with_capacity(calls);
        let mut through = Vec::with_capacity(calls);
        for _ in 0..calls {
            local.push(call(case.local, &case.local_ref, &list)?);
            through.push(call(&remote, &case.remote_ref, &list)?);
        }
        println!(
            "{:<10} {:>12} {:>12}   {:>12} {:>12}",
            case.name,
            ms(pct(&mut local, 0.5)),
            ms(pct(&mut local, 0.99)),
            ms(pct(&mut through, 0.5)),
            ms(pct(&mut through, 0.99)),
        );
    }
    Ok(())
}
