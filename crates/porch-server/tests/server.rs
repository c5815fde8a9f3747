//! Process-level behaviour: paging, health and metrics endpoints, SIGTERM, plain HTTP mode.

mod common;

use std::process::Command;

use common::Server;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, PostParams};

fn get(path: &str) -> http::Request<Vec<u8>> {
    http::Request::get(path).body(Vec::new()).expect("request")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limit_and_continue_page_through_a_list() {
    let s = Server::start();
    let client = s.client().await;
    let api: Api<Secret> = Api::namespaced(client.clone(), "default");
    for i in 0..7 {
        let mut sec = Secret::default();
        sec.metadata.name = Some(format!("s{i}"));
        api.create(&PostParams::default(), &sec)
            .await
            .expect("create");
    }
    let mut names = Vec::new();
    let mut token = String::new();
    let mut pages = 0;
    loop {
        let mut path = "/api/v1/namespaces/default/secrets?limit=3".to_string();
        if !token.is_empty() {
            path.push_str(&format!("&continue={token}"));
        }
        let body: serde_json::Value =
            serde_json::from_str(&client.request_text(get(&path)).await.expect("list"))
                .expect("json");
        pages += 1;
        assert_eq!(body["kind"], "SecretList");
        names.extend(
            body["items"]
                .as_array()
                .expect("items")
                .iter()
                .map(|i| i["metadata"]["name"].as_str().unwrap_or("").to_string()),
        );
        match body["metadata"]["continue"].as_str() {
            Some(c) if !c.is_empty() => token = c.to_string(),
            _ => break,
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(names, (0..7).map(|i| format!("s{i}")).collect::<Vec<_>>());

    // Field selector on list; an unknown field is a 400.
    let body: serde_json::Value = serde_json::from_str(
        &client
            .request_text(get(
                "/api/v1/namespaces/default/secrets?fieldSelector=metadata.name%3Ds3",
            ))
            .await
            .expect("list"),
    )
    .expect("json");
    assert_eq!(body["items"].as_array().map(Vec::len), Some(1));
    match client
        .request_text(get("/api/v1/secrets?fieldSelector=spec.nope%3D1"))
        .await
    {
        Err(kube::Error::Api(st)) => assert_eq!(st.code, 400),
        other => panic!("expected 400, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_metrics_and_openapi() {
    let s = Server::start();
    // Ready once the repository controller has loaded what was there at start-up.
    let client = s.wait_readyz().await;
    assert_eq!(
        client.request_text(get("/readyz")).await.expect("readyz"),
        "ok"
    );
    client
        .request_text(get("/api/v1/namespaces"))
        .await
        .expect("list");
    let metrics = client.request_text(get("/metrics")).await.expect("metrics");
    assert!(
        metrics.contains("porch_apiserver_requests_total{verb=\"GET\",code=\"200\"}"),
        "{metrics}"
    );
    assert!(
        metrics.contains("porch_store_resource_version"),
        "{metrics}"
    );
    let index: serde_json::Value = serde_json::from_str(
        &client
            .request_text(get("/openapi/v3"))
            .await
            .expect("index"),
    )
    .expect("json");
    let url = index["paths"]["apis/config.porch.kpt.dev/v1alpha1"]["serverRelativeURL"]
        .as_str()
        .expect("url")
        .to_string();
    let doc: serde_json::Value =
        serde_json::from_str(&client.request_text(get(&url)).await.expect("doc")).expect("json");
    let patch = &doc["paths"]["/apis/config.porch.kpt.dev/v1alpha1/namespaces/{namespace}/repositories/{name}"]
        ["patch"];
    assert_eq!(
        patch["x-kubernetes-group-version-kind"]["kind"],
        "Repository"
    );
    assert!(
        patch["parameters"]
            .as_array()
            .expect("params")
            .iter()
            .any(|p| p["name"] == "fieldValidation")
    );
    assert!(doc["components"]["schemas"]["dev.kpt.porch.config.v1alpha1.Repository"]["properties"]["spec"].is_object());
}

#[test]
fn sigterm_stops_cleanly_and_data_persists() {
    let mut s = Server::start();
    s.kubectl_ok(&["create", "namespace", "kept"]);
    let status = s.terminate();
    assert!(status.success(), "exit status {status}");
    assert!(s.log().contains("shutting down"), "{}", s.log());
    s.restart();
    let out = s.kubectl_ok(&["get", "namespace", "kept", "-o", "name"]);
    assert_eq!(out.trim(), "namespace/kept");
}

#[test]
fn insecure_http_only_on_loopback() {
    let s = Server::start_with(&["--insecure-http"]);
    let kc = std::fs::read_to_string(s.kubeconfig()).expect("kubeconfig");
    assert!(kc.contains("server: http://127.0.0.1:"), "{kc}");
    let out = s.kubectl_ok(&["get", "namespaces", "-o", "name"]);
    assert!(out.contains("namespace/default"), "{out}");

    let dir = tempfile::tempdir().expect("tempdir");
    let out = Command::new(env!("CARGO_BIN_EXE_porch-server"))
        .args(["--insecure-http", "--listen", "0.0.0.0:0", "--data-dir"])
        .arg(dir.path())
        .output()
        .expect("run");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("only allowed on a loopback address"));
}

#[test]
fn stale_replace_is_a_conflict() {
    let s = Server::start();
    s.kubectl_ok(&["create", "secret", "generic", "c", "--from-literal=a=1"]);
    let old = s.kubectl_ok(&["get", "secret", "c", "-o", "yaml"]);
    s.kubectl_ok(&["label", "secret", "c", "x=y"]);
    let out = s.kubectl_stdin(&["replace", "-f", "-"], Some(&old));
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("(Conflict)") && err.contains("the object has been modified"),
        "{err}"
    );
}
