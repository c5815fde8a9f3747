//! The official Kubernetes Python client against the real server, as Python automation would
//! drive it: the PackageVariant and PackageVariantSet scenario of `tests/python/variants.py`
//! (paging, watch from a list's resourceVersion, 409 on a stale write, dry-run deletes in the
//! query and in the body, fan-out and garbage collection) and a package revision's life in
//! `tests/python/lifecycle.py` (resources, propose, approval subresource, dry-run deletes of
//! revisions, Secrets and Namespaces).

mod common;

use common::porch::*;
use serde_json::json;

const NS: &str = "default";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn python_client_drives_variants_and_sets() {
    let python = porch_testkit::python::kubernetes_python().expect(
        "a Python virtual environment with the kubernetes client (needs python3-venv and PyPI \
         the first time; PORCH_PYTHON_VENV names an existing one)",
    );
    let env = Env::start().await;
    let blueprints = env.empty_repo("blueprints");
    env.register(NS, "blueprints", &blueprints, json!({})).await;
    let deployments = env.empty_repo("deployments");
    env.register(NS, "deployments", &deployments, json!({}))
        .await;
    init_published(&env.prs(NS), "blueprints", "foo", "v1").await;

    run_script(&env, python, "variants.py").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn python_client_drives_a_revision_lifecycle() {
    let python = porch_testkit::python::kubernetes_python().expect("python with kubernetes");
    let env = Env::start().await;
    let deployments = env.empty_repo("deployments");
    env.register(NS, "deployments", &deployments, json!({}))
        .await;
    run_script(&env, python, "lifecycle.py").await;
}

/// Runs `tests/python/<script> KUBECONFIG NAMESPACE`; it prints `ok` last when every step held.
async fn run_script(env: &Env, python: std::path::PathBuf, script: &str) {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/python")
        .join(script);
    let kubeconfig = env.server.kubeconfig();
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(python)
            .arg(script)
            .arg(kubeconfig)
            .arg(NS)
            .output()
            .expect("run python")
    })
    .await
    .expect("join");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.ends_with("ok\n"),
        "the Python scenario failed\n--- stdout\n{stdout}\n--- stderr\n{stderr}\n--- server log\n{}",
        env.server.log()
    );
}
