//! The redb store against the `MetadataStore` contract: preconditions, resourceVersions, the
//! event log, compaction, group commit under concurrency, and durability across reopen.

use std::sync::Arc;

use porch_core::ErrorKind;
use porch_core::store::{
    EventType, ListQuery, MetadataStore, ObjectKey, Precondition, StoreError, Write, WriteOp,
};
use porch_store::{RedbStore, StoreOptions};

fn key(name: &str) -> ObjectKey {
    ObjectKey::new("g/things", "ns", name)
}

fn put(name: &str, pre: Precondition, body: &str) -> Write {
    let body = body.to_string();
    Write {
        key: key(name),
        precondition: pre,
        op: WriteOp::Put(Box::new(move |rv, _| {
            format!("{{\"rv\":{rv},\"b\":\"{body}\"}}").into_bytes()
        })),
    }
}

fn delete(name: &str, pre: Precondition) -> Write {
    Write {
        key: key(name),
        precondition: pre,
        op: WriteOp::Delete(Box::new(|_, old| old.unwrap_or_default().to_vec())),
    }
}

fn open(dir: &std::path::Path, retention: u64) -> RedbStore {
    RedbStore::open(
        &dir.join("s.redb"),
        StoreOptions {
            event_retention: retention,
            ..Default::default()
        },
    )
    .expect("open")
}

#[test]
fn preconditions_and_resource_versions() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = open(dir.path(), 1000);
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

#[test]
fn list_pages_and_namespaces() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = open(dir.path(), 1000);
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
    loop {
        let page = s.list(&q).expect("list");
        names.extend(page.items.iter().map(|o| o.key.name.clone()));
        if !page.more {
            break;
        }
        let last = page.items.last().expect("items");
        q.start_after = Some((last.key.namespace.clone(), last.key.name.clone()));
    }
    assert_eq!(names.len(), 25);
    assert!(names.windows(2).all(|w| w[0] < w[1]));
    let all = s
        .list(&ListQuery {
            resource: "g/things".into(),
            ..Default::default()
        })
        .expect("all");
    assert_eq!(all.items.len(), 26);
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

#[test]
fn concurrent_writers_get_unique_ordered_versions_and_a_complete_log() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = Arc::new(open(dir.path(), 100_000));
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
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
    assert_eq!(seen.len(), 1600);
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

#[test]
fn compaction_answers_gone_and_data_survives_reopen() {
    let dir = tempfile::tempdir().expect("tempdir");
    let last;
    {
        let s = open(dir.path(), 10);
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
    }
    let s = open(dir.path(), 10);
    assert_eq!(s.current_resource_version().expect("rv"), last);
    assert!(s.get(&key("k49")).expect("get").is_some());
    let ev = s
        .write(vec![put("new", Precondition::MustNotExist, "x")])
        .expect("write");
    assert_eq!(ev[0].object.resource_version, last + 1);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join("s.redb"))
            .expect("meta")
            .permissions()
            .mode();
        assert_eq!(mode & 0o077, 0);
    }
}
