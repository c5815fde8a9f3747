//! Port of upstream `TestEnsurePackageVariants`, and the reconcile branches: conditions,
//! create/update-in-place/no-write/delete, upstream lookup, and collection of orphans.

use serde_json::{Value, json};

use super::{Changes, Outcome, collect_orphans, ensure_package_variants, reconcile, same_spec};
use crate::packagevariantset::targets::PvContext;
use crate::packagevariantset::testobjects::MemObjects;
use crate::packagevariantset::{
    packagerevisions_gvr, packagevariants_gvr, packagevariantsets_gvr, repositories_gvr,
};

const NS: &str = "ns";

fn pr(name: &str, repo: &str, package: &str, revision: i64, workspace: &str) -> Value {
    json!({"apiVersion": "porch.kpt.dev/v1alpha1", "kind": "PackageRevision",
        "metadata": {"name": name, "namespace": NS, "labels": {"tier": "gold"}},
        "spec": {"repository": repo, "packageName": package, "revision": revision,
                 "workspaceName": workspace}})
}

fn pvs(spec: Value) -> Value {
    json!({"apiVersion": "config.porch.kpt.dev/v1alpha2", "kind": "PackageVariantSet",
        "metadata": {"name": "my-pvs", "namespace": NS, "uid": "pvs-uid"}, "spec": spec})
}

/// Repositories r1 (`env: prod`) and r2 (`env: dev`), upstream `blueprints/basens` v1 and a
/// draft of it, and `my-pvs` with `spec`.
fn world(spec: Value) -> MemObjects {
    let m = MemObjects::new();
    for (name, env) in [("r1", "prod"), ("r2", "dev")] {
        m.seed(
            &repositories_gvr(),
            json!({"metadata": {"name": name, "namespace": NS, "labels": {"env": env}}}),
        );
    }
    m.seed(
        &packagerevisions_gvr(),
        pr(
            "blueprints-basens-draft",
            "blueprints",
            "basens",
            0,
            "draft",
        ),
    );
    m.seed(
        &packagerevisions_gvr(),
        pr("blueprints-basens-v1", "blueprints", "basens", 1, "v1"),
    );
    m.seed(
        &packagerevisions_gvr(),
        pr("blueprints-basens-main", "blueprints", "basens", -1, "main"),
    );
    m.seed(&packagevariantsets_gvr(), pvs(spec));
    m
}

fn basic_spec() -> Value {
    json!({"upstream": {"repo": "blueprints", "package": "basens", "revision": 1},
           "targets": [{"repositories": [{"name": "r1"}, {"name": "r2", "packageNames": ["a", "b"]}]}]})
}

fn conditions(m: &MemObjects) -> Vec<(String, String, String, String)> {
    let pvs = m
        .object(&packagevariantsets_gvr(), NS, "my-pvs")
        .expect("test value");
    pvs.pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|c| {
            let s = |k: &str| c[k].as_str().unwrap_or("").to_string();
            (s("type"), s("status"), s("reason"), s("message"))
        })
        .collect()
}

fn stalled_with(m: &MemObjects, reason: &str, message: &str) {
    assert_eq!(
        conditions(m),
        [
            (
                "Stalled".into(),
                "True".into(),
                reason.into(),
                message.into()
            ),
            (
                "Ready".into(),
                "False".into(),
                reason.into(),
                message.into()
            ),
        ]
    );
}

fn pv_names(m: &MemObjects) -> Vec<String> {
    m.all(&packagevariants_gvr(), NS)
        .iter()
        .map(|p| p["metadata"]["name"].as_str().unwrap_or("").to_string())
        .collect()
}

fn pv_writes(m: &MemObjects) -> Vec<(&'static str, String)> {
    m.writes()
        .into_iter()
        .filter(|(_, plural, _)| plural == "packagevariants")
        .map(|(op, _, name)| (op, name))
        .collect()
}

#[tokio::test]
async fn ensure_package_variants_port() {
    let m = MemObjects::new();
    for (repo, pkg) in [("dnrepo1", "dnpkg1"), ("dnrepo2", "dnpkg2")] {
        m.seed(
            &packagevariants_gvr(),
            json!({
            "metadata": {"name": format!("my-pvs-{repo}-{pkg}"), "namespace": NS,
                         "labels": {"config.porch.kpt.dev/packagevariantset": "pvs-uid"}},
            "spec": {"upstream": {"repo": "up", "package": "up", "revision": 0},
                     "downstream": {"repo": repo, "package": pkg}}}),
        );
    }
    let set = pvs(json!({"upstream": {"repo": "up", "package": "up", "revision": 1}}));
    let upstream = serde_json::from_value(set["spec"]["upstream"].clone()).expect("test value");
    let downstreams: Vec<PvContext> = [
        ("dnrepo2", "dnpkg2"),
        ("dnrepo3", "dnpkg3"),
        (
            "dnrepo4",
            "supersupersuperloooooooooooooooooooooooooooooooooooooooooooooooooongpkgname",
        ),
    ]
    .iter()
    .map(|(r, p)| PvContext {
        repo_default: r.to_string(),
        package_default: p.to_string(),
        ..Default::default()
    })
    .collect();
    let changes = ensure_package_variants(&m, NS, &set, &upstream, &[], &json!({}), &downstreams)
        .await
        .expect("test value");
    assert_eq!(
        changes,
        Changes {
            created: vec![
                "my-pvs-dnrepo3-dnpkg3".into(),
                "my-pvs-dnrepo4-supersupersuperlooooooooooooooooooooooo-bec36506".into(),
            ],
            updated: vec!["my-pvs-dnrepo2-dnpkg2".into()],
            deleted: vec!["my-pvs-dnrepo1-dnpkg1".into()],
        }
    );
    let updated = m
        .object(&packagevariants_gvr(), NS, "my-pvs-dnrepo2-dnpkg2")
        .expect("test value");
    assert_eq!(updated["spec"]["upstream"]["revision"], 1);
}

#[tokio::test]
async fn reconcile_creates_owned_package_variants_and_reports_ready() {
    let m = world(basic_spec());
    let out = reconcile(&m, NS, "my-pvs").await.expect("test value");
    let Outcome::Reconciled(ch) = out else {
        panic!("{out:?}")
    };
    assert_eq!(
        ch.created,
        ["my-pvs-r1-basens", "my-pvs-r2-a", "my-pvs-r2-b"]
    );
    assert_eq!(
        pv_names(&m),
        ["my-pvs-r1-basens", "my-pvs-r2-a", "my-pvs-r2-b"]
    );
    let pv = m
        .object(&packagevariants_gvr(), NS, "my-pvs-r2-a")
        .expect("test value");
    assert_eq!(pv["apiVersion"], "config.porch.kpt.dev/v1alpha1");
    assert_eq!(pv["kind"], "PackageVariant");
    assert_eq!(
        pv["metadata"]["labels"],
        json!({"config.porch.kpt.dev/packagevariantset": "pvs-uid"})
    );
    assert_eq!(
        pv["metadata"]["finalizers"],
        json!(["config.porch.kpt.dev/packagevariants"])
    );
    assert_eq!(
        pv["metadata"]["ownerReferences"],
        json!([{"apiVersion": "config.porch.kpt.dev/v1alpha2", "kind": "PackageVariantSet",
                "name": "my-pvs", "uid": "pvs-uid", "controller": true}])
    );
    assert_eq!(
        pv["spec"],
        json!({"upstream": {"repo": "blueprints", "package": "basens", "revision": 1},
               "downstream": {"repo": "r2", "package": "a"}})
    );
    assert_eq!(
        conditions(&m),
        [
            (
                "Stalled".into(),
                "False".into(),
                "Valid".into(),
                "all validation checks passed".into()
            ),
            (
                "Ready".into(),
                "True".into(),
                "Reconciled".into(),
                "package variants successfully reconciled".into()
            ),
        ]
    );
}

#[tokio::test]
async fn a_second_reconcile_writes_nothing() {
    let m = world(basic_spec());
    reconcile(&m, NS, "my-pvs").await.expect("test value");
    m.clear_writes();
    let out = reconcile(&m, NS, "my-pvs").await.expect("test value");
    assert_eq!(out, Outcome::Reconciled(Changes::default()));
    assert_eq!(m.writes(), []);
}

#[tokio::test]
async fn changed_templates_update_in_place() {
    let m = world(basic_spec());
    reconcile(&m, NS, "my-pvs").await.expect("test value");
    let before = m
        .object(&packagevariants_gvr(), NS, "my-pvs-r1-basens")
        .expect("test value");

    let mut set = m
        .object(&packagevariantsets_gvr(), NS, "my-pvs")
        .expect("test value");
    set["spec"]["targets"][0]["template"] = json!({"labels": {"team": "a"},
        "annotationExprs": [{"key": "env", "valueExpr": "repository.labels['env']"}]});
    m.seed(&packagevariantsets_gvr(), set);
    m.clear_writes();

    reconcile(&m, NS, "my-pvs").await.expect("test value");
    assert_eq!(
        pv_writes(&m),
        [
            ("update", "my-pvs-r1-basens".to_string()),
            ("update", "my-pvs-r2-a".to_string()),
            ("update", "my-pvs-r2-b".to_string()),
        ]
    );
    let after = m
        .object(&packagevariants_gvr(), NS, "my-pvs-r1-basens")
        .expect("test value");
    assert_eq!(
        after["metadata"]["uid"], before["metadata"]["uid"],
        "not recreated"
    );
    assert_eq!(after["spec"]["labels"], json!({"team": "a"}));
    assert_eq!(after["spec"]["annotations"], json!({"env": "prod"}));
    assert_eq!(
        after["metadata"]["finalizers"],
        before["metadata"]["finalizers"]
    );
}

#[tokio::test]
async fn defaults_written_back_by_the_package_variant_controller_are_not_a_change() {
    let m = world(basic_spec());
    reconcile(&m, NS, "my-pvs").await.expect("test value");
    let mut pv = m
        .object(&packagevariants_gvr(), NS, "my-pvs-r1-basens")
        .expect("test value");
    pv["spec"]["adoptionPolicy"] = json!("adoptNone");
    pv["spec"]["deletionPolicy"] = json!("delete");
    pv["spec"]["labels"] = json!({});
    m.seed(&packagevariants_gvr(), pv);
    m.clear_writes();
    reconcile(&m, NS, "my-pvs").await.expect("test value");
    assert_eq!(pv_writes(&m), []);
}

#[tokio::test]
async fn package_variants_no_longer_wanted_are_deleted() {
    let m = world(basic_spec());
    reconcile(&m, NS, "my-pvs").await.expect("test value");
    let mut set = m
        .object(&packagevariantsets_gvr(), NS, "my-pvs")
        .expect("test value");
    set["spec"]["targets"] = json!([{"repositories": [{"name": "r2", "packageNames": ["b"]}]}]);
    m.seed(&packagevariantsets_gvr(), set);
    m.clear_writes();
    let out = reconcile(&m, NS, "my-pvs").await.expect("test value");
    assert_eq!(
        out,
        Outcome::Reconciled(Changes {
            deleted: vec!["my-pvs-r1-basens".into(), "my-pvs-r2-a".into()],
            ..Default::default()
        })
    );
    assert_eq!(pv_names(&m), ["my-pvs-r2-b"]);
}

#[tokio::test]
async fn duplicates_of_one_downstream_are_deleted() {
    let m = world(basic_spec());
    reconcile(&m, NS, "my-pvs").await.expect("test value");
    let mut dup = m
        .object(&packagevariants_gvr(), NS, "my-pvs-r2-a")
        .expect("test value");
    dup["metadata"]["name"] = json!("an-older-name");
    m.seed(&packagevariants_gvr(), dup);
    m.clear_writes();
    reconcile(&m, NS, "my-pvs").await.expect("test value");
    assert_eq!(pv_writes(&m), [("delete", "an-older-name".to_string())]);
}

#[tokio::test]
async fn repository_selector_targets_and_cel_downstreams() {
    let m = world(json!({
        "upstream": {"repo": "blueprints", "package": "basens", "revision": 1},
        "targets": [{"repositorySelector": {"matchLabels": {"env": "prod"}},
                     "template": {"downstream": {"packageExpr": "'ns-' + repository.labels['env']"},
                                  "labelExprs": [{"key": "tier", "valueExpr": "upstream.labels['tier']"}]}}]}));
    reconcile(&m, NS, "my-pvs").await.expect("test value");
    assert_eq!(pv_names(&m), ["my-pvs-r1-ns-prod"]);
    let pv = m
        .object(&packagevariants_gvr(), NS, "my-pvs-r1-ns-prod")
        .expect("test value");
    assert_eq!(pv["spec"]["labels"], json!({"tier": "gold"}));
}

#[tokio::test]
async fn validation_errors_stall_and_are_written_once() {
    let m = world(json!({"upstream": {"repo": "blueprints", "package": "basens"}}));
    let out = reconcile(&m, NS, "my-pvs").await.expect("test value");
    let msg = "spec.upstream.revision is a required field; must specify at least one item in spec.targets";
    assert_eq!(
        out,
        Outcome::Stalled {
            reason: "ValidationError".into(),
            message: msg.into()
        }
    );
    stalled_with(&m, "ValidationError", msg);
    m.clear_writes();
    reconcile(&m, NS, "my-pvs").await.expect("test value");
    assert_eq!(m.writes(), [], "unchanged status is not written again");
}

#[tokio::test]
async fn a_malformed_spec_is_a_validation_error() {
    let m =
        world(json!({"upstream": {"repo": "blueprints", "package": "basens", "revision": "v1"}}));
    let out = reconcile(&m, NS, "my-pvs").await.expect("test value");
    let Outcome::Stalled { reason, message } = out else {
        panic!("{out:?}")
    };
    assert_eq!(reason, "ValidationError");
    assert!(message.starts_with("spec: "), "{message}");
}

#[tokio::test]
async fn a_missing_upstream_stalls() {
    let mut spec = basic_spec();
    spec["upstream"]["revision"] = json!(7);
    let m = world(spec);
    reconcile(&m, NS, "my-pvs").await.expect("test value");
    stalled_with(
        &m,
        "UpstreamNotFound",
        "could not find upstream package revision 'basens/7' in repo 'blueprints'",
    );
    assert_eq!(pv_names(&m), Vec::<String>::new());
}

#[tokio::test]
async fn upstream_by_workspace_name() {
    let mut spec = basic_spec();
    spec["upstream"] = json!({"repo": "blueprints", "package": "basens", "workspaceName": "draft"});
    let m = world(spec);
    let out = reconcile(&m, NS, "my-pvs").await.expect("test value");
    assert!(matches!(out, Outcome::Reconciled(_)), "{out:?}");
    let pv = m
        .object(&packagevariants_gvr(), NS, "my-pvs-r1-basens")
        .expect("test value");
    assert_eq!(pv["spec"]["upstream"]["workspaceName"], "draft");
}

#[test]
fn find_upstream_matches_revision_or_workspace_and_never_unset_fields() {
    let prs = [
        pr("d", "blueprints", "basens", 0, ""),
        pr("v1", "blueprints", "basens", 1, "v1"),
        pr("other", "blueprints", "other", 2, "ws"),
    ];
    let up = |v: Value| serde_json::from_value(v).expect("test value");
    let name = |r: Result<&Value, String>| {
        r.map(|p| p["metadata"]["name"].as_str().unwrap_or("").to_string())
    };
    assert_eq!(
        name(super::find_upstream(
            &up(json!({"repo": "blueprints", "package": "basens", "revision": 1})),
            &prs
        )),
        Ok("v1".into())
    );
    assert_eq!(
        name(super::find_upstream(
            &up(
                json!({"repo": "blueprints", "package": "basens", "revision": 9, "workspaceName": "v1"})
            ),
            &prs
        )),
        Ok("v1".into())
    );
    // Neither set: the draft with revision 0 and no workspace is not a match.
    assert_eq!(
        name(super::find_upstream(
            &up(json!({"repo": "blueprints", "package": "basens"})),
            &prs
        )),
        Err("could not find upstream package revision 'basens/0' in repo 'blueprints'".into())
    );
    assert!(
        super::find_upstream(
            &up(json!({"repo": "blueprints", "package": "basens", "workspaceName": "ws"})),
            &prs
        )
        .is_err()
    );
}

#[tokio::test]
async fn unserved_kinds_stall_with_no_matching_targets() {
    let m = world(
        json!({"upstream": {"repo": "blueprints", "package": "basens", "revision": 1},
        "targets": [{"objectSelector": {"apiVersion": "example.com/v1", "kind": "Widget"}}]}),
    );
    reconcile(&m, NS, "my-pvs").await.expect("test value");
    stalled_with(
        &m,
        "NoMatchingTargets",
        "no matches for kind \"Widget\" in version \"example.com/v1\"",
    );
}

#[tokio::test]
async fn render_errors_stall_with_unexpected_error_and_write_no_variant() {
    let mut spec = basic_spec();
    spec["targets"][0]["template"] = json!({"labelExprs": [{"key": "k", "valueExpr": "1 + 1"}]});
    let m = world(spec);
    reconcile(&m, NS, "my-pvs").await.expect("test value");
    stalled_with(
        &m,
        "UnexpectedError",
        "template.labelExprs[0].valueExpr: expression returned non-string value: 2",
    );
    assert_eq!(pv_writes(&m), []);
}

#[tokio::test]
async fn recovering_flips_the_conditions() {
    let m = world(json!({"upstream": {"repo": "blueprints", "package": "basens", "revision": 1}}));
    reconcile(&m, NS, "my-pvs").await.expect("test value");
    let mut set = m
        .object(&packagevariantsets_gvr(), NS, "my-pvs")
        .expect("test value");
    set["spec"] = basic_spec();
    m.seed(&packagevariantsets_gvr(), set);
    reconcile(&m, NS, "my-pvs").await.expect("test value");
    let c = conditions(&m);
    assert_eq!(c[0].1, "False");
    assert_eq!(
        c[1],
        (
            "Ready".into(),
            "True".into(),
            "Reconciled".into(),
            "package variants successfully reconciled".into()
        )
    );
}

#[tokio::test]
async fn a_deleted_set_leaves_its_variants_to_collection() {
    let m = world(basic_spec());
    reconcile(&m, NS, "my-pvs").await.expect("test value");
    // A hand-made PackageVariant and one of another, live set stay.
    m.seed(
        &packagevariants_gvr(),
        json!({"metadata": {"name": "mine", "namespace": NS}}),
    );
    m.seed(
        &packagevariantsets_gvr(),
        json!({"metadata": {"name": "other", "namespace": NS, "uid": "other-uid"}}),
    );
    m.seed(&packagevariants_gvr(), json!({"metadata": {"name": "other-pv", "namespace": NS,
        "labels": {"config.porch.kpt.dev/packagevariantset": "other-uid"},
        "ownerReferences": [{"kind": "PackageVariantSet", "name": "other", "uid": "other-uid", "controller": true}]}}));
    use crate::objects::Objects;
    m.delete(&packagevariantsets_gvr(), NS, "my-pvs")
        .await
        .expect("test value");

    let out = reconcile(&m, NS, "my-pvs").await.expect("test value");
    assert_eq!(
        out,
        Outcome::Gone {
            orphans_deleted: vec![
                "my-pvs-r1-basens".into(),
                "my-pvs-r2-a".into(),
                "my-pvs-r2-b".into()
            ]
        }
    );
    assert_eq!(pv_names(&m), ["mine", "other-pv"]);
    assert_eq!(
        collect_orphans(&m, NS).await.expect("test value"),
        Vec::<String>::new()
    );
}

#[test]
fn same_spec_ignores_empties_and_policy_defaults() {
    let a = json!({"downstream": {"repo": "r", "package": "p"}, "labels": {}, "pipeline": null});
    let b = json!({"downstream": {"repo": "r", "package": "p"}, "adoptionPolicy": "adoptNone",
                   "deletionPolicy": "delete", "packageContext": {}});
    assert!(same_spec(&a, &b));
    let c = json!({"downstream": {"repo": "r", "package": "p"}, "deletionPolicy": "orphan"});
    assert!(!same_spec(&a, &c));
    let d = json!({"downstream": {"repo": "r", "package": "q"}});
    assert!(!same_spec(&a, &d));
}

#[tokio::test]
async fn a_set_without_uid_writes_no_variant() {
    let m = MemObjects::new();
    let set = pvs(json!({}));
    let mut no_uid = set.clone();
    no_uid["metadata"]
        .as_object_mut()
        .expect("test value")
        .remove("uid");
    let upstream = serde_json::from_value(json!({"repo": "up", "package": "up", "revision": 1}))
        .expect("test value");
    let d = [PvContext {
        repo_default: "r".into(),
        package_default: "p".into(),
        ..Default::default()
    }];
    let e = ensure_package_variants(&m, NS, &no_uid, &upstream, &[], &json!({}), &d)
        .await
        .expect_err("no uid");
    assert_eq!(e.to_string(), "metadata.uid is not set");
    assert_eq!(m.writes(), []);
}

#[tokio::test]
async fn generated_variants_carry_the_sets_creator() {
    use crate::access::CREATOR_ANNOTATION;
    let m = world(basic_spec());
    let mut set = m
        .object(&packagevariantsets_gvr(), NS, "my-pvs")
        .expect("set");
    let alice = r#"{"username":"alice","groups":["system:authenticated"]}"#;
    set["metadata"]["annotations"] = json!({CREATOR_ANNOTATION: alice});
    m.seed(&packagevariantsets_gvr(), set.clone());
    reconcile(&m, NS, "my-pvs").await.expect("reconcile");
    for name in pv_names(&m) {
        let pv = m
            .object(&packagevariants_gvr(), NS, &name)
            .expect("variant");
        assert_eq!(pv["metadata"]["annotations"][CREATOR_ANNOTATION], alice);
    }
    // A new creator on the set reaches its variants; nothing else changes.
    let bob = r#"{"username":"bob"}"#;
    set["metadata"]["annotations"] = json!({CREATOR_ANNOTATION: bob});
    m.seed(&packagevariantsets_gvr(), set);
    m.clear_writes();
    let out = reconcile(&m, NS, "my-pvs").await.expect("reconcile");
    let Outcome::Reconciled(ch) = out else {
        panic!("{out:?}")
    };
    assert_eq!(ch.updated.len(), 3, "{ch:?}");
    let pv = m
        .object(&packagevariants_gvr(), NS, "my-pvs-r1-basens")
        .expect("variant");
    assert_eq!(pv["metadata"]["annotations"][CREATOR_ANNOTATION], bob);
}
