//! The reconcile against the real engine over local git repositories (upstream
//! `packagevariant_controller_test.go` cases that need a client, and the behaviour of
//! spec §16.2 end to end), with in-memory objects.

use porch_core::lifecycle::Lifecycle;
use porch_engine::{CreateRequest, PackageRevision};
use serde_json::{Value, json};

use super::testing::{NS, World};
use super::{FINALIZER, gvr};
use crate::objects::Objects;

const BASE: &str = "upstream: {repo: blueprints, package: foo, revision: 1}\ndownstream: {repo: deployments, package: bar}\n";

fn cond(pv: &Value, kind: &str) -> (String, String, String) {
    let c = pv["status"]["conditions"]
        .as_array()
        .and_then(|a| a.iter().find(|c| c["type"] == kind))
        .cloned()
        .unwrap_or(Value::Null);
    let s = |k: &str| c[k].as_str().unwrap_or("").to_owned();
    (s("status"), s("reason"), s("message"))
}

fn targets(pv: &Value) -> Vec<String> {
    pv["status"]["downstreamTargets"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|t| t["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn owners(pr: &PackageRevision) -> Vec<String> {
    pr.owner_references.iter().map(|o| o.uid.clone()).collect()
}

fn get(w: &World, name: &str) -> PackageRevision {
    w.engine.get(NS, name).expect("revision")
}

async fn set_spec(w: &World, name: &str, spec_yaml: &str) {
    let mut pv = w.pv(name);
    pv["spec"] = serde_yaml::from_str(spec_yaml).expect("yaml");
    w.objects.update(&gvr(), NS, pv).await.expect("update");
}

async fn delete_pv(w: &World, name: &str) {
    w.objects.delete(&gvr(), NS, name).await.expect("delete");
}

#[tokio::test]
async fn a_variant_clones_its_upstream_into_an_owned_draft() {
    let w = World::new().await;
    w.publish_init("blueprints", "foo", "v1").await;
    let pv = w
        .add_pv(
            "my-pv",
            &format!("{BASE}labels: {{team: a}}\nannotations: {{note: x}}\n"),
        )
        .await;
    w.reconcile("my-pv").await.expect("reconcile");

    assert_eq!(w.summary("deployments", "bar"), ["packagevariant-1 Draft"]);
    let d = get(&w, "deployments.bar.packagevariant-1");
    let owner = &d.owner_references[0];
    assert_eq!(
        (
            owner.kind.as_str(),
            owner.name.as_str(),
            owner.uid.as_str(),
            owner.controller
        ),
        (
            "PackageVariant",
            "my-pv",
            pv["metadata"]["uid"].as_str().unwrap_or(""),
            Some(true)
        )
    );
    assert_eq!(d.labels.get("team").map(String::as_str), Some("a"));
    assert_eq!(d.annotations.get("note").map(String::as_str), Some("x"));
    assert_eq!(d.tasks[0].task_type, "clone");
    let lock = d
        .upstream_lock
        .as_ref()
        .and_then(|l| l.git.as_ref())
        .expect("lock");
    assert_eq!(lock.git_ref, "foo/v1");

    let pv = w.pv("my-pv");
    assert_eq!(pv["metadata"]["finalizers"], json!([FINALIZER]));
    assert_eq!(
        cond(&pv, "Stalled"),
        (
            "False".into(),
            "Valid".into(),
            "all validation checks passed".into()
        )
    );
    assert_eq!(
        cond(&pv, "Ready"),
        (
            "True".into(),
            "NoErrors".into(),
            "successfully ensured downstream package variant".into()
        )
    );
    assert_eq!(targets(&pv), ["deployments.bar.packagevariant-1"]);
    assert_eq!(w.events.reasons(), ["Created"]);
}

#[tokio::test]
async fn a_converged_variant_is_not_rewritten() {
    let w = World::new().await;
    w.publish_init("blueprints", "foo", "v1").await;
    w.add_pv("my-pv", BASE).await;
    w.reconcile("my-pv").await.expect("first");
    let pv = w.pv("my-pv");
    let d = get(&w, "deployments.bar.packagevariant-1");
    for _ in 0..3 {
        w.reconcile("my-pv").await.expect("again");
    }
    assert_eq!(
        w.pv("my-pv")["metadata"]["resourceVersion"],
        pv["metadata"]["resourceVersion"],
        "no status or metadata write"
    );
    assert_eq!(
        get(&w, "deployments.bar.packagevariant-1").resource_version,
        d.resource_version
    );
    assert_eq!(w.summary("deployments", "bar"), ["packagevariant-1 Draft"]);
    assert_eq!(w.events.reasons(), ["Created"]);
}

#[tokio::test]
async fn an_invalid_variant_is_stalled_and_creates_nothing() {
    let w = World::new().await;
    w.publish_init("blueprints", "foo", "v1").await;
    w.add_pv(
        "my-pv",
        &format!("{BASE}adoptionPolicy: invalid\npackageContext: {{data: {{name: x}}}}\n"),
    )
    .await;
    w.reconcile("my-pv")
        .await
        .expect("stalled is done, not retried");
    let pv = w.pv("my-pv");
    assert_eq!(
        cond(&pv, "Stalled"),
        (
            "True".into(),
            "ValidationError".into(),
            "spec.adoptionPolicy field can only be \"adoptNone\" or \"adoptExisting\"; spec.packageContext.data: Invalid value: {\"name\":\"x\"}: must not contain the key \"name\"".into()
        )
    );
    assert_eq!(
        cond(&pv, "Ready"),
        (
            "False".into(),
            "Error".into(),
            "invalid packagevariant object".into()
        )
    );
    assert!(w.summary("deployments", "bar").is_empty());
}

#[tokio::test]
async fn a_missing_upstream_stalls_and_is_retried() {
    let w = World::new().await;
    w.add_pv("my-pv", BASE).await;
    let e = w.reconcile("my-pv").await.expect_err("retried");
    assert!(
        e.to_string()
            .starts_with("could not find upstream package revision"),
        "{e}"
    );
    let (status, reason, message) = cond(&w.pv("my-pv"), "Stalled");
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("True", "ValidationError")
    );
    assert!(message.starts_with("could not find upstream package revision"));
    // It appears: the retry succeeds.
    w.publish_init("blueprints", "foo", "v1").await;
    w.reconcile("my-pv").await.expect("upstream found");
    assert_eq!(cond(&w.pv("my-pv"), "Ready").0, "True");
}

#[tokio::test]
async fn an_empty_workspace_name_resolves_by_revision_not_to_main() {
    let w = World::new().await;
    let v1 = w.publish_init("blueprints", "foo", "v1").await;
    w.publish_edit(&v1, "v2").await;
    w.add_pv("my-pv", BASE).await;
    w.reconcile("my-pv").await.expect("reconcile");
    let d = get(&w, "deployments.bar.packagevariant-1");
    let lock = d
        .upstream_lock
        .as_ref()
        .and_then(|l| l.git.as_ref())
        .expect("lock");
    assert_eq!(
        lock.git_ref, "foo/v1",
        "revision 1, not main nor the latest"
    );
}

/// Upstream `TestCreateUpgradeDraft`, through the reconcile: a published downstream on
/// upstream v1, the variant moves to v2.
#[tokio::test]
async fn a_new_upstream_revision_yields_one_upgrade_draft() {
    let w = World::new().await;
    let v1 = w.publish_init("blueprints", "foo", "v1").await;
    w.add_pv(
        "my-pv",
        &format!("{BASE}labels: {{boo: far}}\nannotations: {{foo: bar}}\n"),
    )
    .await;
    w.reconcile("my-pv").await.expect("clone");
    let published = w
        .publish(&get(&w, "deployments.bar.packagevariant-1"))
        .await;
    w.publish_edit(&v1, "v2").await;
    set_spec(
        &w,
        "my-pv",
        "upstream: {repo: blueprints, package: foo, revision: 2}\ndownstream: {repo: deployments, package: bar}\nlabels: {boo: far}\nannotations: {foo: bar}\n",
    )
    .await;
    w.reconcile("my-pv").await.expect("upgrade");
    assert_eq!(
        w.summary("deployments", "bar"),
        ["packagevariant-1 Published", "packagevariant-2 Draft"]
    );
    let draft = get(&w, "deployments.bar.packagevariant-2");
    let upgrade = draft.tasks[0].upgrade.as_ref().expect("an upgrade task");
    assert_eq!(upgrade.old_upstream.name, "blueprints.foo.v1");
    assert_eq!(upgrade.new_upstream.name, "blueprints.foo.v2");
    assert_eq!(upgrade.local.name, published.name().as_str());
    assert_eq!(upgrade.strategy, "resource-merge");
    assert_eq!(draft.labels.get("boo").map(String::as_str), Some("far"));
    assert_eq!(
        draft.annotations.get("foo").map(String::as_str),
        Some("bar")
    );
    assert_eq!(
        targets(&w.pv("my-pv")),
        ["deployments.bar.packagevariant-2"]
    );
    // One draft at a time: reconciling again changes nothing.
    w.reconcile("my-pv").await.expect("again");
    w.reconcile("my-pv").await.expect("again");
    assert_eq!(w.summary("deployments", "bar").len(), 2);
    assert_eq!(w.events.reasons(), ["Created", "Upgraded"]);
}

#[tokio::test]
async fn without_a_revision_the_variant_follows_the_latest_published_upstream() {
    let w = World::new().await;
    let v1 = w.publish_init("blueprints", "foo", "v1").await;
    w.add_pv("my-pv", "upstream: {repo: blueprints, package: foo}\ndownstream: {repo: deployments, package: bar}\n")
        .await;
    w.reconcile("my-pv").await.expect("clone");
    w.publish(&get(&w, "deployments.bar.packagevariant-1"))
        .await;
    w.publish_edit(&v1, "v2").await;
    w.reconcile("my-pv").await.expect("upgrade");
    let draft = get(&w, "deployments.bar.packagevariant-2");
    assert_eq!(draft.tasks[0].task_type, "upgrade");
}

#[tokio::test]
async fn a_draft_on_an_old_upstream_is_an_error_in_the_status() {
    let w = World::new().await;
    let v1 = w.publish_init("blueprints", "foo", "v1").await;
    w.publish_edit(&v1, "v2").await;
    w.add_pv("my-pv", BASE).await;
    w.reconcile("my-pv").await.expect("clone");
    set_spec(&w, "my-pv", "upstream: {repo: blueprints, package: foo, revision: 2}\ndownstream: {repo: deployments, package: bar}\n").await;
    let e = w
        .reconcile("my-pv")
        .await
        .expect_err("draft cannot be upgraded");
    let msg = "cannot update upstream of downstream \"deployments.bar.packagevariant-1\" when it is not published";
    assert_eq!(e.to_string(), msg);
    assert_eq!(
        cond(&w.pv("my-pv"), "Ready"),
        ("False".into(), "Error".into(), msg.into())
    );
    assert_eq!(
        w.summary("deployments", "bar"),
        ["packagevariant-1 Draft"],
        "no pile of drafts"
    );
}

/// Upstream `TestCreateEditDraft`: the edit (copy) draft of a published target.
#[tokio::test]
async fn an_edit_draft_copies_a_published_target() {
    let w = World::new().await;
    w.publish_init("blueprints", "foo", "v1").await;
    w.add_pv(
        "my-pv",
        &format!("{BASE}labels: {{boo: far}}\nannotations: {{foo: bar}}\n"),
    )
    .await;
    w.reconcile("my-pv").await.expect("clone");
    let published = w
        .publish(&get(&w, "deployments.bar.packagevariant-1"))
        .await;
    let v = super::reconcile::Variant::from_object(w.pv("my-pv")).expect("variant");
    let existing = w.revisions("deployments", "bar");
    let draft = w
        .reconciler
        .create_draft(
            &v,
            &existing,
            "deployments",
            "bar",
            super::drafts::edit_task(&published),
        )
        .await
        .expect("edit draft");
    assert_eq!(draft.lifecycle, Lifecycle::Draft);
    assert_eq!(draft.key.package.as_str(), "bar");
    assert_eq!(draft.key.workspace.as_str(), "packagevariant-2");
    assert_eq!(draft.tasks[0].task_type, "edit");
    assert_eq!(draft.labels.get("boo").map(String::as_str), Some("far"));
    assert_eq!(
        draft.annotations.get("foo").map(String::as_str),
        Some("bar")
    );
    assert_eq!(owners(&draft), std::slice::from_ref(&v.uid));
}

/// Upstream `TestAdoptionPolicy` with the engine: adoptExisting takes an unowned draft.
#[tokio::test]
async fn adopt_existing_takes_an_unowned_draft() {
    let w = World::new().await;
    w.publish_init("blueprints", "foo", "v1").await;
    w.engine
        .create(CreateRequest {
            namespace: NS.into(),
            repository: "deployments".into(),
            package: "bar".into(),
            workspace: "manual".into(),
            labels: [("keep".to_owned(), "me".to_owned())].into(),
            ..CreateRequest::default()
        })
        .await
        .expect("manual draft");
    let pv = w
        .add_pv(
            "my-pv",
            &format!("{BASE}adoptionPolicy: adoptExisting\nlabels: {{team: a}}\n"),
        )
        .await;
    w.reconcile("my-pv").await.expect("adopt");
    assert_eq!(
        w.summary("deployments", "bar"),
        ["manual Draft"],
        "adopted, not cloned"
    );
    let d = get(&w, "deployments.bar.manual");
    assert_eq!(
        owners(&d),
        [pv["metadata"]["uid"].as_str().unwrap_or("").to_owned()]
    );
    assert_eq!(d.owner_references[0].controller, Some(true));
    assert_eq!(d.labels.get("keep").map(String::as_str), Some("me"));
    assert_eq!(d.labels.get("team").map(String::as_str), Some("a"));
    assert_eq!(w.events.reasons(), ["Adopted"]);

    // adoptNone leaves it alone; a clone into an existing package is refused (Porch's
    // rule), and the refusal is in the status.
    w.add_pv("other-pv", BASE).await;
    let e = w.reconcile("other-pv").await.expect_err("refused");
    assert!(e.to_string().contains("already exists"), "{e}");
    let (status, _, message) = cond(&w.pv("other-pv"), "Ready");
    assert_eq!((status.as_str(), message), ("False", e.to_string()));
    assert_eq!(w.summary("deployments", "bar"), ["manual Draft"]);
    assert_eq!(get(&w, "deployments.bar.manual").owner_references.len(), 1);
}

/// Upstream `TestDeleteOrOrphan`, deletionPolicy delete, through the variant's deletion.
#[tokio::test]
async fn deleting_the_variant_deletes_drafts_and_proposes_deletion_of_published() {
    let w = World::new().await;
    let v1 = w.publish_init("blueprints", "foo", "v1").await;
    w.add_pv("my-pv", BASE).await;
    w.reconcile("my-pv").await.expect("clone");
    w.publish(&get(&w, "deployments.bar.packagevariant-1"))
        .await;
    w.publish_edit(&v1, "v2").await;
    set_spec(&w, "my-pv", "upstream: {repo: blueprints, package: foo, revision: 2}\ndownstream: {repo: deployments, package: bar}\n").await;
    w.reconcile("my-pv").await.expect("upgrade draft");
    assert_eq!(w.summary("deployments", "bar").len(), 2);

    delete_pv(&w, "my-pv").await;
    w.reconcile("my-pv").await.expect("finalize");
    assert_eq!(
        w.summary("deployments", "bar"),
        ["packagevariant-1 DeletionProposed"]
    );
    assert!(
        get(&w, "deployments.bar.packagevariant-1")
            .owner_references
            .is_empty(),
        "orphaned so that nothing collects it"
    );
    assert!(
        w.objects.peek(&gvr(), NS, "my-pv").is_none(),
        "finalizer removed: gone"
    );
    let reasons = w.events.reasons();
    assert!(
        reasons.contains(&"Deleted".to_owned()) && reasons.contains(&"DeletionProposed".to_owned()),
        "{reasons:?}"
    );
}

/// Upstream `TestDeleteOrOrphan`, deletionPolicy orphan.
#[tokio::test]
async fn deleting_an_orphaning_variant_leaves_its_revisions_without_the_owner() {
    let w = World::new().await;
    let v1 = w.publish_init("blueprints", "foo", "v1").await;
    w.add_pv("my-pv", &format!("{BASE}deletionPolicy: orphan\n"))
        .await;
    w.reconcile("my-pv").await.expect("clone");
    w.publish(&get(&w, "deployments.bar.packagevariant-1"))
        .await;
    w.publish_edit(&v1, "v2").await;
    set_spec(&w, "my-pv", "upstream: {repo: blueprints, package: foo, revision: 2}\ndownstream: {repo: deployments, package: bar}\ndeletionPolicy: orphan\n").await;
    w.reconcile("my-pv").await.expect("upgrade draft");

    delete_pv(&w, "my-pv").await;
    w.reconcile("my-pv").await.expect("finalize");
    assert_eq!(
        w.summary("deployments", "bar"),
        ["packagevariant-1 Published", "packagevariant-2 Draft"]
    );
    assert!(
        get(&w, "deployments.bar.packagevariant-1")
            .owner_references
            .is_empty()
    );
    assert!(
        get(&w, "deployments.bar.packagevariant-2")
            .owner_references
            .is_empty()
    );
    assert!(w.objects.peek(&gvr(), NS, "my-pv").is_none());
    assert_eq!(
        w.events
            .reasons()
            .iter()
            .filter(|r| *r == "Orphaned")
            .count(),
        2
    );
}

/// Upstream `TestGetDownstreamPRs` "drafts from different package": owned revisions of a
/// package the spec no longer names are released; the new package gets its clone.
#[tokio::test]
async fn a_moved_downstream_releases_the_old_package_only() {
    let w = World::new().await;
    w.publish_init("blueprints", "foo", "v1").await;
    w.add_pv("my-pv", BASE).await;
    w.reconcile("my-pv").await.expect("clone");
    w.publish(&get(&w, "deployments.bar.packagevariant-1"))
        .await;
    // A spec update that still wants the published downstream never proposes its deletion.
    set_spec(&w, "my-pv", &format!("{BASE}labels: {{x: y}}\n")).await;
    w.reconcile("my-pv").await.expect("same target");
    assert_eq!(
        w.summary("deployments", "bar"),
        ["packagevariant-1 Published"]
    );

    set_spec(&w, "my-pv", "upstream: {repo: blueprints, package: foo, revision: 1}\ndownstream: {repo: other, package: baz}\n").await;
    w.reconcile("my-pv").await.expect("moved");
    assert_eq!(
        w.summary("deployments", "bar"),
        ["packagevariant-1 DeletionProposed"]
    );
    assert_eq!(w.summary("other", "baz"), ["packagevariant-1 Draft"]);
    assert_eq!(targets(&w.pv("my-pv")), ["other.baz.packagevariant-1"]);
}

#[tokio::test]
async fn a_deletion_proposed_target_is_published_again() {
    let w = World::new().await;
    w.publish_init("blueprints", "foo", "v1").await;
    w.add_pv("my-pv", BASE).await;
    w.reconcile("my-pv").await.expect("clone");
    let p = w
        .publish(&get(&w, "deployments.bar.packagevariant-1"))
        .await;
    w.engine
        .update_lifecycle(
            NS,
            p.name().as_str(),
            Some(&p.resource_version),
            Lifecycle::DeletionProposed,
            porch_engine::Endpoint::Update,
            super::testing::author(),
        )
        .await
        .expect("propose delete");
    w.reconcile("my-pv").await.expect("restore");
    assert_eq!(
        w.summary("deployments", "bar"),
        ["packagevariant-1 Published"]
    );
}

/// Killed after creating the draft, before writing the status: the next reconcile (a new
/// process) finds the draft by its ownerReference and clones nothing more.
#[tokio::test]
async fn a_reconcile_after_a_crash_finds_the_draft_by_owner() {
    let w = World::new().await;
    w.publish_init("blueprints", "foo", "v1").await;
    w.add_pv("my-pv", BASE).await;
    w.reconcile("my-pv").await.expect("clone");
    // Forget the status, as if it was never written.
    let mut pv = w.pv("my-pv");
    pv["status"] = json!({});
    w.objects
        .update_status(&gvr(), NS, pv)
        .await
        .expect("wipe status");
    let fresh = super::Reconciler {
        objects: w.reconciler.objects.clone(),
        revisions: std::sync::Arc::new(crate::revisions::EngineRevisions {
            engine: w.engine.clone(),
        }),
        events: w.reconciler.events.clone(),
        access: None,
    };
    fresh.reconcile(NS, "my-pv").await.expect("again");
    assert_eq!(w.summary("deployments", "bar"), ["packagevariant-1 Draft"]);
    assert_eq!(
        targets(&w.pv("my-pv")),
        ["deployments.bar.packagevariant-1"]
    );
}

#[tokio::test]
async fn a_deleted_variant_without_our_finalizer_is_left_alone() {
    let w = World::new().await;
    w.reconcile("nothing").await.expect("no such variant: done");
}

/// Upstream's `*WS` tests: the upstream named by workspaceName.
#[tokio::test]
async fn an_upstream_named_by_workspace_is_cloned() {
    let w = World::new().await;
    let v1 = w.publish_init("blueprints", "foo", "v1").await;
    w.publish_edit(&v1, "v2").await;
    w.add_pv(
        "my-pv",
        "upstream: {repo: blueprints, package: foo, workspaceName: v2}\ndownstream: {repo: deployments, package: bar}\n",
    )
    .await;
    w.reconcile("my-pv").await.expect("reconcile");
    let d = get(&w, "deployments.bar.packagevariant-1");
    let lock = d
        .upstream_lock
        .as_ref()
        .and_then(|l| l.git.as_ref())
        .expect("lock");
    assert_eq!(lock.git_ref, "foo/v2");
}

/// Upstream `TestDeleteOrOrphan`, every lifecycle and policy, on real revisions.
#[tokio::test]
async fn delete_or_orphan_by_lifecycle_and_policy() {
    let w = World::new().await;
    w.publish_init("blueprints", "foo", "v1").await;
    let pv = w.add_pv("my-pv", BASE).await;
    let uid = pv["metadata"]["uid"].as_str().unwrap_or("").to_owned();
    let v = super::reconcile::Variant::from_object(pv).expect("variant");
    // One package each: init refuses a second package of the same name.
    let owned = |package: &str| CreateRequest {
        namespace: NS.into(),
        repository: "deployments".into(),
        package: package.into(),
        workspace: "ws".into(),
        owner_references: vec![
            super::downstream::owner_reference(&v),
            porch_engine::OwnerReference {
                api_version: "config.porch.kpt.dev/v1alpha1".into(),
                kind: "PackageVariant".into(),
                name: "other".into(),
                uid: "some-other-uid".into(),
                ..Default::default()
            },
        ],
        ..CreateRequest::default()
    };
    let draft = w.engine.create(owned("bar-d")).await.expect("draft");
    let proposed = w.engine.create(owned("bar-p")).await.expect("proposed");
    let proposed = w
        .engine
        .update_lifecycle(
            NS,
            proposed.name().as_str(),
            Some(&proposed.resource_version),
            Lifecycle::Proposed,
            porch_engine::Endpoint::Update,
            super::testing::author(),
        )
        .await
        .expect("propose");
    let d2 = w.engine.create(owned("bar-pub")).await.expect("to publish");
    let published = w.publish(&d2).await;

    // delete: drafts and proposed go, published is proposed for deletion, once.
    assert!(
        w.reconciler
            .delete_or_orphan(&v, &draft)
            .await
            .expect("d")
            .is_none()
    );
    assert!(
        w.reconciler
            .delete_or_orphan(&v, &proposed)
            .await
            .expect("p")
            .is_none()
    );
    let dp = w
        .reconciler
        .delete_or_orphan(&v, &published)
        .await
        .expect("pub")
        .expect("kept");
    assert_eq!(dp.lifecycle, Lifecycle::DeletionProposed);
    assert_eq!(
        owners(&dp),
        [uid.clone(), "some-other-uid".into()],
        "still ours"
    );
    let again = w
        .reconciler
        .delete_or_orphan(&v, &dp)
        .await
        .expect("dp")
        .expect("kept");
    assert_eq!(again.resource_version, dp.resource_version, "nothing to do");
    assert!(w.summary("deployments", "bar-d").is_empty());
    assert!(w.summary("deployments", "bar-p").is_empty());
    assert_eq!(w.summary("deployments", "bar-pub"), ["ws DeletionProposed"]);

    // orphan: only our ownerReference goes.
    let mut orphaner = super::reconcile::Variant::from_object(w.pv("my-pv")).expect("variant");
    orphaner.pv.spec.deletion_policy = Some("orphan".into());
    let left = w
        .reconciler
        .delete_or_orphan(&orphaner, &dp)
        .await
        .expect("orphan")
        .expect("kept");
    assert_eq!(owners(&left), ["some-other-uid"]);
    assert_eq!(left.lifecycle, Lifecycle::DeletionProposed);
}

/// A render failure of the cloned package is the variant's Ready=False message (upstream
/// only logged some failures).
#[tokio::test]
async fn a_render_failure_is_in_the_status() {
    let w = World::new().await;
    let dir = w.tmp.path().join("remotes").join("blueprints");
    publish_with_failing_pipeline(&dir);
    w.engine
        .sync(
            NS,
            &porch_core::names::RepositoryName::new("blueprints").expect("name"),
        )
        .await
        .expect("sync");
    assert_eq!(w.summary("blueprints", "foo"), ["v1 Published"]);
    w.add_pv("my-pv", BASE).await;
    let e = w.reconcile("my-pv").await.expect_err("render fails");
    let (status, reason, message) = cond(&w.pv("my-pv"), "Ready");
    assert_eq!((status.as_str(), reason.as_str()), ("False", "Error"));
    assert_eq!(message, e.to_string());
    assert!(message.contains("error rendering package"), "{message}");
    assert!(
        w.summary("deployments", "bar").is_empty(),
        "a failed clone writes nothing"
    );
}

/// Publishes `foo/v1` straight to git with a pipeline no runtime can run.
fn publish_with_failing_pipeline(dir: &std::path::Path) {
    let kptfile = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: foo\ninfo:\n  description: foo\npipeline:\n  mutators:\n  - image: example.com/no-such-function:v1\n";
    porch_testkit::repos::run(
        std::process::Command::new("sh").arg("-c").arg(format!(
            "set -e; t=$(mktemp -d); git clone -q {d} $t/w; cd $t/w; mkdir -p foo; printf '%s' \"$KF\" > foo/Kptfile; \
             printf 'apiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: c\\n' > foo/cm.yaml; \
             git add -A; git -c user.name=t -c user.email=t@e commit -qm foo; git tag foo/v1; git push -q origin main foo/v1",
            d = dir.display()
        )).env("KF", kptfile),
    )
    .expect("publish foo/v1 in git");
}

/// Creators who may do everything but read package revisions.
struct NoRevisionReads;

#[async_trait::async_trait]
impl crate::access::Access for NoRevisionReads {
    async fn check(
        &self,
        who: &crate::access::Creator,
        a: &crate::access::Action,
    ) -> Result<(), String> {
        if a.verb == "get" && a.resource == "packagerevisions" {
            Err(format!(
                "{} may not get {}: {}",
                who.username, a.name, a.why
            ))
        } else {
            Ok(())
        }
    }
}

#[tokio::test]
async fn a_variant_acts_with_its_creators_rights() {
    use crate::access::CREATOR_ANNOTATION;
    let mut w = World::new().await;
    w.publish_init("blueprints", "foo", "v1").await;
    w.reconciler.access = Some(std::sync::Arc::new(NoRevisionReads));

    // No creator recorded: nothing is done for the variant.
    w.add_pv("anonymous", BASE).await;
    w.reconcile("anonymous").await.expect("reconcile");
    let (status, reason, message) = cond(&w.pv("anonymous"), "Stalled");
    assert_eq!((status.as_str(), reason.as_str()), ("True", "Forbidden"));
    assert!(message.contains("no creator recorded"), "{message}");

    // A creator who may not read the upstream: Stalled, no draft.
    let mut pv = w.pv("anonymous");
    pv["metadata"]["annotations"] =
        json!({CREATOR_ANNOTATION: r#"{"username":"mallory","groups":["dev"]}"#});
    w.objects.update(&gvr(), NS, pv).await.expect("update");
    w.reconcile("anonymous").await.expect("reconcile");
    let pv = w.pv("anonymous");
    assert_eq!(
        cond(&pv, "Stalled"),
        (
            "True".into(),
            "Forbidden".into(),
            "acting as its creator: mallory may not get blueprints.foo.v1: a clone reads its upstream"
                .into()
        )
    );
    assert_eq!(cond(&pv, "Ready").0, "False");
    assert!(w.summary("deployments", "bar").is_empty());

    // Without the check (no RBAC) the same variant gets its draft.
    w.reconciler.access = None;
    w.reconcile("anonymous").await.expect("reconcile");
    assert_eq!(w.summary("deployments", "bar"), ["packagevariant-1 Draft"]);
    assert_eq!(cond(&w.pv("anonymous"), "Stalled").1, "Valid");
}
