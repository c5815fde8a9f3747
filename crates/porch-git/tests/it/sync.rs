//! Sync: change reports and the scheduled loop.

use std::sync::Arc;
use std::time::Duration;

use porch_core::lifecycle::Lifecycle;
use porch_core::repository::{ChangeReport, Repository};
use porch_git::spawn_sync_loop;

use crate::common::{Remote, open, publish_req, spec};

fn names(r: &ChangeReport) -> (Vec<String>, Vec<String>, Vec<String>) {
    let mut a: Vec<String> = r.added.iter().map(|m| m.key.name().to_string()).collect();
    let mut c: Vec<String> = r
        .changed
        .iter()
        .map(|m| format!("{} {}", m.key.name(), m.lifecycle))
        .collect();
    let mut d: Vec<String> = r.removed.iter().map(|k| k.name().to_string()).collect();
    a.sort();
    c.sort();
    d.sort();
    (a, c, d)
}

#[tokio::test]
async fn sync_reports_added_changed_removed() -> anyhow::Result<()> {
    let remote = Remote::new()?;
    let url = remote.empty_repo("changes.git")?;
    let (_pa, reader) = open(&remote.data_dir("reader"), spec("ch", &url))?;
    let (_pb, writer) = open(&remote.data_dir("writer"), spec("ch", &url))?;
    assert!(reader.sync().await?.is_empty());
    writer.sync().await?;

    let v1 = writer.publish(publish_req("pkg", "one")).await?;
    let (a, c, d) = names(&reader.sync().await?);
    assert_eq!(a, vec!["ch.pkg.main", "ch.pkg.one"]);
    assert!(c.is_empty() && d.is_empty());
    assert!(
        reader.sync().await?.is_empty(),
        "a second sync without remote changes reports nothing"
    );

    writer.set_deletion_proposed(v1.key.clone(), true).await?;
    let (a, c, d) = names(&reader.sync().await?);
    assert!(a.is_empty() && d.is_empty());
    assert_eq!(
        c,
        vec![format!("ch.pkg.one {}", Lifecycle::DeletionProposed)]
    );

    writer.delete(v1.key.clone(), None).await?;
    let (a, c, d) = names(&reader.sync().await?);
    assert!(a.is_empty() && c.is_empty());
    assert_eq!(d, vec!["ch.pkg.one"]);

    // The placeholder's commit follows the branch head: a new revision changes it.
    writer.publish(publish_req("pkg", "two")).await?;
    let (a, c, _) = names(&reader.sync().await?);
    assert_eq!(a, vec!["ch.pkg.two"]);
    assert_eq!(c, vec![format!("ch.pkg.main {}", Lifecycle::Published)]);
    Ok(())
}

#[tokio::test]
async fn scheduled_sync_loop_reports_changes() -> anyhow::Result<()> {
    let remote = Remote::new()?;
    let url = remote.empty_repo("loop.git")?;
    let mut s = spec("lp", &url);
    s.sync_schedule = Some("* * * * *".into());
    let (_pa, reader) = open(&remote.data_dir("reader"), s)?;
    let (_pb, writer) = open(&remote.data_dir("writer"), spec("lp", &url))?;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    // A cron schedule fires at minute boundaries: check it is accepted, then use the
    // period form for a fast test.
    drop(spawn_sync_loop(
        Arc::clone(&reader),
        Duration::from_secs(60),
        Arc::new(|_, _| {}),
    )?);
    let mut fast = spec("lp", &url);
    fast.sync_schedule = None;
    let (_pc, polled) = open(&remote.data_dir("polled"), fast)?;
    let handle = spawn_sync_loop(
        Arc::clone(&polled),
        Duration::from_millis(50),
        Arc::new(move |name, report| {
            let _ = tx.send((name.to_string(), report));
        }),
    )?;
    // An invalid schedule is refused up front.
    let mut bad = spec("bad", &url);
    bad.sync_schedule = Some("every minute".into());
    let (_pd, bad) = open(&remote.data_dir("bad"), bad)?;
    assert!(spawn_sync_loop(bad, Duration::from_secs(1), Arc::new(|_, _| {})).is_err());

    writer.publish(publish_req("pkg", "ws")).await?;
    let mut seen = Vec::new();
    while !seen.iter().any(|n: &String| n == "lp.pkg.ws") {
        let (repo, report) = tokio::time::timeout(Duration::from_secs(30), rx.recv())
            .await?
            .ok_or_else(|| anyhow::anyhow!("sync loop stopped"))?;
        assert_eq!(repo, "lp");
        seen.extend(report.added.iter().map(|m| m.key.name().to_string()));
    }
    drop(handle);
    assert!(polled.status().ready);
    Ok(())
}
