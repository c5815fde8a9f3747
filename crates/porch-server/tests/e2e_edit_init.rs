//! Upstream API e2e scenarios of `test/e2e/api/rpkg_edit_test.go` and `rpkg_init_test.go`
//! (porch-api.md §18.1): edit (copy), resource updates with render, init.

mod common;

use common::porch::*;
use kube::api::PostParams;
use serde_json::json;

const NS: &str = "default";

async fn setup() -> Env {
    let env = Env::start().await;
    let url = env.empty_repo("git");
    env.register(NS, "git", &url, json!({})).await;
    env
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_edit_package_revision() {
    let env = setup().await;
    let prs = env.prs(NS);
    init_published(&prs, "git", "edit-pkg", "v1").await;
    init_published(&prs, "git", "other-pkg", "v1").await;
    // An unpublished revision of the same package.
    create(
        &prs,
        "git",
        "edit-pkg",
        "draft",
        edit_task("git.edit-pkg.v1"),
    )
    .await;

    let refused = |source: &str| new_revision("git", "edit-pkg", "v2", edit_task(source));
    for (source, text) in [
        (
            "git.other-pkg.v1",
            "source revision must be from same package",
        ),
        ("git.edit-pkg.draft", "source revision must be published"),
        ("git.edit-pkg.main", "placeholder package revision"),
    ] {
        let (code, msg) = api_err(prs.create(&PostParams::default(), &refused(source)).await);
        assert!(code >= 400, "{source}: {code}");
        assert!(msg.contains(text), "{source}: {msg}");
        assert!(is_gone(&prs, "git.edit-pkg.v2").await, "{source}");
    }

    let copy = create(&prs, "git", "edit-pkg", "v2", edit_task("git.edit-pkg.v1")).await;
    assert_eq!(spec(&copy)["lifecycle"], "Draft");
    let got = prs.get("git.edit-pkg.v2").await.expect("get");
    let tasks = spec(&got)["tasks"].as_array().cloned().unwrap_or_default();
    assert_eq!(tasks.len(), 1, "{tasks:?}");
    assert_eq!(tasks[0]["type"], "edit");
    assert_eq!(tasks[0]["edit"]["sourceRef"]["name"], "git.edit-pkg.v1");
    let prrs = env.prrs(NS);
    assert_eq!(
        files_of(&prrs, "git.edit-pkg.v2").await,
        files_of(&prrs, "git.edit-pkg.v1").await,
        "the copy has the same files"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_update_resources() {
    let env = setup().await;
    let prs = env.prs(NS);
    let prrs = env.prrs(NS);
    let pr = "git.update-pkg.ws";
    init(&prs, "git", "update-pkg", "ws").await;

    let kptfile = files_of(&prrs, pr).await["Kptfile"]
        .as_str()
        .expect("Kptfile")
        .to_owned();
    let kptfile = format!(
        "{kptfile}pipeline:\n  mutators:\n  - image: gcr.io/kpt-fn/set-annotations:v0.1.4\n    configMap:\n      foo: bar\n"
    );
    let cm =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: new-config-map\ndata:\n  key: value\n";
    let updated = put_files(&prrs, pr, &[("Kptfile", &kptfile), ("config-map.yaml", cm)])
        .await
        .expect("update resources");
    let rendered: serde_json::Value = serde_yaml::from_str(
        updated.data["spec"]["resources"]["config-map.yaml"]
            .as_str()
            .expect("config-map.yaml"),
    )
    .expect("yaml");
    assert_eq!(rendered["metadata"]["annotations"]["foo"], "bar");
    assert_eq!(rendered["data"]["key"], "value");
    let status = &updated.data["status"]["renderStatus"];
    assert_eq!(status["error"], "", "{status}");
    assert_eq!(
        status["result"]["exitCode"].as_i64().unwrap_or(0),
        0,
        "{status}"
    );
    let stored = files_of(&prrs, pr).await;
    assert_eq!(
        stored["config-map.yaml"],
        updated.data["spec"]["resources"]["config-map.yaml"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_update_resources_empty_patch() {
    let env = setup().await;
    let prs = env.prs(NS);
    let prrs = env.prrs(NS);
    let pr = "git.empty-patch.ws";
    init(&prs, "git", "empty-patch", "ws").await;

    let before = prrs.get(pr).await.expect("get");
    let after = prrs
        .replace(pr, &PostParams::default(), &before)
        .await
        .expect("no-op update");
    assert_eq!(
        after.data["spec"]["resources"],
        before.data["spec"]["resources"]
    );
    assert_eq!(after.data["status"]["renderStatus"]["error"], "");
    let got = prs.get(pr).await.expect("get");
    assert_eq!(spec(&got)["lifecycle"], "Draft");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_init_empty_package() {
    let env = setup().await;
    let prs = env.prs(NS);
    let created = create(&prs, "git", "empty-package", "ws", json!([])).await;
    assert_eq!(name(&created), "git.empty-package.ws");
    let kf = kptfile_of(&env.prrs(NS), "git.empty-package.ws").await;
    assert_eq!(kf["apiVersion"], "kpt.dev/v1");
    assert_eq!(kf["kind"], "Kptfile");
    assert_eq!(kf["metadata"]["name"], "empty-package");
    assert_eq!(kf["info"]["description"], "empty-package description");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_init_task_package() {
    let env = setup().await;
    let prs = env.prs(NS);
    create(
        &prs,
        "git",
        "new-package",
        "ws",
        json!([{"type": "init", "init": {
            "description": "this is a test",
            "keywords": ["test"],
            "site": "http://kpt.dev/new-package",
        }}]),
    )
    .await;
    let prrs = env.prrs(NS);
    let kf = kptfile_of(&prrs, "git.new-package.ws").await;
    assert_eq!(kf["metadata"]["name"], "new-package");
    assert_eq!(kf["info"]["description"], "this is a test");
    assert_eq!(kf["info"]["keywords"], json!(["test"]));
    assert_eq!(kf["info"]["site"], "http://kpt.dev/new-package");
    let files = files_of(&prrs, "git.new-package.ws").await;
    assert!(
        files.contains_key("package-context.yaml"),
        "{:?}",
        files.keys()
    );
    assert!(files.contains_key("README.md"), "{:?}", files.keys());
}
