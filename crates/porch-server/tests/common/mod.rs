//! Test harness: spawns the real `porch-server` binary on a temporary data directory and
//! talks to it with kubectl 1.32 and a kube-rs client.
//!
//! The test-matrix switch `PORCH_TEST_STORE`: `postgres` runs every server of the suites on a
//! PostgreSQL of its own (`--store postgres://…`); `postgres-3` (any `postgres-<n>`) runs
//! each as a replica set instead: n replicas on one PostgreSQL, sharing one CA, admin token
//! and ServiceAccount key, behind one address (a round-robin TCP proxy), so that kubectl,
//! kube-rs and porchctl reach every replica through the kubeconfig the suites read.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub const KUBECTL: &str = "/usr/lib/google-cloud-sdk/bin/kubectl.1.32";

/// A running server; killed on drop.
pub struct Server {
    pub dir: tempfile::TempDir,
    pub home: tempfile::TempDir,
    pub child: Option<Child>,
    pub port: u16,
    /// Extra flags of the next (re)start.
    pub extra: Vec<String>,
    /// Extra environment variables of the next (re)start.
    pub envs: Vec<(String, String)>,
    /// Start with `--allow-local-repositories /` (the tests' remotes are `file://` paths);
    /// see [`Server::start_strict`].
    pub allow_local: bool,
    /// The PostgreSQL the server stores into, with `PORCH_TEST_STORE=postgres` (the test
    /// matrix switch: the same suites on PostgreSQL instead of the embedded store).
    pub pg: Option<porch_testkit::PostgresServer>,
    /// The other replicas and the proxy in front of all, with `PORCH_TEST_STORE=postgres-<n>`.
    pub set: Option<ReplicaSet>,
}

/// Replicas 1..n of a replica set (replica 0 is the [`Server`]'s own process and data
/// directory) and the proxy whose address the kubeconfig names.
pub struct ReplicaSet {
    pub proxy: porch_testkit::RoundRobinProxy,
    pub others: Vec<Replica>,
}

/// One more replica: its own data directory (git mirrors), the shared PostgreSQL.
pub struct Replica {
    pub dir: tempfile::TempDir,
    pub child: Option<Child>,
    pub port: u16,
}

impl Replica {
    fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }
}

/// How many replicas `PORCH_TEST_STORE` asks for on PostgreSQL; `None` for the embedded store.
pub fn test_replicas() -> Option<usize> {
    match std::env::var("PORCH_TEST_STORE").as_deref() {
        Ok("postgres") => Some(1),
        Ok(v) => v
            .strip_prefix("postgres-")
            .and_then(|n| n.parse().ok())
            .filter(|n| *n >= 1),
        _ => None,
    }
}

impl Server {
    pub fn start() -> Self {
        Self::start_with(&[])
    }

    /// Starts with extra flags (e.g. `--event-retention 10`), on the store
    /// `PORCH_TEST_STORE` asks for unless `extra` names one. An audit log is a file of one
    /// process (each replica writes its own), so a server with one is a single replica.
    pub fn start_with(extra: &[&str]) -> Self {
        let replicas = test_replicas().filter(|_| !extra.contains(&"--store"));
        let replicas = if extra.contains(&"--audit-log-path") {
            replicas.map(|n| n.min(1))
        } else {
            replicas
        };
        Self::start_on(replicas, extra)
    }

    /// A replica set whatever `PORCH_TEST_STORE` says: `n` replicas on a PostgreSQL of their
    /// own behind one address.
    pub fn start_replicas(n: usize, extra: &[&str]) -> Self {
        Self::start_on(Some(n), extra)
    }

    /// `replicas`: `None` for the embedded store, else that many replicas on PostgreSQL.
    fn start_on(replicas: Option<usize>, extra: &[&str]) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let home = tempfile::tempdir().expect("home tempdir");
        let extra: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        let pg = replicas.map(|_| porch_testkit::PostgresServer::start().expect("postgres"));
        let set = replicas.filter(|n| *n > 1).map(|n| ReplicaSet {
            proxy: porch_testkit::RoundRobinProxy::start(0, Vec::new()).expect("proxy"),
            others: (1..n)
                .map(|_| Replica {
                    dir: tempfile::tempdir().expect("replica tempdir"),
                    child: None,
                    port: 0,
                })
                .collect(),
        });
        let mut s = Server {
            dir,
            home,
            child: None,
            port: 0,
            extra,
            envs: Vec::new(),
            allow_local: true,
            pg,
            set,
        };
        s.spawn(0);
        s
    }

    /// Like [`Server::start_with`], without allowing local repository URLs: the server's
    /// default.
    pub fn start_strict(extra: &[&str]) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let home = tempfile::tempdir().expect("home tempdir");
        let mut s = Server {
            dir,
            home,
            child: None,
            port: 0,
            extra: extra.iter().map(|s| s.to_string()).collect(),
            envs: Vec::new(),
            allow_local: false,
            pg: None,
            set: None,
        };
        s.spawn(0);
        s
    }

    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// The data directory of every replica (one without a replica set): what an operator
    /// installs on each server, such as function binaries, goes into each.
    pub fn data_dirs(&self) -> Vec<PathBuf> {
        let mut dirs = vec![self.data_dir()];
        if let Some(set) = &self.set {
            dirs.extend(set.others.iter().map(Replica::data_dir));
        }
        dirs
    }

    pub fn kubeconfig(&self) -> PathBuf {
        self.data_dir().join("kubeconfig")
    }

    /// The server command for data directory `data` listening on `port`.
    fn command(&self, data: &Path, port: u16, log: &Path) -> Command {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .expect("log file");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_porch-server"));
        cmd.arg("--data-dir")
            .arg(data)
            .arg("--listen")
            .arg(format!("127.0.0.1:{port}"))
            .args(&self.extra)
            .args(if self.allow_local {
                &["--allow-local-repositories", "/"][..]
            } else {
                &[]
            })
            // Kept across restarts whatever a test does with `extra`.
            .args(
                self.pg
                    .as_ref()
                    .filter(|_| !self.extra.iter().any(|f| f == "--store"))
                    .map(|pg| vec!["--store".to_owned(), pg.url()])
                    .unwrap_or_default(),
            )
            // `envs` may override the log level.
            .env("RUST_LOG", "info")
            .envs(self.envs.iter().map(|(k, v)| (k, v)))
            .stdout(Stdio::null())
            .stderr(log);
        cmd
    }

    fn spawn(&mut self, port: u16) {
        let kc = self.kubeconfig();
        let _ = std::fs::remove_file(&kc);
        // A replica set keeps its address on the proxy; the replicas take fresh ports.
        let listen = if self.set.is_some() { 0 } else { port };
        let cmd = self.command(
            &self.data_dir(),
            listen,
            &self.dir.path().join("server.log"),
        );
        self.child = Some(spawn_child(cmd));
        self.port = self.wait_port(&kc, None);
        if self.set.is_some() {
            self.spawn_others();
        }
    }

    /// Waits for the kubeconfig the process writes and returns the port it names.
    fn wait_port(&mut self, kc: &Path, replica: Option<usize>) -> u16 {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(text) = std::fs::read_to_string(kc)
                && let Some(p) = parse_port(&text)
            {
                return p;
            }
            let child = match replica {
                None => self.child.as_mut(),
                Some(i) => self
                    .set
                    .as_mut()
                    .and_then(|s| s.others.get_mut(i))
                    .and_then(|r| r.child.as_mut()),
            };
            if let Some(c) = child
                && let Ok(Some(status)) = c.try_wait()
            {
                panic!("porch-server exited early ({status}): {}", self.log());
            }
            assert!(
                Instant::now() < deadline,
                "porch-server did not start: {}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Starts replicas 1..n with replica 0's CA, admin token and ServiceAccount key (as a
    /// deployment mounts one Secret into every pod), then points the proxy at all of them
    /// and replica 0's kubeconfig at the proxy.
    fn spawn_others(&mut self) {
        let n = self.set.as_ref().map_or(0, |s| s.others.len());
        let source = self.data_dir();
        for i in 0..n {
            let (data, log) = {
                let r = &self.set.as_ref().expect("replica set").others[i];
                (r.data_dir(), r.dir.path().join("server.log"))
            };
            // Whatever replica 0 made of them (`--insecure-http` makes no CA).
            for file in ["pki/ca.key", "pki/ca.crt", "pki/sa.key", "token"] {
                let to = data.join(file);
                if !to.exists() && source.join(file).exists() {
                    std::fs::create_dir_all(to.parent().expect("parent")).expect("replica dir");
                    std::fs::copy(source.join(file), &to).expect("copy shared credentials");
                }
            }
            let kc = data.join("kubeconfig");
            let _ = std::fs::remove_file(&kc);
            let child = spawn_child(self.command(&data, 0, &log));
            self.set.as_mut().expect("replica set").others[i].child = Some(child);
            let port = self.wait_port(&kc, Some(i));
            self.set.as_mut().expect("replica set").others[i].port = port;
        }
        let set = self.set.as_ref().expect("replica set");
        let mut ports = vec![self.port];
        ports.extend(set.others.iter().map(|r| r.port));
        set.proxy.set_backends(
            ports
                .iter()
                .map(|p| std::net::SocketAddr::from(([127, 0, 0, 1], *p)))
                .collect(),
        );
        let kc = self.kubeconfig();
        let text = std::fs::read_to_string(&kc).expect("kubeconfig");
        let text = text.replace(
            &format!("127.0.0.1:{}", self.port),
            &format!("127.0.0.1:{}", set.proxy.port()),
        );
        std::fs::write(&kc, text).expect("rewrite kubeconfig");
        self.port = set.proxy.port();
    }

    /// The kubeconfigs of every process (replica 0's names the proxy in a replica set).
    pub fn replica_kubeconfigs(&self) -> Vec<PathBuf> {
        let mut v = vec![self.kubeconfig()];
        if let Some(set) = &self.set {
            v.extend(set.others.iter().map(|r| r.data_dir().join("kubeconfig")));
        }
        v
    }

    /// The server's log (every replica's, one after the other, in a replica set).
    pub fn log(&self) -> String {
        let mut log =
            std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default();
        for (i, r) in self.set.iter().flat_map(|s| s.others.iter()).enumerate() {
            log.push_str(&format!("\n--- replica {} ---\n", i + 1));
            log.push_str(
                &std::fs::read_to_string(r.dir.path().join("server.log")).unwrap_or_default(),
            );
        }
        log
    }

    /// SIGKILL, then start again on the same port and data directory.
    pub fn kill9_and_restart(&mut self) {
        self.kill9();
        let port = self.port;
        self.spawn(port);
    }

    pub fn kill9(&mut self) {
        let others = self.set.iter_mut().flat_map(|s| s.others.iter_mut());
        for c in self
            .child
            .take()
            .into_iter()
            .chain(others.filter_map(|r| r.child.take()))
        {
            let mut c = c;
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// SIGTERM and wait for a clean exit (of every replica; replica 0's status).
    pub fn terminate(&mut self) -> std::process::ExitStatus {
        let others: Vec<Child> = self
            .set
            .iter_mut()
            .flat_map(|s| s.others.iter_mut())
            .filter_map(|r| r.child.take())
            .collect();
        for c in others {
            terminate_child(c);
        }
        terminate_child(self.child.take().expect("running"))
    }

    pub fn restart(&mut self) {
        if self.child.is_some() {
            self.terminate();
        }
        let port = self.port;
        self.spawn(port);
    }

    /// Polls `/readyz` until it answers 200 (every 10 ms, 60 s at most); returns a client.
    pub async fn wait_readyz(&self) -> kube::Client {
        // Every replica of a replica set, each through its own kubeconfig.
        for kc in self.replica_kubeconfigs().iter().skip(1) {
            self.wait_ready_at(&client_from(kc).await).await;
        }
        let client = self.client().await;
        self.wait_ready_at(&client).await;
        client
    }

    async fn wait_ready_at(&self, client: &kube::Client) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let req = http::Request::get("/readyz")
                .body(Vec::new())
                .expect("request");
            if client.request_text(req).await.is_ok() {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the server never became ready: {}",
                self.log()
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Waits until the process has exited (e.g. at a failpoint); returns its status. In a
    /// replica set: until one replica has, whichever took the request; the others are then
    /// killed, as if the whole deployment had crashed, so that [`Server::start_again`]
    /// starts them all.
    pub fn wait_exit(&mut self) -> std::process::ExitStatus {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let mut exited = None;
            if let Some(c) = self.child.as_mut()
                && let Ok(Some(s)) = c.try_wait()
            {
                exited = Some(s);
            }
            for r in self.set.iter_mut().flat_map(|s| s.others.iter_mut()) {
                if let Some(c) = r.child.as_mut()
                    && let Ok(Some(s)) = c.try_wait()
                {
                    exited = exited.or(Some(s));
                }
            }
            if let Some(s) = exited {
                self.kill9();
                return s;
            }
            assert!(
                self.child.is_some() && Instant::now() < deadline,
                "the server did not exit"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Starts again (same port and data directory) after the process has exited.
    pub fn start_again(&mut self) {
        assert!(self.child.is_none(), "still running");
        let port = self.port;
        self.spawn(port);
    }

    pub fn url(&self) -> String {
        format!("https://127.0.0.1:{}", self.port)
    }

    /// Runs kubectl 1.32 with the generated kubeconfig and a private HOME.
    pub fn kubectl(&self, args: &[&str]) -> Output {
        self.kubectl_stdin(args, None)
    }

    pub fn kubectl_stdin(&self, args: &[&str], stdin: Option<&str>) -> Output {
        let mut cmd = Command::new(KUBECTL);
        cmd.args(args)
            .env("KUBECONFIG", self.kubeconfig())
            .env("HOME", self.home.path())
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn kubectl");
        if let Some(input) = stdin {
            use std::io::Write;
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(input.as_bytes())
                .expect("write stdin");
        }
        child.wait_with_output().expect("kubectl output")
    }

    /// kubectl that must succeed; returns stdout.
    pub fn kubectl_ok(&self, args: &[&str]) -> String {
        let out = self.kubectl(args);
        assert!(
            out.status.success(),
            "kubectl {args:?} failed: {}\n{}\nserver log:\n{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout),
            self.log()
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn write_file(&self, name: &str, contents: &str) -> PathBuf {
        let p = self.dir.path().join(name);
        std::fs::write(&p, contents).expect("write fixture");
        p
    }

    /// A kube-rs client configured from the generated kubeconfig.
    pub async fn client(&self) -> kube::Client {
        client_from(&self.kubeconfig()).await
    }
}

pub async fn client_from(path: &Path) -> kube::Client {
    let kc = kube::config::Kubeconfig::read_from(path).expect("read kubeconfig");
    let cfg = kube::Config::from_custom_kubeconfig(kc, &kube::config::KubeConfigOptions::default())
        .await
        .expect("kube config");
    kube::Client::try_from(cfg).expect("kube client")
}

fn parse_port(kubeconfig: &str) -> Option<u16> {
    let start = kubeconfig.find("server: ")? + "server: ".len();
    let line = kubeconfig[start..].lines().next()?;
    line.trim()
        .trim_matches('"')
        .rsplit(':')
        .next()?
        .trim_end_matches('/')
        .parse()
        .ok()
}

fn spawn_child(mut cmd: Command) -> Child {
    cmd.spawn().expect("spawn porch-server")
}

/// SIGTERM and wait for a clean exit.
fn terminate_child(mut c: Child) -> std::process::ExitStatus {
    let _ = Command::new("kill")
        .arg("-TERM")
        .arg(c.id().to_string())
        .status();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(Some(s)) = c.try_wait() {
            return s;
        }
        assert!(Instant::now() < deadline, "server did not stop on SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill9();
    }
}

/// A Repository manifest.
pub fn repo_yaml(name: &str, url: &str) -> String {
    format!(
        "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: {name}\n  namespace: default\nspec:\n  type: git\n  description: test repo\n  git:\n    repo: {url}\n    branch: main\n    directory: /\n"
    )
}

/// Makes a real bare git repository with one commit on `main`; returns its `file://` URL.
pub fn fake_bare_repo(dir: &Path, name: &str) -> String {
    let work = dir.join(format!("{name}.work"));
    let bare = dir.join(name);
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(args)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .output()
            .expect("run git");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let w = work.to_str().expect("utf8 path");
    git(&["init", "-q", "-b", "main", w]);
    git(&["-C", w, "commit", "-q", "--allow-empty", "-m", "init"]);
    git(&[
        "clone",
        "-q",
        "--bare",
        w,
        bare.to_str().expect("utf8 path"),
    ]);
    format!("file://{}", bare.display())
}
pub mod porch;
