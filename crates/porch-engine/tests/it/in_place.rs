//! Drafts changed in place through their tasks (`Engine::update_tasks`): an appended
//! `update` task moves a clone to another upstream revision, a subpackage task clones or
//! upgrades an independent subpackage; what is refused leaves the Draft as it was.

use porch_core::ErrorKind;
use porch_core::revision::{
    CloneTask, RevisionRef, Task, UpdateTask, UpgradeTask, UpstreamPackage,
};
use porch_engine::Engine;

use crate::common::{NS, World, publish};
use crate::create::{clone_req, edit_req, publish_init};

fn cm(name: &str, a: &str, b: &str) -> Vec<u8> {
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  a: \"{a}\"\n  b: \"{b}\"\n")
        .into_bytes()
}

/// Sets `path` of Draft `name` to `bytes`.
async fn put(e: &Engine, name: &str, path: &str, bytes: Vec<u8>) -> anyhow::Result<()> {
    let pr = e.get(NS, name)?;
    let (_, mut files) = e.read_resources(NS, name).await?;
    files.insert(path.to_owned(), bytes);
    e.update_resources(NS, name, &pr.resource_version, files)
        .await?;
    Ok(())
}

/// `base` v1 (cm a=1) and v2 (cm a=2) in repository `r`: their names.
async fn upstream(e: &Engine) -> anyhow::Result<(String, String)> {
    let v1 = publish_init(e, "r", "base", "one").await?;
    // publish_init publishes an empty package: give v2 the content, v1's comes from a copy.
    let one = e.create(edit_req("r", "base", "onebis", &v1)).await?;
    put(e, one.name().as_str(), "cm.yaml", cm("c", "1", "x")).await?;
    publish(e, one.name().as_str()).await?;
    let two = e
        .create(edit_req("r", "base", "two", one.name().as_str()))
        .await?;
    put(e, two.name().as_str(), "cm.yaml", cm("c", "2", "x")).await?;
    publish(e, two.name().as_str()).await?;
    Ok((
        one.name().as_str().to_owned(),
        two.name().as_str().to_owned(),
    ))
}

fn by_name(name: &str) -> UpstreamPackage {
    UpstreamPackage {
        upstream_ref: Some(RevisionRef { name: name.into() }),
        ..UpstreamPackage::default()
    }
}

/// An `update` task naming revision `name` as the new upstream.
fn update_to(name: &str) -> Task {
    Task {
        task_type: "update".into(),
        update: Some(UpdateTask {
            upstream: by_name(name),
        }),
        ..Task::default()
    }
}

async fn text(e: &Engine, name: &str, path: &str) -> anyhow::Result<String> {
    let (_, files) = e.read_resources(NS, name).await?;
    Ok(String::from_utf8(
        files.get(path).cloned().unwrap_or_default(),
    )?)
}

/// Repository `r` with `base` v1 and v2 (see `upstream`) and a Draft cloned from v1 whose
/// ConfigMap has a local edit: the two upstream names and the Draft's.
async fn edited_clone(w: &World) -> anyhow::Result<(String, String, String)> {
    let url = w.empty_remote("r.git")?;
    w.register("r", &url).await?;
    let e = &w.engine;
    let (v1, v2) = upstream(e).await?;
    let d = e.create(clone_req("r", "down", "ws", &v1)).await?;
    let name = d.name().as_str().to_owned();
    put(e, &name, "cm.yaml", cm("c", "1", "local")).await?;
    Ok((v1, v2, name))
}

#[tokio::test]
async fn an_appended_update_task_merges_the_draft_onto_the_new_upstream() -> anyhow::Result<()> {
    let w = World::new()?;
    let (v1, v2, name) = edited_clone(&w).await?;
    let e = &w.engine;
    let before = e.get(NS, &name)?;
    let mut tasks = before.tasks.clone();
    tasks.push(update_to(&v2));

    // A stale resourceVersion is a conflict, and nothing changes.
    let err = e
        .update_tasks(NS, &name, "1", tasks.clone())
        .await
        .expect_err("stale");
    assert_eq!(err.kind(), ErrorKind::Conflict, "{err}");
    assert_eq!(e.get(NS, &name)?.tasks, before.tasks);

    let moved = e
        .update_tasks(NS, &name, &before.resource_version, tasks.clone())
        .await?
        .expect("moved");
    assert_eq!(moved.tasks, tasks);
    let up = e.get(NS, &v2)?;
    assert_eq!(moved.upstream_lock, up.self_lock);
    let cm = text(e, &name, "cm.yaml").await?;
    assert!(
        cm.contains("a: \"2\"") && cm.contains("b: \"local\""),
        "{cm}"
    );

    // The same tasks again ask for nothing.
    assert!(
        e.update_tasks(NS, &name, &moved.resource_version, tasks.clone())
            .await?
            .is_none()
    );
    // A published revision's tasks are not changed.
    publish(e, &name).await?;
    let published = e.get(NS, &name)?;
    let mut again = published.tasks.clone();
    again.push(update_to(&v1));
    let err = e
        .update_tasks(NS, &name, &published.resource_version, again)
        .await
        .expect_err("published");
    assert_eq!(err.kind(), ErrorKind::Invalid, "{err}");
    Ok(())
}

/// What Go Porch refuses of a Draft's tasks is refused with its words, and the Draft
/// (tasks, files, resourceVersion) is as it was.
#[tokio::test]
async fn refused_task_changes_leave_the_draft_as_it_was() -> anyhow::Result<()> {
    let w = World::new()?;
    let (_, v2, name) = edited_clone(&w).await?;
    let e = &w.engine;
    let before = e.get(NS, &name)?;
    let files_before = text(e, &name, "cm.yaml").await?;
    let init = Task::init(Default::default());
    let upgrade = Task {
        task_type: "upgrade".into(),
        ..Task::default()
    };
    let with = |extra: &[Task]| [before.tasks.clone(), extra.to_vec()].concat();
    for (tasks, want) in [
        (vec![], "removing tasks is not yet supported"),
        (vec![init], "changing task types is not yet supported"),
        (
            with(&[update_to(&v2), update_to(&v2)]),
            "can only append one task at a time",
        ),
        (
            with(&[upgrade]),
            "appended task is type \"upgrade\", must be type \"update\"",
        ),
    ] {
        let err = e
            .update_tasks(NS, &name, &before.resource_version, tasks)
            .await
            .expect_err(want);
        assert_eq!(err.kind(), ErrorKind::Invalid, "{err}");
        assert_eq!(err.to_string(), want);
        let now = e.get(NS, &name)?;
        assert_eq!(now.tasks, before.tasks);
        assert_eq!(now.resource_version, before.resource_version);
        assert_eq!(text(e, &name, "cm.yaml").await?, files_before);
    }

    // An init Draft has no upstream to update from.
    let fresh = e
        .create(crate::common::init_req("r", "fresh", "ws"))
        .await?;
    let mut tasks = fresh.tasks.clone();
    tasks.push(update_to(&v2));
    let err = e
        .update_tasks(NS, fresh.name().as_str(), &fresh.resource_version, tasks)
        .await
        .expect_err("not cloned");
    assert_eq!(
        err.to_string(),
        "upstream source not found for package rev \"fresh\"; only cloned packages can be updated"
    );
    Ok(())
}

#[tokio::test]
async fn subpackage_tasks_are_applied_without_being_recorded() -> anyhow::Result<()> {
    let w = World::new()?;
    let url = w.empty_remote("r.git")?;
    w.register("r", &url).await?;
    let e = &w.engine;
    let (v1, v2) = upstream(e).await?;
    let parent = e
        .create(crate::common::init_req("r", "parent", "ws"))
        .await?;
    let name = parent.name().as_str().to_owned();
    let with = |task: Task| vec![parent.tasks[0].clone(), task];
    let clone = Task {
        task_type: "clone".into(),
        clone: Some(CloneTask {
            upstream: by_name(&v1),
            subpackage_dir: "sub/app".into(),
            ..CloneTask::default()
        }),
        ..Task::default()
    };
    let cloned = e
        .update_tasks(NS, &name, &parent.resource_version, with(clone.clone()))
        .await?
        .expect("cloned");
    assert_eq!(cloned.tasks, parent.tasks);
    let kf = text(e, &name, "sub/app/Kptfile").await?;
    assert!(
        kf.contains("name: app") && kf.contains("ref: base/v"),
        "{kf}"
    );
    assert!(
        text(e, &name, "sub/app/cm.yaml")
            .await?
            .contains("a: \"1\"")
    );

    // Into the same place again: refused, nothing changed.
    let err = e
        .update_tasks(NS, &name, &cloned.resource_version, with(clone))
        .await
        .expect_err("occupied");
    assert!(
        err.to_string()
            .contains("parent already has a subpackage at \"sub/app\""),
        "{err}"
    );

    put(e, &name, "sub/app/cm.yaml", cm("c", "1", "local")).await?;
    let now = e.get(NS, &name)?;
    let upgrade = |dir: &str| Task {
        task_type: "upgrade".into(),
        upgrade: Some(UpgradeTask {
            old_upstream: RevisionRef { name: v1.clone() },
            new_upstream: RevisionRef { name: v2.clone() },
            local: RevisionRef { name: name.clone() },
            strategy: String::new(),
            subpackage_dir: dir.into(),
        }),
        ..Task::default()
    };
    let err = e
        .update_tasks(NS, &name, &now.resource_version, with(upgrade("elsewhere")))
        .await
        .expect_err("no such subpackage");
    assert!(
        err.to_string()
            .contains("subpackage \"elsewhere\" not found"),
        "{err}"
    );
    let upgraded = e
        .update_tasks(NS, &name, &now.resource_version, with(upgrade("sub/app")))
        .await?
        .expect("upgraded");
    assert_eq!(upgraded.tasks, parent.tasks);
    let cm = text(e, &name, "sub/app/cm.yaml").await?;
    assert!(
        cm.contains("a: \"2\"") && cm.contains("b: \"local\""),
        "{cm}"
    );
    let up = e.get(NS, &v2)?;
    let commit = up
        .self_lock
        .as_ref()
        .and_then(|l| l.git.as_ref())
        .map(|g| g.commit.clone())
        .unwrap_or_default();
    assert!(text(e, &name, "sub/app/Kptfile").await?.contains(&commit));
    Ok(())
}
