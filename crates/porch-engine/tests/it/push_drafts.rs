//! Draft mirroring (`EngineOptions::push_drafts_to_git`): every change of a stored draft
//! reaches its `drafts/…`/`proposed/…` branch; failures never fail the write and are caught
//! up; a branch someone else wrote is never overwritten; a fresh engine discovers the
//! mirrored drafts as Go Porch would.

use std::path::{Path, PathBuf};

use porch_core::lifecycle::{Endpoint, Lifecycle};
use porch_core::repository::PackageFiles;
use porch_core::store::{MetadataStore, ObjectKey, Precondition, Write, WriteOp};
use porch_engine::{Engine, EngineOptions, GIT_MIRROR_CONDITION, Origin, PackageRevision};

use crate::common::{NS, World, alice, init_req, remote_refs};

const DRAFTS: &str = "engine.porch.kpt.dev/drafts";

/// The head of `refs/heads/<branch>` of the bare repository at `dir`: (id, message,
/// parent ids).
fn head(dir: &Path, branch: &str) -> Option<(String, String, Vec<String>)> {
    let repo = git2::Repository::open_bare(dir).expect("open remote");
    let c = repo
        .find_reference(&format!("refs/heads/{branch}"))
        .ok()?
        .peel_to_commit()
        .expect("branch points at a commit");
    Some((
        c.id().to_string(),
        c.message().unwrap_or_default().to_owned(),
        c.parent_ids().map(|p| p.to_string()).collect(),
    ))
}

/// A file at `path` in the tree of `refs/heads/<branch>`.
fn file_at(dir: &Path, branch: &str, path: &str) -> Option<String> {
    let repo = git2::Repository::open_bare(dir).expect("open remote");
    let tree = repo
        .find_reference(&format!("refs/heads/{branch}"))
        .ok()?
        .peel_to_tree()
        .expect("tree");
    let entry = tree.get_path(Path::new(path)).ok()?;
    let blob = repo.find_blob(entry.id()).expect("blob");
    Some(String::from_utf8_lossy(blob.content()).into_owned())
}

fn draft_refs(dir: &Path) -> Vec<String> {
    remote_refs(dir)
        .expect("refs")
        .into_iter()
        .filter(|r| r.starts_with("refs/heads/drafts/") || r.starts_with("refs/heads/proposed/"))
        .collect()
}

fn mirror_condition(pr: &PackageRevision) -> Option<(String, String)> {
    pr.conditions
        .iter()
        .find(|c| c.condition_type == GIT_MIRROR_CONDITION)
        .map(|c| (c.reason.clone(), c.message.clone()))
}

async fn put_file(
    engine: &Engine,
    name: &str,
    path: &str,
    text: &str,
) -> anyhow::Result<PackageRevision> {
    let (pr, mut files) = engine.read_resources(NS, name).await?;
    files.insert(path.to_owned(), text.as_bytes().to_vec());
    Ok(engine
        .update_resources(NS, name, &pr.resource_version, files)
        .await?
        .revision)
}

async fn lifecycle(
    engine: &Engine,
    name: &str,
    to: Lifecycle,
    endpoint: Endpoint,
) -> anyhow::Result<PackageRevision> {
    Ok(engine
        .update_lifecycle(NS, name, None, to, endpoint, alice())
        .await?)
}

/// Repository `r` on an empty remote, with draft `r.app.ws`: the remote's URL and directory.
async fn with_draft(w: &World) -> anyhow::Result<(String, PathBuf)> {
    let url = w.empty_remote("r.git")?;
    w.register("r", &url).await?;
    w.engine.create(init_req("r", "app", "ws")).await?;
    Ok((url, w.remote_dir("r.git")))
}

const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: v1\n";

#[tokio::test]
async fn every_draft_change_reaches_its_branch() -> anyhow::Result<()> {
    let w = World::pushing()?;
    let url = w.empty_remote("r.git")?;
    w.register("r", &url).await?;
    let dir = w.remote_dir("r.git");
    let main = head(&dir, "main").expect("main").0;

    let d = w.engine.create(init_req("r", "app", "ws")).await?;
    assert_eq!(mirror_condition(&d), None);
    let (created, msg, parents) = head(&dir, "drafts/app/ws").expect("draft branch");
    assert!(msg.starts_with("Creating new empty revision\n"), "{msg}");
    assert!(
        msg.contains(
            r#"kpt:{"package":"app","workspaceName":"ws","revision":"0","task":{"type":"init""#
        ),
        "{msg}"
    );
    assert_eq!(parents, vec![main.clone()]);

    let updated = put_file(&w.engine, "r.app.ws", "cm.yaml", CM).await?;
    assert_eq!(mirror_condition(&updated), None);
    let (render, msg, parents) = head(&dir, "drafts/app/ws").expect("draft branch");
    assert!(msg.starts_with("Rendering package\n"), "{msg}");
    assert_eq!(parents, vec![created]);
    assert_eq!(
        file_at(&dir, "drafts/app/ws", "app/cm.yaml").as_deref(),
        Some(CM)
    );

    lifecycle(&w.engine, "r.app.ws", Lifecycle::Proposed, Endpoint::Update).await?;
    assert_eq!(draft_refs(&dir), vec!["refs/heads/proposed/app/ws"]);
    lifecycle(&w.engine, "r.app.ws", Lifecycle::Draft, Endpoint::Approval).await?;
    assert_eq!(draft_refs(&dir), vec!["refs/heads/drafts/app/ws"]);
    lifecycle(&w.engine, "r.app.ws", Lifecycle::Proposed, Endpoint::Update).await?;
    let proposed = head(&dir, "proposed/app/ws").expect("proposed branch").0;
    assert_eq!(proposed, render, "lifecycle moves keep the commit");

    // Listed once, as the stored draft, also after a sync found the branch.
    w.engine.sync(NS, &"r".parse()?).await?;
    let listed: Vec<(String, Origin)> = w
        .list()
        .iter()
        .map(|p| (p.name().to_string(), p.origin))
        .collect();
    assert_eq!(listed, vec![("r.app.ws".to_owned(), Origin::Store)]);

    let published = lifecycle(
        &w.engine,
        "r.app.ws",
        Lifecycle::Published,
        Endpoint::Approval,
    )
    .await?;
    assert_eq!(published.key.revision.get(), 1);
    assert!(draft_refs(&dir).is_empty(), "{:?}", draft_refs(&dir));
    let repo = git2::Repository::open_bare(&dir)?;
    let tag = repo.refname_to_id("refs/tags/app/v1")?;
    assert_eq!(repo.refname_to_id("refs/heads/main")?, tag);
    let approval = repo.find_commit(tag)?;
    let parents: Vec<String> = approval.parent_ids().map(|p| p.to_string()).collect();
    assert_eq!(parents, vec![main, proposed], "Porch's two-parent approval");
    assert_eq!(w.stored_drafts()?, 0);

    // Deleting a draft deletes its branch.
    w.engine.create(init_req("r", "other", "ws")).await?;
    assert_eq!(draft_refs(&dir), vec!["refs/heads/drafts/other/ws"]);
    w.engine.delete(NS, "r.other.ws", None).await?;
    assert!(draft_refs(&dir).is_empty());
    assert_eq!(
        w.stored_drafts()?,
        0,
        "no tombstone once the branch is gone"
    );
    Ok(())
}

#[tokio::test]
async fn without_the_option_nothing_is_pushed() -> anyhow::Result<()> {
    let w = World::new()?;
    let (_, dir) = with_draft(&w).await?;
    put_file(&w.engine, "r.app.ws", "cm.yaml", CM).await?;
    lifecycle(&w.engine, "r.app.ws", Lifecycle::Proposed, Endpoint::Update).await?;
    assert!(draft_refs(&dir).is_empty());
    Ok(())
}

#[tokio::test]
async fn an_unreachable_remote_fails_no_write_and_is_caught_up() -> anyhow::Result<()> {
    let w = World::pushing()?;
    let (_, dir) = with_draft(&w).await?;
    let before = head(&dir, "drafts/app/ws").expect("draft branch").0;

    let away = dir.with_extension("away");
    std::fs::rename(&dir, &away)?;
    let updated = put_file(&w.engine, "r.app.ws", "cm.yaml", CM).await?;
    let (reason, message) = mirror_condition(&updated).expect("the lag is served");
    assert_ne!(reason, "Conflict", "{message}");
    assert!(message.contains("not yet in git"), "{message}");
    // The store has the write.
    let (_, files) = w.engine.read_resources(NS, "r.app.ws").await?;
    assert!(files.contains_key("cm.yaml"));

    std::fs::rename(&away, &dir)?;
    w.engine.sync(NS, &"r".parse()?).await?;
    let caught_up = w.engine.get(NS, "r.app.ws")?;
    assert_eq!(mirror_condition(&caught_up), None);
    assert_ne!(caught_up.resource_version, updated.resource_version);
    let (now, _, parents) = head(&dir, "drafts/app/ws").expect("draft branch");
    assert_eq!(parents, vec![before]);
    assert_eq!(
        file_at(&dir, "drafts/app/ws", "app/cm.yaml").as_deref(),
        Some(CM)
    );
    // Caught up means nothing more to push.
    w.engine.sync(NS, &"r".parse()?).await?;
    assert_eq!(head(&dir, "drafts/app/ws").expect("draft branch").0, now);
    Ok(())
}

#[tokio::test]
async fn a_deleted_draft_stays_gone_while_its_branch_cannot_be_deleted() -> anyhow::Result<()> {
    let w = World::pushing()?;
    let (_, dir) = with_draft(&w).await?;

    let away = dir.with_extension("away");
    std::fs::rename(&dir, &away)?;
    w.engine.delete(NS, "r.app.ws", None).await?;
    assert!(
        w.list().is_empty(),
        "the branch of the deleted draft is not listed"
    );
    assert!(w.engine.get(NS, "r.app.ws").is_err());

    std::fs::rename(&away, &dir)?;
    w.engine.sync(NS, &"r".parse()?).await?;
    assert!(draft_refs(&dir).is_empty());
    assert!(w.list().is_empty());
    assert_eq!(w.stored_drafts()?, 0);
    Ok(())
}

#[tokio::test]
async fn a_branch_written_by_someone_else_is_not_overwritten() -> anyhow::Result<()> {
    let w = World::pushing()?;
    let (_, dir) = with_draft(&w).await?;

    // Someone else commits other content on the draft branch.
    let foreign = {
        let repo = git2::Repository::open_bare(&dir)?;
        let parent = repo
            .find_reference("refs/heads/drafts/app/ws")?
            .peel_to_commit()?;
        let mut files: PackageFiles = PackageFiles::new();
        files.insert("README.md".into(), b"# test\n".to_vec());
        files.insert(
            "app/Kptfile".into(),
            b"apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n".to_vec(),
        );
        let tree = porch_testkit::repos::write_tree(&repo, &files)?;
        let sig = git2::Signature::now("mallory", "mallory@example.com")?;
        repo.commit(
            Some("refs/heads/drafts/app/ws"),
            &sig,
            &sig,
            "edited elsewhere",
            &repo.find_tree(tree)?,
            &[&parent],
        )?
        .to_string()
    };

    let updated = put_file(&w.engine, "r.app.ws", "cm.yaml", CM).await?;
    let (reason, message) = mirror_condition(&updated).expect("conflict served");
    assert_eq!(reason, "Conflict", "{message}");
    assert!(message.contains("drafts/app/ws"), "{message}");
    assert_eq!(head(&dir, "drafts/app/ws").expect("branch").0, foreign);
    // Later writes and syncs leave it alone too.
    w.engine.sync(NS, &"r".parse()?).await?;
    assert_eq!(head(&dir, "drafts/app/ws").expect("branch").0, foreign);
    // Approval refuses to publish someone else's content.
    lifecycle(&w.engine, "r.app.ws", Lifecycle::Proposed, Endpoint::Update).await?;
    let err = lifecycle(
        &w.engine,
        "r.app.ws",
        Lifecycle::Published,
        Endpoint::Approval,
    )
    .await
    .expect_err("approval of a draft whose branch is someone else's");
    assert!(err.to_string().contains("changed by someone else"), "{err}");
    assert_eq!(head(&dir, "drafts/app/ws").expect("branch").0, foreign);
    Ok(())
}

#[tokio::test]
async fn a_restart_mirrors_drafts_whose_branch_lags() -> anyhow::Result<()> {
    // Written without mirroring: the branch lags by everything.
    let w = World::new()?;
    let (url, dir) = with_draft(&w).await?;
    put_file(&w.engine, "r.app.ws", "cm.yaml", CM).await?;
    assert!(draft_refs(&dir).is_empty());

    let pushing = EngineOptions {
        push_drafts_to_git: true,
        ..EngineOptions::default()
    };
    let engine = w.restart_with("r", &url, pushing.clone()).await?;
    let (_, msg, _) = head(&dir, "drafts/app/ws").expect("mirrored at start-up");
    assert!(
        msg.starts_with("Creating new empty revision\n"),
        "a new branch starts with the creating task: {msg}"
    );
    assert_eq!(
        file_at(&dir, "drafts/app/ws", "app/cm.yaml").as_deref(),
        Some(CM)
    );
    let listed: Vec<String> = engine
        .list(&Default::default())
        .iter()
        .map(|p| format!("{} {:?}", p.name(), p.origin))
        .collect();
    assert_eq!(listed, vec!["r.app.ws Store"]);
    Ok(())
}

/// The draft's store record as if the process had died after pushing `commit`'s successor
/// but before recording it: the mirror state still names `commit` and an older version.
fn roll_back_mirror_record(
    store: &dyn MetadataStore,
    name: &str,
    commit: &str,
) -> anyhow::Result<()> {
    let key = ObjectKey::new(DRAFTS, NS, name);
    let obj = store.get(&key)?.expect("draft record");
    let mut json: serde_json::Value = serde_json::from_slice(&obj.data)?;
    json["mirror"]["commit"] = commit.into();
    json["mirror"]["version"] = 1.into();
    let bytes = serde_json::to_vec(&json)?;
    store.write(vec![Write {
        key,
        precondition: Precondition::ResourceVersion(obj.resource_version),
        op: WriteOp::Put(Box::new(move |_, _| bytes)),
    }])?;
    Ok(())
}

#[tokio::test]
async fn a_crash_between_push_and_record_is_reconciled_without_a_conflict() -> anyhow::Result<()> {
    let w = World::pushing()?;
    let (url, dir) = with_draft(&w).await?;
    let first = head(&dir, "drafts/app/ws").expect("branch").0;
    put_file(&w.engine, "r.app.ws", "cm.yaml", CM).await?;
    let pushed = head(&dir, "drafts/app/ws").expect("branch").0;
    roll_back_mirror_record(w.store.as_ref(), "r.app.ws", &first)?;

    let engine = w
        .restart_with(
            "r",
            &url,
            EngineOptions {
                push_drafts_to_git: true,
                ..EngineOptions::default()
            },
        )
        .await?;
    let pr = engine.get(NS, "r.app.ws")?;
    assert_eq!(
        mirror_condition(&pr),
        None,
        "the pushed commit is recognised as ours"
    );
    assert_eq!(
        head(&dir, "drafts/app/ws").expect("branch").0,
        pushed,
        "nothing pushed again"
    );
    // And the next write goes on top of it.
    put_file(&engine, "r.app.ws", "cm2.yaml", CM).await?;
    let (_, _, parents) = head(&dir, "drafts/app/ws").expect("branch");
    assert_eq!(parents, vec![pushed]);
    Ok(())
}

#[tokio::test]
async fn a_fresh_engine_discovers_mirrored_drafts_as_go_porch_would() -> anyhow::Result<()> {
    let w = World::pushing()?;
    let (url, _) = with_draft(&w).await?;
    put_file(&w.engine, "r.app.ws", "cm.yaml", CM).await?;
    w.engine.create(init_req("r", "other", "v2")).await?;
    lifecycle(
        &w.engine,
        "r.other.v2",
        Lifecycle::Proposed,
        Endpoint::Update,
    )
    .await?;
    let ours = w.list();

    // Another server: empty store, same remote.
    let fresh = World::new()?;
    fresh.register("r", &url).await?;
    let theirs = fresh.list();
    let view = |prs: &[PackageRevision]| -> Vec<String> {
        prs.iter()
            .map(|p| {
                format!(
                    "{} {} rev={} tasks={:?}",
                    p.name(),
                    p.lifecycle,
                    p.key.revision,
                    p.tasks
                        .iter()
                        .map(|t| t.task_type.clone())
                        .collect::<Vec<_>>()
                )
            })
            .collect()
    };
    assert_eq!(view(&theirs), view(&ours));
    assert_eq!(
        view(&theirs),
        vec![
            "r.app.ws Draft rev=0 tasks=[\"init\"]",
            "r.other.v2 Proposed rev=0 tasks=[\"init\"]"
        ]
    );
    assert!(theirs.iter().all(|p| p.origin == Origin::Git));
    let (_, files) = fresh.engine.read_resources(NS, "r.app.ws").await?;
    assert_eq!(files.get("cm.yaml").map(Vec::as_slice), Some(CM.as_bytes()));
    Ok(())
}

#[tokio::test]
async fn an_approval_cut_short_leaves_no_stale_draft() -> anyhow::Result<()> {
    let w = World::pushing()?;
    let url = w.empty_remote("r.git")?;
    let repo = w.register("r", &url).await?;
    w.engine.create(init_req("r", "app", "ws")).await?;
    lifecycle(&w.engine, "r.app.ws", Lifecycle::Proposed, Endpoint::Update).await?;
    // The approval's push lands, and the process dies before the draft's record goes.
    porch_core::repository::Repository::publish(
        repo.as_ref(),
        porch_core::repository::PublishRequest {
            package: "app".parse()?,
            workspace: "ws".parse()?,
            content: porch_core::repository::PublishContent::MirroredDraft {
                expected_commit: None,
            },
            published_by: alice(),
        },
    )
    .await?;
    assert_eq!(w.stored_drafts()?, 1);

    let engine = w
        .restart_with(
            "r",
            &url,
            EngineOptions {
                push_drafts_to_git: true,
                ..EngineOptions::default()
            },
        )
        .await?;
    let listed: Vec<String> = engine
        .list(&Default::default())
        .iter()
        .map(|p| format!("{} {} {:?}", p.name(), p.lifecycle, p.origin))
        .collect();
    assert_eq!(
        listed,
        vec!["r.app.main Published Git", "r.app.ws Published Git"]
    );
    assert_eq!(w.stored_drafts()?, 0);
    assert!(draft_refs(&w.remote_dir("r.git")).is_empty());
    Ok(())
}

#[tokio::test]
async fn a_draft_created_again_takes_over_the_branch_its_deleted_namesake_left()
-> anyhow::Result<()> {
    let w = World::pushing()?;
    let (_, dir) = with_draft(&w).await?;
    put_file(&w.engine, "r.app.ws", "cm.yaml", CM).await?;
    let old = head(&dir, "drafts/app/ws").expect("branch").0;

    let away = dir.with_extension("away");
    std::fs::rename(&dir, &away)?;
    w.engine.delete(NS, "r.app.ws", None).await?;
    let again = w.engine.create(init_req("r", "app", "ws")).await?;
    assert!(mirror_condition(&again).is_some());
    std::fs::rename(&away, &dir)?;
    w.engine.sync(NS, &"r".parse()?).await?;

    let listed: Vec<String> = w
        .list()
        .iter()
        .map(|p| format!("{} {:?}", p.name(), p.origin))
        .collect();
    assert_eq!(listed, vec!["r.app.ws Store"]);
    assert_eq!(mirror_condition(&w.engine.get(NS, "r.app.ws")?), None);
    let (_, msg, parents) = head(&dir, "drafts/app/ws").expect("branch");
    assert_eq!(parents, vec![old], "written on top of what was there");
    assert!(msg.starts_with("Creating new empty revision\n"), "{msg}");
    assert_eq!(
        file_at(&dir, "drafts/app/ws", "app/cm.yaml"),
        None,
        "the new draft's files"
    );
    assert_eq!(w.stored_drafts()?, 1);
    Ok(())
}
