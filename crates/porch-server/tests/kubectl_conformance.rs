//! kubectl 1.32 against the real server, verb by verb, each case asserting what kube-apiserver
//! answers: output formats, describe, diff, edit, patch types, label/annotate, delete --wait,
//! chunked lists, label and field selectors, wait. (Dry runs: api_edge.rs; watch and explain:
//! kubectl.rs; server-side apply and events have their own files.)

mod common;

use std::process::Output;

use common::Server;
use common::porch::server_with_drafts;
use serde_json::Value;

const DRAFT_A: &str = "deployments.a.ws";

fn json(out: &str) -> Value {
    serde_json::from_str(out).expect("kubectl printed JSON")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// kubectl that must fail; returns its stderr.
fn fails(s: &Server, args: &[&str]) -> String {
    let out = s.kubectl(args);
    assert!(
        !out.status.success(),
        "kubectl {args:?} succeeded: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    stderr(&out)
}

fn config_map(s: &Server, name: &str, labels: &str) {
    let file = s.write_file(
        &format!("{name}.yaml"),
        &format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: default\n  labels: {{{labels}}}\ndata:\n  key: {name}-value\n"
        ),
    );
    s.kubectl_ok(&["apply", "-f", file.to_str().expect("utf8")]);
}

#[test]
fn get_prints_every_output_format() {
    let (s, _root, _git) = server_with_drafts();
    config_map(&s, "one", "tier: web");

    // -o json of a list is a v1 List whose items carry their own apiVersion and kind.
    let list = json(&s.kubectl_ok(&["get", "packagerevisions", "-o", "json"]));
    assert_eq!(list["kind"], "List");
    assert_eq!(list["apiVersion"], "v1");
    let items = list["items"].as_array().expect("items");
    assert_eq!(items.len(), 2);
    assert!(
        items
            .iter()
            .all(|i| i["kind"] == "PackageRevision" && i["apiVersion"] == "porch.kpt.dev/v1alpha1")
    );
    // -o yaml of one object.
    let yaml = s.kubectl_ok(&["get", "packagerevision", DRAFT_A, "-o", "yaml"]);
    assert!(yaml.starts_with("apiVersion: porch.kpt.dev/v1alpha1\nkind: PackageRevision\n"));
    assert!(yaml.contains("  lifecycle: Draft\n"), "{yaml}");
    // -o name: resource.group/name, as kubectl prints it.
    assert_eq!(
        s.kubectl_ok(&["get", "packagerevisions", "-o", "name"]),
        "packagerevision.porch.kpt.dev/deployments.a.ws\npackagerevision.porch.kpt.dev/deployments.b.ws\n"
    );
    assert_eq!(
        s.kubectl_ok(&["get", "repositories", "-o", "name"]),
        "repository.config.porch.kpt.dev/deployments\n"
    );
    assert_eq!(
        s.kubectl_ok(&["get", "cm", "one", "-o", "name"]),
        "configmap/one\n"
    );
    // The server's table: Porch's columns for package revisions.
    let table = s.kubectl_ok(&["get", "packagerevisions"]);
    let header = table.lines().next().expect("header");
    for col in [
        "NAME",
        "PACKAGE",
        "WORKSPACENAME",
        "REVISION",
        "LATEST",
        "LIFECYCLE",
        "REPOSITORY",
    ] {
        assert!(header.contains(col), "{header}");
    }
    assert!(table.contains("deployments.a.ws"), "{table}");
    let no_headers = s.kubectl_ok(&["get", "packagerevisions", "--no-headers"]);
    assert_eq!(no_headers.lines().count(), 2, "{no_headers}");
    assert!(!no_headers.contains("LIFECYCLE"));
    // Labels as a column, and -L.
    let shown = s.kubectl_ok(&["get", "cm", "one", "--show-labels"]);
    assert!(
        shown.lines().next().is_some_and(|h| h.ends_with("LABELS")) && shown.contains("tier=web"),
        "{shown}"
    );
    let label_col = s.kubectl_ok(&["get", "cm", "one", "-L", "tier"]);
    assert!(
        label_col.lines().next().is_some_and(|h| h.contains("TIER"))
            && label_col.lines().nth(1).is_some_and(|r| r.ends_with("web")),
        "{label_col}"
    );
    // Client-side printers over the server's JSON.
    assert_eq!(
        s.kubectl_ok(&[
            "get",
            "packagerevisions",
            "-o",
            "jsonpath={range .items[*]}{.spec.packageName}:{.spec.lifecycle} {end}"
        ]),
        "a:Draft b:Draft "
    );
    let cols = s.kubectl_ok(&[
        "get",
        "packagerevisions",
        "-o",
        "custom-columns=PKG:.spec.packageName,REPO:.spec.repository",
    ]);
    assert_eq!(
        cols.lines().collect::<Vec<_>>(),
        ["PKG   REPO", "a     deployments", "b     deployments"]
    );
    assert_eq!(
        s.kubectl_ok(&[
            "get",
            "repository",
            "deployments",
            "-o",
            "go-template={{.spec.git.branch}}"
        ]),
        "main"
    );
    // --sort-by over a JSONPath, descending names by package.
    let sorted = s.kubectl_ok(&[
        "get",
        "packagerevisions",
        "--sort-by=.spec.packageName",
        "-o",
        "name",
    ]);
    assert_eq!(sorted.lines().count(), 2);
    // A name that does not exist: NotFound in kubectl's words, exit 1.
    let err = fails(&s, &["get", "packagerevision", "nope"]);
    assert!(
        err.contains(r#"packagerevisions.porch.kpt.dev "nope" not found"#),
        "{err}"
    );
    let err = fails(&s, &["get", "cm", "nope"]);
    assert!(err.contains(r#"configmaps "nope" not found"#), "{err}");
}

#[test]
fn describe_shows_spec_and_status() {
    let (s, _root, _git) = server_with_drafts();
    let out = s.kubectl_ok(&["describe", "repository", "deployments"]);
    for want in [
        "Name:         deployments",
        "Namespace:    default",
        "API Version:  config.porch.kpt.dev/v1alpha1",
        "Kind:         Repository",
        "Spec:",
        "Branch:",
        "Status:",
        "Conditions:",
    ] {
        assert!(out.contains(want), "missing {want:?} in\n{out}");
    }
    let out = s.kubectl_ok(&["describe", "packagerevision", DRAFT_A]);
    for want in [
        "Name:         deployments.a.ws",
        "Kind:         PackageRevision",
        "Lifecycle:",
        "Package Name:",
        "Tasks:",
    ] {
        assert!(out.contains(want), "missing {want:?} in\n{out}");
    }
    // Secrets are described without their values, as kubectl does for core Secrets.
    s.kubectl_ok(&[
        "create",
        "secret",
        "generic",
        "auth",
        "--from-literal=password=hunter22",
    ]);
    let out = s.kubectl_ok(&["describe", "secret", "auth"]);
    assert!(out.contains("password:  8 bytes"), "{out}");
    assert!(!out.contains("hunter22"), "{out}");
    // describe of a built-in kind also lists its events (kubectl asks with a field selector).
    config_map(&s, "described", "a: b");
    let out = s.kubectl_ok(&["describe", "configmap", "described"]);
    assert!(
        out.contains("key:") && out.contains("described-value") && out.contains("Events:"),
        "{out}"
    );
}

#[test]
fn diff_edit_and_every_patch_type() {
    let s = Server::start();
    config_map(&s, "cfg", "tier: web");
    let repo = s.write_file(
        "repo.yaml",
        &common::repo_yaml("r", "https://127.0.0.1:1/r.git"),
    );
    let repo_path = repo.to_str().expect("utf8");
    s.kubectl_ok(&["apply", "-f", repo_path]);

    // diff: nothing to show exits 0; a change exits 1 and shows the line.
    let same = s.kubectl(&["diff", "-f", repo_path]);
    assert_eq!(same.status.code(), Some(0), "{}", stderr(&same));
    let changed = s.write_file(
        "repo2.yaml",
        &common::repo_yaml("r", "https://127.0.0.1:1/r.git")
            .replace("description: test repo", "description: changed"),
    );
    let diff = s.kubectl(&["diff", "-f", changed.to_str().expect("utf8")]);
    assert_eq!(diff.status.code(), Some(1), "{}", stderr(&diff));
    let text = String::from_utf8_lossy(&diff.stdout);
    assert!(
        text.contains("-  description: test repo") && text.contains("+  description: changed"),
        "{text}"
    );
    // ... and the diff's server-side dry run changed nothing.
    assert_eq!(
        s.kubectl_ok(&["get", "repo", "r", "-o", "jsonpath={.spec.description}"]),
        "test repo"
    );

    // edit through $KUBE_EDITOR; an unchanged buffer is "no changes made".
    let editor = s.write_file(
        "editor.sh",
        "#!/bin/sh\nsed -i 's/description: test repo/description: edited/' \"$1\"\n",
    );
    std::process::Command::new("chmod")
        .args(["+x", editor.to_str().expect("utf8")])
        .status()
        .expect("chmod");
    let out = edit(
        &s,
        editor.to_str().expect("utf8"),
        &["edit", "repository", "r"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "repository.config.porch.kpt.dev/r edited"
    );
    assert_eq!(
        s.kubectl_ok(&["get", "repo", "r", "-o", "jsonpath={.spec.description}"]),
        "edited"
    );
    let out = edit(&s, "true", &["edit", "repository", "r"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("Edit cancelled, no changes made."),
        "{}",
        stderr(&out)
    );

    // merge patch
    s.kubectl_ok(&[
        "patch",
        "repo",
        "r",
        "--type=merge",
        "-p",
        r#"{"spec":{"description":"merged"}}"#,
    ]);
    // JSON patch, including a failing test operation (kube answers 422).
    s.kubectl_ok(&[
        "patch",
        "repo",
        "r",
        "--type=json",
        "-p",
        r#"[{"op":"replace","path":"/spec/description","value":"json-patched"}]"#,
    ]);
    assert_eq!(
        s.kubectl_ok(&["get", "repo", "r", "-o", "jsonpath={.spec.description}"]),
        "json-patched"
    );
    let err = fails(
        &s,
        &[
            "patch",
            "repo",
            "r",
            "--type=json",
            "-p",
            r#"[{"op":"test","path":"/spec/description","value":"other"}]"#,
        ],
    );
    assert!(err.contains("The request is invalid"), "{err}");
    // Strategic merge patch: kube-apiserver serves it for built-in kinds...
    s.kubectl_ok(&["patch", "cm", "cfg", "-p", r#"{"data":{"extra":"1"}}"#]);
    assert_eq!(
        s.kubectl_ok(&["get", "cm", "cfg", "-o", "jsonpath={.data.extra}"]),
        "1"
    );
    // ... and answers 415 for custom resources (Repository is a CRD in Porch).
    let err = fails(
        &s,
        &[
            "patch",
            "repo",
            "r",
            "-p",
            r#"{"spec":{"description":"s"}}"#,
        ],
    );
    assert!(
        err.contains("application/strategic-merge-patch+json is not supported"),
        "{err}"
    );
}

fn edit(s: &Server, editor: &str, args: &[&str]) -> Output {
    std::process::Command::new(common::KUBECTL)
        .args(args)
        .env("KUBECONFIG", s.kubeconfig())
        .env("HOME", s.home.path())
        .env("KUBE_EDITOR", editor)
        .output()
        .expect("kubectl edit")
}

#[test]
fn label_and_annotate_follow_kubectl_rules() {
    let (s, _root, _git) = server_with_drafts();
    for (kind, name) in [
        ("packagerevision", DRAFT_A),
        ("repository", "deployments"),
        ("namespace", "default"),
    ] {
        let out = s.kubectl_ok(&["label", kind, name, "team=a"]);
        assert!(out.trim().ends_with(" labeled"), "{out}");
        // A label that is set is not overwritten without --overwrite.
        let err = fails(&s, &["label", kind, name, "team=b"]);
        assert!(err.contains("already has a value (a)"), "{err}");
        s.kubectl_ok(&["label", kind, name, "team=b", "--overwrite"]);
        assert_eq!(
            s.kubectl_ok(&["get", kind, name, "-o", "jsonpath={.metadata.labels.team}"]),
            "b"
        );
        s.kubectl_ok(&["label", kind, name, "team-"]);
        assert_eq!(
            s.kubectl_ok(&["get", kind, name, "-o", "jsonpath={.metadata.labels.team}"]),
            ""
        );
        let out = s.kubectl_ok(&["annotate", kind, name, "note=hello world"]);
        assert!(out.trim().ends_with(" annotated"), "{out}");
        assert_eq!(
            s.kubectl_ok(&[
                "get",
                kind,
                name,
                "-o",
                "jsonpath={.metadata.annotations.note}"
            ]),
            "hello world"
        );
    }
    // --all labels every object of the kind.
    s.kubectl_ok(&["label", "packagerevisions", "--all", "wave=1"]);
    assert_eq!(
        s.kubectl_ok(&["get", "packagerevisions", "-l", "wave=1", "-o", "name"])
            .lines()
            .count(),
        2
    );
    // kubectl checks label syntax itself; the server checks what other clients send (422).
    let err = fails(
        &s,
        &[
            "patch",
            "repository",
            "deployments",
            "--type=merge",
            "-p",
            r#"{"metadata":{"labels":{"bad":"-x-"}}}"#,
        ],
    );
    assert!(
        err.contains("Invalid value") && err.contains("metadata.labels"),
        "{err}"
    );
}

#[test]
fn selectors_and_chunked_lists() {
    let (s, _root, _git) = server_with_drafts();
    for (i, tier) in ["web", "web", "db", "db", "db", "cache", "none"]
        .iter()
        .enumerate()
    {
        let labels = if *tier == "none" {
            String::new()
        } else {
            format!("tier: {tier}")
        };
        config_map(&s, &format!("cm{i}"), &labels);
    }
    let count = |args: &[&str]| {
        let mut all = vec!["get", "cm", "-o", "name"];
        all.extend_from_slice(args);
        s.kubectl_ok(&all).lines().count()
    };
    assert_eq!(count(&[]), 7);
    assert_eq!(count(&["-l", "tier=db"]), 3);
    assert_eq!(
        count(&["-l", "tier!=db"]),
        4,
        "!= selects objects without the label too"
    );
    assert_eq!(count(&["-l", "tier in (web,cache)"]), 3);
    assert_eq!(count(&["-l", "tier notin (web,cache)"]), 4);
    assert_eq!(count(&["-l", "tier"]), 6);
    assert_eq!(count(&["-l", "!tier"]), 1);
    assert_eq!(count(&["--field-selector", "metadata.name=cm3"]), 1);
    assert_eq!(count(&["--field-selector", "metadata.name!=cm3"]), 6);
    let err = fails(&s, &["get", "cm", "--field-selector", "data.key=x"]);
    // kube-apiserver words it per kind (built-in: "field label not supported", CRDs: "is not a
    // known field selector"); both are a 400 naming the field.
    assert!(
        err.contains("(BadRequest)") && err.contains("data.key"),
        "{err}"
    );
    // Package revisions select by Porch's fields.
    let prs = s.kubectl_ok(&[
        "get",
        "packagerevisions",
        "--field-selector",
        "spec.packageName=a",
        "-o",
        "name",
    ]);
    assert_eq!(prs, "packagerevision.porch.kpt.dev/deployments.a.ws\n");

    // --chunk-size: kubectl follows `continue` until the list is whole; the raw pages show
    // the server really pages.
    assert_eq!(count(&["--chunk-size=2"]), 7);
    let page = json(&s.kubectl_ok(&[
        "get",
        "--raw",
        "/api/v1/namespaces/default/configmaps?limit=3",
    ]));
    assert_eq!(page["items"].as_array().map(Vec::len), Some(3));
    let next = page["metadata"]["continue"]
        .as_str()
        .expect("continue token");
    assert_eq!(page["metadata"]["remainingItemCount"], 4);
    let page2 = json(&s.kubectl_ok(&[
        "get",
        "--raw",
        &format!("/api/v1/namespaces/default/configmaps?limit=3&continue={next}"),
    ]));
    assert_eq!(page2["items"].as_array().map(Vec::len), Some(3));
    let first: Vec<&Value> = page["items"].as_array().expect("items").iter().collect();
    assert!(
        page2["items"]
            .as_array()
            .expect("items")
            .iter()
            .all(|i| !first.contains(&i)),
        "pages overlap"
    );
    assert_eq!(
        s.kubectl_ok(&["get", "packagerevisions", "--chunk-size=1", "-o", "name"])
            .lines()
            .count(),
        2
    );
    assert_eq!(
        s.kubectl_ok(&["get", "namespaces", "--chunk-size=1", "-o", "name"])
            .lines()
            .count(),
        2,
        "default and porch-system"
    );
}

#[test]
fn wait_and_delete_wait() {
    let (s, _root, _git) = server_with_drafts();
    let out = s.kubectl_ok(&[
        "wait",
        "--for=condition=Ready",
        "repository/deployments",
        "--timeout=30s",
    ]);
    assert_eq!(
        out.trim(),
        "repository.config.porch.kpt.dev/deployments condition met"
    );
    let out = s.kubectl_ok(&[
        "wait",
        "--for=jsonpath={.spec.lifecycle}=Draft",
        &format!("packagerevision/{DRAFT_A}"),
        "--timeout=30s",
    ]);
    assert!(out.contains("condition met"), "{out}");
    // A condition that never comes times out with kubectl's message and exit 1.
    let err = fails(
        &s,
        &[
            "wait",
            "--for=jsonpath={.spec.lifecycle}=Published",
            &format!("packagerevision/{DRAFT_A}"),
            "--timeout=2s",
        ],
    );
    assert!(err.contains("timed out waiting for the condition"), "{err}");

    // delete --wait returns once the object is gone; --for=delete agrees.
    config_map(&s, "gone", "a: b");
    let out = s.kubectl_ok(&["delete", "cm", "gone", "--wait=true"]);
    assert_eq!(out.trim(), r#"configmap "gone" deleted"#);
    let err = fails(&s, &["get", "cm", "gone"]);
    assert!(err.contains("not found"), "{err}");
    let out = s.kubectl_ok(&[
        "delete",
        "packagerevision",
        DRAFT_A,
        "--wait=true",
        "--timeout=30s",
    ]);
    assert_eq!(
        out.trim(),
        r#"packagerevision.porch.kpt.dev "deployments.a.ws" deleted"#
    );
    let out = s.kubectl(&[
        "wait",
        "--for=delete",
        &format!("packagerevision/{DRAFT_A}"),
        "--timeout=5s",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    // Deleting what is not there: NotFound, and --ignore-not-found makes it quiet.
    let err = fails(&s, &["delete", "cm", "gone"]);
    assert!(err.contains(r#"configmaps "gone" not found"#), "{err}");
    let out = s.kubectl_ok(&["delete", "cm", "gone", "--ignore-not-found"]);
    assert_eq!(out.trim(), "");
}
