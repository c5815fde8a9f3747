//! kube-apiserver's RBAC escalation prevention through the real server and kubectl 1.32
//! (`--as`): a user may write a Role only with rules it holds (or the `escalate` verb), bind a
//! role only if it holds its rules (or the `bind` verb), and use an aggregationRule only with
//! every right; the 403s read as kube-apiserver's.

mod common;

use common::Server;

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn refused(s: &Server, args: &[&str], wanted: &str) {
    let out = s.kubectl(args);
    let err = stderr(&out);
    assert!(
        !out.status.success() && err.contains(wanted),
        "{args:?}: expected {wanted:?}, got {err}"
    );
}

#[test]
fn rbac_writers_grant_only_what_they_hold() {
    let s = Server::start();
    // bob may write Roles and RoleBindings in default, and read package revisions there.
    s.kubectl_ok(&[
        "create",
        "role",
        "rbac-writer",
        "--verb=get,list,create,update,patch",
        "--resource=roles.rbac.authorization.k8s.io,rolebindings.rbac.authorization.k8s.io",
        "-n",
        "default",
    ]);
    s.kubectl_ok(&[
        "create",
        "rolebinding",
        "bob-writes-rbac",
        "--role=rbac-writer",
        "--user=bob",
        "-n",
        "default",
    ]);
    s.kubectl_ok(&[
        "create",
        "rolebinding",
        "bob-reads",
        "--clusterrole=porch-reader",
        "--user=bob",
        "-n",
        "default",
    ]);
    let as_bob = |args: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        v.extend(["--as".into(), "bob".into(), "-n".into(), "default".into()]);
        v
    };
    let run = |args: &[&str]| {
        let v = as_bob(args);
        let refs: Vec<&str> = v.iter().map(String::as_str).collect();
        s.kubectl(&refs)
    };

    // A role within bob's rights: created.
    let ok = run(&[
        "create",
        "role",
        "readers",
        "--verb=get,list",
        "--resource=packagerevisions.porch.kpt.dev",
    ]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    // Beyond them: kube-apiserver's 403, listing what bob lacks.
    let v = as_bob(&[
        "create",
        "role",
        "deleters",
        "--verb=get,delete,update",
        "--resource=packagerevisions.porch.kpt.dev",
    ]);
    let args: Vec<&str> = v.iter().map(String::as_str).collect();
    refused(
        &s,
        &args,
        "roles.rbac.authorization.k8s.io \"deleters\" is forbidden: user \"bob\" (groups=[\"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"porch.kpt.dev\"], Resources:[\"packagerevisions\"], Verbs:[\"delete\" \"update\"]}",
    );
    // Nor may bob widen an existing role by an update.
    let v = as_bob(&[
        "patch",
        "role",
        "readers",
        "--type=json",
        "-p",
        r#"[{"op":"add","path":"/rules/0/verbs/-","value":"delete"}]"#,
    ]);
    let args: Vec<&str> = v.iter().map(String::as_str).collect();
    refused(
        &s,
        &args,
        "is attempting to grant RBAC permissions not currently held",
    );

    // Bindings: to a role bob holds, yes; to the author role, no.
    let ok = run(&[
        "create",
        "rolebinding",
        "carol-reads",
        "--role=readers",
        "--user=carol",
    ]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    let v = as_bob(&[
        "create",
        "rolebinding",
        "carol-authors",
        "--clusterrole=porch-author",
        "--user=carol",
    ]);
    let args: Vec<&str> = v.iter().map(String::as_str).collect();
    refused(
        &s,
        &args,
        "rolebindings.rbac.authorization.k8s.io \"carol-authors\" is forbidden: user \"bob\" (groups=[\"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:",
    );
    let v = as_bob(&[
        "create",
        "rolebinding",
        "to-nothing",
        "--clusterrole=no-such-role",
        "--user=carol",
    ]);
    let args: Vec<&str> = v.iter().map(String::as_str).collect();
    refused(
        &s,
        &args,
        "rolebindings.rbac.authorization.k8s.io \"to-nothing\" is forbidden: clusterroles.rbac.authorization.k8s.io \"no-such-role\" not found",
    );

    // The `bind` verb on that role, and `escalate` on roles, lift the checks.
    s.kubectl_ok(&[
        "create",
        "role",
        "binder",
        "--verb=bind",
        "--resource=clusterroles.rbac.authorization.k8s.io",
        "--resource-name=porch-author",
        "-n",
        "default",
    ]);
    s.kubectl_ok(&[
        "create",
        "role",
        "escalator",
        "--verb=escalate",
        "--resource=roles.rbac.authorization.k8s.io",
        "-n",
        "default",
    ]);
    for (b, r) in [("bob-binds", "binder"), ("bob-escalates", "escalator")] {
        s.kubectl_ok(&[
            "create",
            "rolebinding",
            b,
            &format!("--role={r}"),
            "--user=bob",
            "-n",
            "default",
        ]);
    }
    let ok = run(&[
        "create",
        "rolebinding",
        "carol-authors",
        "--clusterrole=porch-author",
        "--user=carol",
    ]);
    assert!(ok.status.success(), "bind: {}", stderr(&ok));
    let ok = run(&[
        "create",
        "role",
        "deleters",
        "--verb=get,delete,update",
        "--resource=packagerevisions.porch.kpt.dev",
    ]);
    assert!(ok.status.success(), "escalate: {}", stderr(&ok));
}

#[test]
fn an_aggregation_rule_needs_every_right() {
    let s = Server::start();
    s.kubectl_ok(&[
        "create",
        "clusterrole",
        "clusterrole-writer",
        "--verb=create,get",
        "--resource=clusterroles.rbac.authorization.k8s.io",
    ]);
    s.kubectl_ok(&[
        "create",
        "clusterrolebinding",
        "dan-writes",
        "--clusterrole=clusterrole-writer",
        "--user=dan",
    ]);
    let agg = s.write_file(
        "agg.yaml",
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: gather\naggregationRule:\n  clusterRoleSelectors:\n  - matchLabels:\n      gather: \"true\"\nrules: []\n",
    );
    refused(
        &s,
        &["create", "-f", agg.to_str().expect("utf8"), "--as", "dan"],
        "clusterroles.rbac.authorization.k8s.io \"gather\" is forbidden: must have cluster-admin privileges to use the aggregationRule",
    );
    // The administrator (system:masters) may.
    s.kubectl_ok(&["create", "-f", agg.to_str().expect("utf8")]);
}
