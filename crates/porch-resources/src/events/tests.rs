//! The Event backends, the writer and the pruner on a real store.

use std::time::Duration;

use porch_apiserver::{ListOptions, Registry, RequestContext, Resource, Selectors, WatchHub};
use porch_core::store::MetadataStore;
use porch_store::{RedbStore, StoreOptions};
use serde_json::{Value, json};

use super::*;

struct Fixture {
    _dir: tempfile::TempDir,
    core: Resource,
    new: Resource,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let store: Arc<dyn MetadataStore> = Arc::new(
        RedbStore::open(&dir.path().join("store.redb"), StoreOptions::default()).expect("store"),
    );
    let hub = WatchHub::attach(&store, 64);
    let mut reg = Registry::new();
    register(&mut reg, &store, &hub);
    let core = reg.find("", "v1", "events").cloned().expect("core events");
    let new = reg
        .find("events.k8s.io", "v1", "events")
        .cloned()
        .expect("events.k8s.io events");
    Fixture {
        _dir: dir,
        core,
        new,
    }
}

fn ctx() -> RequestContext {
    RequestContext::default()
}

fn repo() -> ObjectRef {
    ObjectRef {
        api_version: "config.porch.kpt.dev/v1alpha1".into(),
        kind: "Repository".into(),
        namespace: "ns".into(),
        name: "repo".into(),
        uid: "u-1".into(),
    }
}

async fn list(r: &Resource, field_selector: &str) -> Vec<Value> {
    let selectors =
        Selectors::parse(None, Some(field_selector), &r.kind.field_selectors).expect("selector");
    let page = r
        .backend
        .list(
            &ctx(),
            Some("ns"),
            &ListOptions {
                selectors,
                ..Default::default()
            },
        )
        .await
        .expect("list");
    page.items
        .iter()
        .map(|b| serde_json::from_slice(b).expect("json"))
        .collect()
}

/// Records, then drops the recorder so the writer stops once the queue is written.
async fn record_all(f: &Fixture, records: &[(EventType, &str, &str)]) {
    let (recorder, writer) = EventRecorder::new(COMPONENT, "host-1", 16);
    for (t, reason, message) in records {
        recorder.record(&repo(), *t, reason, "Sync", message);
    }
    drop(recorder);
    tokio::time::timeout(Duration::from_secs(10), writer.run(f.core.backend.clone()))
        .await
        .expect("writer finished");
}

#[tokio::test]
async fn repeated_events_are_aggregated_in_both_apis() {
    let f = fixture();
    record_all(
        &f,
        &[
            (EventType::Warning, "NotReady", "remote gone"),
            (EventType::Warning, "NotReady", "remote gone"),
            (EventType::Warning, "NotReady", "remote gone"),
            (EventType::Normal, "Ready", "Repository Ready"),
        ],
    )
    .await;
    let core = list(
        &f.core,
        "involvedObject.kind=Repository,involvedObject.name=repo",
    )
    .await;
    assert_eq!(core.len(), 2, "{core:?}");
    let warning = core
        .iter()
        .find(|e| e["type"] == "Warning")
        .expect("warning");
    assert_eq!(warning["count"], 3);
    assert_eq!(warning["series"]["count"], 3);
    assert_eq!(warning["involvedObject"]["uid"], "u-1");
    assert_eq!(warning["source"]["component"], COMPONENT);
    assert_eq!(warning["reportingInstance"], "host-1");

    let new = list(&f.new, "regarding.name=repo,type=Warning").await;
    assert_eq!(new.len(), 1, "{new:?}");
    assert_eq!(new[0]["apiVersion"], "events.k8s.io/v1");
    assert_eq!(new[0]["note"], "remote gone");
    assert_eq!(new[0]["deprecatedCount"], 3);
    assert_eq!(new[0]["reportingController"], COMPONENT);
    assert_eq!(new[0]["metadata"]["name"], warning["metadata"]["name"]);
    assert!(list(&f.new, "regarding.name=other").await.is_empty());
}

#[tokio::test]
async fn an_event_created_through_one_api_is_read_through_the_other() {
    let f = fixture();
    let new = json!({
        "apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": "by-new", "namespace": "ns"},
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "regarding": {"kind": "Repository", "name": "repo", "namespace": "ns"},
        "reason": "Tested", "note": "from events.k8s.io", "type": "Normal",
        "action": "Test", "reportingController": "tester", "reportingInstance": "t-1",
    });
    let created = f
        .new
        .backend
        .create(&ctx(), "ns", new)
        .await
        .expect("create");
    assert_eq!(created["note"], "from events.k8s.io");
    let core = f
        .core
        .backend
        .get(&ctx(), "ns", "by-new")
        .await
        .expect("get");
    assert_eq!(core["apiVersion"], "v1");
    assert_eq!(core["message"], "from events.k8s.io");
    assert_eq!(core["involvedObject"]["kind"], "Repository");
    assert_eq!(core["reportingComponent"], "tester");

    let legacy = json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": "by-core", "namespace": "ns"},
        "involvedObject": {"kind": "Repository", "name": "repo", "namespace": "ns"},
        "reason": "Tested", "message": "from v1", "type": "Warning", "count": 2,
        "source": {"component": "kubectl"},
    });
    f.core
        .backend
        .create(&ctx(), "ns", legacy)
        .await
        .expect("create core");
    let seen = f
        .new
        .backend
        .get(&ctx(), "ns", "by-core")
        .await
        .expect("get new");
    assert_eq!(seen["note"], "from v1");
    assert_eq!(seen["deprecatedCount"], 2);
    assert_eq!(seen["deprecatedSource"]["component"], "kubectl");
    let missing = f
        .new
        .backend
        .get(&ctx(), "ns", "nope")
        .await
        .expect_err("missing");
    assert!(
        missing.message.contains("events.events.k8s.io"),
        "{}",
        missing.message
    );
}

#[tokio::test]
async fn expired_events_are_pruned_and_fresh_ones_kept() {
    let f = fixture();
    record_all(&f, &[(EventType::Normal, "Ready", "Repository Ready")]).await;
    let old = json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": "old", "namespace": "ns", "creationTimestamp": "2020-01-01T00:00:00Z"},
        "involvedObject": {"kind": "Repository", "name": "repo", "namespace": "ns"},
        "reason": "Old", "lastTimestamp": "2020-01-01T00:00:00Z",
    });
    f.core
        .backend
        .create(&ctx(), "ns", old)
        .await
        .expect("create");
    let now = k8s_openapi::jiff::Timestamp::now();
    let deleted = prune_once(f.core.backend.as_ref(), DEFAULT_TTL, now)
        .await
        .expect("prune");
    assert_eq!(deleted, 1);
    let left = list(&f.core, "involvedObject.name=repo").await;
    assert_eq!(left.len(), 1);
    assert_eq!(left[0]["reason"], "Ready");
    // An hour and a bit later, the recorded one has expired too.
    let later = now
        .checked_add(k8s_openapi::jiff::SignedDuration::from_secs(3700))
        .expect("time");
    assert_eq!(
        prune_once(f.core.backend.as_ref(), DEFAULT_TTL, later)
            .await
            .expect("prune"),
        1
    );
    assert!(list(&f.core, "involvedObject.name=repo").await.is_empty());
}

#[tokio::test]
async fn a_watch_of_the_new_api_sees_new_objects_selected_by_new_names() {
    use futures::StreamExt;
    let f = fixture();
    let selectors = Selectors::parse(
        None,
        Some("regarding.name=repo,reportingController=porch-server"),
        &f.new.kind.field_selectors,
    )
    .expect("selector");
    let mut stream = f
        .new
        .backend
        .watch(
            &ctx(),
            Some("ns"),
            porch_apiserver::WatchStart::Now {
                initial_events: false,
            },
            &ListOptions {
                selectors,
                ..Default::default()
            },
        )
        .await
        .expect("watch");
    let other = json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": "elsewhere", "namespace": "ns"},
        "involvedObject": {"kind": "Repository", "name": "other", "namespace": "ns"},
        "reason": "Unrelated",
    });
    f.core
        .backend
        .create(&ctx(), "ns", other)
        .await
        .expect("create");
    record_all(&f, &[(EventType::Normal, "Ready", "Repository Ready")]).await;
    let item = tokio::time::timeout(Duration::from_secs(10), stream.next())
        .await
        .expect("an event in time")
        .expect("stream open");
    let porch_apiserver::WatchItem::Event { object, .. } = item else {
        panic!("expected an event, got {item:?}");
    };
    let obj: Value = serde_json::from_slice(&object).expect("json");
    assert_eq!(obj["apiVersion"], "events.k8s.io/v1");
    assert_eq!(
        obj["reason"], "Ready",
        "the unrelated Event is filtered out"
    );
    assert_eq!(obj["note"], "Repository Ready");
}
