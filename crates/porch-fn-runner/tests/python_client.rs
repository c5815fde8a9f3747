//! porch-fn-runner answers a client generated from Porch's proto by another toolchain
//! (Python grpcio-tools), not from our Rust types: a built-in function, a failing one, an
//! unknown image, and the standard health check.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::Runner;

use serde_json::Value;

/// The venv's python (created once by the CI script).
fn python() -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.ci/python-grpc.sh");
    let out = Command::new("bash")
        .arg(script)
        .output()
        .expect("run python-grpc.sh");
    assert!(
        out.status.success(),
        "python-grpc.sh failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

fn client(runner: &Runner, args: &[&str]) -> Value {
    let work = tempfile::tempdir().expect("tempdir");
    let proto = Path::new(env!("CARGO_MANIFEST_DIR")).join("../porch-fn-proto/proto");
    let out = Command::new(python())
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/client.py"))
        .arg(&proto)
        .arg(work.path())
        .arg(&runner.address)
        .args(args)
        .output()
        .expect("run the python client");
    assert!(
        out.status.success(),
        "python client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json")
}

const INPUT: &str = "apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: cm
  data:
    key: value
functionConfig:
  apiVersion: v1
  kind: ConfigMap
  metadata:
    name: fn-config
  data:
    SOURCE
";

fn eval(runner: &Runner, image: &str, config: &str) -> Value {
    let dir = tempfile::tempdir().expect("tempdir");
    let input = dir.path().join("input.yaml");
    std::fs::write(&input, INPUT.replace("SOURCE", config)).expect("write");
    client(
        runner,
        &["eval", image, input.to_str().expect("utf-8 path")],
    )
}

#[test]
fn a_python_client_runs_a_builtin_function() {
    let runner = Runner::start(&[]);
    let answer = eval(
        &runner,
        "ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.2.0",
        "app: demo",
    );
    assert_eq!(answer["ok"], true, "{answer}");
    let out: Value = serde_yaml::from_str(answer["resource_list"].as_str().expect("text"))
        .expect("a ResourceList");
    assert_eq!(out["kind"], "ResourceList", "{out}");
    assert_eq!(
        out["items"][0]["metadata"]["labels"]["app"], "demo",
        "{out}"
    );
    assert_eq!(out["items"][0]["data"]["key"], "value", "{out}");
}

#[test]
fn a_failing_function_is_an_internal_error_with_its_message() {
    let runner = Runner::start(&[]);
    let answer = eval(
        &runner,
        "gcr.io/kpt-fn/starlark:v0.4.3",
        "source: |\n      fail(\"no way\")",
    );
    assert_eq!(answer["ok"], false, "{answer}");
    assert_eq!(answer["code"], "INTERNAL", "{answer}");
    let details = answer["details"].as_str().expect("details");
    assert!(
        details.starts_with("Failed to execute function \"gcr.io/kpt-fn/starlark:v0.4.3\""),
        "{details}"
    );
    assert!(details.contains("no way"), "{details}");
}

#[test]
fn an_image_no_runtime_provides_is_not_found() {
    // Without the container runtime, only built-ins (and exec) remain.
    let runner = Runner::start(&["--disable-runtimes", "exec,pod"]);
    let answer = eval(&runner, "example.com/team/not-built-in:v1", "a: b");
    assert_eq!(answer["ok"], false, "{answer}");
    assert_eq!(answer["code"], "NOT_FOUND", "{answer}");
    assert!(
        answer["details"]
            .as_str()
            .expect("details")
            .contains("example.com/team/not-built-in:v1"),
        "{answer}"
    );
}

#[test]
fn a_request_that_is_not_a_resource_list_is_an_invalid_argument() {
    let runner = Runner::start(&[]);
    let dir = tempfile::tempdir().expect("tempdir");
    let input = dir.path().join("input.yaml");
    std::fs::write(&input, "items: [unclosed").expect("write");
    let answer = client(
        &runner,
        &[
            "eval",
            "set-labels:v0.2",
            input.to_str().expect("utf-8 path"),
        ],
    );
    assert_eq!(answer["code"], "INVALID_ARGUMENT", "{answer}");
}

#[test]
fn the_health_service_reports_serving() {
    let runner = Runner::start(&[]);
    assert_eq!(client(&runner, &["health"])["status"], "SERVING");
    assert_eq!(
        client(&runner, &["health", "evaluator.FunctionEvaluator"])["status"],
        "SERVING"
    );
}
