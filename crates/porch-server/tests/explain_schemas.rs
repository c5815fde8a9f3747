//! The typed schemas on the API edge, seen through kubectl 1.32 against the real server:
//! `kubectl explain` several levels deep on every Porch kind, strict/warn/ignore field
//! validation of a PackageRevision, and client-side `kubectl apply` and `replace` of objects
//! the server itself served.

mod common;

use common::Server;
use common::porch::{empty_remote, git_server};
use porch_testkit::GitServer;

/// `kubectl explain <path>`; asserts it names `kind` and mentions every one of `words`.
fn explain(s: &Server, path: &str, kind: &str, words: &[&str]) -> String {
    let out = s.kubectl_ok(&["explain", path]);
    assert!(
        out.contains(&format!("KIND:       {kind}")),
        "{path}:\n{out}"
    );
    for w in words {
        assert!(out.contains(w), "{path}: no {w:?} in\n{out}");
    }
    out
}

#[test]
fn explain_goes_three_levels_deep_on_every_porch_kind() {
    let s = Server::start();
    let out = explain(
        &s,
        "packagerevisions.spec.tasks.clone.upstreamRef",
        "PackageRevision",
        &[
            "FIELD: upstreamRef <Object>",
            "DESCRIPTION:",
            "The upstream package to clone.",
            "git\t<Object>",
            "oci\t<Object>",
            "upstreamRef\t<Object>",
        ],
    );
    assert!(out.contains("type\t<string>"), "{out}");
    explain(
        &s,
        "packagerevisions.spec.tasks.clone.upstreamRef.git.secretRef",
        "PackageRevision",
        &["FIELD: secretRef <Object>", "name\t<string>"],
    );
    explain(
        &s,
        "packagerevisions.spec.tasks.upgrade",
        "PackageRevision",
        &[
            "localPackageRevisionRef",
            "newUpstreamRef",
            "oldUpstreamRef",
            "strategy",
        ],
    );
    explain(
        &s,
        "packagerevisions.status.upstreamLock.git",
        "PackageRevision",
        &["commit\t<string>", "ref\t<string>", "repo\t<string>"],
    );
    let top = explain(
        &s,
        "packagerevisions",
        "PackageRevision",
        &[
            "One revision of a package",
            "spec\t<Object>",
            "status\t<Object>",
        ],
    );
    assert!(top.contains("metadata\t<ObjectMeta>"), "{top}");
    explain(
        &s,
        "packagerevisionresources.status.renderStatus.result",
        "PackageRevisionResources",
        &["exitCode\t<integer>", "items\t<[]Object>"],
    );
    explain(
        &s,
        "packagerevisionresources.spec.resources",
        "PackageRevisionResources",
        &["FIELD: resources <map[string]string>"],
    );
    explain(
        &s,
        "packages.status.latestRevision",
        "PorchPackage",
        &["FIELD: latestRevision <integer>", "published revisions"],
    );
    explain(
        &s,
        "repositories.spec.git.secretRef",
        "Repository",
        &["name\t<string>"],
    );
    explain(
        &s,
        "packagevariants.spec.upstream.repo",
        "PackageVariant",
        &["FIELD: repo <string>"],
    );
    explain(
        &s,
        "packagevariantsets.spec.targets.repositories",
        "PackageVariantSet",
        &["name\t<string>", "packageNames\t<[]string>"],
    );
    let recursive = s.kubectl_ok(&["explain", "packagerevisions.spec", "--recursive"]);
    for f in ["sourceRef", "readinessGates", "packageMetadata", "keywords"] {
        assert!(recursive.contains(f), "no {f} in\n{recursive}");
    }
}

/// A server with the Repository `deployments` registered and Ready.
fn with_repository() -> (Server, GitServer) {
    let s = Server::start();
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
    (s, git)
}

/// A draft of package `package` (workspace `ws`) made by `init`, with `extra_spec` lines.
fn draft_yaml(package: &str, extra_spec: &str) -> String {
    format!(
        "apiVersion: porch.kpt.dev/v1alpha1\nkind: PackageRevision\nmetadata:\n  name: deployments.{package}.ws\n  namespace: default\nspec:\n  repository: deployments\n  packageName: {package}\n  workspaceName: ws\n{extra_spec}  tasks:\n  - type: init\n    init:\n      description: app\n"
    )
}

#[test]
fn field_validation_of_a_package_revision() {
    let (s, _git) = with_repository();
    let create = |name: &str, yaml: &str, validate: &str| {
        let f = s.write_file(name, yaml);
        s.kubectl(&[
            "create",
            "-f",
            f.to_str().expect("utf8"),
            &format!("--validate={validate}"),
        ])
    };
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();

    // Strict: refused before anything is created, naming the field.
    let out = create(
        "strict.yaml",
        &draft_yaml("strict", "  foo: bar\n"),
        "strict",
    );
    let err = text(&out.stderr);
    assert!(!out.status.success(), "{}", text(&out.stdout));
    assert!(err.contains("BadRequest"), "{err}");
    assert!(
        err.contains("strict decoding error: unknown field \"spec.foo\""),
        "{err}"
    );
    let nested = draft_yaml("strict2", "")
        .replace("description: app", "description: app\n      colour: red");
    let out = create("strict2.yaml", &nested, "strict");
    assert!(
        text(&out.stderr).contains("unknown field \"spec.tasks[0].init.colour\""),
        "{}",
        text(&out.stderr)
    );
    let missing = s.kubectl(&["get", "packagerevisions", "deployments.strict.ws"]);
    assert!(
        !missing.status.success(),
        "created despite the strict refusal"
    );

    // Warn: created, with kubectl printing the server's warning.
    let out = create("warn.yaml", &draft_yaml("warn", "  foo: bar\n"), "warn");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("Warning: unknown field \"spec.foo\""),
        "{}",
        text(&out.stderr)
    );

    // Ignore: created, silently; the unknown field is dropped.
    let out = create(
        "ignore.yaml",
        &draft_yaml("ignore", "  foo: bar\n"),
        "ignore",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        !text(&out.stderr).contains("Warning"),
        "{}",
        text(&out.stderr)
    );
    let spec = s.kubectl_ok(&[
        "get",
        "packagerevisions",
        "deployments.ignore.ws",
        "-o",
        "jsonpath={.spec}",
    ]);
    assert!(!spec.contains("foo"), "{spec}");

    // A clean manifest passes strict validation.
    let clean = draft_yaml("clean", "").replace(
        "      description: app\n",
        "      description: app\n      keywords: [a]\n      site: https://example.com\n",
    );
    let out = create("clean.yaml", &clean, "strict");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        !text(&out.stderr).contains("Warning"),
        "{}",
        text(&out.stderr)
    );

    // So does an older client's legacy `update` task: its payload reaches the server's
    // translation to `upgrade`, which refuses it for its own reason (nothing is published).
    let legacy = draft_yaml("legacy", "").replace(
        "  - type: init\n    init:\n      description: app\n",
        "  - type: update\n    update:\n      upstreamRef:\n        upstreamRef:\n          name: blueprints.base.v2\n",
    );
    let out = create("legacy.yaml", &legacy, "strict");
    let err = text(&out.stderr);
    assert!(
        !err.contains("strict decoding") && !err.contains("Warning"),
        "{err}"
    );
    assert!(
        err.contains("the update task needs a published revision of package \"legacy\""),
        "{err}"
    );
}

#[test]
fn apply_and_replace_of_served_objects_pass_strict_validation() {
    let (s, _git) = with_repository();
    let f = s.write_file("draft.yaml", &draft_yaml("app", ""));
    let f = f.to_str().expect("utf8");
    let out = s.kubectl(&["apply", "-f", f]);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("unable to find api field"), "{err}");

    // A second apply computes a patch from the schema: no fallback warning.
    let changed = draft_yaml("app", "").replace(
        "  namespace: default\n",
        "  namespace: default\n  labels:\n    team: edge\n",
    );
    let f2 = s.write_file("draft2.yaml", &changed);
    let out = s.kubectl(&["apply", "-f", f2.to_str().expect("utf8")]);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    assert!(
        !err.contains("unable to find api field") && !err.contains("warning"),
        "{err}"
    );
    assert_eq!(
        s.kubectl_ok(&[
            "get",
            "packagerevisions",
            "deployments.app.ws",
            "-o",
            "jsonpath={.metadata.labels.team}"
        ]),
        "edge"
    );

    // Everything the server serves (status, tasks, the resources map) decodes strictly.
    for kind in ["packagerevisions", "packagerevisionresources"] {
        let served = s.kubectl_ok(&["get", kind, "deployments.app.ws", "-o", "yaml"]);
        let back = s.kubectl_stdin(&["replace", "--validate=strict", "-f", "-"], Some(&served));
        let err = String::from_utf8_lossy(&back.stderr).into_owned();
        assert!(back.status.success(), "{kind}: {err}\n{served}");
        assert!(!err.contains("Warning"), "{kind}: {err}");
    }
}
