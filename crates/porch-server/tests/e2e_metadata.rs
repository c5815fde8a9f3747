//! Upstream API e2e scenarios of `test/e2e/api/rpkg_metadata_test.go` (porch-api.md §18.1):
//! labels, annotations, ownerReferences, field and label selectors, finalizers.

mod common;

use std::collections::BTreeMap;

use common::porch::*;
use kube::api::{ListParams, Patch, PatchParams, PostParams};
use serde_json::json;

const NS: &str = "default";

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// User labels (without the computed latest-revision label).
fn user_labels(o: &kube::api::DynamicObject) -> BTreeMap<String, String> {
    let mut l = o.metadata.labels.clone().unwrap_or_default();
    l.remove("kpt.dev/latest-revision");
    l
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_package_revision_metadata_new_package_revision_labels() {
    let env = Env::start().await;
    let url = env.empty_repo("git");
    env.register(NS, "git", &url, json!({})).await;
    let prs = env.prs(NS);

    let labels = map(&[("kpt.dev/label", "foo"), ("kpt.dev/other-label", "bar")]);
    let annotations = map(&[("kpt.dev/anno", "foo"), ("kpt.dev/other-anno", "bar")]);
    let mut body = new_revision(
        "git",
        "new-package",
        "ws",
        json!([{"type": "init", "init": {"description": "labelled"}}]),
    );
    body.metadata.labels = Some(labels.clone());
    body.metadata.annotations = Some(annotations.clone());
    let created = prs
        .create(&PostParams::default(), &body)
        .await
        .expect("create with labels");
    assert_eq!(user_labels(&created), labels);
    assert_eq!(created.metadata.annotations.as_ref(), Some(&annotations));
    let got = prs.get("git.new-package.ws").await.expect("get");
    assert_eq!(user_labels(&got), labels);
    assert_eq!(got.metadata.annotations.as_ref(), Some(&annotations));

    let proposed = propose(&prs, "git.new-package.ws").await;
    assert_eq!(user_labels(&proposed), labels);
    assert_eq!(proposed.metadata.annotations.as_ref(), Some(&annotations));
    let published = approve(&prs, "git.new-package.ws").await;
    assert_eq!(user_labels(&published), labels);
    assert!(is_latest(&published));
    assert_eq!(published.metadata.annotations.as_ref(), Some(&annotations));

    // Labels stay editable on a published revision.
    let mut edited = prs.get("git.new-package.ws").await.expect("get published");
    edited
        .metadata
        .labels
        .get_or_insert_with(Default::default)
        .insert("kpt.dev/added".into(), "later".into());
    edited
        .metadata
        .annotations
        .get_or_insert_with(Default::default)
        .remove("kpt.dev/other-anno");
    let updated = prs
        .replace("git.new-package.ws", &PostParams::default(), &edited)
        .await
        .expect("update labels of a published revision");
    let mut want = labels.clone();
    want.insert("kpt.dev/added".into(), "later".into());
    assert_eq!(user_labels(&updated), want);
    let got = prs.get("git.new-package.ws").await.expect("get");
    assert_eq!(user_labels(&got), want);
    assert!(is_latest(&got));
    assert_eq!(
        got.metadata.annotations.as_ref(),
        Some(&map(&[("kpt.dev/anno", "foo")]))
    );

    // A clone does not inherit the source's labels or annotations.
    let clone = create(
        &prs,
        "git",
        "cloned-package",
        "ws",
        clone_task("git.new-package.ws"),
    )
    .await;
    assert!(user_labels(&clone).is_empty(), "{:?}", clone.metadata);
    assert!(
        clone
            .metadata
            .annotations
            .clone()
            .unwrap_or_default()
            .is_empty(),
        "{:?}",
        clone.metadata
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_package_revision_metadata_registered_package_revision_labels() {
    let env = Env::start().await;
    let Some(url) = env.blueprints() else {
        return;
    };
    env.register(NS, "test-blueprints", &url, json!({})).await;
    let prs = env.prs(NS);
    let pr = "test-blueprints.basens.v1";

    let mut got = prs.get(pr).await.expect("discovered revision");
    assert!(user_labels(&got).is_empty(), "{:?}", got.metadata.labels);
    assert!(!is_latest(&got), "v1 is not the latest of basens");
    assert!(
        got.metadata
            .annotations
            .clone()
            .unwrap_or_default()
            .is_empty(),
        "{:?}",
        got.metadata.annotations
    );

    let labels = map(&[("kpt.dev/label", "foo")]);
    let annotations = map(&[("kpt.dev/anno", "foo")]);
    got.metadata.labels = Some(labels.clone());
    got.metadata.annotations = Some(annotations.clone());
    let updated = prs
        .replace(pr, &PostParams::default(), &got)
        .await
        .expect("add labels to a discovered revision");
    assert_eq!(user_labels(&updated), labels);
    let got = prs.get(pr).await.expect("get");
    assert_eq!(user_labels(&got), labels);
    assert_eq!(got.metadata.annotations.as_ref(), Some(&annotations));
    let latest = prs
        .get("test-blueprints.basens.v4")
        .await
        .expect("latest basens");
    assert!(is_latest(&latest));
    assert!(user_labels(&latest).is_empty());
}

/// Upstream also checks that Kubernetes' garbage collector deletes a ConfigMap owned by a
/// package revision and a package revision owned by a deleted ConfigMap: there is no
/// kube-controller-manager here (see COMPATIBILITY.md). What can be checked is that
/// ownerReferences are accepted and persisted through every transition.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_package_revision_garbage_collection() {
    eprintln!(
        "note: garbage collection itself needs kube-controller-manager (not here); checking \
         that ownerReferences are stored"
    );
    let env = Env::start().await;
    let url = env.empty_repo("git");
    env.register(NS, "git", &url, json!({})).await;
    let prs = env.prs(NS);

    let owner = json!([{
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "owner-cm",
        "uid": "3a5c2b7e-8a38-4a4e-9a6a-6c0b5f0d2a11",
    }]);
    let mut body = new_revision("git", "owned-package", "ws", json!([]));
    body.metadata.owner_references =
        Some(serde_json::from_value(owner.clone()).expect("owner references"));
    prs.create(&PostParams::default(), &body)
        .await
        .expect("create an owned revision");
    for step in ["Draft", "Proposed", "Published"] {
        match step {
            "Proposed" => {
                propose(&prs, "git.owned-package.ws").await;
            }
            "Published" => {
                approve(&prs, "git.owned-package.ws").await;
            }
            _ => {}
        }
        let got = prs.get("git.owned-package.ws").await.expect("get");
        let refs = serde_json::to_value(&got.metadata.owner_references).expect("json");
        assert_eq!(refs, owner, "ownerReferences after {step}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_package_revision_field_selectors() {
    let env = Env::start().await;
    let Some(url) = env.blueprints() else {
        return;
    };
    env.register(NS, "test-blueprints", &url, json!({})).await;
    let prs = env.prs(NS);
    let draft = create(
        &prs,
        "test-blueprints",
        "fresh",
        "ws",
        json!([{"type": "init", "init": {}}]),
    )
    .await;
    let fields = |f: &str| ListParams::default().fields(f);

    assert_eq!(
        list_names(&prs, &fields("spec.packageName=basens")).await,
        [
            "test-blueprints.basens.main",
            "test-blueprints.basens.v1",
            "test-blueprints.basens.v2",
            "test-blueprints.basens.v3",
            "test-blueprints.basens.v4",
        ]
    );
    assert_eq!(
        list_names(&prs, &fields("spec.revision=2")).await,
        ["test-blueprints.basens.v2", "test-blueprints.update.v2"]
    );
    assert_eq!(
        list_names(&prs, &fields("spec.workspaceName=v1")).await,
        [
            "test-blueprints.basens.v1",
            "test-blueprints.bucket.v1",
            "test-blueprints.empty.v1",
            "test-blueprints.redis-bucket.v1",
            "test-blueprints.unready.v1",
            "test-blueprints.update.v1",
        ]
    );
    let published = list_names(&prs, &fields("spec.lifecycle=Published")).await;
    assert_eq!(published.len(), 16, "{published:?}");
    assert!(!published.contains(&name(&draft)));
    assert_eq!(
        list_names(&prs, &fields("spec.lifecycle=Draft")).await,
        [name(&draft)]
    );
    assert_eq!(
        list_names(
            &prs,
            &fields("spec.packageName=basens,spec.revision=3,spec.lifecycle=Published")
        )
        .await,
        ["test-blueprints.basens.v3"]
    );
    assert_eq!(
        list_names(&prs, &fields("spec.repository=test-blueprints"))
            .await
            .len(),
        17
    );
    assert!(
        list_names(&prs, &fields("spec.repository=nonexistent"))
            .await
            .is_empty()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_package_revision_label_selectors() {
    let env = Env::start().await;
    let Some(url) = env.blueprints() else {
        return;
    };
    env.register(NS, "test-blueprints", &url, json!({})).await;
    let prs = env.prs(NS);

    prs.patch(
        "test-blueprints.basens.v1",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"labels": {"kpt.dev/label": "foo"}}})),
    )
    .await
    .expect("label basens.v1");

    let labels = |l: &str| ListParams::default().labels(l);
    assert_eq!(
        list_names(&prs, &labels("kpt.dev/label=foo")).await,
        ["test-blueprints.basens.v1"]
    );
    assert!(
        list_names(&prs, &labels("kpt.dev/label=bar"))
            .await
            .is_empty()
    );
    assert!(
        list_names(&prs, &labels("kpt.dev/other=foo"))
            .await
            .is_empty()
    );
    assert_eq!(
        list_names(
            &prs,
            &labels("kpt.dev/latest-revision=true").fields("spec.packageName=basens")
        )
        .await,
        ["test-blueprints.basens.v4"]
    );
    assert_eq!(
        list_names(&prs, &labels("kpt.dev/latest-revision=true")).await,
        [
            "test-blueprints.basens.v4",
            "test-blueprints.bucket.v1",
            "test-blueprints.empty.v1",
            "test-blueprints.redis-bucket.v1",
            "test-blueprints.unready.v1",
            "test-blueprints.update.v2",
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_package_revision_finalizers() {
    let env = Env::start().await;
    let url = env.empty_repo("git");
    env.register(NS, "git", &url, json!({})).await;
    let prs = env.prs(NS);
    let pr = "git.finalizer-package.ws";

    let mut created = init(&prs, "git", "finalizer-package", "ws").await;
    created.metadata.finalizers = Some(vec!["foo.com/finalizer".into()]);
    let updated = prs
        .replace(pr, &PostParams::default(), &created)
        .await
        .expect("add a finalizer");
    assert_eq!(
        updated.metadata.finalizers.as_deref(),
        Some(&["foo.com/finalizer".to_owned()][..])
    );

    prs.delete(pr, &Default::default())
        .await
        .expect("delete with a finalizer");
    let terminating = prs.get(pr).await.expect("still there while finalized");
    assert!(
        terminating.metadata.deletion_timestamp.is_some(),
        "{:?}",
        terminating.metadata
    );
    assert_eq!(
        terminating.metadata.finalizers.as_deref(),
        Some(&["foo.com/finalizer".to_owned()][..])
    );

    prs.patch(
        pr,
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .expect("remove the finalizer");
    eventually(
        "revision deleted after its finalizer is removed",
        || async { is_gone(&prs, pr).await },
    )
    .await;
}
