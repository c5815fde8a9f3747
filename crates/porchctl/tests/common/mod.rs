//! Shared by the porchctl integration tests: the real porch-server binary on a temporary
//! data directory, a namespace helper, and the smart-HTTP git fixture.
//!
//! Each test crate uses a subset of these helpers, hence the dead-code allowance.
#![allow(dead_code)]

pub mod golden;
pub mod normalise;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Once;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, PostParams};
use porch_api::Repository;

pub const USER: &str = "nephio";
pub const PASS: &str = "secret";

/// The porch-server binary: `$PORCH_SERVER_BIN`, else the one cargo built next to porchctl.
/// When missing (e.g. `cargo test -p porchctl` on a fresh tree) it is built once into a
/// separate target directory, so the build does not wait on the lock this test run holds.
pub fn porch_server_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("PORCH_SERVER_BIN") {
        return PathBuf::from(p);
    }
    let porchctl = Path::new(env!("CARGO_BIN_EXE_porchctl"));
    let beside = porchctl.with_file_name("porch-server");
    if beside.exists() {
        return beside;
    }
    static BUILD: Once = Once::new();
    let target = porchctl
        .parent()
        .and_then(Path::parent)
        .expect("target dir")
        .join("porchctl-it");
    BUILD.call_once(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "-p", "porch-server", "--target-dir"])
            .arg(&target)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("run cargo build -p porch-server");
        assert!(status.success(), "cargo build -p porch-server failed");
    });
    target.join("debug").join("porch-server")
}

/// A running porch-server on a temporary data directory; killed on drop.
pub struct Server {
    pub dir: tempfile::TempDir,
    child: Child,
}

/// A user of the `--token-auth-file` a server was started with (see `Server::start_with_user`).
pub const TOKEN_USER: &str = "golden-user";
/// The people of `Server::start_with_people`: a repository admin, an author, an approver.
pub const PEOPLE: [&str; 3] = ["carol", "alice", "bob"];

impl Server {
    pub fn start() -> Self {
        Self::start_with(&[])
    }

    /// A server that also knows the non-admin user `TOKEN_USER` (group `porch-users`) from a
    /// `--token-auth-file`; `user_kubeconfig` is its kubeconfig. It has no rights until bound.
    pub fn start_with_user() -> Self {
        Self::start_with_tokens(&[TOKEN_USER])
    }

    /// A server that knows each of `PEOPLE` by a token; `kubeconfig_of(name)` is theirs.
    pub fn start_with_people() -> Self {
        Self::start_with_tokens(&PEOPLE)
    }

    fn start_with_tokens(users: &[&str]) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let tokens = dir.path().join("tokens.csv");
        let token = |u: &str| format!("{u}-token-6f1d2c");
        let lines: String = users
            .iter()
            .enumerate()
            .map(|(i, u)| format!("{},{u},{},\"porch-users\"\n", token(u), 2001 + i))
            .collect();
        std::fs::write(&tokens, lines).expect("write token file");
        let s = Self::start_in(dir, &["--token-auth-file".as_ref(), tokens.as_os_str()]);
        let admin: serde_yaml::Value =
            serde_yaml::from_str(&std::fs::read_to_string(s.kubeconfig()).expect("kubeconfig"))
                .expect("kubeconfig yaml");
        for u in users {
            let mut user = admin.clone();
            user["users"] =
                serde_yaml::from_str(&format!("[{{name: {u}, user: {{token: {}}}}}]", token(u)))
                    .expect("users");
            user["contexts"][0]["context"]["user"] = (*u).into();
            std::fs::write(
                s.kubeconfig_of(u),
                serde_yaml::to_string(&user).expect("yaml"),
            )
            .expect("write user kubeconfig");
        }
        s
    }

    /// The kubeconfig of `TOKEN_USER` (only with `start_with_user`).
    pub fn user_kubeconfig(&self) -> PathBuf {
        self.kubeconfig_of(TOKEN_USER)
    }

    /// The kubeconfig of a token user of this server.
    pub fn kubeconfig_of(&self, user: &str) -> PathBuf {
        self.dir.path().join(format!("{user}.kubeconfig"))
    }

    pub fn start_with(extra: &[&std::ffi::OsStr]) -> Self {
        Self::start_in(tempfile::tempdir().expect("tempdir"), extra)
    }

    fn start_in(dir: tempfile::TempDir, extra: &[&std::ffi::OsStr]) -> Self {
        let data = dir.path().join("data");
        let log = std::fs::File::create(dir.path().join("server.log")).expect("log");
        let mut child = Command::new(porch_server_bin())
            .arg("--data-dir")
            .arg(&data)
            .args(["--listen", "127.0.0.1:0"])
            // The tests' remotes are file:// paths.
            .args(["--allow-local-repositories", "/"])
            .args(extra)
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("spawn porch-server");
        let kc = data.join("kubeconfig");
        let deadline = Instant::now() + Duration::from_secs(30);
        while !kc.exists() {
            if let Ok(Some(st)) = child.try_wait() {
                panic!("porch-server exited: {st}");
            }
            assert!(Instant::now() < deadline, "porch-server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        // The kubeconfig is written before the listener may accept; give it a moment.
        std::thread::sleep(Duration::from_millis(100));
        Server { dir, child }
    }

    pub fn kubeconfig(&self) -> PathBuf {
        self.dir.path().join("data").join("kubeconfig")
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
    }

    pub async fn client(&self) -> kube::Client {
        let kc = kube::config::Kubeconfig::read_from(self.kubeconfig()).expect("kubeconfig");
        let cfg = kube::Config::from_custom_kubeconfig(kc, &Default::default())
            .await
            .expect("config");
        kube::Client::try_from(cfg).expect("client")
    }

    /// porchctl with this server's kubeconfig and a private HOME.
    pub fn porchctl(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_porchctl"))
            .args(args)
            .env("KUBECONFIG", self.kubeconfig())
            .env("HOME", self.dir.path())
            .stdin(Stdio::null())
            .output()
            .expect("run porchctl")
    }

    /// porchctl as `user`, a token user of this server (`start_with_people`).
    pub fn porchctl_as(&self, user: &str, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_porchctl"))
            .args(args)
            .env("KUBECONFIG", self.kubeconfig_of(user))
            .env("HOME", self.dir.path())
            .stdin(Stdio::null())
            .output()
            .expect("run porchctl")
    }

    pub fn porchctl_ok(&self, args: &[&str]) -> String {
        let out = self.porchctl(args);
        assert!(
            out.status.success(),
            "porchctl {args:?} failed: {}\nserver log:\n{}",
            String::from_utf8_lossy(&out.stderr),
            self.log()
        );
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "",
            "stderr of {args:?}"
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub async fn create_namespace(client: &kube::Client, name: &str) {
    let ns: Namespace =
        serde_json::from_value(serde_json::json!({"metadata": {"name": name}})).expect("namespace");
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &ns)
        .await
        .expect("create namespace");
}

pub fn ready_status(r: &Repository) -> Option<String> {
    r.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == "Ready")
        .map(|c| c.status.clone())
}

/// Waits until the Repository `name` in `ns` is Ready.
pub async fn wait_ready(client: &kube::Client, ns: &str, name: &str) {
    let repos: Api<Repository> = Api::namespaced(client.clone(), ns);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let r = repos.get(name).await.expect("registered");
        if ready_status(&r).as_deref() == Some("True") {
            return;
        }
        assert!(Instant::now() < deadline, "never Ready: {:?}", r.status);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
