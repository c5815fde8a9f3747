//! Package revisions through the real server over HTTPS with kube-rs, on a smart-HTTP git
//! remote written by this test: init, edit resources with render, propose, approve through
//! the approval subresource (the tag appears in the remote), selectors, packages, watch.

mod common;

use std::time::Duration;

use common::Server;
use common::porch::*;
use futures::{StreamExt, TryStreamExt};
use kube::api::{Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use serde_json::json;

const NS: &str = "default";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn init_edit_propose_approve_publishes_a_tag() {
    let s = Server::start();
    let root = s.dir.path().join("git");
    std::fs::create_dir_all(&root).expect("git root");
    empty_remote(&root, "blueprints");
    let git = git_server(&root);
    let client = s.client().await;
    register(
        &client,
        NS,
        "blueprints",
        &git.url_for("blueprints.git"),
        json!({}),
    )
    .await;

    let prs = revisions(&client, NS);
    let mut watch = prs
        .watch(&WatchParams::default(), "0")
        .await
        .expect("watch")
        .boxed();

    // Create with an init task: the name is derived from the spec.
    let created = prs
        .create(
            &PostParams::default(),
            &new_revision(
                "blueprints",
                "demo",
                "ws1",
                json!([{"type": "init", "init": {"description": "demo package"}}]),
            ),
        )
        .await
        .expect("create");
    assert_eq!(name(&created), "blueprints.demo.ws1");
    assert_eq!(spec(&created)["lifecycle"], "Draft");
    assert!(spec(&created).get("revision").is_none());

    // A duplicate workspace is refused and leaves the first alone.
    let dup = prs
        .create(
            &PostParams::default(),
            &new_revision("blueprints", "demo", "ws1", json!([])),
        )
        .await
        .expect_err("duplicate workspace");
    assert!(
        matches!(dup, kube::Error::Api(ref e) if e.code == 409),
        "{dup:?}"
    );

    // Edit the files: add a ConfigMap and a set-namespace mutator; the update renders.
    let prr_api = resources(&client, NS);
    let mut prr = prr_api
        .get("blueprints.demo.ws1")
        .await
        .expect("get resources");
    let files = prr.data["spec"]["resources"]
        .as_object_mut()
        .expect("resources map");
    let kptfile = files["Kptfile"].as_str().expect("Kptfile text").to_owned();
    files.insert(
        "Kptfile".into(),
        format!(
            "{kptfile}pipeline:\n  mutators:\n  - image: gcr.io/kpt-fn/set-namespace:v0.4.1\n    configMap:\n      namespace: team-a\n"
        )
        .into(),
    );
    files.insert(
        "cm.yaml".into(),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings # keep me\ndata:\n  a: b\n"
            .into(),
    );
    let updated = prr_api
        .replace("blueprints.demo.ws1", &PostParams::default(), &prr)
        .await
        .expect("update resources");
    let cm = updated.data["spec"]["resources"]["cm.yaml"]
        .as_str()
        .expect("cm.yaml");
    assert!(cm.contains("namespace: team-a"), "{cm}");
    assert!(cm.contains("# keep me"), "{cm}");
    assert_eq!(updated.data["status"]["renderStatus"]["error"], "");

    // A stale resourceVersion is a 409 with Porch's text.
    let stale = prr_api
        .replace("blueprints.demo.ws1", &PostParams::default(), &prr)
        .await
        .expect_err("stale resourceVersion");
    match stale {
        kube::Error::Api(e) => {
            assert_eq!(e.code, 409);
            assert!(
                e.message.contains("the object has been modified"),
                "{}",
                e.message
            );
        }
        other => panic!("unexpected {other:?}"),
    }

    // Propose with a merge patch on the main resource.
    let proposed = prs
        .patch(
            "blueprints.demo.ws1",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"lifecycle": "Proposed"}})),
        )
        .await
        .expect("propose");
    assert_eq!(spec(&proposed)["lifecycle"], "Proposed");

    // Publishing through the main resource is refused; through approval it works.
    let refused = prs
        .patch(
            "blueprints.demo.ws1",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"lifecycle": "Published"}})),
        )
        .await
        .expect_err("publish through the main resource");
    assert!(
        matches!(refused, kube::Error::Api(ref e) if e.code == 422),
        "{refused:?}"
    );

    let mut approve = proposed.clone();
    approve.data["spec"]["lifecycle"] = json!("Published");
    let published = prs
        .replace_subresource(
            "approval",
            "blueprints.demo.ws1",
            &PostParams::default(),
            &approve,
        )
        .await
        .expect("approve");
    assert_eq!(spec(&published)["lifecycle"], "Published");
    assert_eq!(spec(&published)["revision"], 1);
    assert_eq!(
        published
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("kpt.dev/latest-revision")),
        Some(&"true".to_owned())
    );
    let refs = remote_refs(&root.join("blueprints.git"));
    assert!(refs.contains(&"refs/tags/demo/v1".to_owned()), "{refs:?}");

    // Selectors: the published revision and the placeholder.
    let lp = kube::api::ListParams::default().fields("spec.revision=1");
    let one = prs.list(&lp).await.expect("list by revision");
    assert_eq!(one.items.len(), 1);
    let all = prs.list(&Default::default()).await.expect("list");
    let names: Vec<String> = all.items.iter().map(name).collect();
    assert!(
        names.contains(&"blueprints.demo.main".to_owned()),
        "{names:?}"
    );
    let latest = prs
        .list(&kube::api::ListParams::default().labels("kpt.dev/latest-revision=true"))
        .await
        .expect("list latest");
    assert_eq!(
        latest.items.iter().map(name).collect::<Vec<_>>(),
        ["blueprints.demo.ws1"]
    );

    // Packages.
    let pkg = packages(&client, NS)
        .get("blueprints.demo")
        .await
        .expect("package");
    assert_eq!(pkg.data["status"]["latestRevision"], 1);

    // The watch saw the draft appear and get published.
    let mut saw_added = false;
    let mut saw_published = false;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !(saw_added && saw_published) {
        let ev = tokio::time::timeout_at(deadline, watch.try_next())
            .await
            .expect("watch events in time")
            .expect("watch stream")
            .expect("watch open");
        match ev {
            WatchEvent::Added(o) if name(&o) == "blueprints.demo.ws1" => saw_added = true,
            WatchEvent::Modified(o)
                if name(&o) == "blueprints.demo.ws1" && spec(&o)["lifecycle"] == "Published" =>
            {
                saw_published = true
            }
            _ => {}
        }
    }

    // Deleting a published revision is forbidden.
    let forbidden = prs
        .delete("blueprints.demo.ws1", &Default::default())
        .await
        .expect_err("delete published");
    assert!(
        matches!(forbidden, kube::Error::Api(ref e) if e.code == 403),
        "{forbidden:?}"
    );
}
