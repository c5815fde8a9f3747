//! Upstream API e2e scenarios of `test/e2e/api/render_failure_test.go` (porch-api.md §18.1):
//! a failing pipeline rejects a resources update unless the package revision carries
//! `porch.kpt.dev/push-on-render-failure: "true"`, and with `kpt.dev/save-on-render-failure`
//! in the Kptfile the partially rendered resources are kept.

mod common;

use common::porch::*;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use serde_json::{Value, json};

const NS: &str = "default";

/// An image with no built-in implementation and no container runtime: always fails.
const FAILING: &str = "example.invalid/always-fails:v1";
const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  key: value\n";

async fn setup(pkg: &str) -> (Env, Api<DynamicObject>, Api<DynamicObject>, String) {
    let env = Env::start().await;
    let url = env.empty_repo("git");
    env.register(NS, "git", &url, json!({})).await;
    let prs = env.prs(NS);
    let prrs = env.prrs(NS);
    init(&prs, "git", pkg, "ws").await;
    let pr = format!("git.{pkg}.ws");
    (env, prs, prrs, pr)
}

async fn kptfile_with(prrs: &Api<DynamicObject>, pr: &str, extra: &str) -> String {
    let kf = files_of(prrs, pr).await["Kptfile"]
        .as_str()
        .expect("Kptfile")
        .to_owned();
    format!("{kf}{extra}")
}

async fn annotate_push(prs: &Api<DynamicObject>, pr: &str) {
    prs.patch(
        pr,
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"annotations": {
            "porch.kpt.dev/push-on-render-failure": "true",
        }}})),
    )
    .await
    .expect("annotate push-on-render-failure");
}

fn yaml(text: &Value) -> Value {
    serde_yaml::from_str(text.as_str().expect("file text")).expect("yaml")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_render_failure_no_push() {
    let (_env, _prs, prrs, pr) = setup("no-push").await;
    let before = files_of(&prrs, &pr).await;
    let kptfile = kptfile_with(
        &prrs,
        &pr,
        &format!("pipeline:\n  mutators:\n  - image: {FAILING}\n"),
    )
    .await;
    let (code, msg) =
        api_err(put_files(&prrs, &pr, &[("Kptfile", &kptfile), ("cm.yaml", CM)]).await);
    assert!(code >= 400, "{code}");
    assert!(
        msg.contains("error rendering package in kpt function pipeline"),
        "{msg}"
    );
    assert!(msg.contains("Package NOT pushed to remote"), "{msg}");
    assert_eq!(files_of(&prrs, &pr).await, before, "nothing was saved");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_render_failure_with_push_annotation() {
    let (_env, prs, prrs, pr) = setup("push").await;
    annotate_push(&prs, &pr).await;
    let kptfile = kptfile_with(
        &prrs,
        &pr,
        &format!(
            "pipeline:\n  mutators:\n  - image: gcr.io/kpt-fn/set-annotations:v0.1.4\n    configMap:\n      foo: bar\n  - image: {FAILING}\n"
        ),
    )
    .await;
    let (code, msg) =
        api_err(put_files(&prrs, &pr, &[("Kptfile", &kptfile), ("cm.yaml", CM)]).await);
    assert!(code >= 400, "{code}");
    assert!(
        msg.contains("Package pushed to remote despite render failure"),
        "{msg}"
    );
    let files = files_of(&prrs, &pr).await;
    let cm = yaml(files.get("cm.yaml").expect("cm.yaml was saved"));
    assert_eq!(cm["data"]["key"], "value");
    assert!(
        cm["metadata"]["annotations"]["foo"].is_null(),
        "the unrendered resources were saved: {cm}"
    );
    assert!(
        files["Kptfile"]
            .as_str()
            .is_some_and(|k| k.contains(FAILING)),
        "the new Kptfile was saved"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_render_failure_with_save_and_push_annotations() {
    let (_env, prs, prrs, pr) = setup("save-and-push").await;
    annotate_push(&prs, &pr).await;
    let kf = files_of(&prrs, &pr).await["Kptfile"]
        .as_str()
        .expect("Kptfile")
        .to_owned();
    let mut doc: Value = serde_yaml::from_str(&kf).expect("Kptfile yaml");
    doc["metadata"]["annotations"]["kpt.dev/save-on-render-failure"] = json!("true");
    doc["pipeline"] = json!({"mutators": [
        {"image": "gcr.io/kpt-fn/set-annotations:v0.1.4", "configMap": {"foo": "bar"}},
        {"image": FAILING},
    ]});
    let kptfile = serde_yaml::to_string(&doc).expect("Kptfile text");
    let (code, msg) =
        api_err(put_files(&prrs, &pr, &[("Kptfile", &kptfile), ("cm.yaml", CM)]).await);
    assert!(code >= 400, "{code}");
    assert!(
        msg.contains("Package pushed to remote despite render failure"),
        "{msg}"
    );
    let files = files_of(&prrs, &pr).await;
    let cm = yaml(files.get("cm.yaml").expect("cm.yaml was saved"));
    assert_eq!(
        cm["metadata"]["annotations"]["foo"], "bar",
        "the partially rendered resources were saved: {cm}"
    );
}
