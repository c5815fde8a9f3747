//! Three porch-server replicas on one PostgreSQL (`--store postgres://…`), through the real
//! binary: read-modify-write writers spread over the replicas lose no update, concurrent
//! publishes of one package through different replicas get distinct revision numbers, a
//! watcher on each replica sees the same ordered stream, the controllers move to another
//! replica when the leader is killed mid-write (every acknowledged write survives), and a PostgreSQL outage fails requests cleanly (503,
//! readiness false) until it is back.

mod common;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use common::Server;
use common::porch::{self, GIT_PASSWORD, GIT_USER};
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Client;
use kube::api::{Api, PostParams, WatchEvent, WatchParams};
use porch_testkit::{GitServer, PostgresServer};
use serde_json::json;

struct Cluster {
    pg: PostgresServer,
    replicas: Vec<Server>,
    clients: Vec<Client>,
}

async fn cluster(n: usize) -> Cluster {
    let pg = PostgresServer::start().expect("postgres");
    let url = pg.url();
    let mut replicas = Vec::new();
    let mut clients = Vec::new();
    for _ in 0..n {
        let s = Server::start_with(&["--store", &url]);
        clients.push(s.wait_readyz().await);
        replicas.push(s);
    }
    Cluster {
        pg,
        replicas,
        clients,
    }
}

fn configmaps(c: &Client) -> Api<ConfigMap> {
    Api::namespaced(c.clone(), "default")
}

fn counter(cm: &ConfigMap) -> u64 {
    cm.data
        .as_ref()
        .and_then(|d| d.get("n"))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn writers_on_every_replica_lose_no_update_and_watchers_agree() {
    let c = cluster(3).await;
    let objects = 10;
    let mut from = String::new();
    for o in 0..objects {
        let created = configmaps(&c.clients[o % 3])
            .create(
                &PostParams::default(),
                &serde_json::from_value(
                    json!({"metadata": {"name": format!("shared-{o}")}, "data": {"n": "0"}}),
                )
                .expect("configmap"),
            )
            .await
            .expect("create");
        from = created.metadata.resource_version.expect("resourceVersion");
    }

    // A watcher on each replica, from the last creation on.
    let mut watchers = Vec::new();
    for client in &c.clients {
        let stream = configmaps(client)
            .watch(&WatchParams::default().timeout(120), &from)
            .await
            .expect("watch");
        watchers.push(stream.boxed());
    }

    // 100 concurrent writers spread over the replicas, 10 per shared object, 2 increments
    // each, read-modify-write retried on 409.
    let writers = 100;
    let per_writer = 2;
    let mut tasks = Vec::new();
    for w in 0..writers {
        let api = configmaps(&c.clients[w % c.clients.len()]);
        let name = format!("shared-{}", w % objects);
        tasks.push(tokio::spawn(async move {
            let mut conflicts = 0u32;
            for _ in 0..per_writer {
                loop {
                    let mut cm = api.get(&name).await.expect("get");
                    let n = counter(&cm);
                    cm.data
                        .get_or_insert_default()
                        .insert("n".into(), (n + 1).to_string());
                    match api.replace(&name, &PostParams::default(), &cm).await {
                        Ok(_) => break,
                        Err(kube::Error::Api(e)) if e.code == 409 => conflicts += 1,
                        Err(e) => panic!("replace: {e:?}"),
                    }
                }
            }
            conflicts
        }));
    }
    let mut conflicts = 0;
    for t in tasks {
        conflicts += t.await.expect("writer");
    }
    let per_object = (writers / objects * per_writer) as u64;
    for client in &c.clients {
        for o in 0..objects {
            let cm = configmaps(client)
                .get(&format!("shared-{o}"))
                .await
                .expect("get");
            assert_eq!(
                counter(&cm),
                per_object,
                "no lost update on shared-{o} (after {conflicts} conflicts)"
            );
        }
    }

    // Every watcher saw the same MODIFIED stream, in the same order, each object's values
    // climbing one by one.
    let total = writers * per_writer;
    let mut streams = Vec::new();
    for mut w in watchers {
        let mut seen = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(30);
        while seen.len() < total {
            let left = deadline.saturating_duration_since(Instant::now());
            let ev = tokio::time::timeout(left, w.try_next())
                .await
                .expect("watch events in time")
                .expect("watch stream")
                .expect("open stream");
            if let WatchEvent::Modified(cm) = ev {
                seen.push((
                    cm.metadata.resource_version.clone().expect("rv"),
                    cm.metadata.name.clone().expect("name"),
                    counter(&cm),
                ));
            }
        }
        for o in 0..objects {
            let name = format!("shared-{o}");
            let values: Vec<u64> = seen
                .iter()
                .filter(|(_, n, _)| *n == name)
                .map(|(_, _, v)| *v)
                .collect();
            assert_eq!(
                values,
                (1..=per_object).collect::<Vec<_>>(),
                "{name}: every update once, in order"
            );
        }
        let rvs: Vec<u64> = seen
            .iter()
            .map(|(rv, _, _)| rv.parse().expect("numeric rv"))
            .collect();
        assert!(rvs.windows(2).all(|w| w[0] < w[1]), "resourceVersion order");
        streams.push(seen);
    }
    assert!(streams.windows(2).all(|w| w[0] == w[1]), "replicas agree");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_publishes_through_different_replicas_get_distinct_revisions() {
    let c = cluster(3).await;
    let root = c.replicas[0].dir.path().join("git");
    std::fs::create_dir_all(&root).expect("git root");
    let git = GitServer::start(&root, Some((GIT_USER, GIT_PASSWORD))).expect("git server");
    porch::empty_remote(&root, "blue");
    let url = git.url_for("blue.git");
    let env_secret = json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "git-auth", "namespace": "default"},
        "type": "kubernetes.io/basic-auth",
        "stringData": {"username": GIT_USER, "password": GIT_PASSWORD},
    });
    let secrets: Api<k8s_openapi::api::core::v1::Secret> =
        Api::namespaced(c.clients[0].clone(), "default");
    secrets
        .create(
            &PostParams::default(),
            &serde_json::from_value(env_secret).expect("secret"),
        )
        .await
        .expect("secret");
    porch::register(
        &c.clients[0],
        "default",
        "blue",
        &url,
        json!({"git": {"secretRef": {"name": "git-auth"}}}),
    )
    .await;
    for client in &c.clients {
        porch::wait_ready(client, "default", "blue").await;
    }

    // Revision 1, then copies of it created and proposed through every replica.
    let first = porch::init_published(
        &porch::revisions(&c.clients[0], "default"),
        "blue",
        "app",
        "v1",
    )
    .await;
    let source = porch::name(&first);
    let n = 6;
    let mut names = Vec::new();
    for i in 0..n {
        let api = porch::revisions(&c.clients[i % 3], "default");
        let pr = porch::create(
            &api,
            "blue",
            "app",
            &format!("ws{i}"),
            porch::edit_task(&source),
        )
        .await;
        let name = porch::name(&pr);
        porch::propose(&api, &name).await;
        names.push(name);
    }
    // Approve them all at once, each through another replica than the one that created it.
    let mut tasks = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let api = porch::revisions(&c.clients[(i + 1) % 3], "default");
        let name = name.clone();
        tasks.push(tokio::spawn(async move {
            // A replica that has not yet seen the proposal answers 409/404; retry briefly.
            let deadline = Instant::now() + Duration::from_secs(30);
            loop {
                match porch::set_approval(&api, &name, "Published").await {
                    Ok(pr) => return pr.data["spec"]["revision"].as_i64().expect("revision"),
                    Err(e) if Instant::now() < deadline => {
                        tracing_free_sleep(&e).await;
                    }
                    Err(e) => panic!("approve {name}: {e:?}"),
                }
            }
        }));
    }
    let mut revisions = Vec::new();
    for t in tasks {
        revisions.push(t.await.expect("approve"));
    }
    let distinct: BTreeSet<i64> = revisions.iter().copied().collect();
    assert_eq!(
        distinct,
        (2..=n as i64 + 1).collect::<BTreeSet<_>>(),
        "distinct revision numbers, no gaps: {revisions:?}"
    );
    // Every replica lists the same published revisions.
    let want: BTreeSet<i64> = (1..=n as i64 + 1).collect();
    let deadline = Instant::now() + Duration::from_secs(20);
    for (i, client) in c.clients.iter().enumerate() {
        let api = porch::revisions(client, "default");
        loop {
            let list = api.list(&Default::default()).await.expect("list");
            let published: BTreeSet<i64> = list
                .items
                .iter()
                .filter(|p| p.data["spec"]["lifecycle"] == "Published")
                .filter_map(|p| p.data["spec"]["revision"].as_i64())
                // -1: the package as on the branch, listed beside its revisions.
                .filter(|r| *r > 0)
                .collect();
            if published == want {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "replica {i} lists {published:?} ({} items)",
                list.items.len()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// Read-your-writes across replicas (the bench's set-up once failed on it): every step of a
/// revision's life goes through another replica than the one before, with no retry, and a
/// Repository registered (and Ready) through one replica is served at once by the others.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn each_step_through_the_next_replica_sees_the_previous_one() {
    let c = cluster(3).await;
    let root = c.replicas[0].dir.path().join("git");
    std::fs::create_dir_all(&root).expect("git root");
    let git = GitServer::start(&root, None).expect("git server");
    let r = |i: usize| porch::revisions(&c.clients[i % 3], "default");
    let res = |i: usize| porch::resources(&c.clients[i % 3], "default");
    for round in 0..3 {
        // A new Repository each round, Ready through replica `round`, used through the next.
        let repo = format!("ryw{round}");
        porch::empty_remote(&root, &repo);
        porch::register(
            &c.clients[round],
            "default",
            &repo,
            &git.url_for(&format!("{repo}.git")),
            json!({}),
        )
        .await;
        for i in round..round + 3 {
            let pr = porch::init(&r(i), &repo, &format!("app{i}"), "ws").await;
            let name = porch::name(&pr);
            let value = format!("v{round}-{i}");
            let cm = format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  value: {value}\n"
            );
            let updated = porch::put_files(&res(i + 1), &name, &[("cm.yaml", cm.as_str())])
                .await
                .unwrap_or_else(|e| panic!("update {name} through the next replica: {e:?}"));
            // A read "not older than" the update's resourceVersion, through another replica,
            // has it (kube's resourceVersion=N); one at "any" version is served too.
            let at = kube::api::GetParams {
                resource_version: updated.metadata.resource_version.clone(),
            };
            let seen = res(i + 2).get_with(&name, &at).await.expect("get at N");
            assert_eq!(
                seen.data["spec"]["resources"]["cm.yaml"].as_str(),
                Some(cm.as_str()),
                "resourceVersion={:?} on the replica after",
                at.resource_version
            );
            res(i + 2)
                .get_with(&name, &kube::api::GetParams::any())
                .await
                .expect("get at resourceVersion=0");
            let files = porch::files_of(&res(i + 2), &name).await;
            assert_eq!(
                files.get("cm.yaml").and_then(|v| v.as_str()),
                Some(cm.as_str()),
                "the replica after sees the update of {name}"
            );
            porch::propose(&r(i + 2), &name).await;
            // What a client of the next replica last read of the proposed draft.
            let stale_files = res(i + 1).get(&name).await.expect("resources");
            let stale_rev = r(i + 1).get(&name).await.expect("revision");
            let published = porch::approve(&r(i), &name).await;
            assert_eq!(published.data["spec"]["lifecycle"], "Published");
            // Writes from those reads, through a replica that did not publish it, are
            // conflicts (the revision changed under them), as on one server.
            let mut edit = stale_files.clone();
            edit.data["spec"]["resources"]["more.yaml"] = json!("a: b\n");
            match res(i + 1).replace(&name, &Default::default(), &edit).await {
                Err(kube::Error::Api(ae)) => {
                    assert_eq!(ae.code, 409, "a stale edit of the published {name}: {ae:?}")
                }
                other => panic!("a stale edit of the published {name}: {other:?}"),
            }
            let mut back = stale_rev.clone();
            back.data["spec"]["lifecycle"] = json!("Draft");
            match r(i + 1).replace(&name, &Default::default(), &back).await {
                Err(kube::Error::Api(ae)) => assert_eq!(
                    ae.code, 409,
                    "a stale lifecycle change of the published {name}: {ae:?}"
                ),
                other => panic!("a stale lifecycle change of the published {name}: {other:?}"),
            }
            for k in 0..3 {
                let got = r(k).get(&name).await.expect("get through every replica");
                assert_eq!(
                    got.data["spec"]["lifecycle"], "Published",
                    "replica {k} serves {name} as published"
                );
            }
            // A deletion proposal and a deletion change only git refs (no record of the
            // revision changes), yet every replica serves them at once.
            porch::set_lifecycle(&r(i + 1), &name, "DeletionProposed")
                .await
                .unwrap_or_else(|e| panic!("propose deletion of {name}: {e:?}"));
            for k in 0..3 {
                let got = r(k).get(&name).await.expect("get through every replica");
                assert_eq!(
                    got.data["spec"]["lifecycle"], "DeletionProposed",
                    "replica {k} serves the deletion proposal of {name}"
                );
            }
            r(i + 2)
                .delete(&name, &Default::default())
                .await
                .unwrap_or_else(|e| panic!("delete {name}: {e:?}"));
            for k in 0..3 {
                assert!(
                    porch::is_gone(&r(k), &name).await,
                    "replica {k} no longer serves the deleted {name}"
                );
            }
        }
    }
}

/// `--store postgres://…?sslmode=verify-full&sslrootcert=…` against a PostgreSQL that accepts
/// TCP over TLS only: two replicas serve, and each sees the other's writes.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn replicas_reach_postgres_over_tls() {
    let pg = PostgresServer::start_tls().expect("postgres with ssl=on");
    let url = format!(
        "{}?sslmode=verify-full&sslrootcert={}",
        pg.url(),
        pg.ca_cert().display()
    );
    let a = Server::start_with(&["--store", &url]);
    let b = Server::start_with(&["--store", &format!("{}?sslmode=require", pg.url())]);
    let (ca, cb) = (a.wait_readyz().await, b.wait_readyz().await);
    configmaps(&ca)
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "over-tls"}, "data": {"n": "1"}}))
                .expect("configmap"),
        )
        .await
        .expect("create over TLS");
    let got = configmaps(&cb)
        .get("over-tls")
        .await
        .expect("get through the other");
    assert_eq!(counter(&got), 1);
    // A plain connection is refused by this server, so the store really spoke TLS.
    let mut plain = std::process::Command::new(env!("CARGO_BIN_EXE_porch-server"))
        .args(["--store", &format!("{}?sslmode=disable", pg.url())])
        .arg("--data-dir")
        .arg(a.dir.path().join("plain"))
        .args(["--listen", "127.0.0.1:0"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("run porch-server");
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = plain.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = plain.kill();
            panic!("porch-server with sslmode=disable kept running");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(!status.success(), "sslmode=disable must fail here");
}

/// Every replica opens and syncs a repository (each reads its own mirror), but only the leader
/// reports: one `Ready` Event for the Repository, not one per replica.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn only_the_leader_reports_repository_readiness() {
    let c = cluster(3).await;
    let root = c.replicas[0].dir.path().join("git");
    std::fs::create_dir_all(&root).expect("git root");
    let git = GitServer::start(&root, None).expect("git server");
    porch::empty_remote(&root, "shared");
    porch::register(
        &c.clients[1],
        "default",
        "shared",
        &git.url_for("shared.git"),
        json!({}),
    )
    .await;
    // Every replica serves it (the read barrier waits for each one's first open).
    for client in &c.clients {
        porch::revisions(client, "default")
            .list(&Default::default())
            .await
            .expect("list through every replica");
    }
    let events: Api<k8s_openapi::api::core::v1::Event> =
        Api::namespaced(c.clients[0].clone(), "default");
    let ready_count = || async {
        events
            .list(&Default::default())
            .await
            .expect("events")
            .items
            .iter()
            .filter(|e| {
                e.involved_object.name.as_deref() == Some("shared")
                    && e.reason.as_deref() == Some("Ready")
            })
            .map(|e| e.count.unwrap_or(1))
            .sum::<i32>()
    };
    let deadline = Instant::now() + Duration::from_secs(15);
    while ready_count().await == 0 {
        assert!(
            Instant::now() < deadline,
            "no Ready event for the repository"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Time for the other replicas' first opens and status polls (2 s) to report, if they did.
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(ready_count().await, 1, "one Ready event, from the leader");
}

async fn tracing_free_sleep(e: &kube::Error) {
    match e {
        kube::Error::Api(a) if a.code == 409 || a.code == 404 || a.code == 503 => {}
        other => panic!("unexpected error: {other:?}"),
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
}

fn leader(replicas: &[Server]) -> Option<usize> {
    replicas
        .iter()
        .position(|s| s.child.is_some() && s.log().contains("this replica is the leader"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_controllers_move_when_the_leader_is_killed() {
    let mut c = cluster(3).await;
    let deadline = Instant::now() + Duration::from_secs(15);
    let first = loop {
        if let Some(i) = leader(&c.replicas) {
            break i;
        }
        assert!(Instant::now() < deadline, "no leader elected");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let leaders = c
        .replicas
        .iter()
        .filter(|s| s.log().contains("this replica is the leader"))
        .count();
    assert_eq!(leaders, 1, "one leader");
    assert!(
        c.replicas[first]
            .log()
            .contains("leading: starting the PackageVariant")
    );
    // Writers on every replica while the leader is killed: each stops at its first failure
    // and reports what was acknowledged.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut writers = Vec::new();
    for (r, client) in c.clients.iter().enumerate() {
        let (api, stop) = (configmaps(client), stop.clone());
        writers.push(tokio::spawn(async move {
            let mut acked = Vec::new();
            for i in 0.. {
                if stop.load(std::sync::atomic::Ordering::SeqCst) {
                    break;
                }
                let name = format!("ack-{r}-{i}");
                let cm: ConfigMap =
                    serde_json::from_value(json!({"metadata": {"name": name}})).expect("configmap");
                match tokio::time::timeout(
                    Duration::from_secs(5),
                    api.create(&PostParams::default(), &cm),
                )
                .await
                {
                    Ok(Ok(_)) => acked.push(name),
                    _ => break,
                }
            }
            acked
        }));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    c.replicas[first].kill9();
    let killed = Instant::now();
    let next = loop {
        if let Some(i) = leader(&c.replicas) {
            break i;
        }
        assert!(
            killed.elapsed() < Duration::from_secs(15),
            "the controllers did not move within 15 s"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_ne!(next, first);
    let deadline = Instant::now() + Duration::from_secs(15);
    while !c.replicas[next]
        .log()
        .contains("leading: starting the PackageVariant")
    {
        assert!(
            Instant::now() < deadline,
            "controllers not started on the new leader"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Every acknowledged write survived, whichever replica took it.
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let mut acked = Vec::new();
    for w in writers {
        acked.extend(w.await.expect("writer"));
    }
    assert!(acked.len() > 3, "writes were acknowledged: {}", acked.len());
    let stored: BTreeSet<String> = configmaps(&c.clients[next])
        .list(&Default::default())
        .await
        .expect("list")
        .items
        .into_iter()
        .filter_map(|c| c.metadata.name)
        .collect();
    let lost: Vec<&String> = acked.iter().filter(|n| !stored.contains(*n)).collect();
    assert!(lost.is_empty(), "acknowledged writes lost: {lost:?}");
    // The survivors still serve writes.
    configmaps(&c.clients[next])
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "after-failover"}}))
                .expect("configmap"),
        )
        .await
        .expect("write after failover");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_postgres_outage_fails_requests_cleanly_until_it_is_back() {
    let mut c = cluster(1).await;
    let s = &c.replicas[0];
    s.kubectl_ok(&["create", "configmap", "before"]);
    c.pg.stop().expect("stop postgres");
    let s = &c.replicas[0];
    // kubectl (client-go) does not retry a 503 without Retry-After: the failure shows.
    let out = s.kubectl(&["create", "configmap", "during"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("store unavailable"), "{err}");
    let out = s.kubectl(&["get", "configmap", "before"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("(ServiceUnavailable)"), "a 503: {err}");
    let ready = |s: &Server| s.kubectl(&["get", "--raw", "/readyz"]).status.success();
    let deadline = Instant::now() + Duration::from_secs(20);
    while ready(s) {
        assert!(Instant::now() < deadline, "readiness stayed true");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    c.pg.start_again().expect("start postgres");
    let s = &c.replicas[0];
    let deadline = Instant::now() + Duration::from_secs(20);
    while !ready(s) {
        assert!(Instant::now() < deadline, "readiness did not come back");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    s.kubectl_ok(&["create", "configmap", "after"]);
    let names = s.kubectl_ok(&["get", "configmaps", "-o", "name"]);
    assert!(names.contains("configmap/before") && names.contains("configmap/after"));
    assert!(!names.contains("configmap/during"), "no half-done write");
}
