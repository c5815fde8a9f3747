//! RBAC through the real server and kubectl 1.32, users impersonated with `--as`/`--as-group`
//! (the admin may impersonate): the default roles separate reading, authoring, approving and
//! registering repositories; 403s read as kube-apiserver's; and `kubectl auth can-i` answers
//! what the server then does, for every role, verb and resource (a generated matrix).

mod common;

use common::Server;
use common::porch::{empty_remote, git_server};
use serde_json::Value;

fn json(out: &str) -> Value {
    serde_json::from_str(out).expect("kubectl printed JSON")
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

const PR: &str = "deployments.edge.site-a.ws1";

#[test]
fn reader_author_approver_and_repository_admin_each_do_only_their_part() {
    let s = Server::start();
    let root = s.dir.path().join("git");
    std::fs::create_dir_all(&root).expect("git root");
    empty_remote(&root, "deployments");
    let git = git_server(&root);

    for args in [
        &[
            "create",
            "clusterrolebinding",
            "readers",
            "--clusterrole=porch-reader",
            "--user=rita",
        ][..],
        &[
            "create",
            "rolebinding",
            "authors",
            "--clusterrole=porch-author",
            "--user=alice",
            "-n",
            "default",
        ],
        &[
            "create",
            "rolebinding",
            "approvers",
            "--clusterrole=porch-approver",
            "--group=porch-approvers",
            "-n",
            "default",
        ],
        &[
            "create",
            "rolebinding",
            "repo-admins",
            "--clusterrole=porch-repository-admin",
            "--user=ray",
            "-n",
            "default",
        ],
    ] {
        s.kubectl_ok(args);
    }
    let wide = s.kubectl_ok(&["get", "rolebindings", "-n", "default", "-o", "wide"]);
    assert!(
        wide.lines().any(|l| l.starts_with("authors")
            && l.contains("ClusterRole/porch-author")
            && l.contains("alice")),
        "{wide}"
    );

    // Registering a repository: the reader may not, the repository admin may.
    let repo = s.write_file(
        "repo.yaml",
        &format!(
            "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: deployments\n  namespace: default\nspec:\n  type: git\n  git:\n    repo: {}\n    branch: main\n",
            git.url_for("deployments.git")
        ),
    );
    let repo = repo.to_str().expect("utf8");
    let refused = s.kubectl(&["create", "-f", repo, "--as", "rita"]);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains(
            "repositories.config.porch.kpt.dev is forbidden: User \"rita\" cannot create resource \"repositories\" in API group \"config.porch.kpt.dev\" in the namespace \"default\""
        ),
        "{}",
        stderr(&refused)
    );
    s.kubectl_ok(&["create", "-f", repo, "--as", "ray"]);
    s.kubectl_ok(&[
        "wait",
        "--for=condition=Ready",
        "repositories.config.porch.kpt.dev/deployments",
        "--timeout=60s",
    ]);

    // A draft: the reader cannot create it, the author can, and can edit and propose it.
    let draft = s.write_file(
        "draft.yaml",
        "apiVersion: porch.kpt.dev/v1alpha1\nkind: PackageRevision\nmetadata:\n  namespace: default\nspec:\n  repository: deployments\n  packageName: edge/site-a\n  workspaceName: ws1\n  tasks:\n  - type: init\n    init:\n      description: site A\n",
    );
    let draft = draft.to_str().expect("utf8");
    let refused = s.kubectl(&["create", "-f", draft, "--as", "rita"]);
    assert!(
        stderr(&refused).contains("User \"rita\" cannot create resource \"packagerevisions\" in API group \"porch.kpt.dev\" in the namespace \"default\""),
        "{}",
        stderr(&refused)
    );
    s.kubectl_ok(&["get", "packagerevisions", "--as", "rita"]);
    s.kubectl_ok(&["create", "-f", draft, "--as", "alice"]);
    let mut prr = json(&s.kubectl_ok(&[
        "get",
        "packagerevisionresources",
        PR,
        "-o",
        "json",
        "--as",
        "alice",
    ]));
    prr["spec"]["resources"]["cm.yaml"] =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: site\ndata:\n  region: eu\n".into();
    let prr_file = s.write_file("prr.json", &prr.to_string());
    s.kubectl_ok(&[
        "replace",
        "-f",
        prr_file.to_str().expect("utf8"),
        "--as",
        "alice",
    ]);
    let refused = s.kubectl(&[
        "replace",
        "-f",
        prr_file.to_str().expect("utf8"),
        "--as",
        "rita",
    ]);
    assert!(
        stderr(&refused).contains("cannot update resource \"packagerevisionresources\""),
        "{}",
        stderr(&refused)
    );
    s.kubectl_ok(&[
        "patch",
        "packagerevision",
        PR,
        "--type=merge",
        "-p",
        r#"{"spec":{"lifecycle":"Proposed"}}"#,
        "--as",
        "alice",
    ]);

    // The author cannot approve; an approver (by group) can.
    let approve = [
        "patch",
        "packagerevision",
        PR,
        "--subresource=approval",
        "--type=merge",
        "-p",
        r#"{"spec":{"lifecycle":"Published"}}"#,
    ];
    let refused = s.kubectl(&[&approve[..], &["--as", "alice"]].concat());
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains(&format!(
            "packagerevisions.porch.kpt.dev \"{PR}\" is forbidden: User \"alice\" cannot patch resource \"packagerevisions/approval\" in API group \"porch.kpt.dev\" in the namespace \"default\""
        )),
        "{}",
        stderr(&refused)
    );
    // The same refusal for a plain update of the subresource (kubectl replace --raw: a PUT).
    let mut pr = json(&s.kubectl_ok(&["get", "packagerevision", PR, "-o", "json"]));
    pr["spec"]["lifecycle"] = "Published".into();
    let pr_file = s.write_file("pr.json", &pr.to_string());
    let uri =
        format!("/apis/porch.kpt.dev/v1alpha1/namespaces/default/packagerevisions/{PR}/approval");
    let refused = s.kubectl(&[
        "replace",
        "--raw",
        &uri,
        "-f",
        pr_file.to_str().expect("utf8"),
        "--as",
        "alice",
    ]);
    assert!(
        stderr(&refused).contains(&format!(
            "packagerevisions.porch.kpt.dev \"{PR}\" is forbidden: User \"alice\" cannot update resource \"packagerevisions/approval\" in API group \"porch.kpt.dev\" in the namespace \"default\""
        )),
        "{}",
        stderr(&refused)
    );
    // Nor may the approver author.
    let refused = s.kubectl(&[
        "create",
        "-f",
        draft,
        "--as",
        "carl",
        "--as-group",
        "porch-approvers",
    ]);
    assert!(
        stderr(&refused).contains("User \"carl\" cannot create resource \"packagerevisions\""),
        "{}",
        stderr(&refused)
    );
    s.kubectl_ok(
        &[
            &approve[..],
            &["--as", "carl", "--as-group", "porch-approvers"],
        ]
        .concat(),
    );
    let published =
        json(&s.kubectl_ok(&["get", "packagerevision", PR, "-o", "json", "--as", "rita"]));
    assert_eq!(published["spec"]["lifecycle"], "Published");

    // The author proposes the deletion but cannot carry it out: that approves the proposal.
    s.kubectl_ok(&[
        "patch",
        "packagerevision",
        PR,
        "--type=merge",
        "-p",
        r#"{"spec":{"lifecycle":"DeletionProposed"}}"#,
        "--as",
        "alice",
    ]);
    let refused = s.kubectl(&["delete", "packagerevision", PR, "--as", "alice"]);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains(&format!(
            "packagerevisions.porch.kpt.dev \"{PR}\" is forbidden: User \"alice\" cannot update resource \"packagerevisions/approval\""
        )),
        "{}",
        stderr(&refused)
    );
    s.kubectl_ok(&["get", "packagerevision", PR, "--as", "rita"]);
    s.kubectl_ok(&[
        "delete",
        "packagerevision",
        PR,
        "--as",
        "carl",
        "--as-group",
        "porch-approvers",
    ]);
    assert!(!s.kubectl(&["get", "packagerevision", PR]).status.success());

    // Who am I, as kubectl asks it (protobuf).
    let who = s.kubectl_ok(&[
        "auth",
        "whoami",
        "-o",
        "json",
        "--as",
        "carl",
        "--as-group",
        "porch-approvers",
    ]);
    let who = json(&who);
    assert_eq!(who["status"]["userInfo"]["username"], "carl");
    assert_eq!(
        who["status"]["userInfo"]["groups"],
        serde_json::json!(["porch-approvers", "system:authenticated"])
    );
}

/// Roles of the matrix: the user `u-<role>` is bound to the ClusterRole `<role>` in `default`.
const ROLES: [&str; 5] = [
    "porch-reader",
    "porch-author",
    "porch-approver",
    "porch-repository-admin",
    "none",
];
const VERBS: [&str; 7] = [
    "get", "list", "watch", "create", "update", "patch", "delete",
];
/// (kubectl resource, subresource, URL collection path under the namespace)
const RESOURCES: [(&str, &str, &str); 6] = [
    (
        "packagerevisions.porch.kpt.dev",
        "",
        "/apis/porch.kpt.dev/v1alpha1/namespaces/default/packagerevisions",
    ),
    (
        "packagerevisions.porch.kpt.dev",
        "approval",
        "/apis/porch.kpt.dev/v1alpha1/namespaces/default/packagerevisions",
    ),
    (
        "packagerevisionresources.porch.kpt.dev",
        "",
        "/apis/porch.kpt.dev/v1alpha1/namespaces/default/packagerevisionresources",
    ),
    (
        "repositories.config.porch.kpt.dev",
        "",
        "/apis/config.porch.kpt.dev/v1alpha1/namespaces/default/repositories",
    ),
    (
        "packagevariants.config.porch.kpt.dev",
        "",
        "/apis/config.porch.kpt.dev/v1alpha1/namespaces/default/packagevariants",
    ),
    ("secrets", "", "/api/v1/namespaces/default/secrets"),
];

/// What the server does with `verb` on the resource as `user`: whether it was refused (403).
async fn refused(
    client: &kube::Client,
    user: &str,
    verb: &str,
    sub: &str,
    collection: &str,
) -> bool {
    let one = format!("{collection}/matrix-object");
    let (method, uri, ct) = match (verb, sub) {
        ("get", "") => ("GET", one, "application/json"),
        ("get", s) => ("GET", format!("{one}/{s}"), "application/json"),
        ("list", _) => ("GET", collection.to_string(), "application/json"),
        ("watch", _) => (
            "GET",
            format!("{collection}?watch=true&timeoutSeconds=1"),
            "application/json",
        ),
        ("create", _) => ("POST", collection.to_string(), "application/json"),
        ("update", "") => ("PUT", one, "application/json"),
        ("update", s) => ("PUT", format!("{one}/{s}"), "application/json"),
        ("patch", "") => ("PATCH", one, "application/merge-patch+json"),
        ("patch", s) => (
            "PATCH",
            format!("{one}/{s}"),
            "application/merge-patch+json",
        ),
        _ => ("DELETE", one, "application/json"),
    };
    let req = http::Request::builder()
        .method(method)
        .uri(uri)
        .header("Content-Type", ct)
        .header("Impersonate-User", user)
        .body(kube::client::Body::from(b"{}".to_vec()))
        .expect("request");
    let resp = client.send(req).await.expect("send");
    resp.status() == http::StatusCode::FORBIDDEN
}

#[tokio::test(flavor = "multi_thread")]
async fn can_i_answers_what_the_server_then_does_for_every_role_verb_and_resource() {
    let s = Server::start();
    for role in ROLES.iter().filter(|r| **r != "none") {
        s.kubectl_ok(&[
            "create",
            "rolebinding",
            &format!("b-{role}"),
            &format!("--clusterrole={role}"),
            &format!("--user=u-{role}"),
            "-n",
            "default",
        ]);
    }
    let client = s.client().await;
    let mut cases = Vec::new();
    for role in ROLES {
        for verb in VERBS {
            for (resource, sub, collection) in RESOURCES {
                if !sub.is_empty() && matches!(verb, "list" | "watch" | "create" | "delete") {
                    continue;
                }
                cases.push((role, verb, resource, sub, collection));
            }
        }
    }
    // kubectl's answers, a few at a time.
    let answers: Vec<bool> = std::thread::scope(|scope| {
        cases
            .chunks(cases.len().div_ceil(6))
            .map(|chunk| {
                let s = &s;
                scope.spawn(move || {
                    chunk
                        .iter()
                        .map(|(role, verb, resource, sub, _)| {
                            let user = format!("u-{role}");
                            let mut args = vec!["auth", "can-i", verb, resource, "--as", &user];
                            if !sub.is_empty() {
                                args.extend(["--subresource", sub]);
                            }
                            let out = s.kubectl(&args);
                            let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
                            assert!(
                                text == "yes" || text == "no",
                                "can-i {args:?}: {text} {}",
                                stderr(&out)
                            );
                            text == "yes"
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect::<Vec<_>>()
            .into_iter()
            .flat_map(|h| h.join().expect("kubectl thread"))
            .collect()
    });
    let mut allowed = 0;
    for ((role, verb, resource, sub, collection), yes) in cases.iter().zip(&answers) {
        let done = !refused(&client, &format!("u-{role}"), verb, sub, collection).await;
        assert_eq!(
            *yes, done,
            "{role} {verb} {resource} {sub}: can-i said {yes}, the server did {done}"
        );
        allowed += usize::from(*yes);
    }
    // The matrix is not trivially all-yes or all-no.
    assert!(
        allowed > 20 && allowed < cases.len() - 20,
        "{allowed} of {}",
        cases.len()
    );
    // Spot checks of the roles' intent.
    let ask = |args: &[&str]| {
        String::from_utf8_lossy(&s.kubectl(args).stdout)
            .trim()
            .to_string()
    };
    assert_eq!(
        ask(&[
            "auth",
            "can-i",
            "update",
            "packagerevisions",
            "--subresource=approval",
            "--as",
            "u-porch-approver"
        ]),
        "yes"
    );
    assert_eq!(
        ask(&[
            "auth",
            "can-i",
            "update",
            "packagerevisions",
            "--subresource=approval",
            "--as",
            "u-porch-author"
        ]),
        "no"
    );
    assert_eq!(
        ask(&[
            "auth",
            "can-i",
            "create",
            "repositories",
            "--as",
            "u-porch-repository-admin"
        ]),
        "yes"
    );
    assert_eq!(
        ask(&[
            "auth",
            "can-i",
            "create",
            "packagerevisions",
            "-n",
            "other",
            "--as",
            "u-porch-author"
        ]),
        "no"
    );
    // Non-resource URLs: discovery and health for everyone, nothing else.
    assert_eq!(
        ask(&["auth", "can-i", "get", "/apis", "--as", "u-none"]),
        "yes"
    );
    assert_eq!(
        ask(&["auth", "can-i", "get", "/healthz", "--as", "u-none"]),
        "yes"
    );
    assert_eq!(
        ask(&["auth", "can-i", "get", "/debug", "--as", "u-none"]),
        "no"
    );
    // The rules kubectl lists are the author's.
    let list = s.kubectl_ok(&["auth", "can-i", "--list", "--as", "u-porch-author"]);
    assert!(
        list.lines()
            .any(|l| l.starts_with("packagerevisions.porch.kpt.dev") && l.contains("create")),
        "{list}"
    );
}

#[test]
fn aggregated_and_namespaced_roles_take_effect_as_soon_as_they_are_stored() {
    let s = Server::start();
    // `view` aggregates porch-reader (by label): a user bound to `view` reads Porch's kinds.
    let view = json(&s.kubectl_ok(&["get", "clusterrole", "view", "-o", "json"]));
    assert!(
        view["rules"].to_string().contains("packagerevisions"),
        "{view}"
    );
    s.kubectl_ok(&[
        "create",
        "clusterrolebinding",
        "viewers",
        "--clusterrole=view",
        "--user=vic",
    ]);
    s.kubectl_ok(&["get", "packagerevisions", "-A", "--as", "vic"]);
    // A new labelled ClusterRole is aggregated into `view`.
    let extra = s.write_file(
        "extra.yaml",
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: cm-reader\n  labels:\n    rbac.authorization.k8s.io/aggregate-to-view: \"true\"\nrules:\n- apiGroups: [\"\"]\n  resources: [configmaps]\n  verbs: [list]\n",
    );
    s.kubectl_ok(&["apply", "-f", extra.to_str().expect("utf8")]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !s
        .kubectl(&["get", "configmaps", "--as", "vic"])
        .status
        .success()
    {
        assert!(
            std::time::Instant::now() < deadline,
            "aggregation did not reach view"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // A namespaced Role with resourceNames, created with kubectl, applies at once.
    s.kubectl_ok(&[
        "create",
        "role",
        "one-secret",
        "--verb=get",
        "--resource=secrets",
        "--resource-name=git-auth",
        "-n",
        "default",
    ]);
    s.kubectl_ok(&[
        "create",
        "rolebinding",
        "one-secret",
        "--role=one-secret",
        "--user=sam",
        "-n",
        "default",
    ]);
    s.kubectl_ok(&[
        "create",
        "secret",
        "generic",
        "git-auth",
        "--from-literal=password=x",
    ]);
    s.kubectl_ok(&["get", "secret", "git-auth", "--as", "sam"]);
    let refused = s.kubectl(&["get", "secrets", "--as", "sam"]);
    assert!(
        stderr(&refused).contains("secrets is forbidden: User \"sam\" cannot list resource \"secrets\" in API group \"\" in the namespace \"default\""),
        "{}",
        stderr(&refused)
    );
    // A SubjectAccessReview (JSON, as kubectl create -f sends it) names the grant.
    let sar = s.write_file(
        "sar.json",
        r#"{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"user":"sam","resourceAttributes":{"namespace":"default","verb":"get","resource":"secrets","name":"git-auth"}}}"#,
    );
    let review = json(&s.kubectl_ok(&["create", "-f", sar.to_str().expect("utf8"), "-o", "json"]));
    assert_eq!(review["status"]["allowed"], true, "{review}");
    assert_eq!(
        review["status"]["reason"],
        "RBAC: allowed by RoleBinding \"one-secret/default\" of Role \"one-secret\" to User \"sam\""
    );
    // Validation as kube-apiserver's.
    let bad = s.write_file(
        "bad.yaml",
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: bad\n  namespace: default\nrules:\n- apiGroups: [\"\"]\n  resources: [secrets]\n",
    );
    let out = s.kubectl(&["create", "-f", bad.to_str().expect("utf8")]);
    assert!(
        stderr(&out)
            .contains("rules[0].verbs: Required value: verbs must contain at least one value"),
        "{}",
        stderr(&out)
    );
    // Deleting the binding takes the access away.
    s.kubectl_ok(&["delete", "rolebinding", "one-secret", "-n", "default"]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while s
        .kubectl(&["get", "secret", "git-auth", "--as", "sam"])
        .status
        .success()
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the binding's removal was not seen"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}
