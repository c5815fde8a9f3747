//! The API edge through the real binary and kubectl 1.32: `--dry-run=server` changes nothing
//! for any verb or kind (kubectl sends a delete's dryRun in the DeleteOptions body), bodies in
//! unsupported media types get 415, the identity of a PackageRevision is immutable, and a
//! Repository's git fields are checked before they reach git, with the cause in every 422.

mod common;

use common::Server;
use common::porch::{remote_refs, server_with_drafts};
use serde_json::{Value, json};

fn stdout_json(out: &str) -> Value {
    serde_json::from_str(out).expect("kubectl printed JSON")
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// kubectl that must fail; returns its stderr.
fn kubectl_fails(s: &Server, args: &[&str]) -> String {
    let out = s.kubectl(args);
    assert!(
        !out.status.success(),
        "kubectl {args:?} succeeded: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    stderr(&out)
}

fn names(s: &Server, args: &[&str]) -> Vec<String> {
    let mut all = vec!["get"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-o", "name"]);
    let mut v: Vec<String> = s.kubectl_ok(&all).lines().map(str::to_owned).collect();
    v.sort();
    v
}

const DRAFT_A: &str = "deployments.a.ws";
const DRAFT_B: &str = "deployments.b.ws";

#[test]
fn server_dry_runs_change_nothing() {
    let (s, root, _git) = server_with_drafts();
    s.kubectl_ok(&["create", "namespace", "team"]);
    s.kubectl_ok(&["create", "secret", "generic", "top", "--from-literal=k=v"]);
    s.kubectl_ok(&[
        "-n",
        "team",
        "create",
        "secret",
        "generic",
        "inner",
        "--from-literal=k=v",
    ]);
    let prs = names(&s, &["packagerevisions"]);
    assert_eq!(prs.len(), 2, "{prs:?}");
    let repos = names(&s, &["repositories"]);
    let secrets = names(&s, &["secrets", "-A"]);
    let namespaces = names(&s, &["namespaces"]);
    let log_rv = |s: &Server| {
        stdout_json(&s.kubectl_ok(&["get", "packagerevisions", "-o", "json"]))["metadata"]
            ["resourceVersion"]
            .clone()
    };
    let rv_before = log_rv(&s);

    // kubectl sends these as DELETE with {"kind":"DeleteOptions","dryRun":["All"]} in the body.
    for args in [
        &["delete", "packagerevisions", "--all", "--dry-run=server"][..],
        &["delete", "repositories", "--all", "--dry-run=server"],
        &["delete", "secrets", "--all", "--dry-run=server"],
        &[
            "-n",
            "team",
            "delete",
            "secrets",
            "--all",
            "--dry-run=server",
        ],
        &["delete", "namespace", "team", "--dry-run=server"],
    ] {
        let out = s.kubectl_ok(args);
        assert!(out.contains("(server dry run)"), "{args:?}: {out}");
    }
    // Create, patch and replace dry runs (dryRun in the query).
    s.kubectl_ok(&["create", "namespace", "ghost", "--dry-run=server"]);
    let c = s.write_file(
        "c.yaml",
        "apiVersion: porch.kpt.dev/v1alpha1\nkind: PackageRevision\nmetadata:\n  namespace: default\nspec:\n  repository: deployments\n  packageName: c\n  workspaceName: ws\n",
    );
    let out = s.kubectl_ok(&[
        "create",
        "-f",
        c.to_str().expect("utf8"),
        "--dry-run=server",
    ]);
    assert!(
        out.contains("deployments.c.ws created (server dry run)"),
        "{out}"
    );
    // A dry-run create refuses what the real one refuses (here: the workspace is taken).
    let a_again = s.dir.path().join("a.yaml");
    let err = kubectl_fails(
        &s,
        &[
            "create",
            "-f",
            a_again.to_str().expect("utf8"),
            "--dry-run=server",
        ],
    );
    assert!(err.contains("already exists"), "{err}");
    s.kubectl_ok(&[
        "label",
        "packagerevision",
        DRAFT_A,
        "x=y",
        "--dry-run=server",
    ]);
    s.kubectl_ok(&[
        "patch",
        "packagerevision",
        DRAFT_A,
        "--type=merge",
        "-p",
        r#"{"spec":{"lifecycle":"Proposed"}}"#,
        "--dry-run=server",
    ]);

    assert_eq!(names(&s, &["packagerevisions"]), prs);
    assert_eq!(names(&s, &["repositories"]), repos);
    assert_eq!(names(&s, &["secrets", "-A"]), secrets);
    assert_eq!(names(&s, &["namespaces"]), namespaces);
    let a = stdout_json(&s.kubectl_ok(&["get", "packagerevision", DRAFT_A, "-o", "json"]));
    assert_eq!(a["spec"]["lifecycle"], "Draft");
    assert!(a["metadata"]["labels"].get("x").is_none());
    assert_eq!(log_rv(&s), rv_before, "no package revision event was sent");

    // A dry-run update refuses the transitions the real one refuses.
    let err = kubectl_fails(
        &s,
        &[
            "patch",
            "packagerevision",
            DRAFT_A,
            "--type=merge",
            "-p",
            r#"{"spec":{"lifecycle":"Published"}}"#,
            "--dry-run=server",
        ],
    );
    assert!(err.contains("spec.lifecycle"), "{err}");

    // A dry-run approval validates like the real one and publishes nothing.
    s.kubectl_ok(&[
        "patch",
        "packagerevision",
        DRAFT_B,
        "--type=merge",
        "-p",
        r#"{"spec":{"lifecycle":"Proposed"}}"#,
    ]);
    let err = kubectl_fails(
        &s,
        &[
            "patch",
            "packagerevision",
            DRAFT_A,
            "--subresource=approval",
            "--type=merge",
            "-p",
            r#"{"spec":{"lifecycle":"Published"}}"#,
            "--dry-run=server",
        ],
    );
    assert!(
        err.contains(
            "is invalid: spec.lifecycle: cannot approve package with Draft lifecycle value"
        ),
        "{err}"
    );
    let answered = stdout_json(&s.kubectl_ok(&[
        "patch",
        "packagerevision",
        DRAFT_B,
        "--subresource=approval",
        "--type=merge",
        "-p",
        r#"{"spec":{"lifecycle":"Published"}}"#,
        "--dry-run=server",
        "-o",
        "json",
    ]));
    assert_eq!(answered["spec"]["lifecycle"], "Published");
    let b = stdout_json(&s.kubectl_ok(&["get", "packagerevision", DRAFT_B, "-o", "json"]));
    assert_eq!(b["spec"]["lifecycle"], "Proposed");
    let refs = remote_refs(&root.join("deployments.git"));
    assert!(
        !refs.iter().any(|r| r.starts_with("refs/tags/")),
        "{refs:?}"
    );

    // A dry-run delete refuses what the real one refuses.
    s.kubectl_ok(&[
        "patch",
        "packagerevision",
        DRAFT_B,
        "--subresource=approval",
        "--type=merge",
        "-p",
        r#"{"spec":{"lifecycle":"Published"}}"#,
    ]);
    let err = kubectl_fails(
        &s,
        &["delete", "packagerevision", DRAFT_B, "--dry-run=server"],
    );
    assert!(err.contains("must be proposed for deletion"), "{err}");
    let err = kubectl_fails(&s, &["delete", "namespace", "default", "--dry-run=server"]);
    assert!(err.contains("may not be deleted"), "{err}");
    assert_eq!(names(&s, &["secrets", "-n", "team"]), ["secret/inner"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dry_run_from_query_or_body_and_unsupported_media_types() {
    let (s, _root, _git) = tokio::task::spawn_blocking(server_with_drafts)
        .await
        .expect("setup");
    let client = s.client().await;
    let path =
        format!("/apis/porch.kpt.dev/v1alpha1/namespaces/default/packagerevisions/{DRAFT_A}");
    let send = |method: &str, uri: String, ct: &str, body: &str| {
        http::Request::builder()
            .method(method)
            .uri(uri)
            .header("Content-Type", ct)
            .body(body.as_bytes().to_vec())
            .expect("request")
    };
    let json_ct = "application/json";
    // The query, and a raw DeleteOptions body.
    client
        .request_text(send("DELETE", format!("{path}?dryRun=All"), json_ct, ""))
        .await
        .expect("dry-run delete by query");
    client
        .request_text(send(
            "DELETE",
            path.clone(),
            json_ct,
            r#"{"kind":"DeleteOptions","apiVersion":"v1","dryRun":["All"]}"#,
        ))
        .await
        .expect("dry-run delete by body");
    client
        .request_text(send("GET", path.clone(), json_ct, ""))
        .await
        .expect("still there");

    let fails = |r: Result<String, kube::Error>| match r {
        Err(kube::Error::Api(st)) => st,
        other => panic!("expected a Status, got {other:?}"),
    };
    let st = fails(
        client
            .request_text(send(
                "DELETE",
                format!("{path}?dryRun=Everything"),
                json_ct,
                "",
            ))
            .await,
    );
    assert_eq!((st.code, st.reason.as_str()), (422, "Invalid"));
    assert!(
        st.message.contains("supported values: \"All\""),
        "{}",
        st.message
    );
    client
        .request_text(send("GET", path.clone(), json_ct, ""))
        .await
        .expect("an invalid dryRun deletes nothing");

    let st = fails(
        client
            .request_text(send(
                "PATCH",
                path.clone(),
                "text/plain",
                r#"{"spec":{"lifecycle":"Proposed"}}"#,
            ))
            .await,
    );
    assert_eq!((st.code, st.reason.as_str()), (415, "UnsupportedMediaType"));
    let repos = "/apis/config.porch.kpt.dev/v1alpha1/namespaces/default/repositories";
    let repo = json!({"apiVersion": "config.porch.kpt.dev/v1alpha1", "kind": "Repository",
        "metadata": {"name": "plain"}, "spec": {"type": "git", "git": {"repo": "https://h/x.git"}}});
    let st = fails(
        client
            .request_text(send("POST", repos.into(), "text/plain", &repo.to_string()))
            .await,
    );
    assert_eq!(st.code, 415);
    assert_eq!(
        st.message,
        "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml"
    );
}

#[test]
fn immutable_identity_and_repository_checks_name_their_field() {
    let (s, _root, _git) = server_with_drafts();
    for (patch_type, patch) in [
        ("merge", r#"{"spec":{"packageName":"other"}}"#),
        ("strategic", r#"{"spec":{"repository":"elsewhere"}}"#),
        (
            "json",
            r#"[{"op":"replace","path":"/spec/workspaceName","value":"ws2"}]"#,
        ),
    ] {
        let err = kubectl_fails(
            &s,
            &[
                "patch",
                "packagerevision",
                DRAFT_A,
                &format!("--type={patch_type}"),
                "-p",
                patch,
            ],
        );
        assert!(err.contains("field is immutable"), "{patch_type}: {err}");
        assert!(
            err.contains("is invalid: spec."),
            "kubectl prints the cause: {err}"
        );
    }
    let err = kubectl_fails(
        &s,
        &[
            "patch",
            "packagerevision",
            DRAFT_A,
            "--type=merge",
            "-p",
            r#"{"spec":{"packageName":"other"}}"#,
        ],
    );
    assert!(
        err.contains("spec.packageName: Invalid value: \"other\": field is immutable"),
        "{err}"
    );
    // Server-side apply and replace go through the same rule.
    let mut a = stdout_json(&s.kubectl_ok(&["get", "packagerevision", DRAFT_A, "-o", "json"]));
    a["spec"]["repository"] = json!("elsewhere");
    let file = s.write_file("a.json", &a.to_string());
    let err = kubectl_fails(&s, &["replace", "-f", file.to_str().expect("utf8")]);
    assert!(
        err.contains("spec.repository: Invalid value: \"elsewhere\": field is immutable"),
        "{err}"
    );
    let applied = s.write_file(
        "apply.yaml",
        &format!("apiVersion: porch.kpt.dev/v1alpha1\nkind: PackageRevision\nmetadata:\n  name: {DRAFT_A}\n  namespace: default\nspec:\n  workspaceName: other\n"),
    );
    // Without force the field manager answers first: the creator owns the field (409).
    let err = kubectl_fails(
        &s,
        &[
            "apply",
            "--server-side",
            "-f",
            applied.to_str().expect("utf8"),
        ],
    );
    assert!(err.contains("conflict with \"kubectl-create\""), "{err}");
    let err = kubectl_fails(
        &s,
        &[
            "apply",
            "--server-side",
            "--force-conflicts",
            "-f",
            applied.to_str().expect("utf8"),
        ],
    );
    assert!(
        err.contains("spec.workspaceName: Invalid value: \"other\": field is immutable"),
        "{err}"
    );
    let a = stdout_json(&s.kubectl_ok(&["get", "packagerevision", DRAFT_A, "-o", "json"]));
    assert_eq!(
        (
            &a["spec"]["packageName"],
            &a["spec"]["repository"],
            &a["spec"]["workspaceName"]
        ),
        (&json!("a"), &json!("deployments"), &json!("ws"))
    );

    // Repository fields that reach git.
    for (name, git, field) in [
        ("bad-url", "repo: not a url", "spec.git.repo"),
        (
            "dash-url",
            "repo: --upload-pack=touch /tmp/x",
            "spec.git.repo",
        ),
        ("ext-url", "repo: ext::sh -c true", "spec.git.repo"),
        (
            "up-dir",
            "repo: https://h/x.git\n    directory: ../..",
            "spec.git.directory",
        ),
        (
            "dash-branch",
            "repo: https://h/x.git\n    branch: --orphan",
            "spec.git.branch",
        ),
    ] {
        let file = s.write_file(
            &format!("{name}.yaml"),
            &format!("apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: {name}\n  namespace: default\nspec:\n  type: git\n  git:\n    {git}\n"),
        );
        let err = kubectl_fails(&s, &["create", "-f", file.to_str().expect("utf8")]);
        assert!(
            err.contains(&format!("is invalid: {field}: Invalid value:")),
            "{name}: {err}"
        );
    }
    // And on update.
    let err = kubectl_fails(
        &s,
        &[
            "patch",
            "repository",
            "deployments",
            "--type=merge",
            "-p",
            r#"{"spec":{"git":{"directory":"a/../../b"}}}"#,
        ],
    );
    assert!(
        err.contains("spec.git.directory: Invalid value: \"a/../../b\""),
        "{err}"
    );
    assert_eq!(
        names(&s, &["repositories"]),
        ["repository.config.porch.kpt.dev/deployments"]
    );
}
