//! Transitions: propose/approve publishes `<pkg>/v<N>`, concurrent approvals get distinct
//! numbers, illegal transitions are refused, deletion rules.

use std::collections::BTreeSet;

use porch_core::ErrorKind;
use porch_core::lifecycle::{Endpoint, Lifecycle};
use porch_core::store::EventType;

use crate::common::{NS, World, alice, init_req, remote_refs};
use crate::create::{edit_req, publish_init};

#[tokio::test]
async fn init_propose_approve_publishes_a_tag() -> anyhow::Result<()> {
    let w = World::new()?;
    let url = w.empty_remote("r.git")?;
    w.register("r", &url).await?;
    let mut events = w.engine.subscribe();
    let d = w.engine.create(init_req("r", "app", "ws1")).await?;
    let p = w
        .engine
        .update_lifecycle(
            NS,
            "r.app.ws1",
            Some(&d.resource_version),
            Lifecycle::Proposed,
            Endpoint::Update,
            alice(),
        )
        .await?;
    assert_eq!(p.lifecycle, Lifecycle::Proposed);
    assert_ne!(p.resource_version, d.resource_version);
    let published = w
        .engine
        .update_lifecycle(
            NS,
            "r.app.ws1",
            Some(&p.resource_version),
            Lifecycle::Published,
            Endpoint::Approval,
            alice(),
        )
        .await?;
    assert_eq!(
        (published.lifecycle, published.key.revision.get()),
        (Lifecycle::Published, 1)
    );
    assert!(published.latest);
    assert_eq!(published.published_by.as_deref(), Some("alice@example.com"));
    assert_eq!(published.key.workspace.as_str(), "ws1");

    let refs = remote_refs(&w.remote_dir("r.git"))?;
    assert!(refs.contains(&"refs/tags/app/v1".to_owned()), "{refs:?}");
    assert_eq!(
        w.stored_drafts()?,
        0,
        "the draft record is gone once published"
    );
    // The placeholder appeared; nothing else.
    let names: Vec<String> = w
        .list()
        .iter()
        .map(|p| format!("{} {}", p.name(), p.key.revision))
        .collect();
    assert_eq!(names, vec!["r.app.main -1", "r.app.ws1 1"]);

    let mut seen = Vec::new();
    while let Ok(e) = events.try_recv() {
        seen.push(format!(
            "{} {} {}",
            e.event_type.as_str(),
            e.revision.name(),
            e.revision.lifecycle
        ));
    }
    assert_eq!(seen[0], "ADDED r.app.ws1 Draft");
    assert_eq!(seen[1], "MODIFIED r.app.ws1 Proposed");
    assert!(
        seen.contains(&"MODIFIED r.app.ws1 Published".to_owned()),
        "{seen:?}"
    );
    assert!(
        seen.contains(&"ADDED r.app.main Published".to_owned()),
        "{seen:?}"
    );
    assert!(
        !seen
            .iter()
            .any(|s| s.starts_with(EventType::Deleted.as_str())),
        "{seen:?}"
    );
    Ok(())
}

#[tokio::test]
async fn concurrent_approvals_get_distinct_revisions() -> anyhow::Result<()> {
    let w = World::new()?;
    let url = w.empty_remote("r.git")?;
    w.register("r", &url).await?;
    // Two drafts of one package: copies of its first revision (a second `init` of an
    // existing package is refused, drafts included).
    let v1 = publish_init(&w.engine, "r", "app", "base").await?;
    for ws in ["a", "b"] {
        let d = w.engine.create(edit_req("r", "app", ws, &v1)).await?;
        w.engine
            .update_lifecycle(
                NS,
                d.name().as_str(),
                None,
                Lifecycle::Proposed,
                Endpoint::Update,
                alice(),
            )
            .await?;
    }
    let (ea, eb) = (w.engine.clone(), w.engine.clone());
    let (ra, rb) = tokio::join!(
        tokio::spawn(async move {
            ea.update_lifecycle(
                NS,
                "r.app.a",
                None,
                Lifecycle::Published,
                Endpoint::Approval,
                alice(),
            )
            .await
        }),
        tokio::spawn(async move {
            eb.update_lifecycle(
                NS,
                "r.app.b",
                None,
                Lifecycle::Published,
                Endpoint::Approval,
                alice(),
            )
            .await
        }),
    );
    let revs: BTreeSet<i64> = [ra??, rb??].iter().map(|p| p.key.revision.get()).collect();
    assert_eq!(revs, BTreeSet::from([2, 3]));
    let refs = remote_refs(&w.remote_dir("r.git"))?;
    assert!(
        refs.contains(&"refs/tags/app/v2".to_owned())
            && refs.contains(&"refs/tags/app/v3".to_owned()),
        "{refs:?}"
    );
    let latest: Vec<i64> = w
        .list()
        .iter()
        .filter(|p| p.latest)
        .map(|p| p.key.revision.get())
        .collect();
    assert_eq!(latest, vec![3]);
    Ok(())
}

#[tokio::test]
async fn illegal_transitions_are_refused() -> anyhow::Result<()> {
    let w = World::new()?;
    let url = w.empty_remote("r.git")?;
    w.register("r", &url).await?;
    let d = w.engine.create(init_req("r", "app", "ws")).await?;
    let e = &w.engine;
    let err = e
        .update_lifecycle(
            NS,
            "r.app.ws",
            None,
            Lifecycle::Published,
            Endpoint::Update,
            alice(),
        )
        .await
        .expect_err("draft to published");
    assert_eq!(err.kind(), ErrorKind::Invalid);
    let err = e
        .update_lifecycle(
            NS,
            "r.app.ws",
            None,
            Lifecycle::Published,
            Endpoint::Approval,
            alice(),
        )
        .await
        .expect_err("approve a draft");
    assert!(
        err.to_string()
            .contains("only Proposed packages can be approved"),
        "{err}"
    );
    let err = e
        .update_lifecycle(
            NS,
            "r.app.ws",
            Some("999999"),
            Lifecycle::Proposed,
            Endpoint::Update,
            alice(),
        )
        .await
        .expect_err("stale");
    assert_eq!(err.kind(), ErrorKind::Conflict);
    assert_eq!(
        e.get(NS, "r.app.ws")?,
        d,
        "refused transitions change nothing"
    );

    let name = publish_init(e, "r", "pub", "v").await?;
    let err = e
        .update_lifecycle(NS, &name, None, Lifecycle::Draft, Endpoint::Update, alice())
        .await
        .expect_err("published to draft");
    assert_eq!(err.kind(), ErrorKind::Invalid);
    let err = e
        .delete(NS, &name, None)
        .await
        .expect_err("delete published");
    assert_eq!(err.kind(), ErrorKind::Forbidden);

    // Propose deletion, undo, propose again, delete: the tag goes, the package stays on main.
    let dp = e
        .update_lifecycle(
            NS,
            &name,
            None,
            Lifecycle::DeletionProposed,
            Endpoint::Update,
            alice(),
        )
        .await?;
    assert_eq!(dp.lifecycle, Lifecycle::DeletionProposed);
    let back = e
        .update_lifecycle(
            NS,
            &name,
            None,
            Lifecycle::Published,
            Endpoint::Update,
            alice(),
        )
        .await?;
    assert_eq!(back.lifecycle, Lifecycle::Published);
    e.update_lifecycle(
        NS,
        &name,
        None,
        Lifecycle::DeletionProposed,
        Endpoint::Approval,
        alice(),
    )
    .await?;
    e.delete(NS, &name, None).await?;
    assert_eq!(
        e.get(NS, &name).expect_err("deleted").kind(),
        ErrorKind::NotFound
    );
    let refs = remote_refs(&w.remote_dir("r.git"))?;
    assert!(
        !refs.iter().any(|r| r.starts_with("refs/tags/pub/")),
        "{refs:?}"
    );
    assert!(e.get(NS, "r.pub.main").is_ok(), "the placeholder stays");

    // Drafts are deleted from the store.
    e.delete(NS, "r.app.ws", Some(&d.resource_version)).await?;
    assert_eq!(w.stored_drafts()?, 0);
    Ok(())
}

#[tokio::test]
async fn deletion_rules_upstream_references_placeholder_and_latest() -> anyhow::Result<()> {
    let w = World::new()?;
    let url = w.empty_remote("r.git")?;
    w.register("r", &url).await?;
    let e = &w.engine;
    let v1 = publish_init(e, "r", "base", "one").await?;
    assert_eq!(
        e.get(NS, &v1)?.tasks[0].task_type,
        "init",
        "published revisions show their task"
    );
    // Publish a clone of v1: v1 is now referenced as upstream.
    let clone = porch_engine::CreateRequest {
        tasks: vec![porch_core::revision::Task {
            task_type: "clone".into(),
            clone: Some(porch_core::revision::CloneTask {
                upstream: porch_core::revision::UpstreamPackage {
                    upstream_ref: Some(porch_core::revision::RevisionRef { name: v1.clone() }),
                    ..Default::default()
                },
                ..Default::default()
            }),
            ..Default::default()
        }],
        ..init_req("r", "down", "ws")
    };
    let d = e.create(clone).await?;
    crate::common::publish(e, d.name().as_str()).await?;
    e.update_lifecycle(
        NS,
        &v1,
        None,
        Lifecycle::DeletionProposed,
        Endpoint::Update,
        alice(),
    )
    .await?;
    let err = e.delete(NS, &v1, None).await.expect_err("referenced");
    assert_eq!(err.kind(), ErrorKind::Forbidden);
    assert!(
        err.to_string()
            .contains("referenced as upstream by: r.down.ws"),
        "{err}"
    );

    // Latest moves down when the latest revision is deleted; the placeholder never gets it.
    let two = e
        .create(porch_engine::CreateRequest {
            tasks: vec![porch_core::revision::Task {
                task_type: "edit".into(),
                edit: Some(porch_core::revision::EditTask {
                    source: porch_core::revision::RevisionRef { name: v1.clone() },
                }),
                ..Default::default()
            }],
            ..init_req("r", "base", "two")
        })
        .await?;
    let n2 = two.name().as_str().to_owned();
    e.update_lifecycle(
        NS,
        &n2,
        None,
        Lifecycle::Proposed,
        Endpoint::Update,
        alice(),
    )
    .await?;
    assert_eq!(
        e.update_lifecycle(
            NS,
            &n2,
            None,
            Lifecycle::Published,
            Endpoint::Approval,
            alice()
        )
        .await?
        .key
        .revision
        .get(),
        2
    );
    assert!(!e.get(NS, &v1)?.latest);
    e.update_lifecycle(
        NS,
        &n2,
        None,
        Lifecycle::DeletionProposed,
        Endpoint::Update,
        alice(),
    )
    .await?;
    e.delete(NS, &n2, None).await?;
    assert!(e.get(NS, &v1)?.latest, "v1 is the latest again");
    assert!(!e.get(NS, "r.base.main")?.latest);

    // The placeholder: propose deletion, delete, and the package leaves the branch.
    e.update_lifecycle(
        NS,
        "r.down.main",
        None,
        Lifecycle::DeletionProposed,
        Endpoint::Update,
        alice(),
    )
    .await?;
    e.delete(NS, "r.down.main", None).await?;
    assert_eq!(
        e.get(NS, "r.down.main").expect_err("gone").kind(),
        ErrorKind::NotFound
    );
    Ok(())
}

#[tokio::test]
async fn reject_returns_a_proposal_to_draft() -> anyhow::Result<()> {
    let w = World::new()?;
    let url = w.empty_remote("r.git")?;
    w.register("r", &url).await?;
    let e = &w.engine;
    e.create(init_req("r", "app", "ws")).await?;
    e.update_lifecycle(
        NS,
        "r.app.ws",
        None,
        Lifecycle::Proposed,
        Endpoint::Update,
        alice(),
    )
    .await?;
    let back = e
        .update_lifecycle(
            NS,
            "r.app.ws",
            None,
            Lifecycle::Draft,
            Endpoint::Approval,
            alice(),
        )
        .await?;
    assert_eq!(back.lifecycle, Lifecycle::Draft);
    // Proposed revisions are read-only; drafts take updates again.
    let (_, files) = e.read_resources(NS, "r.app.ws").await?;
    e.update_resources(NS, "r.app.ws", &back.resource_version, files)
        .await?;
    assert!(
        remote_refs(&w.remote_dir("r.git"))?
            .iter()
            .all(|r| !r.contains("tags"))
    );
    Ok(())
}
