//! A bounded fuzz run of the resources-update path: arbitrary and mutated package contents
//! never panic and never come back as the server's fault (`Internal`); content errors are
//! the user's (`Invalid`), and a refused update saves nothing.

use std::collections::BTreeMap;

use porch_core::ErrorKind;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use crate::common::{NS, World, init_req};

const SEEDS: &[&str] = &[
    "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\npipeline:\n  mutators:\n  - image: ghcr.io/kptdev/krm-functions-catalog/set-namespace:v0.4.1\n    configMap:\n      namespace: prod\n",
    "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\npipeline:\n  mutators:\n  - image: gcr.io/kpt-fn/starlark:v0.4.3\n    configPath: star.yaml\n",
    "apiVersion: fn.kpt.dev/v1alpha1\nkind: StarlarkRun\nmetadata:\n  name: s\nsource: |\n  for r in ctx.resource_list[\"items\"]:\n    r[\"metadata\"][\"labels\"] = {\"a\": \"b\"}\n",
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm # c\n  namespace: x\ndata:\n  k: &a v\n  j: *a\n",
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 3\n  template:\n    spec:\n      containers:\n      - name: app\n        image: nginx\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: svc\n",
];

/// Bytes derived from a seed: flipped, cut, spliced with YAML punctuation, or random.
fn content() -> impl Strategy<Value = Vec<u8>> {
    let punct = prop::sample::select(vec![
        ":",
        "-",
        "[",
        "{",
        "}",
        "]",
        "&x",
        "*x",
        "!!",
        "\t",
        "'",
        "\"",
        "\n",
        "---\n",
        "#",
        "|",
        ">",
        "? ",
        "%YAML 1.1\n",
        "\u{feff}",
        "\0",
    ]);
    prop_oneof![
        (0..SEEDS.len(), any::<prop::sample::Index>(), punct).prop_map(|(s, at, p)| {
            let seed = SEEDS[s].as_bytes();
            let i = at.index(seed.len() + 1);
            [&seed[..i], p.as_bytes(), &seed[i..]].concat()
        }),
        (0..SEEDS.len(), any::<prop::sample::Index>()).prop_map(|(s, at)| {
            let seed = SEEDS[s].as_bytes();
            seed[..at.index(seed.len() + 1)].to_vec()
        }),
        (0..SEEDS.len(), any::<prop::sample::Index>(), any::<u8>()).prop_map(|(s, at, b)| {
            let mut seed = SEEDS[s].as_bytes().to_vec();
            let i = at.index(seed.len());
            seed[i] ^= b | 1;
            seed
        }),
        prop::collection::vec(any::<u8>(), 0..200),
        (0..SEEDS.len()).prop_map(|s| SEEDS[s].as_bytes().to_vec()),
    ]
}

fn package() -> impl Strategy<Value = BTreeMap<String, Vec<u8>>> {
    let names = prop::sample::select(vec![
        "Kptfile",
        "star.yaml",
        "cm.yaml",
        "sub/deploy.yaml",
        "notes.txt",
        "sub/Kptfile",
    ]);
    prop::collection::btree_map(names.prop_map(str::to_owned), content(), 0..5)
}

#[test]
fn resources_updates_never_fail_as_the_servers_fault() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let w = World::new().expect("world");
    let url = w.empty_remote("r.git").expect("remote");
    rt.block_on(async {
        w.register("r", &url).await.expect("register");
        w.engine
            .create(init_req("r", "app", "ws"))
            .await
            .expect("create");
    });
    let cases: u32 = std::env::var("PORCH_FUZZ_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(96);
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let (ok, refused) = (
        std::sync::atomic::AtomicUsize::new(0),
        std::sync::atomic::AtomicUsize::new(0),
    );
    runner
        .run(&package(), |files| {
            rt.block_on(async {
                let current = w.engine.get(NS, "r.app.ws").expect("get");
                let (_, before) = w.engine.read_resources(NS, "r.app.ws").await.expect("read");
                match w
                    .engine
                    .update_resources(NS, "r.app.ws", &current.resource_version, files.clone())
                    .await
                {
                    Ok(_) => {
                        ok.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                    Err(e) => {
                        refused.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        prop_assert_ne!(e.kind(), ErrorKind::Internal, "{} for {:?}", e, files);
                        let (_, after) =
                            w.engine.read_resources(NS, "r.app.ws").await.expect("read");
                        prop_assert_eq!(after, before, "a refused update saved something");
                    }
                }
                Ok(())
            })
        })
        .expect("no update failed as the server's fault");
    // Both sides of the path ran: the generator is not degenerate.
    let (ok, refused) = (ok.into_inner(), refused.into_inner());
    assert!(ok > 0 && refused > 0, "{ok} saved, {refused} refused");
}
