//! kubectl 1.32 drives a whole package lifecycle against the real server: apply a Repository,
//! create a draft from YAML, replace its resources, propose with `kubectl patch`, approve
//! through the approval subresource; the tag appears in the smart-HTTP remote. The same
//! lifecycle also runs against three replicas on PostgreSQL behind one address, each kubectl
//! command reaching the next replica (a representative of the `PORCH_TEST_STORE=postgres-3`
//! matrix in the default run).

mod common;

use common::Server;
use common::porch::{empty_remote, git_server, remote_refs};
use serde_json::Value;

fn json(out: &str) -> Value {
    serde_json::from_str(out).expect("kubectl printed JSON")
}

#[test]
fn kubectl_drives_a_lifecycle_to_a_published_tag() {
    lifecycle(Server::start());
}

#[test]
fn kubectl_drives_a_lifecycle_through_a_replica_set() {
    let s = Server::start_replicas(3, &[]);
    let proxy = &s.set.as_ref().expect("a replica set").proxy;
    let before = proxy.accepted();
    lifecycle_on(&s);
    // Round robin: with this many connections every replica served some of them.
    assert!(
        proxy.accepted() - before >= 9,
        "{} connections",
        proxy.accepted() - before
    );
}

fn lifecycle(s: Server) {
    lifecycle_on(&s);
}

fn lifecycle_on(s: &Server) {
    let root = s.dir.path().join("git");
    std::fs::create_dir_all(&root).expect("git root");
    empty_remote(&root, "deployments");
    let git = git_server(&root);

    let repo = s.write_file(
        "repo.yaml",
        &format!(
            "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: deployments\n  namespace: default\nspec:\n  type: git\n  git:\n    repo: {}\n    branch: main\n",
            git.url_for("deployments.git")
        ),
    );
    s.kubectl_ok(&["apply", "-f", repo.to_str().expect("utf8")]);
    s.kubectl_ok(&[
        "wait",
        "--for=condition=Ready",
        "repositories.config.porch.kpt.dev/deployments",
        "--timeout=60s",
    ]);

    let draft = s.write_file(
        "draft.yaml",
        "apiVersion: porch.kpt.dev/v1alpha1\nkind: PackageRevision\nmetadata:\n  namespace: default\nspec:\n  repository: deployments\n  packageName: edge/site-a\n  workspaceName: ws1\n  tasks:\n  - type: init\n    init:\n      description: site A\n",
    );
    let created = s.kubectl_ok(&["create", "-f", draft.to_str().expect("utf8"), "-o", "name"]);
    assert_eq!(
        created.trim(),
        "packagerevision.porch.kpt.dev/deployments.edge.site-a.ws1"
    );

    // The table kubectl prints comes from the server.
    let table = s.kubectl_ok(&["get", "packagerevisions"]);
    let header = table.lines().next().expect("header");
    assert_eq!(
        header.split_whitespace().collect::<Vec<_>>(),
        [
            "NAME",
            "PACKAGE",
            "WORKSPACENAME",
            "REVISION",
            "LATEST",
            "LIFECYCLE",
            "REPOSITORY"
        ]
    );
    assert!(table.contains("deployments.edge.site-a.ws1"), "{table}");

    // Replace the resources: add a ConfigMap.
    let mut prr = json(&s.kubectl_ok(&[
        "get",
        "packagerevisionresources",
        "deployments.edge.site-a.ws1",
        "-o",
        "json",
    ]));
    prr["spec"]["resources"]["cm.yaml"] =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: site\ndata:\n  region: eu\n".into();
    let prr_file = s.write_file("prr.json", &prr.to_string());
    s.kubectl_ok(&["replace", "-f", prr_file.to_str().expect("utf8")]);
    let files = json(&s.kubectl_ok(&[
        "get",
        "packagerevisionresources",
        "deployments.edge.site-a.ws1",
        "-o",
        "json",
    ]));
    assert!(
        files["spec"]["resources"]["cm.yaml"]
            .as_str()
            .is_some_and(|t| t.contains("region: eu"))
    );

    // Replacing with the old resourceVersion again is a conflict.
    let stale = s.kubectl(&["replace", "-f", prr_file.to_str().expect("utf8")]);
    assert!(!stale.status.success());
    assert!(
        String::from_utf8_lossy(&stale.stderr).contains("the object has been modified"),
        "{}",
        String::from_utf8_lossy(&stale.stderr)
    );

    // Propose with kubectl patch, approve through the approval subresource.
    s.kubectl_ok(&[
        "patch",
        "packagerevision",
        "deployments.edge.site-a.ws1",
        "--type=merge",
        "-p",
        r#"{"spec":{"lifecycle":"Proposed"}}"#,
    ]);
    s.kubectl_ok(&[
        "patch",
        "packagerevision",
        "deployments.edge.site-a.ws1",
        "--subresource=approval",
        "--type=merge",
        "-p",
        r#"{"spec":{"lifecycle":"Published"}}"#,
    ]);
    let published = json(&s.kubectl_ok(&[
        "get",
        "packagerevision",
        "deployments.edge.site-a.ws1",
        "-o",
        "json",
    ]));
    assert_eq!(published["spec"]["lifecycle"], "Published");
    assert_eq!(published["spec"]["revision"], 1);
    let refs = remote_refs(&root.join("deployments.git"));
    assert!(
        refs.contains(&"refs/tags/edge/site-a/v1".to_owned()),
        "{refs:?}"
    );
}
