//! Finalizers (spec §8.6): a delete waits for them with a deletionTimestamp; removing the
//! last one deletes for real. Try-locks (§7.2, §7.8): a concurrent request on the same
//! object or create key fails with Conflict at once.

use porch_core::ErrorKind;
use porch_core::lifecycle::{Endpoint, Lifecycle};
use porch_engine::{CreateRequest, MetadataUpdate, PackageRevision};

use crate::common::{NS, World, alice, drain, init_req};
use crate::create::publish_init;

fn without_finalizers(pr: &PackageRevision) -> MetadataUpdate {
    MetadataUpdate {
        labels: pr.labels.clone(),
        annotations: pr.annotations.clone(),
        owner_references: pr.owner_references.clone(),
        ..MetadataUpdate::default()
    }
}

#[tokio::test]
async fn delete_waits_for_finalizers_of_a_draft() -> anyhow::Result<()> {
    let w = World::new()?;
    let url = w.empty_remote("r.git")?;
    w.register("r", &url).await?;
    let d = w
        .engine
        .create(CreateRequest {
            finalizers: vec!["example.com/hold".into()],
            ..init_req("r", "app", "ws")
        })
        .await?;
    let mut events = w.engine.subscribe();
    let t = w.engine.delete(NS, "r.app.ws", None).await?;
    assert!(t.deletion_timestamp.is_some());
    assert_eq!(t.finalizers, vec!["example.com/hold".to_owned()]);
    assert_eq!(drain(&mut events), vec!["MODIFIED r.app.ws Draft"]);
    let still = w.engine.get(NS, "r.app.ws")?;
    assert_eq!(still.deletion_timestamp, t.deletion_timestamp);
    assert_ne!(still.resource_version, d.resource_version);
    // Deleting again changes nothing.
    let again = w.engine.delete(NS, "r.app.ws", None).await?;
    assert_eq!(again, still);
    assert!(drain(&mut events).is_empty());

    // Removing the finalizer performs the deletion.
    let last = w
        .engine
        .update_metadata(
            NS,
            "r.app.ws",
            &still.resource_version,
            without_finalizers(&still),
        )
        .await?;
    assert!(last.finalizers.is_empty());
    assert_eq!(drain(&mut events), vec!["DELETED r.app.ws Draft"]);
    assert_eq!(
        w.engine.get(NS, "r.app.ws").expect_err("gone").kind(),
        ErrorKind::NotFound
    );
    assert_eq!(w.stored_drafts()?, 0);
    // The name can be reused and starts with fresh metadata.
    let fresh = w.engine.create(init_req("r", "app", "ws")).await?;
    assert!(fresh.finalizers.is_empty() && fresh.deletion_timestamp.is_none());
    Ok(())
}

#[tokio::test]
async fn delete_waits_for_finalizers_of_a_published_revision() -> anyhow::Result<()> {
    let w = World::new()?;
    let url = w.empty_remote("r.git")?;
    w.register("r", &url).await?;
    publish_init(&w.engine, "r", "app", "v1ws").await?;
    let v1 = w.engine.get(NS, "r.app.v1ws")?;
    let v1 = w
        .engine
        .update_metadata(
            NS,
            "r.app.v1ws",
            &v1.resource_version,
            MetadataUpdate {
                finalizers: vec!["example.com/hold".into()],
                ..MetadataUpdate::default()
            },
        )
        .await?;
    assert_eq!(v1.finalizers, vec!["example.com/hold".to_owned()]);
    w.engine
        .update_lifecycle(
            NS,
            "r.app.v1ws",
            None,
            Lifecycle::DeletionProposed,
            Endpoint::Update,
            alice(),
        )
        .await?;
    let t = w.engine.delete(NS, "r.app.v1ws", None).await?;
    assert!(t.deletion_timestamp.is_some());
    assert!(
        crate::common::remote_refs(&w.remote_dir("r.git"))?.contains(&"refs/tags/app/v1".into())
    );
    w.engine
        .update_metadata(
            NS,
            "r.app.v1ws",
            &t.resource_version,
            without_finalizers(&t),
        )
        .await?;
    assert!(
        !crate::common::remote_refs(&w.remote_dir("r.git"))?.contains(&"refs/tags/app/v1".into())
    );
    assert_eq!(
        w.engine.get(NS, "r.app.v1ws").expect_err("gone").kind(),
        ErrorKind::NotFound
    );
    Ok(())
}

#[tokio::test]
async fn concurrent_requests_on_one_object_conflict() -> anyhow::Result<()> {
    let w = World::new()?;
    let url = w.empty_remote("r.git")?;
    w.register("r", &url).await?;
    // Polled in order: the first takes the key before it waits on the queue.
    let (a, b) = tokio::join!(
        w.engine.create(init_req("r", "app", "ws")),
        w.engine.create(init_req("r", "app", "ws")),
    );
    a?;
    let err = b.expect_err("in progress");
    assert_eq!(err.kind(), ErrorKind::Conflict);
    assert_eq!(
        err.to_string(),
        "another request is already in progress to create package revision with details namespace=default, repository=r, package=app, workspace=ws"
    );

    let d = w.engine.get(NS, "r.app.ws")?;
    let (a, b) = tokio::join!(
        w.engine.update_metadata(
            NS,
            "r.app.ws",
            &d.resource_version,
            MetadataUpdate::default()
        ),
        w.engine.delete(NS, "r.app.ws", None),
    );
    a?;
    let err = b.expect_err("in progress");
    assert_eq!(
        err.to_string(),
        "another request is already in progress on package revision \"default/r.app.ws\""
    );

    let (_, files) = w.engine.read_resources(NS, "r.app.ws").await?;
    let d = w.engine.get(NS, "r.app.ws")?;
    let (a, b) = tokio::join!(
        w.engine
            .update_resources(NS, "r.app.ws", &d.resource_version, files.clone()),
        w.engine
            .update_resources(NS, "r.app.ws", &d.resource_version, files.clone()),
    );
    a?;
    assert_eq!(
        b.expect_err("in progress").to_string(),
        "another request is already in progress on package revision resources \"default/r.app.ws\""
    );
    // Released afterwards.
    w.engine.delete(NS, "r.app.ws", None).await?;
    Ok(())
}
