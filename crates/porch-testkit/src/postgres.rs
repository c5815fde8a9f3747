//! [`PostgresServer`]: a throwaway PostgreSQL cluster for tests.
//!
//! `initdb` into a private temporary directory, then `postgres` on a free loopback port with
//! its unix socket in that directory (never `/var/run/postgresql`), trust authentication, a
//! superuser `porch` and a database `porch`. PostgreSQL refuses to run as root, so as root the
//! server binaries run as the `postgres` system user (`runuser`) on a directory it owns. The
//! cluster is stopped and deleted on drop; `stop`/`start` restart it in place for outage tests.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::TestkitError;

/// Where Debian's postgresql-15 puts the server binaries (overridable with `PORCH_PGBIN`).
pub const DEFAULT_PGBIN: &str = "/usr/lib/postgresql/15/bin";

/// A running PostgreSQL cluster, stopped and removed on drop.
pub struct PostgresServer {
    dir: tempfile::TempDir,
    bin: PathBuf,
    port: u16,
    as_postgres: bool,
    running: bool,
    /// With [`PostgresServer::start_tls`]: `ssl=on` with a certificate for 127.0.0.1 and
    /// `localhost`, and only TLS connections accepted over TCP.
    tls: bool,
}

impl PostgresServer {
    /// Initializes and starts a cluster with a `porch` database.
    pub fn start() -> Result<Self, TestkitError> {
        Self::start_inner(false)
    }

    /// Like [`PostgresServer::start`], with `ssl=on`: a CA (its certificate at
    /// [`PostgresServer::ca_cert`]) issues the server's certificate for `127.0.0.1` and
    /// `localhost`, and `pg_hba.conf` accepts TCP connections over TLS only (`hostssl`), so a
    /// client that does not negotiate TLS is refused.
    pub fn start_tls() -> Result<Self, TestkitError> {
        Self::start_inner(true)
    }

    fn start_inner(tls: bool) -> Result<Self, TestkitError> {
        let bin = PathBuf::from(std::env::var("PORCH_PGBIN").unwrap_or(DEFAULT_PGBIN.into()));
        let dir = tempfile::Builder::new().prefix("porch-pg").tempdir()?;
        let as_postgres = is_root();
        if as_postgres {
            run(Command::new("chown")
                .arg("postgres:postgres")
                .arg(dir.path()))?;
        }
        let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let mut server = Self {
            dir,
            bin,
            port,
            as_postgres,
            running: false,
            tls,
        };
        let data = server.data_dir();
        run(server
            .server_command("initdb")
            .arg("-D")
            .arg(&data)
            .args(["-A", "trust", "-U", "porch", "--no-sync", "-E", "UTF8"])
            .arg("--locale=C.UTF-8"))?;
        if tls {
            server.write_certificates()?;
        }
        server.start_again()?;
        // Over the unix socket: TCP may require TLS, which createdb need not speak.
        run(Command::new(server.bin.join("createdb"))
            .arg("-h")
            .arg(server.dir.path())
            .args(["-U", "porch", "-p"])
            .arg(server.port.to_string())
            .arg("porch"))?;
        Ok(server)
    }

    /// The CA that issued the server's certificate ([`PostgresServer::start_tls`]).
    pub fn ca_cert(&self) -> PathBuf {
        self.dir.path().join("ca.crt")
    }

    fn write_certificates(&self) -> Result<(), TestkitError> {
        let tls_err = |e: rcgen::Error| TestkitError::Setup(format!("certificate: {e}"));
        let ca_key = rcgen::KeyPair::generate().map_err(tls_err)?;
        let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).map_err(tls_err)?;
        ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca.distinguished_name
            .push(rcgen::DnType::CommonName, "porch test postgres CA");
        let ca_cert = ca.self_signed(&ca_key).map_err(tls_err)?;
        let issuer = rcgen::Issuer::new(ca, ca_key);
        let key = rcgen::KeyPair::generate().map_err(tls_err)?;
        let params = rcgen::CertificateParams::new(vec!["127.0.0.1".into(), "localhost".into()])
            .map_err(tls_err)?;
        let cert = params.signed_by(&key, &issuer).map_err(tls_err)?;
        std::fs::write(self.ca_cert(), ca_cert.pem())?;
        let data = self.data_dir();
        std::fs::write(data.join("server.crt"), cert.pem())?;
        std::fs::write(data.join("server.key"), key.serialize_pem())?;
        // PostgreSQL refuses a key others can read, or one it does not own.
        run(Command::new("chmod")
            .arg("600")
            .arg(data.join("server.key")))?;
        if self.as_postgres {
            run(Command::new("chown")
                .arg("postgres:postgres")
                .arg(data.join("server.key"))
                .arg(data.join("server.crt")))?;
        }
        // TCP over TLS only; the unix socket stays plain.
        let hba = data.join("pg_hba.conf");
        let text = std::fs::read_to_string(&hba)?;
        let text: Vec<String> = text
            .lines()
            .map(|l| match l.strip_prefix("host ") {
                Some(rest) => format!("hostssl {rest}"),
                None => l.to_owned(),
            })
            .collect();
        std::fs::write(&hba, text.join("\n") + "\n")?;
        Ok(())
    }

    fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn server_command(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(path);
            c
        } else {
            Command::new(path)
        }
    }

    /// Starts the (stopped) cluster again on the same port.
    pub fn start_again(&mut self) -> Result<(), TestkitError> {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off \
             -c full_page_writes=off -c max_connections=300{}",
            self.port,
            self.dir.path().display(),
            if self.tls { " -c ssl=on" } else { "" }
        );
        run(self
            .server_command("pg_ctl")
            .arg("-D")
            .arg(self.data_dir())
            .arg("-l")
            .arg(self.dir.path().join("log"))
            .args(["-w", "-t", "30", "-o", &options, "start"]))?;
        self.running = true;
        Ok(())
    }

    /// Stops the cluster (fast shutdown: sessions are cut, as in an outage).
    pub fn stop(&mut self) -> Result<(), TestkitError> {
        run(self
            .server_command("pg_ctl")
            .arg("-D")
            .arg(self.data_dir())
            .args(["-w", "-m", "fast", "stop"]))?;
        self.running = false;
        Ok(())
    }

    /// The TCP port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The directory holding the unix socket.
    pub fn socket_dir(&self) -> &Path {
        self.dir.path()
    }

    /// `postgres://porch@127.0.0.1:<port>/porch`.
    pub fn url(&self) -> String {
        format!("postgres://porch@127.0.0.1:{}/porch", self.port)
    }

    /// Creates another empty database and returns its URL (one per test on a shared cluster).
    pub fn create_database(&self, name: &str) -> Result<String, TestkitError> {
        run(Command::new(self.bin.join("createdb"))
            .args(["-h", "127.0.0.1", "-U", "porch", "-p"])
            .arg(self.port.to_string())
            .arg(name))?;
        Ok(format!("postgres://porch@127.0.0.1:{}/{name}", self.port))
    }
}

impl Drop for PostgresServer {
    fn drop(&mut self) {
        if self.running {
            let _ = self
                .server_command("pg_ctl")
                .arg("-D")
                .arg(self.data_dir())
                .args(["-w", "-m", "immediate", "stop"])
                .output();
        }
    }
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

fn run(cmd: &mut Command) -> Result<(), TestkitError> {
    let out = cmd.output()?;
    if out.status.success() {
        Ok(())
    } else {
        Err(TestkitError::Command {
            command: format!("{cmd:?}"),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        })
    }
}
