//! The in-process smart-HTTP client against the real `git http-backend` fixture: request
//! counts, credentials, server-side rejection, and broken answers.

use std::os::unix::fs::PermissionsExt as _;

use porch_core::ErrorKind;
use porch_core::names::Revision;
use porch_core::repository::Repository;
use porch_git::GitAuth;
use porch_testkit::{Fault, GitServer, repos};

use crate::common::{Remote, list, open, publish_req, spec, summary};

#[tokio::test]
async fn sync_and_publish_cost_one_request_each() -> anyhow::Result<()> {
    let remote = Remote::new()?;
    let url = remote.empty_repo("count.git")?;
    let (_p, repo) = open(&remote.data_dir("a"), spec("count", &url))?;
    let (_q, other) = open(&remote.data_dir("b"), spec("count", &url))?;
    repo.sync().await?;
    other.sync().await?;
    let requests = |before: usize| remote.server.request_count() - before;

    // No change: one GET of the ref advertisement.
    let n = remote.server.request_count();
    assert!(repo.sync().await?.is_empty());
    assert_eq!(requests(n), 1);

    // The first push reads receive-pack's capabilities; later pushes are one POST.
    let n = remote.server.request_count();
    repo.publish(publish_req("a", "ws")).await?;
    assert_eq!(requests(n), 2);
    let n = remote.server.request_count();
    repo.publish(publish_req("b", "ws")).await?;
    assert_eq!(requests(n), 1);

    // A change: the advertisement and one upload-pack POST.
    let n = remote.server.request_count();
    let report = other.sync().await?;
    assert_eq!(requests(n), 2);
    assert_eq!(report.added.len(), 4, "{report:?}");
    assert_eq!(list(&other).await?, list(&repo).await?);
    Ok(())
}

#[tokio::test]
async fn wrong_credentials_are_unavailable_with_the_reason() -> anyhow::Result<()> {
    let remote = Remote::new()?;
    let url = remote.empty_repo("auth.git")?;
    // The first sync clones with the CLI: do it with good credentials, then register the
    // same data directory again with a wrong password (a rotated secret).
    {
        let (_pool, good) = open(&remote.data_dir("a"), spec("auth", &url))?;
        good.sync().await?;
    }
    let mut s = spec("auth", &url);
    s.auth = GitAuth::Basic {
        username: "nephio".into(),
        password: "wrong".into(),
    };
    let (_p, repo) = open(&remote.data_dir("a"), s)?;
    let err = repo.sync().await.expect_err("wrong password");
    assert_eq!(err.kind(), ErrorKind::Unavailable, "{err}");
    assert!(
        err.to_string().contains("authentication failed (HTTP 401)"),
        "{err}"
    );
    assert!(!repo.status().ready);
    let err = repo
        .publish(publish_req("pkg", "ws"))
        .await
        .expect_err("wrong password");
    assert_eq!(err.kind(), ErrorKind::Unavailable, "{err}");
    assert!(repos::list_refs(&remote.repo_dir("auth.git"))?.len() == 1);
    Ok(())
}

#[tokio::test]
async fn bearer_token_is_sent_and_checked() -> anyhow::Result<()> {
    let tmp = tempfile::tempdir()?;
    let srv = tmp.path().join("srv");
    let bare = repos::init_bare(&srv.join("b.git"), "main")?;
    repos::commit_files(
        &bare,
        "main",
        &repos::files(&[("README.md", "x\n")]),
        "init",
    )?;
    let server = GitServer::start_bearer(&srv, "t0ken")?;
    let url = server.url_for("b.git");
    let mut s = spec("bearer", &url);
    s.auth = GitAuth::Bearer {
        token: "t0ken".into(),
    };
    {
        let (_pool, repo) = open(&tmp.path().join("data"), s.clone())?;
        repo.sync().await?;
        repo.publish(publish_req("pkg", "ws")).await?;
    }
    // Same data directory, stale token: the ref check itself is refused.
    s.auth = GitAuth::Bearer {
        token: "expired".into(),
    };
    let (_q, stale) = open(&tmp.path().join("data"), s)?;
    let err = stale.sync().await.expect_err("bad token");
    assert_eq!(err.kind(), ErrorKind::Unavailable);
    assert!(err.to_string().contains("HTTP 401"), "{err}");
    Ok(())
}

#[tokio::test]
async fn anonymous_push_to_a_public_remote_is_refused() -> anyhow::Result<()> {
    let tmp = tempfile::tempdir()?;
    let srv = tmp.path().join("srv");
    let bare = repos::init_bare(&srv.join("pub.git"), "main")?;
    repos::commit_files(
        &bare,
        "main",
        &repos::files(&[("README.md", "x\n")]),
        "init",
    )?;
    let server = GitServer::start_public_read(&srv, ("nephio", "secret"))?;
    let mut s = spec("pub", &server.url_for("pub.git"));
    s.auth = GitAuth::None;
    let (_p, repo) = open(&tmp.path().join("data"), s)?;
    repo.sync().await?;
    let before = repos::list_refs(repo.mirror_path())?;
    let err = repo
        .publish(publish_req("pkg", "ws"))
        .await
        .expect_err("anonymous push");
    assert_eq!(err.kind(), ErrorKind::Unavailable, "{err}");
    assert!(err.to_string().contains("authentication failed"), "{err}");
    assert_eq!(repos::list_refs(repo.mirror_path())?, before);
    assert_eq!(repos::list_refs(&srv.join("pub.git"))?.len(), 1);
    Ok(())
}

#[tokio::test]
async fn a_push_the_server_rejects_changes_nothing() -> anyhow::Result<()> {
    let remote = Remote::new()?;
    let url = remote.empty_repo("hook.git")?;
    let (_p, repo) = open(&remote.data_dir("a"), spec("hook", &url))?;
    repo.sync().await?;
    let hook = remote
        .repo_dir("hook.git")
        .join("hooks")
        .join("pre-receive");
    std::fs::create_dir_all(hook.parent().expect("hooks dir"))?;
    std::fs::write(
        &hook,
        "#!/bin/sh\necho 'main is protected by policy' >&2\nexit 1\n",
    )?;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755))?;
    let remote_before = repos::list_refs(&remote.repo_dir("hook.git"))?;
    let mirror_before = repos::list_refs(repo.mirror_path())?;

    let err = repo
        .publish(publish_req("pkg", "ws"))
        .await
        .expect_err("hook declines");
    assert_eq!(err.kind(), ErrorKind::Internal, "{err}");
    let msg = err.to_string();
    assert!(msg.contains("pre-receive hook declined"), "{msg}");
    assert!(msg.contains("main is protected by policy"), "{msg}");
    assert_eq!(
        repos::list_refs(&remote.repo_dir("hook.git"))?,
        remote_before
    );
    assert_eq!(repos::list_refs(repo.mirror_path())?, mirror_before);
    assert!(list(&repo).await?.is_empty());

    std::fs::remove_file(&hook)?;
    let m = repo.publish(publish_req("pkg", "ws")).await?;
    assert_eq!(m.key.revision, Revision::from_raw(1));
    Ok(())
}

/// A broken answer to a fetch: a clear error, no ref moved, the next sync heals.
async fn broken_fetch_answer(fault: Fault, expect: &str) -> anyhow::Result<()> {
    let remote = Remote::new()?;
    let url = remote.empty_repo("broken.git")?;
    let (_p, repo) = open(&remote.data_dir("a"), spec("broken", &url))?;
    let (_q, other) = open(&remote.data_dir("b"), spec("broken", &url))?;
    repo.sync().await?;
    other.publish(publish_req("pkg", "ws")).await?;
    let mirror_before = repos::list_refs(repo.mirror_path())?;

    remote.server.set_fault(fault);
    let err = repo.sync().await.expect_err("broken answer");
    assert_eq!(err.kind(), ErrorKind::Unavailable, "{err}");
    assert!(err.to_string().contains(expect), "{err}");
    assert_eq!(repos::list_refs(repo.mirror_path())?, mirror_before);

    remote.server.set_fault(Fault::None);
    repo.sync().await?;
    assert_eq!(
        summary(&list(&repo).await?),
        vec!["pkg -1 main Published", "pkg 1 ws Published"]
    );
    Ok(())
}

/// A broken answer to a push the server applied: a clear error, the mirror unchanged, and
/// a sync finds the revision (like a lost answer).
async fn broken_push_answer(fault: Fault, expect: &str) -> anyhow::Result<()> {
    let remote = Remote::new()?;
    let url = remote.empty_repo("brokenpush.git")?;
    let (_p, repo) = open(&remote.data_dir("a"), spec("brokenpush", &url))?;
    repo.sync().await?;
    repo.publish(publish_req("first", "ws")).await?;
    let mirror_before = repos::list_refs(repo.mirror_path())?;

    remote.server.set_fault(fault);
    let err = repo
        .publish(publish_req("pkg", "ws"))
        .await
        .expect_err("broken answer");
    assert_eq!(err.kind(), ErrorKind::Unavailable, "{err}");
    assert!(err.to_string().contains(expect), "{err}");
    assert_eq!(repos::list_refs(repo.mirror_path())?, mirror_before);

    remote.server.set_fault(Fault::None);
    repo.sync().await?;
    assert!(
        summary(&list(&repo).await?).contains(&"pkg 1 ws Published".to_owned()),
        "the server applied the push"
    );
    Ok(())
}

#[tokio::test]
async fn truncated_fetch_answer_is_a_clear_error() -> anyhow::Result<()> {
    broken_fetch_answer(Fault::TruncateResponse, "truncated answer").await
}

#[tokio::test]
async fn garbled_fetch_answer_is_a_clear_error() -> anyhow::Result<()> {
    broken_fetch_answer(
        Fault::GarbleResponse,
        "protocol error: invalid pkt-line length",
    )
    .await
}

#[tokio::test]
async fn truncated_push_answer_is_a_clear_error() -> anyhow::Result<()> {
    broken_push_answer(Fault::TruncateResponse, "truncated answer").await
}

#[tokio::test]
async fn garbled_push_answer_is_a_clear_error() -> anyhow::Result<()> {
    broken_push_answer(
        Fault::GarbleResponse,
        "protocol error: invalid pkt-line length",
    )
    .await
}
