//! An SSH git server for tests: Debian's OpenSSH `sshd` on a loopback port, serving bare
//! repositories through `git-upload-pack`/`git-receive-pack` as the current user.
//!
//! Each server gets its own directory with a generated host key, a generated client key
//! (the only authorized key) and a `known_hosts` file pinning the host key, so tests never
//! touch `~/.ssh` and a reused port with a new host key cannot trip host-key checking.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::TestkitError;
use crate::repos;

/// Where Debian installs the daemon (package `openssh-server`, see `.ci/setup.sh`).
pub const SSHD: &str = "/usr/sbin/sshd";

/// How long `start` waits for the daemon to accept connections before giving up.
const READY_WITHIN: Duration = Duration::from_secs(20);

static NEXT: AtomicUsize = AtomicUsize::new(0);

/// A running `sshd` on `127.0.0.1:<port>` serving bare repositories under `root`
/// (`ssh://<user>@127.0.0.1:<port><root>/<name>.git`). Stopped on drop.
pub struct SshServer {
    child: Option<Child>,
    dir: PathBuf,
    root: PathBuf,
    port: u16,
    user: String,
}

impl SshServer {
    /// Starts `sshd` for the current user with fresh host and client keys.
    pub fn start(root: impl Into<PathBuf>) -> Result<Self, TestkitError> {
        if !Path::new(SSHD).is_file() {
            return Err(TestkitError::Command {
                command: SSHD.into(),
                stderr: "sshd is not installed; run .ci/setup.sh (Debian package openssh-server)"
                    .into(),
            });
        }
        let root = root.into().canonicalize()?;
        let dir = std::env::temp_dir().join(format!(
            "porch-sshd-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        ));
        if dir.exists() {
            std::fs::remove_dir_all(&dir)?;
        }
        std::fs::create_dir_all(&dir)?;
        let mut server = SshServer {
            child: None,
            dir,
            root,
            port: 0,
            user: current_user()?,
        };
        server.spawn()?;
        Ok(server)
    }

    fn spawn(&mut self) -> Result<(), TestkitError> {
        let d = &self.dir;
        keygen(&d.join("host_key"))?;
        keygen(&d.join("client_key"))?;
        std::fs::copy(d.join("client_key.pub"), d.join("authorized_keys"))?;
        // Privilege separation needs this directory when sshd runs as root; the package
        // does not create it (systemd does at boot), and a container never booted.
        if is_root()? {
            std::fs::create_dir_all("/run/sshd")?;
        }
        self.port = free_port()?;
        let host_pub = std::fs::read_to_string(d.join("host_key.pub"))?;
        let host_pub: Vec<&str> = host_pub.split_whitespace().take(2).collect();
        std::fs::write(
            d.join("known_hosts"),
            format!("[127.0.0.1]:{} {}\n", self.port, host_pub.join(" ")),
        )?;
        let config = format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {dir}/host_key\nPidFile {dir}/sshd.pid\n\
             AuthorizedKeysFile {dir}/authorized_keys\nAllowUsers {user}\n\
             PubkeyAuthentication yes\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n\
             UsePAM no\nStrictModes no\nPermitRootLogin prohibit-password\n\
             AcceptEnv GIT_PROTOCOL\nLogLevel ERROR\n",
            port = self.port,
            dir = d.display(),
            user = self.user,
        );
        std::fs::write(d.join("sshd_config"), config)?;
        let log = std::fs::File::create(d.join("sshd.log"))?;
        let child = Command::new(SSHD)
            .arg("-D")
            .arg("-e")
            .arg("-f")
            .arg(d.join("sshd_config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()?;
        self.child = Some(child);
        self.wait_ready()
    }

    /// Waits until the daemon sends its SSH banner (it binds after reading its config).
    fn wait_ready(&mut self) -> Result<(), TestkitError> {
        let start = Instant::now();
        loop {
            if let Some(child) = self.child.as_mut()
                && let Some(status) = child.try_wait()?
            {
                return Err(self.failure(&format!("sshd exited with {status}")));
            }
            if let Ok(mut s) = TcpStream::connect(("127.0.0.1", self.port)) {
                s.set_read_timeout(Some(Duration::from_secs(5)))?;
                let mut buf = [0u8; 8];
                if std::io::Read::read_exact(&mut s, &mut buf).is_ok() && buf.starts_with(b"SSH-") {
                    return Ok(());
                }
            }
            if start.elapsed() > READY_WITHIN {
                return Err(self.failure("sshd did not accept connections"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn failure(&self, what: &str) -> TestkitError {
        TestkitError::Command {
            command: format!("{SSHD} -D -e -f {}", self.dir.join("sshd_config").display()),
            stderr: format!(
                "{what}: {}",
                std::fs::read_to_string(self.dir.join("sshd.log")).unwrap_or_default()
            ),
        }
    }

    /// `ssh://<user>@127.0.0.1:<port>/<root>/<repo>`.
    pub fn url_for(&self, repo: &str) -> String {
        format!(
            "ssh://{}@127.0.0.1:{}{}/{}",
            self.user,
            self.port,
            self.root.display(),
            repo.trim_start_matches('/')
        )
    }

    /// The directory served.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The private key the server accepts (no passphrase).
    pub fn client_key(&self) -> PathBuf {
        self.dir.join("client_key")
    }

    /// A `known_hosts` file holding exactly this server's host key.
    pub fn known_hosts(&self) -> PathBuf {
        self.dir.join("known_hosts")
    }

    /// The loopback port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Stops the daemon. Sessions already running end when their client disconnects.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for SshServer {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn keygen(path: &Path) -> Result<(), TestkitError> {
    repos::run(
        Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-C", "porch-testkit", "-f"])
            .arg(path),
    )?;
    Ok(())
}

/// A port that was free a moment ago (sshd must bind it itself).
fn free_port() -> Result<u16, TestkitError> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

fn current_user() -> Result<String, TestkitError> {
    Ok(repos::run(Command::new("id").arg("-un"))?.trim().to_owned())
}

fn is_root() -> Result<bool, TestkitError> {
    Ok(repos::run(Command::new("id").arg("-u"))?.trim() == "0")
}
