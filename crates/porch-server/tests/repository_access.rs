//! Repository access is per Repository, not per URL (issue 17): a Repository proves its own
//! credentials before it serves anything from the mirror it shares with others of its URL;
//! a Secret serves only Repositories of its namespace; `file://` and path URLs only under
//! `--allow-local-repositories`.

mod common;

use std::time::Duration;

use common::porch::*;
use kube::api::{
    ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, PostParams,
};
use serde_json::{Value, json};

const NS: &str = "default";

fn repository(ns: &str, name: &str, git: Value) -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": "config.porch.kpt.dev/v1alpha1",
        "kind": "Repository",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"type": "git", "git": git},
    }))
    .expect("repository object")
}

/// The Ready condition once the controller has decided (not `Reconciling`).
async fn settled_ready(client: &kube::Client, ns: &str, name: &str) -> Value {
    let api = repositories(client, ns);
    for _ in 0..400 {
        let r = api.get(name).await.expect("get repository");
        let cond = r.data["status"]["conditions"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["type"] == "Ready").cloned());
        if let Some(c) = cond
            && c["reason"] != "Reconciling"
        {
            return c;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("repository {name} never settled");
}

async fn secret(client: &kube::Client, ns: &str, name: &str, password: &str) {
    let api: kube::Api<DynamicObject> = kube::Api::namespaced_with(
        client.clone(),
        ns,
        &ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("", "v1", "Secret"), "secrets"),
    );
    let obj: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": name, "namespace": ns},
        "type": "kubernetes.io/basic-auth",
        "stringData": {"username": common::porch::GIT_USER, "password": password},
    }))
    .expect("secret");
    api.create(&PostParams::default(), &obj)
        .await
        .expect("create secret");
}

/// Revisions listed for repository `repo`.
async fn revisions_of(client: &kube::Client, repo: &str) -> usize {
    revisions(client, NS)
        .list(&ListParams::default())
        .await
        .expect("list revisions")
        .items
        .iter()
        .filter(|pr| pr.data["spec"]["repository"] == repo)
        .count()
}

async fn assert_locked_out(client: &kube::Client, name: &str) {
    let c = settled_ready(client, NS, name).await;
    assert_eq!(c["status"], "False", "{name} must not be Ready: {c}");
    let message = c["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("authentication") || message.contains("credentials"),
        "{name}: {message}"
    );
    assert_eq!(revisions_of(client, name).await, 0, "{name} serves nothing");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_shared_mirror_serves_only_repositories_with_their_own_credentials() {
    let mut env = Env::start().await;
    let url = env.repo_with(
        "private",
        &[(
            "secret-pkg/Kptfile",
            "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: secret-pkg\n",
        )],
    );
    env.register(NS, "owner", &url, json!({})).await;
    assert_eq!(revisions_of(&env.client, "owner").await, 1);

    // Same URL, wrong password / no credentials at all.
    secret(&env.client, NS, "wrong", "not-the-password").await;
    let repos = env.repos(NS);
    for (name, git) in [
        (
            "intruder",
            json!({"repo": url, "branch": "main", "secretRef": {"name": "wrong"}}),
        ),
        ("anonymous", json!({"repo": url, "branch": "main"})),
    ] {
        repos
            .create(&PostParams::default(), &repository(NS, name, git))
            .await
            .expect("create repository");
    }
    assert_locked_out(&env.client, "intruder").await;
    assert_locked_out(&env.client, "anonymous").await;

    // The owner goes away and the server restarts: the mirror stays on disk, the others
    // still have to prove themselves.
    repos
        .delete("owner", &DeleteParams::default())
        .await
        .expect("delete owner");
    tokio::task::block_in_place(|| env.server.restart());
    // Ready only once every start-up Repository is loaded and its status written afresh.
    env.client = env.server.wait_readyz().await;
    assert_locked_out(&env.client, "intruder").await;
    assert_locked_out(&env.client, "anonymous").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_secret_serves_only_its_own_namespace() {
    let env = Env::start().await;
    let url = env.empty_repo("private");
    env.namespace("other").await;
    env.auth_secret("other", "creds").await;
    env.repos(NS)
        .create(
            &PostParams::default(),
            &repository(
                NS,
                "borrower",
                json!({"repo": url, "branch": "main", "secretRef": {"name": "creds"}}),
            ),
        )
        .await
        .expect("create repository");
    let c = settled_ready(&env.client, NS, "borrower").await;
    assert_eq!(c["status"], "False", "{c}");
    assert!(
        c["message"].as_str().is_some_and(|m| m.contains("creds")),
        "{c}"
    );
}

fn bare(dir: &std::path::Path, name: &str) -> String {
    let path = dir.join(format!("{name}.git"));
    let repo = porch_testkit::repos::init_bare(&path, "main").expect("init bare");
    let files = porch_testkit::repos::files(&[("README.md", "x\n")]);
    porch_testkit::repos::commit_files(&repo, "main", &files, "init").expect("commit");
    format!("file://{}", path.display())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn file_urls_need_allow_local_repositories() {
    let remotes = tempfile::tempdir().expect("tempdir");
    let allowed = remotes.path().join("allowed");
    let elsewhere = remotes.path().join("elsewhere");
    let inside = bare(&allowed, "a");
    let outside = bare(&elsewhere, "b");

    // Default: refused at create, naming the flag.
    let strict = common::Server::start_strict(&[]);
    let client = strict.wait_readyz().await;
    let repos = repositories(&client, NS);
    for url in [&inside, &outside[7..].to_owned()] {
        let e = repos
            .create(
                &PostParams::default(),
                &repository(NS, "local", json!({"repo": url, "branch": "main"})),
            )
            .await
            .expect_err("local URL refused");
        match e {
            kube::Error::Api(s) => {
                assert_eq!(s.code, 422, "{s:?}");
                assert!(s.message.contains("--allow-local-repositories"), "{s:?}");
            }
            other => panic!("{other:?}"),
        }
    }
    // Nor as a clone's raw git upstream.
    let fixtures = tempfile::tempdir().expect("tempdir");
    empty_remote(fixtures.path(), "target");
    let git = git_server(fixtures.path());
    register(&client, NS, "target", &git.url_for("target.git"), json!({})).await;
    let clone = json!([{"type": "clone", "clone": {"upstreamRef": {"type": "git", "git": {
        "repo": inside, "ref": "main", "directory": "/"}}}}]);
    let e = revisions(&client, NS)
        .create(
            &PostParams::default(),
            &new_revision("target", "copy", "v1", clone),
        )
        .await
        .expect_err("local upstream refused");
    assert!(
        matches!(&e, kube::Error::Api(s) if s.code >= 400 && s.code < 500
            && s.message.contains("--allow-local-repositories")),
        "{e:?}"
    );
    drop(strict);

    // Allowed under the named directory only.
    let allowed_arg = allowed.display().to_string();
    let server =
        common::Server::start_strict(&["--allow-local-repositories", allowed_arg.as_str()]);
    let client = server.wait_readyz().await;
    register(&client, NS, "inside", &inside, json!({})).await;
    let e = repositories(&client, NS)
        .create(
            &PostParams::default(),
            &repository(NS, "outside", json!({"repo": outside, "branch": "main"})),
        )
        .await
        .expect_err("outside the allowed directory");
    assert!(matches!(&e, kube::Error::Api(s) if s.code == 422), "{e:?}");
}
