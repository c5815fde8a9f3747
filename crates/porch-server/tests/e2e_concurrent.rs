//! Upstream API e2e scenarios of `test/e2e/api/concurrent_test.go` (porch-api.md §18.1): two
//! (or more) identical requests at once; exactly one succeeds. Upstream expects the loser to
//! fail with "another request is already in progress" (its try-lock). A server that serialises
//! the requests instead fails the loser with the conflict the second request then meets
//! (already exists / the object has been modified / not found); both are 409 Conflict (404
//! for a delete of something already deleted), which is what these tests accept.

mod common;

use common::porch::*;
use futures::future::join_all;
use kube::api::{Api, DynamicObject, ListParams, PostParams};
use serde_json::json;

const NS: &str = "default";

/// Asserts exactly one success and that every failure is a conflict (or a 404 when
/// `allow_not_found`); returns the winner.
fn one_winner<T: std::fmt::Debug>(
    results: Vec<Result<T, kube::Error>>,
    allow_not_found: bool,
) -> T {
    let mut ok = Vec::new();
    for r in results {
        match r {
            Ok(v) => ok.push(v),
            Err(kube::Error::Api(e)) => {
                let expected = e.code == 409 || (allow_not_found && e.code == 404);
                assert!(expected, "the losing request must be a conflict: {e:?}");
                if e.code == 409 {
                    let m = &e.message;
                    assert!(
                        m.contains("another request is already in progress")
                            || m.contains("already exists")
                            || m.contains("has been modified"),
                        "unexpected conflict text: {m}"
                    );
                }
            }
            Err(e) => panic!("transport error: {e:?}"),
        }
    }
    assert_eq!(ok.len(), 1, "exactly one request wins: {ok:?}");
    ok.pop().expect("one winner")
}

async fn setup() -> (Env, Api<DynamicObject>) {
    let env = Env::start().await;
    let url = env.empty_repo("git");
    env.register(NS, "git", &url, json!({})).await;
    let prs = env.prs(NS);
    (env, prs)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_concurrent_clones() {
    let (_env, prs) = setup().await;
    init_published(&prs, "git", "upstream", "v1").await;
    let body = new_revision("git", "clone-target", "ws", clone_task("git.upstream.v1"));
    let pp = PostParams::default();
    let results = join_all((0..2).map(|_| prs.create(&pp, &body))).await;
    let won = one_winner(results, false);
    assert_eq!(name(&won), "git.clone-target.ws");
    assert_eq!(
        list_names(
            &prs,
            &ListParams::default().fields("spec.packageName=clone-target")
        )
        .await,
        ["git.clone-target.ws"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_concurrent_inits() {
    let (_env, prs) = setup().await;
    let body = new_revision(
        "git",
        "init-target",
        "ws",
        json!([{"type": "init", "init": {}}]),
    );
    let pp = PostParams::default();
    let results = join_all((0..2).map(|_| prs.create(&pp, &body))).await;
    one_winner(results, false);
    assert_eq!(
        list_names(&prs, &ListParams::default()).await,
        ["git.init-target.ws"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_concurrent_edits() {
    let (_env, prs) = setup().await;
    init_published(&prs, "git", "edit-pkg", "v1").await;
    let body = new_revision("git", "edit-pkg", "v2", edit_task("git.edit-pkg.v1"));
    let pp = PostParams::default();
    let results = join_all((0..2).map(|_| prs.create(&pp, &body))).await;
    let won = one_winner(results, false);
    let got = prs.get(&name(&won)).await.expect("get the edit");
    let tasks = spec(&got)["tasks"].as_array().cloned().unwrap_or_default();
    assert_eq!(tasks.len(), 1, "{tasks:?}");
    assert_eq!(tasks[0]["type"], "edit");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_concurrent_resource_updates() {
    let (env, prs) = setup().await;
    let prrs = env.prrs(NS);
    let pr = "git.prr-pkg.ws";
    init(&prs, "git", "prr-pkg", "ws").await;
    let mut bodies = Vec::new();
    for i in 0..2 {
        let mut prr = prrs.get(pr).await.expect("get resources");
        prr.data["spec"]["resources"]["cm.yaml"] = json!(format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  writer: \"{i}\"\n"
        ));
        bodies.push(prr);
    }
    let pp = PostParams::default();
    let results = join_all(bodies.iter().map(|b| prrs.replace(pr, &pp, b))).await;
    let won = one_winner(results, false);
    let files = files_of(&prrs, pr).await;
    assert_eq!(files["cm.yaml"], won.data["spec"]["resources"]["cm.yaml"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_concurrent_propose_approve() {
    let (env, prs) = setup().await;
    let pr = "git.propose-pkg.ws";
    init(&prs, "git", "propose-pkg", "ws").await;
    let pp = PostParams::default();

    let mut body = prs.get(pr).await.expect("get");
    body.data["spec"]["lifecycle"] = json!("Proposed");
    let results = join_all((0..2).map(|_| prs.replace(pr, &pp, &body))).await;
    let won = one_winner(results, false);
    assert_eq!(spec(&won)["lifecycle"], "Proposed");

    let mut body = prs.get(pr).await.expect("get");
    body.data["spec"]["lifecycle"] = json!("Published");
    let results =
        join_all((0..2).map(|_| prs.replace_subresource("approval", pr, &pp, &body))).await;
    let won = one_winner(results, false);
    assert_eq!(spec(&won)["revision"], 1);
    let tags = refs_under(&env.bare("git"), "refs/tags/");
    assert_eq!(tags, ["refs/tags/propose-pkg/v1"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_concurrent_deletes() {
    let (_env, prs) = setup().await;
    let pr = "git.delete-pkg.ws";
    init(&prs, "git", "delete-pkg", "ws").await;
    let dp = kube::api::DeleteParams::default();
    let results = join_all((0..8).map(|_| prs.delete(pr, &dp))).await;
    one_winner(results, true);
    assert!(is_gone(&prs, pr).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_concurrent_propose_deletes() {
    let (env, prs) = setup().await;
    let pr = "git.propose-delete-pkg.ws";
    init_published(&prs, "git", "propose-delete-pkg", "ws").await;
    let mut body = prs.get(pr).await.expect("get");
    body.data["spec"]["lifecycle"] = json!("DeletionProposed");
    let pp = PostParams::default();
    let results = join_all((0..2).map(|_| prs.replace(pr, &pp, &body))).await;
    let after = prs.get(pr).await.expect("get");
    assert_ne!(
        after.metadata.resource_version, body.metadata.resource_version,
        "proposing deletion changes the resourceVersion"
    );
    let won = one_winner(results, false);
    assert_eq!(spec(&won)["lifecycle"], "DeletionProposed");
    assert_eq!(
        refs_under(&env.bare("git"), "refs/heads/deletionProposed/"),
        ["refs/heads/deletionProposed/propose-delete-pkg/v1"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_concurrent_package_updates() {
    let (_env, prs) = setup().await;
    let pr = "git.update-pkg.ws";
    init(&prs, "git", "update-pkg", "ws").await;
    let base = prs.get(pr).await.expect("get");
    let bodies: Vec<DynamicObject> = (0..2)
        .map(|i| {
            let mut b = base.clone();
            b.metadata
                .labels
                .get_or_insert_with(Default::default)
                .insert("writer".into(), format!("w{i}"));
            b
        })
        .collect();
    let pp = PostParams::default();
    let results = join_all(bodies.iter().map(|b| prs.replace(pr, &pp, b))).await;
    let won = one_winner(results, false);
    let got = prs.get(pr).await.expect("get");
    assert_eq!(label(&got, "writer"), label(&won, "writer"));
    assert!(label(&got, "writer").is_some());
}
