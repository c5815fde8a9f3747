//! Upstream API e2e scenarios of `test/e2e/api/fn_runner_test.go` (porch-api.md §18.1) that
//! can exist without a cluster: built-in and exec function evaluators. The pod evaluator
//! scenarios need Kubernetes pods and are listed in COMPATIBILITY.md.

mod common;

use common::porch::*;
use serde_json::{Value, json};

const NS: &str = "default";

const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  key: original\n";

async fn render_with(env: &Env, pipeline: &str) -> Value {
    let url = env.empty_repo("git");
    env.register(NS, "git", &url, json!({})).await;
    let prs = env.prs(NS);
    let prrs = env.prrs(NS);
    init(&prs, "git", "fn-pkg", "ws").await;
    let kf = files_of(&prrs, "git.fn-pkg.ws").await["Kptfile"]
        .as_str()
        .expect("Kptfile")
        .to_owned();
    let updated = put_files(
        &prrs,
        "git.fn-pkg.ws",
        &[("Kptfile", &format!("{kf}{pipeline}")), ("cm.yaml", CM)],
    )
    .await
    .expect("update with a pipeline");
    assert_eq!(updated.data["status"]["renderStatus"]["error"], "");
    let stored = files_of(&prrs, "git.fn-pkg.ws").await;
    assert_eq!(
        stored["cm.yaml"],
        updated.data["spec"]["resources"]["cm.yaml"]
    );
    serde_yaml::from_str(stored["cm.yaml"].as_str().expect("cm.yaml")).expect("yaml")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_builtin_function_evaluator() {
    let env = Env::start().await;
    let cm = render_with(
        &env,
        "pipeline:\n  mutators:\n  - image: gcr.io/kpt-fn/starlark:v0.4.3\n    configMap:\n      source: |\n        for r in ctx.resource_list[\"items\"]:\n          if r[\"metadata\"][\"name\"] == \"cm\":\n            r[\"data\"][\"starlark\"] = \"ran\"\n  - image: gcr.io/kpt-fn/set-namespace:v0.4.1\n    configMap:\n      namespace: bucket-namespace\n",
    )
    .await;
    assert_eq!(cm["data"]["starlark"], "ran", "{cm}");
    assert_eq!(cm["metadata"]["namespace"], "bucket-namespace", "{cm}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_exec_function_evaluator() {
    let env = Env::start_with(&["--allow-exec-functions"]).await;
    let script = env.server.dir.path().join("change-value.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\nexec sed 's/key: original/key: changed/'\n",
    )
    .expect("write the exec function");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let cm = render_with(
        &env,
        &format!("pipeline:\n  mutators:\n  - exec: {}\n", script.display()),
    )
    .await;
    assert_eq!(cm["data"]["key"], "changed", "{cm}");
}

/// Not upstream (Porch runs images in pods): an image no built-in provides is pulled from a
/// registry and run in the sandbox, its unpacked image cached under the data directory.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_container_function_evaluator() {
    let registry = porch_testkit::registry::Registry::start();
    let image = registry.push(
        &porch_testkit::registry::function_image("sed 's/key: original/key: changed/'\n"),
        "fn/change-value:v1",
        false,
    );
    let env = Env::start().await;
    let cm = render_with(
        &env,
        &format!("pipeline:\n  mutators:\n  - image: {image}\n"),
    )
    .await;
    assert_eq!(cm["data"]["key"], "changed", "{cm}");
    let cached = env.server.data_dir().join("function-images/images");
    assert_eq!(cached.read_dir().expect("image cache").count(), 1);
}
