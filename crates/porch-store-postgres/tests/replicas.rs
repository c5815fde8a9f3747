//! Several `PgStore`s on one database behave as one store: migrations race safely, a stale
//! write through one replica conflicts with the other's, each replica's listener receives every
//! replica's events once and in order, leases exclude each other and die with their holder,
//! and an outage fails calls as `Unavailable` until the database is back.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use porch_core::ErrorKind;
use porch_core::store::{MetadataStore, Precondition, StoreError};
use porch_store_postgres::{LeaderElection, Lease, PgStore, PgStoreOptions};
use porch_testkit::PostgresServer;
use porch_testkit::store_conformance::{key, put};

fn connect(url: &str) -> Arc<PgStore> {
    Arc::new(PgStore::connect(url, PgStoreOptions::default()).expect("connect"))
}

#[test]
fn replicas_share_versions_conflicts_and_events() {
    let server = PostgresServer::start().expect("postgres");
    let url = server.url();
    // Three replicas migrate an empty database at once.
    let replicas: Vec<Arc<PgStore>> = (0..3)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || connect(&url))
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|t| t.join().expect("thread"))
        .collect();
    let seen: Vec<Arc<Mutex<Vec<u64>>>> = replicas
        .iter()
        .map(|r| {
            let seen = Arc::new(Mutex::new(Vec::new()));
            let l = seen.clone();
            r.set_listener(Arc::new(move |evs| {
                l.lock()
                    .expect("lock")
                    .extend(evs.iter().map(|e| e.object.resource_version));
            }));
            seen
        })
        .collect();

    let ev = replicas[0]
        .write(vec![put("shared", Precondition::MustNotExist, "0")])
        .expect("create");
    let rv0 = ev[0].object.resource_version;
    replicas[1]
        .write(vec![put("shared", Precondition::ResourceVersion(rv0), "1")])
        .expect("update through another replica");
    let err = replicas[2]
        .write(vec![put("shared", Precondition::ResourceVersion(rv0), "2")])
        .expect_err("stale through a third");
    assert_eq!(err.kind(), ErrorKind::Conflict);

    // Writers on every replica at once.
    let threads: Vec<_> = replicas
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let r = r.clone();
            std::thread::spawn(move || {
                for n in 0..50 {
                    r.write(vec![put(
                        &format!("r{i}-{n}"),
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
    let last = replicas[0].current_resource_version().expect("rv");
    assert_eq!(last, rv0 + 151, "one gapless counter across replicas");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let done = seen
            .iter()
            .all(|s| s.lock().expect("lock").last() == Some(&last));
        if done || Instant::now() > deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let expected: Vec<u64> = (rv0..=last).collect();
    for (i, s) in seen.iter().enumerate() {
        assert_eq!(
            *s.lock().expect("lock"),
            expected,
            "replica {i} saw every event once, in order"
        );
    }
}

#[test]
fn leases_exclude_each_other_and_leadership_moves() {
    let server = PostgresServer::start().expect("postgres");
    let store = connect(&server.url());
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let config = store.connection_config().clone();
        let held = Lease::acquire(&config, "repo/a").await.expect("lease");
        assert!(held.is_held());
        assert!(
            Lease::try_acquire(&config, "repo/a")
                .await
                .expect("try")
                .is_none(),
            "held elsewhere"
        );
        assert!(
            Lease::try_acquire(&config, "repo/b")
                .await
                .expect("try")
                .is_some(),
            "other names are independent"
        );
        drop(held);
        let again = tokio::time::timeout(Duration::from_secs(5), store.lease("repo/a"))
            .await
            .expect("released on drop")
            .expect("lease");
        drop(again);

        let first = LeaderElection::start(config.clone(), "leader", Duration::from_millis(100));
        let mut leading = first.leading();
        tokio::time::timeout(Duration::from_secs(5), leading.wait_for(|l| *l))
            .await
            .expect("first leads")
            .expect("watch");
        let second = LeaderElection::start(config.clone(), "leader", Duration::from_millis(100));
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(!*second.leading().borrow(), "one leader at a time");
        drop(first);
        let mut leading = second.leading();
        tokio::time::timeout(Duration::from_secs(5), leading.wait_for(|l| *l))
            .await
            .expect("leadership moves")
            .expect("watch");
    });
}

#[test]
fn pooled_lease_sessions_are_reused_only_once_released() {
    let server = PostgresServer::start().expect("postgres");
    let store = connect(&server.url());
    let other = connect(&server.url());
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let config = store.connection_config().clone();
        let wait_idle = |n: usize| {
            let store = store.clone();
            async move {
                for _ in 0..250 {
                    if store.idle_lease_sessions() == n {
                        return;
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                panic!(
                    "expected {n} idle lease sessions, have {}",
                    store.idle_lease_sessions()
                );
            }
        };
        let a = store.lease("repo/a").await.expect("lease a");
        let b = store.lease("repo/b").await.expect("lease b");
        assert_eq!(store.idle_lease_sessions(), 0);
        drop(a);
        wait_idle(1).await;
        // Released for real: another process takes it at once.
        let taken = Lease::try_acquire(&config, "repo/a")
            .await
            .expect("try")
            .expect("repo/a was released when its lease went back to the pool");
        drop(taken);
        // A pooled session comes back without its old lock: repo/a again, then repo/c on the
        // same session while repo/a is held by this process through another.
        let a = store.lease("repo/a").await.expect("lease a again");
        assert_eq!(
            store.idle_lease_sessions(),
            0,
            "the idle session was reused"
        );
        assert!(
            Lease::try_acquire(&config, "repo/a")
                .await
                .expect("try")
                .is_none(),
            "held"
        );
        // Mutual exclusion across stores holds with pooled sessions.
        let waiter = {
            let other = other.clone();
            tokio::spawn(async move { other.lease("repo/b").await.map(|_| ()) })
        };
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(!waiter.is_finished(), "repo/b is held by the first store");
        drop(b);
        tokio::time::timeout(Duration::from_secs(5), waiter)
            .await
            .expect("repo/b handed over")
            .expect("task")
            .expect("lease");
        drop(a);
        wait_idle(2).await;
    });
}

#[test]
fn shared_leases_exclude_exclusive_ones_only() {
    let server = PostgresServer::start().expect("postgres");
    let (one, two) = (connect(&server.url()), connect(&server.url()));
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let within = |d: u64| Duration::from_millis(d);
        let a = one.lease_shared("repo/x").await.expect("shared");
        let b = tokio::time::timeout(within(5000), two.lease_shared("repo/x"))
            .await
            .expect("shared holders together")
            .expect("shared");
        let writer = {
            let two = two.clone();
            tokio::spawn(async move { two.lease("repo/x").await.map(|_| ()) })
        };
        tokio::time::sleep(within(300)).await;
        assert!(
            !writer.is_finished(),
            "an exclusive lease waits for shared holders"
        );
        drop(a);
        tokio::time::sleep(within(300)).await;
        assert!(!writer.is_finished(), "while any shared holder is left");
        drop(b);
        tokio::time::timeout(within(5000), writer)
            .await
            .expect("the exclusive lease once the readers left")
            .expect("task")
            .expect("lease");
        // Shared waits for exclusive too; and a released shared session is pooled clean.
        let w = one.lease("repo/x").await.expect("exclusive");
        let reader = {
            let two = two.clone();
            tokio::spawn(async move { two.lease_shared("repo/x").await.map(|_| ()) })
        };
        tokio::time::sleep(within(300)).await;
        assert!(
            !reader.is_finished(),
            "a shared lease waits for the exclusive holder"
        );
        drop(w);
        tokio::time::timeout(within(5000), reader)
            .await
            .expect("the shared lease after the writer")
            .expect("task")
            .expect("lease");
        let config = one.connection_config().clone();
        for _ in 0..100 {
            if let Some(l) = Lease::try_acquire(&config, "repo/x").await.expect("try") {
                drop(l);
                return;
            }
            tokio::time::sleep(within(20)).await;
        }
        panic!("repo/x stayed locked after every lease was dropped");
    });
}

#[test]
fn an_outage_fails_calls_as_unavailable_until_the_database_is_back() {
    let mut server = PostgresServer::start().expect("postgres");
    let store = Arc::new(
        PgStore::connect(
            &server.url(),
            PgStoreOptions {
                timeout: Duration::from_secs(1),
                ..Default::default()
            },
        )
        .expect("connect"),
    );
    store
        .write(vec![put("before", Precondition::MustNotExist, "x")])
        .expect("write");
    server.stop().expect("stop");
    let err = store
        .write(vec![put("during", Precondition::MustNotExist, "x")])
        .expect_err("down");
    assert!(matches!(err, StoreError::Unavailable(_)), "{err}");
    assert!(matches!(
        store.get(&key("before")),
        Err(StoreError::Unavailable(_))
    ));
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    assert!(rt.block_on(store.check()).is_err(), "readiness check fails");
    server.start_again().expect("start");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match store.write(vec![put("after", Precondition::MustNotExist, "x")]) {
            Ok(_) => break,
            Err(e) if Instant::now() < deadline => {
                assert_eq!(e.kind(), ErrorKind::Unavailable, "{e}");
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(e) => panic!("not back: {e}"),
        }
    }
    assert!(rt.block_on(store.check()).is_ok());
    assert!(store.get(&key("before")).expect("get").is_some());
    assert!(
        store.get(&key("during")).expect("get").is_none(),
        "no half-done write"
    );
}

/// The read-barrier probe answers with a version at least as new as every write committed
/// (through any replica) before the call began, also for many callers at once, and recovers
/// after PostgreSQL comes back.
#[test]
fn the_version_probe_sees_every_write_committed_before_the_call() {
    let mut server = PostgresServer::start().expect("postgres");
    let url = server.url();
    let (a, b) = (connect(&url), connect(&url));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let probe = Arc::new(runtime.block_on(async { b.rv_probe() }));
    for n in 0..20 {
        let written = a
            .write(vec![put(&format!("p{n}"), Precondition::MustNotExist, "x")])
            .expect("write through the other replica")[0]
            .object
            .resource_version;
        // 16 callers at once: each sees this write.
        let seen = runtime.block_on(async {
            let calls: Vec<_> = (0..16)
                .map(|_| {
                    let p = probe.clone();
                    tokio::spawn(async move { p.current().await })
                })
                .collect();
            let mut seen = Vec::new();
            for c in calls {
                seen.push(c.await.expect("task").expect("current version"));
            }
            seen
        });
        assert!(
            seen.iter().all(|rv| *rv >= written),
            "round {n}: every caller sees version {written}: {seen:?}"
        );
    }
    server.stop().expect("stop");
    let down = runtime.block_on(probe.current());
    assert_eq!(
        down.expect_err("no database").kind(),
        ErrorKind::Unavailable
    );
    server.start_again().expect("start");
    let written = a
        .write(vec![put("after", Precondition::MustNotExist, "x")])
        .or_else(|_| {
            std::thread::sleep(Duration::from_secs(1));
            a.write(vec![put("after", Precondition::MustNotExist, "x")])
        })
        .expect("write after the restart")[0]
        .object
        .resource_version;
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        match runtime.block_on(probe.current()) {
            Ok(rv) => {
                assert!(rv >= written, "the reconnected probe sees {written}");
                break;
            }
            Err(e) if Instant::now() < deadline => {
                let _ = e;
                std::thread::sleep(Duration::from_millis(200));
            }
            Err(e) => panic!("the probe did not reconnect: {e}"),
        }
    }
}
