//! An approval cut short between its push and the removal of the draft's record (a crash)
//! heals in the default mode (drafts only in the store): at the restart, at the next sync,
//! and when the approval is retried. Git is the truth for what is published.

use porch_core::lifecycle::{Endpoint, Lifecycle};
use porch_core::names::RepositoryName;
use porch_core::repository::{PublishContent, PublishRequest, Repository};
use porch_core::store::EventType;
use porch_git::{GitOptions, GitRepository, MirrorPool, RepoSpec};

use crate::common::{NS, World, alice, remote_refs};
use crate::create::{edit_req, publish_init};

/// `app` v1 published, `app/ws2` proposed, then ws2's tag pushed as an approval would,
/// without the engine knowing (the process "died" right after the push).
async fn pushed_behind_the_engine(w: &World) -> anyhow::Result<String> {
    let url = w.empty_remote("r.git")?;
    w.register("r", &url).await?;
    publish_init(&w.engine, "r", "app", "ws1").await?;
    w.engine
        .create(edit_req("r", "app", "ws2", "r.app.ws1"))
        .await?;
    w.engine
        .update_lifecycle(
            NS,
            "r.app.ws2",
            None,
            Lifecycle::Proposed,
            Endpoint::Update,
            alice(),
        )
        .await?;
    let (_, files) = w.engine.read_resources(NS, "r.app.ws2").await?;
    // The engine's own adapter would remember the push; the crashed process's is gone.
    let data = w.tmp.path().join("data-crashed");
    let repo = GitRepository::open(
        &MirrorPool::new(&data),
        &GitOptions::new(&data),
        RepoSpec::new(RepositoryName::new("r")?, &url),
    )?;
    let published = repo
        .publish(PublishRequest {
            package: "app".parse()?,
            workspace: "ws2".parse()?,
            content: PublishContent::Files { files, task: None },
            published_by: alice(),
        })
        .await?;
    assert_eq!(published.key.revision.get(), 2);
    assert_eq!(w.stored_drafts()?, 1, "the record outlived the push");
    Ok(url)
}

fn app_view(prs: &[porch_engine::PackageRevision]) -> Vec<String> {
    prs.iter()
        .map(|p| {
            format!(
                "{} {} {} latest={}",
                p.name(),
                p.lifecycle,
                p.key.revision,
                p.latest
            )
        })
        .collect()
}

const HEALED: [&str; 3] = [
    "r.app.main Published -1 latest=false",
    "r.app.ws1 Published 1 latest=false",
    "r.app.ws2 Published 2 latest=true",
];

#[tokio::test]
async fn a_restart_heals_an_approval_cut_short_without_mirroring() -> anyhow::Result<()> {
    let w = World::new()?;
    let url = pushed_behind_the_engine(&w).await?;
    let engine = w.restart("r", &url).await?;
    assert_eq!(app_view(&engine.list(&Default::default())), HEALED);
    assert_eq!(w.stored_drafts()?, 0);
    // Approving it again gets Porch's answer for a published revision (422), not a
    // conflict.
    let err = engine
        .update_lifecycle(
            NS,
            "r.app.ws2",
            None,
            Lifecycle::Published,
            Endpoint::Approval,
            alice(),
        )
        .await
        .expect_err("already published");
    assert_eq!(err.kind(), porch_core::ErrorKind::Invalid, "{err}");
    assert!(err.to_string().contains("Published lifecycle"), "{err}");
    Ok(())
}

#[tokio::test]
async fn a_sync_heals_an_approval_cut_short_and_reports_it() -> anyhow::Result<()> {
    let w = World::new()?;
    pushed_behind_the_engine(&w).await?;
    let mut events = w.engine.subscribe();
    w.engine.sync(NS, &RepositoryName::new("r")?).await?;
    assert_eq!(app_view(&w.list()), HEALED);
    assert_eq!(w.stored_drafts()?, 0);
    let mut seen = Vec::new();
    while let Ok(e) = events.try_recv() {
        seen.push((
            e.event_type,
            e.revision.name().as_str().to_owned(),
            e.revision.lifecycle,
            e.revision.latest,
        ));
    }
    assert!(
        seen.contains(&(
            EventType::Modified,
            "r.app.ws2".into(),
            Lifecycle::Published,
            true
        )),
        "the draft's object turns Published and latest: {seen:?}"
    );
    assert!(
        seen.contains(&(
            EventType::Modified,
            "r.app.ws1".into(),
            Lifecycle::Published,
            false
        )),
        "v1 loses the latest label: {seen:?}"
    );
    Ok(())
}

#[tokio::test]
async fn a_retried_approval_finishes_one_cut_short() -> anyhow::Result<()> {
    let w = World::new()?;
    pushed_behind_the_engine(&w).await?;
    // No sync in between: the index still has the proposed draft; git refuses the second
    // publish of the workspace, and the engine finishes the first one instead.
    let again = w
        .engine
        .update_lifecycle(
            NS,
            "r.app.ws2",
            None,
            Lifecycle::Published,
            Endpoint::Approval,
            alice(),
        )
        .await?;
    assert_eq!(
        (again.lifecycle, again.key.revision.get(), again.latest),
        (Lifecycle::Published, 2, true)
    );
    assert_eq!(app_view(&w.list()), HEALED);
    assert_eq!(w.stored_drafts()?, 0);
    let tags: Vec<String> = remote_refs(&w.remote_dir("r.git"))?
        .into_iter()
        .filter(|r| r.starts_with("refs/tags/"))
        .collect();
    assert_eq!(tags, vec!["refs/tags/app/v1", "refs/tags/app/v2"]);
    Ok(())
}
