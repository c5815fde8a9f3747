//! Bad input gets a clear 4xx `Status` and stores nothing.

mod common;

use common::Server;
use kube::api::{Api, ListParams};
use porch_api::Repository;

const REPOS: &str = "/apis/config.porch.kpt.dev/v1alpha1/namespaces/default/repositories";

fn request(method: &str, path: &str, content_type: &str, body: Vec<u8>) -> http::Request<Vec<u8>> {
    http::Request::builder()
        .method(method)
        .uri(path)
        .header("Content-Type", content_type)
        .body(body)
        .expect("request")
}

/// Sends a request that must fail; returns (code, reason, message).
async fn fails(client: &kube::Client, req: http::Request<Vec<u8>>) -> (u16, String, String) {
    match client.request_text(req).await {
        Err(kube::Error::Api(status)) => {
            (status.code, status.reason.clone(), status.message.clone())
        }
        Ok(body) => panic!("expected an error, got {body}"),
        Err(other) => panic!("expected a Status error, got {other}"),
    }
}

const GOOD: &str = r#"{"apiVersion":"config.porch.kpt.dev/v1alpha1","kind":"Repository","metadata":{"name":"ok"},"spec":{"type":"git","git":{"repo":"https://h/x.git"}}}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn bad_requests_get_clear_statuses_and_store_nothing() {
    let s = Server::start();
    let client = s.client().await;
    let json = "application/json";

    let (code, reason, msg) = fails(
        &client,
        request("POST", REPOS, json, b"{\"apiVersion\": ".to_vec()),
    )
    .await;
    assert_eq!((code, reason.as_str()), (400, "BadRequest"), "{msg}");

    let (code, _, msg) = fails(
        &client,
        request("POST", REPOS, "application/yaml", b"a: [b\n  c: :".to_vec()),
    )
    .await;
    assert_eq!(code, 400, "{msg}");

    let unknown = GOOD.replace(r#""type":"git""#, r#""type":"git","surprise":true"#);
    let path = format!("{REPOS}?fieldValidation=Strict");
    let (code, _, msg) = fails(&client, request("POST", &path, json, unknown.into_bytes())).await;
    assert_eq!(code, 400);
    assert_eq!(
        msg,
        "Repository in version \"v1alpha1\" cannot be handled as a Repository: strict decoding error: unknown field \"spec.surprise\""
    );

    let bad_name = GOOD.replace(r#""name":"ok""#, r#""name":"Bad_Name""#);
    let (code, reason, msg) =
        fails(&client, request("POST", REPOS, json, bad_name.into_bytes())).await;
    assert_eq!((code, reason.as_str()), (422, "Invalid"));
    assert!(msg.starts_with("Repository.config.porch.kpt.dev \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\""), "{msg}");

    let wrong_kind = GOOD.replace(r#""kind":"Repository""#, r#""kind":"Secret""#);
    let (code, _, msg) = fails(
        &client,
        request("POST", REPOS, json, wrong_kind.into_bytes()),
    )
    .await;
    assert_eq!(code, 400);
    assert!(msg.contains("does not match the expected kind"), "{msg}");

    let wrong_type = GOOD.replace(r#""type":"git""#, r#""type":7"#);
    let (code, _, msg) = fails(
        &client,
        request("POST", REPOS, json, wrong_type.into_bytes()),
    )
    .await;
    assert_eq!(code, 422);
    assert!(
        msg.contains("spec.type in body must be of type string"),
        "{msg}"
    );

    let huge = vec![b' '; 100 * 1024 * 1024];
    let (code, reason, _) = fails(&client, request("POST", REPOS, json, huge)).await;
    assert_eq!((code, reason.as_str()), (413, "RequestEntityTooLarge"));

    for path in [
        format!("{REPOS}/.."),
        "/apis/config.porch.kpt.dev/v1alpha1/namespaces/../repositories".to_string(),
        format!("{REPOS}/%2e%2e"),
    ] {
        let (code, _, msg) = fails(&client, request("GET", &path, json, Vec::new())).await;
        assert!(code == 400 || code == 404, "{path}: {code} {msg}");
    }
    let (code, _, _) = fails(
        &client,
        request("GET", "/apis/../api/v1/secrets", json, Vec::new()),
    )
    .await;
    assert_eq!(code, 404);

    let (code, _, _) = fails(
        &client,
        request(
            "PATCH",
            &format!("{REPOS}/missing"),
            "application/merge-patch+json",
            b"{}".to_vec(),
        ),
    )
    .await;
    assert_eq!(code, 404);
    let (code, reason, _) = fails(
        &client,
        request(
            "PATCH",
            &format!("{REPOS}/missing"),
            "text/plain",
            b"{}".to_vec(),
        ),
    )
    .await;
    assert_eq!((code, reason.as_str()), (415, "UnsupportedMediaType"));

    let api: Api<Repository> = Api::namespaced(client.clone(), "default");
    assert!(
        api.list(&ListParams::default())
            .await
            .expect("list")
            .items
            .is_empty(),
        "nothing was stored"
    );

    // The good object is accepted, then a broken JSON patch on it is refused and changes nothing.
    client
        .request_text(request("POST", REPOS, json, GOOD.as_bytes().to_vec()))
        .await
        .expect("create");
    let before = api.get("ok").await.expect("get");
    let (code, _, _) = fails(
        &client,
        request(
            "PATCH",
            &format!("{REPOS}/ok"),
            "application/json-patch+json",
            br#"[{"op":"remove","path":"/spec/nope"}]"#.to_vec(),
        ),
    )
    .await;
    assert_eq!(code, 422);
    let after = api.get("ok").await.expect("get");
    // Only the controller's status may have moved since (a replica set's leader reports
    // readiness on its own schedule); what the patch addressed is unchanged.
    if before.metadata.resource_version != after.metadata.resource_version {
        let strip = |o: &Repository| {
            let mut v = serde_json::to_value(o).expect("json");
            for p in ["status", "metadata"] {
                v.as_object_mut().expect("object").remove(p);
            }
            v
        };
        assert_eq!(
            strip(&before),
            strip(&after),
            "the refused patch changed nothing"
        );
        assert_eq!(before.metadata.labels, after.metadata.labels);
        assert_eq!(before.metadata.annotations, after.metadata.annotations);
        assert_eq!(before.metadata.generation, after.metadata.generation);
        assert_ne!(
            serde_json::to_value(&before.status).expect("json"),
            serde_json::to_value(&after.status).expect("json"),
            "a new resourceVersion without a status change is a write the refusal made"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_without_the_token_are_refused() {
    let s = Server::start();
    let mut cfg = kube::Config::from_custom_kubeconfig(
        kube::config::Kubeconfig::read_from(s.kubeconfig()).expect("kubeconfig"),
        &Default::default(),
    )
    .await
    .expect("config");
    cfg.auth_info.token = None;
    let client = kube::Client::try_from(cfg).expect("client");
    let (code, reason, _) = fails(
        &client,
        request("GET", REPOS, "application/json", Vec::new()),
    )
    .await;
    assert_eq!((code, reason.as_str()), (401, "Unauthorized"));
    // Health and version stay public.
    let health = client
        .request_text(request("GET", "/healthz", "text/plain", Vec::new()))
        .await
        .expect("healthz");
    assert_eq!(health, "ok");
}
