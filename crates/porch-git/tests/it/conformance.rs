//! Discovery of repositories written by Go Porch (its `pkg/externalrepo/git/testdata` tarballs)
//! and of the e2e blueprint bundle, compared with what Go Porch lists.

use porch_core::ErrorKind;
use porch_core::lifecycle::Lifecycle;
use porch_core::names::{PackagePath, Revision};
use porch_core::repository::{ListFilter, Repository};
use porch_core::revision::PackageRevisionMeta;
use porch_testkit::{conformance, repos};

use crate::common::{Remote, describe, list, open, spec, summary};

/// Serves `<name>.tar` as a bare repo (main renamed to `branch`); `None` when data is absent.
fn serve_tar(remote: &Remote, name: &str, branch: &str) -> anyhow::Result<Option<String>> {
    let Some(tars) = conformance::git_repo_tars() else {
        return Ok(None);
    };
    let tar = tars
        .iter()
        .find(|t| t.file_stem().is_some_and(|s| s == name))
        .ok_or_else(|| anyhow::anyhow!("{name}.tar missing"))?;
    let dir = remote.repo_dir(&format!("{name}.git"));
    repos::bare_from_tar(tar, &dir)?;
    repos::rename_branch(&dir, "main", branch)?;
    Ok(Some(remote.server.url_for(&format!("{name}.git"))))
}

async fn listing(
    name: &str,
    repo_name: &str,
    branch: &str,
    directory: &str,
) -> anyhow::Result<Option<Vec<PackageRevisionMeta>>> {
    let remote = Remote::new()?;
    let Some(url) = serve_tar(&remote, name, branch)? else {
        return Ok(None);
    };
    let mut s = spec(repo_name, &url);
    s.branch = branch.into();
    s.directory = directory.into();
    let (_pool, repo) = open(&remote.data_dir("a"), s)?;
    repo.sync().await?;
    Ok(Some(list(&repo).await?))
}

fn lines(v: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = v.iter().map(|s| (*s).to_owned()).collect();
    v.sort();
    v
}

#[tokio::test]
async fn simple_repository_matches_go_porch() -> anyhow::Result<()> {
    // Go: TestListPackagesSimple, for each of the suite's branches.
    for branch in ["main", "feature", "nested/release"] {
        let Some(metas) = listing("simple-repository", "simple", branch, "/").await? else {
            return Ok(());
        };
        let want = lines(&[
            "basens 1 v1 Published",
            "basens 2 v2 Published",
            "empty 1 v1 Published",
            "istions 1 v1 Published",
            "istions 2 v2 Published",
            &format!("basens -1 {branch} Published"),
            &format!("empty -1 {branch} Published"),
            &format!("istions -1 {branch} Published"),
        ]);
        assert_eq!(summary(&metas), want, "branch {branch}");
        if branch == "main" {
            insta::assert_snapshot!("simple_repository", describe(&metas));
        }
    }
    Ok(())
}

#[tokio::test]
async fn drafts_repository_matches_go_porch() -> anyhow::Result<()> {
    // Go: TestListPackagesDrafts.
    let Some(metas) = listing("drafts-repository", "drafts", "main", "/").await? else {
        return Ok(());
    };
    let want = lines(&[
        "basens 1 v1 Published",
        "basens 2 v2 Published",
        "empty 1 v1 Published",
        "istions 1 v1 Published",
        "istions 2 v2 Published",
        "bucket 0 v1 Draft",
        "none 0 v1 Draft",
        "pkg-with-history 0 v1 Draft",
        "basens -1 main Published",
        "empty -1 main Published",
        "istions -1 main Published",
    ]);
    assert_eq!(summary(&metas), want);
    insta::assert_snapshot!("drafts_repository", describe(&metas));
    Ok(())
}

#[tokio::test]
async fn nested_repository_lists_every_tag_and_draft() -> anyhow::Result<()> {
    // Go: TestNested — every tag is a Published revision and every drafts/ branch a Draft.
    let Some(metas) = listing("nested-repository", "nested", "main", "/").await? else {
        return Ok(());
    };
    let got: Vec<String> = {
        let mut v: Vec<String> = metas
            .iter()
            .filter(|m| m.key.revision != Revision::PLACEHOLDER)
            .map(|m| match m.lifecycle {
                Lifecycle::Published => format!("{}/v{} Published", m.key.package, m.key.revision),
                lc => format!("{}/{} {lc}", m.key.package, m.key.workspace),
            })
            .collect();
        v.sort();
        v
    };
    let want = lines(&[
        "catalog/empty/v1 Published",
        "catalog/gcp/bucket/v1 Published",
        "catalog/namespace/basens/v1 Published",
        "catalog/namespace/basens/v2 Published",
        "catalog/namespace/basens/v3 Published",
        "catalog/namespace/istions/v1 Published",
        "catalog/namespace/istions/v2 Published",
        "catalog/namespace/istions/v3 Published",
        "sample/v1 Published",
        "sample/v2 Published",
        "catalog/gcp/bucket/v2 Draft",
        "catalog/gcp/cloud-sql/v1 Draft",
        "catalog/gcp/spanner/v1 Draft",
    ]);
    assert_eq!(got, want);
    insta::assert_snapshot!("nested_repository", describe(&metas));
    Ok(())
}

#[tokio::test]
async fn nested_repository_with_directories() -> anyhow::Result<()> {
    // Go: TestNestedDirectories (top-level packages of each registration).
    let cases: [(&str, &[&str]); 3] = [
        ("", &["sample/v1", "sample/v2", "sample/main"]),
        ("nonexistent", &[]),
        (
            "catalog/gcp",
            &[
                "cloud-sql/v1",
                "spanner/v1",
                "bucket/v2",
                "bucket/v1",
                "bucket/main",
            ],
        ),
    ];
    for (dir, want) in cases {
        let Some(metas) = listing("nested-repository", "directory", "main", dir).await? else {
            return Ok(());
        };
        let mut got: Vec<String> = metas
            .iter()
            .filter(|m| !m.key.package.as_str().contains('/'))
            .map(|m| format!("{}/{}", m.key.package, m.key.workspace))
            .collect();
        got.sort();
        let mut want: Vec<String> = want.iter().map(|s| (*s).to_owned()).collect();
        want.sort();
        assert_eq!(got, want, "directory {dir:?}");
    }
    Ok(())
}

#[tokio::test]
async fn publish_info_matches_go_porch() -> anyhow::Result<()> {
    // Go: TestAuthor.
    let Some(metas) = listing("publishinfo-repository", "directory", "main", "").await? else {
        return Ok(());
    };
    let find = |pkg: &str, rev: i64| {
        metas
            .iter()
            .find(|m| m.key.package.as_str() == pkg && m.key.revision.get() == rev)
            .cloned()
            .ok_or_else(|| anyhow::anyhow!("{pkg} {rev} missing"))
    };
    let draft = find("draft-pkg", 0)?;
    assert_eq!((draft.published_by, draft.publish_timestamp), (None, None));
    for rev in [1, -1] {
        let m = find("pkg-with-anno", rev)?;
        assert_eq!(
            m.published_by.as_deref(),
            Some("pkg-with-anno-author@example.com"),
            "revision {rev}"
        );
        assert_eq!(
            m.publish_timestamp.map(|t| t.to_rfc3339()).as_deref(),
            Some("2022-08-26T22:47:35Z")
        );
    }
    let m = find("pkg-without-anno", -1)?;
    assert_eq!((m.published_by, m.publish_timestamp), (None, None));
    insta::assert_snapshot!("publishinfo_repository", describe(&metas));
    Ok(())
}

#[tokio::test]
async fn manually_tagged_and_invalid_annotations() -> anyhow::Result<()> {
    // Go: TestDiscoverManuallyTaggedPackageWithTagMessage (an annotated tag pkg/v2).
    let Some(metas) = listing("manual-tagged-repository", "blueprint", "main", "").await? else {
        return Ok(());
    };
    assert_eq!(
        summary(&metas),
        lines(&[
            "pkg -1 main Published",
            "pkg 1 v1 Published",
            "pkg 2 v2 Published"
        ])
    );
    // Go: TestDiscoverWithBadKptAnnotationFromNestedRepository.
    let Some(metas) = listing(
        "nested-repository-with-invalid-kpt-annotation",
        "blueprint",
        "main",
        "blueprint",
    )
    .await?
    else {
        return Ok(());
    };
    let revs = |p: &str| {
        let mut v: Vec<i64> = metas
            .iter()
            .filter(|m| m.key.package.as_str() == p)
            .map(|m| m.key.revision.get())
            .collect();
        v.sort();
        v
    };
    assert_eq!(revs("bp1"), vec![-1, 1, 2, 3]);
    assert_eq!(revs("bp2"), vec![-1, 1, 2]);
    assert!(
        metas
            .iter()
            .all(|m| !m.key.package.as_str().contains("bp10")),
        "blueprint2 is outside the directory"
    );
    Ok(())
}

#[tokio::test]
async fn empty_and_trivial_repositories() -> anyhow::Result<()> {
    let remote = Remote::new()?;
    let Some(url) = serve_tar(&remote, "empty-repository", "main")? else {
        return Ok(());
    };
    // Go: TestOpenEmptyRepository — a missing branch is an error unless createBranch.
    let (_p, repo) = open(&remote.data_dir("a"), spec("empty", &url))?;
    let err = repo
        .sync()
        .await
        .expect_err("empty repository has no main branch");
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert!(!repo.status().ready);
    let mut s = spec("empty", &url);
    s.create_branch = true;
    let (_p2, repo) = open(&remote.data_dir("b"), s)?;
    repo.sync().await?;
    assert!(list(&repo).await?.is_empty());
    let refs = repos::list_refs(&remote.repo_dir("empty-repository.git"))?;
    assert_eq!(
        refs.iter().map(|(r, _)| r.as_str()).collect::<Vec<_>>(),
        vec!["refs/heads/main"]
    );
    let msg = repos::run(
        std::process::Command::new("git")
            .arg("-C")
            .arg(remote.repo_dir("empty-repository.git"))
            .args(["log", "-1", "--format=%s|%an|%ae"]),
    )?;
    assert_eq!(
        msg.trim(),
        "Initial commit: Creating main branch|Package Orchestration Service|porch@kpt.dev"
    );
    assert!(repo.status().ready);

    let Some(url) = serve_tar(&remote, "trivial-repository", "main")? else {
        return Ok(());
    };
    let (_p3, repo) = open(&remote.data_dir("c"), spec("trivial", &url))?;
    assert!(list(&repo).await?.is_empty());
    Ok(())
}

#[tokio::test]
async fn blueprints_bundle_matches_porch_e2e() -> anyhow::Result<()> {
    let Some(bundle) = conformance::blueprints_bundle() else {
        return Ok(());
    };
    let remote = Remote::new()?;
    repos::bare_from_bundle(&bundle, &remote.repo_dir("test-blueprints.git"))?;
    let url = remote.server.url_for("nephio/test-blueprints.git");
    std::fs::create_dir_all(remote.repo_dir("nephio"))?;
    std::fs::rename(
        remote.repo_dir("test-blueprints.git"),
        remote.repo_dir("nephio/test-blueprints.git"),
    )?;
    let (_p, repo) = open(&remote.data_dir("a"), spec("test-blueprints", &url))?;
    let metas = list(&repo).await?;
    let mut names: Vec<String> = metas
        .iter()
        .map(|m| format!("{} {} {}", m.key.name(), m.key.revision, m.lifecycle))
        .collect();
    names.sort();
    let want = lines(&[
        "test-blueprints.basens.main -1 Published",
        "test-blueprints.basens.v1 1 Published",
        "test-blueprints.basens.v2 2 Published",
        "test-blueprints.basens.v3 3 Published",
        "test-blueprints.basens.v4 4 Published",
        "test-blueprints.bucket.main -1 Published",
        "test-blueprints.bucket.v1 1 Published",
        "test-blueprints.empty.main -1 Published",
        "test-blueprints.empty.v1 1 Published",
        "test-blueprints.redis-bucket.main -1 Published",
        "test-blueprints.redis-bucket.v1 1 Published",
        "test-blueprints.unready.main -1 Published",
        "test-blueprints.unready.v1 1 Published",
        "test-blueprints.update.main -1 Published",
        "test-blueprints.update.v1 1 Published",
        "test-blueprints.update.v2 2 Published",
    ]);
    assert_eq!(names, want);
    // rpkg-clone golden: `rpkg get --name=empty --revision=1` prints test-blueprints.empty.v1.
    let empty = repo
        .list(ListFilter {
            package: Some(PackagePath::new("empty")?),
            revision: Some(Revision::from_raw(1)),
            ..Default::default()
        })
        .await?;
    assert_eq!(
        empty
            .iter()
            .map(|m| m.key.name().to_string())
            .collect::<Vec<_>>(),
        vec!["test-blueprints.empty.v1"]
    );
    let files = repo.read_files(empty[0].key.clone()).await?;
    assert!(files.contains_key("Kptfile"));
    assert_eq!(
        empty[0].self_lock.git.as_ref().map(|g| g.git_ref.as_str()),
        Some("empty/v1")
    );
    insta::assert_snapshot!("test_blueprints", describe(&metas));
    Ok(())
}
