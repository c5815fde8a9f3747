//! Faults: the remote goes away mid-push, loses the answer, hangs, or the writer is killed.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use porch_core::ErrorKind;
use porch_core::names::Revision;
use porch_core::repository::Repository;
use porch_git::GitOptions;
use porch_testkit::{Fault, repos};

use crate::common::{PASS, Remote, USER, list, open, open_with, publish_req, spec, summary};

#[tokio::test]
async fn remote_gone_mid_push_changes_nothing() -> anyhow::Result<()> {
    let remote = Remote::new()?;
    let url = remote.empty_repo("drop.git")?;
    let (_p, repo) = open(&remote.data_dir("a"), spec("drop", &url))?;
    repo.sync().await?;
    let before = repos::list_refs(&remote.repo_dir("drop.git"))?;
    let mirror_before = repos::list_refs(repo.mirror_path())?;
    remote.server.set_fault(Fault::DropReceivePack);
    let err = repo
        .publish(publish_req("pkg", "ws"))
        .await
        .expect_err("push cannot succeed");
    assert_eq!(err.kind(), ErrorKind::Unavailable, "{err}");
    assert_eq!(repos::list_refs(&remote.repo_dir("drop.git"))?, before);
    assert_eq!(
        repos::list_refs(repo.mirror_path())?,
        mirror_before,
        "a failed push must not move local refs"
    );
    assert!(list(&repo).await?.is_empty());
    remote.server.set_fault(Fault::None);
    let m = repo.publish(publish_req("pkg", "ws")).await?;
    assert_eq!(m.key.revision, Revision::from_raw(1));
    Ok(())
}

#[tokio::test]
async fn lost_push_answer_is_recovered_by_sync() -> anyhow::Result<()> {
    let remote = Remote::new()?;
    let url = remote.empty_repo("lost.git")?;
    let (_p, repo) = open(&remote.data_dir("a"), spec("lost", &url))?;
    repo.sync().await?;
    remote.server.set_fault(Fault::LoseReceivePackResponse);
    let err = repo
        .publish(publish_req("pkg", "ws"))
        .await
        .expect_err("client sees a failure");
    assert_eq!(err.kind(), ErrorKind::Unavailable, "{err}");
    remote.server.set_fault(Fault::None);
    // The remote applied it: after a sync the revision is there, nothing is lost...
    repo.sync().await?;
    assert_eq!(
        summary(&list(&repo).await?),
        vec!["pkg -1 main Published", "pkg 1 ws Published"]
    );
    // ...and publishing the same workspace again cannot create a second number.
    let again = repo
        .publish(publish_req("pkg", "ws"))
        .await
        .expect_err("already published");
    assert_eq!(again.kind(), ErrorKind::Conflict);
    Ok(())
}

#[tokio::test]
async fn unreachable_remote_marks_only_that_repository_not_ready() -> anyhow::Result<()> {
    let mut down = Remote::new()?;
    let down_url = down.empty_repo("down.git")?;
    let up = Remote::new()?;
    let up_url = up.empty_repo("up.git")?;
    let mut opts = GitOptions::new(down.data_dir("a"));
    opts.network_timeout = Duration::from_secs(2);
    let (_p1, bad) = open_with(opts, spec("down", &down_url))?;
    let (_p2, good) = open(&up.data_dir("a"), spec("up", &up_url))?;
    bad.sync().await?;
    good.sync().await?;

    // A hanging remote: its sync times out while the other repository keeps working.
    down.server.set_fault(Fault::Hang);
    let hung = tokio::spawn({
        let bad = std::sync::Arc::clone(&bad);
        async move { bad.sync().await }
    });
    good.publish(publish_req("pkg", "ws")).await?;
    good.sync().await?;
    assert!(good.status().ready);
    let err = hung.await?.expect_err("hanging remote must time out");
    assert_eq!(err.kind(), ErrorKind::Unavailable);
    assert!(!bad.status().ready);
    assert!(
        bad.status().message.contains("timed out"),
        "{}",
        bad.status().message
    );

    // A stopped server: Unavailable, the last good listing still served; restart heals.
    down.server.set_fault(Fault::None);
    down.server.stop();
    assert_eq!(
        bad.sync().await.expect_err("server stopped").kind(),
        ErrorKind::Unavailable
    );
    assert!(list(&bad).await?.is_empty());
    down.server.restart()?;
    bad.sync().await?;
    assert!(bad.status().ready);
    Ok(())
}

/// The `publish_loop` example next to this test binary, built on demand: `cargo test`
/// builds examples but `cargo nextest run` does not, and a missing binary must not turn
/// this test into a silent pass.
fn publish_loop_binary() -> anyhow::Result<PathBuf> {
    // target/<profile>/deps/it-<hash> → target/<profile>/examples/publish_loop
    let exe = std::env::current_exe()?;
    let profile_dir = exe
        .parent()
        .and_then(|d| d.parent())
        .ok_or_else(|| anyhow::anyhow!("unexpected test binary path {}", exe.display()))?;
    let bin = profile_dir.join("examples").join("publish_loop");
    if !bin.is_file() {
        let target_dir = profile_dir
            .parent()
            .ok_or_else(|| anyhow::anyhow!("no target dir above {}", profile_dir.display()))?;
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
        let status = Command::new(cargo)
            .args([
                "build",
                "-q",
                "-p",
                "porch-git",
                "--example",
                "publish_loop",
            ])
            .env("CARGO_TARGET_DIR", target_dir)
            .status()?;
        anyhow::ensure!(status.success(), "building the publish_loop example failed");
    }
    anyhow::ensure!(bin.is_file(), "{} was not built", bin.display());
    Ok(bin)
}

#[tokio::test]
async fn writer_killed_mid_publish_loses_nothing() -> anyhow::Result<()> {
    let bin = publish_loop_binary()?;
    let remote = Remote::new()?;
    let url = remote.empty_repo("kill.git")?;
    let data = remote.data_dir("writer");
    let mut printed = Vec::new();
    for round in 0..3 {
        let mut child = Command::new(&bin)
            .arg(&data)
            .arg(&url)
            .args([USER, PASS, "1000"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| anyhow::anyhow!("no stdout"))?;
        let mut lines = BufReader::new(stdout).lines();
        // Let it publish a few, then kill it in the middle of the next one.
        for _ in 0..(3 + round) {
            match lines.next() {
                Some(l) => printed.push(l?),
                None => {
                    let mut err = String::new();
                    if let Some(mut e) = child.stderr.take() {
                        std::io::Read::read_to_string(&mut e, &mut err)?;
                    }
                    anyhow::bail!("publish_loop exited early in round {round}: {err}")
                }
            }
        }
        std::thread::sleep(Duration::from_millis(15 * round));
        child.kill()?;
        child.wait()?;
        // Lines already written before the kill count as confirmed too.
        for l in lines.map_while(Result::ok) {
            printed.push(l);
        }
    }
    // Let an orphaned `git push` of the killed writer finish before comparing.
    std::thread::sleep(Duration::from_millis(500));
    // Restart on the same data directory: the mirror reopens (stale locks removed) and
    // converges to the remote.
    let (_p, restarted) = open(&data, spec("loop", &url))?;
    restarted.sync().await?;
    let (_q, fresh) = open(&remote.data_dir("fresh"), spec("loop", &url))?;
    let (after, truth) = (list(&restarted).await?, list(&fresh).await?);
    assert_eq!(after, truth, "restarted mirror differs from a fresh clone");
    let names: Vec<String> = truth
        .iter()
        .map(|m| format!("published {} {}", m.key.name(), m.key.revision))
        .collect();
    for p in printed.iter().filter(|p| p.starts_with("published ")) {
        assert!(
            names.contains(p),
            "{p} was reported published but is not in the remote"
        );
    }
    // Tags are unique per package and numbered without reuse.
    let tags: Vec<String> = repos::list_refs(&remote.repo_dir("kill.git"))?
        .into_iter()
        .map(|(r, _)| r)
        .filter(|r| r.starts_with("refs/tags/"))
        .collect();
    let published: Vec<_> = truth
        .iter()
        .filter(|m| m.key.revision.is_published_number())
        .collect();
    assert_eq!(tags.len(), published.len());
    // The writer keeps going after the restart.
    restarted
        .publish(publish_req("after-restart", "ws"))
        .await?;
    Ok(())
}
