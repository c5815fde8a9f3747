//! Writes by this crate read back identically after a fresh clone, in Go Porch's shapes.

use std::process::Command;

use porch_core::lifecycle::Lifecycle;
use porch_core::names::{PackagePath, Revision, WorkspaceName};
use porch_core::repository::{DraftWrite, ListFilter, PublishContent, PublishRequest, Repository};
use porch_core::revision::{Author, InitTask, PackageRevisionKey, Task};
use porch_testkit::repos;

use crate::common::{Remote, list, open, pkg_files, publish_req, repo_name, spec};

fn git(dir: &std::path::Path, args: &[&str]) -> anyhow::Result<String> {
    Ok(repos::run(
        Command::new("git").arg("-C").arg(dir).args(args),
    )?)
}

#[tokio::test]
async fn published_revision_is_rediscovered_after_fresh_clone() -> anyhow::Result<()> {
    let remote = Remote::new()?;
    let url = remote.empty_repo("rt.git")?;
    let (_pa, a) = open(&remote.data_dir("a"), spec("rt", &url))?;
    a.sync().await?;
    let published = a.publish(publish_req("network/upf", "ws1")).await?;
    assert_eq!(published.key.revision, Revision::from_raw(1));
    assert_eq!(published.key.workspace.as_str(), "ws1");
    assert_eq!(published.lifecycle, Lifecycle::Published);
    assert_eq!(published.published_by.as_deref(), Some("alice@example.com"));
    assert_eq!(published.key.name().as_str(), "rt.network.upf.ws1");
    let lock = published.self_lock.git.clone().unwrap_or_default();
    assert_eq!(
        (lock.directory.as_str(), lock.git_ref.as_str()),
        ("network/upf", "network/upf/v1")
    );

    // Shapes Go Porch writes: tag at the two-parent approval commit on main.
    let dir = remote.repo_dir("rt.git");
    let main = git(&dir, &["rev-parse", "refs/heads/main"])?;
    let tag = git(&dir, &["rev-parse", "refs/tags/network/upf/v1"])?;
    assert_eq!(main, tag);
    assert_eq!(main.trim(), published.commit);
    let approval = git(&dir, &["log", "-1", "--format=%B", "main"])?;
    assert_eq!(
        approval,
        "Approving package revision network/upf/1\n\nkpt:{\"package\":\"network/upf\",\"workspaceName\":\"ws1\",\"revision\":\"1\"}\n\n"
    );
    let parents = git(&dir, &["log", "-1", "--format=%P", "main"])?;
    assert_eq!(parents.split_whitespace().count(), 2);
    let draft = git(&dir, &["log", "-1", "--format=%B", "main^2"])?;
    assert!(draft.starts_with("Creating new empty revision\n\n\nkpt:{\"package\":\"network/upf\",\"workspaceName\":\"ws1\",\"revision\":\"0\",\"task\":{\"type\":\"init\""), "{draft}");
    let who = git(&dir, &["log", "-1", "--format=%an <%ae>|%cn <%ce>", "main"])?;
    assert_eq!(
        who.trim(),
        "alice <alice@example.com>|Package Orchestration Service <porch@kpt.dev>"
    );

    // A second process with its own data directory sees exactly the same.
    let (_pb, b) = open(&remote.data_dir("b"), spec("rt", &url))?;
    let from_a = list(&a).await?;
    let from_b = list(&b).await?;
    assert_eq!(from_a, from_b);
    let key = published.key.clone();
    assert_eq!(a.read_files(key.clone()).await?, pkg_files("upf", "ws1"));
    assert_eq!(b.read_files(key.clone()).await?, pkg_files("upf", "ws1"));
    let got = b.get(key).await?;
    assert_eq!(got.tasks.len(), 1);
    assert_eq!(got.tasks[0].task_type, "init");
    let placeholder = from_b
        .iter()
        .find(|m| m.key.revision == Revision::PLACEHOLDER)
        .ok_or_else(|| anyhow::anyhow!("no placeholder"))?;
    assert_eq!(placeholder.key.name().as_str(), "rt.network.upf.main");
    assert_eq!(
        placeholder.published_by.as_deref(),
        Some("alice@example.com")
    );

    // Revision numbers continue per package.
    let second = b.publish(publish_req("network/upf", "ws2")).await?;
    assert_eq!(second.key.revision, Revision::from_raw(2));
    let other = b.publish(publish_req("other", "ws1")).await?;
    assert_eq!(other.key.revision, Revision::from_raw(1));
    a.sync().await?;
    assert_eq!(list(&a).await?, list(&b).await?);
    Ok(())
}

#[tokio::test]
async fn mirrored_drafts_propose_and_publish() -> anyhow::Result<()> {
    let remote = Remote::new()?;
    let url = remote.empty_repo("drafts.git")?;
    let mut s = spec("dr", &url);
    s.directory = "/blueprints/".into();
    let (_p, repo) = open(&remote.data_dir("a"), s)?;
    repo.sync().await?;
    let author = Author {
        name: "bob".into(),
        email: "bob@example.com".into(),
    };
    let draft = DraftWrite {
        package: PackagePath::new("app")?,
        workspace: WorkspaceName::new("first")?,
        lifecycle: Lifecycle::Draft,
        files: pkg_files("app", "1"),
        task: Some(Task::init(InitTask::default())),
        author: author.clone(),
        expected_commit: None,
    };
    let d = repo.write_draft(draft.clone()).await?;
    assert_eq!(
        (d.lifecycle, d.key.revision),
        (Lifecycle::Draft, Revision::UNPUBLISHED)
    );
    let dir = remote.repo_dir("drafts.git");
    assert!(
        git(
            &dir,
            &["show-ref", "refs/heads/drafts/blueprints/app/first"]
        )
        .is_ok()
    );
    // Stale expectation loses.
    let stale = repo
        .write_draft(DraftWrite {
            expected_commit: None,
            ..draft.clone()
        })
        .await;
    assert_eq!(
        stale.map(|_| ()).map_err(|e| e.kind()),
        Err(porch_core::ErrorKind::Conflict)
    );
    // Update content, then propose (same content ⇒ same commit, branch moves).
    let d2 = repo
        .write_draft(DraftWrite {
            files: pkg_files("app", "2"),
            expected_commit: Some(d.commit.clone()),
            ..draft.clone()
        })
        .await?;
    let p = repo
        .write_draft(DraftWrite {
            lifecycle: Lifecycle::Proposed,
            files: pkg_files("app", "2"),
            expected_commit: Some(d2.commit.clone()),
            ..draft.clone()
        })
        .await?;
    assert_eq!(
        (p.lifecycle, p.commit.as_str()),
        (Lifecycle::Proposed, d2.commit.as_str())
    );
    let refs: Vec<String> = repos::list_refs(&dir)?
        .into_iter()
        .map(|(r, _)| r)
        .collect();
    assert_eq!(
        refs,
        vec![
            "refs/heads/main",
            "refs/heads/proposed/blueprints/app/first"
        ]
    );

    // Publishing from a branch head the caller has not seen is a conflict.
    let stale = repo
        .publish(PublishRequest {
            package: PackagePath::new("app")?,
            workspace: WorkspaceName::new("first")?,
            content: PublishContent::MirroredDraft {
                expected_commit: Some(d.commit.clone()),
            },
            published_by: author.clone(),
        })
        .await;
    assert_eq!(
        stale.map(|_| ()).map_err(|e| e.kind()),
        Err(porch_core::ErrorKind::Conflict)
    );
    // Writing what the branch already holds pushes nothing and keeps the commit.
    let again = repo
        .write_draft(DraftWrite {
            lifecycle: Lifecycle::Proposed,
            files: pkg_files("app", "2"),
            expected_commit: Some(p.commit.clone()),
            ..draft.clone()
        })
        .await?;
    assert_eq!(again.commit, p.commit);

    let published = repo
        .publish(PublishRequest {
            package: PackagePath::new("app")?,
            workspace: WorkspaceName::new("first")?,
            content: PublishContent::MirroredDraft {
                expected_commit: Some(p.commit.clone()),
            },
            published_by: author,
        })
        .await?;
    assert_eq!(published.key.revision, Revision::from_raw(1));
    let refs: Vec<String> = repos::list_refs(&dir)?
        .into_iter()
        .map(|(r, _)| r)
        .collect();
    assert_eq!(refs, vec!["refs/heads/main", "refs/tags/blueprints/app/v1"]);
    assert_eq!(
        repo.read_files(published.key.clone()).await?,
        pkg_files("app", "2")
    );
    let names: Vec<String> = list(&repo)
        .await?
        .iter()
        .map(|m| m.key.name().to_string())
        .collect();
    assert_eq!(names, vec!["dr.app.first", "dr.app.main"]);
    Ok(())
}

#[tokio::test]
async fn propose_delete_and_delete() -> anyhow::Result<()> {
    let remote = Remote::new()?;
    let url = remote.empty_repo("del.git")?;
    let (_p, repo) = open(&remote.data_dir("a"), spec("del", &url))?;
    repo.sync().await?;
    let v1 = repo.publish(publish_req("pkg", "one")).await?;
    repo.publish(publish_req("pkg", "two")).await?;
    let dir = remote.repo_dir("del.git");

    let dp = repo.set_deletion_proposed(v1.key.clone(), true).await?;
    assert_eq!(dp.lifecycle, Lifecycle::DeletionProposed);
    assert!(git(&dir, &["show-ref", "refs/heads/deletionProposed/pkg/v1"]).is_ok());
    let undone = repo.set_deletion_proposed(v1.key.clone(), false).await?;
    assert_eq!(undone.lifecycle, Lifecycle::Published);
    repo.set_deletion_proposed(v1.key.clone(), true).await?;
    repo.delete(v1.key.clone(), Some(v1.commit.clone())).await?;
    let refs: Vec<String> = repos::list_refs(&dir)?
        .into_iter()
        .map(|(r, _)| r)
        .collect();
    assert_eq!(refs, vec!["refs/heads/main", "refs/tags/pkg/v2"]);

    // The placeholder: propose-delete, then delete removes the package from main.
    let main_key = PackageRevisionKey {
        repository: repo_name("del"),
        package: PackagePath::new("pkg")?,
        workspace: WorkspaceName::discovered("main")?,
        revision: Revision::PLACEHOLDER,
    };
    repo.set_deletion_proposed(main_key.clone(), true).await?;
    assert!(git(&dir, &["show-ref", "refs/heads/deletionProposed/pkg/main"]).is_ok());
    repo.delete(main_key, None).await?;
    assert_eq!(
        git(&dir, &["log", "-1", "--format=%s", "main"])?.trim(),
        "Delete pkg"
    );
    assert!(git(&dir, &["ls-tree", "main", "pkg"])?.trim().is_empty());
    let left: Vec<String> = repo
        .list(ListFilter::default())
        .await?
        .iter()
        .map(|m| m.key.name().to_string())
        .collect();
    assert_eq!(left, vec!["del.pkg.two"]);
    Ok(())
}

#[tokio::test]
async fn file_url_remote_works_too() -> anyhow::Result<()> {
    let remote = Remote::new()?;
    remote.empty_repo("local.git")?;
    let url = format!("file://{}", remote.repo_dir("local.git").display());
    let mut s = spec("local", &url);
    s.auth = porch_git::GitAuth::None;
    let (_p, repo) = open(&remote.data_dir("a"), s)?;
    let m = repo.publish(publish_req("pkg", "ws")).await?;
    assert_eq!(m.key.revision, Revision::from_raw(1));
    assert!(repo.mirror_path().join("HEAD").is_file());
    Ok(())
}

#[tokio::test]
async fn registrations_of_one_url_share_a_mirror() -> anyhow::Result<()> {
    let remote = Remote::new()?;
    let url = remote.empty_repo("shared.git")?;
    let data = remote.data_dir("a");
    let opts = porch_git::GitOptions::new(&data);
    let pool = porch_git::MirrorPool::new(&data);
    let mut s1 = spec("team-a", &url);
    s1.directory = "a".into();
    let mut s2 = spec("team-b", &url);
    s2.directory = "b".into();
    let a = porch_git::GitRepository::open(&pool, &opts, s1)?;
    let b = porch_git::GitRepository::open(&pool, &opts, s2)?;
    assert_eq!(a.mirror_path(), b.mirror_path());
    a.publish(publish_req("app", "ws")).await?;
    b.sync().await?;
    let la: Vec<String> = list(&a)
        .await?
        .iter()
        .map(|m| m.key.name().to_string())
        .collect();
    let lb: Vec<String> = list(&b)
        .await?
        .iter()
        .map(|m| m.key.name().to_string())
        .collect();
    assert_eq!(la, vec!["team-a.app.main", "team-a.app.ws"]);
    assert!(lb.is_empty(), "team-b's directory has no packages: {lb:?}");
    let refs: Vec<String> = repos::list_refs(&remote.repo_dir("shared.git"))?
        .into_iter()
        .map(|(r, _)| r)
        .collect();
    assert_eq!(refs, vec!["refs/heads/main", "refs/tags/a/app/v1"]);
    Ok(())
}

#[tokio::test]
async fn bearer_token_and_wrong_credentials() -> anyhow::Result<()> {
    let tmp = tempfile::tempdir()?;
    let srv = tmp.path().join("srv");
    let repo = repos::init_bare(&srv.join("tok.git"), "main")?;
    repos::commit_files(
        &repo,
        "main",
        &repos::files(&[("README.md", "x\n")]),
        "init",
    )?;
    let server = porch_testkit::GitServer::start_bearer(&srv, "s3cr3t")?;
    let url = server.url_for("tok.git");
    let mut s = spec("tok", &url);
    s.auth = porch_git::GitAuth::Bearer {
        token: "s3cr3t".into(),
    };
    let (_p, ok) = open(&tmp.path().join("a"), s.clone())?;
    assert_eq!(
        ok.publish(publish_req("pkg", "ws")).await?.key.revision,
        Revision::from_raw(1)
    );
    s.auth = porch_git::GitAuth::Bearer {
        token: "wrong".into(),
    };
    let (_q, bad) = open(&tmp.path().join("b"), s)?;
    let err = bad.sync().await.expect_err("wrong token");
    assert_eq!(err.kind(), porch_core::ErrorKind::Unavailable, "{err}");
    assert!(!bad.status().ready);
    assert!(
        !format!("{err}").contains("wrong"),
        "credentials must not leak into errors"
    );
    Ok(())
}
