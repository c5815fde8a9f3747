//! The router called in process (as axum's own tests do): dry runs from the query and from a
//! DeleteOptions body change nothing, bodies in unsupported media types get 415, every 422
//! names its cause, and server-side apply checks its options as kube-apiserver does.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use porch_apiserver::{ApiServer, Registry, ResourceKind, ServerConfig, WatchHub};
use porch_core::store::MetadataStore;
use porch_store::{RedbStore, StoreOptions};
use serde_json::{Value, json};
use tower::ServiceExt;

const WIDGETS: &str = "/apis/example.dev/v1/namespaces/default/widgets";

struct Api {
    _dir: tempfile::TempDir,
    router: axum::Router,
}

fn api() -> Api {
    let dir = tempfile::tempdir().expect("tempdir");
    let store: Arc<dyn MetadataStore> = Arc::new(
        RedbStore::open(&dir.path().join("store.redb"), StoreOptions::default()).expect("store"),
    );
    let hub = WatchHub::attach(&store, 64);
    let mut reg = Registry::new();
    reg.add_generic(
        ResourceKind::new("example.dev", "v1", "Widget", "widgets"),
        &store,
        &hub,
    );
    let config = ServerConfig {
        enforce_namespaces: false,
        ..ServerConfig::default()
    };
    let router = ApiServer::new(reg, config).router();
    Api { _dir: dir, router }
}

impl Api {
    async fn call(&self, method: &str, uri: &str, ct: &str, body: &str) -> (StatusCode, Value) {
        let req = Request::builder()
            .method(method)
            .uri(uri)
            .header("Content-Type", ct)
            .body(Body::from(body.to_owned()))
            .expect("request");
        let resp = self.router.clone().oneshot(req).await.expect("response");
        let code = resp.status();
        let bytes = resp.into_body().collect().await.expect("body").to_bytes();
        (code, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
    }

    async fn json(&self, method: &str, uri: &str, body: &Value) -> (StatusCode, Value) {
        self.call(method, uri, "application/json", &body.to_string())
            .await
    }

    async fn names(&self) -> Vec<String> {
        let (code, list) = self.call("GET", WIDGETS, "", "").await;
        assert_eq!(code, StatusCode::OK);
        list["items"]
            .as_array()
            .expect("items")
            .iter()
            .map(|i| i["metadata"]["name"].as_str().unwrap_or("").to_owned())
            .collect()
    }

    async fn get(&self, name: &str) -> Value {
        let (code, obj) = self.call("GET", &format!("{WIDGETS}/{name}"), "", "").await;
        assert_eq!(code, StatusCode::OK, "{obj}");
        obj
    }
}

fn widget(name: &str, size: i64) -> Value {
    json!({"apiVersion": "example.dev/v1", "kind": "Widget",
           "metadata": {"name": name}, "spec": {"size": size}})
}

#[tokio::test]
async fn dry_runs_change_nothing_for_any_verb() {
    let a = api();
    let (code, obj) = a
        .json("POST", &format!("{WIDGETS}?dryRun=All"), &widget("w", 1))
        .await;
    assert_eq!(code, StatusCode::CREATED);
    assert_eq!(
        obj["metadata"]["name"], "w",
        "a dry-run create answers the object"
    );
    assert!(
        a.names().await.is_empty(),
        "a dry-run create stores nothing"
    );

    let (code, _) = a.json("POST", WIDGETS, &widget("w", 1)).await;
    assert_eq!(code, StatusCode::CREATED);
    let before = a.get("w").await;

    let (code, obj) = a
        .json("PUT", &format!("{WIDGETS}/w?dryRun=All"), &widget("w", 2))
        .await;
    assert_eq!(
        (code, obj["spec"]["size"].clone()),
        (StatusCode::OK, json!(2))
    );
    let (code, obj) = a
        .call(
            "PATCH",
            &format!("{WIDGETS}/w?dryRun=All"),
            "application/merge-patch+json",
            r#"{"spec":{"size":3}}"#,
        )
        .await;
    assert_eq!(
        (code, obj["spec"]["size"].clone()),
        (StatusCode::OK, json!(3))
    );
    assert_eq!(
        a.get("w").await,
        before,
        "dry-run update and patch write nothing"
    );

    // kubectl delete --dry-run=server: DeleteOptions in the body.
    let body = json!({"kind": "DeleteOptions", "apiVersion": "v1", "dryRun": ["All"], "propagationPolicy": "Background"});
    let (code, obj) = a.json("DELETE", &format!("{WIDGETS}/w"), &body).await;
    assert_eq!(
        (code, obj["metadata"]["name"].clone()),
        (StatusCode::OK, json!("w"))
    );
    // Other clients: the query.
    let (code, _) = a
        .call("DELETE", &format!("{WIDGETS}/w?dryRun=All"), "", "")
        .await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(a.get("w").await, before, "dry-run deletes delete nothing");

    // The real delete still deletes.
    let (code, _) = a.call("DELETE", &format!("{WIDGETS}/w"), "", "").await;
    assert_eq!(code, StatusCode::OK);
    assert!(a.names().await.is_empty());
}

#[tokio::test]
async fn unknown_dry_run_values_are_refused_as_kube_apiserver_does() {
    let a = api();
    let (code, status) = a
        .json("POST", &format!("{WIDGETS}?dryRun=Yes"), &widget("w", 1))
        .await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        status["message"],
        "CreateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: []string{\"Yes\"}: supported values: \"All\""
    );
    assert_eq!(status["details"]["causes"][0]["field"], "dryRun");
    assert!(a.names().await.is_empty());

    let (code, _) = a.json("POST", WIDGETS, &widget("w", 1)).await;
    assert_eq!(code, StatusCode::CREATED);
    let (code, status) = a
        .json(
            "DELETE",
            &format!("{WIDGETS}/w"),
            &json!({"dryRun": ["all"]}),
        )
        .await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        status["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("DeleteOptions.meta.k8s.io \"\" is invalid: dryRun")),
        "{status}"
    );
    assert_eq!(a.names().await, ["w"], "a refused delete deletes nothing");
}

#[tokio::test]
async fn unsupported_media_types_are_415() {
    let a = api();
    let body = widget("w", 1).to_string();
    let (code, status) = a.call("POST", WIDGETS, "text/plain", &body).await;
    assert_eq!(code, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_eq!(status["reason"], "UnsupportedMediaType");
    assert_eq!(
        status["message"],
        "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml"
    );
    assert!(a.names().await.is_empty());

    // JSON with parameters and YAML are fine.
    let (code, _) = a
        .call("POST", WIDGETS, "application/json; charset=utf-8", &body)
        .await;
    assert_eq!(code, StatusCode::CREATED);
    let (code, _) = a
        .call(
            "PUT",
            &format!("{WIDGETS}/w"),
            "application/yaml",
            "apiVersion: example.dev/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  size: 5\n",
        )
        .await;
    assert_eq!(code, StatusCode::OK);

    for (method, ct) in [
        ("PUT", "text/plain"),
        ("PUT", "application/x-www-form-urlencoded"),
        ("PATCH", "text/plain"),
        ("PATCH", "application/json"),
    ] {
        let (code, status) = a
            .call(
                method,
                &format!("{WIDGETS}/w"),
                ct,
                r#"{"spec":{"size":9}}"#,
            )
            .await;
        assert_eq!(code, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{method} {ct}");
        assert_eq!(status["code"], 415);
    }
    assert_eq!(a.get("w").await["spec"]["size"], 5);
}

#[tokio::test]
async fn every_422_names_its_cause() {
    let a = api();
    let (code, status) = a.json("POST", WIDGETS, &widget("Bad_Name", 1)).await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(status["details"]["causes"][0]["field"], "metadata.name");

    let (code, _) = a.json("POST", WIDGETS, &widget("w", 1)).await;
    assert_eq!(code, StatusCode::CREATED);
    // A failing JSON patch test is 422 too, with the reason in its causes.
    let (code, status) = a
        .call(
            "PATCH",
            &format!("{WIDGETS}/w"),
            "application/json-patch+json",
            r#"[{"op":"test","path":"/spec/size","value":7}]"#,
        )
        .await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{status}");
    let causes = status["details"]["causes"].as_array().expect("causes");
    assert_eq!(causes.len(), 1);
    assert!(
        causes[0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("JSON patch failed")),
        "{status}"
    );
}

#[tokio::test]
async fn apply_options_are_checked_and_writers_are_named_from_the_user_agent() {
    let a = api();
    let apply = "application/apply-patch+yaml";
    let body = "apiVersion: example.dev/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  size: 1\n";
    let (code, st) = a.call("PATCH", &format!("{WIDGETS}/w"), apply, body).await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        st["message"],
        "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"
    );
    let (code, st) = a
        .call(
            "PATCH",
            &format!("{WIDGETS}/w?fieldManager=m&force=true"),
            "application/merge-patch+json",
            "{}",
        )
        .await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{st}");
    assert_eq!(st["details"]["causes"][0]["field"], "force");
    let (code, st) = a
        .call(
            "PATCH",
            &format!("{WIDGETS}/w?fieldManager=m"),
            apply,
            "metadata:\n  name: w\n  managedFields: [{}]\n",
        )
        .await;
    assert_eq!(code, StatusCode::BAD_REQUEST, "{st}");
    assert_eq!(st["message"], "metadata.managedFields must be nil");

    // Apply creates; a write without fieldManager is named after the user agent.
    let (code, obj) = a
        .call("PATCH", &format!("{WIDGETS}/w?fieldManager=m"), apply, body)
        .await;
    assert_eq!(code, StatusCode::CREATED, "{obj}");
    assert_eq!(obj["metadata"]["managedFields"][0]["manager"], "m");
    assert_eq!(obj["metadata"]["managedFields"][0]["operation"], "Apply");
    let req = Request::builder()
        .method("PATCH")
        .uri(format!("{WIDGETS}/w"))
        .header("Content-Type", "application/merge-patch+json")
        .header("User-Agent", "kubectl/v1.32.0 (linux/amd64) kubernetes/abc")
        .body(Body::from(r#"{"spec":{"size":2}}"#))
        .expect("request");
    let resp = a.router.clone().oneshot(req).await.expect("response");
    assert_eq!(resp.status(), StatusCode::OK);
    let got = a.get("w").await;
    let managers: Vec<(&str, &str)> = got["metadata"]["managedFields"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| {
            (
                e["manager"].as_str().unwrap_or(""),
                e["operation"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        managers,
        vec![("kubectl", "Update")],
        "the patch took m's only field"
    );
    // Now m's apply of the old value conflicts with the patcher.
    let (code, st) = a
        .call("PATCH", &format!("{WIDGETS}/w?fieldManager=m"), apply, body)
        .await;
    assert_eq!(code, StatusCode::CONFLICT);
    assert_eq!(
        st["message"],
        "Apply failed with 1 conflict: conflict with \"kubectl\" using example.dev/v1: .spec.size"
    );
    assert_eq!(st["details"]["causes"][0]["reason"], "FieldManagerConflict");
}

#[tokio::test]
async fn an_orphaning_delete_waits_behind_the_orphan_finalizer() {
    let api = api();
    let (code, _) = api.json("POST", WIDGETS, &widget("owner", 1)).await;
    assert_eq!(code, StatusCode::CREATED);
    // From the query, as client-go's `propagationPolicy` parameter.
    let (code, obj) = api
        .call(
            "DELETE",
            &format!("{WIDGETS}/owner?propagationPolicy=Orphan"),
            "",
            "",
        )
        .await;
    assert_eq!(code, StatusCode::OK, "{obj}");
    assert_eq!(obj["metadata"]["finalizers"], json!(["orphan"]));
    assert!(obj["metadata"]["deletionTimestamp"].is_string(), "{obj}");
    // Kept until a garbage collector removes the finalizer.
    assert_eq!(api.names().await, ["owner"]);

    let (code, _) = api.json("POST", WIDGETS, &widget("other", 1)).await;
    assert_eq!(code, StatusCode::CREATED);
    let (code, status) = api
        .json(
            "DELETE",
            &format!("{WIDGETS}/other"),
            &json!({"kind": "DeleteOptions", "propagationPolicy": "Sometimes"}),
        )
        .await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{status}");
    assert_eq!(status["details"]["causes"][0]["field"], "propagationPolicy");
    // Background and Foreground delete at once.
    let (code, _) = api
        .json(
            "DELETE",
            &format!("{WIDGETS}/other"),
            &json!({"kind": "DeleteOptions", "propagationPolicy": "Foreground"}),
        )
        .await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(api.names().await, ["owner"]);
}
