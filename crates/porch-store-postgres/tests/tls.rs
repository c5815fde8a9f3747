//! TLS to PostgreSQL: against a server with `ssl=on` that refuses plain TCP (`hostssl`),
//! `sslmode=require` connects and stores (leases and the event follower too),
//! `verify-full` with the issuing CA connects, and plain or wrongly verified connections are
//! refused.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use porch_core::store::{MetadataStore, Precondition};
use porch_store_postgres::{Lease, PgStore, PgStoreOptions};
use porch_testkit::PostgresServer;
use porch_testkit::store_conformance::{key, put};

fn options() -> PgStoreOptions {
    PgStoreOptions {
        timeout: Duration::from_secs(3),
        ..PgStoreOptions::default()
    }
}

#[test]
fn sslmode_require_and_verify_full_connect_plain_is_refused() {
    let server = PostgresServer::start_tls().expect("postgres with ssl=on");
    let url = server.url();

    // Plain TCP is refused by the server (hostssl only).
    let plain = PgStore::connect(&format!("{url}?sslmode=disable"), options());
    assert!(plain.is_err(), "a plain connection must be refused");

    // sslmode=require: encrypted, any certificate (libpq's meaning).
    let store = Arc::new(
        PgStore::connect(&format!("{url}?sslmode=require"), options()).expect("sslmode=require"),
    );
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    store.set_listener(Arc::new(move |evs| {
        s.lock()
            .expect("lock")
            .extend(evs.iter().map(|e| e.object.resource_version));
    }));
    let written = store
        .write(vec![put("a", Precondition::MustNotExist, "{}")])
        .expect("write over TLS");
    let rv = written[0].object.resource_version;
    assert_eq!(
        store
            .get(&key("a"))
            .expect("get")
            .map(|o| o.resource_version),
        Some(rv)
    );
    // Leases open their own connections, with the same TLS settings.
    let config = store.connection_config().clone();
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let lease = runtime
        .block_on(Lease::acquire(&config, "tls/a"))
        .expect("lease over TLS");
    assert!(lease.is_held());

    // A second store on verify-full with the CA follows the first one's writes (its event
    // follower's LISTEN connection is TLS too).
    let verified = PgStore::connect(
        &format!(
            "{url}?sslmode=verify-full&sslrootcert={}",
            server.ca_cert().display()
        ),
        options(),
    )
    .expect("verify-full with the issuing CA");
    let other_seen = Arc::new(Mutex::new(Vec::new()));
    let s = other_seen.clone();
    verified.set_listener(Arc::new(move |evs| {
        s.lock()
            .expect("lock")
            .extend(evs.iter().map(|e| e.object.resource_version));
    }));
    let second = store
        .write(vec![put("b", Precondition::MustNotExist, "{}")])
        .expect("write")[0]
        .object
        .resource_version;
    let deadline = Instant::now() + Duration::from_secs(10);
    while !other_seen.lock().expect("lock").contains(&second) {
        assert!(
            Instant::now() < deadline,
            "the verify-full store never saw rv {second}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(seen.lock().expect("lock").contains(&rv));
}

#[test]
fn verification_against_another_ca_or_without_tls_fails() {
    let server = PostgresServer::start_tls().expect("postgres with ssl=on");
    let other = PostgresServer::start_tls().expect("another CA");
    let url = server.url();
    let wrong = PgStore::connect(
        &format!(
            "{url}?sslmode=verify-ca&sslrootcert={}",
            other.ca_cert().display()
        ),
        options(),
    );
    assert!(
        wrong.is_err(),
        "a certificate of another CA must be refused"
    );

    // A plain server and verify-full: TLS cannot be negotiated, so no connection.
    let plain = PostgresServer::start().expect("plain postgres");
    let refused = PgStore::connect(
        &format!(
            "{}?sslmode=verify-full&sslrootcert={}",
            plain.url(),
            server.ca_cert().display()
        ),
        options(),
    );
    assert!(refused.is_err(), "require on a server without TLS fails");
}

/// A unix socket carries no TLS (as with libpq): the default `sslmode=prefer` and a key=value
/// URL naming the socket directory connect, and the lease sessions and the version probe too.
#[test]
fn a_unix_socket_connects_without_tls() {
    let server = PostgresServer::start_tls().expect("postgres with ssl=on");
    let url = format!(
        "host={} port={} user=porch dbname=porch",
        server.socket_dir().display(),
        server.port()
    );
    let store = Arc::new(PgStore::connect(&url, options()).expect("over the unix socket"));
    store
        .write(vec![put("a", Precondition::None, "{}")])
        .expect("write");
    assert!(store.get(&key("a")).expect("get").is_some());
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let lease = store.lease("repo/a").await.expect("lease");
        assert!(lease.is_held());
        let rv = store.rv_probe().current().await.expect("probe");
        assert!(rv >= 1);
    });
    // Even `sslmode=require` means no TLS on a unix socket (libpq's rule; the server would
    // refuse TLS there).
    let required = PgStore::connect(&format!("{url} sslmode=require"), options())
        .expect("sslmode=require over the unix socket");
    assert!(required.get(&key("a")).expect("get").is_some());
}
