//! Watch semantics against the real server with a kube-rs client: resumption from a
//! resourceVersion (exactly once, in order, selectors applied), 410 Gone for compacted versions,
//! streaming lists, and many concurrent watchers.

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::Server;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DeleteParams, PostParams, WatchEvent, WatchParams};

fn secret(name: &str, team: &str, value: &str) -> Secret {
    let mut s = Secret::default();
    s.metadata.name = Some(name.into());
    s.metadata.labels = Some(BTreeMap::from([("team".to_string(), team.to_string())]));
    s.string_data = Some(BTreeMap::from([("v".to_string(), value.to_string())]));
    s
}

fn rv_of(s: &Secret) -> u64 {
    s.metadata
        .resource_version
        .as_deref()
        .and_then(|r| r.parse().ok())
        .expect("numeric resourceVersion")
}

/// (type, name, resourceVersion) of a watch event.
fn summarize(ev: &WatchEvent<Secret>) -> Option<(String, String, u64)> {
    let (t, s) = match ev {
        WatchEvent::Added(s) => ("ADDED", s),
        WatchEvent::Modified(s) => ("MODIFIED", s),
        WatchEvent::Deleted(s) => ("DELETED", s),
        _ => return None,
    };
    Some((
        t.to_string(),
        s.metadata.name.clone().unwrap_or_default(),
        rv_of(s),
    ))
}

async fn collect(
    api: &Api<Secret>,
    wp: &WatchParams,
    from: &str,
    n: usize,
) -> Vec<(String, String, u64)> {
    let stream = api.watch(wp, from).await.expect("watch starts");
    let mut stream = Box::pin(stream);
    let mut out = Vec::new();
    while out.len() < n {
        let next = tokio::time::timeout(Duration::from_secs(20), stream.next()).await;
        match next {
            Ok(Some(Ok(ev))) => {
                if let Some(s) = summarize(&ev) {
                    out.push(s);
                }
            }
            Ok(Some(Err(e))) => panic!("watch error: {e}"),
            Ok(None) => break,
            Err(_) => panic!("timed out after {} events: {out:?}", out.len()),
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn watch_from_resource_version_sees_every_change_once_in_order() {
    let s = Server::start();
    let client = s.client().await;
    let api: Api<Secret> = Api::namespaced(client.clone(), "default");
    let pp = PostParams::default();
    let start = api
        .create(&pp, &secret("base", "x", "0"))
        .await
        .expect("create base");
    let r = rv_of(&start).to_string();
    let x = WatchParams::default().labels("team=x");

    // A live watcher (started before the changes) and, later, a replaying one (started after).
    let live_api = api.clone();
    let live_r = r.clone();
    let live_wp = x.clone();
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
    let live = tokio::spawn(async move {
        let stream = live_api.watch(&live_wp, &live_r).await.expect("live watch");
        let _ = ready_tx.send(());
        let mut stream = Box::pin(stream);
        let mut out = Vec::new();
        while out.len() < 9 {
            match tokio::time::timeout(Duration::from_secs(20), stream.next()).await {
                Ok(Some(Ok(ev))) => out.extend(summarize(&ev)),
                other => panic!("live watch ended early: {other:?} after {out:?}"),
            }
        }
        out
    });
    ready_rx.await.expect("live watch started");

    // The changes, and what a team=x watcher must see for each.
    let mut expected = Vec::new();
    let a = api.create(&pp, &secret("a", "x", "1")).await.expect("a");
    expected.push(("ADDED".to_string(), "a".to_string(), rv_of(&a)));
    let b = api.create(&pp, &secret("b", "y", "1")).await.expect("b");
    let _ = b; // not selected
    let mut a2 = api.get("a").await.expect("get a");
    a2.string_data = Some(BTreeMap::from([("v".into(), "2".into())]));
    let a2 = api.replace("a", &pp, &a2).await.expect("update a");
    expected.push(("MODIFIED".into(), "a".into(), rv_of(&a2)));
    // b moves into the selection: ADDED; a moves out: DELETED.
    let mut b2 = api.get("b").await.expect("get b");
    b2.metadata.labels = Some(BTreeMap::from([("team".into(), "x".into())]));
    let b2 = api.replace("b", &pp, &b2).await.expect("relabel b");
    expected.push(("ADDED".into(), "b".into(), rv_of(&b2)));
    let mut a3 = api.get("a").await.expect("get a");
    a3.metadata.labels = Some(BTreeMap::from([("team".into(), "y".into())]));
    let a3 = api.replace("a", &pp, &a3).await.expect("relabel a");
    expected.push(("DELETED".into(), "a".into(), rv_of(&a3)));
    // Changes outside the selection are invisible.
    let mut a4 = api.get("a").await.expect("get a");
    a4.string_data = Some(BTreeMap::from([("v".into(), "3".into())]));
    api.replace("a", &pp, &a4).await.expect("update a outside");
    for i in 0..3 {
        let c = api
            .create(&pp, &secret(&format!("c{i}"), "x", "1"))
            .await
            .expect("c");
        expected.push(("ADDED".into(), format!("c{i}"), rv_of(&c)));
    }
    let deleted = api
        .delete("c1", &DeleteParams::default())
        .await
        .expect("delete c1");
    let _ = deleted;
    let c1_gone_rv = {
        // The DELETED event carries the deletion's resourceVersion: the next one after c2's.
        expected.last().map(|e| e.2 + 1).expect("events")
    };
    expected.push(("DELETED".into(), "c1".into(), c1_gone_rv));
    api.delete("a", &DeleteParams::default())
        .await
        .expect("delete a (not selected)");
    let last = api.create(&pp, &secret("z", "x", "1")).await.expect("z");
    expected.push(("ADDED".into(), "z".into(), rv_of(&last)));
    assert_eq!(expected.len(), 9);

    let live = live.await.expect("live task");
    assert_eq!(live, expected, "live watch");
    let replayed = collect(&api, &x, &r, expected.len()).await;
    assert_eq!(replayed, expected, "watch replayed from the log");

    // Resource versions increase strictly.
    assert!(expected.windows(2).all(|w| w[0].2 < w[1].2));

    // Field selectors apply to watch as well.
    let by_name = WatchParams::default().fields("metadata.name=z");
    let z_only = collect(&api, &by_name, &r, 1).await;
    assert_eq!(
        z_only,
        vec![("ADDED".to_string(), "z".to_string(), rv_of(&last))]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn compacted_resource_version_gets_410() {
    let s = Server::start_with(&["--event-retention", "10"]);
    let client = s.client().await;
    let api: Api<Secret> = Api::namespaced(client, "default");
    let first = api
        .create(&PostParams::default(), &secret("s0", "x", "0"))
        .await
        .expect("create");
    for i in 1..40 {
        api.create(&PostParams::default(), &secret(&format!("s{i}"), "x", "0"))
            .await
            .expect("create");
    }
    let err = match api
        .watch(&WatchParams::default(), &rv_of(&first).to_string())
        .await
    {
        Ok(stream) => Box::pin(stream).try_next().await.expect_err("410 expected"),
        Err(e) => e,
    };
    match err {
        kube::Error::Api(status) => {
            assert_eq!(status.code, 410, "{status:?}");
            assert_eq!(status.reason, "Expired");
        }
        other => panic!("expected 410, got {other}"),
    }
    // A fresh list gives a resumable version.
    let list = api.list(&Default::default()).await.expect("list");
    assert_eq!(list.items.len(), 40);
    let rv = list.metadata.resource_version.expect("list rv");
    api.create(&PostParams::default(), &secret("after", "x", "0"))
        .await
        .expect("create");
    let seen = collect(&api, &WatchParams::default(), &rv, 1).await;
    assert_eq!(seen[0].1, "after");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn hundred_concurrent_watchers_see_every_event() {
    let s = Server::start();
    let client = s.client().await;
    let api: Api<Secret> = Api::namespaced(client, "default");
    let base = api
        .create(&PostParams::default(), &secret("base", "x", "0"))
        .await
        .expect("create");
    let r = rv_of(&base).to_string();
    const EVENTS: usize = 30;
    let mut watchers = Vec::new();
    for _ in 0..100 {
        let api = api.clone();
        let r = r.clone();
        watchers.push(tokio::spawn(async move {
            collect(&api, &WatchParams::default(), &r, EVENTS).await
        }));
    }
    let mut expected = Vec::new();
    for i in 0..EVENTS {
        let c = api
            .create(&PostParams::default(), &secret(&format!("w{i}"), "x", "0"))
            .await
            .expect("create");
        expected.push(("ADDED".to_string(), format!("w{i}"), rv_of(&c)));
    }
    for w in watchers {
        assert_eq!(w.await.expect("watcher"), expected);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn streaming_list_ends_initial_events_with_a_bookmark() {
    use kube::runtime::watcher::{self, Event};
    let s = Server::start();
    let client = s.client().await;
    let api: Api<Secret> = Api::namespaced(client, "default");
    for i in 0..3 {
        api.create(&PostParams::default(), &secret(&format!("i{i}"), "x", "0"))
            .await
            .expect("create");
    }
    let mut stream = Box::pin(watcher::watcher(
        api.clone(),
        watcher::Config::default().streaming_lists(),
    ));
    let mut initial = Vec::new();
    loop {
        match tokio::time::timeout(Duration::from_secs(20), stream.try_next()).await {
            Ok(Ok(Some(Event::InitApply(s)))) => initial.push(s.metadata.name.unwrap_or_default()),
            Ok(Ok(Some(Event::InitDone))) => break,
            Ok(Ok(Some(_))) => {}
            other => panic!("unexpected: {other:?}"),
        }
    }
    initial.sort();
    assert_eq!(initial, vec!["i0", "i1", "i2"]);
    api.create(&PostParams::default(), &secret("later", "x", "0"))
        .await
        .expect("create");
    loop {
        match tokio::time::timeout(Duration::from_secs(20), stream.try_next()).await {
            Ok(Ok(Some(Event::Apply(s)))) => {
                assert_eq!(s.metadata.name.as_deref(), Some("later"));
                break;
            }
            Ok(Ok(Some(_))) => {}
            other => panic!("unexpected: {other:?}"),
        }
    }
}
