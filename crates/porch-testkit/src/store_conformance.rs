//! One conformance suite for every `MetadataStore` implementation.
//!
//! The cases are plain functions over a [`StoreFixture`] (something that opens, and reopens,
//! one store); [`store_conformance_tests!`](crate::store_conformance_tests) turns them into one
//! `#[test]` each in the implementation's test crate, so redb and PostgreSQL run the same cases.

use std::sync::{Arc, Mutex};

use porch_core::ErrorKind;
use porch_core::store::{
    EventType, ListQuery, MetadataStore, ObjectKey, Precondition, StoreError, Write, WriteOp,
};

/// Opens the store under test. Every call opens the same underlying storage (so a second open
/// after dropping the first is a restart), with the given event retention.
pub trait StoreFixture {
    fn open(&self, retention: u64) -> Arc<dyn MetadataStore>;
}

/// The key of object `name` in the suite's resource and namespace.
pub fn key(name: &str) -> ObjectKey {
    ObjectKey::new("g/things", "ns", name)
}

/// A put whose bytes record the resourceVersion they were stamped with.
pub fn put(name: &str, pre: Precondition, body: &str) -> Write {
    let body = body.to_string();
    Write {
        key: key(name),
        precondition: pre,
        op: WriteOp::Put(Box::new(move |rv, _| {
            format!("{{\"rv\":{rv},\"b\":\"{body}\"}}").into_bytes()
        })),
    }
}

/// A delete whose tombstone is the last state.
pub fn delete(name: &str, pre: Precondition) -> Write {
    Write {
        key: key(name),
        precondition: pre,
        op: WriteOp::Delete(Box::new(|_, old| old.unwrap_or_default().to_vec())),
    }
}

pub fn preconditions_and_resource_versions(f: &dyn StoreFixture) {
    let s = f.open(1000);
    let ev = s
        .write(vec![put("a", Precondition::MustNotExist, "1")])
        .expect("create");
    assert_eq!(ev[0].event_type, EventType::Added);
    let rv1 = ev[0].object.resource_version;
    assert_eq!(
        &*ev[0].object.data,
        format!("{{\"rv\":{rv1},\"b\":\"1\"}}").as_bytes(),
        "stamped with its rv"
    );

    let err = s
        .write(vec![put("a", Precondition::MustNotExist, "x")])
        .expect_err("exists");
    assert_eq!(err.kind(), ErrorKind::AlreadyExists);
    let err = s
        .write(vec![put("a", Precondition::ResourceVersion(rv1 + 5), "x")])
        .expect_err("stale");
    assert!(matches!(err, StoreError::Conflict { .. }));
    let err = s
        .write(vec![put("zz", Precondition::MustExist, "x")])
        .expect_err("missing");
    assert_eq!(err.kind(), ErrorKind::NotFound);

    let ev = s
        .write(vec![put("a", Precondition::ResourceVersion(rv1), "2")])
        .expect("update");
    assert_eq!(ev[0].event_type, EventType::Modified);
    assert!(ev[0].object.resource_version > rv1);
    assert!(ev[0].previous.is_some());
    let got = s.get(&key("a")).expect("get").expect("present");
    assert_eq!(got.resource_version, ev[0].object.resource_version);

    // A failed batch writes nothing (atomicity).
    let before = s.current_resource_version().expect("rv");
    let err = s.write(vec![
        put("b", Precondition::MustNotExist, "1"),
        put("a", Precondition::MustNotExist, "x"),
    ]);
    assert!(err.is_err());
    assert!(s.get(&key("b")).expect("get").is_none());
    assert_eq!(s.current_resource_version().expect("rv"), before);

    let ev = s
        .write(vec![delete("a", Precondition::MustExist)])
        .expect("delete");
    assert_eq!(ev[0].event_type, EventType::Deleted);
    assert!(s.get(&key("a")).expect("get").is_none());
    assert_eq!(
        s.write(vec![delete("a", Precondition::None)])
            .expect_err("gone")
            .kind(),
        ErrorKind::NotFound
    );
}

pub fn list_pages_and_namespaces(f: &dyn StoreFixture) {
    let s = f.open(1000);
    for i in 0..25 {
        s.write(vec![put(
            &format!("n{i:02}"),
            Precondition::MustNotExist,
            "x",
        )])
        .expect("create");
    }
    s.write(vec![Write {
        key: ObjectKey::new("g/things", "other", "o"),
        precondition: Precondition::None,
        op: WriteOp::Put(Box::new(|_, _| b"{}".to_vec())),
    }])
    .expect("other ns");
    let mut q = ListQuery {
        resource: "g/things".into(),
        namespace: Some("ns".into()),
        start_after: None,
        limit: Some(10),
    };
    let mut names = Vec::new();
    let mut remaining = Vec::new();
    loop {
        let page = s.list(&q).expect("list");
        names.extend(page.items.iter().map(|o| o.key.name.clone()));
        if !page.more {
            break;
        }
        remaining.push(page.remaining);
        let last = page.items.last().expect("items");
        q.start_after = Some((last.key.namespace.clone(), last.key.name.clone()));
    }
    assert_eq!(names.len(), 25);
    assert!(names.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(remaining, vec![Some(15), Some(5)], "remainingItemCount");
    let all = s
        .list(&ListQuery {
            resource: "g/things".into(),
            ..Default::default()
        })
        .expect("all");
    assert_eq!(all.items.len(), 26);
    assert_eq!(
        all.resource_version,
        s.current_resource_version().expect("rv")
    );
    // Across namespaces, paging resumes after (namespace, name).
    let first = s
        .list(&ListQuery {
            resource: "g/things".into(),
            limit: Some(25),
            ..Default::default()
        })
        .expect("page");
    assert_eq!(first.items.last().map(|o| o.key.name.as_str()), Some("n24"));
    let rest = s
        .list(&ListQuery {
            resource: "g/things".into(),
            start_after: Some(("ns".into(), "n24".into())),
            ..Default::default()
        })
        .expect("rest");
    assert_eq!(
        rest.items
            .iter()
            .map(|o| o.key.to_string())
            .collect::<Vec<_>>(),
        vec!["g/things other/o".to_string()]
    );
    let none = s
        .list(&ListQuery {
            resource: "g/thing".into(),
            ..Default::default()
        })
        .expect("prefix");
    assert!(
        none.items.is_empty(),
        "a resource name that is a prefix of another does not leak"
    );
}

pub fn concurrent_writers_get_unique_ordered_versions_and_a_complete_log(f: &dyn StoreFixture) {
    let s = f.open(100_000);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let l = seen.clone();
    s.set_listener(Arc::new(move |evs| {
        let mut g = l.lock().expect("lock");
        g.extend(evs.iter().map(|e| e.object.resource_version));
    }));
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let s = s.clone();
            std::thread::spawn(move || {
                for i in 0..200 {
                    s.write(vec![put(
                        &format!("t{t}-{i}"),
                        Precondition::MustNotExist,
                        "x",
                    )])
                    .expect("write");
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("thread");
    }
    let seen = seen.lock().expect("lock").clone();
    assert_eq!(seen.len(), 1600, "every event delivered once");
    assert!(
        seen.windows(2).all(|w| w[0] < w[1]),
        "listener sees commit order"
    );
    let log = s.events_since(0, 10_000).expect("log");
    assert_eq!(log.len(), 1600);
    assert_eq!(
        log.iter()
            .map(|e| e.object.resource_version)
            .collect::<Vec<_>>(),
        seen
    );
}

pub fn concurrent_compare_and_swap_loses_no_update(f: &dyn StoreFixture) {
    let s = f.open(100_000);
    s.write(vec![put("counter", Precondition::MustNotExist, "0")])
        .expect("create");
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let s = s.clone();
            std::thread::spawn(move || {
                let mut done = 0;
                let mut conflicts = 0;
                while done < 25 {
                    let cur = s.get(&key("counter")).expect("get").expect("present");
                    let n: u64 = body(&cur.data).parse().expect("number");
                    match s.write(vec![put(
                        "counter",
                        Precondition::ResourceVersion(cur.resource_version),
                        &(n + 1).to_string(),
                    )]) {
                        Ok(_) => done += 1,
                        Err(StoreError::Conflict { .. }) => conflicts += 1,
                        Err(e) => panic!("write: {e}"),
                    }
                }
                conflicts
            })
        })
        .collect();
    for t in threads {
        t.join().expect("thread");
    }
    let last = s.get(&key("counter")).expect("get").expect("present");
    assert_eq!(body(&last.data), "200", "every increment applied once");
}

/// The `b` field of a [`put`] body.
fn body(data: &[u8]) -> String {
    let v: serde_json::Value = serde_json::from_slice(data).expect("json");
    v["b"].as_str().expect("b").to_owned()
}

pub fn compaction_answers_gone_and_data_survives_reopen(f: &dyn StoreFixture) {
    let last;
    {
        let s = f.open(10);
        for i in 0..50 {
            s.write(vec![put(&format!("k{i}"), Precondition::MustNotExist, "x")])
                .expect("write");
        }
        last = s.current_resource_version().expect("rv");
        assert!(matches!(
            s.events_since(1, 100),
            Err(StoreError::Gone { .. })
        ));
        let recent = s.events_since(last - 5, 100).expect("recent");
        assert_eq!(recent.len(), 5);
        assert_eq!(recent[0].object.resource_version, last - 4);
        assert!(s.events_since(last, 100).expect("none").is_empty());
    }
    let s = f.open(10);
    assert_eq!(s.current_resource_version().expect("rv"), last);
    assert!(s.get(&key("k49")).expect("get").is_some());
    let ev = s
        .write(vec![put("new", Precondition::MustNotExist, "x")])
        .expect("write");
    assert_eq!(ev[0].object.resource_version, last + 1);
}

pub fn replayed_events_carry_previous_state_and_tombstones(f: &dyn StoreFixture) {
    let s = f.open(1000);
    let start = s.current_resource_version().expect("rv");
    s.write(vec![put("p", Precondition::MustNotExist, "1")])
        .expect("create");
    s.write(vec![put("p", Precondition::MustExist, "2")])
        .expect("update");
    s.write(vec![delete("p", Precondition::MustExist)])
        .expect("delete");
    let log = s.events_since(start, 10).expect("log");
    let types: Vec<_> = log.iter().map(|e| e.event_type).collect();
    assert_eq!(
        types,
        vec![EventType::Added, EventType::Modified, EventType::Deleted]
    );
    assert!(log[0].previous.is_none());
    assert_eq!(body(log[1].previous.as_deref().expect("previous")), "1");
    assert_eq!(
        body(&log[2].object.data),
        "2",
        "tombstone is the last state"
    );
    assert_eq!(log[2].object.key, key("p"));
}

/// Generates one `#[test]` per conformance case; `$fixture` is an expression evaluated per test
/// that yields a value implementing [`StoreFixture`].
#[macro_export]
macro_rules! store_conformance_tests {
    ($fixture:expr) => {
        $crate::store_conformance_tests!(@cases $fixture;
            preconditions_and_resource_versions,
            list_pages_and_namespaces,
            concurrent_writers_get_unique_ordered_versions_and_a_complete_log,
            concurrent_compare_and_swap_loses_no_update,
            compaction_answers_gone_and_data_survives_reopen,
            replayed_events_carry_previous_state_and_tombstones,
        );
    };
    (@cases $fixture:expr; $($case:ident,)*) => {
        $(
            #[test]
            fn $case() {
                let fixture = $fixture;
                $crate::store_conformance::$case(&fixture);
            }
        )*
    };
}
