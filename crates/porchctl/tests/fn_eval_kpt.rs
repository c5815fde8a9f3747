//! `porchctl fn eval` branches ported from kpt's eval command (`cmdeval`, `runfn`) and
//! kyaml's package writer, on fixtures written here: line breaks of rewritten files,
//! the out-of-place destinations, and the pre-run checks.

use std::path::{Path, PathBuf};
use std::process::Command;

const NOOP: &str = "ghcr.io/kptdev/krm-functions-catalog/no-op:v0.1.0";
const SET_ANNOTATIONS: &str = "ghcr.io/kptdev/krm-functions-catalog/set-annotations:v0.1.4";

const TWO_DOCS: &str = "# header\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a # keep\ndata:\n  k: v\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n";

fn package(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("pkg");
    for (rel, text) in files {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, text).expect("write");
    }
    (tmp, dir)
}

fn porchctl(cwd: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_porchctl"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("porchctl runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn read(dir: &Path, rel: &str) -> String {
    std::fs::read_to_string(dir.join(rel)).expect("read")
}

fn crlf(text: &str) -> String {
    text.replace('\n', "\r\n")
}

#[test]
fn an_unchanged_crlf_file_is_written_back_with_lf_breaks() {
    let (tmp, dir) = package(&[("cm.yaml", &crlf(TWO_DOCS))]);
    let (code, _, err) = porchctl(tmp.path(), &["fn", "eval", "pkg", "-i", NOOP]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(read(&dir, "cm.yaml"), TWO_DOCS);
}

#[test]
fn a_changed_crlf_file_has_no_cr_left_in_its_kept_documents() {
    let (tmp, dir) = package(&[("cm.yaml", &crlf(TWO_DOCS))]);
    let (code, _, err) = porchctl(
        tmp.path(),
        &["fn", "eval", "pkg", "-i", SET_ANNOTATIONS, "--match-name", "b", "--", "x=y"],
    );
    assert_eq!(code, 0, "{err}");
    let text = read(&dir, "cm.yaml");
    assert!(!text.contains('\r'), "{text:?}");
    assert!(text.starts_with("# header\napiVersion: v1\n"), "{text}");
    assert!(text.contains("  name: a # keep\n"), "{text}");
    assert!(text.contains("    x: \"y\"\n"), "{text}");
}
