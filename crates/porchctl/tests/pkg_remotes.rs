//! `porchctl pkg get|update` (the binary) against real remotes: the smart-HTTP server
//! with basic auth, credentials coming from a git credential helper or the URL as
//! they do for kpt, and OpenSSH's sshd with a key given through `GIT_SSH_COMMAND`;
//! the package URL forms kpt accepts, the default branch, and kpt's destination rule.
//! Every run has its own `HOME` and global git config, so nothing of the machine's
//! git setup leaks in.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use porch_testkit::{GitServer, SshServer, repos};

const USER: &str = "porch";
const PASS: &str = "s3cret-pass";

/// A bare `org/up.git` whose default branch is `trunk`: v1 and v2 of package `pkg`
/// (tags `v1`, `v2`, and `pkg/v1` which kpt prefers for directory `pkg`).
fn upstream(root: &Path) {
    let repo = repos::init_bare(&root.join("org/up.git"), "trunk").expect("init");
    let kptfile = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\ninfo:\n  description: upstream\n";
    for (tag, value) in [("v1", "1"), ("v2", "2")] {
        let cm = format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: \"{value}\"\n"
        );
        let oid = repos::commit_files(
            &repo,
            "trunk",
            &repos::files(&[("pkg/Kptfile", kptfile), ("pkg/cm.yaml", &cm)]),
            tag,
        )
        .expect("commit");
        let obj = repo.find_object(oid, None).expect("commit object");
        repo.tag_lightweight(tag, &obj, false).expect("tag");
        if tag == "v1" {
            repo.tag_lightweight("pkg/v1", &obj, false).expect("tag");
        }
    }
}

struct Env {
    tmp: tempfile::TempDir,
    vars: Vec<(String, String)>,
}

impl Env {
    /// An isolated HOME with an empty global git config.
    fn new() -> Env {
        let tmp = tempfile::tempdir().expect("tempdir");
        let home = tmp.path().join("home");
        std::fs::create_dir_all(&home).expect("home");
        std::fs::create_dir_all(tmp.path().join("work")).expect("work");
        let config = home.join(".gitconfig");
        std::fs::write(&config, "").expect("gitconfig");
        let vars = vec![
            ("HOME".into(), home.display().to_string()),
            ("GIT_CONFIG_GLOBAL".into(), config.display().to_string()),
            ("GIT_CONFIG_NOSYSTEM".into(), "1".into()),
        ];
        Env { tmp, vars }
    }

    fn srv(&self) -> PathBuf {
        self.tmp.path().join("srv")
    }

    fn work(&self) -> PathBuf {
        self.tmp.path().join("work")
    }

    /// Store `url`'s credentials with git's `store` helper (as `git credential
    /// approve` would after a login).
    fn store_credentials(&self, url_with_userinfo: &str) {
        let home = self.tmp.path().join("home");
        let store = home.join(".git-credentials");
        std::fs::write(&store, format!("{url_with_userinfo}\n")).expect("store");
        std::fs::write(
            home.join(".gitconfig"),
            format!(
                "[credential]\n\thelper = store --file={}\n",
                store.display()
            ),
        )
        .expect("gitconfig");
    }

    fn porchctl(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_porchctl"))
            .args(args)
            .current_dir(self.work())
            .envs(self.vars.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .output()
            .expect("porchctl runs")
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.porchctl(args);
        assert!(
            out.status.success(),
            "porchctl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    }

    fn fails(&self, args: &[&str]) -> String {
        let out = self.porchctl(args);
        assert!(!out.status.success(), "porchctl {args:?} succeeded");
        String::from_utf8_lossy(&out.stderr).into_owned()
    }

    fn read(&self, p: &str) -> String {
        std::fs::read_to_string(self.work().join(p)).unwrap_or_default()
    }
}

/// get at v1, edit locally, update to v2: upstream's change and the local edit both
/// land, and the Kptfile records the repository without credentials.
fn get_edit_update(env: &Env, url: &str, repo: &str) {
    env.ok(&["pkg", "get", &format!("{url}/pkg@v1"), "local"]);
    let kf = env.read("local/Kptfile");
    assert!(kf.contains(&format!("repo: {repo}\n")), "{kf}");
    assert!(kf.contains("ref: pkg/v1\n"), "{kf}");
    assert!(!kf.contains(PASS), "{kf}");
    let cm = env.read("local/cm.yaml");
    assert!(cm.contains("a: \"1\""), "{cm}");
    std::fs::write(
        env.work().join("local/cm.yaml"),
        format!("{cm}  mine: \"x\"\n"),
    )
    .expect("edit");
    env.ok(&["pkg", "update", "local@v2"]);
    let cm = env.read("local/cm.yaml");
    assert!(
        cm.contains("a: \"2\"") && cm.contains("mine: \"x\""),
        "{cm}"
    );
    let kf = env.read("local/Kptfile");
    assert!(kf.contains("ref: v2\n"), "{kf}");
}

#[test]
fn basic_auth_from_a_credential_helper() {
    let env = Env::new();
    upstream(&env.srv());
    let git = GitServer::start(env.srv(), Some((USER, PASS))).expect("git server");
    let base = git.url_for("org/up.git");
    let repo = git.url_for("org/up");

    // No credentials: a clear error naming the repository, nothing written.
    let err = env.fails(&["pkg", "get", &format!("{base}/pkg@v1"), "denied"]);
    assert!(err.contains(&repo), "{err}");
    assert!(err.contains("credential"), "{err}");
    assert!(!env.work().join("denied").exists());

    let host = repo.trim_start_matches("http://");
    let host = &host[..host.find('/').expect("path")];
    env.store_credentials(&format!("http://{USER}:{PASS}@{host}"));
    get_edit_update(&env, &base, &repo);
}

#[test]
fn basic_auth_in_the_url_is_never_shown() {
    let env = Env::new();
    upstream(&env.srv());
    let git = GitServer::start(env.srv(), Some((USER, PASS))).expect("git server");
    let with = |pass: &str| {
        git.url_for("org/up.git")
            .replacen("://", &format!("://{USER}:{pass}@"), 1)
    };
    let err = env.fails(&["pkg", "get", &format!("{}/pkg@v1", with("wrong-pass")), "x"]);
    assert!(!err.contains("wrong-pass"), "{err}");
    assert!(err.contains(&format!("{USER}:***@")), "{err}");
    env.ok(&["pkg", "get", &format!("{}/pkg@v1", with(PASS)), "local"]);
    assert!(env.read("local/cm.yaml").contains("a: \"1\""));
}

#[test]
fn ssh_with_a_key_from_git_ssh_command() {
    let mut env = Env::new();
    upstream(&env.srv());
    let sshd = SshServer::start(env.srv()).expect("sshd");
    env.vars.push((
        "GIT_SSH_COMMAND".into(),
        format!(
            "ssh -i {} -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile={}",
            sshd.client_key().display(),
            sshd.known_hosts().display()
        ),
    ));
    let base = sshd.url_for("org/up.git");
    get_edit_update(&env, &base, &sshd.url_for("org/up"));
}

#[test]
fn url_forms_default_branch_and_destination_as_kpt() {
    let env = Env::new();
    upstream(&env.srv());
    let git = GitServer::start(env.srv(), None).expect("git server");
    let base = git.url_for("org/up.git");

    // Without `.git` (and not GitHub) the repository boundary is unknown: kpt refuses.
    let err = env.fails(&["pkg", "get", &git.url_for("org/up/pkg@v1"), "x"]);
    assert!(err.contains("specify '.git'"), "{err}");

    // No version: the remote's default branch (here `trunk`).
    env.ok(&["pkg", "get", &format!("{base}/pkg"), "head"]);
    assert!(env.read("head/Kptfile").contains("ref: trunk\n"));
    assert!(env.read("head/cm.yaml").contains("a: \"2\""));

    // `REPO.git@ref`: the repository root as the package.
    env.ok(&["pkg", "get", &format!("{base}@v1"), "whole"]);
    assert!(env.read("whole/Kptfile").contains("directory: /\n"));
    assert!(env.read("whole/pkg/cm.yaml").contains("a: \"1\""));

    // An existing directory receives the package in a sub-directory named after it.
    std::fs::create_dir_all(env.work().join("into")).expect("mkdir");
    env.ok(&["pkg", "get", &format!("{base}/pkg@v2"), "into"]);
    assert!(env.read("into/pkg/cm.yaml").contains("a: \"2\""));
    assert!(env.read("into/pkg/Kptfile").contains("name: pkg\n"));
    let err = env.fails(&["pkg", "get", &format!("{base}/pkg@v2"), "into"]);
    assert!(err.contains("already exists"), "{err}");

    // A missing ref names the repository and the ref.
    let err = env.fails(&["pkg", "get", &format!("{base}/pkg@v9"), "v9"]);
    assert!(err.contains("\"v9\"") && err.contains("org/up"), "{err}");
}

/// kpt's `pkg update` without `--strategy` is a resource-merge and records it in the
/// Kptfile, whatever `pkg get --strategy` chose; a package without an upstream is
/// refused in kpt's words before anything is printed about it.
#[test]
fn update_without_a_strategy_is_a_resource_merge() {
    let env = Env::new();
    upstream(&env.srv());
    let url = format!("file://{}", env.srv().join("org/up.git").display());
    env.ok(&[
        "pkg",
        "get",
        &format!("{url}/pkg@v1"),
        "local",
        "--strategy",
        "fast-forward",
    ]);
    assert!(
        env.read("local/Kptfile")
            .contains("updateStrategy: fast-forward\n")
    );
    let cm = env.read("local/cm.yaml");
    std::fs::write(
        env.work().join("local/cm.yaml"),
        format!("{cm}  mine: \"x\"\n"),
    )
    .expect("edit");
    // fast-forward would refuse the local edit; the default merges it.
    let err = env.ok(&["pkg", "update", "local@v2"]);
    assert!(err.starts_with("Package \"local\":\n"), "{err}");
    let cm = env.read("local/cm.yaml");
    assert!(
        cm.contains("a: \"2\"") && cm.contains("mine: \"x\""),
        "{cm}"
    );
    assert!(
        env.read("local/Kptfile")
            .contains("updateStrategy: resource-merge\n")
    );

    std::fs::create_dir_all(env.work().join("plain")).expect("mkdir");
    std::fs::write(
        env.work().join("plain/Kptfile"),
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: plain\n",
    )
    .expect("kptfile");
    let err = env.fails(&["pkg", "update", "plain"]);
    assert_eq!(err, "Error: package must have an upstream reference \n");
}
