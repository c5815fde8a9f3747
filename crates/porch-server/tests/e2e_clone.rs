//! Upstream API e2e scenarios of `test/e2e/api/rpkg_clone_test.go` (porch-api.md §18.1): clone
//! from a registered revision and from git, into a deployment repository, and upgrade.

mod common;

use common::porch::*;
use kube::api::PostParams;
use serde_json::json;

const NS: &str = "default";

/// The commit a tag of the blueprint repository points at.
fn tag_commit(env: &Env, tag: &str) -> String {
    porch_testkit::repos::run(
        std::process::Command::new("git")
            .arg("-C")
            .arg(env.bare("test-blueprints"))
            .args(["rev-parse", &format!("{tag}^{{commit}}")]),
    )
    .expect("rev-parse")
    .trim()
    .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_clone_from_upstream() {
    let env = Env::start().await;
    let Some(url) = env.blueprints() else {
        return;
    };
    env.register(NS, "test-blueprints", &url, json!({})).await;
    let target = env.empty_repo("git");
    env.register(NS, "git", &target, json!({})).await;
    let prs = env.prs(NS);

    let (code, msg) = api_err(
        prs.create(
            &PostParams::default(),
            &new_revision(
                "git",
                "cloned",
                "ws",
                clone_task("test-blueprints.basens.main"),
            ),
        )
        .await,
    );
    assert!(code >= 400, "{code}");
    assert!(msg.contains("placeholder package revision"), "{msg}");
    assert!(is_gone(&prs, "git.cloned.ws").await);

    create(
        &prs,
        "git",
        "cloned",
        "ws",
        clone_task("test-blueprints.basens.v1"),
    )
    .await;
    let kf = kptfile_of(&env.prrs(NS), "git.cloned.ws").await;
    assert_eq!(kf["metadata"]["name"], "cloned");
    let git = json!({"repo": url, "directory": "basens", "ref": "basens/v1"});
    assert_eq!(kf["upstream"]["type"], "git");
    assert_eq!(kf["upstream"]["git"], git);
    let mut lock = git.clone();
    lock["commit"] = json!(tag_commit(&env, "basens/v1"));
    assert_eq!(kf["upstreamLock"], json!({"type": "git", "git": lock}));
    let pr = prs.get("git.cloned.ws").await.expect("get");
    assert_eq!(
        pr.data["status"]["upstreamLock"],
        json!({"type": "git", "git": lock})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_clone_into_deployment_repository() {
    let env = Env::start().await;
    let Some(url) = env.blueprints() else {
        return;
    };
    env.register(NS, "test-blueprints", &url, json!({})).await;
    let target = env.empty_repo("deployment");
    env.register(NS, "deployment", &target, json!({"deployment": true}))
        .await;
    let prs = env.prs(NS);

    create(
        &prs,
        "deployment",
        "istions",
        "ws",
        clone_task("test-blueprints.basens.v1"),
    )
    .await;
    let files = files_of(&env.prrs(NS), "deployment.istions.ws").await;
    let ctx: serde_json::Value = serde_yaml::from_str(
        files
            .get("package-context.yaml")
            .and_then(|v| v.as_str())
            .unwrap_or_else(|| panic!("package-context.yaml generated: {:?}", files.keys())),
    )
    .expect("package-context YAML");
    assert_eq!(ctx["kind"], "ConfigMap");
    assert_eq!(ctx["metadata"]["name"], "kptfile.kpt.dev");
    assert_eq!(ctx["data"]["name"], "istions");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_clone_leading_slash() {
    let env = Env::start().await;
    let Some(url) = env.blueprints() else {
        return;
    };
    let target = env.empty_repo("git");
    env.register(NS, "git", &target, json!({})).await;
    env.auth_secret(NS, "blueprints-auth").await;
    let prs = env.prs(NS);

    create(
        &prs,
        "git",
        "leading-slash",
        "ws",
        json!([{"type": "clone", "clone": {"upstreamRef": {"type": "git", "git": {
            "repo": url, "ref": "basens/v1", "directory": "/basens",
            "secretRef": {"name": "blueprints-auth"},
        }}}}]),
    )
    .await;
    let files = files_of(&env.prrs(NS), "git.leading-slash.ws").await;
    assert!(files.contains_key("namespace.yaml"), "{:?}", files.keys());
    let kf = kptfile_of(&env.prrs(NS), "git.leading-slash.ws").await;
    assert_eq!(kf["metadata"]["name"], "leading-slash");
    assert_eq!(
        kf["upstreamLock"]["git"]["commit"],
        json!(tag_commit(&env, "basens/v1"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn test_package_upgrade() {
    let env = Env::start().await;
    let Some(url) = env.blueprints() else {
        return;
    };
    env.register(NS, "test-blueprints", &url, json!({})).await;
    let target = env.empty_repo("git");
    env.register(NS, "git", &target, json!({})).await;
    let prs = env.prs(NS);
    let prrs = env.prrs(NS);

    create(
        &prs,
        "git",
        "upgraded",
        "ws1",
        clone_task("test-blueprints.basens.v1"),
    )
    .await;
    publish(&prs, "git.upgraded.ws1").await;
    assert!(
        !files_of(&prrs, "git.upgraded.ws1")
            .await
            .contains_key("resourcequota.yaml")
    );

    // Neither side may be a placeholder.
    for (new, local) in [
        ("test-blueprints.basens.main", "git.upgraded.ws1"),
        ("test-blueprints.basens.v2", "git.upgraded.main"),
    ] {
        let (code, msg) = api_err(
            prs.create(
                &PostParams::default(),
                &new_revision(
                    "git",
                    "upgraded",
                    "ws2",
                    upgrade_task("test-blueprints.basens.v1", new, local),
                ),
            )
            .await,
        );
        assert!(code >= 400, "{code}");
        assert!(msg.contains("placeholder package revision"), "{msg}");
    }

    let up = create(
        &prs,
        "git",
        "upgraded",
        "ws2",
        upgrade_task(
            "test-blueprints.basens.v1",
            "test-blueprints.basens.v2",
            "git.upgraded.ws1",
        ),
    )
    .await;
    assert_eq!(name(&up), "git.upgraded.ws2");
    assert_eq!(spec(&up)["lifecycle"], "Draft");
    let files = files_of(&prrs, "git.upgraded.ws2").await;
    assert!(
        files.contains_key("resourcequota.yaml"),
        "the upgrade brings resourcequota.yaml: {:?}",
        files.keys()
    );
    let kf = kptfile_of(&prrs, "git.upgraded.ws2").await;
    assert_eq!(kf["metadata"]["name"], "upgraded");
    assert_eq!(kf["upstream"]["git"]["ref"], "basens/v2");
    assert_eq!(
        kf["upstreamLock"]["git"]["commit"],
        json!(tag_commit(&env, "basens/v2"))
    );
}

/// The legacy `update` task (older clients, e.g. the Backstage plugin) creates the same
/// draft as the `upgrade` it stands for.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn legacy_update_task_upgrades_the_latest_revision() {
    let env = Env::start().await;
    let Some(url) = env.blueprints() else {
        return;
    };
    env.register(NS, "test-blueprints", &url, json!({})).await;
    let target = env.empty_repo("git");
    env.register(NS, "git", &target, json!({})).await;
    let prs = env.prs(NS);
    let prrs = env.prrs(NS);
    create(
        &prs,
        "git",
        "legacy",
        "ws1",
        clone_task("test-blueprints.basens.v1"),
    )
    .await;
    publish(&prs, "git.legacy.ws1").await;

    let update = json!([{"type": "update", "update": {"upstreamRef": {"upstreamRef": {"name": "test-blueprints.basens.v2"}}}}]);
    let up = create(&prs, "git", "legacy", "ws2", update).await;
    assert_eq!(spec(&up)["tasks"][0]["type"], "upgrade", "{:?}", spec(&up));
    assert_eq!(
        spec(&up)["tasks"][0]["upgrade"]["localPackageRevisionRef"]["name"],
        "git.legacy.ws1"
    );
    assert!(
        files_of(&prrs, "git.legacy.ws2")
            .await
            .contains_key("resourcequota.yaml")
    );

    // Without a new upstream the request is refused with a hint.
    let (code, msg) = api_err(
        prs.create(
            &PostParams::default(),
            &new_revision(
                "git",
                "legacy",
                "ws3",
                json!([{"type": "update", "update": {}}]),
            ),
        )
        .await,
    );
    assert_eq!(code, 422, "{msg}");
    assert!(msg.contains("upgrade task instead"), "{msg}");

    // An existing Draft's tasks: what Go Porch refuses is refused with its words, over
    // the API, and the Draft keeps its tasks.
    let mut draft = prs.get("git.legacy.ws2").await.expect("draft");
    let tasks = spec(&draft)["tasks"].clone();
    draft.data["spec"]["tasks"] = json!([]);
    let (code, msg) = api_err(
        prs.replace("git.legacy.ws2", &PostParams::default(), &draft)
            .await,
    );
    assert_eq!(code, 422, "{msg}");
    assert!(msg.contains("removing tasks is not yet supported"), "{msg}");
    draft.data["spec"]["tasks"] = json!([{"type": "init", "init": {}}]);
    let (code, msg) = api_err(
        prs.replace("git.legacy.ws2", &PostParams::default(), &draft)
            .await,
    );
    assert_eq!(code, 422, "{msg}");
    assert!(
        msg.contains("changing task types is not yet supported"),
        "{msg}"
    );
    let now = prs.get("git.legacy.ws2").await.expect("draft");
    assert_eq!(spec(&now)["tasks"], tasks);
}
