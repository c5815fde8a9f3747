//! Resource updates: render through the pipeline, optimistic concurrency, render failures.

use std::collections::BTreeMap;

use porch_core::ErrorKind;
use porch_engine::{CreateRequest, EngineError, MetadataUpdate, PUSH_ON_RENDER_FAILURE};

use crate::common::{NS, World, init_req};

const PIPELINE: &str = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\npipeline:\n  mutators:\n  - image: ghcr.io/kptdev/krm-functions-catalog/set-namespace:v0.4.1\n    configMap:\n      namespace: prod\n";
const BROKEN: &str = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\npipeline:\n  mutators:\n  - image: ghcr.io/kptdev/krm-functions-catalog/no-such-function:v1\n";
const CM: &str =
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm # keep me\ndata:\n  k: v\n";

fn files(kptfile: &str) -> BTreeMap<String, Vec<u8>> {
    BTreeMap::from([
        ("Kptfile".to_owned(), kptfile.as_bytes().to_vec()),
        ("cm.yaml".to_owned(), CM.as_bytes().to_vec()),
    ])
}

#[tokio::test]
async fn update_renders_and_stale_updates_conflict() -> anyhow::Result<()> {
    let w = World::new()?;
    let url = w.empty_remote("r.git")?;
    w.register("r", &url).await?;
    let d = w.engine.create(init_req("r", "app", "ws")).await?;
    let up = w
        .engine
        .update_resources(NS, "r.app.ws", &d.resource_version, files(PIPELINE))
        .await?;
    assert!(up.render_status.error.is_empty(), "{:?}", up.render_status);
    assert_eq!(up.render_status.results.len(), 1);
    assert_ne!(up.revision.resource_version, d.resource_version);
    let (_, saved) = w.engine.read_resources(NS, "r.app.ws").await?;
    let cm = String::from_utf8(saved["cm.yaml"].clone())?;
    assert!(
        cm.contains("namespace: prod") && cm.contains("# keep me"),
        "{cm}"
    );
    assert!(
        !saved.contains_key("README.md"),
        "files absent from the update are deleted"
    );

    // The old resourceVersion is stale now.
    let err = w
        .engine
        .update_resources(NS, "r.app.ws", &d.resource_version, files(PIPELINE))
        .await
        .expect_err("stale");
    assert_eq!(err.kind(), ErrorKind::Conflict);
    assert!(
        err.to_string().contains("the object has been modified"),
        "{err}"
    );
    let err = w
        .engine
        .update_resources(NS, "r.app.ws", "", files(PIPELINE))
        .await
        .expect_err("no rv");
    assert_eq!(err.kind(), ErrorKind::Invalid);
    Ok(())
}

#[tokio::test]
async fn render_failure_saves_nothing_unless_asked() -> anyhow::Result<()> {
    let w = World::new()?;
    let url = w.empty_remote("r.git")?;
    w.register("r", &url).await?;
    let d = w.engine.create(init_req("r", "app", "ws")).await?;
    let (_, before) = w.engine.read_resources(NS, "r.app.ws").await?;
    let err = w
        .engine
        .update_resources(NS, "r.app.ws", &d.resource_version, files(BROKEN))
        .await
        .expect_err("render fails");
    match &err {
        EngineError::Render { pushed, status, .. } => {
            assert!(!pushed);
            assert!(!status.error.is_empty());
        }
        other => panic!("expected a render error, got {other:?}"),
    }
    assert!(err.to_string().contains("NOT pushed"), "{err}");
    let (after_pr, after) = w.engine.read_resources(NS, "r.app.ws").await?;
    assert_eq!(after, before);
    assert_eq!(after_pr.resource_version, d.resource_version);

    // With the annotation the failed result is kept and the status says why.
    let mut req = init_req("r", "app2", "push");
    req.annotations
        .insert(PUSH_ON_RENDER_FAILURE.into(), "true".into());
    let p = w.engine.create(CreateRequest { ..req }).await?;
    let up = w
        .engine
        .update_resources(NS, "r.app2.push", &p.resource_version, files(BROKEN))
        .await?;
    assert!(!up.render_status.error.is_empty());
    let (_, kept) = w.engine.read_resources(NS, "r.app2.push").await?;
    assert!(kept.contains_key("cm.yaml"));
    // A draft that does not render cannot be proposed.
    let err = w
        .engine
        .update_lifecycle(
            NS,
            "r.app2.push",
            None,
            porch_core::lifecycle::Lifecycle::Proposed,
            porch_engine::Endpoint::Update,
            crate::common::alice(),
        )
        .await
        .expect_err("render fails on propose");
    assert!(matches!(err, EngineError::Render { .. }), "{err:?}");
    assert_eq!(
        w.engine.get(NS, "r.app2.push")?.lifecycle,
        porch_core::lifecycle::Lifecycle::Draft
    );
    Ok(())
}

#[tokio::test]
async fn only_drafts_take_resource_updates() -> anyhow::Result<()> {
    let w = World::new()?;
    let url = w.empty_remote("r.git")?;
    w.register("r", &url).await?;
    let name = crate::create::publish_init(&w.engine, "r", "app", "ws").await?;
    let pr = w.engine.get(NS, &name)?;
    let err = w
        .engine
        .update_resources(NS, &name, &pr.resource_version, files(PIPELINE))
        .await
        .expect_err("published");
    assert_eq!(err.kind(), ErrorKind::Invalid);
    Ok(())
}

#[tokio::test]
async fn labels_and_annotations_of_drafts() -> anyhow::Result<()> {
    let w = World::new()?;
    let url = w.empty_remote("r.git")?;
    w.register("r", &url).await?;
    let d = w.engine.create(init_req("r", "app", "ws")).await?;
    let labels = BTreeMap::from([
        ("team".to_owned(), "blue".to_owned()),
        (
            porch_engine::LATEST_REVISION_LABEL.to_owned(),
            "true".to_owned(),
        ),
    ]);
    let annotations = BTreeMap::from([(PUSH_ON_RENDER_FAILURE.to_owned(), "true".to_owned())]);
    let update = |labels: BTreeMap<String, String>| MetadataUpdate {
        labels,
        annotations: annotations.clone(),
        ..MetadataUpdate::default()
    };
    let err = w
        .engine
        .update_metadata(NS, "r.app.ws", &d.resource_version, update(labels.clone()))
        .await
        .expect_err("the latest-revision label is porch's");
    assert_eq!(err.kind(), ErrorKind::Invalid);
    let mut labels = labels;
    labels.remove(porch_engine::LATEST_REVISION_LABEL);
    let u = w
        .engine
        .update_metadata(NS, "r.app.ws", &d.resource_version, update(labels.clone()))
        .await?;
    assert_eq!(
        u.labels,
        BTreeMap::from([("team".to_owned(), "blue".to_owned())])
    );
    assert_eq!(
        u.annotations
            .get(PUSH_ON_RENDER_FAILURE)
            .map(String::as_str),
        Some("true")
    );
    let (_, files) = w.engine.read_resources(NS, "r.app.ws").await?;
    assert!(files.contains_key("Kptfile"), "files are kept");
    let err = w
        .engine
        .update_metadata(
            NS,
            "r.app.ws",
            &d.resource_version,
            MetadataUpdate::default(),
        )
        .await
        .expect_err("stale");
    assert_eq!(err.kind(), ErrorKind::Conflict);
    Ok(())
}

#[tokio::test]
async fn an_update_heals_comments_of_the_previous_version() -> anyhow::Result<()> {
    let w = World::new()?;
    let url = w.empty_remote("r.git")?;
    w.register("r", &url).await?;
    let d = w.engine.create(init_req("r", "app", "ws")).await?;
    let (_, mut files) = w.engine.read_resources(NS, "r.app.ws").await?;
    files.insert(
        "cm.yaml".into(),
        b"# owned by team blue\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: v # the value\n"
            .to_vec(),
    );
    let u = w
        .engine
        .update_resources(NS, "r.app.ws", &d.resource_version, files.clone())
        .await?;
    // A client that drops comments (e.g. a JSON round trip) changes the value.
    files.insert(
        "cm.yaml".into(),
        b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: w\n".to_vec(),
    );
    w.engine
        .update_resources(NS, "r.app.ws", &u.revision.resource_version, files)
        .await?;
    let (_, files) = w.engine.read_resources(NS, "r.app.ws").await?;
    let cm = String::from_utf8_lossy(&files["cm.yaml"]).into_owned();
    assert!(cm.contains("# owned by team blue"), "{cm}");
    assert!(cm.contains("k: w # the value"), "{cm}");
    Ok(())
}
