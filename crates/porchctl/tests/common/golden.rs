//! Replays one upstream CLI golden case (`cli-goldens/<case>/config.yaml`) the way Porch's
//! own harness does (test/e2e/cli/suite.go): same commands, the git server URL rewritten
//! to the fixture's, and only upstream's normalisations before comparing exit code,
//! stdout and stderr.
//!
//! Environment differences that are not output normalisations: `/tmp/porch-e2e` becomes a
//! per-case temporary directory (cases run in parallel), `kpt fn eval` runs as
//! `porchctl fn eval` (the same functions, native), and `kubectl` is the one on PATH.
//! The `kpt` steps prepare files; their exit code and effect are checked but not their
//! console text, which is the recording kpt release's (`[RUNNING] "<image>" on 1
//! resource(s)`); `porchctl fn eval` prints what the current kpt (1.0.0-beta.56) prints.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use porch_testkit::{GitServer, repos};
use serde_json::Value;

pub use super::normalise::{
    clean_stderr, collapse_spaces, reorder_lines, replace_any, strip_columns, yaml_value,
};
use super::{PASS, PEOPLE, Server, USER, create_namespace, wait_ready};

/// The git server address the goldens were recorded against.
pub const UPSTREAM_GIT: &str = "http://gitea.gitea.svc.cluster.local:3000";

/// One command of a case.
#[derive(Debug)]
struct Step {
    args: Vec<String>,
    stdin: Option<String>,
    stdout: String,
    stderr: String,
    exit_code: i64,
    yaml: bool,
    ignore_whitespace: bool,
    contains_error: bool,
    /// Newer harness: tabs of stderr read as two spaces.
    stderr_tabs: bool,
    /// Newer harness: table columns left out of both sides by header name.
    ignore_columns: Vec<String>,
}

fn steps(doc: &Value) -> Vec<Step> {
    let s = |c: &Value, k: &str| c.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let b = |c: &Value, k: &str| c.get(k).and_then(Value::as_bool).unwrap_or(false);
    doc["commands"]
        .as_array()
        .expect("commands")
        .iter()
        .map(|c| Step {
            args: c["args"]
                .as_array()
                .expect("args")
                .iter()
                .map(|a| a.as_str().expect("arg").to_string())
                .collect(),
            stdin: c.get("stdin").and_then(Value::as_str).map(str::to_string),
            stdout: s(c, "stdout"),
            stderr: s(c, "stderr"),
            exit_code: c.get("exitCode").and_then(Value::as_i64).unwrap_or(0),
            yaml: b(c, "yaml"),
            ignore_whitespace: b(c, "ignoreWhitespace"),
            contains_error: b(c, "containsErrorString"),
            stderr_tabs: b(c, "stdErrTabToWhitespace"),
            ignore_columns: c
                .get("ignoreColumns")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default(),
        })
        .collect()
}

/// The git fixture: `nephio/test-blueprints.git` from the bundle and a fresh
/// `nephio/porch-test.git` with one commit on `main`; pushes need basic auth, reads do not
/// (both repositories are public on the upstream harness's Gitea).
pub fn git_fixture(root: &Path, bundle: &Path) -> GitServer {
    git_fixture_with(root, bundle, &[])
}

/// `git_fixture` plus a fresh `nephio/<name>.git` (one commit on `main`) per `extra`: the
/// older upstream harness gave each case a repository named after it.
pub fn git_fixture_with(root: &Path, bundle: &Path, extra: &[&str]) -> GitServer {
    git_fixture_in(root, bundle, extra, USER)
}

/// The Gitea organisation (also its user) a case's commands name: kptdev/porch's harness
/// hosts the repositories under `porch/` and pushes as `porch`, Nephio's under `nephio/`.
pub fn case_org(config: &str) -> &'static str {
    let kptdev = ["porch-test", "test-blueprints"]
        .iter()
        .any(|repo| config.contains(&format!("{UPSTREAM_GIT}/porch/{repo}")));
    if kptdev { "porch" } else { USER }
}

/// `git_fixture_with` with the repositories under `org/`, pushed to as user `org`.
pub fn git_fixture_in(root: &Path, bundle: &Path, extra: &[&str], org: &str) -> GitServer {
    repos::bare_from_bundle(bundle, &root.join(format!("{org}/test-blueprints.git")))
        .expect("bundle");
    for name in std::iter::once("porch-test").chain(extra.iter().copied()) {
        let repo = repos::init_bare(&root.join(format!("{org}/{name}.git")), "main").expect("init");
        repos::commit_files(
            &repo,
            "main",
            &repos::files(&[("README.md", "# Test Go-Git Repo\nCreated programmatically.")]),
            "Initial commit",
        )
        .expect("commit");
    }
    GitServer::start_public_read(root, (org, PASS)).expect("git server")
}

fn kubectl() -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join("kubectl"))
            .find(|p| p.is_file())
    })
}

/// Where the cases are: `$PORCH_CLI_GOLDENS_DIR` (a directory of `<case>/config.yaml`,
/// e.g. upstream cases reconstructed in a scratch directory), else the conformance data's
/// `porch/cli-goldens`.
pub fn cases_dir(conformance: &Path) -> PathBuf {
    std::env::var_os("PORCH_CLI_GOLDENS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| conformance.join("porch/cli-goldens"))
}

/// The case directories under `dir` (those holding a `config.yaml`), sorted.
pub fn case_names(dir: &Path) -> Vec<String> {
    let mut found: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter(|e| e.path().join("config.yaml").is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

/// The default roles a non-admin golden user holds in the case's namespace: together what
/// the upstream harness's cluster-admin needs for these commands (docs/security.md).
pub const GOLDEN_ROLES: [&str; 3] = ["porch-author", "porch-approver", "porch-repository-admin"];

/// Who runs a case's commands.
#[derive(Clone, Copy, Debug)]
pub enum Identity<'a> {
    /// The server's admin (`system:masters`), as the upstream harness's cluster-admin.
    Admin,
    /// One token user holding all of `GOLDEN_ROLES` in the case's namespace.
    User(&'a str),
    /// `PEOPLE`, each in one role in the case's namespace, each command run by the one
    /// whose job it is: `repo` commands by the repository admin (`porch-repository-admin`),
    /// `rpkg approve`/`reject`/`delete` by the approver (`porch-approver`; deleting a revision
    /// proposed for deletion approves the proposal), everything else (drafts,
    /// reads, kubectl) by the author (`porch-author`).
    People,
}

impl Identity<'_> {
    pub fn name(&self) -> String {
        match self {
            Identity::Admin => "admin".into(),
            Identity::User(u) => (*u).to_string(),
            Identity::People => PEOPLE.join("/"),
        }
    }
}

/// Which of `PEOPLE` runs `args` (see `Identity::People`).
pub fn person_for(args: &[String]) -> &'static str {
    let [carol, alice, bob] = PEOPLE;
    match (
        args.get(1).map(String::as_str),
        args.get(2).map(String::as_str),
    ) {
        (Some("repo"), _) => carol,
        (Some("rpkg"), Some("approve" | "reject" | "delete" | "del")) => bob,
        _ => alice,
    }
}

/// Binds `user` to each of `GOLDEN_ROLES` with a RoleBinding in `namespace`.
pub async fn bind_golden_roles(admin: &kube::Client, namespace: &str, user: &str) {
    for role in GOLDEN_ROLES {
        bind(admin, namespace, user, role).await;
    }
}

/// Binds `user` to the ClusterRole `role` with a RoleBinding in `namespace`.
pub async fn bind(admin: &kube::Client, namespace: &str, user: &str, role: &str) {
    use k8s_openapi::api::rbac::v1::RoleBinding;
    use kube::api::{Api, PostParams};
    let api: Api<RoleBinding> = Api::namespaced(admin.clone(), namespace);
    let rb: RoleBinding = serde_json::from_value(serde_json::json!({
        "metadata": {"name": format!("{user}-{role}")},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}],
    }))
    .expect("rolebinding");
    match api.create(&PostParams::default(), &rb).await {
        // A second case in `default` on a shared server: already bound.
        Ok(_) => {}
        Err(kube::Error::Api(status)) if status.code == 409 => {}
        Err(e) => panic!("create rolebinding: {e}"),
    }
}

/// Runs the case on a server of its own as the admin; returns the mismatches (empty when
/// it passes), or `Err` with why the case cannot run here. `conformance` holds the blueprint
/// bundle; the case is read from `cases`.
pub async fn run_case(conformance: &Path, cases: &Path, case: &str) -> Result<Vec<String>, String> {
    let server = Server::start();
    run_case_on(&server, Identity::Admin, conformance, cases, case).await
}

/// Runs the case on `server` as `who` (a token user of the server: `Server::start_with_user`
/// or `start_with_people`), bound by RoleBindings in the case's namespace to the default
/// roles only. Cases share a server through their own namespaces.
pub async fn run_case_on(
    server: &Server,
    who: Identity<'_>,
    conformance: &Path,
    cases: &Path,
    case: &str,
) -> Result<Vec<String>, String> {
    let config = cases.join(format!("{case}/config.yaml"));
    let text =
        std::fs::read_to_string(&config).map_err(|e| format!("{}: {e}", config.display()))?;
    let doc: Value = serde_yaml::from_str(&text).expect("golden yaml");
    let bundle = conformance.join("porch/test-blueprints.bundle");
    // `defaultNamespace: true`: the commands carry no --namespace and act in the
    // kubeconfig's namespace, `default`.
    let namespace = if doc.get("defaultNamespace").and_then(Value::as_bool) == Some(true) {
        "default"
    } else {
        case
    };
    if let Some(why) = doc
        .get("skip")
        .and_then(Value::as_str)
        .filter(|w| !w.is_empty())
    {
        eprintln!("{case}: skipped as upstream skips it: {why}");
        return Ok(Vec::new());
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let own_repo = [case];
    let extra: &[&str] = if case == "porch-test" || case == "test-blueprints" {
        &[]
    } else {
        &own_repo
    };
    let git = git_fixture_in(&tmp.path().join("srv"), &bundle, extra, case_org(&text));
    // Upstream runs the commands from the directory holding `testdata/` (the cases), so a
    // case's `sh` step reaches its files as `../testdata/...`.
    let workdir = cases.parent().unwrap_or(cases).to_path_buf();
    let base = git.url_for("");
    let base = base.trim_end_matches('/').to_string();
    let scratch = tmp.path().join("porch-e2e");
    std::fs::create_dir_all(&scratch).expect("scratch dir");
    let scratch = scratch.to_str().expect("utf8 path").to_string();
    let rewrite = |s: &str| {
        s.replace(UPSTREAM_GIT, &base)
            .replace("/tmp/porch-e2e", &scratch)
    };

    let client = server.client().await;
    if namespace != "default" {
        create_namespace(&client, namespace).await;
    }
    match who {
        Identity::Admin => {}
        Identity::User(user) => bind_golden_roles(&client, namespace, user).await,
        Identity::People => {
            let roles = ["porch-repository-admin", "porch-author", "porch-approver"];
            for (person, role) in PEOPLE.iter().zip(roles) {
                bind(&client, namespace, person, role).await;
            }
        }
    }
    let kubeconfig_for = |args: &[String]| match who {
        Identity::Admin => server.kubeconfig(),
        Identity::User(user) => server.kubeconfig_of(user),
        Identity::People => server.kubeconfig_of(person_for(args)),
    };
    let porchctl = PathBuf::from(env!("CARGO_BIN_EXE_porchctl"));
    let mut failures = Vec::new();
    for (i, step) in steps(&doc).into_iter().enumerate() {
        let args: Vec<String> = step.args.iter().map(|a| rewrite(a)).collect();
        let program = match args[0].as_str() {
            "porchctl" | "kpt" => porchctl.clone(),
            "kubectl" => kubectl().ok_or("kubectl not found on PATH")?,
            other => PathBuf::from(other),
        };
        let mut cmd = Command::new(&program);
        cmd.args(&args[1..])
            .current_dir(&workdir)
            .env("KUBECONFIG", kubeconfig_for(&args))
            .env("HOME", tmp.path())
            .stdin(if step.stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().map_err(|e| format!("{program:?}: {e}"))?;
        if let (Some(input), Some(mut pipe)) = (&step.stdin, child.stdin.take()) {
            use std::io::Write;
            pipe.write_all(input.as_bytes()).expect("stdin");
        }
        let out = child.wait_with_output().expect("wait");
        let got_out = String::from_utf8_lossy(&out.stdout).into_owned();
        let mut got_err = clean_stderr(&String::from_utf8_lossy(&out.stderr));
        if step.stderr_tabs {
            got_err = got_err.replace('\t', "  ");
        }
        let mut want_out = rewrite(&step.stdout);
        let mut want_err = rewrite(&step.stderr);
        let label = format!("#{i} {}", step.args.join(" "));
        let code = i64::from(out.status.code().unwrap_or(-1));
        if code != step.exit_code {
            failures.push(format!(
                "{label}\n  exit code: got {code}, want {}\n  stderr: {got_err}",
                step.exit_code
            ));
        }
        let yaml = if step.yaml && !got_out.is_empty() {
            yaml_value(&got_out)
        } else {
            None
        };
        if let Some(got) = yaml {
            let want = yaml_value(&want_out).unwrap_or(Value::Null);
            if got != want {
                failures.push(format!(
                    "{label}\n  stdout (yaml) differs:\n--- want\n{}\n--- got\n{}",
                    serde_yaml::to_string(&want).unwrap_or_default(),
                    serde_yaml::to_string(&got).unwrap_or_default()
                ));
            }
        } else {
            // Output that is not YAML stays as it is; other output is reordered.
            let mut got_out = if step.yaml {
                got_out
            } else {
                reorder_lines(&got_out)
            };
            if !step.ignore_columns.is_empty() {
                got_out = strip_columns(&got_out, &step.ignore_columns);
                want_out = strip_columns(&want_out, &step.ignore_columns);
            }
            if step.ignore_whitespace {
                want_out = collapse_spaces(&want_out);
                got_out = collapse_spaces(&got_out);
            }
            want_out = replace_any(&want_out, &got_out);
            if got_out != want_out {
                failures.push(format!(
                    "{label}\n  stdout differs:\n--- want\n{want_out}--- got\n{got_out}"
                ));
            }
        }
        if step.ignore_whitespace {
            want_err = collapse_spaces(&want_err);
            got_err = collapse_spaces(&got_err);
        }
        let stderr_ok = if step.contains_error {
            got_err.contains(&want_err)
        } else {
            got_err == want_err
        };
        let third_party = args[0] == "kpt";
        if !stderr_ok && !third_party {
            failures.push(format!(
                "{label}\n  stderr differs{}:\n--- want\n{want_err}\n--- got\n{got_err}",
                if step.contains_error {
                    " (substring)"
                } else {
                    ""
                }
            ));
        }
        if args.iter().any(|a| a == "register" || a == "reg")
            && let Some(name) = args.iter().find_map(|a| a.strip_prefix("--name="))
        {
            wait_ready(&client, namespace, name).await;
        }
    }
    if !failures.is_empty() {
        // On a shared server the tail may show other cases' requests too.
        failures.push(format!("server log tail:\n{}", tail(&server.log(), 40)));
    }
    Ok(failures)
}

fn tail(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}
