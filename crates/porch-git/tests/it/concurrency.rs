//! Concurrent writers on one remote: compare-and-swap, no lost or duplicated revisions.

use std::collections::BTreeSet;

use porch_core::ErrorKind;
use porch_core::names::Revision;
use porch_core::repository::Repository;
use porch_git::GitOptions;
use porch_testkit::repos;

use crate::common::{Remote, list, open, open_with, publish_req, spec, summary};

#[tokio::test]
async fn same_workspace_one_wins_other_conflicts() -> anyhow::Result<()> {
    let remote = Remote::new()?;
    let url = remote.empty_repo("race.git")?;
    // Two writers with separate data directories, as two server processes.
    let (_pa, a) = open(&remote.data_dir("a"), spec("race", &url))?;
    let (_pb, b) = open(&remote.data_dir("b"), spec("race", &url))?;
    a.sync().await?;
    b.sync().await?;
    let (ra, rb) = tokio::join!(
        a.publish(publish_req("pkg", "ws")),
        b.publish(publish_req("pkg", "ws"))
    );
    let kinds = [
        ra.as_ref().err().map(|e| e.kind()),
        rb.as_ref().err().map(|e| e.kind()),
    ];
    assert!(
        kinds.contains(&None) && kinds.contains(&Some(ErrorKind::Conflict)),
        "exactly one winner and one Conflict, got {kinds:?}"
    );
    a.sync().await?;
    b.sync().await?;
    let (la, lb) = (list(&a).await?, list(&b).await?);
    assert_eq!(la, lb);
    assert_eq!(
        summary(&la),
        vec!["pkg -1 main Published", "pkg 1 ws Published"]
    );
    Ok(())
}

#[tokio::test]
async fn without_retries_a_moved_branch_is_a_conflict() -> anyhow::Result<()> {
    let remote = Remote::new()?;
    let url = remote.empty_repo("noretry.git")?;
    let mut opts = GitOptions::new(remote.data_dir("a"));
    opts.publish_retries = 0;
    let (_pa, a) = open_with(opts, spec("nr", &url))?;
    let (_pb, b) = open(&remote.data_dir("b"), spec("nr", &url))?;
    a.sync().await?;
    b.publish(publish_req("other", "ws")).await?;
    // `a` still believes the old head: the lease on main fails and nothing is overwritten.
    let err = a
        .publish(publish_req("pkg", "ws"))
        .await
        .expect_err("stale head must not win");
    assert_eq!(err.kind(), ErrorKind::Conflict);
    let dir = remote.repo_dir("noretry.git");
    let refs: Vec<String> = repos::list_refs(&dir)?
        .into_iter()
        .map(|(r, _)| r)
        .collect();
    assert_eq!(refs, vec!["refs/heads/main", "refs/tags/other/v1"]);
    // After a sync the same publish goes through on top of b's commit.
    a.sync().await?;
    let m = a.publish(publish_req("pkg", "ws")).await?;
    assert_eq!(m.key.revision, Revision::from_raw(1));
    Ok(())
}

#[tokio::test]
async fn many_writers_never_reuse_a_revision_number() -> anyhow::Result<()> {
    let remote = Remote::new()?;
    let url = remote.empty_repo("many.git")?;
    let mut writers = Vec::new();
    for i in 0..3 {
        let mut opts = GitOptions::new(remote.data_dir(&format!("w{i}")));
        opts.publish_retries = 10;
        writers.push(open_with(opts, spec("many", &url))?);
    }
    for (_, w) in &writers {
        w.sync().await?;
    }
    // Each writer publishes 4 distinct workspaces of the same package, all at once.
    let mut tasks = Vec::new();
    for (i, (_, w)) in writers.iter().enumerate() {
        for j in 0..4 {
            let w = std::sync::Arc::clone(w);
            tasks.push(tokio::spawn(async move {
                w.publish(publish_req("pkg", &format!("w{i}-{j}"))).await
            }));
        }
    }
    let mut numbers = Vec::new();
    let mut conflicts = 0;
    for t in tasks {
        match t.await? {
            Ok(m) => numbers.push(m.key.revision.get()),
            Err(e) if e.kind() == ErrorKind::Conflict => conflicts += 1,
            Err(e) => return Err(e.into()),
        }
    }
    let unique: BTreeSet<i64> = numbers.iter().copied().collect();
    assert_eq!(
        unique.len(),
        numbers.len(),
        "a revision number was handed out twice: {numbers:?}"
    );
    // Every success is a tag in the remote, numbered 1..=n without gaps.
    let tags: Vec<String> = repos::list_refs(&remote.repo_dir("many.git"))?
        .into_iter()
        .map(|(r, _)| r)
        .filter(|r| r.starts_with("refs/tags/"))
        .collect();
    assert_eq!(tags.len(), numbers.len());
    assert_eq!(unique, (1..=numbers.len() as i64).collect::<BTreeSet<_>>());
    assert_eq!(numbers.len() + conflicts, 12);
    // After syncing, every writer sees the same state.
    let mut seen = Vec::new();
    for (_, w) in &writers {
        w.sync().await?;
        seen.push(list(w).await?);
    }
    assert!(seen.windows(2).all(|p| p[0] == p[1]));
    Ok(())
}
