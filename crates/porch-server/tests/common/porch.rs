//! Helpers for package revision tests: a smart-HTTP git fixture, Repository registration and
//! dynamic `porch.kpt.dev` APIs on a kube-rs client.

#![allow(dead_code)]

use std::path::Path;
use std::time::Duration;

use kube::Client;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, PostParams};
use porch_testkit::GitServer;
use serde_json::{Value, json};

pub fn resource(kind: &str, plural: &str) -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("porch.kpt.dev", "v1alpha1", kind),
        plural,
    )
}

pub fn revisions(client: &Client, ns: &str) -> Api<DynamicObject> {
    Api::namespaced_with(
        client.clone(),
        ns,
        &resource("PackageRevision", "packagerevisions"),
    )
}

pub fn resources(client: &Client, ns: &str) -> Api<DynamicObject> {
    Api::namespaced_with(
        client.clone(),
        ns,
        &resource("PackageRevisionResources", "packagerevisionresources"),
    )
}

pub fn packages(client: &Client, ns: &str) -> Api<DynamicObject> {
    Api::namespaced_with(client.clone(), ns, &resource("PorchPackage", "packages"))
}

pub fn repositories(client: &Client, ns: &str) -> Api<DynamicObject> {
    let ar = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("config.porch.kpt.dev", "v1alpha1", "Repository"),
        "repositories",
    );
    Api::namespaced_with(client.clone(), ns, &ar)
}

/// An empty bare repository `<root>/<name>.git` with one commit on `main`, served over smart
/// HTTP without auth.
pub fn empty_remote(root: &Path, name: &str) -> String {
    let bare = root.join(format!("{name}.git"));
    let repo = porch_testkit::repos::init_bare(&bare, "main").expect("init bare");
    let files = porch_testkit::repos::files(&[("README.md", "test repository\n")]);
    porch_testkit::repos::commit_files(&repo, "main", &files, "init").expect("commit");
    name.to_owned()
}

/// Starts a smart-HTTP server over `root`.
pub fn git_server(root: &Path) -> GitServer {
    GitServer::start(root, None).expect("git server")
}

/// Registers a Repository and waits until it is Ready.
pub async fn register(client: &Client, ns: &str, name: &str, url: &str, extra: Value) {
    let api = repositories(client, ns);
    let mut spec = json!({"type": "git", "git": {"repo": url, "branch": "main", "directory": "/"}});
    merge(&mut spec, extra);
    let obj: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "config.porch.kpt.dev/v1alpha1",
        "kind": "Repository",
        "metadata": {"name": name, "namespace": ns},
        "spec": spec,
    }))
    .expect("repository object");
    api.create(&PostParams::default(), &obj)
        .await
        .expect("create repository");
    wait_ready(client, ns, name).await;
}

pub async fn wait_ready(client: &Client, ns: &str, name: &str) {
    let api = repositories(client, ns);
    for _ in 0..600 {
        let r = api.get(name).await.expect("get repository");
        let cond = r.data["status"]["conditions"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["type"] == "Ready").cloned());
        if let Some(c) = cond
            && c["reason"] != "Reconciling"
        {
            assert_eq!(c["status"], "True", "repository {name} not ready: {c}");
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("repository {name} never became Ready");
}

fn merge(a: &mut Value, b: Value) {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                merge(a.entry(k).or_insert(Value::Null), v);
            }
        }
        (a, b) => *a = b,
    }
}

/// A PackageRevision create body.
pub fn new_revision(repo: &str, package: &str, workspace: &str, tasks: Value) -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": "porch.kpt.dev/v1alpha1",
        "kind": "PackageRevision",
        "metadata": {},
        "spec": {
            "repository": repo,
            "packageName": package,
            "workspaceName": workspace,
            "tasks": tasks,
        },
    }))
    .expect("package revision object")
}

pub fn spec(o: &DynamicObject) -> &Value {
    &o.data["spec"]
}

pub fn name(o: &DynamicObject) -> String {
    o.metadata.name.clone().unwrap_or_default()
}

/// Refs of a bare repository on disk.
pub fn remote_refs(bare: &Path) -> Vec<String> {
    porch_testkit::repos::list_refs(bare)
        .expect("list refs")
        .into_iter()
        .map(|(r, _)| r)
        .collect()
}
