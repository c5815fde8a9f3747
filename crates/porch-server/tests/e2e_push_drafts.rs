//! `--push-drafts-to-git` (Porch's `--db-push-drafts-to-git`): drafts and proposed revisions
//! live in the store and are mirrored to Porch-layout branches of the real remote (the
//! smart-HTTP fixture with basic auth), checked on the fixture's bare repository with git2.

mod common;

use std::path::Path;

use common::porch::*;
use kube::api::ListParams;
use porch_testkit::Fault;
use serde_json::{Value, json};

const NS: &str = "default";
const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: v1\n";
const MIRROR: &str = "porch.kpt.dev/GitMirror";

/// `(commit, message, parents)` of `refs/heads/<branch>` in the bare repository.
fn head(bare: &Path, branch: &str) -> Option<(String, String, Vec<String>)> {
    let repo = git2::Repository::open_bare(bare).expect("open the remote");
    let c = repo
        .find_reference(&format!("refs/heads/{branch}"))
        .ok()?
        .peel_to_commit()
        .expect("a branch points at a commit");
    Some((
        c.id().to_string(),
        c.message().unwrap_or_default().to_owned(),
        c.parent_ids().map(|p| p.to_string()).collect(),
    ))
}

fn head_id(bare: &Path, branch: &str) -> String {
    head(bare, branch)
        .unwrap_or_else(|| panic!("no branch {branch}"))
        .0
}

/// A file of `refs/heads/<branch>`.
fn file_at(bare: &Path, branch: &str, path: &str) -> Option<String> {
    let repo = git2::Repository::open_bare(bare).expect("open the remote");
    let tree = repo
        .find_reference(&format!("refs/heads/{branch}"))
        .ok()?
        .peel_to_tree()
        .expect("tree");
    let blob = repo
        .find_blob(tree.get_path(Path::new(path)).ok()?.id())
        .expect("blob");
    Some(String::from_utf8_lossy(blob.content()).into_owned())
}

fn draft_branches(bare: &Path) -> Vec<String> {
    let mut v = refs_under(bare, "refs/heads/drafts/");
    v.extend(refs_under(bare, "refs/heads/proposed/"));
    v
}

/// The `porch.kpt.dev/GitMirror` condition of a PackageRevision: `(reason, message)`.
fn mirror_condition(pr: &kube::api::DynamicObject) -> Option<(String, String)> {
    pr.data["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == MIRROR)
        .map(|c| {
            (
                c["reason"].as_str().unwrap_or_default().to_owned(),
                c["message"].as_str().unwrap_or_default().to_owned(),
            )
        })
}

/// `cm.yaml` of draft `git.app.ws` as the server has it.
async fn cm_of(prrs: &kube::Api<kube::api::DynamicObject>) -> Option<String> {
    files_of(prrs, "git.app.ws")
        .await
        .get("cm.yaml")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

async fn started() -> Env {
    let env = Env::start_with(&["--push-drafts-to-git"]).await;
    let url = env.empty_repo("git");
    env.register(NS, "git", &url, json!({})).await;
    env
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn push_drafts_mirrors_every_lifecycle_step() {
    let env = started().await;
    let (prs, prrs, bare) = (env.prs(NS), env.prrs(NS), env.bare("git"));
    let main = head_id(&bare, "main");

    init(&prs, "git", "basic", "ws").await;
    let (created, msg, parents) = head(&bare, "drafts/basic/ws").expect("draft branch");
    assert!(msg.starts_with("Creating new empty revision\n"), "{msg}");
    assert!(
        msg.contains(
            r#"kpt:{"package":"basic","workspaceName":"ws","revision":"0","task":{"type":"init""#
        ),
        "{msg}"
    );
    assert_eq!(parents, vec![main.clone()]);

    put_files(&prrs, "git.basic.ws", &[("cm.yaml", CM)])
        .await
        .expect("update resources");
    let (rendered, msg, parents) = head(&bare, "drafts/basic/ws").expect("draft branch");
    assert!(msg.starts_with("Rendering package\n"), "{msg}");
    assert_eq!(parents, vec![created]);
    assert_eq!(
        file_at(&bare, "drafts/basic/ws", "basic/cm.yaml").as_deref(),
        Some(CM)
    );

    propose(&prs, "git.basic.ws").await;
    assert_eq!(draft_branches(&bare), ["refs/heads/proposed/basic/ws"]);
    assert_eq!(head_id(&bare, "proposed/basic/ws"), rendered);
    let rejected = set_approval(&prs, "git.basic.ws", "Draft")
        .await
        .expect("reject");
    assert_eq!(spec(&rejected)["lifecycle"], "Draft");
    assert_eq!(draft_branches(&bare), ["refs/heads/drafts/basic/ws"]);
    propose(&prs, "git.basic.ws").await;

    // Listed once, as the stored draft.
    let listed: Vec<String> = prs
        .list(&ListParams::default())
        .await
        .expect("list")
        .items
        .iter()
        .map(|p| format!("{} {}", name(p), spec(p)["lifecycle"]))
        .collect();
    assert_eq!(listed, ["git.basic.ws \"Proposed\""]);

    let published = approve(&prs, "git.basic.ws").await;
    assert_eq!(spec(&published)["revision"], 1);
    assert!(
        draft_branches(&bare).is_empty(),
        "{:?}",
        draft_branches(&bare)
    );
    let repo = git2::Repository::open_bare(&bare).expect("open the remote");
    let tag = repo.refname_to_id("refs/tags/basic/v1").expect("tag");
    assert_eq!(head_id(&bare, "main"), tag.to_string());
    let parents: Vec<String> = repo
        .find_commit(tag)
        .expect("approval commit")
        .parent_ids()
        .map(|p| p.to_string())
        .collect();
    assert_eq!(parents, vec![main, rendered], "Porch's two-parent approval");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn push_drafts_delete_removes_the_branch() {
    let env = started().await;
    let (prs, bare) = (env.prs(NS), env.bare("git"));
    init(&prs, "git", "drafted", "ws").await;
    init(&prs, "git", "proposed", "ws").await;
    propose(&prs, "git.proposed.ws").await;
    assert_eq!(
        draft_branches(&bare),
        [
            "refs/heads/drafts/drafted/ws",
            "refs/heads/proposed/proposed/ws"
        ]
    );
    for pr in ["git.drafted.ws", "git.proposed.ws"] {
        prs.delete(pr, &Default::default())
            .await
            .unwrap_or_else(|e| panic!("delete {pr}: {e:?}"));
        assert!(is_gone(&prs, pr).await);
    }
    assert!(
        draft_branches(&bare).is_empty(),
        "{:?}",
        draft_branches(&bare)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn push_drafts_fresh_server_discovers_mirrored_drafts() {
    // Porch's spelling of the flag.
    let a = Env::start_with(&["--db-push-drafts-to-git=true"]).await;
    let url = a.empty_repo("git");
    a.register(NS, "git", &url, json!({})).await;
    let prs = a.prs(NS);
    init(&prs, "git", "app", "draft").await;
    put_files(&a.prrs(NS), "git.app.draft", &[("cm.yaml", CM)])
        .await
        .expect("update resources");
    init(&prs, "git", "other", "proposed").await;
    propose(&prs, "git.other.proposed").await;

    // Another server, empty data directory, same remote (same fixture credentials).
    let b = Env::start().await;
    b.register(NS, "git", &url, json!({})).await;
    let view = |items: &[kube::api::DynamicObject]| -> Vec<Value> {
        items
            .iter()
            .map(|p| {
                let s = spec(p);
                json!([name(p), s["lifecycle"], s["revision"], s["tasks"]])
            })
            .collect()
    };
    let ours = prs
        .list(&ListParams::default())
        .await
        .expect("list a")
        .items;
    let theirs = b
        .prs(NS)
        .list(&ListParams::default())
        .await
        .expect("list b")
        .items;
    assert_eq!(view(&theirs), view(&ours));
    assert_eq!(
        view(&theirs)
            .iter()
            .map(|v| format!("{} {} {}", v[0], v[1], v[3][0]["type"]))
            .collect::<Vec<_>>(),
        [
            "\"git.app.draft\" \"Draft\" \"init\"",
            "\"git.other.proposed\" \"Proposed\" \"init\""
        ]
    );
    assert!(
        theirs
            .iter()
            .all(|p| spec(p).get("revision").is_none() || spec(p)["revision"] == 0)
    );
    let files = files_of(&b.prrs(NS), "git.app.draft").await;
    assert_eq!(files.get("cm.yaml").and_then(Value::as_str), Some(CM));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn push_drafts_unreachable_remote_does_not_fail_an_update() {
    let mut env = started().await;
    let (prs, prrs, bare) = (env.prs(NS), env.prrs(NS), env.bare("git"));
    init(&prs, "git", "app", "ws").await;
    let before = head_id(&bare, "drafts/app/ws");

    tokio::task::block_in_place(|| env.git.stop());
    put_files(&prrs, "git.app.ws", &[("cm.yaml", CM)])
        .await
        .expect("the update succeeds without the remote");
    let pr = prs.get("git.app.ws").await.expect("get");
    let (reason, message) = mirror_condition(&pr).expect("the lag is served");
    assert_eq!(reason, "Unavailable", "{message}");
    assert_eq!(head_id(&bare, "drafts/app/ws"), before);
    assert_eq!(
        cm_of(&prrs).await.as_deref(),
        Some(CM),
        "the store has the update"
    );

    tokio::task::block_in_place(|| env.git.restart()).expect("fixture back");
    eventually("the branch catches up", || async {
        file_at(&bare, "drafts/app/ws", "app/cm.yaml").as_deref() == Some(CM)
            && mirror_condition(&prs.get("git.app.ws").await.expect("get")).is_none()
    })
    .await;
    let (_, msg, parents) = head(&bare, "drafts/app/ws").expect("branch");
    assert_eq!(parents, vec![before]);
    assert!(msg.starts_with("Rendering package\n"), "{msg}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn push_drafts_lost_push_answer_is_not_pushed_twice() {
    let env = started().await;
    let (prs, prrs, bare) = (env.prs(NS), env.prrs(NS), env.bare("git"));
    init(&prs, "git", "app", "ws").await;
    let before = head_id(&bare, "drafts/app/ws");

    // The remote applies the push but the answer never arrives.
    env.git.set_fault(Fault::LoseReceivePackResponse);
    put_files(&prrs, "git.app.ws", &[("cm.yaml", CM)])
        .await
        .expect("the update succeeds");
    let landed = head_id(&bare, "drafts/app/ws");
    assert_ne!(landed, before, "the push was applied");
    env.git.set_fault(Fault::None);

    eventually("the landed push is recognised", || async {
        mirror_condition(&prs.get("git.app.ws").await.expect("get")).is_none()
    })
    .await;
    let (now, _, parents) = head(&bare, "drafts/app/ws").expect("branch");
    assert_eq!(now, landed, "nothing pushed again");
    assert_eq!(parents, vec![before]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn push_drafts_foreign_branch_is_not_overwritten() {
    let env = started().await;
    let (prs, prrs, bare) = (env.prs(NS), env.prrs(NS), env.bare("git"));
    init(&prs, "git", "app", "ws").await;
    let foreign = {
        let repo = git2::Repository::open_bare(&bare).expect("open the remote");
        let parent = repo
            .find_reference("refs/heads/drafts/app/ws")
            .and_then(|r| r.peel_to_commit())
            .expect("draft branch");
        let files = porch_testkit::repos::files(&[
            ("README.md", "test repository\n"),
            (
                "app/Kptfile",
                "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n",
            ),
        ]);
        let tree = porch_testkit::repos::write_tree(&repo, &files).expect("tree");
        let sig = git2::Signature::now("someone", "someone@example.com").expect("signature");
        repo.commit(
            Some("refs/heads/drafts/app/ws"),
            &sig,
            &sig,
            "edited elsewhere",
            &repo.find_tree(tree).expect("tree"),
            &[&parent],
        )
        .expect("foreign commit")
        .to_string()
    };

    put_files(&prrs, "git.app.ws", &[("cm.yaml", CM)])
        .await
        .expect("the update succeeds");
    let pr = prs.get("git.app.ws").await.expect("get");
    let (reason, message) = mirror_condition(&pr).expect("the conflict is served");
    assert_eq!(reason, "Conflict", "{message}");
    assert!(message.contains("drafts/app/ws"), "{message}");
    assert_eq!(
        cm_of(&prrs).await.as_deref(),
        Some(CM),
        "the store has the update"
    );
    assert_eq!(head_id(&bare, "drafts/app/ws"), foreign, "not overwritten");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn push_drafts_restart_keeps_drafts() {
    let mut env = started().await;
    let (prs, prrs, bare) = (env.prs(NS), env.prrs(NS), env.bare("git"));
    init(&prs, "git", "app", "ws").await;
    put_files(&prrs, "git.app.ws", &[("cm.yaml", CM)])
        .await
        .expect("update resources");
    let before = head_id(&bare, "drafts/app/ws");

    // Restarted with the environment variable instead of the flag.
    env.server.extra.clear();
    env.server
        .envs
        .push(("PORCH_PUSH_DRAFTS_TO_GIT".into(), "true".into()));
    tokio::task::block_in_place(|| env.server.restart());
    // The Repository's Ready condition is still the one written before the restart: wait
    // until the new process has loaded it (readyz) before listing.
    env.server.wait_readyz().await;
    wait_ready(&env.client, NS, "git").await;
    assert_eq!(
        list_names(&prs, &ListParams::default()).await,
        ["git.app.ws"]
    );
    assert_eq!(cm_of(&prrs).await.as_deref(), Some(CM));
    assert_eq!(
        head_id(&bare, "drafts/app/ws"),
        before,
        "nothing pushed again"
    );

    put_files(&prrs, "git.app.ws", &[("cm2.yaml", CM)])
        .await
        .expect("update after the restart");
    let (_, _, parents) = head(&bare, "drafts/app/ws").expect("branch");
    assert_eq!(parents, vec![before]);
}
