//! The audit log through the real binary: `--audit-policy-file` levels, the
//! `audit.k8s.io/v1` Event lines, package revision lifecycle annotations, Secrets at Metadata
//! only, and rotation by size.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::porch::*;
use serde_json::{Value, json};

const NS: &str = "default";

const POLICY: &str = r#"
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  nonResourceURLs: ["/healthz*", "/readyz*", "/livez*", "/version*", "/openapi/*", "/api*", "/apis*"]
- level: RequestResponse
  resources:
  - group: ""
    resources: [configmaps]
- level: RequestResponse
  resources:
  - group: ""
    resources: [secrets]
- level: Metadata
  verbs: [create, update, patch, delete]
  resources:
  - group: porch.kpt.dev
    resources: ["packagerevisions", "packagerevisions/*"]
"#;

fn write_policy(dir: &Path, text: &str) -> PathBuf {
    let p = dir.join("policy.yaml");
    std::fs::write(&p, text).expect("policy");
    p
}

/// Every event in the log files of `dir` (rotated ones first).
fn events(dir: &Path) -> Vec<Value> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("log dir")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    files.sort();
    files
        .iter()
        .flat_map(|f| {
            std::fs::read_to_string(f)
                .expect("log")
                .lines()
                .map(|l| serde_json::from_str::<Value>(l).expect("each line is one JSON event"))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Waits until an event matching `f` is written (the writer runs off the request path).
fn wait_event(dir: &Path, what: &str, f: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(e) = events(dir).into_iter().find(|e| f(e)) {
            return e;
        }
        assert!(
            Instant::now() < deadline,
            "no audit event for {what}: {:#?}",
            events(dir)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn is(e: &Value, verb: &str, resource: &str, name: &str) -> bool {
    e["verb"] == verb && e["objectRef"]["resource"] == resource && e["objectRef"]["name"] == name
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn requests_are_audited_at_the_policy_level() {
    let logs = tempfile::tempdir().expect("tempdir");
    let policy = write_policy(logs.path(), POLICY);
    let log = logs.path().join("audit.log");
    let (policy_arg, log_arg) = (policy.display().to_string(), log.display().to_string());
    let env = Env::start_with(&[
        "--audit-policy-file",
        &policy_arg,
        "--audit-log-path",
        &log_arg,
    ])
    .await;
    let s = &env.server;
    s.kubectl_ok(&["create", "configmap", "cfg", "--from-literal=colour=blue"]);
    s.kubectl_ok(&["get", "configmap", "cfg"]);
    s.kubectl_ok(&[
        "create",
        "secret",
        "generic",
        "pw",
        "--from-literal=password=hunter2",
    ]);
    s.kubectl_ok(&["get", "secret", "pw", "-o", "yaml"]);
    let missing = s.kubectl(&["get", "configmap", "nope"]);
    assert!(!missing.status.success());

    // Package revisions: create, propose, approve; the approver shows as publishedBy.
    let url = env.empty_repo("blueprints");
    env.register(NS, "blueprints", &url, json!({})).await;
    let prs = env.prs(NS);
    let draft = init(&prs, "blueprints", "app", "v1").await;
    let pr = name(&draft);
    propose(&prs, &pr).await;
    let published = approve(&prs, &pr).await;
    assert_eq!(published.data["status"]["publishedBy"], "admin");
    assert!(published.data["status"]["publishTimestamp"].is_string());

    let dir = logs.path();
    let create = wait_event(dir, "configmap create", |e| {
        is(e, "create", "configmaps", "cfg")
    });
    assert_eq!(create["apiVersion"], "audit.k8s.io/v1");
    assert_eq!(create["kind"], "Event");
    assert_eq!(create["level"], "RequestResponse");
    assert_eq!(create["stage"], "ResponseComplete");
    assert_eq!(create["user"]["username"], "admin");
    assert_eq!(create["objectRef"]["namespace"], NS);
    assert!(create["objectRef"]["uid"].is_string());
    assert_eq!(create["objectRef"]["apiVersion"], "v1");
    assert_eq!(create["responseStatus"]["code"], 201);
    assert_eq!(create["requestObject"]["data"]["colour"], "blue");
    assert_eq!(create["responseObject"]["metadata"]["name"], "cfg");
    assert!(create["auditID"].as_str().is_some_and(|id| id.len() >= 32));
    assert!(
        create["requestURI"]
            .as_str()
            .is_some_and(|u| u.starts_with("/api/v1/namespaces/default/configmaps"))
    );
    assert!(create["sourceIPs"][0] == "127.0.0.1", "{create}");
    assert!(
        create["userAgent"]
            .as_str()
            .is_some_and(|a| a.starts_with("kubectl"))
    );
    for ts in ["requestReceivedTimestamp", "stageTimestamp"] {
        assert!(
            create[ts]
                .as_str()
                .is_some_and(|t| t.ends_with('Z') && t.contains('.')),
            "{ts}"
        );
    }
    let get = wait_event(dir, "configmap get", |e| is(e, "get", "configmaps", "cfg"));
    assert_eq!(get["responseStatus"]["code"], 200);
    let nope = wait_event(dir, "missing configmap", |e| {
        is(e, "get", "configmaps", "nope")
    });
    assert_eq!(nope["responseStatus"]["code"], 404);
    assert_eq!(nope["responseStatus"]["reason"], "NotFound");

    // Secrets: Metadata at most, whatever the rule says.
    let secret = wait_event(dir, "secret get", |e| is(e, "get", "secrets", "pw"));
    assert_eq!(secret["level"], "Metadata");
    assert!(secret.get("requestObject").is_none() && secret.get("responseObject").is_none());
    let text: String = std::fs::read_to_string(&log).expect("log");
    assert!(
        !text.contains("hunter2") && !text.contains("aHVudGVyMg"),
        "secret data logged"
    );

    // Lifecycle changes named on the events.
    let proposed = wait_event(dir, "propose", |e| {
        e["annotations"]["porch.kpt.dev/lifecycle"] == "Draft->Proposed"
    });
    assert_eq!(proposed["level"], "Metadata");
    assert_eq!(proposed["verb"], "patch");
    assert_eq!(
        proposed["annotations"]["porch.kpt.dev/packagerevision"],
        pr.as_str()
    );
    assert!(proposed.get("requestObject").is_none());
    let approved = wait_event(dir, "approve", |e| {
        e["annotations"]["porch.kpt.dev/lifecycle"] == "Proposed->Published"
    });
    assert_eq!(approved["objectRef"]["subresource"], "approval");
    assert_eq!(approved["user"]["username"], "admin");
    let created = wait_event(dir, "create", |e| {
        e["annotations"]["porch.kpt.dev/lifecycle"] == "->Draft"
    });
    assert_eq!(created["verb"], "create");

    // Not matched by any rule: not logged.
    assert!(
        !events(dir)
            .iter()
            .any(|e| e["objectRef"]["resource"] == "repositories"
                || e["requestURI"] == "/readyz"
                || (e["verb"] == "list" && e["objectRef"]["resource"] == "packagerevisions")),
        "only what the policy names is logged"
    );
}

#[test]
fn the_log_rotates_by_size() {
    let logs = tempfile::tempdir().expect("tempdir");
    let policy = write_policy(
        logs.path(),
        "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n",
    );
    let log = logs.path().join("audit.log");
    let (policy_arg, log_arg) = (policy.display().to_string(), log.display().to_string());
    // 0.002 MiB: about two kilobytes, a few events per file.
    let s = common::Server::start_with(&[
        "--audit-policy-file",
        &policy_arg,
        "--audit-log-path",
        &log_arg,
        "--audit-log-maxsize",
        "0.002",
        "--audit-log-maxbackup",
        "3",
    ]);
    for i in 0..12 {
        s.kubectl_ok(&["create", "configmap", &format!("c{i}")]);
    }
    wait_event(logs.path(), "last create", |e| {
        e["verb"] == "create" && e["objectRef"]["name"] == "c11"
    });
    let files: Vec<PathBuf> = std::fs::read_dir(logs.path())
        .expect("dir")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    let backups = files.iter().filter(|p| *p != &log).count();
    assert_eq!(backups, 3, "maxbackup keeps three rotated files: {files:?}");
    for f in &files {
        let len = std::fs::metadata(f).expect("file").len();
        assert!(len <= 2098, "{} is {len} bytes", f.display());
    }
}

#[test]
fn no_policy_no_log() {
    let logs = tempfile::tempdir().expect("tempdir");
    let log = logs.path().join("audit.log");
    let log_arg = log.display().to_string();
    let s = common::Server::start_with(&["--audit-log-path", &log_arg]);
    s.kubectl_ok(&["create", "configmap", "c"]);
    assert!(
        std::fs::read_to_string(&log).unwrap_or_default().is_empty(),
        "nothing is audited without a policy"
    );
}

/// A request refused with 401 is audited as kube-apiserver does: no user, stage
/// `ResponseStarted`, the methods attempted; never the credential.
#[tokio::test]
async fn unauthenticated_requests_are_audited_without_the_secret() {
    let logs = tempfile::tempdir().expect("tempdir");
    let policy = write_policy(
        logs.path(),
        "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n",
    );
    let log = logs.path().join("audit.log");
    let (policy_arg, log_arg) = (policy.display().to_string(), log.display().to_string());
    let s = common::Server::start_with(&[
        "--audit-policy-file",
        &policy_arg,
        "--audit-log-path",
        &log_arg,
    ]);
    let out = s.kubectl(&[
        "get",
        "configmaps",
        "-n",
        NS,
        "--token=not-a-real-secret-token",
    ]);
    assert!(!out.status.success(), "an unknown token is refused");
    let refused = wait_event(logs.path(), "401", |e| e["responseStatus"]["code"] == 401);
    assert_eq!(refused["stage"], "ResponseStarted");
    assert_eq!(refused["level"], "Metadata");
    assert_eq!(refused["user"], json!({}));
    assert_eq!(
        refused["responseStatus"]["message"],
        "Authentication failed, attempted: bearer"
    );
    assert!(refused["auditID"].is_string());
    assert!(refused["sourceIPs"][0] == "127.0.0.1", "{refused}");
    // kube-rs with a wrong token goes straight to the resource (kubectl stops at discovery).
    let kc = kube::config::Kubeconfig::read_from(s.kubeconfig()).expect("kubeconfig");
    let mut cfg =
        kube::Config::from_custom_kubeconfig(kc, &kube::config::KubeConfigOptions::default())
            .await
            .expect("config");
    cfg.auth_info = kube::config::AuthInfo {
        token: Some("not-a-real-secret-token".to_string().into()),
        ..Default::default()
    };
    let client = kube::Client::try_from(cfg).expect("client");
    let cms: kube::Api<k8s_openapi::api::core::v1::ConfigMap> = kube::Api::namespaced(client, NS);
    match cms.list(&Default::default()).await {
        Err(kube::Error::Api(e)) => assert_eq!(e.code, 401),
        other => panic!("list with a wrong token: {other:?}"),
    }
    let listed = wait_event(logs.path(), "401 list", |e| {
        e["responseStatus"]["code"] == 401 && e["objectRef"]["resource"] == "configmaps"
    });
    assert_eq!(listed["verb"], "list");
    assert_eq!(listed["objectRef"]["namespace"], NS);
    let text = std::fs::read_to_string(&log).expect("log");
    assert!(
        !text.contains("not-a-real-secret-token"),
        "the token reached the audit log"
    );
}
