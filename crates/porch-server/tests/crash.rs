//! kill -9 during a stream of writes loses no acknowledged write, and resourceVersions keep
//! increasing after the restart.

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::Server;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, ListParams, PostParams};

fn secret(name: &str) -> Secret {
    let mut s = Secret::default();
    s.metadata.name = Some(name.into());
    s.string_data = Some(BTreeMap::from([("k".to_string(), name.to_string())]));
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kill_9_loses_no_acknowledged_write() {
    let mut s = Server::start();
    let client = s.client().await;
    let api: Api<Secret> = Api::namespaced(client.clone(), "default");
    let acked: Arc<Mutex<Vec<(String, u64)>>> = Arc::default();

    let mut writers = Vec::new();
    for w in 0..4 {
        let api = api.clone();
        let acked = acked.clone();
        writers.push(tokio::spawn(async move {
            for i in 0.. {
                let name = format!("w{w}-{i}");
                match api.create(&PostParams::default(), &secret(&name)).await {
                    Ok(created) => {
                        let rv = created
                            .metadata
                            .resource_version
                            .and_then(|r| r.parse().ok())
                            .expect("rv");
                        acked.lock().expect("lock").push((name, rv));
                    }
                    Err(_) => return,
                }
            }
        }));
    }
    // Let writes flow, then kill the server mid-stream.
    while acked.lock().expect("lock").len() < 200 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    tokio::task::block_in_place(|| s.kill9());
    for w in writers {
        let _ = w.await;
    }
    let acked = acked.lock().expect("lock").clone();
    assert!(acked.len() >= 200);

    tokio::task::block_in_place(|| s.kill9_and_restart());
    let list = api
        .list(&ListParams::default())
        .await
        .expect("list after restart");
    let stored: BTreeMap<String, u64> = list
        .items
        .iter()
        .map(|i| {
            let name = i.metadata.name.clone().unwrap_or_default();
            let rv = i
                .metadata
                .resource_version
                .as_deref()
                .and_then(|r| r.parse().ok())
                .unwrap_or(0);
            (name, rv)
        })
        .collect();
    for (name, rv) in &acked {
        assert_eq!(
            stored.get(name),
            Some(rv),
            "acknowledged write {name}@{rv} lost"
        );
    }
    let max = acked.iter().map(|(_, rv)| *rv).max().unwrap_or(0);
    let next = api
        .create(&PostParams::default(), &secret("after-crash"))
        .await
        .expect("write after restart");
    let next_rv: u64 = next
        .metadata
        .resource_version
        .and_then(|r| r.parse().ok())
        .expect("rv");
    assert!(next_rv > max, "{next_rv} <= {max}");
}
