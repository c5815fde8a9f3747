//! Server-side apply with field ownership, through kubectl 1.32 and kube-rs against the real
//! server: pruning of fields an applier stops sending, conflicts between managers, forcing,
//! dry runs, managedFields on GET, and conflicts with client-side writes (patch, edit).

mod common;

use std::os::unix::fs::PermissionsExt;
use std::process::Command;

use common::porch::*;
use common::{KUBECTL, Server};
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams};
use serde_json::{Value, json};

fn cm_yaml(labels: &[(&str, &str)], data: &[(&str, &str)]) -> String {
    let mut s =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  namespace: default\n".to_owned();
    if !labels.is_empty() {
        s.push_str("  labels:\n");
        for (k, v) in labels {
            s.push_str(&format!("    {k}: \"{v}\"\n"));
        }
    }
    if !data.is_empty() {
        s.push_str("data:\n");
        for (k, v) in data {
            s.push_str(&format!("  {k}: \"{v}\"\n"));
        }
    }
    s
}

fn apply_file(s: &Server, name: &str, yaml: &str, extra: &[&str]) -> std::process::Output {
    let file = s.write_file(name, yaml);
    let path = file.to_str().expect("utf8").to_owned();
    let mut args = vec!["apply", "--server-side", "-f", path.as_str()];
    args.extend_from_slice(extra);
    s.kubectl(&args)
}

fn get_json(s: &Server) -> Value {
    let out = s.kubectl_ok(&[
        "get",
        "configmap",
        "cm",
        "-o",
        "json",
        "--show-managed-fields",
    ]);
    serde_json::from_str(&out).expect("json")
}

/// `manager -> fieldsV1` of the object's entries for `operation`.
fn owners(obj: &Value, operation: &str) -> Vec<(String, Value)> {
    obj.pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .map(|l| {
            l.iter()
                .filter(|e| e["operation"] == operation)
                .map(|e| {
                    (
                        e["manager"].as_str().unwrap_or("").to_owned(),
                        e["fieldsV1"].clone(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn kubectl_server_side_apply_prunes_conflicts_and_forces() {
    let s = Server::start();
    let first = apply_file(
        &s,
        "a.yaml",
        &cm_yaml(&[("a", "1"), ("b", "2")], &[("x", "1")]),
        &[],
    );
    assert!(first.status.success(), "{}", stderr(&first));
    assert_eq!(
        String::from_utf8_lossy(&first.stdout).trim(),
        "configmap/cm serverside-applied"
    );
    let o = get_json(&s);
    assert_eq!(
        owners(&o, "Apply"),
        vec![(
            "kubectl".to_owned(),
            json!({"f:data": {"f:x": {}}, "f:metadata": {"f:labels": {"f:a": {}, "f:b": {}}}})
        )]
    );

    // Re-applied without label b: b is gone.
    let again = apply_file(&s, "a.yaml", &cm_yaml(&[("a", "1")], &[("x", "1")]), &[]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(get_json(&s)["metadata"]["labels"], json!({"a": "1"}));

    // Another manager changing a field kubectl owns: a conflict naming both.
    let other = cm_yaml(&[], &[("x", "2")]);
    let refused = apply_file(&s, "o.yaml", &other, &["--field-manager=other"]);
    assert!(!refused.status.success());
    let err = stderr(&refused);
    assert!(
        err.contains("Apply failed with 1 conflict: conflict with \"kubectl\": .data.x"),
        "{err}"
    );
    assert_eq!(get_json(&s)["data"]["x"], "1");

    // Forced, the other manager takes the field over.
    let forced = apply_file(
        &s,
        "o.yaml",
        &other,
        &["--field-manager=other", "--force-conflicts"],
    );
    assert!(forced.status.success(), "{}", stderr(&forced));
    let o = get_json(&s);
    assert_eq!(o["data"]["x"], "2");
    let applied = owners(&o, "Apply");
    assert!(
        applied.contains(&("other".to_owned(), json!({"f:data": {"f:x": {}}}))),
        "{applied:?}"
    );
    assert!(
        applied.contains(&(
            "kubectl".to_owned(),
            json!({"f:metadata": {"f:labels": {"f:a": {}}}})
        )),
        "{applied:?}"
    );

    // A server dry run changes nothing.
    let rv = o["metadata"]["resourceVersion"].clone();
    let dry = apply_file(
        &s,
        "d.yaml",
        &cm_yaml(&[("a", "1"), ("c", "3")], &[]),
        &["--dry-run=server"],
    );
    assert!(dry.status.success(), "{}", stderr(&dry));
    assert!(String::from_utf8_lossy(&dry.stdout).contains("(server dry run)"));
    let after = get_json(&s);
    assert_eq!(after["metadata"]["resourceVersion"], rv);
    assert_eq!(after["metadata"]["labels"], json!({"a": "1"}));

    // managedFields: shown with --show-managed-fields, hidden by kubectl without it.
    let shown = s.kubectl_ok(&["get", "cm", "cm", "-o", "yaml", "--show-managed-fields"]);
    assert!(
        shown.contains("manager: kubectl\n") && shown.contains("manager: other\n"),
        "{shown}"
    );
    assert!(shown.contains("operation: Apply") && shown.contains("fieldsType: FieldsV1"));
    let hidden = s.kubectl_ok(&["get", "cm", "cm", "-o", "yaml"]);
    assert!(!hidden.contains("managedFields"), "{hidden}");
}

#[test]
fn client_side_writes_own_fields_and_a_later_apply_conflicts() {
    let s = Server::start();
    let first = apply_file(
        &s,
        "a.yaml",
        &cm_yaml(&[("a", "1")], &[("x", "1"), ("w", "1")]),
        &[],
    );
    assert!(first.status.success(), "{}", stderr(&first));

    // kubectl patch: an Update entry of `kubectl-patch` owning what it changed.
    s.kubectl_ok(&[
        "patch",
        "cm",
        "cm",
        "--type=merge",
        "-p",
        r#"{"data":{"x":"patched"}}"#,
    ]);
    let o = get_json(&s);
    assert_eq!(
        owners(&o, "Update"),
        vec![("kubectl-patch".to_owned(), json!({"f:data": {"f:x": {}}}))]
    );
    let refused = apply_file(
        &s,
        "a.yaml",
        &cm_yaml(&[("a", "1")], &[("x", "1"), ("w", "1")]),
        &[],
    );
    assert!(!refused.status.success());
    let err = stderr(&refused);
    assert!(
        err.contains("conflict with \"kubectl-patch\" using v1: .data.x"),
        "{err}"
    );

    // kubectl edit: `kubectl-edit` owns the edited field.
    let editor = s.write_file(
        "editor.sh",
        "#!/bin/sh\nsed -i 's/^  w: \"1\"$/  w: edited/' \"$1\"\n",
    );
    std::fs::set_permissions(&editor, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let out = Command::new(KUBECTL)
        .args(["edit", "cm", "cm", "--output-patch=false"])
        .env("KUBECONFIG", s.kubeconfig())
        .env("HOME", s.home.path())
        .env("KUBE_EDITOR", &editor)
        .output()
        .expect("kubectl edit");
    assert!(out.status.success(), "{}", stderr(&out));
    let o = get_json(&s);
    assert_eq!(o["data"]["w"], "edited", "{o}");
    assert!(
        owners(&o, "Update").contains(&("kubectl-edit".to_owned(), json!({"f:data": {"f:w": {}}}))),
        "{o}"
    );
    let refused = apply_file(&s, "b.yaml", &cm_yaml(&[("a", "1")], &[("w", "1")]), &[]);
    let err = stderr(&refused);
    assert!(
        err.contains("conflict with \"kubectl-edit\" using v1: .data.w"),
        "{err}"
    );
    // Forcing takes both fields back from the client-side writers.
    let forced = apply_file(
        &s,
        "a.yaml",
        &cm_yaml(&[("a", "1")], &[("x", "1"), ("w", "1")]),
        &["--force-conflicts"],
    );
    assert!(forced.status.success(), "{}", stderr(&forced));
    let o = get_json(&s);
    assert_eq!(o["data"], json!({"x": "1", "w": "1"}));
    assert!(owners(&o, "Update").is_empty(), "{o}");
}

#[test]
fn kubectl_moves_from_client_side_to_server_side_apply_without_conflicts() {
    let s = Server::start();
    let file = s.write_file("c.yaml", &cm_yaml(&[("a", "1")], &[("x", "1")]));
    s.kubectl_ok(&["apply", "-f", file.to_str().expect("utf8")]);
    let o = get_json(&s);
    assert_eq!(
        owners(&o, "Update")
            .iter()
            .map(|o| o.0.as_str())
            .collect::<Vec<_>>(),
        vec!["kubectl-client-side-apply"]
    );
    // The fields the annotation holds are kubectl's to take over with a new value.
    let moved = apply_file(&s, "c.yaml", &cm_yaml(&[("a", "1")], &[("x", "2")]), &[]);
    assert!(moved.status.success(), "{}", stderr(&moved));
    let o = get_json(&s);
    assert_eq!(o["data"]["x"], "2");
    let last = o["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
        .as_str()
        .unwrap_or("");
    assert!(last.contains(r#""data":{"x":"2"}"#), "kept in step: {last}");
    // Another manager gets no such pass.
    let other = apply_file(
        &s,
        "o.yaml",
        &cm_yaml(&[], &[("x", "3")]),
        &["--field-manager=other"],
    );
    assert!(!other.status.success());
    assert!(
        stderr(&other).contains("conflict with \"kubectl\": .data.x"),
        "{}",
        stderr(&other)
    );
}

fn config_maps(client: &kube::Client) -> Api<DynamicObject> {
    Api::namespaced_with(
        client.clone(),
        "default",
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("", "v1", "ConfigMap"),
            "configmaps",
        ),
    )
}

fn api_error(e: kube::Error) -> kube::core::Status {
    match e {
        kube::Error::Api(e) => *e,
        other => panic!("not an API error: {other:?}"),
    }
}

fn labels(o: &DynamicObject) -> Value {
    let mut l =
        serde_json::to_value(o.metadata.labels.clone().unwrap_or_default()).expect("labels");
    if let Some(m) = l.as_object_mut() {
        m.remove("kpt.dev/latest-revision");
    }
    l
}

/// The apply sequence through kube-rs on `api`'s object `name` (whose apply bodies
/// `body(labels)` build): prune, conflict, force, dry run.
async fn apply_sequence(api: &Api<DynamicObject>, name: &str, body: impl Fn(Value) -> Value) {
    let mgr = PatchParams::apply("mgr");
    let o = api
        .patch(name, &mgr, &Patch::Apply(body(json!({"a": "1", "b": "2"}))))
        .await
        .expect("first apply");
    assert_eq!(labels(&o), json!({"a": "1", "b": "2"}));
    let o = api
        .patch(name, &mgr, &Patch::Apply(body(json!({"a": "1"}))))
        .await
        .expect("second apply");
    assert_eq!(labels(&o), json!({"a": "1"}), "b is pruned");

    let other = PatchParams::apply("other");
    let e = api_error(
        api.patch(name, &other, &Patch::Apply(body(json!({"a": "changed"}))))
            .await
            .expect_err("conflicts"),
    );
    assert_eq!(e.code, 409);
    assert_eq!(
        e.message,
        "Apply failed with 1 conflict: conflict with \"mgr\": .metadata.labels.a"
    );

    let mut dry = other.clone().force();
    dry.dry_run = true;
    let o = api
        .patch(name, &dry, &Patch::Apply(body(json!({"a": "changed"}))))
        .await
        .expect("dry run");
    assert_eq!(labels(&o), json!({"a": "changed"}));
    assert_eq!(
        labels(&api.get(name).await.expect("get")),
        json!({"a": "1"}),
        "the dry run saved nothing"
    );

    let o = api
        .patch(
            name,
            &other.force(),
            &Patch::Apply(body(json!({"a": "changed"}))),
        )
        .await
        .expect("forced apply");
    assert_eq!(labels(&o), json!({"a": "changed"}));
    let got = api.get(name).await.expect("get");
    let mf = got.metadata.managed_fields.clone().unwrap_or_default();
    let other_entry = mf
        .iter()
        .find(|e| e.manager.as_deref() == Some("other"))
        .expect("other owns a field");
    assert_eq!(
        other_entry.fields_v1.as_ref().map(|f| f.0.clone()),
        Some(json!({"f:metadata": {"f:labels": {"f:a": {}}}}))
    );
    // `mgr` lost its only field and with it its entry.
    assert!(
        mf.iter().all(|e| e.manager.as_deref() != Some("mgr")),
        "{mf:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kube_rs_patch_apply_on_config_maps_and_package_revisions() {
    let mut env = Env::start().await;
    let cms = config_maps(&env.client);
    apply_sequence(&cms, "kcm", |labels| {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "kcm", "labels": labels}})
    })
    .await;

    let url = env.empty_repo("git");
    env.register("default", "git", &url, json!({})).await;
    let prs = env.prs("default");
    let pr = init(&prs, "git", "pkg", "ws").await;
    let pr_name = name(&pr);
    let body_name = pr_name.clone();
    apply_sequence(&prs, &pr_name, move |labels| {
        json!({"apiVersion": "porch.kpt.dev/v1alpha1", "kind": "PackageRevision",
               "metadata": {"name": body_name, "labels": labels}})
    })
    .await;
    let got = prs.get(&pr_name).await.expect("get revision");
    assert_eq!(spec(&got)["lifecycle"], "Draft");
    // Lists carry the same managedFields as get, as kube-apiserver's do.
    assert_eq!(listed_managers(&prs, &pr_name).await, managers(&got));

    // A revision's managedFields survive a restart: `mgr` re-applying the old value still
    // conflicts with `other`.
    tokio::task::block_in_place(|| env.server.restart());
    let client = env.server.wait_readyz().await;
    let prs = revisions(&client, "default");
    // After a restart a list reads the records of every revision from the store.
    let listed = listed_managers(&prs, &pr_name).await;
    assert!(listed.contains(&"other".to_owned()), "{listed:?}");
    let got = prs.get(&pr_name).await.expect("get revision");
    assert_eq!(listed, managers(&got));
    let e = api_error(
        prs.patch(
            &pr_name,
            &PatchParams::apply("mgr"),
            &Patch::Apply(
                json!({"apiVersion": "porch.kpt.dev/v1alpha1", "kind": "PackageRevision",
                                 "metadata": {"name": pr_name, "labels": {"a": "1"}}}),
            ),
        )
        .await
        .expect_err("conflicts after a restart"),
    );
    assert_eq!(
        e.message,
        "Apply failed with 1 conflict: conflict with \"other\": .metadata.labels.a"
    );
}

fn managers(o: &DynamicObject) -> Vec<String> {
    o.metadata
        .managed_fields
        .iter()
        .flatten()
        .filter_map(|m| m.manager.clone())
        .collect()
}

async fn listed_managers(api: &Api<DynamicObject>, name: &str) -> Vec<String> {
    let list = api.list(&Default::default()).await.expect("list");
    let item = list
        .items
        .iter()
        .find(|o| o.metadata.name.as_deref() == Some(name))
        .expect("listed");
    managers(item)
}
