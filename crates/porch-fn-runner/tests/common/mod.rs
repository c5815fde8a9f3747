//! Starting the real porch-fn-runner binary for tests.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// A runner on a free loopback port; killed on drop.
pub struct Runner {
    pub child: Child,
    pub address: String,
    pub dir: tempfile::TempDir,
}

impl Runner {
    pub fn start(extra: &[&str]) -> Runner {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut child = Command::new(env!("CARGO_BIN_EXE_porch-fn-runner"))
            .args(["--port", "0", "--bind-address", "127.0.0.1"])
            .arg("--function-cache-dir")
            .arg(dir.path().join("images"))
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn porch-fn-runner");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).expect("read");
        let address = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_owned();
        Runner {
            child,
            address,
            dir,
        }
    }
}

impl Drop for Runner {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
