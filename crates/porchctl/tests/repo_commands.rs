//! `porchctl repo ...` end to end: the real porch-server binary, a real smart-HTTP git server
//! with basic auth (porch-testkit), porchctl as a subprocess, and kube-rs to check what landed
//! on the server. (The upstream `repo-register` CLI golden runs in `cli_goldens.rs`.)

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{PASS, Server, USER, create_namespace, ready_status};
use k8s_openapi::api::core::v1::Secret;
use kube::api::Api;
use porch_api::Repository;
use porch_testkit::GitServer;
use porch_testkit::repos;

/// A git server with basic auth serving `test-blueprints.git` (one commit on `main`).
fn git_server(root: &Path) -> GitServer {
    let repo = repos::init_bare(&root.join("nephio/test-blueprints.git"), "main").expect("init");
    repos::commit_files(
        &repo,
        "main",
        &repos::files(&[("README.md", "hi\n")]),
        "init",
    )
    .expect("commit");
    GitServer::start(root, Some((USER, PASS))).expect("git server")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn register_get_sync_unregister_with_basic_auth() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let git = git_server(&tmp.path().join("srv"));
    let url = git.url_for("nephio/test-blueprints.git");
    let s = Server::start();
    let client = s.client().await;
    create_namespace(&client, "repo-register").await;

    let out = s.porchctl_ok(&[
        "repo",
        "register",
        "--repo-basic-password=secret",
        "--repo-basic-username=nephio",
        &url,
        "--namespace=repo-register",
        "--description",
        "Test Blueprints",
        "--wait",
        "--timeout=60s",
    ]);
    assert_eq!(out, "", "register is silent");

    // The Secret upstream creates, and the Repository that references it.
    let secrets: Api<Secret> = Api::namespaced(client.clone(), "repo-register");
    let secret = secrets.get("test-blueprints-auth").await.expect("secret");
    assert_eq!(secret.type_.as_deref(), Some("kubernetes.io/basic-auth"));
    let data = secret.data.expect("data");
    assert_eq!(data["username"].0, b"nephio");
    assert_eq!(data["password"].0, b"secret");

    let repos: Api<Repository> = Api::namespaced(client.clone(), "repo-register");
    let repo = repos.get("test-blueprints").await.expect("repository");
    assert_eq!(repo.spec.type_.as_deref(), Some("git"));
    assert_eq!(repo.spec.description.as_deref(), Some("Test Blueprints"));
    let g = repo.spec.git.as_ref().expect("git spec");
    assert_eq!(g.repo, url);
    assert_eq!(g.branch.as_deref(), Some("main"));
    assert_eq!(g.directory.as_deref(), Some("/"));
    assert_eq!(
        g.secret_ref.as_ref().map(|r| r.name.as_str()),
        Some("test-blueprints-auth")
    );
    assert_eq!(
        ready_status(&repo).as_deref(),
        Some("True"),
        "{:?}",
        repo.status
    );

    // The custom-columns views of the upstream golden.
    let out = s.porchctl_ok(&[
        "repo",
        "get",
        "-n",
        "repo-register",
        "--output=custom-columns=NAME:.metadata.name,TYPE:.spec.type,CONTENT:.spec.content,READY:.status.conditions[?(@.type=='Ready')].status,BRANCH:.spec.git.branch",
    ]);
    assert_eq!(
        out,
        "NAME              TYPE   CONTENT   READY   BRANCH\ntest-blueprints   git    Package   True    main\n"
    );

    // The default view is the server's Table.
    let out = s.porchctl_ok(&["repo", "get", "-n", "repo-register"]);
    let mut lines = out.lines();
    let header: Vec<&str> = lines.next().expect("header").split_whitespace().collect();
    assert_eq!(
        header,
        [
            "NAME",
            "TYPE",
            "CONTENT",
            "SYNC",
            "SCHEDULE",
            "DEPLOYMENT",
            "READY",
            "ADDRESS",
            "AGE"
        ]
    );
    let row: Vec<&str> = lines.next().expect("row").split_whitespace().collect();
    assert_eq!(&row[..4], ["test-blueprints", "git", "Package", "True"]);
    assert_eq!(row[4], url);

    let out = s.porchctl_ok(&["repo", "ls", "-n", "repo-register", "-o", "name"]);
    assert_eq!(out, "repository.config.porch.kpt.dev/test-blueprints\n");
    let out = s.porchctl_ok(&[
        "repo",
        "get",
        "test-blueprints",
        "-n",
        "repo-register",
        "-o",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json output");
    assert_eq!(
        v["spec"]["git"]["secretRef"]["name"],
        "test-blueprints-auth"
    );
    assert!(
        out.starts_with("{\n    \"apiVersion\""),
        "Go's 4-space indent, sorted: {out}"
    );
    let out = s.porchctl_ok(&["repo", "get", "-n", "repo-register", "-o", "yaml"]);
    assert!(
        out.starts_with("apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\n"),
        "{out}"
    );

    // sync: a run-once time at least a minute ahead.
    let out = s.porchctl_ok(&["repo", "sync", "test-blueprints", "-n", "repo-register"]);
    assert!(
        out.starts_with("Scheduled one-time sync for \"test-blueprints\" at "),
        "{out}"
    );
    let repo = repos.get("test-blueprints").await.expect("repository");
    let at = repo
        .spec
        .sync
        .and_then(|s| s.run_once_at)
        .expect("runOnceAt set");
    // Printed in the local zone (as Go's time.Local), sent in UTC: the same instant.
    let shown: Option<k8s_openapi::jiff::Timestamp> = out
        .trim_end()
        .rsplit(' ')
        .next()
        .and_then(|t| t.parse().ok());
    assert_eq!(shown, at.parse().ok(), "{out} vs {at}");
    assert!(shown.is_some(), "{out}");

    // unregister removes the Repository and its Secret.
    let out = s.porchctl_ok(&[
        "repo",
        "unregister",
        "test-blueprints",
        "-n",
        "repo-register",
    ]);
    assert_eq!(out, "");
    assert!(
        repos
            .get_opt("test-blueprints")
            .await
            .expect("get")
            .is_none()
    );
    assert!(
        secrets
            .get_opt("test-blueprints-auth")
            .await
            .expect("get")
            .is_none()
    );
    assert_eq!(s.porchctl_ok(&["repo", "get", "-n", "repo-register"]), "");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_use_upstream_texts() {
    let s = Server::start();
    let out = s.porchctl(&["repo", "get", "nope"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(out.stdout, b"");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "Error: repositories.config.porch.kpt.dev \"nope\" not found \n"
    );

    let out = s.porchctl(&["repo", "unreg", "nope"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "Error: repositories.config.porch.kpt.dev \"nope\" not found \n"
    );

    // Registering twice: the Repository create fails with the server's AlreadyExists text.
    s.porchctl_ok(&["repo", "reg", "http://127.0.0.1:9/x/dup.git"]);
    let out = s.porchctl(&["repo", "reg", "http://127.0.0.1:9/x/dup.git"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("Error: ") && err.contains("already exists"),
        "{err}"
    );

    let out = s.porchctl(&["repo", "sync"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "Error: repository name(s) required unless --all is set \n"
    );
    let out = s.porchctl(&["repo", "sync", "--all", "-n", ""]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "Error: namespace must be specified unless --all-namespaces is set \n"
    );
    // With -A, naming repositories that cannot be read reports the scope as all namespaces.
    let out = s.porchctl(&["repo", "sync", "ghost-repo", "-A"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "Error fetching repository \"ghost-repo\": repositories.config.porch.kpt.dev \"ghost-repo\" not found\n\
         Error: no repositories found across all namespaces \n"
    );

    // No kubeconfig at all: a configuration error plus a hint.
    let home = tempfile::tempdir().expect("home");
    let out = Command::new(env!("CARGO_BIN_EXE_porchctl"))
        .args(["repo", "get"])
        .env_remove("KUBECONFIG")
        .env("HOME", home.path())
        .output()
        .expect("run porchctl");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("Error: invalid configuration: no configuration has been provided"),
        "{err}"
    );
    assert!(err.contains("\nhint: "), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_and_token_flags_override_the_kubeconfig() {
    let s = Server::start();
    let kc = std::fs::read_to_string(s.kubeconfig()).expect("kubeconfig");
    let server = kc
        .lines()
        .find_map(|l| l.trim().strip_prefix("server: "))
        .expect("server line")
        .trim_matches('"')
        .to_string();
    // A wrong token is refused by the server.
    let out = s.porchctl(&["repo", "get", "--token", "wrong"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("hint: the token was refused"), "{err}");
    // An unreachable --server is a transport error with a hint.
    let out = s.porchctl(&["repo", "get", "--server", "https://127.0.0.1:9"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("hint: is porch-server running"), "{err}");
    // The right server given explicitly works.
    assert_eq!(s.porchctl_ok(&["repo", "get", "-s", &server]), "");
    // kubectl's other global flags are accepted; `--as`/`--as-group` impersonate (the admin
    // may), and the impersonated user, who holds no role, is refused by RBAC by name.
    let out = s.porchctl(&[
        "repo",
        "get",
        "-v",
        "4",
        "--cache-dir",
        "/nonexistent",
        "--as",
        "me",
        "--as-group",
        "g1",
        "--as-group",
        "g2",
        "--request-timeout",
        "30s",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("User \"me\" cannot list resource \"repositories\""),
        "{err}"
    );
    assert_eq!(
        s.porchctl_ok(&[
            "repo",
            "get",
            "-v",
            "4",
            "--cache-dir",
            "/nonexistent",
            "--as",
            "me",
            "--as-group",
            "system:masters",
            "--request-timeout",
            "30s"
        ]),
        ""
    );
    // A client certificate that cannot be read is a client configuration error.
    let out = s.porchctl(&[
        "repo",
        "get",
        "--client-certificate",
        "/nonexistent/c.crt",
        "--client-key",
        "/nonexistent/c.key",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("Error: "));
}

#[test]
fn completion_scripts() {
    for shell in ["bash", "zsh", "fish"] {
        let out = Command::new(env!("CARGO_BIN_EXE_porchctl"))
            .args(["completion", shell])
            .output()
            .expect("run porchctl");
        assert!(out.status.success());
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("porchctl") && text.contains("unregister") && text.contains("rpkg"),
            "{shell}"
        );
    }
}

#[test]
fn version_and_root_flags_as_upstream() {
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_porchctl"))
            .args(args)
            .output()
            .expect("run porchctl")
    };
    let out = run(&["version"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert_eq!(lines[0], format!("Version: {}", env!("CARGO_PKG_VERSION")));
    let commit = lines[1].strip_prefix("Git commit: ").expect("commit line");
    assert!(
        commit == "unknown"
            || (commit.len() == 40 && commit.bytes().all(|b| b.is_ascii_hexdigit())),
        "{commit}"
    );
    // Go-style boolean root flags, before or after the subcommand.
    for args in [
        &["--truncate-output=false", "version"][..],
        &["version", "--truncate-output"],
        &["--stack-trace", "version"],
    ] {
        assert!(run(args).status.success(), "{args:?}");
    }
    assert!(
        !run(&["--truncate-output=maybe", "version"])
            .status
            .success()
    );
}

#[test]
fn completion_into_a_closed_pipe_is_not_a_crash() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_porchctl"))
        .args(["completion", "bash"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run porchctl");
    drop(child.stdout.take()); // the reader goes away before anything is written
    let out = child.wait_with_output().expect("wait for porchctl");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(out.status.success(), "{:?} {stderr}", out.status);
}

/// Runs porchctl with exactly the given environment for kubeconfig discovery.
fn porchctl_env(args: &[&str], kubeconfig_env: Option<&Path>, home: &Path) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_porchctl"));
    cmd.args(args).env("HOME", home).stdin(Stdio::null());
    match kubeconfig_env {
        Some(p) => cmd.env("KUBECONFIG", p),
        None => cmd.env_remove("KUBECONFIG"),
    };
    cmd.output().expect("run porchctl")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubeconfig_discovery_context_and_namespace() {
    let s = Server::start();
    let client = s.client().await;
    create_namespace(&client, "team-a").await;
    // A second context on the same cluster whose namespace is team-a.
    let kc = std::fs::read_to_string(s.kubeconfig()).expect("kubeconfig");
    let kc = kc.replacen(
        "contexts:\n",
        "contexts:\n- name: team\n  context:\n    cluster: porch\n    user: porch-admin\n    namespace: team-a\n",
        1,
    );
    let work = tempfile::tempdir().expect("tempdir");
    let file = work.path().join("kc.yaml");
    std::fs::write(&file, &kc).expect("write kubeconfig");
    let home = work.path().join("home");
    std::fs::create_dir_all(home.join(".kube")).expect("home");
    let f = file.to_str().expect("utf8");

    // --kubeconfig + --context: the context's namespace is used when -n is absent.
    let out = porchctl_env(
        &[
            "repo",
            "reg",
            "http://127.0.0.1:9/org/team-repo.git",
            "--kubeconfig",
            f,
            "--context",
            "team",
        ],
        None,
        &home,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let team: Api<Repository> = Api::namespaced(client.clone(), "team-a");
    assert!(team.get_opt("team-repo").await.expect("get").is_some());

    // KUBECONFIG with the default context (namespace default): nothing there.
    let out = porchctl_env(&["repo", "get", "-o", "name"], Some(&file), &home);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    // -n overrides the context's namespace.
    let out = porchctl_env(
        &["repo", "get", "-o", "name", "-n", "team-a"],
        Some(&file),
        &home,
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "repository.config.porch.kpt.dev/team-repo\n"
    );
    // ~/.kube/config when neither flag nor KUBECONFIG is given; -A adds NAMESPACE.
    std::fs::write(home.join(".kube/config"), &kc).expect("write ~/.kube/config");
    let out = porchctl_env(&["repo", "get", "-A"], None, &home);
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    assert!(
        lines
            .next()
            .expect("header")
            .starts_with("NAMESPACE   NAME "),
        "{text}"
    );
    assert!(
        lines
            .next()
            .expect("row")
            .starts_with("team-a      team-repo   git "),
        "{text}"
    );
    // An unknown context is a configuration error.
    let out = porchctl_env(&["repo", "get", "--context", "nope"], None, &home);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("Error: invalid configuration: "));
}

const KUBECTL: &str = "/usr/lib/google-cloud-sdk/bin/kubectl.1.32";

/// porchctl's printers against kubectl's on the same objects (upstream porchctl prints
/// through kubectl's printers): yaml, json, custom-columns, the Table, wide, -A, labels.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn printers_match_kubectl() {
    if !Path::new(KUBECTL).exists() {
        eprintln!("skipped: {KUBECTL} not installed");
        return;
    }
    let s = Server::start();
    s.porchctl_ok(&[
        "repo",
        "reg",
        "http://127.0.0.1:9/x/a.git",
        "--description",
        "it's: a 'test'",
        "--sync-schedule",
        "*/5 * * * *",
        "--deployment",
    ]);
    s.porchctl_ok(&[
        "repo",
        "reg",
        "http://127.0.0.1:9/x/b.git",
        "--repo-basic-username=u",
        "--repo-basic-password=p",
        "--branch=dev",
        "--directory=pkgs/x",
    ]);
    // Wait for the controller's status (an Error condition with a multi-line message).
    let client = s.client().await;
    let repos: Api<Repository> = Api::namespaced(client, "default");
    let deadline = Instant::now() + Duration::from_secs(30);
    while ready_status(&repos.get("a").await.expect("a")).is_none() {
        assert!(Instant::now() < deadline, "no status written");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let kubectl = |args: &[&str]| kubectl_ok(&s, args);
    // porchctl sends client-go's User-Agent, so the server names porchctl the manager of
    // what it wrote (kubectl's label below is `kubectl-label`'s).
    let managers = "jsonpath={.metadata.managedFields[*].manager}";
    assert_eq!(
        s.porchctl_ok(&["repo", "get", "b", "-o", managers]),
        "porchctl"
    );
    let cc = "custom-columns=NAME:.metadata.name,READY:.status.conditions[?(@.type==\"Ready\")].status,SYNC:.spec.sync,LABELS:.metadata.labels";
    kubectl(&[
        "label",
        "repositories",
        "a",
        "team=blue",
        "app.kubernetes.io/name=bp",
    ]);
    let jp = "jsonpath={.metadata.name}:{.spec.git}:{.status.conditions[?(@.type==\"Ready\")].reason}{\"\\n\"}";
    let range = "jsonpath={.metadata.name}{range .status.conditions[*]} {.type}={@.status}{end}{'\\n'}{range .spec.git}{@}{end}";
    // kubectl's custom-columns-file: a header line and a spec line, white space between.
    let columns_file = s.dir.path().join("columns.txt");
    std::fs::write(
        &columns_file,
        "NAME   BRANCH\tREADY\n.metadata.name  spec.git.branch {.status.conditions[0].status}\r\n",
    )
    .expect("columns file");
    let ccf = format!("custom-columns-file={}", columns_file.display());
    let ccf = ccf.as_str();
    let as_json = "jsonpath-as-json={.metadata.name}<&>{.spec.git}{.nope}{range .status.conditions[*]}{@.type}{@}{end}";
    let unions =
        "jsonpath={.spec.git['branch','directory']}|{..directory}|{.status.conditions[0].type}";
    let managed_jp =
        "jsonpath={.metadata.managedFields[*].operation} {.metadata.managedFields[0].fieldsType}";
    let managed_cc = "custom-columns=NAME:.metadata.name,OPS:.metadata.managedFields[*].operation";
    let cases: [(&[&str], &[&str]); 17] = [
        (
            &["get", "repositories", "--sort-by=.spec.git.branch"],
            &["repo", "get", "--sort-by=.spec.git.branch"],
        ),
        (
            &[
                "get",
                "repositories",
                "--sort-by={.metadata.name}",
                "-o",
                "name",
            ],
            &["repo", "get", "--sort-by={.metadata.name}", "-o", "name"],
        ),
        (
            &[
                "get",
                "repositories",
                "--sort-by=.spec.git.directory",
                "-o",
                cc,
            ],
            &["repo", "get", "--sort-by=.spec.git.directory", "-o", cc],
        ),
        (
            &[
                "get",
                "repositories",
                "-L",
                "team,app.kubernetes.io/name",
                "--show-labels",
            ],
            &[
                "repo",
                "get",
                "-L",
                "team,app.kubernetes.io/name",
                "--show-labels",
            ],
        ),
        (
            &["get", "repositories", "b", "-o", jp],
            &["repo", "get", "b", "-o", jp],
        ),
        (
            &["get", "repositories", "b", "-o", range],
            &["repo", "get", "b", "-o", range],
        ),
        // Templates and custom columns see managedFields; only yaml and json drop them.
        (
            &["get", "repositories", "b", "-o", managed_jp],
            &["repo", "get", "b", "-o", managed_jp],
        ),
        (
            &["get", "repositories", "-o", managed_cc],
            &["repo", "get", "-o", managed_cc],
        ),
        (
            &["get", "repositories", "-o", ccf],
            &["repo", "get", "-o", ccf],
        ),
        (
            &["get", "repositories", "b", "-o", as_json],
            &["repo", "get", "b", "-o", as_json],
        ),
        (
            &["get", "repositories", "b", "-o", unions],
            &["repo", "get", "b", "-o", unions],
        ),
        (
            &["get", "repositories", "a", "-o", "yaml"],
            &["repo", "get", "a", "-o", "yaml"],
        ),
        (
            &["get", "repositories", "b", "-o", "yaml"],
            &["repo", "get", "b", "-o", "yaml"],
        ),
        (
            &["get", "repositories", "a", "-o", "json"],
            &["repo", "get", "a", "-o", "json"],
        ),
        (
            &["get", "repositories", "-o", cc],
            &["repo", "get", "-o", cc],
        ),
        (&["get", "repositories"], &["repo", "get"]),
        (
            &["get", "repositories", "-o", "wide", "-A", "--show-labels"],
            &["repo", "get", "-o", "wide", "-A", "--show-labels"],
        ),
    ];
    for (k, p) in cases {
        same_as_kubectl(&s, &kubectl, k, p);
    }
    go_templates_match_kubectl(&s, &kubectl);
    // kubectl's other printing flags.
    for extra in [
        &["-o", "yaml", "--show-managed-fields"][..],
        &["-o", "json", "--show-managed-fields=true"],
        &[
            "-o",
            "jsonpath={.metadata.name}",
            "--allow-missing-template-keys=false",
        ],
        &[
            "-o",
            "go-template={{.metadata.name}}",
            "--allow-missing-template-keys=0",
        ],
        &[
            "-o",
            "jsonpath={.spec.nope}",
            "--allow-missing-template-keys",
        ],
    ] {
        let k: Vec<&str> = ["get", "repositories", "b"]
            .iter()
            .chain(extra)
            .copied()
            .collect();
        let p: Vec<&str> = ["repo", "get", "b"].iter().chain(extra).copied().collect();
        same_as_kubectl(&s, &kubectl, &k, &p);
    }
    // --show-kind is accepted and, as upstream's printer is never told the kind, changes
    // nothing (kubectl itself would prefix the names).
    let mut pair = (String::new(), String::new());
    for _ in 0..5 {
        pair = (
            s.porchctl_ok(&["repo", "get", "--show-kind"]),
            s.porchctl_ok(&["repo", "get"]),
        );
        if pair.0 == pair.1 {
            break;
        }
    }
    assert_eq!(pair.0, pair.1);
    // A missing key is an error when not allowed, in kubectl's words.
    for template in ["jsonpath={.spec.nope}", "go-template={{.spec.nope}}"] {
        let k = Command::new(KUBECTL)
            .args([
                "get",
                "repositories",
                "b",
                "-o",
                template,
                "--allow-missing-template-keys=false",
            ])
            .env("KUBECONFIG", s.kubeconfig())
            .env("HOME", s.dir.path())
            .output()
            .expect("kubectl");
        let p = s.porchctl(&[
            "repo",
            "get",
            "b",
            "-o",
            template,
            "--allow-missing-template-keys=false",
        ]);
        assert_eq!(p.status.code(), k.status.code(), "{template}");
        assert_eq!(
            String::from_utf8_lossy(&p.stdout),
            String::from_utf8_lossy(&k.stdout),
            "{template}"
        );
        let kerr = String::from_utf8_lossy(&k.stderr).into_owned();
        let perr = String::from_utf8_lossy(&p.stderr).into_owned();
        let body = |e: &str| {
            e.split_once(": ")
                .map(|(_, b)| b.trim_end().to_string())
                .unwrap_or_default()
        };
        assert_eq!(
            body(&perr),
            body(&kerr),
            "{template}\nporchctl: {perr}\nkubectl: {kerr}"
        );
    }
}

/// `--sort-by` orders as kubectl's does, ties and all: Go's `sort.Sort` (not stable; 26
/// objects take it past its insertion sort), kubectl's comparison (a missing field first,
/// strings that are both Kubernetes quantities by value, others in natural order).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sort_by_orders_as_kubectl() {
    if !Path::new(KUBECTL).exists() {
        eprintln!("skipped: {KUBECTL} not installed");
        return;
    }
    let s = Server::start();
    let kubectl = |args: &[&str]| kubectl_ok(&s, args);
    const QUANTITIES: &[&str] = &[
        "1.5",
        "b",
        "1.10",
        "1k",
        "a",
        "1Ki",
        "2",
        "02",
        "v2",
        "v10",
        "-",
        ".",
        "1e3",
        "Z",
        "999",
        "1.0000000001",
        "1.000000001",
        "",
        "x1",
        "10Mi",
        "5",
        "-1",
        "+3",
        "0.5",
        "500m",
        "d10",
        "d2",
        "Ei",
        "Ki",
    ];
    let mut manifest = String::new();
    for i in 0..26 {
        let mut annotations = format!("    t: {}\n", ["b", "a", "c"][i * 7 % 3]);
        // Four arrangements of the values over the objects, some objects without one.
        for (k, m) in [7, 5, 17, 25].into_iter().enumerate() {
            if (i + k) % 5 != 3 {
                let q = QUANTITIES[(i * m + k) % QUANTITIES.len()];
                annotations.push_str(&format!("    q{k}: {q:?}\n"));
            }
        }
        manifest.push_str(&format!(
            "---\napiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: r{i:02}\n  annotations:\n{annotations}spec:\n  type: git\n  description: \"d{}\"\n  git:\n    repo: http://127.0.0.1:9/x/r{i}.git\n",
            (i * 13) % 17
        ));
    }
    let file = s.dir.path().join("repos.yaml");
    std::fs::write(&file, manifest).expect("manifest");
    kubectl(&["create", "-f", file.to_str().expect("utf8")]);
    let cc = "custom-columns=N:.metadata.name,Q:.metadata.annotations.q0";
    same_as_kubectl(
        &s,
        &kubectl,
        &[
            "get",
            "repositories",
            "--sort-by=.metadata.annotations.q0",
            "-o",
            cc,
        ],
        &[
            "repo",
            "get",
            "--sort-by=.metadata.annotations.q0",
            "-o",
            cc,
        ],
    );
    for field in [
        ".metadata.annotations.q0",
        "metadata.annotations.q1",
        "{.metadata.annotations.q2}",
        "{metadata.annotations.q3}",
        "{.metadata.annotations.t}",
        "spec.type",
        ".spec.description",
        ".metadata.name",
    ] {
        let sort = format!("--sort-by={field}");
        same_as_kubectl(
            &s,
            &kubectl,
            &["get", "repositories", &sort, "-o", "name"],
            &["repo", "get", &sort, "-o", "name"],
        );
        same_as_kubectl(
            &s,
            &kubectl,
            &["get", "repositories", &sort],
            &["repo", "get", &sort],
        );
    }
}

/// kubectl 1.32 against the test server; its stdout (it must succeed).
fn kubectl_ok(s: &Server, args: &[&str]) -> String {
    let out = Command::new(KUBECTL)
        .args(args)
        .env("KUBECONFIG", s.kubeconfig())
        .env("HOME", s.dir.path())
        .output()
        .expect("run kubectl");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// porchctl `p` prints what kubectl `k` prints. The AGE column can tick between the two
/// calls; that is a race, not a difference, so a mismatch is tried again.
fn same_as_kubectl(s: &Server, kubectl: &dyn Fn(&[&str]) -> String, k: &[&str], p: &[&str]) {
    let mut last = (String::new(), String::new());
    for _ in 0..5 {
        last = (kubectl(k), s.porchctl_ok(p));
        if last.0 == last.1 {
            break;
        }
    }
    assert_eq!(last.1, last.0, "porchctl {p:?} vs kubectl {k:?}");
}

/// `-o go-template` and its spellings against kubectl. On one named object both run the
/// same template; on the list kubectl runs it on the List, so there it gets
/// `{{range .items}}BODY{{end}}` while porchctl (as upstream's printers, per object) gets BODY.
fn go_templates_match_kubectl(s: &Server, kubectl: &dyn Fn(&[&str]) -> String) {
    let same = |k: &[&str], p: &[&str]| same_as_kubectl(s, kubectl, k, p);
    let bodies = [
        // Names, one per line.
        "{{.metadata.name}}{{\"\\n\"}}",
        "{{if .spec.deployment}}deployment{{else}}blueprint{{end}} {{.metadata.name}}\n",
        "{{printf \"%-4s|%5s|%v|%q\\n\" .metadata.name .spec.type .spec.deployment .spec.description}}",
        // Nested ranges, over a list and over a map (in key order), with variables.
        "{{.metadata.name}}{{range .status.conditions}} {{.type}}={{.status}}{{range $k, $v := .}}{{if eq $k \"reason\"}} ({{$v}}){{end}}{{end}}{{end}}\n",
        // Missing fields print <no value>.
        "{{.metadata.name}} {{.spec.nope}} {{.spec.git.nope.deeper}} {{.metadata.labels.team}}\n",
        "{{- with .spec.git}}{{.repo}} {{.branch}} {{.directory}}{{else}}none{{end}}\n",
        "{{$n := .metadata.name}}{{range $i, $c := .status.conditions}}{{$n}}[{{$i}}] {{len $c.message}} {{printf \"%.12q\" $c.message}}{{\"\\n\"}}{{end}}",
        "{{.metadata.name}} {{.metadata.generation}} {{.spec.sync}} {{.spec.git}}\n",
    ];
    for body in bodies {
        let listed = format!("go-template={{{{range .items}}}}{body}{{{{end}}}}");
        let each = format!("go-template={body}");
        same(
            &["get", "repositories", "-o", &listed],
            &["repo", "get", "-o", &each],
        );
        same(
            &["get", "repositories", "b", "-o", &each],
            &["repo", "get", "b", "-o", &each],
        );
    }
    // A label key with dots and slashes, len, and kubectl's base64decode.
    let labels = "go-template={{index .metadata.labels \"app.kubernetes.io/name\"}} {{len .metadata.labels}} {{len .status.conditions}} {{base64decode \"aGk=\"}}";
    same(
        &["get", "repositories", "a", "-o", labels],
        &["repo", "get", "a", "-o", labels],
    );
    // --template, and templates read from files.
    let file = s.dir.path().join("repo.tmpl");
    std::fs::write(&file, "{{.metadata.name}}: {{.spec.git.branch}}\n").expect("template file");
    let file = file.to_str().expect("utf-8 path");
    let from_file = format!("go-template-file={file}");
    for p in [
        &["--template", "{{.metadata.name}}"][..],
        &["-o", "template", "--template", "{{.spec.type}}"],
        &["-o", &from_file],
        &["-o", "templatefile", "--template", file],
    ] {
        let k = [&["get", "repositories", "a"][..], p].concat();
        let ours = [&["repo", "get", "a"][..], p].concat();
        same(&k, &ours);
    }
    // An execution error: the same output and debugging text, and kubectl's message.
    let bad = "go-template={{.metadata.name}} {{len .spec.nope}}";
    let run = |cmd: &mut Command| cmd.output().expect("run");
    let k = run(Command::new(KUBECTL)
        .args(["get", "repositories", "a", "-o", bad])
        .env("KUBECONFIG", s.kubeconfig())
        .env("HOME", s.dir.path()));
    let p = s.porchctl(&["repo", "get", "a", "-o", bad]);
    assert!(!k.status.success() && !p.status.success());
    assert_eq!(
        String::from_utf8_lossy(&p.stdout),
        String::from_utf8_lossy(&k.stdout)
    );
    let k_err = String::from_utf8_lossy(&k.stderr);
    let message = k_err
        .strip_prefix("error: ")
        .expect("kubectl's error line")
        .trim_end();
    assert_eq!(
        String::from_utf8_lossy(&p.stderr),
        format!("Error: {message} \n")
    );
}

/// `--server/--token` without any kubeconfig: TLS needs the CA (`--certificate-authority`)
/// or `--insecure-skip-tls-verify`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flags_alone_with_tls_options() {
    let s = Server::start();
    let data = s.dir.path().join("data");
    let token = std::fs::read_to_string(data.join("token")).expect("token");
    let kc = std::fs::read_to_string(s.kubeconfig()).expect("kubeconfig");
    let server = kc
        .lines()
        .find_map(|l| l.trim().strip_prefix("server: "))
        .expect("server line")
        .trim_matches('"')
        .to_string();
    let home = tempfile::tempdir().expect("home");
    let base = [
        "repo",
        "get",
        "-o",
        "name",
        "-s",
        &server,
        "--token",
        token.trim(),
    ];
    let run = |extra: &[&str]| {
        let mut args: Vec<&str> = base.to_vec();
        args.extend_from_slice(extra);
        porchctl_env(&args, None, home.path())
    };
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(1), "an unknown CA is refused");
    assert!(String::from_utf8_lossy(&out.stderr).contains("hint: "));
    let ca = data.join("pki").join("ca.crt");
    let out = run(&["--certificate-authority", ca.to_str().expect("utf8")]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(&["--insecure-skip-tls-verify"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `repo reg --wait` reports a repository that does not become Ready.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_reports_an_unready_repository() {
    let s = Server::start();
    let out = s.porchctl(&[
        "repo",
        "reg",
        "http://127.0.0.1:9/x/gone.git",
        "--wait",
        "--timeout=3s",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("Error: repository \"gone\" did not become ready ("),
        "{err}"
    );
}
