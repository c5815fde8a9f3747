//! Repository URLs through the server binary: a URL git would read as an option is refused
//! and runs nothing, a password in a URL appears in no log line, status or file name, and a
//! remote that never answers is marked not Ready within `--git-timeout`.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::porch::*;
use kube::api::PostParams;
use serde_json::{Value, json};

const NS: &str = "default";

fn repository_object(name: &str, url: &str, extra: Value) -> kube::api::DynamicObject {
    let mut git = json!({"repo": url, "branch": "main", "directory": "/"});
    if let (Value::Object(g), Value::Object(e)) = (&mut git, extra) {
        g.extend(e);
    }
    serde_json::from_value(json!({
        "apiVersion": "config.porch.kpt.dev/v1alpha1",
        "kind": "Repository",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"type": "git", "git": git},
    }))
    .expect("repository object")
}

/// The Ready condition once the controller has decided (reason other than Reconciling).
async fn settled_ready(env: &Env, name: &str, within: Duration) -> Value {
    let api = env.repos(NS);
    let deadline = Instant::now() + within;
    loop {
        let r = api.get(name).await.expect("get repository");
        if let Some(c) = r.data["status"]["conditions"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["type"] == "Ready"))
            .filter(|c| c["reason"] != "Reconciling")
        {
            return c.clone();
        }
        assert!(
            Instant::now() < deadline,
            "repository {name} not settled within {within:?}: {}",
            r.data["status"]
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_url_starting_with_a_dash_is_refused_and_runs_nothing() {
    let env = Env::start().await;
    let marker = env.server.dir.path().join("pwned");
    let url = format!("--upload-pack=touch {}", marker.display());
    match env
        .repos(NS)
        .create(
            &PostParams::default(),
            &repository_object("inject", &url, json!({})),
        )
        .await
    {
        // Refused at the API edge.
        Err(kube::Error::Api(e)) => assert_eq!(e.code, 422, "{}", e.message),
        Err(e) => panic!("unexpected error: {e:?}"),
        // Or accepted as an object and never opened.
        Ok(_) => {
            let c = settled_ready(&env, "inject", Duration::from_secs(20)).await;
            assert_eq!(c["status"], "False", "{c}");
            let msg = c["message"].as_str().unwrap_or_default();
            assert!(msg.contains("must not start with '-'"), "{msg}");
        }
    }
    // A clone task naming such an upstream is refused as well.
    let url = env.empty_repo("git");
    env.register(NS, "git", &url, json!({})).await;
    let body = new_revision(
        "git",
        "cloned",
        "ws",
        json!([{"type": "clone", "clone": {"upstreamRef": {"type": "git", "git": {
            "repo": format!("--upload-pack=touch {}", marker.display()),
            "ref": "main", "directory": "pkg",
        }}}}]),
    );
    let (code, msg) = api_err(env.prs(NS).create(&PostParams::default(), &body).await);
    assert!((400..500).contains(&code), "{code} {msg}");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!marker.exists(), "git ran the injected command");
}

/// `http://user:password@host/...` from the fixture's URL.
fn with_credentials(url: &str, user: &str, password: &str) -> String {
    url.replacen("http://", &format!("http://{user}:{password}@"), 1)
}

/// Names of every file and directory under `dir`.
fn names_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        out.push(e.file_name().to_string_lossy().into_owned());
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            out.extend(names_under(&e.path()));
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn passwords_in_urls_never_leak() {
    let env = Env::start().await;
    // Good credentials, on a branch the server creates (which logs the URL).
    let good = with_credentials(&env.empty_repo("good"), GIT_USER, GIT_PASSWORD);
    env.repos(NS)
        .create(
            &PostParams::default(),
            &repository_object(
                "good",
                &good,
                json!({"branch": "created", "createBranch": true}),
            ),
        )
        .await
        .expect("register good");
    let c = settled_ready(&env, "good", Duration::from_secs(30)).await;
    assert_eq!(c["status"], "True", "{c}");
    // Wrong credentials: not Ready, with a message.
    const WRONG: &str = "wr0ng-pa55word";
    let bad = with_credentials(&env.empty_repo("bad"), GIT_USER, WRONG);
    env.repos(NS)
        .create(
            &PostParams::default(),
            &repository_object("bad", &bad, json!({})),
        )
        .await
        .expect("register bad");
    let c = settled_ready(&env, "bad", Duration::from_secs(30)).await;
    assert_eq!(c["status"], "False", "{c}");

    // Publish through the good one (fetch and push with the URL's credentials).
    let prs = env.prs(NS);
    let pr = init_published(&prs, "good", "pkg", "ws").await;
    let published = serde_json::to_string(&pr.data).expect("json");
    assert!(
        published.contains("***"),
        "selfLock shows the redacted URL: {published}"
    );
    // A draft's selfLock (its drafts/ branch) names the repository redacted too.
    let draft = init(&prs, "good", "other", "ws").await;
    assert!(
        draft.data["status"]["selfLock"]["git"]["repo"]
            .as_str()
            .is_some_and(|r| r.contains("***")),
        "{}",
        draft.data["status"]
    );

    let mut shown = String::new();
    for name in ["good", "bad"] {
        let r = env.repos(NS).get(name).await.expect("get");
        shown.push_str(&r.data["status"].to_string());
    }
    let revisions = prs.list(&Default::default()).await.expect("list");
    shown.push_str(&serde_json::to_string(&revisions.items).expect("json"));
    let log = env.log();
    assert!(
        log.contains("creating registered branch"),
        "the branch creation is logged: {log}"
    );
    let names = names_under(&env.server.data_dir()).join("\n");
    assert!(names.contains("redacted"), "mirror directories: {names}");
    for secret in [GIT_PASSWORD, WRONG] {
        assert!(!log.contains(secret), "{secret} in the server log");
        assert!(!shown.contains(secret), "{secret} in a status: {shown}");
        assert!(!names.contains(secret), "{secret} in a file name: {names}");
    }
}

/// A TCP server that accepts connections and never answers.
fn silent_listener() -> (u16, std::thread::JoinHandle<()>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let handle = std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in listener.incoming().flatten() {
            held.push(s);
        }
    });
    (port, handle)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_silent_remote_is_not_ready_within_the_git_timeout() {
    let env = Env::start_with(&["--git-timeout", "2s"]).await;
    let (port, _listener) = silent_listener();
    // In process (plain URL) and through the git CLI (credentials in the URL).
    for (name, url) in [
        ("silent", format!("http://127.0.0.1:{port}/r.git")),
        ("silent-cli", format!("http://u:p@127.0.0.1:{port}/r.git")),
    ] {
        let started = Instant::now();
        env.repos(NS)
            .create(
                &PostParams::default(),
                &repository_object(name, &url, json!({})),
            )
            .await
            .expect("register");
        let c = settled_ready(&env, name, Duration::from_secs(15)).await;
        let took = started.elapsed();
        assert_eq!(c["status"], "False", "{name}: {c}");
        assert!(
            took < Duration::from_secs(10),
            "{name}: not Ready after {took:?}, the timeout is 2 s"
        );
        let msg = c["message"].as_str().unwrap_or_default();
        assert!(msg.contains("timed out"), "{name}: {msg}");
    }
}
