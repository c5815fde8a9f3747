//! A crash at any step of an approval heals itself at the restart: the server aborts at a
//! failpoint (`PORCH_FAILPOINT`, as `kill -9` would stop it there), starts again without it
//! on the same data directory, and then shows the revision published with its number and
//! the latest label, no draft left, the tag once in the remote, and the package goes on
//! with the next number.

mod common;

use common::porch::{
    Env, approve, create, edit_task, init_published, is_latest, name, propose, refs_under,
    set_approval, spec,
};
use kube::api::ListParams;

const NS: &str = "default";

/// Publishes `app` v1, proposes v2 (a copy), and approves v2 with `failpoint` armed: the
/// process dies. Restarted without it, everything must be as if the approval had finished.
/// `flags` are the server's (both runs).
async fn approval_crash_heals(failpoint: &str, flags: &[&str]) {
    let mut env = Env::start_with(flags).await;
    let url = env.empty_repo("r");
    env.register(NS, "r", &url, serde_json::json!({})).await;
    let prs = env.prs(NS);
    let v1 = init_published(&prs, "r", "app", "v1").await;
    let v2 = create(&prs, "r", "app", "v2", edit_task(&name(&v1))).await;
    let v2 = name(&v2);
    propose(&prs, &v2).await;

    // Restart armed, then approve: the server dies at the failpoint.
    env.server.terminate();
    env.server
        .envs
        .push(("PORCH_FAILPOINT".into(), failpoint.into()));
    env.server.start_again();
    let client = env.server.wait_readyz().await;
    let prs = common::porch::revisions(&client, NS);
    let err = set_approval(&prs, &v2, "Published").await;
    assert!(
        err.is_err(),
        "the approval must die with the server: {err:?}"
    );
    let status = tokio::task::block_in_place(|| env.server.wait_exit());
    assert!(!status.success(), "aborted: {status:?}");
    assert!(
        env.log()
            .contains(&format!("failpoint {failpoint} reached")),
        "died at the failpoint, not elsewhere: {}",
        env.log()
    );

    // Restart disarmed on the same data directory.
    env.server.envs.clear();
    env.server.start_again();
    let client = env.server.wait_readyz().await;
    let prs = common::porch::revisions(&client, NS);

    let pr = prs.get(&v2).await.expect("v2 after the restart");
    assert_eq!(spec(&pr)["lifecycle"], "Published", "{pr:?}");
    assert_eq!(spec(&pr)["revision"], 2, "{pr:?}");
    assert!(is_latest(&pr), "v2 carries the latest label: {pr:?}");
    let listed = prs.list(&ListParams::default()).await.expect("list").items;
    let of_app: Vec<String> = listed
        .iter()
        .filter(|p| spec(p)["packageName"] == "app")
        .map(|p| {
            format!(
                "{} {} {} latest={}",
                spec(p)["workspaceName"].as_str().unwrap_or_default(),
                spec(p)["lifecycle"].as_str().unwrap_or_default(),
                spec(p)["revision"],
                is_latest(p)
            )
        })
        .collect();
    assert_eq!(
        of_app,
        vec![
            "main Published -1 latest=false",
            "v1 Published 1 latest=false",
            "v2 Published 2 latest=true",
        ],
        "exactly one latest, no draft of v2 left"
    );
    let tags = refs_under(&env.bare("r"), "refs/tags/");
    assert_eq!(
        tags.iter().filter(|t| *t == "refs/tags/app/v2").count(),
        1,
        "{tags:?}"
    );

    // Approving it again answers with the published revision, never a conflict.
    let again = approve(&prs, &v2).await;
    assert_eq!(spec(&again)["revision"], 2);
    assert_eq!(spec(&again)["lifecycle"], "Published");

    // The package goes on: the next revision is 3.
    let v3 = create(&prs, "r", "app", "v3", edit_task(&v2)).await;
    let v3 = name(&v3);
    propose(&prs, &v3).await;
    let v3 = approve(&prs, &v3).await;
    assert_eq!(spec(&v3)["revision"], 3, "{v3:?}");
    assert!(is_latest(&v3));
    assert!(!is_latest(&prs.get(&v2).await.expect("v2")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_between_push_and_store_commit_heals_at_restart() {
    approval_crash_heals("approve-after-push", &[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_between_store_commit_and_index_update_heals_at_restart() {
    approval_crash_heals("approve-after-commit", &[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_after_push_heals_with_drafts_pushed_to_git() {
    approval_crash_heals("approve-after-push", &["--push-drafts-to-git"]).await;
}
