//! Runs kpt's render cases (`conformance/kpt/fn-render`) and the functions catalog's
//! examples (`conformance/catalog/examples`) through the real `porchctl fn` binary.
//!
//! Each case: copy the package to a temp dir, run render (or eval for catalog cases with
//! `testType: eval`, or the case's `.expected/exec.sh` with `kpt` mapped to porchctl),
//! then require exit code and stderr as `.expected/config.yaml` says, and the package
//! tree to equal the original with `.expected/diff.patch` applied, byte for byte.
//! The data is read from ../shared/conformance (or $PORCH_CONFORMANCE_DIR); when it is
//! absent the test says how to get it and passes as skipped.

mod pkgfix;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Cases that need what cannot exist here, with the reason. Every other case must pass.
const UNSUPPORTED: &[(&str, &str)] = &[
    (
        "fn-render/kubeval-failure",
        "kubeval is a container-only validator image",
    ),
    (
        "fn-render/fn-failure-output-no-truncate",
        "kubeconform is a container-only validator image",
    ),
    (
        "fn-render/fnresult-fn-failure",
        "kubeconform is a container-only validator image",
    ),
    (
        "fn-render/structured-results-from-muiltiple-fns",
        "kubeconform is a container-only validator image",
    ),
    (
        "fn-render/image-pull-policy-always",
        "tests docker image pulling",
    ),
    (
        "fn-render/image-pull-policy-if-not-present",
        "tests docker image pulling",
    ),
    (
        "fn-render/image-pull-policy-never",
        "tests docker image pulling",
    ),
    (
        "fn-render/missing-fn-image",
        "expects docker's registry error text",
    ),
    (
        "fn-eval/error-in-pipe",
        "expects docker's registry error text (`Failed to fetch`) for a missing image",
    ),
    (
        "fn-eval/missing-fn-image",
        "expects docker's registry error text (`Failed to fetch`) for a missing image",
    ),
    (
        "fn-eval/function-env",
        "builds a printenv image with docker",
    ),
    (
        "fn-eval/image-pull-policy-always",
        "tests docker image pulling",
    ),
    (
        "fn-eval/image-pull-policy-if-not-present",
        "tests docker image pulling",
    ),
    (
        "fn-eval/image-pull-policy-never",
        "tests docker image pulling",
    ),
    ("fn-eval/no-image-pull", "tests docker image pulling"),
    (
        "fn-eval/privilege-options/disable-network",
        "container network option",
    ),
    (
        "fn-eval/privilege-options/enable-network",
        "container network option",
    ),
    ("fn-eval/privilege-options/mount", "container mount option"),
    ("fn-eval/wasm-function", "wasm functions are not run here"),
    (
        "fn-eval/simple-function-with-tag",
        "a semver tag constraint needs the registry's tag list",
    ),
    (
        "fn-eval/consistent-formatting",
        "recorded before kpt refused `--include-meta-resources` (HEAD exits 1 on it)",
    ),
    (
        "fn-eval/exec-function-stderr",
        "recorded with the older quoted, truncated stderr block; kpt HEAD prints a passing \
         function's stderr as render does (the shared fn-render exec-function-stderr golden)",
    ),
];

fn conformance_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("PORCH_CONFORMANCE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance")
        });
    dir.is_dir().then_some(dir)
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read_dir") {
        let entry = entry.expect("entry");
        let name = entry.file_name();
        let ft = entry.file_type().expect("file type");
        let target = to.join(&name);
        if ft.is_dir() {
            copy_tree(&entry.path(), &target);
        } else if ft.is_symlink() {
            let link = std::fs::read_link(entry.path()).expect("readlink");
            std::os::unix::fs::symlink(link, &target).expect("symlink");
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .expect("read_dir")
            .map(|e| e.expect("entry"))
            .collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let name = e.file_name().to_string_lossy().into_owned();
            if name == ".git" || name == ".expected" {
                continue;
            }
            let ft = e.file_type().expect("ft");
            if ft.is_dir() {
                walk(base, &e.path(), out);
            } else if ft.is_file() {
                let rel = e
                    .path()
                    .strip_prefix(base)
                    .expect("prefix")
                    .to_string_lossy()
                    .into_owned();
                out.insert(rel, std::fs::read(e.path()).expect("read"));
            }
        }
    }
    walk(dir, dir, &mut out);
    out
}

fn git(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs")
}

#[derive(Default)]
struct Expect {
    exit_code: i32,
    stderr: Option<String>,
    stdout: Option<String>,
    allow_exec: bool,
    eval: bool,
    image: Option<String>,
    fn_config: Option<String>,
    args: Vec<(String, String)>,
    stderr_strip_lines: Vec<String>,
    skip: bool,
    actual_strip_lines: Vec<String>,
    include_meta_resources: bool,
    when: Option<String>,
    exec_path: Option<String>,
    tag: Option<String>,
    network: bool,
    image_pull_policy: Option<String>,
}

fn read_expect(case: &Path) -> Expect {
    let mut e = Expect::default();
    let Ok(text) = std::fs::read_to_string(case.join(".expected/config.yaml")) else {
        return e;
    };
    let v: serde_json::Value = serde_yaml_value(&text);
    e.exit_code = v.get("exitCode").and_then(|x| x.as_i64()).unwrap_or(0) as i32;
    e.stderr = v.get("stdErr").and_then(|x| x.as_str()).map(str::to_string);
    e.stdout = v.get("stdOut").and_then(|x| x.as_str()).map(str::to_string);
    e.allow_exec = v
        .get("allowExec")
        .and_then(|x| x.as_bool())
        .unwrap_or(false);
    e.eval = v.get("testType").and_then(|x| x.as_str()) == Some("eval");
    e.skip = v.get("skip").and_then(|x| x.as_bool()).unwrap_or(false);
    e.include_meta_resources = v
        .get("includeMetaResources")
        .and_then(|x| x.as_bool())
        .unwrap_or(false);
    e.when = v.get("when").and_then(|x| x.as_str()).map(str::to_string);
    e.tag = v.get("tag").and_then(|x| x.as_str()).map(str::to_string);
    e.network = v.get("network").and_then(|x| x.as_bool()).unwrap_or(false);
    e.image_pull_policy = v
        .get("imagePullPolicy")
        .and_then(|x| x.as_str())
        .map(str::to_string);
    e.exec_path = v
        .get("execPath")
        .and_then(|x| x.as_str())
        .map(str::to_string);
    e.image = v.get("image").and_then(|x| x.as_str()).map(str::to_string);
    e.fn_config = v
        .get("fnConfig")
        .and_then(|x| x.as_str())
        .map(str::to_string);
    if let Some(lines) = v.get("stdErrStripLines").and_then(|x| x.as_array()) {
        e.stderr_strip_lines = lines
            .iter()
            .filter_map(|l| l.as_str().map(str::to_string))
            .collect();
    }
    if let Some(lines) = v.get("actualStripLines").and_then(|x| x.as_array()) {
        e.actual_strip_lines = lines
            .iter()
            .filter_map(|l| l.as_str().map(str::to_string))
            .collect();
    }
    if let Some(args) = v.get("args").and_then(|x| x.as_object()) {
        for (k, val) in args {
            let s = match val {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            e.args.push((k.clone(), s));
        }
    }
    e
}

fn serde_yaml_value(text: &str) -> serde_json::Value {
    let node = kpt::yaml::parse_one(text).expect("config.yaml parses");
    node.to_value()
}

/// Run one case; Err(description) on mismatch.
fn run_case(bin: &Path, shim: &Path, group: &str, src: &Path) -> Result<(), String> {
    let name = src
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    let expect = read_expect(src);
    let tmp = tempfile::tempdir().expect("tempdir");
    // Exec paths in the cases are relative to kpt's e2e directory: `./testdata/fn-render/<case>/...`.
    let testdata = tmp.path().join("testdata");
    std::fs::create_dir_all(&testdata).expect("mkdir");
    std::os::unix::fs::symlink(src.parent().expect("parent"), testdata.join(group))
        .expect("symlink");
    let actual = tmp.path().join("actual").join(&name);
    let wanted = tmp.path().join("expected").join(&name);
    copy_tree(src, &actual);
    copy_tree(src, &wanted);
    for d in [&actual, &wanted] {
        git(d, &["init", "-q"]);
        git(d, &["add", "-A"]);
        git(d, &["commit", "-qm", "init"]);
    }
    let patch_text = std::fs::read_to_string(src.join(".expected/diff.patch")).unwrap_or_default();
    if !patch_text.is_empty() {
        // Upstream compares the trimmed `git diff` text, so a patch saved without its final
        // newline is fine there; `git apply` calls that a corrupt patch.
        let patch = tmp.path().join("diff.patch");
        let ending = if patch_text.ends_with('\n') { "" } else { "\n" };
        std::fs::write(&patch, format!("{patch_text}{ending}")).expect("patch");
        let out = git(
            &wanted,
            &[
                "apply",
                "--whitespace=nowarn",
                patch.to_str().expect("utf8"),
            ],
        );
        if !out.status.success() {
            return Err(format!(
                "diff.patch does not apply: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    let exec_sh = src.join(".expected/exec.sh");
    let mut cmd = if exec_sh.is_file() {
        let mut c = Command::new("bash");
        c.arg(&exec_sh).current_dir(&actual);
        c
    } else if expect.eval {
        let mut c = Command::new(bin);
        c.args(["fn", "eval", actual.to_str().expect("utf8")]);
        if src.join(".expected/results.yaml").is_file() {
            c.args(["--results-dir", "results"]);
        }
        // Upstream's runner writes out of place into `<pkg>/out` when the case has `out/`.
        if src.join("out").is_dir() {
            c.args(["-o", actual.join("out").to_str().expect("utf8")]);
        }
        if let Some(p) = &expect.image_pull_policy {
            c.args(["--image-pull-policy", p]);
        }
        if expect.network {
            c.arg("--network");
        }
        if let Some(i) = &expect.image {
            c.args(["--image", i]);
        }
        // As upstream's runner: an exec path relative to the case's `.expected`, and only
        // when there is no image.
        if let (None, Some(x)) = (&expect.image, &expect.exec_path) {
            let path = if Path::new(x).is_absolute() {
                PathBuf::from(x)
            } else {
                std::path::absolute(src.join(".expected").join(x)).expect("absolute")
            };
            c.args(["--exec", path.to_str().expect("utf8")]);
        }
        if let Some(t) = &expect.tag {
            c.args(["--tag", t]);
        }
        if expect.include_meta_resources {
            c.arg("--include-meta-resources");
        }
        if let Some(w) = &expect.when {
            c.args(["--when", w]);
        }
        if let Some(fc) = &expect.fn_config {
            // Relative to the case's .expected directory, as upstream's harness reads it:
            // in the copied package when it lies inside it, else beside the case.
            let inside = actual.join(".expected").join(fc);
            let path = if inside.exists() {
                inside
            } else {
                src.join(".expected").join(fc)
            };
            c.args(["--fn-config", path.to_str().expect("utf8")]);
        }
        if !expect.args.is_empty() {
            c.arg("--");
            for (k, v) in &expect.args {
                c.arg(format!("{k}={v}"));
            }
        }
        c.current_dir(tmp.path());
        c
    } else {
        let mut c = Command::new(bin);
        c.args([
            "fn",
            "render",
            actual.to_str().expect("utf8"),
            "--results-dir",
            "results",
        ]);
        if expect.allow_exec {
            c.arg("--allow-exec");
        }
        c.current_dir(tmp.path());
        c
    };
    let path = format!(
        "{}:{}",
        shim.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = cmd.env("PATH", path).output().map_err(|e| e.to_string())?;
    // Upstream's harness normalisation: the time a function took reads `0s`, and the
    // listed lines are dropped from stderr.
    let stderr: String = pkgfix::even_out_timings(&String::from_utf8_lossy(&out.stderr))
        .lines()
        .filter(|l| !expect.stderr_strip_lines.iter().any(|s| s == l))
        .map(|l| format!("{l}\n"))
        .collect();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let code = out.status.code().unwrap_or(-1);
    let mut problems = Vec::new();
    if code != expect.exit_code {
        problems.push(format!("exit code {code}, want {}", expect.exit_code));
    }
    if let Some(want) = &expect.stderr
        && !stderr.contains(want.trim_end())
    {
        problems.push(format!(
            "stderr does not contain:\n{want}\n--- got:\n{stderr}"
        ));
    }
    // Upstream's `compareOutput`: the expected stdout is contained in the actual one.
    if let Some(want) = &expect.stdout
        && !stdout.contains(want.as_str())
    {
        problems.push(format!("stdout differs:\n{want}\n--- got:\n{stdout}"));
    }
    // Upstream compares the results file when the case has one: trimmed, with the
    // case's `actualStripLines` removed.
    if let Ok(want) = std::fs::read_to_string(src.join(".expected/results.yaml")) {
        let dir = tmp.path().join("results");
        let files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        let mut got = match files.as_slice() {
            [one] => std::fs::read_to_string(one).unwrap_or_default(),
            _ => String::new(),
        };
        for line in &expect.actual_strip_lines {
            got = got.replace(&format!("{line}\n"), "");
        }
        if got.trim() != want.trim() {
            problems.push(format!(
                "results differ:\n--- want\n{}\n--- got\n{}",
                want.trim(),
                got.trim()
            ));
        }
    }
    let (mut got, want) = (tree(&actual), tree(&wanted));
    if group == "examples" || group == "tests" {
        // The catalog's goldens predate kpt writing `status` into (and re-encoding) the
        // Kptfile: compare Kptfiles as data, without status.
        for (path, content) in got.iter_mut() {
            let is_kptfile = path == "Kptfile" || path.ends_with("/Kptfile");
            if let (true, Some(w)) = (is_kptfile, want.get(path)) {
                let data = |b: &[u8]| {
                    let mut v = kpt::yaml::parse_one(&String::from_utf8_lossy(b))
                        .map(|n| n.to_value())
                        .unwrap_or_default();
                    if let Some(o) = v.as_object_mut() {
                        o.remove("status");
                    }
                    v
                };
                if data(content) == data(w) {
                    *content = w.clone();
                }
            }
        }
    }
    for (path, content) in &want {
        match got.get(path) {
            None => problems.push(format!("{path}: missing")),
            Some(c) if c != content => problems.push(format!(
                "{path} differs:\n--- want\n{}\n--- got\n{}",
                String::from_utf8_lossy(content),
                String::from_utf8_lossy(c)
            )),
            _ => {}
        }
    }
    for path in got.keys() {
        if !want.contains_key(path) {
            problems.push(format!("{path}: unexpected file"));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("{}\n(stderr was: {stderr})", problems.join("\n")))
    }
}

fn collect_cases(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if !p.is_dir() || p.file_name().is_some_and(|n| n == ".expected") {
            continue;
        }
        if p.join(".expected").is_dir() {
            out.push(p);
        } else {
            collect_cases(&p, out);
        }
    }
}

fn run_group(group: &str, rel: &str, optional: bool) {
    let Some(root) = conformance_dir() else {
        eprintln!(
            "SKIPPED: conformance data not found. Put the shared/ directory beside the project \
             (../shared/conformance) or set PORCH_CONFORMANCE_DIR."
        );
        return;
    };
    // $PORCHCTL_BIN runs the cases against another build (e.g. to compare releases).
    let bin = std::env::var_os("PORCHCTL_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_porchctl")));
    let shim = tempfile::tempdir().expect("tempdir");
    let kpt = shim.path().join("kpt");
    std::fs::write(&kpt, format!("#!/bin/sh\nexec {} \"$@\"\n", bin.display())).expect("shim");
    let mut perms = std::fs::metadata(&kpt).expect("meta").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&kpt, perms).expect("chmod");

    let dir = root.join(rel);
    // A directory of one's own ($PORCH_CONFORMANCE_DIR) may hold some groups only; the
    // shared data must have every required one.
    let optional = optional || std::env::var_os("PORCH_CONFORMANCE_DIR").is_some();
    if optional && !dir.is_dir() {
        eprintln!("SKIPPED: no {rel} cases in the conformance data");
        return;
    }
    // Like upstream's scan: every directory holding `.expected` is a case, at any depth
    // (kpt groups some, e.g. `selectors/`, `save-on-render-failure/`).
    let mut cases = Vec::new();
    collect_cases(&dir, &mut cases);
    cases.sort();
    let only = std::env::var("CASE").ok();
    let (mut passed, mut failed, mut skipped) = (0, Vec::new(), 0);
    for case in cases {
        let name = case
            .strip_prefix(&dir)
            .expect("under the group")
            .to_string_lossy()
            .into_owned();
        let short = case
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        if only.as_deref().is_some_and(|o| o != name && o != short) {
            continue;
        }
        let key = format!("{group}/{name}");
        if let Some((_, why)) = UNSUPPORTED.iter().find(|(k, _)| *k == key) {
            eprintln!("SKIP {key}: {why}");
            skipped += 1;
            continue;
        }
        if read_expect(&case).skip {
            eprintln!("SKIP {key}: the case says `skip: true` upstream");
            skipped += 1;
            continue;
        }
        match run_case(&bin, shim.path(), group, &case) {
            Ok(()) => passed += 1,
            Err(e) => failed.push((key, e)),
        }
    }
    for (k, e) in &failed {
        eprintln!("FAIL {k}:\n{e}\n");
    }
    eprintln!(
        "{group}: {passed} passed, {} failed, {skipped} unsupported",
        failed.len()
    );
    let names: Vec<&String> = failed.iter().map(|(k, _)| k).collect();
    assert!(failed.is_empty(), "failing cases: {names:?}");
    // With the data present, a run that compared nothing is a broken harness.
    assert!(only.is_some() || passed > 0, "no {group} case ran");
}

/// kpt's render cases, nested groups (`save-on-render-failure/`, `selectors/`, ...) included.
#[test]
fn kpt_fn_render_cases() {
    run_group("fn-render", "kpt/fn-render", false);
}

/// kpt's eval cases, when the conformance data has them.
#[test]
fn kpt_fn_eval_cases() {
    run_group("fn-eval", "kpt/fn-eval", true);
}

#[test]
fn catalog_examples() {
    run_group("examples", "catalog/examples", false);
}

/// The catalog's own `tests/<function>/<case>` directories (the same layout and harness
/// as its examples), when the conformance data has them.
#[test]
fn catalog_tests() {
    run_group("tests", "catalog/tests", true);
}

/// Porch's own render case (`porch/task/simple-render`): the bucket blueprint rendered
/// through apply-setters comes out as Porch wrote it, Config Connector attribution
/// (`cnrm.cloud.google.com/blueprint: 'krm-fn'`) included.
#[test]
fn porch_simple_render() {
    let Some(dir) = conformance_dir() else {
        eprintln!("skipped: no conformance data");
        return;
    };
    let case = dir.join("porch/task/simple-render");
    if !case.is_dir() {
        eprintln!("SKIPPED: no porch/task/simple-render in the conformance data");
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let pkg = tmp.path().join("simple-bucket");
    copy_tree(&case.join("simple-bucket"), &pkg);
    let out = Command::new(env!("CARGO_BIN_EXE_porchctl"))
        .args(["fn", "render"])
        .arg(&pkg)
        .env_remove("KRM_DISABLE_ATTRIBUTION")
        .env_remove("KPT_DISABLE_ATTRIBUTION")
        .output()
        .expect("porchctl");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let want = std::fs::read_to_string(case.join("expected.txt")).expect("expected");
    let got = std::fs::read_to_string(pkg.join("bucket.yaml")).expect("bucket");
    assert_eq!(got, want);
}
