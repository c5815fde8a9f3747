//! Upstream API e2e scenarios of `test/e2e/api/repository_test.go` (porch-api.md §18.1):
//! registration, errors, modification, immutability, defaults, a hanging repository.

mod common;

use std::time::{Duration, Instant};

use common::porch::*;
use kube::api::{DynamicObject, ListParams, Patch, PatchParams, PostParams};
use porch_testkit::GitServer;
use serde_json::{Value, json};

const NS: &str = "default";

fn repository(name: &str, git: Value) -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": "config.porch.kpt.dev/v1alpha1",
        "kind": "Repository",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"type": "git", "git": git},
    }))
    .expect("repository object")
}

fn ready_condition(repo: &DynamicObject) -> Option<Value> {
    repo.data["status"]["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == "Ready").cloned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_git_repository() {
    let env = Env::start().await;
    let Some(url) = env.blueprints() else {
        return;
    };
    env.register(NS, "test-blueprints", &url, json!({})).await;
    let target = env.empty_repo("git");
    env.register(NS, "git", &target, json!({})).await;
    let prs = env.prs(NS);

    create(
        &prs,
        "git",
        "test-bucket",
        "ws",
        clone_task("test-blueprints.bucket.v1"),
    )
    .await;
    let files = files_of(&env.prrs(NS), "git.test-bucket.ws").await;
    let bucket: Value =
        serde_yaml::from_str(files["bucket.yaml"].as_str().expect("bucket.yaml")).expect("yaml");
    assert_eq!(bucket["kind"], "StorageBucket");
    // The blueprint's apply-setters pipeline (setters.yaml: name bucket2, nearline) ran.
    assert_eq!(bucket["metadata"]["name"], "blueprints-project-bucket2");
    assert_eq!(bucket["metadata"]["namespace"], "config-control");
    assert_eq!(bucket["spec"]["storageClass"], "nearline");
    assert_eq!(bucket["spec"]["location"], "us-central1");
    let kf: Value =
        serde_yaml::from_str(files["Kptfile"].as_str().expect("Kptfile")).expect("yaml");
    assert_eq!(kf["metadata"]["name"], "test-bucket");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_git_repository_with_release_tags_and_directory() {
    let env = Env::start().await;
    let kptfile = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: bucket\n";
    let url = env.repo_with(
        "catalog-repo",
        &[
            ("README.md", "catalog\n"),
            ("catalog/gcp/bucket/Kptfile", kptfile),
            (
                "catalog/gcp/bucket/bucket.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bucket\n",
            ),
        ],
    );
    porch_testkit::repos::run(
        std::process::Command::new("git")
            .arg("-C")
            .arg(env.bare("catalog-repo"))
            .args(["tag", "catalog/gcp/bucket/v1", "main"]),
    )
    .expect("release tag");
    let prs = env.prs(NS);
    let want = ["catalog.gcp.bucket.main", "catalog.gcp.bucket.v1"];
    for round in ["registered", "re-registered"] {
        env.register(
            NS,
            "catalog",
            &url,
            json!({"git": {"directory": "catalog"}}),
        )
        .await;
        assert_eq!(
            list_names(&prs, &ListParams::default()).await,
            want,
            "{round}"
        );
        let v1 = prs.get("catalog.gcp.bucket.v1").await.expect("v1");
        assert_eq!(spec(&v1)["packageName"], "gcp/bucket", "{round}");
        assert_eq!(spec(&v1)["revision"], 1, "{round}");
        assert_eq!(
            v1.data["status"]["selfLock"]["git"]["ref"],
            "catalog/gcp/bucket/v1"
        );
        if round == "registered" {
            env.unregister(NS, "catalog").await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_register_repository() {
    let env = Env::start().await;
    let url = env.empty_repo("deployment");
    env.register(
        NS,
        "deployment",
        &url,
        json!({"deployment": true, "description": "a deployment repository"}),
    )
    .await;
    let repo = env.repos(NS).get("deployment").await.expect("get");
    assert_eq!(repo.data["spec"]["type"], "git");
    assert_eq!(repo.data["spec"]["deployment"], true);
    assert_eq!(repo.data["spec"]["description"], "a deployment repository");
    assert_eq!(repo.data["spec"]["git"]["repo"], url.as_str());
    let pr = init(&env.prs(NS), "deployment", "deploy-pkg", "ws").await;
    assert_eq!(pr.data["status"]["deployment"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_repository_error() {
    let env = Env::start().await;
    let repos = env.repos(NS);
    repos
        .create(
            &PostParams::default(),
            &repository(
                "repo-error",
                json!({"repo": "http://127.0.0.1:9/no-such-repository.git", "branch": "main"}),
            ),
        )
        .await
        .expect("create repository");
    eventually("Ready=False with reason Error", || async {
        let r = repos.get("repo-error").await.expect("get");
        ready_condition(&r).is_some_and(|c| c["reason"] == "Error")
    })
    .await;
    let r = repos.get("repo-error").await.expect("get");
    let c = ready_condition(&r).expect("condition");
    assert_eq!(c["status"], "False");
    assert!(
        !c["message"].as_str().unwrap_or("").is_empty(),
        "the error is explained: {c}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_repository_modify() {
    let env = Env::start().await;
    let url = env.empty_repo("git");
    env.register(NS, "git", &url, json!({"description": "before"}))
        .await;
    let repos = env.repos(NS);
    let patched = repos
        .patch(
            "git",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"description": "after"}})),
        )
        .await
        .expect("modify the description");
    assert_eq!(patched.data["spec"]["description"], "after");
    let generation = patched.metadata.generation;
    eventually("Ready again for the new generation", || async {
        let r = repos.get("git").await.expect("get");
        r.data["status"]["observedGeneration"].as_i64() == generation
            && ready_condition(&r).is_some_and(|c| c["status"] == "True")
    })
    .await;
    let r = repos.get("git").await.expect("get");
    assert_eq!(r.data["spec"]["description"], "after");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_package_revision_list_with_hanging_repository() {
    let env = Env::start().await;
    let url = env.empty_repo("git");
    env.register(NS, "git", &url, json!({})).await;
    let prs = env.prs(NS);
    init(&prs, "git", "working-package", "ws").await;

    let hang_root = env.server.dir.path().join("hang");
    std::fs::create_dir_all(&hang_root).expect("hang root");
    empty_remote(&hang_root, "hanging");
    let hang = GitServer::start(&hang_root, None).expect("hanging git server");
    hang.set_fault(porch_testkit::Fault::Hang);
    env.repos(NS)
        .create(
            &PostParams::default(),
            &repository(
                "hanging",
                json!({"repo": hang.url_for("hanging.git"), "branch": "main"}),
            ),
        )
        .await
        .expect("register the hanging repository");

    let started = Instant::now();
    assert_eq!(
        list_names(&prs, &ListParams::default().fields("spec.repository=git")).await,
        ["git.working-package.ws"]
    );
    assert_eq!(
        list_names(&prs, &ListParams::default()).await,
        ["git.working-package.ws"]
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "a hanging repository does not slow lists: {:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_repository_immutability() {
    let env = Env::start().await;
    let url = env.empty_repo("git");
    env.register(NS, "git", &url, json!({})).await;
    let repos = env.repos(NS);
    for (field, patch) in [
        (
            "spec.git.repo",
            json!({"spec": {"git": {"repo": "http://127.0.0.1:9/other.git"}}}),
        ),
        (
            "spec.git.branch",
            json!({"spec": {"git": {"branch": "other"}}}),
        ),
        (
            "spec.git.directory",
            json!({"spec": {"git": {"directory": "elsewhere"}}}),
        ),
        (
            "spec.type",
            json!({"spec": {"type": "oci", "oci": {"registry": "example.com/r"}}}),
        ),
    ] {
        let (code, msg) = api_err(
            repos
                .patch("git", &PatchParams::default(), &Patch::Merge(patch))
                .await,
        );
        assert_eq!(code, 422, "{field}: {msg}");
        assert!(msg.contains("immutable"), "{field}: {msg}");
        assert!(msg.contains(field), "{field}: {msg}");
    }
    let ok = repos
        .patch(
            "git",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"description": "mutable"}})),
        )
        .await
        .expect("the description is mutable");
    assert_eq!(ok.data["spec"]["description"], "mutable");
    assert_eq!(ok.data["spec"]["git"]["repo"], url.as_str());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_repository_branch_default() {
    let env = Env::start().await;
    let url = env.empty_repo("git");
    env.auth_secret(NS, "git-auth").await;
    let created = env
        .repos(NS)
        .create(
            &PostParams::default(),
            &repository(
                "git",
                json!({"repo": url, "secretRef": {"name": "git-auth"}}),
            ),
        )
        .await
        .expect("create without a branch");
    assert_eq!(created.data["spec"]["git"]["branch"], "main");
    wait_ready(&env.client, NS, "git").await;
    let got = env.repos(NS).get("git").await.expect("get");
    assert_eq!(got.data["spec"]["git"]["branch"], "main");
}
