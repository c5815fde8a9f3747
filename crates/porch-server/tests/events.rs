//! Kubernetes Events through kubectl 1.32 against the real server: lifecycle transitions,
//! repository readiness and render failures are recorded; `kubectl get events`, `kubectl
//! events --for` and `kubectl describe` show them; an Event created through either API is
//! read through both; a repeated event is one Event with a growing count.

mod common;

use std::time::Duration;

use common::porch::*;
use kube::api::{DynamicObject, PostParams};
use serde_json::{Value, json};

const NS: &str = "default";

/// An image with no built-in implementation and no container runtime: always fails.
const FAILING: &str = "example.invalid/always-fails:v1";

fn kubectl_json(env: &Env, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend(["-o", "json"]);
    serde_json::from_str(&env.server.kubectl_ok(&all)).expect("kubectl printed JSON")
}

fn items(list: &Value) -> Vec<Value> {
    list["items"].as_array().cloned().unwrap_or_default()
}

/// The reasons of the core Events about `name`, through a field selector as kubectl sends it.
fn reasons_for(env: &Env, name: &str) -> Vec<String> {
    let selector = format!("involvedObject.name={name}");
    items(&kubectl_json(
        env,
        &["get", "events", "--field-selector", &selector],
    ))
    .iter()
    .filter_map(|e| e["reason"].as_str().map(str::to_owned))
    .collect()
}

/// Waits until the Events about `name` include every one of `reasons`.
async fn wait_reasons(env: &Env, name: &str, reasons: &[&str]) {
    let what = format!("events {reasons:?} about {name}");
    eventually(&what, || async {
        let seen = reasons_for(env, name);
        reasons.iter().all(|r| seen.iter().any(|s| s == r))
    })
    .await;
}

async fn propose_and_approve(env: &Env, pr: &str) {
    env.server.kubectl_ok(&[
        "patch",
        "packagerevision",
        pr,
        "--type=merge",
        "-p",
        r#"{"spec":{"lifecycle":"Proposed"}}"#,
    ]);
    env.server.kubectl_ok(&[
        "patch",
        "packagerevision",
        pr,
        "--subresource=approval",
        "--type=merge",
        "-p",
        r#"{"spec":{"lifecycle":"Published"}}"#,
    ]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn lifecycle_transitions_show_in_get_events_kubectl_events_and_describe() {
    let env = Env::start().await;
    let url = env.empty_repo("git");
    env.register(NS, "git", &url, json!({})).await;
    init(&env.prs(NS), "git", "app", "ws").await;
    let pr = "git.app.ws";
    propose_and_approve(&env, pr).await;
    wait_reasons(&env, pr, &["Created", "Proposed", "Approved"]).await;

    // The server's Table: kube's Event columns, the object as kind/name.
    let table = env.server.kubectl_ok(&["get", "events"]);
    let header: Vec<&str> = table
        .lines()
        .next()
        .expect("header")
        .split_whitespace()
        .collect();
    assert_eq!(
        header,
        ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    );
    let approved = table
        .lines()
        .find(|l| l.contains("Approved"))
        .unwrap_or_else(|| panic!("no Approved row:\n{table}"));
    assert!(approved.contains("Normal"), "{approved}");
    assert!(
        approved.contains(&format!("packagerevision/{pr}")),
        "{approved}"
    );
    assert!(approved.contains("published as revision 1"), "{approved}");
    let wide = env.server.kubectl_ok(&["get", "events", "-o", "wide"]);
    assert!(
        wide.lines().next().is_some_and(|h| h.contains("COUNT")
            && h.contains("SOURCE")
            && h.trim_end().ends_with("NAME")),
        "{wide}"
    );

    // kubectl events --for selects on involvedObject kind, apiVersion and name.
    let events = env
        .server
        .kubectl_ok(&["events", "--for", &format!("packagerevision/{pr}")]);
    for reason in ["Created", "Proposed", "Approved"] {
        assert!(events.contains(reason), "{reason} missing:\n{events}");
    }
    assert!(
        !events.contains("Repository Ready"),
        "only the revision's events:\n{events}"
    );

    // kubectl describe lists the object's Events (selected by its uid too).
    let described = env.server.kubectl_ok(&["describe", "packagerevision", pr]);
    let section = described
        .split("Events:")
        .nth(1)
        .unwrap_or_else(|| panic!("no Events section:\n{described}"));
    for reason in ["Proposed", "Approved"] {
        assert!(section.contains(reason), "{reason} missing:\n{described}");
    }

    // Deleting is recorded too (after proposing the deletion).
    env.server.kubectl_ok(&[
        "patch",
        "packagerevision",
        pr,
        "--subresource=approval",
        "--type=merge",
        "-p",
        r#"{"spec":{"lifecycle":"DeletionProposed"}}"#,
    ]);
    env.server.kubectl_ok(&["delete", "packagerevision", pr]);
    wait_reasons(&env, pr, &["DeletionProposed", "Deleted"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_missing_remote_is_one_warning_on_the_repository_whose_count_grows() {
    let env = Env::start().await;
    let repo: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "config.porch.kpt.dev/v1alpha1",
        "kind": "Repository",
        "metadata": {"name": "missing", "namespace": NS},
        "spec": {"type": "git", "git": {"repo": env.url("does-not-exist"), "branch": "main"}},
    }))
    .expect("repository object");
    env.repos(NS)
        .create(&PostParams::default(), &repo)
        .await
        .expect("create repository");

    // Retries (1 s, 2 s, ...) repeat the same error: one Event, counted.
    let selector = "involvedObject.kind=Repository,involvedObject.name=missing,reason=NotReady";
    let mut last = Value::Null;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let found = items(&kubectl_json(
            &env,
            &["get", "events", "--field-selector", selector],
        ));
        assert!(found.len() <= 1, "repeats are aggregated: {found:?}");
        if let Some(e) = found.first() {
            last = e.clone();
            if e["count"].as_i64().is_some_and(|c| c >= 3) {
                break;
            }
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the count never reached 3: {last}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert_eq!(last["type"], "Warning");
    assert_eq!(last["series"]["count"], last["count"]);
    assert_eq!(last["source"]["component"], "porch-server");

    // The same Event through events.k8s.io/v1, by the new API's field names.
    let new = items(&kubectl_json(
        &env,
        &[
            "get",
            "events.events.k8s.io",
            "--field-selector",
            "regarding.name=missing,reason=NotReady",
        ],
    ));
    assert_eq!(new.len(), 1, "{new:?}");
    assert_eq!(new[0]["note"], last["message"]);
    assert!(new[0]["deprecatedCount"].as_i64().is_some_and(|c| c >= 3));

    let described = env
        .server
        .kubectl_ok(&["describe", "repository", "missing"]);
    let section = described
        .split("Events:")
        .nth(1)
        .unwrap_or_else(|| panic!("no Events section:\n{described}"));
    assert!(
        section.contains("Warning") && section.contains("NotReady"),
        "{described}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_render_failure_is_a_warning_naming_the_function_image() {
    let env = Env::start().await;
    let url = env.empty_repo("git");
    env.register(NS, "git", &url, json!({})).await;
    let prrs = env.prrs(NS);
    init(&env.prs(NS), "git", "broken", "ws").await;
    let pr = "git.broken.ws";
    let kptfile = files_of(&prrs, pr).await["Kptfile"]
        .as_str()
        .expect("Kptfile")
        .to_owned();
    let kptfile = format!("{kptfile}pipeline:\n  mutators:\n  - image: {FAILING}\n");
    let (code, _) = api_err(put_files(&prrs, pr, &[("Kptfile", &kptfile)]).await);
    assert_eq!(code, 422);
    wait_reasons(&env, pr, &["RenderFailed"]).await;
    let selector = format!("involvedObject.name={pr},reason=RenderFailed,type=Warning");
    let found = items(&kubectl_json(
        &env,
        &["get", "events", "--field-selector", &selector],
    ));
    assert_eq!(found.len(), 1, "{found:?}");
    let message = found[0]["message"].as_str().unwrap_or_default();
    assert!(message.contains(FAILING), "{message}");
    assert_eq!(found[0]["involvedObject"]["kind"], "PackageRevision");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn events_created_through_either_api_are_read_through_both() {
    let env = Env::start().await;
    let core = env.server.write_file(
        "core-event.yaml",
        "apiVersion: v1\nkind: Event\nmetadata:\n  name: by-core\n  namespace: default\ninvolvedObject:\n  apiVersion: config.porch.kpt.dev/v1alpha1\n  kind: Repository\n  name: somewhere\n  namespace: default\nreason: Tested\nmessage: created through v1\ntype: Normal\ncount: 2\nsource:\n  component: kubectl-test\nfirstTimestamp: \"2026-01-01T00:00:00Z\"\nlastTimestamp: \"2026-01-01T00:00:00Z\"\n",
    );
    env.server
        .kubectl_ok(&["create", "-f", core.to_str().expect("utf8")]);
    let new = env.server.write_file(
        "new-event.yaml",
        "apiVersion: events.k8s.io/v1\nkind: Event\nmetadata:\n  name: by-new\n  namespace: default\neventTime: \"2026-01-01T00:00:00.000000Z\"\nregarding:\n  kind: Repository\n  name: somewhere\n  namespace: default\nreason: Tested\nnote: created through events.k8s.io\ntype: Warning\naction: Test\nreportingController: kubectl-test\nreportingInstance: test-1\n",
    );
    env.server
        .kubectl_ok(&["create", "-f", new.to_str().expect("utf8")]);

    let as_new = kubectl_json(&env, &["get", "events.events.k8s.io", "by-core"]);
    assert_eq!(as_new["apiVersion"], "events.k8s.io/v1");
    assert_eq!(as_new["note"], "created through v1");
    assert_eq!(as_new["regarding"]["name"], "somewhere");
    assert_eq!(as_new["deprecatedCount"], 2);
    assert_eq!(as_new["deprecatedSource"]["component"], "kubectl-test");

    let as_core = kubectl_json(&env, &["get", "events", "by-new"]);
    assert_eq!(as_core["apiVersion"], "v1");
    assert_eq!(as_core["message"], "created through events.k8s.io");
    assert_eq!(as_core["involvedObject"]["kind"], "Repository");
    assert_eq!(as_core["reportingComponent"], "kubectl-test");

    // Both lists hold both, and each API's own field names select them.
    let core_list = items(&kubectl_json(
        &env,
        &[
            "get",
            "events",
            "--field-selector",
            "involvedObject.name=somewhere",
        ],
    ));
    let new_list = items(&kubectl_json(
        &env,
        &[
            "get",
            "events.events.k8s.io",
            "--field-selector",
            "regarding.name=somewhere",
        ],
    ));
    let names = |l: &[Value]| {
        let mut n: Vec<String> = l
            .iter()
            .filter_map(|e| e["metadata"]["name"].as_str().map(str::to_owned))
            .collect();
        n.sort();
        n
    };
    assert_eq!(names(&core_list), ["by-core", "by-new"]);
    assert_eq!(names(&new_list), ["by-core", "by-new"]);

    // The new API refuses what kube-apiserver refuses there.
    let bad = env.server.write_file(
        "bad-event.yaml",
        "apiVersion: events.k8s.io/v1\nkind: Event\nmetadata:\n  name: bad\n  namespace: default\neventTime: \"2026-01-01T00:00:00.000000Z\"\nreason: Tested\ntype: Sideways\n",
    );
    let out = env
        .server
        .kubectl(&["create", "-f", bad.to_str().expect("utf8")]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("reportingController"), "{err}");
}
