//! kubectl 1.32 against the real server over HTTPS, with the generated kubeconfig.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{KUBECTL, Server, fake_bare_repo, repo_yaml};

fn wait_for(server: &Server, args: &[&str], want: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let out = server.kubectl(args);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        if text.contains(want) {
            return text;
        }
        assert!(
            Instant::now() < deadline,
            "never saw {want:?} in {text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn api_resources_lists_porch_and_core_kinds() {
    let s = Server::start();
    let out = s.kubectl_ok(&["api-resources"]);
    assert!(
        out.contains("repositories")
            && out.contains("repo")
            && out.contains("config.porch.kpt.dev/v1alpha1"),
        "{out}"
    );
    assert!(
        out.contains("packagevariantsets") && out.contains("config.porch.kpt.dev/v1alpha2"),
        "{out}"
    );
    assert!(
        out.contains("secrets") && out.contains("namespaces"),
        "{out}"
    );
    let version = s.kubectl_ok(&["version", "-o", "json"]);
    assert!(version.contains("\"minor\": \"32\""), "{version}");
}

#[test]
fn repository_lifecycle_with_kubectl() {
    let s = Server::start();
    let url = fake_bare_repo(s.dir.path(), "blueprints.git");
    let file = s.write_file("repo.yaml", &repo_yaml("blueprints", &url));
    let f = file.to_str().expect("utf8 path");

    // apply (create), then the Table columns and the Ready condition from the controller.
    let out = s.kubectl_ok(&["apply", "-f", f]);
    assert_eq!(
        out.trim(),
        "repository.config.porch.kpt.dev/blueprints created"
    );
    let table = wait_for(&s, &["get", "repositories"], "True");
    let header = table.lines().next().expect("header");
    for col in [
        "NAME",
        "TYPE",
        "CONTENT",
        "SYNC SCHEDULE",
        "DEPLOYMENT",
        "READY",
        "ADDRESS",
        "AGE",
    ] {
        assert!(header.contains(col), "missing {col} in {header}");
    }
    assert!(
        table.contains("blueprints")
            && table.contains("git")
            && table.contains("Package")
            && table.contains(&url),
        "{table}"
    );

    // -o yaml / json.
    let yaml = s.kubectl_ok(&["get", "repo", "blueprints", "-o", "yaml"]);
    assert!(
        yaml.contains("kind: Repository")
            && yaml.contains("branch: main")
            && yaml.contains("resourceVersion:"),
        "{yaml}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&s.kubectl_ok(&["get", "repositories", "-o", "json"])).expect("json");
    assert_eq!(json["kind"], "List");
    assert_eq!(json["items"][0]["metadata"]["name"], "blueprints");
    assert_eq!(
        json["items"][0]["status"]["conditions"][0]["reason"],
        "Ready"
    );

    // apply (update) with a changed description.
    let changed =
        repo_yaml("blueprints", &url).replace("description: test repo", "description: changed");
    let file2 = s.write_file("repo2.yaml", &changed);
    let out = s.kubectl_ok(&["apply", "-f", file2.to_str().expect("utf8")]);
    assert_eq!(
        out.trim(),
        "repository.config.porch.kpt.dev/blueprints configured"
    );
    let desc = s.kubectl_ok(&[
        "get",
        "repo",
        "blueprints",
        "-o",
        "jsonpath={.spec.description}",
    ]);
    assert_eq!(desc, "changed");

    // label, patch, custom-columns.
    let out = s.kubectl_ok(&["label", "repository", "blueprints", "env=prod"]);
    assert_eq!(
        out.trim(),
        "repository.config.porch.kpt.dev/blueprints labeled"
    );
    let out = s.kubectl_ok(&[
        "patch",
        "repository",
        "blueprints",
        "--type=merge",
        "-p",
        r#"{"spec":{"deployment":true}}"#,
    ]);
    assert_eq!(
        out.trim(),
        "repository.config.porch.kpt.dev/blueprints patched"
    );
    let out = s.kubectl_ok(&[
        "get",
        "repositories",
        "-l",
        "env=prod",
        "-o",
        "custom-columns=NAME:.metadata.name,DEPLOY:.spec.deployment",
    ]);
    assert!(out.contains("blueprints") && out.contains("true"), "{out}");
    let out = s.kubectl_ok(&["get", "repositories", "-l", "env=dev"]);
    assert!(!out.contains("blueprints"), "{out}");

    // Immutability: changing spec.git.repo is refused with a 422 naming the field.
    let moved = repo_yaml("blueprints", "https://example.invalid/other.git");
    let file3 = s.write_file("repo3.yaml", &moved);
    let out = s.kubectl(&["apply", "-f", file3.to_str().expect("utf8")]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("spec.git.repo is immutable"), "{err}");

    // replace with the current object, once the controller has caught up with the spec (its
    // status write would otherwise race the replace and rightly make it a conflict).
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let g = s.kubectl_ok(&[
            "get",
            "repo",
            "blueprints",
            "-o",
            "jsonpath={.metadata.generation}/{.status.observedGeneration}",
        ]);
        let (a, b) = g.split_once('/').unwrap_or(("", "x"));
        if a == b {
            break;
        }
        assert!(Instant::now() < deadline, "controller never caught up: {g}");
        std::thread::sleep(Duration::from_millis(50));
    }
    let current = s.kubectl_ok(&["get", "repo", "blueprints", "-o", "yaml"]);
    let current = current.replace("description: changed", "description: replaced");
    let out = s.kubectl_stdin(&["replace", "-f", "-"], Some(&current));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "repository.config.porch.kpt.dev/blueprints replaced"
    );

    // delete, then NotFound.
    let out = s.kubectl_ok(&["delete", "repository", "blueprints"]);
    assert_eq!(
        out.trim(),
        "repository.config.porch.kpt.dev \"blueprints\" deleted"
    );
    // Its sync stops: the controller closes the registration.
    let deadline = Instant::now() + Duration::from_secs(20);
    while !s.log().contains("closed repository") {
        assert!(
            Instant::now() < deadline,
            "repository never closed: {}",
            s.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = s.kubectl(&["get", "repository", "blueprints"]);
    assert!(!out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "Error from server (NotFound): repositories.config.porch.kpt.dev \"blueprints\" not found"
    );
}

#[test]
fn create_reports_existing_and_invalid_objects() {
    let s = Server::start();
    let file = s.write_file("r.yaml", &repo_yaml("r1", "https://127.0.0.1:1/x.git"));
    let f = file.to_str().expect("utf8");
    assert_eq!(
        s.kubectl_ok(&["create", "-f", f]).trim(),
        "repository.config.porch.kpt.dev/r1 created"
    );
    let out = s.kubectl(&["create", "-f", f]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("(AlreadyExists)") && err.contains("\"r1\" already exists"),
        "{err}"
    );

    // The unreachable address shows up as Ready=False with the error.
    let text = wait_for(
        &s,
        &[
            "get",
            "repo",
            "r1",
            "-o",
            "jsonpath={.status.conditions[0].reason}",
        ],
        "Error",
    );
    assert_eq!(text, "Error");

    // Unknown field: strict validation from kubectl.
    let bad =
        repo_yaml("r2", "https://h/x.git").replace("  type: git\n", "  type: git\n  bogus: 1\n");
    let file = s.write_file("bad.yaml", &bad);
    let out = s.kubectl(&["create", "-f", file.to_str().expect("utf8")]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown field \"spec.bogus\""), "{err}");

    // Invalid type value: 422 with the field.
    let bad = repo_yaml("r3", "https://h/x.git").replace("type: git", "type: svn");
    let file = s.write_file("bad2.yaml", &bad);
    let out = s.kubectl(&["create", "-f", file.to_str().expect("utf8")]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("The Repository \"r3\" is invalid: spec.type: Unsupported value: \"svn\""),
        "{err}"
    );
    let listed = s.kubectl_ok(&["get", "repositories", "-o", "name"]);
    assert_eq!(listed.trim(), "repository.config.porch.kpt.dev/r1");
}

#[test]
fn secrets_and_namespaces() {
    let s = Server::start();
    assert_eq!(
        s.kubectl_ok(&["create", "namespace", "team-a"]).trim(),
        "namespace/team-a created"
    );
    let ns = s.kubectl_ok(&["get", "namespaces"]);
    assert!(
        ns.lines()
            .next()
            .is_some_and(|h| h.contains("NAME") && h.contains("STATUS") && h.contains("AGE")),
        "{ns}"
    );
    assert!(
        ns.contains("team-a") && ns.contains("Active") && ns.contains("default"),
        "{ns}"
    );

    let out = s.kubectl_ok(&[
        "create",
        "secret",
        "generic",
        "repo-auth",
        "-n",
        "team-a",
        "--type=kubernetes.io/basic-auth",
        "--from-literal=username=nephio",
        "--from-literal=password=s3cr3t",
    ]);
    assert_eq!(out.trim(), "secret/repo-auth created");
    let table = s.kubectl_ok(&["get", "secrets", "-n", "team-a"]);
    assert!(
        table.contains("repo-auth")
            && table.contains("kubernetes.io/basic-auth")
            && table.contains('2'),
        "{table}"
    );
    let pw = s.kubectl_ok(&[
        "get",
        "secret",
        "repo-auth",
        "-n",
        "team-a",
        "-o",
        "jsonpath={.data.password}",
    ]);
    assert_eq!(pw, "czNjcjN0");
    assert_eq!(
        s.kubectl_ok(&["label", "secret", "repo-auth", "-n", "team-a", "app=porch"])
            .trim(),
        "secret/repo-auth labeled"
    );
    let out = s.kubectl_ok(&[
        "patch",
        "secret",
        "repo-auth",
        "-n",
        "team-a",
        "-p",
        r#"{"stringData":{"password":"new"}}"#,
    ]);
    assert_eq!(out.trim(), "secret/repo-auth patched");
    let pw = s.kubectl_ok(&[
        "get",
        "secret",
        "repo-auth",
        "-n",
        "team-a",
        "-o",
        "jsonpath={.data.password}",
    ]);
    assert_eq!(pw, "bmV3");
    assert!(
        !s.log().contains("s3cr3t"),
        "secret data must never be logged"
    );

    // ConfigMaps (what PackageVariant injection reads) are served like Secrets.
    let out = s.kubectl_ok(&[
        "create",
        "configmap",
        "site",
        "-n",
        "team-a",
        "--from-literal=region=eu-west",
        "--from-literal=zone=b",
    ]);
    assert_eq!(out.trim(), "configmap/site created");
    let table = s.kubectl_ok(&["get", "cm", "-n", "team-a"]);
    assert!(table.contains("site") && table.contains("DATA"), "{table}");
    let region = s.kubectl_ok(&[
        "get",
        "configmap",
        "site",
        "-n",
        "team-a",
        "-o",
        "jsonpath={.data.region}",
    ]);
    assert_eq!(region, "eu-west");

    // Secrets cannot go into a namespace that does not exist.
    let out = s.kubectl(&[
        "create",
        "secret",
        "generic",
        "x",
        "-n",
        "nowhere",
        "--from-literal=a=b",
    ]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("namespaces \"nowhere\" not found"));

    // Deleting the namespace deletes its secrets.
    assert_eq!(
        s.kubectl_ok(&["delete", "namespace", "team-a"]).trim(),
        "namespace \"team-a\" deleted"
    );
    let out = s.kubectl_ok(&["get", "secrets", "-A", "-o", "name"]);
    assert!(out.trim().is_empty(), "{out}");
    let out = s.kubectl(&["delete", "namespace", "default"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("(Forbidden)"));

    // The store file is readable by the server user only (no file with PostgreSQL).
    #[cfg(unix)]
    if s.pg.is_none() {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(s.data_dir().join("store.redb"))
            .expect("store")
            .permissions()
            .mode();
        assert_eq!(mode & 0o077, 0, "store mode {mode:o}");
    }
}

#[test]
fn get_watch_streams_changes() {
    let s = Server::start();
    // One object up front, so kubectl prints the list before watching.
    let first = s.write_file(
        "first.yaml",
        &repo_yaml("first", "https://127.0.0.1:1/f.git"),
    );
    s.kubectl_ok(&["apply", "-f", first.to_str().expect("utf8")]);
    let mut child = Command::new(KUBECTL)
        .args(["get", "repositories", "-w"])
        .env("KUBECONFIG", s.kubeconfig())
        .env("HOME", s.home.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubectl -w");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !seen.iter().any(|l: &String| l.starts_with("first")) {
        assert!(Instant::now() < deadline, "no initial list: {seen:?}");
        if let Ok(line) = rx.recv_timeout(Duration::from_millis(200)) {
            seen.push(line);
        }
    }
    let file = s.write_file("w.yaml", &repo_yaml("watched", "https://127.0.0.1:1/w.git"));
    s.kubectl_ok(&["apply", "-f", file.to_str().expect("utf8")]);
    while Instant::now() < deadline {
        if let Ok(line) = rx.recv_timeout(Duration::from_millis(200)) {
            seen.push(line);
            if seen
                .iter()
                .any(|l| l.starts_with("watched") && l.contains("False"))
            {
                break;
            }
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        seen[0].contains("NAME") && seen[0].contains("ADDRESS"),
        "{seen:?}"
    );
    // Created, then the controller's status update (Ready=False: nothing listens on port 1).
    let rows: Vec<&String> = seen.iter().filter(|l| l.starts_with("watched")).collect();
    assert!(rows.len() >= 2, "{seen:?}");
    assert!(rows.last().is_some_and(|r| r.contains("False")), "{seen:?}");
}

#[test]
fn server_side_apply_and_explain() {
    let s = Server::start();
    let file = s.write_file("ssa.yaml", &repo_yaml("ssa", "https://127.0.0.1:1/s.git"));
    let f = file.to_str().expect("utf8");
    assert_eq!(
        s.kubectl_ok(&["apply", "--server-side", "-f", f]).trim(),
        "repository.config.porch.kpt.dev/ssa serverside-applied"
    );
    let changed = repo_yaml("ssa", "https://127.0.0.1:1/s.git")
        .replace("description: test repo", "description: via ssa");
    let file = s.write_file("ssa2.yaml", &changed);
    s.kubectl_ok(&["apply", "--server-side", "-f", file.to_str().expect("utf8")]);
    assert_eq!(
        s.kubectl_ok(&["get", "repo", "ssa", "-o", "jsonpath={.spec.description}"]),
        "via ssa"
    );
    let explain = s.kubectl_ok(&["explain", "repositories.spec.git"]);
    assert!(
        explain.contains("KIND:       Repository") && explain.contains("branch"),
        "{explain}"
    );
    let wide = s.kubectl_ok(&["get", "repositories", "-o", "wide"]);
    assert!(
        wide.lines().next().is_some_and(|h| h.contains("BRANCH")),
        "{wide}"
    );
}
