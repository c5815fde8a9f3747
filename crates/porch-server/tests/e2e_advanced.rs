//! Upstream API e2e scenarios of `test/e2e/api/advanced_test.go` (porch-api.md §18.1): large
//! packages, several namespaces, UIDs, rollback of failed creates, re-registration, package
//! metadata from the Kptfile.

mod common;

use std::collections::HashSet;

use common::porch::*;
use kube::api::{Api, DynamicObject, ListParams, PostParams};
use serde_json::{Value, json};

const NS: &str = "default";

const SET_ANNOTATIONS: &str = "gcr.io/kpt-fn/set-annotations:v0.1.4";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_large_package_revision() {
    let env = Env::start().await;
    let url = env.empty_repo("git");
    env.register(NS, "git", &url, json!({})).await;
    let prs = env.prs(NS);
    let prrs = env.prrs(NS);
    let pr = "git.large-package.ws";
    init(&prs, "git", "large-package", "ws").await;

    let big = "a".repeat(5 * 1024 * 1024);
    let kptfile = kptfile_text(&prrs, pr).await;
    let kptfile = format!(
        "{kptfile}pipeline:\n  mutators:\n  - image: {SET_ANNOTATIONS}\n    configMap:\n      color: orange\n"
    );
    let cm = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: large\ndata:\n  value: {big}\n"
    );
    let updated = put_files(&prrs, pr, &[("Kptfile", &kptfile), ("large.yaml", &cm)])
        .await
        .expect("update with a 5 MiB resource");
    assert_eq!(updated.data["status"]["renderStatus"]["error"], "");
    let check = |text: &str| {
        let doc: Value = serde_yaml::from_str(text).expect("large.yaml");
        assert_eq!(doc["metadata"]["annotations"]["color"], "orange");
        assert_eq!(doc["data"]["value"].as_str().map(str::len), Some(big.len()));
    };
    check(
        updated.data["spec"]["resources"]["large.yaml"]
            .as_str()
            .expect("large.yaml in the response"),
    );
    let files = files_of(&prrs, pr).await;
    check(files["large.yaml"].as_str().expect("large.yaml on GET"));

    publish(&prs, pr).await;
    let blob = porch_testkit::repos::run(
        std::process::Command::new("git")
            .arg("-C")
            .arg(env.bare("git"))
            .args(["cat-file", "-s", "main:large-package/large.yaml"]),
    )
    .expect("large.yaml published on main");
    assert!(
        blob.trim().parse::<usize>().expect("size") > big.len(),
        "{blob}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_package_revision_in_multiple_namespaces() {
    let env = Env::start().await;
    let Some(url) = env.blueprints() else {
        return;
    };
    let mut counts = Vec::new();
    for i in 1..=3 {
        let ns = format!("porch-ns-{i}");
        let repo = format!("blueprints-{i}");
        env.register(&ns, &repo, &url, json!({})).await;
        let list = env
            .prs(&ns)
            .list(&ListParams::default())
            .await
            .expect("list");
        for pr in &list.items {
            assert!(
                name(pr).starts_with(&format!("{repo}.")),
                "{} in {ns}",
                name(pr)
            );
            assert_eq!(pr.metadata.namespace.as_deref(), Some(ns.as_str()));
            assert_eq!(spec(pr)["repository"], repo.as_str());
        }
        counts.push(list.items.len());
    }
    assert_eq!(counts, [16, 16, 16]);
    let all: Api<DynamicObject> = Api::all_with(
        env.client.clone(),
        &resource("PackageRevision", "packagerevisions"),
    );
    assert_eq!(
        all.list(&ListParams::default())
            .await
            .expect("list all namespaces")
            .items
            .len(),
        48
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_uniqueness_of_uids() {
    let env = Env::start().await;
    let Some(url) = env.blueprints() else {
        return;
    };
    env.register("uid-ns-1", "test-blueprints", &url, json!({}))
        .await;
    env.register("uid-ns-2", "test-blueprints", &url, json!({}))
        .await;
    let all: Api<DynamicObject> = Api::all_with(
        env.client.clone(),
        &resource("PackageRevision", "packagerevisions"),
    );
    let items = all
        .list(&ListParams::default())
        .await
        .expect("list all namespaces")
        .items;
    assert_eq!(items.len(), 32);
    let uids: HashSet<String> = items
        .iter()
        .map(|o| o.metadata.uid.clone().expect("uid"))
        .collect();
    assert_eq!(uids.len(), 32, "every UID is unique");
    // Same name in two namespaces: different UIDs, each stable across GETs.
    let a = env
        .prs("uid-ns-1")
        .get("test-blueprints.basens.v1")
        .await
        .expect("get");
    let b = env
        .prs("uid-ns-2")
        .get("test-blueprints.basens.v1")
        .await
        .expect("get");
    assert_ne!(a.metadata.uid, b.metadata.uid);
    let a2 = env
        .prs("uid-ns-1")
        .get("test-blueprints.basens.v1")
        .await
        .expect("get");
    assert_eq!(a.metadata.uid, a2.metadata.uid);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_create_package_revision_rollback() {
    let env = Env::start().await;
    let url = env.empty_repo("git");
    env.register(NS, "git", &url, json!({})).await;
    let upstream = env.repo_with(
        "upstream",
        &[(
            "pkg/Kptfile",
            "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\n",
        )],
    );
    let prs = env.prs(NS);

    // An unreachable remote, then a directory that does not exist in a reachable one.
    for (i, (repo, dir)) in [
        ("http://127.0.0.1:9/nowhere.git".to_owned(), "pkg"),
        (upstream.clone(), "no-such-directory"),
    ]
    .into_iter()
    .enumerate()
    {
        env.auth_secret(NS, "upstream-auth").await;
        let body = new_revision(
            "git",
            &format!("rollback-{i}"),
            "ws",
            json!([{"type": "clone", "clone": {"upstreamRef": {"type": "git", "git": {
                "repo": repo, "ref": "main", "directory": dir,
                "secretRef": {"name": "upstream-auth"},
            }}}}]),
        );
        let (code, msg) = api_err(prs.create(&PostParams::default(), &body).await);
        assert!(code >= 400, "{code} {msg}");
        assert!(
            list_names(&prs, &ListParams::default()).await.is_empty(),
            "nothing is left after {repo} {dir}"
        );
        let refs = remote_refs(&env.bare("git"));
        assert_eq!(refs, ["refs/heads/main"], "no branch is left: {refs:?}");
    }
    // The same name can be created afterwards.
    let ok = create(
        &prs,
        "git",
        "rollback-1",
        "ws",
        json!([{"type": "clone", "clone": {"upstreamRef": {"type": "git", "git": {
            "repo": upstream, "ref": "main", "directory": "pkg",
            "secretRef": {"name": "upstream-auth"},
        }}}}]),
    )
    .await;
    assert_eq!(name(&ok), "git.rollback-1.ws");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_metadata_after_approve_and_background_job() {
    let env = Env::start().await;
    let url = env.empty_repo("git");
    env.register(NS, "git", &url, json!({})).await;
    let prs = env.prs(NS);
    init_published(&prs, "git", "test-package", "v1").await;

    let want = [
        ("git.test-package.main".to_owned(), -1),
        ("git.test-package.v1".to_owned(), 1),
    ];
    assert_eq!(revisions_of(&prs).await, want);
    env.unregister(NS, "git").await;
    eventually(
        "revisions of an unregistered repository disappear",
        || async { list_names(&prs, &ListParams::default()).await.is_empty() },
    )
    .await;
    env.register(NS, "git", &url, json!({})).await;
    assert_eq!(revisions_of(&prs).await, want, "after re-registration");
    let v1 = prs.get("git.test-package.v1").await.expect("v1");
    assert_eq!(spec(&v1)["lifecycle"], "Published");
    assert!(is_latest(&v1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_metadata_after_delete_and_background_job() {
    let env = Env::start().await;
    let url = env.empty_repo("git");
    env.register(NS, "git", &url, json!({})).await;
    let prs = env.prs(NS);
    init_published(&prs, "git", "test-package", "v1").await;
    delete_published(&prs, "git.test-package.v1").await;

    let want = [("git.test-package.main".to_owned(), -1)];
    assert_eq!(revisions_of(&prs).await, want);
    env.unregister(NS, "git").await;
    env.register(NS, "git", &url, json!({})).await;
    assert_eq!(revisions_of(&prs).await, want, "after re-registration");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_package_metadata_from_kptfile() {
    let env = Env::start().await;
    let target = env.empty_repo("git");
    env.register(NS, "git", &target, json!({})).await;
    let prs = env.prs(NS);
    let prrs = env.prrs(NS);
    let pr = "git.meta-package.ws";

    // An upstream whose Kptfile carries labels and annotations.
    let mut upstream = new_revision("git", "meta-upstream", "v1", json!([]));
    upstream.data["spec"]["packageMetadata"] = json!({
        "labels": {"test-label": "test-value"},
        "annotations": {"test-annotation": "true"},
    });
    prs.create(&PostParams::default(), &upstream)
        .await
        .expect("upstream with packageMetadata");
    let upstream = publish(&prs, "git.meta-upstream.v1").await;
    let mut want = spec(&upstream)["packageMetadata"].clone();
    assert_eq!(want["labels"]["test-label"], "test-value", "{want}");

    // Create-time packageMetadata is merged with the upstream Kptfile's labels/annotations.
    let mut body = new_revision(
        "git",
        "meta-package",
        "ws",
        clone_task("git.meta-upstream.v1"),
    );
    body.data["spec"]["packageMetadata"] = json!({
        "labels": {"added-label": "added"},
        "annotations": {"added-annotation": "yes"},
    });
    let created = prs
        .create(&PostParams::default(), &body)
        .await
        .expect("clone with packageMetadata");
    want["labels"]["added-label"] = json!("added");
    want["annotations"]["added-annotation"] = json!("yes");
    // The clone adds kpt's merge key to the Kptfile, as to every resource.
    want["annotations"]["internal.kpt.dev/upstream-identifier"] =
        json!("kpt.dev|Kptfile|default|meta-package");
    assert_eq!(spec(&created)["packageMetadata"], want);
    let kf = kptfile_of(&prrs, pr).await;
    assert_eq!(kf["metadata"]["labels"], want["labels"]);
    assert_eq!(kf["metadata"]["annotations"], want["annotations"]);

    // A manual Kptfile edit shows in spec.packageMetadata.
    let text = kptfile_text(&prrs, pr).await;
    let text = text.replace("test-label: test-value", "test-label: edited");
    assert!(text.contains("test-label: edited"), "{text}");
    put_files(&prrs, pr, &[("Kptfile", &text)])
        .await
        .expect("edit the Kptfile");
    let got = prs.get(pr).await.expect("get");
    assert_eq!(
        spec(&got)["packageMetadata"]["labels"],
        json!({"test-label": "edited", "added-label": "added"})
    );

    // Updating spec.packageMetadata replaces the Kptfile's labels and annotations.
    let mut upd = got.clone();
    upd.data["spec"]["packageMetadata"] = json!({"labels": {"only": "this"}, "annotations": {}});
    let updated = prs
        .replace(pr, &PostParams::default(), &upd)
        .await
        .expect("update packageMetadata");
    assert_eq!(
        updated.data["spec"]["packageMetadata"]["labels"],
        json!({"only": "this"})
    );
    let kf = kptfile_of(&prrs, pr).await;
    assert_eq!(kf["metadata"]["labels"], json!({"only": "this"}));
    assert!(
        kf["metadata"]["annotations"]
            .as_object()
            .is_none_or(|a| a.is_empty()),
        "{kf}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_package_metadata_field_selectors() {
    let env = Env::start().await;
    let url = env.empty_repo("git");
    env.register(NS, "git", &url, json!({})).await;
    let prs = env.prs(NS);
    for (pkg, team) in [("pkg-a", "a"), ("pkg-b", "b")] {
        let mut body = new_revision("git", pkg, "ws", json!([{"type": "init", "init": {}}]));
        body.data["spec"]["packageMetadata"] = json!({"labels": {"team": team}});
        prs.create(&PostParams::default(), &body)
            .await
            .expect("create with packageMetadata");
    }
    let fields = |f: &str| ListParams::default().fields(f);
    assert_eq!(
        list_names(&prs, &fields("spec.packageMetadata.labels[team]=a")).await,
        ["git.pkg-a.ws"]
    );
    assert_eq!(
        list_names(&prs, &fields("spec.packageMetadata.labels[team]=b")).await,
        ["git.pkg-b.ws"]
    );
    assert!(
        list_names(&prs, &fields("spec.packageMetadata.labels[team]=c"))
            .await
            .is_empty()
    );
    assert!(
        list_names(&prs, &fields("spec.packageMetadata.labels[other]=a"))
            .await
            .is_empty()
    );
}

/// (name, revision) of every package revision in the namespace, sorted.
async fn revisions_of(prs: &Api<DynamicObject>) -> Vec<(String, i64)> {
    let mut v: Vec<(String, i64)> = prs
        .list(&ListParams::default())
        .await
        .expect("list")
        .items
        .iter()
        .map(|o| (name(o), spec(o)["revision"].as_i64().unwrap_or(0)))
        .collect();
    v.sort();
    v
}

async fn kptfile_text(prrs: &Api<DynamicObject>, name: &str) -> String {
    files_of(prrs, name).await["Kptfile"]
        .as_str()
        .expect("Kptfile text")
        .to_owned()
}
