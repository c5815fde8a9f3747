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

// ---------------------------------------------------------------------------------------------
// API e2e scenario helpers (tests/e2e_*.rs): one server, one smart-HTTP git root with basic
// auth, one kube-rs client per test.

/// Basic-auth credentials of the git fixture in [`Env`].
pub const GIT_USER: &str = "porch";
pub const GIT_PASSWORD: &str = "s3cret-e2e";

/// Everything one scenario needs; nothing is shared between tests.
pub struct Env {
    pub server: super::Server,
    pub root: std::path::PathBuf,
    pub git: GitServer,
    pub client: Client,
}

impl Env {
    /// A fresh server and a git fixture requiring basic auth.
    pub async fn start() -> Env {
        Self::start_with(&[]).await
    }

    /// Like [`Env::start`], with extra server flags.
    pub async fn start_with(flags: &[&str]) -> Env {
        let server = super::Server::start_with(flags);
        let root = server.dir.path().join("git");
        std::fs::create_dir_all(&root).expect("git root");
        let git = GitServer::start(&root, Some((GIT_USER, GIT_PASSWORD))).expect("git server");
        let client = server.client().await;
        Env {
            server,
            root,
            git,
            client,
        }
    }

    /// The bare repository `<root>/<name>.git`.
    pub fn bare(&self, name: &str) -> std::path::PathBuf {
        self.root.join(format!("{name}.git"))
    }

    /// The smart-HTTP URL of `<name>.git`.
    pub fn url(&self, name: &str) -> String {
        self.git.url_for(&format!("{name}.git"))
    }

    /// A remote with one commit on `main`; returns its URL.
    pub fn empty_repo(&self, name: &str) -> String {
        empty_remote(&self.root, name);
        self.url(name)
    }

    /// A remote whose `main` holds `files` (path, text); returns its URL.
    pub fn repo_with(&self, name: &str, files: &[(&str, &str)]) -> String {
        let repo = porch_testkit::repos::init_bare(&self.bare(name), "main").expect("init bare");
        porch_testkit::repos::commit_files(
            &repo,
            "main",
            &porch_testkit::repos::files(files),
            "init",
        )
        .expect("commit");
        self.url(name)
    }

    /// The upstream blueprint repository (`test-blueprints.git`) served from the conformance
    /// bundle; `None` (after printing how to get the data) when the data is absent.
    pub fn blueprints(&self) -> Option<String> {
        let Some(bundle) = porch_testkit::conformance::blueprints_bundle() else {
            eprintln!(
                "SKIPPED: this scenario needs the blueprint repository \
                 shared/conformance/porch/test-blueprints.bundle; set PORCH_CONFORMANCE_DIR to \
                 a checkout of shared/conformance (or place it at ../shared/conformance) to run it"
            );
            return None;
        };
        porch_testkit::repos::bare_from_bundle(&bundle, &self.bare("test-blueprints"))
            .expect("bare repository from the bundle");
        Some(self.url("test-blueprints"))
    }

    pub fn prs(&self, ns: &str) -> Api<DynamicObject> {
        revisions(&self.client, ns)
    }

    pub fn prrs(&self, ns: &str) -> Api<DynamicObject> {
        resources(&self.client, ns)
    }

    pub fn repos(&self, ns: &str) -> Api<DynamicObject> {
        repositories(&self.client, ns)
    }

    /// Creates namespace `ns` (an existing one is fine).
    pub async fn namespace(&self, ns: &str) {
        let api: Api<DynamicObject> = Api::all_with(
            self.client.clone(),
            &ApiResource::from_gvk_with_plural(
                &GroupVersionKind::gvk("", "v1", "Namespace"),
                "namespaces",
            ),
        );
        let obj: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns},
        }))
        .expect("namespace object");
        match api.create(&PostParams::default(), &obj).await {
            Ok(_) => {}
            Err(kube::Error::Api(e)) if e.code == 409 => {}
            Err(e) => panic!("create namespace {ns}: {e:?}"),
        }
    }

    /// The basic-auth Secret `name` in `ns` holding the fixture's credentials.
    pub async fn auth_secret(&self, ns: &str, name: &str) {
        let api: Api<DynamicObject> = Api::namespaced_with(
            self.client.clone(),
            ns,
            &ApiResource::from_gvk_with_plural(
                &GroupVersionKind::gvk("", "v1", "Secret"),
                "secrets",
            ),
        );
        let obj: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": name, "namespace": ns},
            "type": "kubernetes.io/basic-auth",
            "stringData": {"username": GIT_USER, "password": GIT_PASSWORD},
        }))
        .expect("secret object");
        match api.create(&PostParams::default(), &obj).await {
            Ok(_) => {}
            Err(kube::Error::Api(e)) if e.code == 409 => {}
            Err(e) => panic!("create secret {ns}/{name}: {e:?}"),
        }
    }

    /// Registers a Repository with the fixture's credentials (Secret `<name>-auth`, as
    /// `porchctl repo reg` does) and waits until it is Ready.
    pub async fn register(&self, ns: &str, name: &str, url: &str, extra: Value) {
        self.namespace(ns).await;
        let secret = format!("{name}-auth");
        self.auth_secret(ns, &secret).await;
        let mut all = json!({"git": {"secretRef": {"name": secret}}});
        merge(&mut all, extra);
        register(&self.client, ns, name, url, all).await;
    }

    /// Deletes a Repository and waits until it is gone.
    pub async fn unregister(&self, ns: &str, name: &str) {
        let api = self.repos(ns);
        api.delete(name, &Default::default())
            .await
            .expect("delete repository");
        eventually("repository deleted", || async {
            matches!(api.get(name).await, Err(kube::Error::Api(ref e)) if e.code == 404)
        })
        .await;
    }

    /// The server log, for failure messages and the gaps file.
    pub fn log(&self) -> String {
        self.server.log()
    }
}

impl Drop for Env {
    /// A failing scenario prints the end of the server log.
    fn drop(&mut self) {
        if std::thread::panicking() {
            let log = self.log();
            let lines: Vec<&str> = log.lines().collect();
            let tail = lines[lines.len().saturating_sub(30)..].join("\n");
            eprintln!("--- server log (last 30 lines) ---\n{tail}\n---");
        }
    }
}

/// Polls `check` every 25 ms until it holds; panics after 20 s.
pub async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        if check().await {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for: {what}"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Creates a package revision with `tasks`.
pub async fn create(
    api: &Api<DynamicObject>,
    repo: &str,
    package: &str,
    workspace: &str,
    tasks: Value,
) -> DynamicObject {
    api.create(
        &PostParams::default(),
        &new_revision(repo, package, workspace, tasks),
    )
    .await
    .unwrap_or_else(|e| panic!("create {repo}/{package}/{workspace}: {e:?}"))
}

/// Creates a draft with an `init` task.
pub async fn init(
    api: &Api<DynamicObject>,
    repo: &str,
    package: &str,
    workspace: &str,
) -> DynamicObject {
    create(
        api,
        repo,
        package,
        workspace,
        json!([{"type": "init", "init": {"description": format!("{package} test package")}}]),
    )
    .await
}

/// A clone task from a registered package revision.
pub fn clone_task(upstream: &str) -> Value {
    json!([{"type": "clone", "clone": {"upstreamRef": {"upstreamRef": {"name": upstream}}}}])
}

/// An edit (copy) task from a published package revision.
pub fn edit_task(source: &str) -> Value {
    json!([{"type": "edit", "edit": {"sourceRef": {"name": source}}}])
}

/// An upgrade task.
pub fn upgrade_task(old: &str, new: &str, local: &str) -> Value {
    json!([{"type": "upgrade", "upgrade": {
        "oldUpstreamRef": {"name": old},
        "newUpstreamRef": {"name": new},
        "localPackageRevisionRef": {"name": local},
    }}])
}

/// Merge-patches `spec.lifecycle` on the main resource.
pub async fn set_lifecycle(
    api: &Api<DynamicObject>,
    name: &str,
    lifecycle: &str,
) -> Result<DynamicObject, kube::Error> {
    api.patch(
        name,
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(json!({"spec": {"lifecycle": lifecycle}})),
    )
    .await
}

/// Sets `spec.lifecycle` through the approval subresource (GET then PUT).
pub async fn set_approval(
    api: &Api<DynamicObject>,
    name: &str,
    lifecycle: &str,
) -> Result<DynamicObject, kube::Error> {
    let mut pr = api.get(name).await?;
    pr.data["spec"]["lifecycle"] = json!(lifecycle);
    api.replace_subresource("approval", name, &PostParams::default(), &pr)
        .await
}

/// Retries `step` (a read-modify-write) while it meets a conflict, as client-go's
/// `RetryOnConflict` does: a controller may write the revision between the read and the write.
async fn on_conflict_retry<F, Fut>(what: &str, name: &str, step: F) -> DynamicObject
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<DynamicObject, kube::Error>>,
{
    for _ in 0..5 {
        match step().await {
            Ok(o) => return o,
            Err(kube::Error::Api(ae)) if ae.code == 409 => {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
            Err(e) => panic!("{what} {name}: {e:?}"),
        }
    }
    step()
        .await
        .unwrap_or_else(|e| panic!("{what} {name}: {e:?}"))
}

pub async fn propose(api: &Api<DynamicObject>, name: &str) -> DynamicObject {
    on_conflict_retry("propose", name, || set_lifecycle(api, name, "Proposed")).await
}

pub async fn approve(api: &Api<DynamicObject>, name: &str) -> DynamicObject {
    on_conflict_retry("approve", name, || set_approval(api, name, "Published")).await
}

/// Proposes and approves; returns the published revision.
pub async fn publish(api: &Api<DynamicObject>, name: &str) -> DynamicObject {
    propose(api, name).await;
    approve(api, name).await
}

/// Init, propose and approve a new package revision.
pub async fn init_published(
    api: &Api<DynamicObject>,
    repo: &str,
    package: &str,
    workspace: &str,
) -> DynamicObject {
    let pr = init(api, repo, package, workspace).await;
    publish(api, &name(&pr)).await
}

/// Proposes a published revision for deletion (main resource) and deletes it.
pub async fn delete_published(api: &Api<DynamicObject>, name: &str) {
    set_lifecycle(api, name, "DeletionProposed")
        .await
        .unwrap_or_else(|e| panic!("propose-delete {name}: {e:?}"));
    api.delete(name, &Default::default())
        .await
        .unwrap_or_else(|e| panic!("delete {name}: {e:?}"));
}

/// The status code and message of an API error; panics on success or another error.
pub fn api_err<T: std::fmt::Debug>(r: Result<T, kube::Error>) -> (u16, String) {
    match r {
        Err(kube::Error::Api(e)) => (e.code, e.message),
        other => panic!("expected an API error, got {other:?}"),
    }
}

/// Names of the items a list returns, sorted.
pub async fn list_names(api: &Api<DynamicObject>, lp: &kube::api::ListParams) -> Vec<String> {
    let mut names: Vec<String> = api
        .list(lp)
        .await
        .unwrap_or_else(|e| panic!("list {lp:?}: {e:?}"))
        .items
        .iter()
        .map(name)
        .collect();
    names.sort();
    names
}

/// A label of an object.
pub fn label(o: &DynamicObject, key: &str) -> Option<String> {
    o.metadata.labels.as_ref().and_then(|l| l.get(key)).cloned()
}

pub fn is_latest(o: &DynamicObject) -> bool {
    label(o, "kpt.dev/latest-revision").as_deref() == Some("true")
}

/// Whether a GET of `name` answers 404.
pub async fn is_gone(api: &Api<DynamicObject>, name: &str) -> bool {
    matches!(api.get(name).await, Err(kube::Error::Api(ref e)) if e.code == 404)
}

/// The package files of a package revision (`spec.resources` of its PRR).
pub async fn files_of(prrs: &Api<DynamicObject>, name: &str) -> serde_json::Map<String, Value> {
    prrs.get(name)
        .await
        .unwrap_or_else(|e| panic!("get resources {name}: {e:?}"))
        .data["spec"]["resources"]
        .as_object()
        .cloned()
        .unwrap_or_default()
}

/// The Kptfile of a package revision, parsed.
pub async fn kptfile_of(prrs: &Api<DynamicObject>, name: &str) -> Value {
    let files = files_of(prrs, name).await;
    let text = files
        .get("Kptfile")
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("{name} has no Kptfile: {files:?}"));
    serde_yaml::from_str(text).expect("Kptfile YAML")
}

/// Replaces some files of a draft through its PRR (GET, change, PUT).
pub async fn put_files(
    prrs: &Api<DynamicObject>,
    name: &str,
    files: &[(&str, &str)],
) -> Result<DynamicObject, kube::Error> {
    let mut prr = prrs.get(name).await?;
    let map = prr.data["spec"]["resources"]
        .as_object_mut()
        .expect("resources map");
    for (path, text) in files {
        map.insert((*path).to_owned(), json!(text));
    }
    prrs.replace(name, &PostParams::default(), &prr).await
}

/// Refs of a bare repository whose names start with `prefix`.
pub fn refs_under(bare: &Path, prefix: &str) -> Vec<String> {
    remote_refs(bare)
        .into_iter()
        .filter(|r| r.starts_with(prefix))
        .collect()
}

/// A server with a Ready repository `deployments` (smart HTTP remote) and two drafts made with
/// kubectl, `deployments.a.ws` and `deployments.b.ws`.
pub fn server_with_drafts() -> (super::Server, std::path::PathBuf, porch_testkit::GitServer) {
    let s = super::Server::start();
    let root = s.dir.path().join("git");
    std::fs::create_dir_all(&root).expect("git root");
    empty_remote(&root, "deployments");
    let git = git_server(&root);
    let repo = s.write_file(
        "repo.yaml",
        &super::repo_yaml("deployments", &git.url_for("deployments.git")),
    );
    s.kubectl_ok(&["apply", "-f", repo.to_str().expect("utf8")]);
    s.kubectl_ok(&[
        "wait",
        "--for=condition=Ready",
        "repositories.config.porch.kpt.dev/deployments",
        "--timeout=60s",
    ]);
    for pkg in ["a", "b"] {
        let draft = s.write_file(
            &format!("{pkg}.yaml"),
            &format!("apiVersion: porch.kpt.dev/v1alpha1\nkind: PackageRevision\nmetadata:\n  namespace: default\nspec:\n  repository: deployments\n  packageName: {pkg}\n  workspaceName: ws\n  tasks:\n  - type: init\n    init:\n      description: {pkg}\n"),
        );
        s.kubectl_ok(&["create", "-f", draft.to_str().expect("utf8")]);
    }
    (s, root, git)
}
