//! Object metadata on every lifecycle (labels, annotations, finalizers, ownerReferences),
//! the Kptfile-backed spec fields (packageMetadata, readinessGates, conditions) and their
//! persistence across transitions, restarts and syncs.

use porch_core::ErrorKind;
use porch_core::lifecycle::{Endpoint, Lifecycle};
use porch_engine::{
    Condition, CreateRequest, LATEST_REVISION_LABEL, MetadataUpdate, OwnerReference,
    PackageMetadata, PackageRevision,
};

use crate::common::{NS, World, alice, init_req, map};

fn owner() -> OwnerReference {
    OwnerReference {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        name: "owner".into(),
        uid: "1234".into(),
        controller: Some(true),
        block_owner_deletion: None,
    }
}

/// The update that keeps everything of `pr` (what a client sends back after a GET).
fn same(pr: &PackageRevision) -> MetadataUpdate {
    MetadataUpdate {
        labels: pr.labels.clone(),
        annotations: pr.annotations.clone(),
        finalizers: pr.finalizers.clone(),
        owner_references: pr.owner_references.clone(),
        package_metadata: Some(pr.package_metadata.clone()),
        readiness_gates: Some(pr.readiness_gates.clone()),
        conditions: None,
    }
}

async fn transition(
    w: &World,
    name: &str,
    to: Lifecycle,
    endpoint: Endpoint,
) -> porch_engine::Result<PackageRevision> {
    w.engine
        .update_lifecycle(NS, name, None, to, endpoint, alice())
        .await
}

#[tokio::test]
async fn metadata_follows_a_revision_through_its_lifecycle_and_a_restart() -> anyhow::Result<()> {
    let w = World::new()?;
    let url = w.empty_remote("r.git")?;
    w.register("r", &url).await?;
    let d = w
        .engine
        .create(CreateRequest {
            labels: map(&[("team", "blue")]),
            annotations: map(&[("note", "n")]),
            package_metadata: Some(PackageMetadata {
                labels: map(&[("pm", "x")]),
                annotations: map(&[("pa", "y")]),
            }),
            readiness_gates: vec!["Ready".into()],
            ..init_req("r", "app", "ws1")
        })
        .await?;
    assert_eq!(d.labels, map(&[("team", "blue")]));
    assert_eq!(d.package_metadata.labels, map(&[("pm", "x")]));
    assert_eq!(d.readiness_gates, vec!["Ready".to_owned()]);
    assert!(!d.deployment);
    let (_, files) = w.engine.read_resources(NS, "r.app.ws1").await?;
    let kptfile = String::from_utf8_lossy(&files["Kptfile"]).into_owned();
    assert!(kptfile.contains("pm: x"), "{kptfile}");
    assert!(kptfile.contains("conditionType: Ready"), "{kptfile}");

    // Proposed: metadata stays; the content may not change; approval needs the gate.
    transition(&w, "r.app.ws1", Lifecycle::Proposed, Endpoint::Update).await?;
    let p = w.engine.get(NS, "r.app.ws1")?;
    assert_eq!(p.labels, d.labels);
    let ready = vec![Condition {
        condition_type: "Ready".into(),
        status: "True".into(),
        ..Condition::default()
    }];
    let err = w
        .engine
        .update_metadata(
            NS,
            "r.app.ws1",
            &p.resource_version,
            MetadataUpdate {
                conditions: Some(ready.clone()),
                ..same(&p)
            },
        )
        .await
        .expect_err("a proposal's Kptfile is read-only");
    assert_eq!(err.kind(), ErrorKind::Invalid);
    let err = transition(&w, "r.app.ws1", Lifecycle::Published, Endpoint::Approval)
        .await
        .expect_err("gate not met");
    assert_eq!(err.to_string(), "readiness conditions not met");

    // Back to Draft, satisfy the gate, publish.
    let d = transition(&w, "r.app.ws1", Lifecycle::Draft, Endpoint::Approval).await?;
    let d = w
        .engine
        .update_metadata(
            NS,
            "r.app.ws1",
            &d.resource_version,
            MetadataUpdate {
                conditions: Some(ready),
                ..same(&d)
            },
        )
        .await?;
    assert!(
        d.conditions
            .iter()
            .any(|c| c.condition_type == "Ready" && c.status == "True"),
        "{:?}",
        d.conditions
    );
    transition(&w, "r.app.ws1", Lifecycle::Proposed, Endpoint::Update).await?;
    let v1 = transition(&w, "r.app.ws1", Lifecycle::Published, Endpoint::Approval).await?;
    assert_eq!(v1.key.revision.get(), 1);
    assert_eq!(
        v1.labels,
        map(&[("team", "blue"), (LATEST_REVISION_LABEL, "true")])
    );
    assert_eq!(v1.annotations, map(&[("note", "n")]));
    assert_eq!(v1.package_metadata.labels, map(&[("pm", "x")]));
    assert_eq!(v1.readiness_gates, vec!["Ready".to_owned()]);

    // Published: metadata changes (with a new resourceVersion), the spec does not.
    let err = w
        .engine
        .update_metadata(
            NS,
            "r.app.ws1",
            &v1.resource_version,
            MetadataUpdate {
                package_metadata: Some(PackageMetadata::default()),
                ..same(&v1)
            },
        )
        .await
        .expect_err("published content is immutable");
    assert_eq!(err.kind(), ErrorKind::Invalid);
    let u = w
        .engine
        .update_metadata(
            NS,
            "r.app.ws1",
            &v1.resource_version,
            MetadataUpdate {
                labels: map(&[("team", "red"), (LATEST_REVISION_LABEL, "true")]),
                owner_references: vec![owner()],
                ..same(&v1)
            },
        )
        .await?;
    assert_ne!(u.resource_version, v1.resource_version);
    assert_eq!(
        u.labels,
        map(&[("team", "red"), (LATEST_REVISION_LABEL, "true")])
    );
    assert_eq!(u.owner_references, vec![owner()]);
    let err = w
        .engine
        .update_metadata(NS, "r.app.ws1", &v1.resource_version, same(&v1))
        .await
        .expect_err("stale");
    assert_eq!(err.kind(), ErrorKind::Conflict);

    // The placeholder has metadata of its own.
    let main = w.engine.get(NS, "r.app.main")?;
    assert!(main.labels.is_empty());
    w.engine
        .update_metadata(
            NS,
            "r.app.main",
            &main.resource_version,
            MetadataUpdate {
                labels: map(&[("where", "main")]),
                ..same(&main)
            },
        )
        .await?;

    // Propose-delete keeps it; a restart and a re-sync keep it.
    let dp = transition(
        &w,
        "r.app.ws1",
        Lifecycle::DeletionProposed,
        Endpoint::Update,
    )
    .await?;
    assert_eq!(dp.labels, u.labels);
    let engine2 = w.restart("r", &url).await?;
    let again = engine2.get(NS, "r.app.ws1")?;
    assert_eq!(again.labels, u.labels);
    assert_eq!(again.owner_references, vec![owner()]);
    assert_eq!(again.package_metadata.labels, map(&[("pm", "x")]));
    assert_eq!(again.readiness_gates, vec!["Ready".to_owned()]);
    assert_eq!(again.resource_version, dp.resource_version);
    engine2
        .sync(NS, &porch_core::names::RepositoryName::new("r")?)
        .await?;
    assert_eq!(
        engine2.get(NS, "r.app.main")?.labels,
        map(&[("where", "main")])
    );
    Ok(())
}

#[tokio::test]
async fn a_draft_update_replaces_the_kptfile_metadata_and_rerenders() -> anyhow::Result<()> {
    let w = World::new()?;
    let url = w.empty_remote("r.git")?;
    w.register("r", &url).await?;
    let d = w
        .engine
        .create(CreateRequest {
            package_metadata: Some(PackageMetadata {
                labels: map(&[("old", "1")]),
                ..PackageMetadata::default()
            }),
            ..init_req("r", "app", "ws")
        })
        .await?;
    let u = w
        .engine
        .update_metadata(
            NS,
            "r.app.ws",
            &d.resource_version,
            MetadataUpdate {
                package_metadata: Some(PackageMetadata {
                    labels: map(&[("new", "2")]),
                    ..PackageMetadata::default()
                }),
                readiness_gates: Some(vec!["Deployed".into()]),
                ..same(&d)
            },
        )
        .await?;
    assert_eq!(u.package_metadata.labels, map(&[("new", "2")]));
    assert_eq!(u.readiness_gates, vec!["Deployed".to_owned()]);
    assert!(u.labels.is_empty(), "object labels are separate");
    let (_, files) = w.engine.read_resources(NS, "r.app.ws").await?;
    let kptfile = String::from_utf8_lossy(&files["Kptfile"]).into_owned();
    assert!(!kptfile.contains("old:"), "{kptfile}");
    assert!(kptfile.contains("new: \"2\""), "{kptfile}");
    assert!(kptfile.contains("conditionType: Deployed"), "{kptfile}");
    // An update that changes nothing writes nothing.
    let n = w
        .engine
        .update_metadata(NS, "r.app.ws", &u.resource_version, same(&u))
        .await?;
    assert_eq!(n.resource_version, u.resource_version);
    Ok(())
}

#[tokio::test]
async fn clone_and_edit_do_not_inherit_object_labels() -> anyhow::Result<()> {
    let w = World::new()?;
    let url = w.empty_remote("r.git")?;
    w.register("r", &url).await?;
    let d = w
        .engine
        .create(CreateRequest {
            labels: map(&[("team", "blue")]),
            ..init_req("r", "app", "ws")
        })
        .await?;
    transition(&w, "r.app.ws", Lifecycle::Proposed, Endpoint::Update).await?;
    transition(&w, "r.app.ws", Lifecycle::Published, Endpoint::Approval).await?;
    assert_eq!(d.labels, map(&[("team", "blue")]));
    let edit = w
        .engine
        .create(CreateRequest {
            tasks: vec![porch_core::revision::Task {
                task_type: "edit".into(),
                edit: Some(porch_core::revision::EditTask {
                    source: porch_core::revision::RevisionRef {
                        name: "r.app.ws".into(),
                    },
                }),
                ..Default::default()
            }],
            ..init_req("r", "app", "ws2")
        })
        .await?;
    assert!(edit.labels.is_empty(), "{:?}", edit.labels);
    let clone = w
        .engine
        .create(CreateRequest {
            tasks: vec![porch_core::revision::Task {
                task_type: "clone".into(),
                clone: Some(porch_core::revision::CloneTask {
                    upstream: porch_core::revision::UpstreamPackage {
                        upstream_ref: Some(porch_core::revision::RevisionRef {
                            name: "r.app.ws".into(),
                        }),
                        ..Default::default()
                    },
                    ..Default::default()
                }),
                ..Default::default()
            }],
            ..init_req("r", "copy", "ws")
        })
        .await?;
    assert!(clone.labels.is_empty(), "{:?}", clone.labels);
    Ok(())
}
