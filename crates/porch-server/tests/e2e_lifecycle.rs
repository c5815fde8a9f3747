//! Upstream API e2e scenarios of `test/e2e/api/rpkg_lifecycle_test.go` (porch-api.md §18.1),
//! against the real server, a kube-rs client and a smart-HTTP git remote with basic auth.

mod common;

use common::porch::*;
use kube::api::ListParams;
use serde_json::json;

const NS: &str = "default";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_basic_lifecycle_propose_approve() {
    let env = Env::start().await;
    let url = env.empty_repo("git");
    env.register(NS, "git", &url, json!({})).await;
    let prs = env.prs(NS);

    let draft = init(&prs, "git", "lifecycle-package", "ws").await;
    assert_eq!(name(&draft), "git.lifecycle-package.ws");
    assert_eq!(spec(&draft)["lifecycle"], "Draft");

    let proposed = propose(&prs, "git.lifecycle-package.ws").await;
    assert_eq!(spec(&proposed)["lifecycle"], "Proposed");
    assert!(spec(&proposed).get("revision").is_none());

    let published = approve(&prs, "git.lifecycle-package.ws").await;
    assert_eq!(spec(&published)["lifecycle"], "Published");
    assert_eq!(spec(&published)["revision"], 1);
    assert!(is_latest(&published));

    let refs = remote_refs(&env.bare("git"));
    assert!(
        refs.contains(&"refs/tags/lifecycle-package/v1".to_owned()),
        "{refs:?}"
    );
    assert!(
        !refs
            .iter()
            .any(|r| r.contains("drafts/") || r.contains("proposed/")),
        "no draft or proposed branch is left: {refs:?}"
    );
    // The placeholder revision appears for the published package.
    let got = prs
        .get("git.lifecycle-package.main")
        .await
        .expect("placeholder");
    assert_eq!(spec(&got)["revision"], -1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_basic_lifecycle_delete_draft() {
    let env = Env::start().await;
    let url = env.empty_repo("git");
    env.register(NS, "git", &url, json!({})).await;
    let prs = env.prs(NS);

    init(&prs, "git", "delete-draft", "ws").await;
    prs.delete("git.delete-draft.ws", &Default::default())
        .await
        .expect("delete draft");
    assert!(is_gone(&prs, "git.delete-draft.ws").await);
    assert!(list_names(&prs, &ListParams::default()).await.is_empty());
    assert!(refs_under(&env.bare("git"), "refs/heads/drafts/").is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_basic_lifecycle_delete_proposed() {
    let env = Env::start().await;
    let url = env.empty_repo("git");
    env.register(NS, "git", &url, json!({})).await;
    let prs = env.prs(NS);

    init(&prs, "git", "delete-proposed", "ws").await;
    propose(&prs, "git.delete-proposed.ws").await;
    prs.delete("git.delete-proposed.ws", &Default::default())
        .await
        .expect("delete proposed");
    assert!(is_gone(&prs, "git.delete-proposed.ws").await);
    assert!(list_names(&prs, &ListParams::default()).await.is_empty());
    assert!(refs_under(&env.bare("git"), "refs/heads/proposed/").is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_basic_lifecycle_delete_final() {
    let env = Env::start().await;
    let url = env.empty_repo("git");
    env.register(NS, "git", &url, json!({})).await;
    let prs = env.prs(NS);
    let pr = "git.delete-final.ws";

    init_published(&prs, "git", "delete-final", "ws").await;
    let (code, msg) = api_err(prs.delete(pr, &Default::default()).await);
    assert_eq!(code, 403, "{msg}");
    assert!(
        msg.contains("must be proposed for deletion"),
        "unexpected message: {msg}"
    );
    let still = prs.get(pr).await.expect("published revision remains");
    assert_eq!(spec(&still)["lifecycle"], "Published");

    let dp = set_approval(&prs, pr, "DeletionProposed")
        .await
        .expect("propose deletion through approval");
    assert_eq!(spec(&dp)["lifecycle"], "DeletionProposed");
    assert!(
        remote_refs(&env.bare("git"))
            .contains(&"refs/heads/deletionProposed/delete-final/v1".to_owned())
    );
    prs.delete(pr, &Default::default())
        .await
        .expect("delete after DeletionProposed");
    assert!(is_gone(&prs, pr).await);
    let refs = remote_refs(&env.bare("git"));
    assert!(
        !refs.iter().any(|r| r.contains("delete-final/v1")),
        "tag and deletionProposed branch are removed: {refs:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_propose_delete_and_undo() {
    let env = Env::start().await;
    let url = env.empty_repo("git");
    env.register(NS, "git", &url, json!({})).await;
    let prs = env.prs(NS);
    init_published(&prs, "git", "test-package", "ws").await;

    let all = list_names(&prs, &ListParams::default()).await;
    assert_eq!(all, ["git.test-package.main", "git.test-package.ws"]);
    for pr in &all {
        let got = prs.get(pr).await.expect("get");
        let ws = spec(&got)["workspaceName"]
            .as_str()
            .expect("workspace")
            .to_owned();
        let branch = if ws == "main" {
            "refs/heads/deletionProposed/test-package/main".to_owned()
        } else {
            "refs/heads/deletionProposed/test-package/v1".to_owned()
        };

        set_lifecycle(&prs, pr, "DeletionProposed")
            .await
            .unwrap_or_else(|e| panic!("propose-delete {pr}: {e:?}"));
        assert!(remote_refs(&env.bare("git")).contains(&branch), "{pr}");

        // Undo through the approval subresource: the revision is Published again and can no
        // longer be deleted.
        let undone = set_approval(&prs, pr, "Published")
            .await
            .unwrap_or_else(|e| panic!("undo {pr}: {e:?}"));
        assert_eq!(spec(&undone)["lifecycle"], "Published");
        assert!(!remote_refs(&env.bare("git")).contains(&branch), "{pr}");
        let (code, _) = api_err(prs.delete(pr, &Default::default()).await);
        assert_eq!(code, 403, "{pr}");

        delete_published(&prs, pr).await;
        assert!(is_gone(&prs, pr).await, "{pr}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_delete_and_recreate() {
    let env = Env::start().await;
    let url = env.empty_repo("git");
    env.register(NS, "git", &url, json!({})).await;
    let prs = env.prs(NS);
    init_published(&prs, "git", "test-package", "ws").await;

    delete_published(&prs, "git.test-package.ws").await;
    delete_published(&prs, "git.test-package.main").await;
    eventually("package gone", || async {
        list_names(&prs, &ListParams::default()).await.is_empty()
    })
    .await;
    let main_tree = git_ls_tree(&env.bare("git"), "main");
    assert!(
        !main_tree.iter().any(|p| p.starts_with("test-package/")),
        "{main_tree:?}"
    );

    let again = init(&prs, "git", "test-package", "ws").await;
    let tasks = spec(&again)["tasks"].as_array().expect("tasks").clone();
    assert_eq!(tasks.len(), 1, "{tasks:?}");
    assert_eq!(tasks[0]["type"], "init");
    let again = prs.get("git.test-package.ws").await.expect("get recreated");
    assert_eq!(
        spec(&again)["tasks"].as_array().map(Vec::len),
        Some(1),
        "{again:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_delete_from_main() {
    let env = Env::start().await;
    let url = env.empty_repo("git");
    env.register(NS, "git", &url, json!({})).await;
    let prs = env.prs(NS);
    init_published(&prs, "git", "first-package", "ws").await;
    init_published(&prs, "git", "second-package", "ws").await;

    let tree = git_ls_tree(&env.bare("git"), "main");
    assert!(tree.iter().any(|p| p.starts_with("first-package/")));
    assert!(tree.iter().any(|p| p.starts_with("second-package/")));

    for pkg in ["first-package", "second-package"] {
        delete_published(&prs, &format!("git.{pkg}.main")).await;
    }
    let tree = git_ls_tree(&env.bare("git"), "main");
    assert!(
        !tree
            .iter()
            .any(|p| p.starts_with("first-package/") || p.starts_with("second-package/")),
        "packages removed from main: {tree:?}"
    );
    // The numbered revisions stay until they are deleted themselves.
    assert_eq!(
        list_names(&prs, &ListParams::default()).await,
        ["git.first-package.ws", "git.second-package.ws"]
    );
    for pkg in ["first-package", "second-package"] {
        delete_published(&prs, &format!("git.{pkg}.ws")).await;
    }
    assert!(list_names(&prs, &ListParams::default()).await.is_empty());
    assert!(refs_under(&env.bare("git"), "refs/tags/").is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_latest_version_on_delete() {
    let env = Env::start().await;
    let url = env.empty_repo("git");
    env.register(NS, "git", &url, json!({})).await;
    let prs = env.prs(NS);

    let v1 = init_published(&prs, "git", "latest-test", "v1").await;
    assert!(is_latest(&v1));
    create(
        &prs,
        "git",
        "latest-test",
        "v2",
        edit_task("git.latest-test.v1"),
    )
    .await;
    let v2 = publish(&prs, "git.latest-test.v2").await;
    assert_eq!(spec(&v2)["revision"], 2);
    assert!(is_latest(&v2));
    assert!(!is_latest(
        &prs.get("git.latest-test.v1").await.expect("v1")
    ));
    assert!(!is_latest(
        &prs.get("git.latest-test.main").await.expect("main")
    ));

    delete_published(&prs, "git.latest-test.v2").await;
    eventually("v1 is latest again", || async {
        prs.get("git.latest-test.v1")
            .await
            .map(|o| is_latest(&o))
            .unwrap_or(false)
    })
    .await;
    assert!(!is_latest(
        &prs.get("git.latest-test.main").await.expect("main")
    ));

    delete_published(&prs, "git.latest-test.v1").await;
    let main = prs.get("git.latest-test.main").await.expect("main");
    assert!(!is_latest(&main), "the placeholder never gets the label");
    let latest = list_names(
        &prs,
        &ListParams::default().labels("kpt.dev/latest-revision=true"),
    )
    .await;
    assert!(latest.is_empty(), "{latest:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_subfolder_package_revision_incrementation() {
    let env = Env::start().await;
    // A repository at the root, one with a directory, one on a branch Porch creates.
    let url = env.empty_repo("git");
    env.register(NS, "git", &url, json!({})).await;
    let dir_url = env.empty_repo("dir-repo");
    env.register(
        NS,
        "dir-repo",
        &dir_url,
        json!({"git": {"directory": "/subfolder"}}),
    )
    .await;
    let branch_url = env.empty_repo("branch-repo");
    env.register(
        NS,
        "branch-repo",
        &branch_url,
        json!({"git": {"branch": "new-branch", "createBranch": true}}),
    )
    .await;
    assert!(
        remote_refs(&env.bare("branch-repo")).contains(&"refs/heads/new-branch".to_owned()),
        "createBranch makes the branch"
    );
    let prs = env.prs(NS);

    for (repo, pkg, dotted, tag_prefix) in [
        (
            "git",
            "nested/path/pkg",
            "nested.path.pkg",
            "nested/path/pkg",
        ),
        ("dir-repo", "pkg", "pkg", "subfolder/pkg"),
        ("dir-repo", "deep/pkg", "deep.pkg", "subfolder/deep/pkg"),
        ("branch-repo", "pkg", "pkg", "pkg"),
    ] {
        let v1 = init_published(&prs, repo, pkg, "ws1").await;
        assert_eq!(name(&v1), format!("{repo}.{dotted}.ws1"));
        assert_eq!(spec(&v1)["revision"], 1, "{repo} {pkg}");
        create(
            &prs,
            repo,
            pkg,
            "ws2",
            edit_task(&format!("{repo}.{dotted}.ws1")),
        )
        .await;
        let v2 = publish(&prs, &format!("{repo}.{dotted}.ws2")).await;
        assert_eq!(spec(&v2)["revision"], 2, "{repo} {pkg}");
        let refs = remote_refs(&env.bare(repo));
        for n in [1, 2] {
            let tag = format!("refs/tags/{tag_prefix}/v{n}");
            assert!(refs.contains(&tag), "{tag} in {refs:?}");
        }
    }
    let tree = git_ls_tree(&env.bare("branch-repo"), "new-branch");
    assert!(tree.contains(&"pkg/Kptfile".to_owned()), "{tree:?}");
}

/// Paths in a branch of a bare repository.
fn git_ls_tree(bare: &std::path::Path, branch: &str) -> Vec<String> {
    porch_testkit::repos::run(std::process::Command::new("git").arg("-C").arg(bare).args([
        "ls-tree",
        "-r",
        "--name-only",
        branch,
    ]))
    .expect("git ls-tree")
    .lines()
    .map(str::to_owned)
    .collect()
}
