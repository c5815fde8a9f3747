//! The README tour, run verbatim: the ```sh block between `<!-- tour -->` and
//! `<!-- /tour -->` in README.md goes to `bash -euxo pipefail` with the freshly built
//! porchctl and porch-server first on PATH, so the documented walk-through (register,
//! init, pull, push, propose, approve, clone, copy, upgrade) cannot rot unnoticed. It runs
//! twice in the same directory, as a reader trying it again would, and the server's log
//! must stay out of the tour's output (it goes to `$TOUR/server.log`).

mod common;

use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// The README's tour script: the fenced block's lines, without the fences.
fn tour_script() -> String {
    let readme = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    let text = std::fs::read_to_string(&readme).expect("read README.md");
    let start = text
        .find("<!-- tour -->")
        .expect("README has <!-- tour -->");
    let end = text
        .find("<!-- /tour -->")
        .expect("README has <!-- /tour -->");
    assert!(start < end, "tour markers out of order");
    let block = &text[start + "<!-- tour -->".len()..end];
    let mut lines = block.lines().skip_while(|l| l.trim().is_empty());
    let fence = lines
        .next()
        .expect("a fenced block inside the tour markers");
    assert_eq!(fence.trim(), "```sh", "the tour is one ```sh block");
    let mut script = String::new();
    for line in lines {
        if line.trim_start().starts_with("```") {
            return script;
        }
        script.push_str(line);
        script.push('\n');
    }
    panic!("the tour's ```sh block is not closed before <!-- /tour -->");
}

/// Kills the script's whole process group on drop: the tour starts porch-server in the
/// background and only stops it on its last line, so a failing step (or a panic here)
/// would otherwise leave a server running and holding the output files open.
struct Group(Child);

impl Group {
    fn wait_for(&mut self, limit: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(st) = self.0.try_wait().expect("wait for bash") {
                return Some(st);
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        // The group id is bash's pid (process_group(0)); a non-interactive shell keeps its
        // background jobs in its own group, so this reaches the server too.
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.0.id())])
            .stderr(Stdio::null())
            .status();
        let _ = self.0.wait();
    }
}

fn dir_of(bin: &Path) -> PathBuf {
    bin.parent().expect("binary has a directory").to_path_buf()
}

/// Where a tour runs: its files, environment and binaries.
struct Tour {
    tmp: tempfile::TempDir,
    tour: PathBuf,
    home: PathBuf,
    cwd: PathBuf,
    script: PathBuf,
    path: std::ffi::OsString,
}

impl Tour {
    fn new() -> Tour {
        let tmp = tempfile::tempdir().expect("tempdir");
        let (tour, home, cwd) = (
            tmp.path().join("tour"),
            tmp.path().join("home"),
            tmp.path().join("cwd"),
        );
        for d in [&tour, &home, &cwd] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        let script = tmp.path().join("tour.sh");
        std::fs::write(&script, tour_script()).expect("write tour.sh");
        let porchctl = PathBuf::from(env!("CARGO_BIN_EXE_porchctl"));
        let server = common::porch_server_bin();
        assert!(
            server.exists(),
            "porch-server binary at {}",
            server.display()
        );
        let mut path = std::env::join_paths([dir_of(&porchctl), dir_of(&server)]).expect("PATH");
        if let Some(rest) = std::env::var_os("PATH") {
            let mut p = path.clone();
            p.push(":");
            p.push(rest);
            path = p;
        }
        Tour {
            tmp,
            tour,
            home,
            cwd,
            script,
            path,
        }
    }

    /// Runs the script once; panics with its output unless it succeeds. Returns (stdout,
    /// stderr with bash's xtrace).
    fn run(&self, run: u32) -> (String, String) {
        let out = self.tmp.path().join(format!("tour-{run}.out"));
        let err = self.tmp.path().join(format!("tour-{run}.err"));
        // Output goes to files, not pipes: a background server left behind by a failing
        // step would keep a pipe open and `wait_with_output` would never return.
        let child = Command::new("bash")
            .arg("-euxo")
            .arg("pipefail")
            .arg(&self.script)
            .current_dir(&self.cwd)
            .env("PATH", &self.path)
            .env("TOUR", &self.tour)
            .env("HOME", &self.home)
            // The server logs at info; none of it may reach the tour's output.
            .env("RUST_LOG", "info")
            .env_remove("KUBECONFIG")
            .env_remove("PORCHCTL_API_VERSION")
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&out).expect("tour.out"))
            .stderr(std::fs::File::create(&err).expect("tour.err"))
            .process_group(0)
            .spawn()
            .expect("run bash");
        let mut group = Group(child);
        let status = group.wait_for(Duration::from_secs(600));
        drop(group);

        let stdout = std::fs::read_to_string(&out).unwrap_or_default();
        let stderr = std::fs::read_to_string(&err).unwrap_or_default();
        let status = status.unwrap_or_else(|| {
            panic!(
                "run {run}: the tour did not finish in 10 minutes\nstdout:\n{stdout}\nstderr:\n{stderr}"
            )
        });
        assert!(
            status.success(),
            "run {run}: the tour failed ({status})\nstdout:\n{stdout}\nstderr (xtrace):\n{stderr}"
        );
        (stdout, stderr)
    }
}

#[test]
fn readme_tour_runs_verbatim_twice_in_the_same_directory() {
    let t = Tour::new();
    for run in 1..=2 {
        let (stdout, stderr) = t.run(run);

        let log = std::fs::read_to_string(t.tour.join("server.log")).unwrap_or_default();
        assert!(
            log.contains("serving HTTPS"),
            "run {run}: the server's log is in $TOUR/server.log:\n{log}"
        );
        // Issue 17: the tour's work is done by people in the documented roles; the admin
        // only hands out the roles. No write of Porch's kinds is the admin's.
        let admin_writes: Vec<&str> = log
            .lines()
            .filter(|l| l.contains("request method=") && !l.contains("method=GET"))
            .filter(|l| l.contains("porch.kpt.dev/") && l.contains("user=admin"))
            .collect();
        assert!(
            admin_writes.is_empty(),
            "run {run}: writes by the admin:\n{}",
            admin_writes.join("\n")
        );
        for user in ["carol", "alice", "bob"] {
            assert!(
                log.contains(&format!("user={user} ")) || log.contains(&format!("user={user}\n")),
                "run {run}: no request by {user}"
            );
        }
        for (what, text) in [("stdout", &stdout), ("stderr", &stderr)] {
            assert!(
                !text.contains("serving HTTPS") && !text.contains("porch_server"),
                "run {run}: server log lines in the tour's {what}:\n{text}"
            );
        }

        let tags = Command::new("git")
            .arg("--git-dir")
            .arg(t.tour.join("deployments.git"))
            .arg("tag")
            .env("HOME", &t.home)
            .output()
            .expect("git tag");
        assert!(tags.status.success(), "git tag failed");
        let tags = String::from_utf8_lossy(&tags.stdout);
        let tags: Vec<&str> = tags.lines().collect();
        assert_eq!(
            tags,
            vec!["app/v1", "app/v2"],
            "run {run}: deployments.git tags\ntour stdout:\n{stdout}"
        );
    }
}
