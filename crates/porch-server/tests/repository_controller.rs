//! The repository controller through the binary: a Repository whose remote does not exist
//! yet is retried until it does, and its status follows later syncs (`spec.sync.runOnceAt`).

mod common;

use std::time::{Duration, Instant};

use common::porch::*;
use kube::api::{DynamicObject, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

const NS: &str = "default";
const KPTFILE: &str = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: NAME\n";

fn ready(repo: &DynamicObject) -> Option<Value> {
    repo.data["status"]["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == "Ready").cloned())
}

fn package(name: &str) -> [(String, String); 2] {
    [
        (format!("{name}/Kptfile"), KPTFILE.replace("NAME", name)),
        (
            format!("{name}/cm.yaml"),
            format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n"),
        ),
    ]
}

fn commit(repo: &git2::Repository, packages: &[&str]) {
    let files: Vec<(String, String)> = packages.iter().flat_map(|p| package(p)).collect();
    let pairs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    porch_testkit::repos::commit_files(
        repo,
        "main",
        &porch_testkit::repos::files(&pairs),
        "packages",
    )
    .expect("commit");
}

async fn status_of(env: &Env, name: &str) -> Value {
    env.repos(NS).get(name).await.expect("get repository").data["status"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_repository_registered_before_its_remote_heals_and_follows_later_syncs() {
    let env = Env::start().await;
    env.auth_secret(NS, "late-auth").await;
    let repos = env.repos(NS);
    let obj: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "config.porch.kpt.dev/v1alpha1",
        "kind": "Repository",
        "metadata": {"name": "late", "namespace": NS},
        "spec": {"type": "git", "git": {
            "repo": env.url("late"), "branch": "main", "directory": "/",
            "secretRef": {"name": "late-auth"},
        }},
    }))
    .expect("repository object");
    repos
        .create(&PostParams::default(), &obj)
        .await
        .expect("create repository");
    eventually("Ready=False while the remote is missing", || async {
        let r = repos.get("late").await.expect("get");
        ready(&r).is_some_and(|c| c["status"] == "False" && c["reason"] == "Error")
    })
    .await;
    // Let a few retries fail so the backoff has grown.
    tokio::time::sleep(Duration::from_secs(4)).await;
    let r = repos.get("late").await.expect("get");
    assert_eq!(ready(&r).expect("condition")["status"], "False");

    let bare = porch_testkit::repos::init_bare(&env.bare("late"), "main").expect("init bare");
    commit(&bare, &["alpha"]);
    let appeared = Instant::now();
    loop {
        let r = repos.get("late").await.expect("get");
        if ready(&r).is_some_and(|c| c["status"] == "True") {
            break;
        }
        assert!(
            appeared.elapsed() < Duration::from_secs(30),
            "not Ready 30 s after the remote appeared: {}",
            r.data["status"]
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let first = status_of(&env, "late").await;
    let count = first["packageCount"].as_i64().expect("packageCount");
    assert!(count >= 1, "{first}");
    let hash = first["gitCommitHash"].as_str().expect("gitCommitHash");
    assert_eq!(
        hash,
        bare.refname_to_id("refs/heads/main")
            .expect("main")
            .to_string()
    );
    let synced = first["lastFullSyncTime"]
        .as_str()
        .expect("lastFullSyncTime")
        .to_owned();

    // A later sync (what `porchctl repo sync` asks for, here due in 2 s) refreshes the status.
    tokio::time::sleep(Duration::from_millis(1100)).await; // lastFullSyncTime has seconds
    commit(&bare, &["alpha", "beta"]);
    let head = bare
        .refname_to_id("refs/heads/main")
        .expect("main")
        .to_string();
    let at = rfc3339_in(2);
    repos
        .patch(
            "late",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"sync": {"runOnceAt": at}}})),
        )
        .await
        .expect("set runOnceAt");
    let generation = repos
        .get("late")
        .await
        .expect("get")
        .metadata
        .generation
        .expect("generation");
    eventually("the status follows the one-off sync", || async {
        let s = status_of(&env, "late").await;
        s["observedRunOnceAt"] == at.as_str() && s["gitCommitHash"] == head.as_str()
    })
    .await;
    let after = status_of(&env, "late").await;
    assert!(
        after["packageCount"].as_i64().expect("packageCount") > count,
        "{after}"
    );
    assert!(
        after["lastFullSyncTime"].as_str().expect("time") > synced.as_str(),
        "{after} vs {synced}"
    );
    assert_eq!(after["observedGeneration"], generation);
    assert_eq!(after["conditions"][0]["status"], "True");
}

/// `porchctl repo sync` on a failed repository retries it at once, not after its backoff.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_new_run_once_at_retries_a_failed_repository_at_once() {
    let env = Env::start().await;
    env.auth_secret(NS, "later-auth").await;
    let repos = env.repos(NS);
    let obj: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "config.porch.kpt.dev/v1alpha1",
        "kind": "Repository",
        "metadata": {"name": "later", "namespace": NS},
        "spec": {"type": "git", "git": {
            "repo": env.url("later"), "branch": "main", "secretRef": {"name": "later-auth"},
        }},
    }))
    .expect("repository object");
    repos
        .create(&PostParams::default(), &obj)
        .await
        .expect("create repository");
    // After the fifth failure (attempt 4) the next retry is at least 8 s away.
    let deadline = Instant::now() + Duration::from_secs(40);
    while !env.log().contains("attempt=4") {
        assert!(
            Instant::now() < deadline,
            "no fifth attempt:\n{}",
            env.log()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let bare = porch_testkit::repos::init_bare(&env.bare("later"), "main").expect("init bare");
    commit(&bare, &["alpha"]);
    // What `porchctl repo sync later` writes: a one-off sync a minute ahead.
    let asked = Instant::now();
    repos
        .patch(
            "later",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"sync": {"runOnceAt": rfc3339_in(60)}}})),
        )
        .await
        .expect("set runOnceAt");
    loop {
        let r = repos.get("later").await.expect("get");
        if ready(&r).is_some_and(|c| c["status"] == "True") {
            break;
        }
        assert!(
            asked.elapsed() < Duration::from_secs(6),
            "not retried at once: {}",
            r.data["status"]
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// RFC 3339 `secs` seconds from now, as `porchctl repo sync --run-once` writes it.
fn rfc3339_in(secs: i64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after the epoch")
        .as_secs();
    porch_core::revision::Timestamp(now as i64 + secs).to_rfc3339()
}
