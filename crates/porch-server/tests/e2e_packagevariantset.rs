//! The PackageVariantSet controller through the real server (spec §16.3): a set applied with
//! kubectl fans one upstream out to a PackageVariant per target, whose controller clones the
//! downstream drafts; targets no longer wanted lose their PackageVariant; deleting the set
//! collects its PackageVariants.

mod common;

use common::porch::*;
use futures::StreamExt;
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams};
use serde_json::json;

const NS: &str = "default";

fn api(env: &Env, version: &str, kind: &str, plural: &str) -> Api<DynamicObject> {
    Api::namespaced_with(
        env.client.clone(),
        NS,
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("config.porch.kpt.dev", version, kind),
            plural,
        ),
    )
}

fn apply_set(env: &Env, targets: &str) {
    let yaml = format!(
        "apiVersion: config.porch.kpt.dev/v1alpha2\nkind: PackageVariantSet\nmetadata:\n  name: fan\n  namespace: {NS}\nspec:\n  upstream: {{repo: blueprints, package: foo, revision: 1}}\n  targets:\n{targets}"
    );
    let out = env.server.kubectl_stdin(&["apply", "-f", "-"], Some(&yaml));
    assert!(
        out.status.success(),
        "kubectl apply: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

async fn names(api: &Api<DynamicObject>) -> Vec<String> {
    let mut v: Vec<String> = api
        .list(&ListParams::default())
        .await
        .expect("list")
        .items
        .into_iter()
        .filter_map(|o| o.metadata.name)
        .collect();
    v.sort();
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_set_fans_out_follows_its_targets_and_is_collected() {
    let env = Env::start().await;
    let blueprints = env.empty_repo("blueprints");
    env.register(NS, "blueprints", &blueprints, json!({})).await;
    for repo in ["east", "west"] {
        let url = env.empty_repo(repo);
        env.register(NS, repo, &url, json!({})).await;
        env.server
            .kubectl_ok(&["label", "repository", repo, "tier=edge"]);
    }
    init_published(&env.prs(NS), "blueprints", "foo", "v1").await;
    let (sets, pvs, prs) = (
        api(&env, "v1alpha2", "PackageVariantSet", "packagevariantsets"),
        api(&env, "v1alpha1", "PackageVariant", "packagevariants"),
        env.prs(NS),
    );

    apply_set(
        &env,
        "  - repositories:\n    - name: east\n    - name: west\n      packageNames: [foo, bar]\n",
    );
    eventually("a PackageVariant per target", || async {
        names(&pvs).await.len() == 3
    })
    .await;
    assert_eq!(
        names(&pvs).await,
        ["fan-east-foo", "fan-west-bar", "fan-west-foo"]
    );
    let set = sets.get("fan").await.expect("set");
    let pv = pvs.get("fan-east-foo").await.expect("pv");
    assert_eq!(
        label(&pv, "config.porch.kpt.dev/packagevariantset"),
        set.metadata.uid.clone()
    );
    let owner = &pv.metadata.owner_references.clone().unwrap_or_default()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str(), owner.controller),
        ("PackageVariantSet", "fan", Some(true))
    );
    // The PackageVariant controller takes it from there: one draft per target.
    for draft in [
        "east.foo.packagevariant-1",
        "west.foo.packagevariant-1",
        "west.bar.packagevariant-1",
    ] {
        eventually(draft, || async { prs.get(draft).await.is_ok() }).await;
    }
    eventually("the set is Ready", || async {
        let set = sets.get("fan").await.expect("set");
        set.data["status"]["conditions"]
            .as_array()
            .is_some_and(|c| {
                c.iter()
                    .any(|c| c["type"] == "Ready" && c["status"] == "True")
            })
    })
    .await;

    // A target dropped from the set loses its PackageVariant; the others are not rewritten.
    let kept = pvs.get("fan-east-foo").await.expect("pv");
    apply_set(
        &env,
        "  - repositories:\n    - name: east\n    - name: west\n      packageNames: [foo]\n",
    );
    eventually("fan-west-bar deleted", || async {
        names(&pvs).await == ["fan-east-foo", "fan-west-foo"]
    })
    .await;
    assert_eq!(
        pvs.get("fan-east-foo")
            .await
            .expect("pv")
            .metadata
            .resource_version,
        kept.metadata.resource_version
    );

    // Selecting repositories by label: the same two repositories, so nothing changes but the
    // package names.
    apply_set(
        &env,
        "  - repositorySelector: {matchLabels: {tier: edge}}\n    template:\n      downstream: {packageExpr: \"'app-' + repoDefault\"}\n",
    );
    eventually("PackageVariants from the selector", || async {
        names(&pvs).await == ["fan-east-app-east", "fan-west-app-west"]
    })
    .await;

    // Deleting the set collects its PackageVariants.
    sets.delete("fan", &DeleteParams::default())
        .await
        .expect("delete set");
    eventually("PackageVariants collected", || async {
        names(&pvs).await.is_empty()
    })
    .await;
}

/// Waits up to two minutes (a 100-target fan-out in a debug build on a loaded machine).
async fn within_two_minutes<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(120);
    while !check().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for: {what}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// kill -9 in the middle of a 100-target fan-out: after the restart every target has exactly
/// one draft (none lost, none duplicated) and one PackageVariant.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_fan_out_killed_midway_converges_without_duplicates() {
    let mut env = Env::start().await;
    let blueprints = env.empty_repo("blueprints");
    env.register(NS, "blueprints", &blueprints, json!({})).await;
    let repos = ["r0", "r1", "r2", "r3"];
    for repo in repos {
        let url = env.empty_repo(repo);
        env.register(NS, repo, &url, json!({})).await;
    }
    init_published(&env.prs(NS), "blueprints", "foo", "v1").await;
    let packages: Vec<String> = (0..25).map(|i| format!("p{i:02}")).collect();
    let targets: String = repos
        .iter()
        .map(|r| {
            format!(
                "    - name: {r}\n      packageNames: [{}]\n",
                packages.join(", ")
            )
        })
        .collect();
    apply_set(&env, &format!("  - repositories:\n{targets}"));

    let prs = env.prs(NS);
    within_two_minutes("the fan-out to start", || async {
        list_names(&prs, &Default::default())
            .await
            .iter()
            .any(|n| n.contains(".packagevariant-"))
    })
    .await;
    tokio::task::block_in_place(|| env.server.kill9_and_restart());

    let (prs, pvs) = (
        env.prs(NS),
        api(&env, "v1alpha1", "PackageVariant", "packagevariants"),
    );
    let drafts = |names: Vec<String>| {
        names
            .into_iter()
            .filter(|n| n.contains(".packagevariant-"))
            .collect::<Vec<_>>()
    };
    within_two_minutes("100 downstream drafts", || async {
        drafts(list_names(&prs, &Default::default()).await).len() >= 100
    })
    .await;
    // Let the controllers settle, then check nothing more was made.
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    let got = drafts(list_names(&prs, &Default::default()).await);
    let mut want: Vec<String> = repos
        .iter()
        .flat_map(|r| {
            packages
                .iter()
                .map(move |p| format!("{r}.{p}.packagevariant-1"))
        })
        .collect();
    want.sort();
    assert_eq!(got, want, "exactly one draft per target");
    assert_eq!(names(&pvs).await.len(), 100);
}

const CLUSTER_CRD: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: workloadclusters.infra.nephio.org
spec:
  group: infra.nephio.org
  scope: Namespaced
  names: {plural: workloadclusters, singular: workloadcluster, kind: WorkloadCluster}
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              clusterName: {type: string}
"#;

/// `objectSelector` over a kind a CRD made servable: one PackageVariant per selected object,
/// its name the downstream repository (`repoDefault`).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_object_selector_over_a_custom_kind_picks_its_targets() {
    let env = Env::start().await;
    let blueprints = env.empty_repo("blueprints");
    env.register(NS, "blueprints", &blueprints, json!({})).await;
    for repo in ["east", "west", "north"] {
        let url = env.empty_repo(repo);
        env.register(NS, repo, &url, json!({})).await;
    }
    init_published(&env.prs(NS), "blueprints", "foo", "v1").await;
    let out = env
        .server
        .kubectl_stdin(&["apply", "-f", "-"], Some(CLUSTER_CRD));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    env.server.kubectl_ok(&[
        "wait",
        "--for=condition=Established",
        "crd/workloadclusters.infra.nephio.org",
        "--timeout=30s",
    ]);
    for (name, env_label) in [("east", "prod"), ("west", "prod"), ("north", "test")] {
        let obj = format!(
            "apiVersion: infra.nephio.org/v1alpha1\nkind: WorkloadCluster\nmetadata:\n  name: {name}\n  namespace: {NS}\n  labels: {{env: {env_label}}}\nspec:\n  clusterName: {name}\n"
        );
        let out = env.server.kubectl_stdin(&["apply", "-f", "-"], Some(&obj));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    apply_set(
        &env,
        "  - objectSelector:\n      apiVersion: infra.nephio.org/v1alpha1\n      kind: WorkloadCluster\n      matchLabels: {env: prod}\n",
    );
    let (pvs, prs) = (
        api(&env, "v1alpha1", "PackageVariant", "packagevariants"),
        env.prs(NS),
    );
    eventually("a PackageVariant per selected cluster", || async {
        names(&pvs).await == ["fan-east-foo", "fan-west-foo"]
    })
    .await;
    for draft in ["east.foo.packagevariant-1", "west.foo.packagevariant-1"] {
        eventually(draft, || async { prs.get(draft).await.is_ok() }).await;
    }
    // Relabelling a cluster moves it into the selection.
    env.server.kubectl_ok(&[
        "label",
        "workloadcluster",
        "north",
        "env=prod",
        "--overwrite",
    ]);
    eventually("north selected", || async {
        names(&pvs).await == ["fan-east-foo", "fan-north-foo", "fan-west-foo"]
    })
    .await;
}

/// The controller's debug lines, one per set reconcile.
fn set_reconciles(env: &Env) -> usize {
    env.log().matches("packagevariantset reconcile").count()
}

fn core_api(env: &Env, kind: &str, plural: &str) -> Api<DynamicObject> {
    Api::namespaced_with(
        env.client.clone(),
        NS,
        &ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("", "v1", kind), plural),
    )
}

/// `(name, resourceVersion)` of every object `api` lists.
async fn versions(api: &Api<DynamicObject>) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = api
        .list(&ListParams::default())
        .await
        .expect("list")
        .items
        .into_iter()
        .map(|o| {
            (
                o.metadata.name.unwrap_or_default(),
                o.metadata.resource_version.unwrap_or_default(),
            )
        })
        .collect();
    v.sort();
    v
}

fn is_ready(o: &DynamicObject) -> bool {
    o.data["status"]["conditions"].as_array().is_some_and(|c| {
        c.iter()
            .any(|c| c["type"] == "Ready" && c["status"] == "True")
    })
}

/// A 40-target fan-out converges without a Warning event; once converged the server writes
/// no PackageVariant, set or Event while idle, a ConfigMap nobody selects wakes no set, and
/// a Repository change (what sets depend on) does.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_converged_fan_out_is_quiet() {
    let mut env = Env::start().await;
    env.server.envs.push((
        "RUST_LOG".into(),
        "info,porch_controllers::packagevariantset=debug".into(),
    ));
    tokio::task::block_in_place(|| env.server.restart());
    env.server.wait_readyz().await;
    let blueprints = env.empty_repo("blueprints");
    env.register(NS, "blueprints", &blueprints, json!({})).await;
    let repos = ["r0", "r1", "r2", "r3"];
    for repo in repos {
        let url = env.empty_repo(repo);
        env.register(NS, repo, &url, json!({})).await;
    }
    init_published(&env.prs(NS), "blueprints", "foo", "v1").await;
    let packages: Vec<String> = (0..10).map(|i| format!("p{i}")).collect();
    let targets: String = repos
        .iter()
        .map(|r| {
            format!(
                "    - name: {r}\n      packageNames: [{}]\n",
                packages.join(", ")
            )
        })
        .collect();
    apply_set(&env, &format!("  - repositories:\n{targets}"));

    let (sets, pvs, prs, events) = (
        api(&env, "v1alpha2", "PackageVariantSet", "packagevariantsets"),
        api(&env, "v1alpha1", "PackageVariant", "packagevariants"),
        env.prs(NS),
        core_api(&env, "Event", "events"),
    );
    within_two_minutes("40 Ready PackageVariants and their drafts", || async {
        let ready = pvs
            .list(&ListParams::default())
            .await
            .expect("list")
            .items
            .iter()
            .filter(|pv| is_ready(pv))
            .count();
        let drafts = list_names(&prs, &Default::default())
            .await
            .iter()
            .filter(|n| n.contains(".packagevariant-"))
            .count();
        ready == 40 && drafts == 40 && is_ready(&sets.get("fan").await.expect("set"))
    })
    .await;

    // Converging made no error: no Warning event (a "not found" retry included).
    let warnings: Vec<String> = events
        .list(&ListParams::default())
        .await
        .expect("events")
        .items
        .iter()
        .filter(|e| e.data["type"] == "Warning")
        .map(|e| format!("{} {}", e.data["reason"], e.data["message"]))
        .collect();
    assert!(
        warnings.is_empty(),
        "warnings while converging: {warnings:?}"
    );

    // Idle: nothing is written.
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    let before = (
        versions(&pvs).await,
        versions(&sets).await,
        versions(&events).await,
    );
    let reconciles = set_reconciles(&env);
    tokio::time::sleep(std::time::Duration::from_secs(5)).await;
    let after = (
        versions(&pvs).await,
        versions(&sets).await,
        versions(&events).await,
    );
    assert_eq!(
        before, after,
        "an idle server rewrote variants, sets or events"
    );
    assert_eq!(
        set_reconciles(&env),
        reconciles,
        "an idle set was reconciled"
    );

    // A ConfigMap no set selects wakes no set.
    env.server
        .kubectl_ok(&["create", "configmap", "unrelated", "--from-literal=a=b"]);
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    assert_eq!(
        set_reconciles(&env),
        reconciles,
        "an unrelated ConfigMap woke a set"
    );
    assert_eq!(versions(&sets).await, before.1);

    // What a set does depend on wakes it (the count above can move), and still writes nothing.
    env.server
        .kubectl_ok(&["label", "repository", "r0", "tier=edge"]);
    within_two_minutes("a Repository change wakes the set", || async {
        set_reconciles(&env) > reconciles
    })
    .await;
    assert_eq!(versions(&sets).await, before.1);
    assert_eq!(versions(&pvs).await, before.0);

    // Publishing the drafts (8 at a time) while their resources are read without pause: every
    // read finds the draft or the published revision (never "<name> not found" in between),
    // and the variants follow without a Warning.
    let drafts: Vec<String> = repos
        .iter()
        .flat_map(|r| {
            packages
                .iter()
                .map(move |p| format!("{r}.{p}.packagevariant-1"))
        })
        .collect();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let (prrs, drafts, done) = (env.prrs(NS), drafts.clone(), done.clone());
        tokio::spawn(async move {
            let mut missing = Vec::new();
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                for d in &drafts {
                    if let Err(e) = prrs.get(d).await {
                        missing.push(format!("{d}: {e}"));
                    }
                }
            }
            missing
        })
    };
    futures::stream::iter(drafts.iter())
        .for_each_concurrent(8, |d| {
            let prs = prs.clone();
            async move {
                publish(&prs, d).await;
            }
        })
        .await;
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    let missing = reader.await.expect("reader");
    assert!(
        missing.is_empty(),
        "reads failed while approving: {missing:?}"
    );
    within_two_minutes("variants Ready after publishing", || async {
        pvs.list(&ListParams::default())
            .await
            .expect("list")
            .items
            .iter()
            .filter(|pv| is_ready(pv))
            .count()
            == 40
    })
    .await;
    let warnings: Vec<String> = events
        .list(&ListParams::default())
        .await
        .expect("events")
        .items
        .iter()
        .filter(|e| e.data["type"] == "Warning")
        .map(|e| format!("{} {}", e.data["reason"], e.data["message"]))
        .collect();
    assert!(
        warnings.is_empty(),
        "warnings after publishing: {warnings:?}"
    );
}
