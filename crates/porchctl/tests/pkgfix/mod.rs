//! A package written from literal files into a temporary directory, and the release of
//! porchctl run on it, for the `fn` command tests (shared by the test binaries that
//! `mod pkgfix;` it; each uses some of it).
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Writes `files` (path relative to the package, text) under `<tmp>/pkg`; `.sh` files are
/// made executable. Returns the temporary directory (kept alive by the caller) and the package.
pub fn package(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("pkg");
    for (rel, text) in files {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, text).expect("write");
        if rel.ends_with(".sh") {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        }
    }
    (tmp, dir)
}

/// Runs porchctl with `args` in `cwd`: exit code, stdout, stderr.
pub fn porchctl(cwd: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_porchctl"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("porchctl runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        even_out_timings(&String::from_utf8_lossy(&out.stderr)),
    )
}

/// kpt's e2e runner's rule: the time after `[PASS] "fn" in` / `[FAIL] "fn" in` reads
/// `0s` (kpt prints how long the function ran, to a tenth of a second).
pub fn even_out_timings(stderr: &str) -> String {
    let mut out = String::with_capacity(stderr.len());
    for line in stderr.split_inclusive('\n') {
        let body = line.trim_end_matches('\n');
        match body.rfind("\" in ") {
            Some(i) if body.starts_with("[PASS] \"") || body.starts_with("[FAIL] \"") => {
                out.push_str(&body[..i]);
                out.push_str("\" in 0s");
                out.push_str(&line[body.len()..]);
            }
            _ => out.push_str(line),
        }
    }
    out
}

/// `fn render DIR extra…`: exit code and stderr.
pub fn render(dir: &Path, extra: &[&str]) -> (i32, String) {
    let dir = dir.to_string_lossy();
    let mut args = vec!["fn", "render", dir.as_ref()];
    args.extend_from_slice(extra);
    let (code, _, err) = porchctl(Path::new("."), &args);
    (code, err)
}

/// The text of file `rel` under `dir`.
pub fn read(dir: &Path, rel: &str) -> String {
    std::fs::read_to_string(dir.join(rel)).expect("read")
}

/// Every file under `dir` by relative path, with its text.
pub fn snapshot(dir: &Path) -> BTreeMap<String, String> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        for e in std::fs::read_dir(dir).expect("read_dir") {
            let e = e.expect("entry");
            if e.file_type().expect("file type").is_dir() {
                walk(base, &e.path(), out);
            } else {
                let rel = e.path().strip_prefix(base).expect("prefix").to_owned();
                let text = std::fs::read_to_string(e.path()).expect("read");
                out.insert(rel.to_string_lossy().into_owned(), text);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// A v1 Kptfile named `name` followed by `pipeline` (top-level YAML, may be empty).
pub fn kptfile(name: &str, pipeline: &str) -> String {
    format!("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {name}\n{pipeline}")
}

/// A ConfigMap `name` with one data entry.
pub fn cm(name: &str) -> String {
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  k: v\n")
}

/// Writes `text` as an executable file `name` in `dir` (beside a package, not inside
/// it); returns its path.
pub fn executable(dir: &Path, name: &str, text: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path.display().to_string()
}
