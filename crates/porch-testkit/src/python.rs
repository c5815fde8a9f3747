//! A Python interpreter with the official Kubernetes client (`kubernetes` from PyPI), for
//! tests that drive the server the way Python automation does.
//!
//! The virtual environment is made once per checkout (under `target/`, or where
//! `PORCH_PYTHON_VENV` says) and reused; concurrent test processes each build into a private
//! directory and rename it into place, so whoever finishes first wins and nobody sees a
//! half-built environment. Needs `python3` with `venv` and access to PyPI the first time.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::TestkitError;

/// The client release the tests are written against.
pub const KUBERNETES_CLIENT: &str = "kubernetes==33.1.0";

fn venv_dir() -> PathBuf {
    match std::env::var_os("PORCH_PYTHON_VENV") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/py-kubernetes"),
    }
}

fn python_in(venv: &Path) -> PathBuf {
    venv.join("bin").join("python")
}

fn has_client(python: &Path) -> bool {
    Command::new(python)
        .args(["-c", "import kubernetes"])
        .output()
        .is_ok_and(|o| o.status.success())
}

fn run(cmd: &mut Command) -> Result<(), TestkitError> {
    let out = cmd.output()?;
    if out.status.success() {
        return Ok(());
    }
    Err(TestkitError::Command {
        command: format!("{cmd:?}"),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

/// The `python` of a virtual environment that has the Kubernetes client, made on first use.
pub fn kubernetes_python() -> Result<PathBuf, TestkitError> {
    let venv = venv_dir();
    let python = python_in(&venv);
    if has_client(&python) {
        return Ok(python);
    }
    let building = venv.with_extension(format!("building-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&building);
    run(Command::new("python3").arg("-m").arg("venv").arg(&building))?;
    run(Command::new(python_in(&building)).args([
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        KUBERNETES_CLIENT,
    ]))?;
    // A venv's scripts name its directory; the interpreter itself does not, so the renamed
    // environment's `bin/python` works (the tests never run its console scripts).
    if std::fs::rename(&building, &venv).is_err() {
        // Another process finished first; use its environment.
        let _ = std::fs::remove_dir_all(&building);
    }
    if has_client(&python) {
        Ok(python)
    } else {
        Err(TestkitError::Command {
            command: format!("{} -c 'import kubernetes'", python.display()),
            stderr: "the virtual environment has no kubernetes client".into(),
        })
    }
}
