//! porchctl's `fn` and `pkg` command lines against the installed kpt binary (cobra and
//! pflag themselves): every flag type and spelling of the families' commands, and every
//! parse error, must give the same exit code and the same stderr (the program name
//! aside). Outputs where kpt HEAD and kpt 1.0.0-beta.56 differ are not in this list.

use std::path::{Path, PathBuf};
use std::process::Command;

fn kpt_bin() -> Option<PathBuf> {
    let p = std::env::var_os("KPT_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/kpt"));
    p.is_file().then_some(p)
}

/// Exit code and stderr of `program args` run in `dir` (no cluster, no stdin).
fn run(program: &Path, dir: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("KUBECONFIG", "/nonexistent/kubeconfig")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Command lines cobra or pflag (or kpt's checks before reading any file) refuse.
const REFUSED: &[&[&str]] = &[
    // Unknown flags, long and short, in and after a cluster of booleans.
    &["fn", "eval", "--bogus"],
    &["fn", "eval", "-Ax"],
    &["fn", "eval", "-xA"],
    &["fn", "eval", "-mx"],
    &["fn", "render", "--bogus"],
    &["fn", "source", "--bogus"],
    &["fn", "sink", "--x"],
    &["pkg", "update", "--bogus"],
    &["pkg", "init", "--as_group=x"],
    // Bad syntax.
    &["fn", "eval", "---x"],
    &["fn", "eval", "--=x"],
    // Value flags without their value, long and short.
    &["fn", "eval", "-i"],
    &["fn", "eval", "--image"],
    &["fn", "eval", "-e"],
    &["fn", "eval", "--mount"],
    &["fn", "eval", "-t"],
    &["fn", "eval", "-o"],
    &["fn", "render", "-o"],
    &["fn", "render", "--results_dir"],
    &["pkg", "get", "--strategy"],
    // Booleans given a value strconv.ParseBool refuses, in every spelling.
    &["fn", "eval", "-s=maybe", "-i", "img"],
    &["fn", "eval", "--save=maybe"],
    &["fn", "eval", "--network=2", "-i", "img"],
    &["fn", "eval", "--as_current_user=nope", "-i", "img"],
    &["fn", "eval", "--help=maybe"],
    &["fn", "eval", "-h=x"],
    &["fn", "render", "--allow-exec=yes"],
    // String slices are CSV records.
    &["pkg", "init", "--keywords", "a\"b"],
    &["pkg", "init", "--keywords=\"a"],
    // cobra's argument validators.
    &["fn", "source", "a", "b"],
    &["fn", "sink"],
    &["pkg", "init", "a", "b"],
    &["pkg", "get"],
    // kpt's own checks before it reads anything, after every flag form.
    &["fn", "eval", "a", "b"],
    &["fn", "eval", "a", "b", "-i", "img"],
    &["fn", "eval", "-i=img", "a", "b", "--", "k=v"],
    &["fn", "eval", "-m", "-i", "img", "."],
    &["fn", "eval", "-s", "-iimg", "."],
    &["fn", "eval", "-s", "-t", "bogus", "--image", "img", "."],
    &["fn", "eval", "-st", "bogus", "-i", "img"],
    &["fn", "eval", "--exec", "x", "--env", "A", "."],
    &["fn", "eval", "--exec=x", "-eA=1,2", "."],
    &["fn", "eval", "-i", "img", "--fn-config", "nope.yaml", "."],
    &[
        "fn",
        "eval",
        "-i",
        "img",
        "--fn_config=f.yaml",
        ".",
        "--",
        "a=b",
    ],
    &["fn", "eval", "-o", "/", "-i", "img", "."],
    &["fn", "render", "-o", "/"],
    &["fn", "render", "--output=/", "--allow-exec"],
];

#[test]
fn fn_and_pkg_command_lines_match_installed_kpt() {
    let Some(kpt) = kpt_bin() else {
        eprintln!(
            "SKIPPED: kpt not found at /usr/bin/kpt (or $KPT_BIN). Install kpt 1.0.0-beta.56, \
             e.g. `apt-get install google-cloud-cli-kpt` from the Google Cloud apt repository \
             (https://cloud.google.com/sdk/docs/install#deb), or set KPT_BIN."
        );
        return;
    };
    let porchctl = PathBuf::from(env!("CARGO_BIN_EXE_porchctl"));
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut differences = Vec::new();
    for args in REFUSED {
        let theirs = run(&kpt, tmp.path(), args);
        let ours = run(&porchctl, tmp.path(), args);
        assert_ne!(theirs.0, 0, "kpt accepted {args:?}: {}", theirs.1);
        if theirs != ours {
            differences.push(format!("{args:?}\n  kpt:  {theirs:?}\n  ours: {ours:?}"));
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
    // Nothing was written by a refused command.
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .expect("read")
        .map(|e| e.map(|e| e.file_name()))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_group_given_an_unknown_command_succeeds_as_kpts() {
    let Some(kpt) = kpt_bin() else {
        eprintln!("SKIPPED: kpt not found at /usr/bin/kpt (or $KPT_BIN)");
        return;
    };
    let porchctl = PathBuf::from(env!("CARGO_BIN_EXE_porchctl"));
    let tmp = tempfile::tempdir().expect("tempdir");
    for args in [&["fn", "bogus"][..], &["pkg", "bogus", "-x=1"], &["fn"]] {
        let (theirs, _) = run(&kpt, tmp.path(), args);
        let (ours, stderr) = run(&porchctl, tmp.path(), args);
        assert_eq!(theirs, ours, "{args:?}: {stderr}");
    }
    // The root checks its words; only the program name differs.
    let (code, theirs) = run(&kpt, tmp.path(), &["frobnicate"]);
    let (our_code, ours) = run(&porchctl, tmp.path(), &["frobnicate"]);
    assert_eq!(
        (code, theirs.replace("\"kpt\"", "\"porchctl\"")),
        (our_code, ours)
    );
}
