//! The index: discovery of published revisions, latest-revision labels, sync events,
//! a broken repository not failing lists, drafts surviving a restart.

use porch_core::lifecycle::Lifecycle;
use porch_core::names::RepositoryName;
use porch_core::store::EventType;
use porch_engine::{Engine, ListOptions};

use crate::common::{NS, World, commit_and_tag, init_req, kptfile, summary};

#[tokio::test]
async fn discovers_published_revisions_with_latest_label() -> anyhow::Result<()> {
    let w = World::new()?;
    let url = w.empty_remote("blueprints.git")?;
    let dir = w.remote_dir("blueprints.git");
    commit_and_tag(&dir, &[("basens/Kptfile", &kptfile("basens"))], "basens/v1")?;
    commit_and_tag(
        &dir,
        &[(
            "basens/ns.yaml",
            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n",
        )],
        "basens/v2",
    )?;
    commit_and_tag(&dir, &[("net/upf/Kptfile", &kptfile("upf"))], "net/upf/v1")?;
    w.register("bp", &url).await?;

    let all = w.list();
    let latest: Vec<String> = summary(&all)
        .into_iter()
        .filter(|s| s.ends_with("latest=true"))
        .collect();
    assert_eq!(latest.len(), 2, "{all:#?}");
    assert!(latest[0].contains("rev=2 Published"), "{latest:?}");
    assert!(
        latest[1].starts_with("bp.net.upf.") && latest[1].contains("rev=1"),
        "{latest:?}"
    );
    // The placeholder exists and is never latest.
    let placeholders: Vec<_> = all.iter().filter(|p| p.key.revision.get() == -1).collect();
    assert_eq!(placeholders.len(), 2);
    assert!(
        placeholders
            .iter()
            .all(|p| !p.latest && p.name().as_str().ends_with(".main"))
    );
    // Listing order: per package, -1 first.
    assert_eq!(all[0].key.package.as_str(), "basens");
    assert_eq!(all[0].key.revision.get(), -1);

    // get by name, filters.
    let v1 = all
        .iter()
        .find(|p| p.key.package.as_str() == "basens" && p.key.revision.get() == 1)
        .expect("v1 listed");
    let got = w.engine.get(NS, v1.name().as_str())?;
    assert_eq!(&got, v1);
    assert!(
        !got.resource_version.is_empty(),
        "git revisions carry their commit"
    );
    let only_upf = w.engine.list(&ListOptions {
        package: Some("net/upf".into()),
        ..ListOptions::default()
    });
    assert_eq!(only_upf.len(), 2);
    assert_eq!(
        w.engine
            .get(NS, "bp.nothing.here")
            .expect_err("absent")
            .kind(),
        porch_core::ErrorKind::NotFound
    );
    Ok(())
}

#[tokio::test]
async fn sync_emits_events_and_moves_the_latest_label() -> anyhow::Result<()> {
    let w = World::new()?;
    let url = w.empty_remote("r.git")?;
    let dir = w.remote_dir("r.git");
    commit_and_tag(&dir, &[("app/Kptfile", &kptfile("app"))], "app/v1")?;
    w.register("r", &url).await?;
    let mut events = w.engine.subscribe();

    // Someone else publishes v2 directly in git.
    commit_and_tag(
        &dir,
        &[(
            "app/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
        )],
        "app/v2",
    )?;
    w.engine.sync(NS, &RepositoryName::new("r")?).await?;

    let mut seen = Vec::new();
    while let Ok(e) = events.try_recv() {
        seen.push((
            e.event_type,
            e.revision.key.revision.get(),
            e.revision.latest,
        ));
    }
    assert!(seen.contains(&(EventType::Added, 2, true)), "{seen:?}");
    assert!(
        seen.contains(&(EventType::Modified, 1, false)),
        "v1 loses the label: {seen:?}"
    );
    let latest: Vec<i64> = w
        .list()
        .iter()
        .filter(|p| p.latest)
        .map(|p| p.key.revision.get())
        .collect();
    assert_eq!(latest, vec![2]);
    Ok(())
}

#[tokio::test]
async fn a_broken_repository_does_not_fail_lists() -> anyhow::Result<()> {
    let w = World::new()?;
    let url = w.empty_remote("good.git")?;
    commit_and_tag(
        &w.remote_dir("good.git"),
        &[("a/Kptfile", &kptfile("a"))],
        "a/v1",
    )?;
    w.register("good", &url).await?;
    let missing = crate::common::url(&w.remote_dir("missing.git"));
    // Registration succeeds; the repository is just not ready.
    w.register("broken", &missing).await?;
    let status = w
        .engine
        .repository_status(NS, &RepositoryName::new("broken")?)
        .expect("registered");
    assert!(!status.ready);
    assert_eq!(
        w.list().len(),
        2,
        "the good repository's revisions are listed"
    );
    assert!(
        w.engine
            .sync(NS, &RepositoryName::new("broken")?)
            .await
            .is_err()
    );
    Ok(())
}

#[tokio::test]
async fn drafts_survive_a_restart() -> anyhow::Result<()> {
    let w = World::new()?;
    let url = w.empty_remote("r.git")?;
    w.register("r", &url).await?;
    let d = w.engine.create(init_req("r", "app", "ws")).await?;
    assert_eq!(d.lifecycle, Lifecycle::Draft);
    // A second engine on the same store (the first one's state is not shared).
    let engine2 = Engine::new(
        w.store.clone(),
        std::sync::Arc::new(krm_functions::Builtins),
    );
    let spec = porch_git::RepoSpec::new(RepositoryName::new("r")?, url);
    let data = w.tmp.path().join("data2");
    let repo = porch_git::GitRepository::open(
        &porch_git::MirrorPool::new(&data),
        &porch_git::GitOptions::new(&data),
        spec,
    )?;
    engine2.register(NS, repo).await?;
    let again = engine2.get(NS, "r.app.ws")?;
    assert_eq!(again, d);
    Ok(())
}

#[tokio::test]
async fn kptfile_fields_of_revisions_found_by_a_sync() -> anyhow::Result<()> {
    use porch_core::repository::Repository;
    let w = World::new()?;
    let url = w.empty_remote("r.git")?;
    let dir = w.remote_dir("r.git");
    let labelled = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n  labels:\n    tier: web\ninfo:\n  readinessGates:\n  - conditionType: Ready\n";
    commit_and_tag(&dir, &[("app/Kptfile", labelled)], "app/v1")?;
    let repo = w.register("r", &url).await?;
    let v1 = w.engine.get(NS, "r.app.v1")?;
    assert_eq!(
        v1.package_metadata.labels.get("tier").map(String::as_str),
        Some("web")
    );
    assert_eq!(v1.readiness_gates, vec!["Ready".to_owned()]);

    // A report applied from outside (a sync loop callback): fields follow on the queue.
    commit_and_tag(&dir, &[("other/Kptfile", labelled)], "other/v1")?;
    let mut events = w.engine.subscribe();
    let report = repo.sync().await?;
    w.engine
        .apply_change_report(NS, &RepositoryName::new("r")?, report);
    for _ in 0..100 {
        if w.engine
            .get(NS, "r.other.v1")
            .is_ok_and(|p| !p.package_metadata.labels.is_empty())
        {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let other = w.engine.get(NS, "r.other.v1")?;
    assert_eq!(other.readiness_gates, vec!["Ready".to_owned()]);
    let seen = crate::common::drain(&mut events);
    assert!(
        seen.contains(&"MODIFIED r.other.v1 Published".to_owned()),
        "{seen:?}"
    );
    Ok(())
}
