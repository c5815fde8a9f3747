//! Creation: init, clone, edit, validation and uniqueness, and that a failed create leaves
//! nothing behind.

use porch_core::ErrorKind;
use porch_core::lifecycle::Lifecycle;
use porch_core::revision::{CloneTask, EditTask, RevisionRef, Task, UpstreamPackage};
use porch_engine::{CreateRequest, Engine, EngineError};

use crate::common::{NS, World, commit_and_tag, init_req, kptfile};

/// Creates, proposes and approves `package`/`workspace` with `init`.
pub async fn publish_init(
    e: &Engine,
    repo: &str,
    package: &str,
    ws: &str,
) -> anyhow::Result<String> {
    let d = e.create(init_req(repo, package, ws)).await?;
    let name = d.name().as_str().to_owned();
    crate::common::publish(e, &name).await?;
    Ok(name)
}

pub fn clone_req(repo: &str, package: &str, ws: &str, from: &str) -> CreateRequest {
    CreateRequest {
        tasks: vec![Task {
            task_type: "clone".into(),
            clone: Some(CloneTask {
                upstream: UpstreamPackage {
                    upstream_ref: Some(RevisionRef { name: from.into() }),
                    ..UpstreamPackage::default()
                },
                ..Default::default()
            }),
            ..Task::default()
        }],
        ..init_req(repo, package, ws)
    }
}

pub fn edit_req(repo: &str, package: &str, ws: &str, from: &str) -> CreateRequest {
    CreateRequest {
        tasks: vec![Task {
            task_type: "edit".into(),
            edit: Some(EditTask {
                source: RevisionRef { name: from.into() },
            }),
            ..Task::default()
        }],
        ..init_req(repo, package, ws)
    }
}

#[tokio::test]
async fn init_creates_a_rendered_draft() -> anyhow::Result<()> {
    let w = World::new()?;
    let url = w.empty_remote("r.git")?;
    w.register("r", &url).await?;
    let d = w.engine.create(init_req("r", "team/app", "ws1")).await?;
    assert_eq!(d.name().as_str(), "r.team.app.ws1");
    assert_eq!((d.lifecycle, d.key.revision.get()), (Lifecycle::Draft, 0));
    assert_eq!(d.tasks[0].task_type, "init");
    let (_, files) = w.engine.read_resources(NS, "r.team.app.ws1").await?;
    let kf = String::from_utf8(files["Kptfile"].clone())?;
    assert!(
        kf.contains("name: app") && kf.contains("team/app description"),
        "{kf}"
    );
    assert!(files.contains_key("package-context.yaml") && files.contains_key("README.md"));
    Ok(())
}

#[tokio::test]
async fn clone_from_a_registered_revision_sets_the_upstream() -> anyhow::Result<()> {
    let w = World::new()?;
    let url = w.empty_remote("r.git")?;
    let dir = w.remote_dir("r.git");
    commit_and_tag(
        &dir,
        &[
            ("basens/Kptfile", &kptfile("basens")),
            (
                "basens/ns.yaml",
                "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: example\n",
            ),
        ],
        "basens/v1",
    )?;
    w.register("r", &url).await?;
    let up = w
        .list()
        .into_iter()
        .find(|p| p.key.revision.get() == 1)
        .expect("basens v1 discovered");
    let d = w
        .engine
        .create(clone_req("r", "myns", "dev", up.name().as_str()))
        .await?;
    let (_, files) = w.engine.read_resources(NS, d.name().as_str()).await?;
    let kf = String::from_utf8(files["Kptfile"].clone())?;
    assert!(kf.contains("name: myns"), "{kf}");
    assert!(
        kf.contains("ref: basens/v1") && kf.contains("directory: basens"),
        "{kf}"
    );
    let commit = up
        .self_lock
        .as_ref()
        .and_then(|l| l.git.as_ref())
        .map(|g| g.commit.clone())
        .unwrap_or_default();
    assert!(!commit.is_empty() && kf.contains(&commit), "{kf}");
    assert!(files.contains_key("ns.yaml"));
    assert_eq!(d.upstream_lock, up.self_lock);

    // The placeholder is refused, and a clone of an existing package is refused.
    let placeholder = w
        .list()
        .into_iter()
        .find(|p| p.key.revision.get() == -1)
        .expect("placeholder");
    let err = w
        .engine
        .create(clone_req("r", "other", "dev", placeholder.name().as_str()))
        .await
        .expect_err("placeholder");
    assert!(err.to_string().contains("placeholder"), "{err}");
    let err = w
        .engine
        .create(clone_req("r", "basens", "dev", up.name().as_str()))
        .await
        .expect_err("exists");
    assert!(
        err.to_string()
            .contains("make subsequent revisions using `copy`"),
        "{err}"
    );
    Ok(())
}

#[tokio::test]
async fn edit_copies_a_published_revision_of_the_same_package() -> anyhow::Result<()> {
    let w = World::new()?;
    let url = w.empty_remote("r.git")?;
    w.register("r", &url).await?;
    let v1 = publish_init(&w.engine, "r", "app", "base").await?;
    let d = w.engine.create(edit_req("r", "app", "next", &v1)).await?;
    let (_, src) = w.engine.read_resources(NS, &v1).await?;
    let (_, copy) = w.engine.read_resources(NS, d.name().as_str()).await?;
    assert_eq!(src, copy);
    assert_eq!(d.tasks[0].task_type, "edit");

    // Not from another package, not from a draft.
    publish_init(&w.engine, "r", "other", "base").await?;
    let err = w
        .engine
        .create(edit_req("r", "app", "x", "r.other.base"))
        .await
        .expect_err("other package");
    assert!(err.to_string().contains("same package"), "{err}");
    let err = w
        .engine
        .create(edit_req("r", "app", "y", d.name().as_str()))
        .await
        .expect_err("draft source");
    assert!(err.to_string().contains("must be published"), "{err}");
    Ok(())
}

#[tokio::test]
async fn validation_and_uniqueness() -> anyhow::Result<()> {
    let w = World::new()?;
    let url = w.empty_remote("r.git")?;
    w.register("r", &url).await?;
    for (pkg, ws) in [
        ("Bad_Name", "ws"),
        ("a//b", "ws"),
        ("app", "WS"),
        ("app", ""),
    ] {
        let err = w
            .engine
            .create(init_req("r", pkg, ws))
            .await
            .expect_err("invalid");
        assert_eq!(err.kind(), ErrorKind::Invalid, "{pkg} {ws}: {err}");
    }
    let mut two = init_req("r", "app", "ws");
    two.tasks.push(two.tasks[0].clone());
    assert!(
        w.engine
            .create(two)
            .await
            .expect_err("two tasks")
            .to_string()
            .contains("more than one task")
    );
    let mut labelled = init_req("r", "app", "ws");
    labelled
        .labels
        .insert(porch_engine::LATEST_REVISION_LABEL.into(), "true".into());
    assert_eq!(
        w.engine.create(labelled).await.expect_err("label").kind(),
        ErrorKind::Invalid
    );
    let err = w
        .engine
        .create(init_req("nope", "app", "ws"))
        .await
        .expect_err("no repo");
    assert_eq!(err.kind(), ErrorKind::NotFound);

    // Same (repo, package, workspace), also for a nested path.
    w.engine.create(init_req("r", "a/b", "ws")).await?;
    let err = w
        .engine
        .create(init_req("r", "a/b", "ws"))
        .await
        .expect_err("duplicate");
    assert_eq!(err.kind(), ErrorKind::AlreadyExists, "{err}");
    // Nesting under a published package is refused.
    publish_init(&w.engine, "r", "top", "v").await?;
    let err = w
        .engine
        .create(init_req("r", "top/sub", "ws"))
        .await
        .expect_err("nested");
    assert!(err.to_string().contains("cannot be nested"), "{err}");
    let err = w
        .engine
        .create(init_req("r", "top", "again"))
        .await
        .expect_err("init of existing package");
    assert_eq!(err.kind(), ErrorKind::AlreadyExists);
    Ok(())
}

#[tokio::test]
async fn a_failed_create_leaves_nothing_behind() -> anyhow::Result<()> {
    let w = World::new()?;
    let url = w.empty_remote("r.git")?;
    let dir = w.remote_dir("r.git");
    // A published package whose pipeline cannot render.
    let bad = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: bad\npipeline:\n  mutators:\n  - image: ghcr.io/kptdev/krm-functions-catalog/no-such-function:v1\n";
    commit_and_tag(&dir, &[("bad/Kptfile", bad)], "bad/v1")?;
    w.register("r", &url).await?;
    let before = w.list();
    let up = before
        .iter()
        .find(|p| p.key.revision.get() == 1)
        .expect("bad v1");
    let err = w
        .engine
        .create(clone_req("r", "copy", "ws", up.name().as_str()))
        .await
        .expect_err("render fails");
    assert!(
        matches!(err, EngineError::Render { pushed: false, .. }),
        "{err:?}"
    );
    let err = w
        .engine
        .create(clone_req("r", "copy2", "ws", "r.missing.ws"))
        .await
        .expect_err("no source");
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert_eq!(w.list(), before);
    assert_eq!(w.stored_drafts()?, 0);
    // The name is still free.
    let ok = w.engine.create(init_req("r", "copy", "ws")).await?;
    assert_eq!(ok.name().as_str(), "r.copy.ws");
    Ok(())
}

#[tokio::test]
async fn upgrade_merges_the_new_upstream_into_a_new_local_draft() -> anyhow::Result<()> {
    let w = World::new()?;
    let url = w.empty_remote("r.git")?;
    w.register("r", &url).await?;
    let e = &w.engine;
    let v1 = publish_init(e, "r", "base", "one").await?;
    // Downstream: a published clone of base v1 with a local file.
    let d = e.create(clone_req("r", "down", "ws", &v1)).await?;
    let (_, mut files) = e.read_resources(NS, d.name().as_str()).await?;
    files.insert(
        "local.yaml".into(),
        b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: local\n".to_vec(),
    );
    e.update_resources(NS, d.name().as_str(), &d.resource_version, files)
        .await?;
    let local = d.name().as_str().to_owned();
    crate::common::publish(e, &local).await?;
    // Upstream v2 adds a file.
    let two = e.create(edit_req("r", "base", "two", &v1)).await?;
    let (_, mut files) = e.read_resources(NS, two.name().as_str()).await?;
    files.insert(
        "added.yaml".into(),
        b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: added\n".to_vec(),
    );
    e.update_resources(NS, two.name().as_str(), &two.resource_version, files)
        .await?;
    let v2 = two.name().as_str().to_owned();
    crate::common::publish(e, &v2).await?;

    let upgrade = Task {
        task_type: "upgrade".into(),
        upgrade: Some(porch_core::revision::UpgradeTask {
            old_upstream: RevisionRef { name: v1.clone() },
            new_upstream: RevisionRef { name: v2.clone() },
            local: RevisionRef {
                name: local.clone(),
            },
            strategy: String::new(),
            ..Default::default()
        }),
        ..Task::default()
    };
    let up = e
        .create(CreateRequest {
            tasks: vec![upgrade.clone()],
            ..init_req("r", "down", "upgraded")
        })
        .await?;
    let (_, merged) = e.read_resources(NS, up.name().as_str()).await?;
    assert!(
        merged.contains_key("added.yaml") && merged.contains_key("local.yaml"),
        "{:?}",
        merged.keys()
    );
    let kf = String::from_utf8(merged["Kptfile"].clone())?;
    assert!(
        kf.contains("ref: base/v2") && kf.contains("name: down"),
        "{kf}"
    );

    // The local package must be the one created.
    let err = e
        .create(CreateRequest {
            tasks: vec![upgrade],
            ..init_req("r", "base", "wrong")
        })
        .await
        .expect_err("other package");
    assert_eq!(err.kind(), ErrorKind::Invalid);
    Ok(())
}
