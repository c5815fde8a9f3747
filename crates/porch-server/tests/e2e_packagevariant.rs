//! The PackageVariant controller through the real server (spec §16.2): kubectl applies
//! variants, a kube-rs client watches what the controller does with package revisions over
//! the smart-HTTP git fixture.

mod common;

use common::porch::*;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams};
use serde_json::{Value, json};

const NS: &str = "default";

fn variants(env: &Env) -> Api<DynamicObject> {
    Api::namespaced_with(
        env.client.clone(),
        NS,
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("config.porch.kpt.dev", "v1alpha1", "PackageVariant"),
            "packagevariants",
        ),
    )
}

/// `kubectl apply -f -` of a PackageVariant with `spec` (YAML, indented two spaces).
fn apply(env: &Env, name: &str, spec: &str) {
    let yaml = format!(
        "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: {name}\n  namespace: {NS}\nspec:\n{spec}"
    );
    let out = env.server.kubectl_stdin(&["apply", "-f", "-"], Some(&yaml));
    assert!(
        out.status.success(),
        "kubectl apply: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn condition(pv: &DynamicObject, kind: &str) -> (String, String, String) {
    let c = pv.data["status"]["conditions"]
        .as_array()
        .and_then(|a| a.iter().find(|c| c["type"] == kind))
        .cloned()
        .unwrap_or(Value::Null);
    let s = |k: &str| c[k].as_str().unwrap_or("").to_owned();
    (s("status"), s("reason"), s("message"))
}

fn rv(o: &DynamicObject) -> String {
    o.metadata.resource_version.clone().unwrap_or_default()
}

async fn lifecycle(prs: &Api<DynamicObject>, name: &str) -> Option<String> {
    prs.get(name)
        .await
        .ok()
        .map(|p| spec(&p)["lifecycle"].as_str().unwrap_or("").to_owned())
}

async fn setup(env: &Env) {
    let blueprints = env.empty_repo("blueprints");
    env.register(NS, "blueprints", &blueprints, json!({})).await;
    let deployments = env.empty_repo("deployments");
    env.register(NS, "deployments", &deployments, json!({}))
        .await;
    init_published(&env.prs(NS), "blueprints", "foo", "v1").await;
}

const SPEC: &str = "  upstream: {repo: blueprints, package: foo, revision: 1}\n  downstream: {repo: deployments, package: bar}\n  labels: {team: a}\n  annotations: {note: x}\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_variant_clones_upgrades_and_deletes_its_downstream() {
    let env = Env::start().await;
    setup(&env).await;
    let (prs, pvs) = (env.prs(NS), variants(&env));
    apply(&env, "my-pv", SPEC);

    // A draft cloned from the upstream, owned by the variant, with its labels.
    let draft = "deployments.bar.packagevariant-1";
    eventually("the downstream draft", || async {
        prs.get(draft).await.is_ok()
    })
    .await;
    let pv = pvs.get("my-pv").await.expect("pv");
    let d = prs.get(draft).await.expect("draft");
    let owner = &d.metadata.owner_references.clone().unwrap_or_default()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str(), owner.controller),
        ("PackageVariant", "my-pv", Some(true))
    );
    assert_eq!(Some(&owner.uid), pv.metadata.uid.as_ref());
    assert_eq!(label(&d, "team").as_deref(), Some("a"));
    assert_eq!(spec(&d)["tasks"][0]["type"], "clone");
    assert_eq!(
        spec(&d)["tasks"][0]["clone"]["upstreamRef"]["upstreamRef"]["name"],
        "blueprints.foo.v1"
    );
    eventually("Ready", || async {
        let pv = pvs.get("my-pv").await.expect("pv");
        condition(&pv, "Ready").0 == "True"
    })
    .await;
    let pv = pvs.get("my-pv").await.expect("pv");
    assert_eq!(
        condition(&pv, "Ready"),
        (
            "True".into(),
            "NoErrors".into(),
            "successfully ensured downstream package variant".into()
        )
    );
    assert_eq!(condition(&pv, "Stalled").1, "Valid");
    assert_eq!(pv.data["status"]["downstreamTargets"][0]["name"], draft);
    assert_eq!(
        pv.metadata.finalizers.clone().unwrap_or_default(),
        ["config.porch.kpt.dev/packagevariants"]
    );

    // Converged: a change that asks for a reconcile writes nothing.
    let touched = pvs
        .patch(
            "my-pv",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {"touch": "1"}}})),
        )
        .await
        .expect("touch");
    let draft_rv = rv(&prs.get(draft).await.expect("draft"));
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    assert_eq!(rv(&pvs.get("my-pv").await.expect("pv")), rv(&touched));
    assert_eq!(rv(&prs.get(draft).await.expect("draft")), draft_rv);

    // A new upstream revision the variant moves to: one upgrade draft.
    publish(&prs, draft).await;
    create(
        &prs,
        "blueprints",
        "foo",
        "v2",
        edit_task("blueprints.foo.v1"),
    )
    .await;
    publish(&prs, "blueprints.foo.v2").await;
    pvs.patch(
        "my-pv",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"upstream": {"revision": 2}}})),
    )
    .await
    .expect("move to v2");
    let upgrade = "deployments.bar.packagevariant-2";
    eventually("the upgrade draft", || async {
        prs.get(upgrade).await.is_ok()
    })
    .await;
    let u = prs.get(upgrade).await.expect("upgrade");
    assert_eq!(spec(&u)["tasks"][0]["type"], "upgrade");
    assert_eq!(
        spec(&u)["tasks"][0]["upgrade"]["newUpstreamRef"]["name"],
        "blueprints.foo.v2"
    );
    eventually("the upgrade draft is the target", || async {
        let pv = pvs.get("my-pv").await.expect("pv");
        pv.data["status"]["downstreamTargets"][0]["name"] == upgrade
    })
    .await;

    // Deletion with deletionPolicy delete: drafts deleted, published proposed for deletion
    // and orphaned.
    let out = env.server.kubectl(&[
        "delete",
        "packagevariant",
        "my-pv",
        "-n",
        NS,
        "--wait=false",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    eventually("the variant is gone", || async {
        pvs.get("my-pv").await.is_err()
    })
    .await;
    assert!(is_gone(&prs, upgrade).await, "the upgrade draft is deleted");
    let published = "deployments.bar.packagevariant-1";
    assert_eq!(
        lifecycle(&prs, published).await.as_deref(),
        Some("DeletionProposed")
    );
    let p = prs.get(published).await.expect("published");
    assert!(
        p.metadata
            .owner_references
            .clone()
            .unwrap_or_default()
            .is_empty()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_orphaning_variant_leaves_its_draft_without_the_owner() {
    let env = Env::start().await;
    setup(&env).await;
    let (prs, pvs) = (env.prs(NS), variants(&env));
    apply(
        &env,
        "orphaner",
        &format!("{SPEC}  deletionPolicy: orphan\n"),
    );
    let draft = "deployments.bar.packagevariant-1";
    eventually("the downstream draft", || async {
        prs.get(draft).await.is_ok()
    })
    .await;
    eventually("Ready", || async {
        condition(&pvs.get("orphaner").await.expect("pv"), "Ready").0 == "True"
    })
    .await;
    pvs.delete("orphaner", &Default::default())
        .await
        .expect("delete");
    eventually("the variant is gone", || async {
        pvs.get("orphaner").await.is_err()
    })
    .await;
    let d = prs.get(draft).await.expect("the draft stays");
    assert_eq!(spec(&d)["lifecycle"], "Draft");
    assert!(
        d.metadata
            .owner_references
            .clone()
            .unwrap_or_default()
            .is_empty()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_invalid_variant_is_accepted_and_stalled() {
    let env = Env::start().await;
    setup(&env).await;
    let (prs, pvs) = (env.prs(NS), variants(&env));
    apply(
        &env,
        "bad",
        "  upstream: {repo: blueprints, package: foo, revision: 1}\n  downstream: {repo: deployments, package: bar}\n  adoptionPolicy: sometimes\n",
    );
    eventually("Stalled", || async {
        condition(&pvs.get("bad").await.expect("pv"), "Stalled").0 == "True"
    })
    .await;
    let pv = pvs.get("bad").await.expect("pv");
    assert_eq!(
        condition(&pv, "Stalled"),
        (
            "True".into(),
            "ValidationError".into(),
            "spec.adoptionPolicy field can only be \"adoptNone\" or \"adoptExisting\"".into()
        )
    );
    assert_eq!(
        condition(&pv, "Ready"),
        (
            "False".into(),
            "Error".into(),
            "invalid packagevariant object".into()
        )
    );
    assert!(is_gone(&prs, "deployments.bar.packagevariant-1").await);
}

/// Killed (-9) as soon as the drafts appear, possibly mid-reconcile: after the restart the
/// controller finds its drafts by ownerReference and clones nothing more.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_restart_after_kill_9_does_not_duplicate_drafts() {
    let mut env = Env::start().await;
    setup(&env).await;
    let deployments2 = env.empty_repo("deployments2");
    env.register(NS, "deployments2", &deployments2, json!({}))
        .await;
    apply(&env, "first", SPEC);
    apply(
        &env,
        "second",
        "  upstream: {repo: blueprints, package: foo, revision: 1}\n  downstream: {repo: deployments2, package: bar}\n",
    );
    let prs = env.prs(NS);
    eventually("a draft", || async {
        prs.get("deployments.bar.packagevariant-1").await.is_ok()
    })
    .await;
    tokio::task::block_in_place(|| env.server.kill9_and_restart());
    let (prs, pvs) = (env.prs(NS), variants(&env));
    for pv in ["first", "second"] {
        eventually("Ready after the restart", || async {
            pvs.get(pv)
                .await
                .is_ok_and(|p| condition(&p, "Ready").0 == "True")
        })
        .await;
    }
    let names = list_names(&prs, &Default::default()).await;
    let downstream: Vec<&String> = names
        .iter()
        .filter(|n| n.starts_with("deployments"))
        .collect();
    assert_eq!(
        downstream,
        [
            "deployments.bar.packagevariant-1",
            "deployments2.bar.packagevariant-1"
        ],
        "{names:?}"
    );
}

/// A variant without `upstream.revision` follows the latest published upstream: publishing a
/// new upstream revision (no change to the variant) yields an upgrade draft.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn publishing_a_new_upstream_revision_yields_an_upgrade_draft() {
    let env = Env::start().await;
    setup(&env).await;
    let prs = env.prs(NS);
    apply(
        &env,
        "follower",
        "  upstream: {repo: blueprints, package: foo}\n  downstream: {repo: deployments, package: bar}\n",
    );
    let first = "deployments.bar.packagevariant-1";
    eventually("the downstream draft", || async {
        prs.get(first).await.is_ok()
    })
    .await;
    publish(&prs, first).await;
    create(
        &prs,
        "blueprints",
        "foo",
        "v2",
        edit_task("blueprints.foo.v1"),
    )
    .await;
    publish(&prs, "blueprints.foo.v2").await;
    let upgrade = "deployments.bar.packagevariant-2";
    eventually("the upgrade draft", || async {
        prs.get(upgrade).await.is_ok()
    })
    .await;
    let u = prs.get(upgrade).await.expect("upgrade");
    assert_eq!(spec(&u)["tasks"][0]["type"], "upgrade");
    assert_eq!(
        spec(&u)["tasks"][0]["upgrade"]["oldUpstreamRef"]["name"],
        "blueprints.foo.v1"
    );
    assert_eq!(
        spec(&u)["tasks"][0]["upgrade"]["localPackageRevisionRef"]["name"],
        first
    );
}

/// Deleting a namespace runs the finalizer of its PackageVariants before its contents go: the
/// draft of a `delete` variant is deleted, the draft of an `orphan` variant stays without its
/// owner. (Stored drafts outlive their Repository's registration: registering the same
/// remote again in a namespace of the same name shows what the finalizers left.)
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn deleting_the_namespace_runs_the_variants_finalizer() {
    const NS2: &str = "doomed";
    let env = Env::start().await;
    env.namespace(NS2).await;
    let blueprints = env.empty_repo("blueprints");
    env.register(NS2, "blueprints", &blueprints, json!({}))
        .await;
    let deployments = env.empty_repo("deployments");
    env.register(NS2, "deployments", &deployments, json!({}))
        .await;
    let prs = env.prs(NS2);
    init_published(&prs, "blueprints", "foo", "v1").await;
    let pvs: Api<DynamicObject> = Api::namespaced_with(
        env.client.clone(),
        NS2,
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("config.porch.kpt.dev", "v1alpha1", "PackageVariant"),
            "packagevariants",
        ),
    );
    for (name, package, policy) in [("deleter", "a", "delete"), ("orphaner", "b", "orphan")] {
        let yaml = format!(
            "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: {name}\n  namespace: {NS2}\nspec:\n  upstream: {{repo: blueprints, package: foo, revision: 1}}\n  downstream: {{repo: deployments, package: {package}}}\n  deletionPolicy: {policy}\n"
        );
        let out = env.server.kubectl_stdin(&["apply", "-f", "-"], Some(&yaml));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    for name in ["deleter", "orphaner"] {
        eventually("Ready", || async {
            pvs.get(name)
                .await
                .is_ok_and(|pv| condition(&pv, "Ready").0 == "True")
        })
        .await;
    }
    let (a, b) = (
        "deployments.a.packagevariant-1",
        "deployments.b.packagevariant-1",
    );
    assert!(prs.get(a).await.is_ok() && prs.get(b).await.is_ok());

    let out = env
        .server
        .kubectl(&["delete", "namespace", NS2, "--timeout=120s"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(pvs.get("deleter").await.is_err());
    assert!(pvs.get("orphaner").await.is_err());

    // What the finalizers left, seen through the same remote registered again.
    env.namespace(NS2).await;
    env.register(NS2, "deployments", &deployments, json!({}))
        .await;
    eventually("the orphaned draft", || async { prs.get(b).await.is_ok() }).await;
    let orphan = prs.get(b).await.expect("orphaned draft");
    assert!(
        orphan
            .metadata
            .owner_references
            .clone()
            .unwrap_or_default()
            .is_empty(),
        "the orphaned draft lost its owner"
    );
    assert!(
        prs.get(a).await.is_err(),
        "the draft of the deleting variant is gone"
    );
}

const NET_CRD: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: networkconfigs.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: networkconfigs, singular: networkconfig, kind: NetworkConfig}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-preserve-unknown-fields: true
"#;

const SETTINGS: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  annotations:\n    kpt.dev/config-injection: required\ndata:\n  a: placeholder\n";
const NET: &str = "apiVersion: example.com/v1\nkind: NetworkConfig\nmetadata:\n  name: net-config\n  annotations:\n    kpt.dev/config-injection: optional\nspec:\n  vlan: 1\n";

fn kubectl_apply(env: &Env, yaml: &str) {
    let out = env.server.kubectl_stdin(&["apply", "-f", "-"], Some(yaml));
    assert!(
        out.status.success(),
        "kubectl apply: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn settings_map(value: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: {NS}\ndata:\n  a: {value}\n"
    )
}

/// `data.a` of the package's `settings.yaml`.
async fn injected_value(prrs: &Api<DynamicObject>, name: &str) -> Option<String> {
    let files = files_of(prrs, name).await;
    let doc: Value = serde_yaml::from_str(files.get("settings.yaml")?.as_str()?).ok()?;
    doc["data"]["a"].as_str().map(str::to_owned)
}

/// Config injection through the server: a required ConfigMap and an optional custom object
/// named by injectors. Missing, the required one makes the variant Stalled with the Kptfile
/// condition's message; created, both are injected with their Kptfile conditions and the
/// required one's readiness gate; edited, the draft follows, and a published downstream gets
/// an edit draft.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn config_injection_follows_the_injected_objects() {
    let env = Env::start().await;
    let blueprints = env.empty_repo("blueprints");
    env.register(NS, "blueprints", &blueprints, json!({})).await;
    let deployments = env.empty_repo("deployments");
    env.register(NS, "deployments", &deployments, json!({}))
        .await;
    let (prs, prrs, pvs) = (env.prs(NS), env.prrs(NS), variants(&env));
    init(&prs, "blueprints", "foo", "v1").await;
    put_files(
        &prrs,
        "blueprints.foo.v1",
        &[("settings.yaml", SETTINGS), ("net.yaml", NET)],
    )
    .await
    .expect("upstream files");
    publish(&prs, "blueprints.foo.v1").await;
    kubectl_apply(&env, NET_CRD);
    env.server.kubectl_ok(&[
        "wait",
        "--for=condition=Established",
        "crd/networkconfigs.example.com",
        "--timeout=30s",
    ]);

    apply(
        &env,
        "injected",
        "  upstream: {repo: blueprints, package: foo, revision: 1}\n  downstream: {repo: deployments, package: bar}\n  injectors:\n  - {kind: ConfigMap, name: settings}\n  - {group: example.com, kind: NetworkConfig, name: net}\n",
    );
    let draft = "deployments.bar.packagevariant-1";
    eventually("Stalled on the missing ConfigMap", || async {
        let (status, _, message) = condition(&pvs.get("injected").await.expect("pv"), "Stalled");
        status == "True" && message.contains("config.injection.ConfigMap.settings")
    })
    .await;
    let kf = kptfile_of(&prrs, draft).await;
    let gates = kf["info"]["readinessGates"].to_string();
    assert!(
        gates.contains("config.injection.ConfigMap.settings")
            && !gates.contains("config.injection.NetworkConfig.net-config"),
        "a gate for the required point only: {gates}"
    );

    // The objects appear: both injected, the variant Ready.
    kubectl_apply(
        &env,
        &format!(
            "apiVersion: example.com/v1\nkind: NetworkConfig\nmetadata:\n  name: net\n  namespace: {NS}\nspec:\n  vlan: 100\n"
        ),
    );
    kubectl_apply(&env, &settings_map("injected"));
    eventually("the ConfigMap injected", || async {
        injected_value(&prrs, draft).await.as_deref() == Some("injected")
    })
    .await;
    eventually("Ready", || async {
        let pv = pvs.get("injected").await.expect("pv");
        condition(&pv, "Ready").0 == "True" && condition(&pv, "Stalled").0 == "False"
    })
    .await;
    let files = files_of(&prrs, draft).await;
    let net: Value =
        serde_yaml::from_str(files["net.yaml"].as_str().expect("net.yaml")).expect("yaml");
    assert_eq!(net["spec"]["vlan"], 100);
    assert_eq!(
        net["metadata"]["annotations"]["kpt.dev/injected-resource"],
        "net"
    );
    let kf = kptfile_of(&prrs, draft).await;
    for t in [
        "config.injection.ConfigMap.settings",
        "config.injection.NetworkConfig.net-config",
    ] {
        let c = kf["status"]["conditions"]
            .as_array()
            .and_then(|a| a.iter().find(|c| c["type"] == t))
            .unwrap_or_else(|| panic!("condition {t}: {kf:?}"));
        assert_eq!(c["status"], "True", "{t}: {c:?}");
    }

    // Edited: the draft follows.
    kubectl_apply(&env, &settings_map("changed"));
    eventually("the draft follows the ConfigMap", || async {
        injected_value(&prrs, draft).await.as_deref() == Some("changed")
    })
    .await;

    // Published, then edited: an edit draft carries the change.
    publish(&prs, draft).await;
    kubectl_apply(&env, &settings_map("again"));
    let edit = "deployments.bar.packagevariant-2";
    eventually("an edit draft", || async { prs.get(edit).await.is_ok() }).await;
    eventually("the edit draft has the new value", || async {
        injected_value(&prrs, edit).await.as_deref() == Some("again")
    })
    .await;
    assert_eq!(
        injected_value(&prrs, draft).await.as_deref(),
        Some("changed"),
        "the published revision is not changed"
    );
}
