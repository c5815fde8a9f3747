//! A PackageVariant acts with its creator's rights, through the real server: the server
//! records who created it (`porch.kpt.dev/creator`, never taken from the client), and the
//! controller clones, edits and reads for it only what that user may. A user who may create
//! variants but not read the upstream gets a Stalled variant and no draft; a user who may
//! gets the draft.

mod common;

use common::porch::*;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind};
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

fn condition(pv: &DynamicObject, kind: &str) -> (String, String, String) {
    let c = pv.data["status"]["conditions"]
        .as_array()
        .and_then(|a| a.iter().find(|c| c["type"] == kind))
        .cloned()
        .unwrap_or(Value::Null);
    let s = |k: &str| c[k].as_str().unwrap_or("").to_owned();
    (s("status"), s("reason"), s("message"))
}

fn creator(pv: &DynamicObject) -> Value {
    let text = pv
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get("porch.kpt.dev/creator"))
        .cloned()
        .unwrap_or_default();
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

/// `kubectl create -f -` of a variant as `user`; the output.
fn create_as(env: &Env, user: &str, name: &str, package: &str) -> std::process::Output {
    // The forged creator is ignored: the server records who asks.
    let yaml = format!(
        "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: {name}\n  namespace: {NS}\n  annotations:\n    porch.kpt.dev/creator: '{{\"username\":\"admin\",\"groups\":[\"system:masters\"]}}'\nspec:\n  upstream: {{repo: blueprints, package: foo, revision: 1}}\n  downstream: {{repo: deployments, package: {package}}}\n"
    );
    env.server
        .kubectl_stdin(&["create", "-f", "-", "--as", user], Some(&yaml))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_variant_acts_with_its_creators_rights() {
    let env = Env::start().await;
    let blueprints = env.empty_repo("blueprints");
    env.register(NS, "blueprints", &blueprints, json!({})).await;
    let deployments = env.empty_repo("deployments");
    env.register(NS, "deployments", &deployments, json!({}))
        .await;
    init_published(&env.prs(NS), "blueprints", "foo", "v1").await;

    // Both may write variants and drafts; only alice may read package revisions.
    let s = &env.server;
    s.kubectl_ok(&[
        "create",
        "role",
        "variant-writer",
        "--verb=get,list,create,update,patch",
        "--resource=packagevariants.config.porch.kpt.dev",
        "-n",
        NS,
    ]);
    s.kubectl_ok(&[
        "create",
        "role",
        "blind-author",
        "--verb=create,update,patch",
        "--resource=packagerevisions.porch.kpt.dev,packagerevisionresources.porch.kpt.dev",
        "-n",
        NS,
    ]);
    for (binding, role, user) in [
        ("m-variants", "--role=variant-writer", "mallory"),
        ("m-blind", "--role=blind-author", "mallory"),
        ("a-variants", "--role=variant-writer", "alice"),
        ("a-author", "--clusterrole=porch-author", "alice"),
    ] {
        s.kubectl_ok(&[
            "create",
            "rolebinding",
            binding,
            role,
            &format!("--user={user}"),
            "-n",
            NS,
        ]);
    }
    let (prs, pvs) = (env.prs(NS), variants(&env));

    // mallory cannot read the upstream: Stalled, and no draft.
    let out = create_as(&env, "mallory", "by-mallory", "m");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pv = pvs.get("by-mallory").await.expect("pv");
    assert_eq!(
        creator(&pv),
        json!({"username": "mallory", "groups": ["system:authenticated"]}),
        "the server records who asked, not what the object said"
    );
    eventually("mallory's variant Stalled", || async {
        let pv = pvs.get("by-mallory").await.expect("pv");
        condition(&pv, "Stalled").0 == "True"
    })
    .await;
    let pv = pvs.get("by-mallory").await.expect("pv");
    let (_, reason, message) = condition(&pv, "Stalled");
    assert_eq!(reason, "Forbidden");
    assert!(
        message.contains(
            "packagerevisions.porch.kpt.dev \"blueprints.foo.v1\" is forbidden: User \"mallory\" cannot get resource \"packagerevisions\" in API group \"porch.kpt.dev\" in the namespace \"default\": a clone reads its upstream"
        ),
        "{message}"
    );
    assert_eq!(condition(&pv, "Ready").0, "False");
    let drafts: Vec<String> = prs
        .list(&Default::default())
        .await
        .expect("list")
        .items
        .iter()
        .map(name)
        .filter(|n| n.starts_with("deployments."))
        .collect();
    assert!(drafts.is_empty(), "no draft for mallory: {drafts:?}");

    // Nor may mallory claim someone else's identity afterwards.
    let forged = s.kubectl(&[
        "annotate",
        "--overwrite",
        "packagevariant/by-mallory",
        "porch.kpt.dev/creator={\"username\":\"alice\"}",
        "--as",
        "mallory",
        "-n",
        NS,
    ]);
    let err = String::from_utf8_lossy(&forged.stderr);
    assert!(
        !forged.status.success()
            && err.contains("User \"mallory\" cannot escalate resource \"packagevariants\""),
        "{err}"
    );
    // An update that leaves the annotation out keeps it.
    s.kubectl_ok(&[
        "annotate",
        "packagevariant/by-mallory",
        "porch.kpt.dev/creator-",
        "--as",
        "mallory",
        "-n",
        NS,
    ]);
    let pv = pvs.get("by-mallory").await.expect("pv");
    assert_eq!(creator(&pv)["username"], "mallory");

    // alice may: the draft is created and the variant Ready.
    let out = create_as(&env, "alice", "by-alice", "a");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let draft = "deployments.a.packagevariant-1";
    eventually("alice's draft", || async { prs.get(draft).await.is_ok() }).await;
    eventually("alice's variant Ready", || async {
        let pv = pvs.get("by-alice").await.expect("pv");
        condition(&pv, "Ready").0 == "True"
    })
    .await;
    assert_eq!(
        creator(&pvs.get("by-alice").await.expect("pv"))["username"],
        "alice"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_sets_variants_act_with_the_sets_creator() {
    let env = Env::start().await;
    let blueprints = env.empty_repo("blueprints");
    env.register(NS, "blueprints", &blueprints, json!({})).await;
    let deployments = env.empty_repo("deployments");
    env.register(NS, "deployments", &deployments, json!({}))
        .await;
    init_published(&env.prs(NS), "blueprints", "foo", "v1").await;
    let s = &env.server;
    s.kubectl_ok(&[
        "create",
        "role",
        "set-writer",
        "--verb=get,list,create,update,patch",
        "--resource=packagevariantsets.config.porch.kpt.dev",
        "-n",
        NS,
    ]);
    s.kubectl_ok(&[
        "create",
        "rolebinding",
        "m-sets",
        "--role=set-writer",
        "--user=mallory",
        "-n",
        NS,
    ]);
    let yaml = format!(
        "apiVersion: config.porch.kpt.dev/v1alpha2\nkind: PackageVariantSet\nmetadata:\n  name: fan\n  namespace: {NS}\nspec:\n  upstream: {{repo: blueprints, package: foo, revision: 1}}\n  targets:\n  - repositories:\n    - name: deployments\n"
    );
    let out = s.kubectl_stdin(&["create", "-f", "-", "--as", "mallory"], Some(&yaml));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pvs = variants(&env);
    eventually("the generated variant", || async {
        pvs.get("fan-deployments-foo").await.is_ok()
    })
    .await;
    let pv = pvs.get("fan-deployments-foo").await.expect("pv");
    assert_eq!(
        creator(&pv),
        json!({"username": "mallory", "groups": ["system:authenticated"]})
    );
    eventually("the generated variant Stalled", || async {
        let pv = pvs.get("fan-deployments-foo").await.expect("pv");
        condition(&pv, "Stalled").1 == "Forbidden"
    })
    .await;
    let pv = pvs.get("fan-deployments-foo").await.expect("pv");
    assert!(
        condition(&pv, "Stalled")
            .2
            .contains("User \"mallory\" cannot create resource \"packagerevisions\""),
        "{:?}",
        condition(&pv, "Stalled")
    );
    assert!(
        env.prs(NS)
            .get("deployments.foo.packagevariant-1")
            .await
            .is_err(),
        "no draft for mallory's set"
    );
}
