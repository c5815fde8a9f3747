//! What Porch's CLI goldens (`cli-goldens/rpkg-{init,clone,copy,push}`) pin about created
//! drafts: the `Rendered` condition kpt's render leaves in the Kptfile, clone/init of an
//! existing package (a Draft only counts), and the Kptfile and merge keys of clones.

use std::sync::Arc;

use kpt::kptfile::{Condition, Kptfile};
use porch_core::revision::{CloneTask, GitUpstream, RevisionRef, Task, UpstreamPackage};
use porch_engine::{CreateRequest, Engine};
use porch_git::GitUpstreamFetcher;

use crate::common::{NS, World, commit_and_tag, init_req};
use crate::create::{clone_req, publish_init};

const IDENTIFIER: &str = "internal.kpt.dev/upstream-identifier";

/// The blueprint of the goldens' `test-blueprints` repository, directory `basens`.
const BASENS_KPTFILE: &str = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: basens\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\ninfo:\n  description: sample description\n";
const NAMESPACE: &str = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: example\n";

fn git_clone(package: &str, ws: &str, url: &str, git_ref: &str, dir: &str) -> CreateRequest {
    CreateRequest {
        tasks: vec![Task {
            task_type: "clone".into(),
            clone: Some(CloneTask {
                upstream: UpstreamPackage {
                    origin_type: "git".into(),
                    git: Some(GitUpstream {
                        repo: url.into(),
                        git_ref: git_ref.into(),
                        directory: dir.into(),
                        ..GitUpstream::default()
                    }),
                    upstream_ref: None,
                },
                ..Default::default()
            }),
            ..Task::default()
        }],
        ..init_req("r", package, ws)
    }
}

fn rendered() -> Condition {
    Condition {
        condition_type: "Rendered".into(),
        status: "True".into(),
        reason: "RenderSuccess".into(),
        message: String::new(),
    }
}

async fn read_kptfile(e: &Engine, name: &str) -> anyhow::Result<Kptfile> {
    let (_, files) = e.read_resources(NS, name).await?;
    let text = String::from_utf8(files["Kptfile"].clone())?;
    Ok(Kptfile::parse(&text)?)
}

async fn read_file(e: &Engine, name: &str, path: &str) -> anyhow::Result<String> {
    let (_, files) = e.read_resources(NS, name).await?;
    Ok(String::from_utf8(files[path].clone())?)
}

/// A world with repository `r` registered, a `blueprints.git` remote holding `basens`
/// tagged `basens/v1`, and the raw-git fetcher on. Returns the world and the remote's URL.
async fn with_blueprints() -> anyhow::Result<(World, String)> {
    let w = World::new()?;
    let up = w.empty_remote("blueprints.git")?;
    commit_and_tag(
        &w.remote_dir("blueprints.git"),
        &[
            ("basens/Kptfile", BASENS_KPTFILE),
            ("basens/namespace.yaml", NAMESPACE),
        ],
        "basens/v1",
    )?;
    let url = w.empty_remote("r.git")?;
    w.register("r", &url).await?;
    w.engine
        .set_upstream_fetcher(Arc::new(GitUpstreamFetcher::new(w.tmp.path().join("data"))));
    Ok((w, up))
}

#[tokio::test]
async fn created_and_updated_drafts_carry_the_rendered_condition() -> anyhow::Result<()> {
    let w = World::new()?;
    let url = w.empty_remote("r.git")?;
    w.register("r", &url).await?;

    // init, with an empty pipeline: kpt runs nothing, Porch still records the render.
    let d = w.engine.create(init_req("r", "app", "ws")).await?;
    let kf = read_kptfile(&w.engine, "r.app.ws").await?;
    let status = kf.status.clone().unwrap_or_default();
    assert_eq!(status.conditions, vec![rendered()]);
    assert_eq!(status.render_status, None);
    let text = read_file(&w.engine, "r.app.ws", "Kptfile").await?;
    assert!(
        text.ends_with(
            "status:\n  conditions:\n    - type: Rendered\n      status: \"True\"\n      reason: RenderSuccess\n"
        ),
        "{text}"
    );
    // The revision serves the Kptfile's conditions.
    assert!(
        d.conditions
            .iter()
            .any(|c| c.condition_type == "Rendered" && c.status == "True"),
        "{:?}",
        d.conditions
    );

    // A resources update (as `rpkg push` of a Kptfile edited locally) renders again: the
    // condition is still there exactly once, after the conditions the Kptfile brought.
    let (_, mut files) = w.engine.read_resources(NS, "r.app.ws").await?;
    files.insert(
        "Kptfile".into(),
        b"apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\ninfo:\n  description: updated\nstatus:\n  conditions:\n  - type: Rendered\n    status: \"False\"\n    reason: RenderFailed\n  - type: example.com/gate\n    status: \"True\"\n".to_vec(),
    );
    w.engine
        .update_resources(NS, "r.app.ws", &d.resource_version, files)
        .await?;
    let kf = read_kptfile(&w.engine, "r.app.ws").await?;
    assert_eq!(
        kf.info.as_ref().map(|i| i.description.as_str()),
        Some("updated")
    );
    let conditions = kf.status.unwrap_or_default().conditions;
    let types: Vec<(&str, &str)> = conditions
        .iter()
        .map(|c| (c.condition_type.as_str(), c.status.as_str()))
        .collect();
    assert_eq!(
        types,
        vec![("example.com/gate", "True"), ("Rendered", "True")]
    );
    assert_eq!(conditions.last(), Some(&rendered()));

    // A copy of a published revision and a clone of it are rendered too.
    let v1 = publish_init(&w.engine, "r", "base", "v1").await?;
    w.engine.create(clone_req("r", "down", "ws", &v1)).await?;
    let kf = read_kptfile(&w.engine, "r.down.ws").await?;
    assert_eq!(kf.status.unwrap_or_default().conditions, vec![rendered()]);
    Ok(())
}

#[tokio::test]
async fn init_and_clone_of_a_package_that_exists_only_as_a_draft_are_refused() -> anyhow::Result<()>
{
    let (w, up) = with_blueprints().await?;

    // rpkg-init: init-1 is a Draft, init-2 of the same package is refused.
    w.engine
        .create(init_req("r", "init-package", "init-1"))
        .await?;
    let err = w
        .engine
        .create(init_req("r", "init-package", "init-2"))
        .await
        .expect_err("package exists as a draft");
    assert_eq!(
        err.to_string(),
        "package \"init-package\" already exists in repository \"r\""
    );

    // rpkg-clone: clone-2 is a Draft cloned from raw git, clone-3 into the same package is
    // refused.
    w.engine
        .create(git_clone("basens-clone", "clone-2", &up, "v1", "/basens"))
        .await?;
    let err = w
        .engine
        .create(git_clone("basens-clone", "clone-3", &up, "v1", "/basens"))
        .await
        .expect_err("package exists as a draft");
    assert_eq!(
        err.to_string(),
        "`clone` cannot create a new revision for package \"basens-clone\" that already exists in repo \"r\"; make subsequent revisions using `copy`"
    );
    // The same from a registered revision, and nesting under a draft.
    let v1 = publish_init(&w.engine, "r", "base", "v1").await?;
    let err = w
        .engine
        .create(clone_req("r", "init-package", "clone-1", &v1))
        .await
        .expect_err("package exists as a draft");
    assert!(
        err.to_string().starts_with("`clone` cannot create"),
        "{err}"
    );
    let err = w
        .engine
        .create(init_req("r", "basens-clone/sub", "ws"))
        .await
        .expect_err("nested under a draft");
    assert_eq!(
        err.to_string(),
        "package path \"basens-clone/sub\" conflicts with existing package \"basens-clone\": packages cannot be nested"
    );
    // Nothing was created by the refused requests.
    let names: Vec<String> = w.list().iter().map(|p| p.name().to_string()).collect();
    assert_eq!(
        names,
        vec![
            "r.base.main",
            "r.base.v1",
            "r.basens-clone.clone-2",
            "r.init-package.init-1"
        ]
    );
    Ok(())
}

#[tokio::test]
async fn a_raw_git_clone_writes_the_kptfile_and_merge_keys_of_the_goldens() -> anyhow::Result<()> {
    let (w, up) = with_blueprints().await?;
    let d = w
        .engine
        .create(git_clone("basens-clone", "clone-2", &up, "v1", "/basens"))
        .await?;
    let kf = read_kptfile(&w.engine, "r.basens-clone.clone-2").await?;
    let upstream = kf.upstream.clone().expect("upstream");
    let git = upstream.git.clone().expect("upstream.git");
    assert_eq!(
        (
            git.repo.as_str(),
            git.directory.as_str(),
            git.git_ref.as_str()
        ),
        (up.as_str(), "basens", "v1")
    );
    assert_eq!(
        upstream.update_strategy, "",
        "no updateStrategy for a clone"
    );
    let lock = kf
        .upstream_lock
        .clone()
        .and_then(|l| l.git)
        .expect("upstreamLock.git");
    assert_eq!(lock.directory, "basens");
    assert_eq!(lock.commit.len(), 40);
    let served = d.upstream_lock.and_then(|l| l.git).expect("served lock");
    assert_eq!(served.directory, "basens");
    assert_eq!(
        kf.metadata.annotations.get(IDENTIFIER).map(String::as_str),
        Some("kpt.dev|Kptfile|default|basens-clone")
    );
    assert_eq!(kf.metadata.name, "basens-clone");
    assert_eq!(kf.status.unwrap_or_default().conditions, vec![rendered()]);
    let text = read_file(&w.engine, "r.basens-clone.clone-2", "Kptfile").await?;
    assert!(!text.contains("updateStrategy"), "{text}");

    let ns = read_file(&w.engine, "r.basens-clone.clone-2", "namespace.yaml").await?;
    assert_eq!(
        ns,
        "apiVersion: v1\nkind: Namespace\nmetadata: # kpt-merge: /example\n  name: example\n  annotations:\n    internal.kpt.dev/upstream-identifier: '|Namespace|default|example'\n"
    );
    Ok(())
}

#[tokio::test]
async fn clones_of_registered_revisions_and_upgrades_get_merge_keys() -> anyhow::Result<()> {
    let (w, up) = with_blueprints().await?;
    // A published package with a resource, as the goldens' registered `test-blueprints`.
    let src = w
        .engine
        .create(git_clone("basens", "v1", &up, "v1", "basens"))
        .await?;
    publish(&w.engine, src.name().as_str()).await?;
    let source = w.engine.get(NS, "r.basens.v1")?;
    let self_lock = source
        .self_lock
        .clone()
        .and_then(|l| l.git)
        .expect("self lock");

    w.engine
        .create(clone_req("r", "empty-clone", "clone-1", "r.basens.v1"))
        .await?;
    let kf = read_kptfile(&w.engine, "r.empty-clone.clone-1").await?;
    let upstream = kf.upstream.clone().expect("upstream");
    assert_eq!(upstream.update_strategy, "");
    let git = upstream.git.expect("git");
    assert_eq!(
        (git.directory.as_str(), git.git_ref.as_str()),
        (self_lock.directory.as_str(), self_lock.git_ref.as_str())
    );
    // The source's identifier (from its own clone) is kept, as kpt keeps existing ones.
    assert_eq!(
        kf.metadata.annotations.get(IDENTIFIER).map(String::as_str),
        Some("kpt.dev|Kptfile|default|basens")
    );
    assert_eq!(kf.status.unwrap_or_default().conditions, vec![rendered()]);
    let ns = read_file(&w.engine, "r.empty-clone.clone-1", "namespace.yaml").await?;
    assert!(
        ns.contains("internal.kpt.dev/upstream-identifier: '|Namespace|default|example'"),
        "{ns}"
    );

    // A clone of a package without identifiers gets them all.
    let v1 = publish_init(&w.engine, "r", "plain", "v1").await?;
    w.engine.create(clone_req("r", "down", "ws", &v1)).await?;
    let kf = read_kptfile(&w.engine, "r.down.ws").await?;
    assert_eq!(
        kf.metadata.annotations.get(IDENTIFIER).map(String::as_str),
        Some("kpt.dev|Kptfile|default|down")
    );
    let ctx = read_file(&w.engine, "r.down.ws", "package-context.yaml").await?;
    assert!(
        ctx.contains("internal.kpt.dev/upstream-identifier: '|ConfigMap|default|kptfile.kpt.dev'"),
        "{ctx}"
    );

    // An upgrade adds them to what the new upstream brought.
    let down = w.engine.get(NS, "r.down.ws")?;
    let published = publish(&w.engine, down.name().as_str()).await?;
    let two = w
        .engine
        .create(crate::create::edit_req("r", "plain", "v2", &v1))
        .await?;
    let (_, mut files) = w.engine.read_resources(NS, "r.plain.v2").await?;
    files.insert(
        "added.yaml".into(),
        b"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: prod\n"
            .to_vec(),
    );
    w.engine
        .update_resources(NS, "r.plain.v2", &two.resource_version, files)
        .await?;
    let v2 = publish(&w.engine, "r.plain.v2").await?;
    let upgrade = Task {
        task_type: "upgrade".into(),
        upgrade: Some(porch_core::revision::UpgradeTask {
            old_upstream: RevisionRef { name: v1 },
            new_upstream: RevisionRef { name: v2 },
            local: RevisionRef { name: published },
            strategy: String::new(),
            ..Default::default()
        }),
        ..Task::default()
    };
    w.engine
        .create(CreateRequest {
            tasks: vec![upgrade],
            ..init_req("r", "down", "upgraded")
        })
        .await?;
    let added = read_file(&w.engine, "r.down.upgraded", "added.yaml").await?;
    assert!(
        added.contains("internal.kpt.dev/upstream-identifier: 'apps|Deployment|prod|web'"),
        "{added}"
    );
    let kf = read_kptfile(&w.engine, "r.down.upgraded").await?;
    assert_eq!(kf.upstream.map(|u| u.update_strategy), Some(String::new()));
    assert_eq!(kf.status.unwrap_or_default().conditions, vec![rendered()]);
    Ok(())
}

/// Proposes and approves Draft `name`; returns its name.
async fn publish(e: &Engine, name: &str) -> anyhow::Result<String> {
    crate::common::publish(e, name).await?;
    Ok(name.to_owned())
}
