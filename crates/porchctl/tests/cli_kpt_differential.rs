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

/// Scratch upstreams, and a working directory, repository cache and home for each
/// of kpt and porchctl, for `pkg get`/`pkg update` runs compared side by side.
struct PkgScratch {
    tmp: tempfile::TempDir,
    kpt: PathBuf,
    porchctl: PathBuf,
}

/// Exit code, stdout and stderr of one run.
type Ran = (i32, String, String);

impl PkgScratch {
    fn new(kpt: PathBuf) -> PkgScratch {
        let tmp = tempfile::tempdir().expect("tempdir");
        for d in [
            "srv",
            "kpt/work",
            "kpt/cache",
            "kpt/home",
            "ours/work",
            "ours/cache",
            "ours/home",
        ] {
            std::fs::create_dir_all(tmp.path().join(d)).expect("mkdir");
        }
        std::fs::write(tmp.path().join("gitconfig"), "").expect("gitconfig");
        PkgScratch {
            tmp,
            kpt,
            porchctl: PathBuf::from(env!("CARGO_BIN_EXE_porchctl")),
        }
    }

    fn srv(&self) -> PathBuf {
        self.tmp.path().join("srv")
    }

    /// `file://` URL of upstream `name` (kept as `<name>.git`, as kpt wants it).
    fn url(&self, name: &str) -> String {
        format!("file://{}/{name}.git", self.srv().display())
    }

    /// The repository URL kpt records and prints for `name` (without `.git`).
    fn repo(&self, name: &str) -> String {
        format!("file://{}/{name}", self.srv().display())
    }

    /// [`Self::repo`] as a normalised run prints it.
    fn shown(name: &str) -> String {
        format!("file://<tmp>/srv/{name}")
    }

    fn git(&self, name: &str, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(args)
            .current_dir(self.srv().join(format!("{name}.git")))
            .env("GIT_CONFIG_GLOBAL", self.tmp.path().join("gitconfig"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "a")
            .env("GIT_AUTHOR_EMAIL", "a@example.com")
            .env("GIT_COMMITTER_NAME", "a")
            .env("GIT_COMMITTER_EMAIL", "a@example.com")
            .output()
            .expect("git runs");
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Write `files` into upstream `name` (created on first use, branch `main`),
    /// remove `gone`, commit and tag `tag`.
    fn commit(&self, name: &str, files: &[(&str, &str)], gone: &[&str], tag: &str) {
        let dir = self.srv().join(format!("{name}.git"));
        if !dir.exists() {
            std::fs::create_dir_all(&dir).expect("mkdir");
            self.git(name, &["init", "-q", "-b", "main"]);
        }
        for (path, text) in files {
            let p = dir.join(path);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(p, text).expect("write");
        }
        for path in gone {
            std::fs::remove_dir_all(dir.join(path)).expect("remove");
        }
        self.git(name, &["add", "-A"]);
        self.git(
            name,
            &["commit", "-qm", if tag.is_empty() { "next" } else { tag }],
        );
        if !tag.is_empty() {
            self.git(name, &["tag", tag]);
        }
    }

    fn work(&self, side: &str) -> PathBuf {
        self.tmp.path().join(side).join("work")
    }

    /// Do the same to both working directories.
    fn both(&self, f: impl Fn(&Path)) {
        f(&self.work("kpt"));
        f(&self.work("ours"));
    }

    fn run_one(&self, side: &str, args: &[&str]) -> Ran {
        let program = if side == "kpt" {
            &self.kpt
        } else {
            &self.porchctl
        };
        let base = self.tmp.path().join(side);
        let out = Command::new(program)
            .args(args)
            .current_dir(base.join("work"))
            .env("HOME", base.join("home"))
            .env("KPT_CACHE_DIR", base.join("cache"))
            .env("KPT_DISABLE_ATTRIBUTION", "1")
            .env("GIT_CONFIG_GLOBAL", self.tmp.path().join("gitconfig"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("KUBECONFIG", "/nonexistent/kubeconfig")
            .stdin(std::process::Stdio::null())
            .output()
            .expect("runs");
        // Each side's own directories read alike.
        let norm = |b: &[u8]| {
            String::from_utf8_lossy(b)
                .replace(&base.display().to_string(), "<side>")
                .replace(&self.tmp.path().display().to_string(), "<tmp>")
        };
        (
            out.status.code().unwrap_or(-1),
            norm(&out.stdout),
            norm(&out.stderr),
        )
    }

    /// Run `args` with kpt, then porchctl; a difference in exit code or stderr is
    /// recorded. Returns porchctl's run.
    fn compare(&self, args: &[&str], differences: &mut Vec<String>) -> Ran {
        let theirs = self.run_one("kpt", args);
        let ours = self.run_one("ours", args);
        if (theirs.0, &theirs.2) != (ours.0, &ours.2) {
            differences.push(format!(
                "{args:?}\n--- kpt (exit {}):\n{}--- porchctl (exit {}):\n{}",
                theirs.0, theirs.2, ours.0, ours.2
            ));
        }
        // Data only on stdout: these commands print none.
        assert_eq!(ours.1, "", "porchctl {args:?} wrote to stdout");
        ours
    }
}

fn kptfile(name: &str) -> String {
    format!("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {name}\n")
}

/// A Kptfile with a git upstream (`lock` = the commit it was fetched at).
fn remote_kptfile(
    name: &str,
    repo: &str,
    dir: &str,
    r: &str,
    strategy: &str,
    lock: Option<&str>,
) -> String {
    let mut k = format!(
        "{}upstream:\n  type: git\n  git:\n    repo: {repo}\n    directory: {dir}\n    ref: {r}\n",
        kptfile(name)
    );
    if !strategy.is_empty() {
        k.push_str(&format!("  updateStrategy: {strategy}\n"));
    }
    if let Some(commit) = lock {
        k.push_str(&format!(
            "upstreamLock:\n  type: git\n  git:\n    repo: {repo}\n    directory: {dir}\n    ref: {r}\n    commit: {commit}\n"
        ));
    }
    k
}

fn config_map(name: &str, value: &str) -> String {
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  v: \"{value}\"\n")
}

/// `pkg get` and `pkg update` print what kpt 1.0.0-beta.56 prints on stderr, byte for
/// byte (temporary paths aside), git's own fetch output included: plain gets by tag,
/// branch and short commit, the repository root, symlinks, remote sub-packages
/// (fetched last path first), updates with each strategy kpt has, an update with
/// nothing to do, a sub-package's own update, the walk over remote sub-packages
/// (added, deleted, kept, ignored, updated, ref carried over), and the errors.
/// Each tool has its own repository cache, so `[new branch]` and forced-update lines
/// come out alike. Not compared: `copy-merge` (kpt HEAD's; beta.56 refuses it) and
/// remote sub-packages without an `updateStrategy` (kpt stops at them).
#[test]
fn pkg_get_and_update_print_what_kpt_prints() {
    let Some(kpt) = kpt_bin() else {
        eprintln!(
            "SKIPPED: kpt not found at /usr/bin/kpt (or $KPT_BIN). Install kpt 1.0.0-beta.56 \
             to compare `pkg get`/`pkg update` output."
        );
        return;
    };
    let s = PkgScratch::new(kpt);
    let mut diffs = Vec::new();

    // `up`: package `app`, tags app/v1 and app/v2, plus a symlink in v2.
    s.commit(
        "up",
        &[
            ("app/Kptfile", &kptfile("app")),
            ("app/cm.yaml", &config_map("cm", "1")),
        ],
        &[],
        "app/v1",
    );
    s.commit(
        "up",
        &[("app/cm.yaml", &config_map("cm", "2"))],
        &[],
        "app/v2",
    );
    let up = s.url("up");

    // Plain get by a directory tag, update, and an update with nothing to do.
    let ran = s.compare(
        &["pkg", "get", &format!("{up}/app@app/v1"), "local"],
        &mut diffs,
    );
    assert_eq!(
        ran.2,
        format!(
            "Package \"local\":\nFetching {0}@app/v1\nFrom {0}\n * tag               app/v1     -> FETCH_HEAD\nAdding package \"app\".\n\nFetched 1 package(s).\n",
            PkgScratch::shown("up")
        )
    );
    s.both(|w| {
        let cm = w.join("local/cm.yaml");
        let text = std::fs::read_to_string(&cm).expect("cm");
        std::fs::write(&cm, format!("{text}  mine: \"x\"\n")).expect("edit");
    });
    s.compare(&["pkg", "update", "local@app/v2"], &mut diffs);
    s.compare(&["pkg", "update", "local@app/v2"], &mut diffs);
    s.compare(&["pkg", "update", "local"], &mut diffs);

    // Each strategy kpt 1.0.0-beta.56 has.
    for (dest, strategy) in [("ff", "fast-forward"), ("fdr", "force-delete-replace")] {
        s.compare(
            &["pkg", "get", &format!("{up}/app@app/v1"), dest],
            &mut diffs,
        );
        s.compare(
            &[
                "pkg",
                "update",
                &format!("{dest}@app/v2"),
                "--strategy",
                strategy,
            ],
            &mut diffs,
        );
    }
    // fast-forward refuses a local change.
    s.compare(
        &["pkg", "get", &format!("{up}/app@app/v1"), "ffx"],
        &mut diffs,
    );
    s.both(|w| std::fs::write(w.join("ffx/cm.yaml"), config_map("cm", "mine")).expect("edit"));
    s.compare(
        &["pkg", "update", "ffx@app/v2", "--strategy", "fast-forward"],
        &mut diffs,
    );

    // A branch: `[new branch]` first, then a forced update of the shallow cache.
    s.compare(
        &["pkg", "get", &format!("{up}/app@main"), "onmain"],
        &mut diffs,
    );
    s.commit("up", &[("app/cm.yaml", &config_map("cm", "3"))], &[], "");
    s.compare(&["pkg", "update", "onmain@main"], &mut diffs);
    // A short commit (a full fetch), the repository root, a symlink.
    let short = s.git("up", &["rev-parse", "--short=8", "app/v1"]);
    s.compare(
        &["pkg", "get", &format!("{up}/app@{short}"), "short"],
        &mut diffs,
    );
    s.compare(
        &["pkg", "get", &format!("{up}@app/v2"), "whole"],
        &mut diffs,
    );
    std::fs::create_dir_all(s.srv().join("up.git/app/d")).expect("mkdir");
    std::os::unix::fs::symlink("d/f.txt", s.srv().join("up.git/app/link")).expect("symlink");
    s.commit("up", &[("app/d/f.txt", "x\n")], &[], "app/v3");
    s.compare(
        &["pkg", "get", &format!("{up}/app@app/v3"), "linked"],
        &mut diffs,
    );
    // Both fetches of an update warn.
    s.compare(&["pkg", "update", "linked@app/v3"], &mut diffs);

    // `mono`: package `app` with remote sub-packages of the same repository.
    let mono = s.repo("mono");
    s.commit(
        "mono",
        &[
            ("app/Kptfile", &kptfile("app")),
            ("app/cm.yaml", &config_map("cm", "1")),
            (
                "app/dep/Kptfile",
                &remote_kptfile("dep", &mono, "/lib", "v1", "resource-merge", None),
            ),
            (
                "app/al/Kptfile",
                &remote_kptfile("al", &mono, "/app/al", "v1", "", None),
            ),
            ("app/loc/Kptfile", &kptfile("loc")),
            ("app/loc/l.yaml", &config_map("l", "1")),
            ("lib/Kptfile", &kptfile("lib")),
            ("lib/x.yaml", &config_map("x", "1")),
            ("app-lib/Kptfile", &kptfile("app-lib")),
            ("app-lib/y.yaml", &config_map("y", "1")),
        ],
        &[],
        "v1",
    );
    s.commit(
        "mono",
        &[
            ("app/cm.yaml", &config_map("cm", "2")),
            (
                "app/new/Kptfile",
                &remote_kptfile("new", &mono, "/lib", "v2", "resource-merge", None),
            ),
            ("lib/x.yaml", &config_map("x", "2")),
            ("app-lib/y.yaml", &config_map("y", "2")),
        ],
        &["app/dep"],
        "v2",
    );
    let mono_url = s.url("mono");
    s.compare(
        &["pkg", "get", &format!("{mono_url}/app@v1"), "p"],
        &mut diffs,
    );
    // Adds `new`, keeps `dep` (changed since upstream's unfetched copy), carries the
    // new ref over to `al` (same repository, `/app/al` under `/app`; kpt would move a
    // `/app-lib` too, comparing directories as strings, and we do not); then each
    // sub-package updates on its own.
    let ran = s.compare(&["pkg", "update", "p@v2"], &mut diffs);
    assert!(
        ran.2
            .contains("\nPackage \"p/al\":\nFetching upstream from "),
        "{}",
        ran.2
    );
    // A package directory that is a sub-package.
    s.compare(&["pkg", "update", "p/dep"], &mut diffs);
    // A remote sub-package added both locally and upstream.
    s.compare(
        &["pkg", "get", &format!("{mono_url}/app@v1"), "both"],
        &mut diffs,
    );
    s.both(|w| {
        std::fs::create_dir_all(w.join("both/new")).expect("mkdir");
        let k = remote_kptfile("new", &mono, "/lib", "v1", "", None);
        std::fs::write(w.join("both/new/Kptfile"), k).expect("write");
    });
    s.compare(&["pkg", "update", "both@v2"], &mut diffs);

    // `fx`: package `app` whose upstream holds fetched remote sub-packages.
    let lib_v1 = s.git("mono", &["rev-parse", "v1"]);
    let fetched = |n: &str| remote_kptfile(n, &mono, "/lib", "v1", "resource-merge", Some(&lib_v1));
    let mut v1: Vec<(String, String)> = vec![
        ("app/Kptfile".into(), kptfile("app")),
        ("app/top.yaml".into(), config_map("top", "1")),
    ];
    for n in ["s1", "s2", "s3", "s4"] {
        v1.push((format!("app/{n}/Kptfile"), fetched(n)));
        v1.push((format!("app/{n}/x.yaml"), config_map("x", "1")));
    }
    let v1: Vec<(&str, &str)> = v1.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    s.commit("fx", &v1, &[], "v1");
    s.commit(
        "fx",
        &[
            ("app/top.yaml", &config_map("top", "2")),
            ("app/s3/x.yaml", &config_map("x", "2")),
            ("app/s4/x.yaml", &config_map("x", "2")),
        ],
        &["app/s1", "app/s2"],
        "v2",
    );
    s.compare(
        &["pkg", "get", &format!("{}/app@v1", s.url("fx")), "q"],
        &mut diffs,
    );
    s.both(|w| {
        let x = w.join("q/s2/x.yaml");
        let text = std::fs::read_to_string(&x).expect("x");
        std::fs::write(&x, format!("{text}  w: mine\n")).expect("edit");
        std::fs::remove_dir_all(w.join("q/s3")).expect("rm");
    });
    s.compare(&["pkg", "update", "q@v2"], &mut diffs);

    // `blue`: a package with remote sub-packages of another repository, fetched
    // last path first.
    s.commit(
        "blue",
        &[
            ("db/Kptfile", &kptfile("db")),
            ("db/cm.yaml", &config_map("db", "1")),
        ],
        &[],
        "db/v1",
    );
    let blue = s.repo("blue");
    s.commit(
        "up",
        &[
            (
                "app/db/Kptfile",
                &remote_kptfile("db", &blue, "/db", "v1", "", None),
            ),
            (
                "app/zz/Kptfile",
                &remote_kptfile("db", &blue, "/db", "v1", "", None),
            ),
        ],
        &[],
        "app/v4",
    );
    s.compare(
        &["pkg", "get", &format!("{up}/app@app/v4"), "l4"],
        &mut diffs,
    );

    // Errors.
    s.both(|w| {
        std::fs::create_dir_all(w.join("plain")).expect("mkdir");
        std::fs::write(w.join("plain/Kptfile"), kptfile("plain")).expect("write");
        std::fs::create_dir_all(w.join("empty")).expect("mkdir");
    });
    s.compare(&["pkg", "update", "plain"], &mut diffs);
    s.compare(&["pkg", "update", "empty"], &mut diffs);
    s.compare(&["pkg", "update", "missing/dir"], &mut diffs);
    s.compare(
        &["pkg", "get", &format!("{up}/app@app/v1"), "nope"],
        &mut diffs,
    );
    s.compare(&["pkg", "update", "nope@no-such-ref"], &mut diffs);
    s.compare(
        &["pkg", "get", &format!("{up}/app@no-such-ref"), "x"],
        &mut diffs,
    );

    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
}

/// `copy-merge` is kpt HEAD's (kpt 1.0.0-beta.56 stops with `unrecognized update
/// strategy copy-merge`): porchctl prints HEAD's lines for it.
#[test]
fn pkg_update_copy_merge_prints_kpt_heads_lines() {
    let s = PkgScratch::new(PathBuf::from("/nonexistent/kpt"));
    s.commit(
        "up",
        &[
            ("app/Kptfile", &kptfile("app")),
            ("app/cm.yaml", &config_map("cm", "1")),
        ],
        &[],
        "v1",
    );
    s.commit("up", &[("app/cm.yaml", &config_map("cm", "2"))], &[], "v2");
    let get = s.run_one(
        "ours",
        &["pkg", "get", &format!("{}/app@v1", s.url("up")), "cm"],
    );
    assert_eq!(get.0, 0, "{}", get.2);
    let ran = s.run_one(
        "ours",
        &["pkg", "update", "cm@v2", "--strategy", "copy-merge"],
    );
    let origin = s.git("up", &["rev-parse", "v1"]);
    assert_eq!(
        (ran.0, ran.2),
        (
            0,
            format!(
                "Package \"cm\":\nFetching upstream from {0}@v2\nFrom {0}\n * tag               v2         -> FETCH_HEAD\nFetching origin from {0}@v2\nFrom {0}\n * branch            {origin} -> FETCH_HEAD\nUpdating package \"cm\" with strategy \"copy-merge\".\n\nUpdated 1 package(s).\n",
                PkgScratch::shown("up")
            )
        )
    );
}
