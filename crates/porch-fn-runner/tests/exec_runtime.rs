//! Porch's executable evaluator in the runner: `--config` maps images to binaries under
//! `--functions`, which run instead of a pull; `--disable-runtimes exec` turns it off. The
//! client is porch-server's (`porch_fn_proto::RemoteRuntime`).

mod common;

use common::Runner;
use kpt::resource_list::ResourceList;
use kpt::runtime::{FunctionRef, FunctionRuntime, RunOptions, RuntimeError};

const IMAGE: &str = "example.com/fn/change-value:v1";

const INPUT: &str = "apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: cm
  data:
    key: original
";

fn runner_with_exec(disable: &str) -> (Runner, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let functions = dir.path().join("functions");
    std::fs::create_dir_all(&functions).expect("mkdir");
    let binary = functions.join("change-value");
    std::fs::write(
        &binary,
        "#!/bin/sh\nexec sed 's/key: original/key: changed/'\n",
    )
    .expect("write");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let config = dir.path().join("config.yaml");
    std::fs::write(
        &config,
        format!("functions:\n- function: change-value\n  images:\n  - {IMAGE}\n"),
    )
    .expect("config");
    let runner = Runner::start(&[
        "--functions",
        functions.to_str().expect("utf-8"),
        "--config",
        config.to_str().expect("utf-8"),
        "--disable-runtimes",
        disable,
    ]);
    (runner, dir)
}

fn eval(runner: &Runner) -> Result<kpt::runtime::FunctionOutput, RuntimeError> {
    let client = porch_fn_proto::RemoteRuntime::connect(&runner.address, 1 << 20).expect("client");
    client.run(
        &FunctionRef::Image(IMAGE.into()),
        ResourceList::from_yaml(INPUT).expect("input"),
        &RunOptions::default(),
    )
}

#[test]
fn a_configured_image_runs_its_binary() {
    let (runner, _dir) = runner_with_exec("pod");
    let out = eval(&runner).expect("ran");
    assert_eq!(out.exit_code, 0, "{}", out.stderr);
    assert!(
        out.list.to_yaml().contains("key: changed"),
        "{}",
        out.list.to_yaml()
    );
}

#[test]
fn a_disabled_exec_runtime_leaves_the_image_not_found() {
    let (runner, _dir) = runner_with_exec("exec,pod");
    let err = eval(&runner).expect_err("not found");
    assert!(matches!(err, RuntimeError::NotFound(_)), "{err}");
    assert!(err.to_string().contains(IMAGE), "{err}");
}
