//! A smart-HTTP git server for tests: `git http-backend` as CGI behind a std::net shim.

use std::io::{BufReader, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use crate::TestkitError;
use crate::http::{self, Request};

/// Failure to inject into the next requests (fault tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Serve normally.
    None,
    /// Read a push's body, then close the connection without running receive-pack:
    /// the remote "goes away" mid-push and nothing is applied.
    DropReceivePack,
    /// Run receive-pack (refs are updated) but close the connection before answering:
    /// the client sees an error although the push was applied.
    LoseReceivePackResponse,
    /// Accept connections and never answer (a hanging remote).
    Hang,
    /// Answer git's RPC requests (`POST …/git-upload-pack`, `…/git-receive-pack`) with only
    /// the first half of the backend's output: a backend that died mid-answer, with intact
    /// HTTP framing. A push is applied.
    TruncateResponse,
    /// Answer git's RPC requests with bytes that are not git's protocol, with the same status
    /// and content type (a broken proxy). A push is applied.
    GarbleResponse,
}

struct Shared {
    root: PathBuf,
    auth: Option<(String, String)>,
    /// Anonymous clones and fetches allowed; `auth` only guards pushes (like a public
    /// repository on Gitea or GitHub).
    public_read: AtomicBool,
    running: AtomicBool,
    fault: Mutex<Fault>,
    children: Mutex<Vec<Child>>,
    conns: Mutex<Vec<TcpStream>>,
    requests: AtomicUsize,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panicking connection thread must not wedge the whole server.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A running git server on `127.0.0.1:<port>`, serving bare repositories under `root`.
/// Stopped on drop.
pub struct GitServer {
    shared: Arc<Shared>,
    addr: SocketAddr,
    acceptor: Option<JoinHandle<()>>,
}

impl GitServer {
    /// Starts serving `root` (bare repos as `root/<name>.git`), with basic auth when
    /// `auth` is `Some((user, password))`.
    pub fn start(
        root: impl Into<PathBuf>,
        auth: Option<(&str, &str)>,
    ) -> Result<Self, TestkitError> {
        let shared = Arc::new(Shared {
            root: root.into(),
            auth: auth.map(|(u, p)| (u.to_owned(), p.to_owned())),
            public_read: AtomicBool::new(false),
            running: AtomicBool::new(true),
            fault: Mutex::new(Fault::None),
            children: Mutex::new(Vec::new()),
            conns: Mutex::new(Vec::new()),
            requests: AtomicUsize::new(0),
        });
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let mut server = GitServer {
            shared,
            addr,
            acceptor: None,
        };
        server.spawn_acceptor(listener)?;
        Ok(server)
    }

    /// Like [`GitServer::start`] with basic auth, but anyone may clone and fetch: the
    /// credentials are only needed to push (a public repository on a hosted git service).
    pub fn start_public_read(
        root: impl Into<PathBuf>,
        auth: (&str, &str),
    ) -> Result<Self, TestkitError> {
        let server = Self::start(root, Some(auth))?;
        server.shared.public_read.store(true, Ordering::SeqCst);
        Ok(server)
    }

    /// Like [`GitServer::start`], but requires `Authorization: Bearer <token>`.
    pub fn start_bearer(root: impl Into<PathBuf>, token: &str) -> Result<Self, TestkitError> {
        Self::start(root, Some(("", token)))
    }

    /// `http://127.0.0.1:<port>/<repo>`.
    pub fn url_for(&self, repo: &str) -> String {
        format!("http://{}/{}", self.addr, repo.trim_start_matches('/'))
    }

    /// The directory served.
    pub fn root(&self) -> &Path {
        &self.shared.root
    }

    /// Number of HTTP requests seen so far.
    pub fn request_count(&self) -> usize {
        self.shared.requests.load(Ordering::SeqCst)
    }

    /// Injects a fault into subsequent requests.
    pub fn set_fault(&self, fault: Fault) {
        *lock(&self.shared.fault) = fault;
    }

    /// Stops accepting, kills in-flight CGI processes and closes open connections.
    pub fn stop(&mut self) {
        self.shared.running.store(false, Ordering::SeqCst);
        if let Some(h) = self.acceptor.take() {
            let _ = h.join();
        }
        for mut child in lock(&self.shared.children).drain(..) {
            let _ = child.kill();
            let _ = child.wait();
        }
        for conn in lock(&self.shared.conns).drain(..) {
            let _ = conn.shutdown(Shutdown::Both);
        }
    }

    /// Serves again on the same port after [`GitServer::stop`].
    pub fn restart(&mut self) -> Result<(), TestkitError> {
        self.stop();
        let listener = TcpListener::bind(self.addr)?;
        self.shared.running.store(true, Ordering::SeqCst);
        self.spawn_acceptor(listener)
    }

    fn spawn_acceptor(&mut self, listener: TcpListener) -> Result<(), TestkitError> {
        listener.set_nonblocking(true)?;
        let shared = Arc::clone(&self.shared);
        self.acceptor = Some(thread::spawn(move || accept_loop(listener, shared)));
        Ok(())
    }
}

impl Drop for GitServer {
    fn drop(&mut self) {
        self.stop();
    }
}

fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    while shared.running.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((stream, _)) => {
                let _ = stream.set_nonblocking(false);
                if let Ok(clone) = stream.try_clone() {
                    let mut conns = lock(&shared.conns);
                    conns.retain(|c| c.peer_addr().is_ok());
                    conns.push(clone);
                }
                let shared = Arc::clone(&shared);
                thread::spawn(move || {
                    if let Err(e) = handle(stream, &shared) {
                        tracing::debug!(error = %e, "git server connection ended with an error");
                    }
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                thread::sleep(Duration::from_millis(5))
            }
            Err(e) => {
                tracing::warn!(error = %e, "git server accept failed");
                thread::sleep(Duration::from_millis(20));
            }
        }
    }
}

fn handle(stream: TcpStream, shared: &Shared) -> Result<(), TestkitError> {
    shared.requests.fetch_add(1, Ordering::SeqCst);
    let mut writer = stream.try_clone()?;
    let mut reader = BufReader::new(stream);
    let mut req = http::read_head(&mut reader)?;
    let fault = *lock(&shared.fault);
    if fault == Fault::Hang {
        thread::sleep(Duration::from_secs(3600));
        return Ok(());
    }
    let reading = !(req.path.ends_with("/git-receive-pack")
        || req.query.contains("service=git-receive-pack"));
    if let Some((user, pass)) = shared
        .auth
        .as_ref()
        .filter(|_| !(shared.public_read.load(Ordering::SeqCst) && reading))
    {
        let header = req.header("authorization").unwrap_or("");
        let ok = if user.is_empty() {
            // Bearer-token mode (see `start_bearer`).
            header.strip_prefix("Bearer ") == Some(pass.as_str())
        } else {
            let expected = format!("{user}:{pass}");
            header
                .strip_prefix("Basic ")
                .or_else(|| header.strip_prefix("basic "))
                .and_then(http::base64_decode)
                .is_some_and(|g| g == expected.as_bytes())
        };
        if !ok {
            let challenge = if user.is_empty() {
                "WWW-Authenticate: Bearer realm=\"git\""
            } else {
                "WWW-Authenticate: Basic realm=\"git\""
            };
            http::respond(
                &mut writer,
                "401 Unauthorized",
                &[challenge],
                "unauthorized\n",
            )?;
            return Ok(());
        }
    }
    http::read_body(&mut req, &mut reader, &mut writer)?;
    let is_push = req.path.ends_with("/git-receive-pack") && req.method == "POST";
    if is_push && fault == Fault::DropReceivePack {
        writer.shutdown(Shutdown::Both)?;
        return Ok(());
    }
    let output = run_backend(&req, shared)?;
    if is_push && fault == Fault::LoseReceivePackResponse {
        writer.shutdown(Shutdown::Both)?;
        return Ok(());
    }
    let output = match fault {
        _ if req.method != "POST" => output,
        Fault::TruncateResponse => http::map_cgi_body(&output, |b| b[..b.len() / 2].to_vec()),
        Fault::GarbleResponse => http::map_cgi_body(&output, |b| {
            b"garbage!".iter().copied().cycle().take(b.len()).collect()
        }),
        _ => output,
    };
    http::forward_cgi(&output, &mut writer)?;
    let _ = writer.shutdown(Shutdown::Both);
    Ok(())
}

/// Runs `git http-backend` for one request and returns its complete CGI output.
fn run_backend(req: &Request, shared: &Shared) -> Result<Vec<u8>, TestkitError> {
    let mut cmd = Command::new("git");
    cmd.arg("http-backend")
        .env("GIT_PROJECT_ROOT", &shared.root)
        .env("GIT_HTTP_EXPORT_ALL", "1")
        .env("PATH_INFO", &req.path)
        .env("QUERY_STRING", &req.query)
        .env("REQUEST_METHOD", &req.method)
        .env("CONTENT_LENGTH", req.body.len().to_string())
        .env("REMOTE_ADDR", "127.0.0.1")
        .env(
            "REMOTE_USER",
            shared
                .auth
                .as_ref()
                .map(|(u, _)| u.as_str())
                .unwrap_or("anonymous"),
        )
        // receive-pack is off by default over HTTP; enable it without touching the repos.
        .env("GIT_CONFIG_COUNT", "1")
        .env("GIT_CONFIG_KEY_0", "http.receivepack")
        .env("GIT_CONFIG_VALUE_0", "true")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(ct) = req.header("content-type") {
        cmd.env("CONTENT_TYPE", ct);
    }
    if let Some(p) = req.header("git-protocol") {
        cmd.env("GIT_PROTOCOL", p);
    }
    // http-backend inflates gzip bodies itself when told the encoding.
    if let Some(enc) = req.header("content-encoding") {
        cmd.env("HTTP_CONTENT_ENCODING", enc);
    }
    let mut child = cmd.spawn()?;
    let mut stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let pid = child.id();
    lock(&shared.children).push(child);
    let body = req.body.clone();
    let feeder = thread::spawn(move || {
        if let Some(mut s) = stdin.take() {
            let _ = s.write_all(&body);
        }
    });
    let mut out = Vec::new();
    if let Some(mut s) = stdout {
        std::io::Read::read_to_end(&mut s, &mut out)?;
    }
    let _ = feeder.join();
    let mut children = lock(&shared.children);
    if let Some(pos) = children.iter().position(|c| c.id() == pid) {
        let mut c = children.swap_remove(pos);
        drop(children);
        let _ = c.wait();
    }
    Ok(out)
}
