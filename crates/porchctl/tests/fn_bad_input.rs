//! Bad input to `porchctl fn render` / `fn eval`: malformed YAML, a Kptfile with unknown
//! fields, function configs that do not fit, an exec function that hangs or writes
//! garbage, an image that does not exist.
//!
//! Each case must exit non-zero, say on stderr which file/position or function is at
//! fault, and leave the package exactly as it was — except that, as kpt HEAD does, a
//! failure after render has started records `Rendered=False` status in the root Kptfile
//! (the rest of the Kptfile stays byte for byte). Errors found while validating the
//! Kptfile or a config path before anything runs write nothing; `fn eval` never writes
//! status. Every case asserts precisely which of the two happened.

use std::collections::BTreeMap;
use std::path::Path;

mod pkgfix;

const KPTFILE_HEAD: &str = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\n";

const CM: &str = "# a config map\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm # keep\ndata:\n  a: b\n";

fn kptfile(pipeline: &str) -> String {
    format!("{KPTFILE_HEAD}pipeline:\n  mutators:\n{pipeline}")
}

/// A package in a temp dir: root Kptfile with `pipeline`, `cm.yaml`, `README.md`, plus
/// `extra` files.
fn package(pipeline: &str, extra: &[(&str, &str)]) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("pkg");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join("Kptfile"), kptfile(pipeline)).expect("Kptfile");
    std::fs::write(dir.join("cm.yaml"), CM).expect("cm");
    std::fs::write(dir.join("README.md"), "# pkg\n").expect("readme");
    for (rel, text) in extra {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, text).expect("write");
        if rel.ends_with(".sh") {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        }
    }
    tmp
}

fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(dir).expect("read_dir") {
            let e = e.expect("entry");
            if e.file_type().expect("file type").is_dir() {
                walk(base, &e.path(), out);
            } else {
                let rel = e.path().strip_prefix(base).expect("prefix").to_owned();
                out.insert(
                    rel.to_string_lossy().into_owned(),
                    std::fs::read(e.path()).expect("read"),
                );
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// `porchctl args…` in `dir`: exit code and stderr.
fn porchctl(args: &[&str], dir: &Path) -> (i32, String) {
    let (code, _, stderr) = pkgfix::porchctl(dir, args);
    (code, stderr)
}

/// What the failure may leave in the root Kptfile.
enum Status {
    /// Nothing at all is written.
    None,
    /// A `Rendered=False` condition only (no step ran).
    ConditionOnly,
    /// The condition plus `renderStatus` with the failing step.
    WithSteps,
}

/// Run `args` in the package's parent dir; require failure, every `needles` on stderr,
/// and the tree unchanged but for the status `expect`ed in the root Kptfile.
fn check(tmp: &tempfile::TempDir, args: &[&str], needles: &[&str], expect: Status) -> String {
    let dir = tmp.path().join("pkg");
    let before = snapshot(&dir);
    let (code, stderr) = porchctl(args, tmp.path());
    assert_ne!(code, 0, "must fail; stderr:\n{stderr}");
    for n in needles {
        assert!(stderr.contains(n), "stderr lacks {n:?}:\n{stderr}");
    }
    let mut after = snapshot(&dir);
    let kf_before = String::from_utf8(before["Kptfile"].clone()).expect("utf8");
    let kf_after = String::from_utf8(after.remove("Kptfile").expect("Kptfile kept")).expect("utf8");
    let mut rest_before = before.clone();
    rest_before.remove("Kptfile");
    assert_eq!(
        rest_before, after,
        "files other than the Kptfile must not change"
    );
    match expect {
        Status::None => assert_eq!(kf_before, kf_after, "the Kptfile must not change"),
        Status::ConditionOnly | Status::WithSteps => {
            let status = kf_after
                .strip_prefix(kf_before.as_str())
                .unwrap_or_else(|| panic!("Kptfile must only gain status:\n{kf_after}"));
            assert!(status.starts_with("status:\n  conditions:\n    - type: Rendered\n      status: \"False\"\n      reason: RenderFailed\n"), "{status}");
            let has_steps = status.contains("\n  renderStatus:\n");
            assert_eq!(
                has_steps,
                matches!(expect, Status::WithSteps),
                "renderStatus presence:\n{status}"
            );
        }
    }
    stderr
}

const SET_NS: &str = "    - image: ghcr.io/kptdev/krm-functions-catalog/set-namespace:v0.4.1\n      configMap:\n        namespace: prod\n";

#[test]
fn malformed_yaml_in_a_resource_names_file_and_position() {
    let tmp = package(
        SET_NS,
        &[(
            "sub/dir/bad.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  labels: {a: b\n",
        )],
    );
    check(
        &tmp,
        &["fn", "render", "pkg"],
        &["sub/dir/bad.yaml", "line"],
        Status::ConditionOnly,
    );
}

#[test]
fn malformed_yaml_in_eval_changes_nothing() {
    let tmp = package(SET_NS, &[("bad.yaml", "a: b\n c: d\n")]);
    check(
        &tmp,
        &[
            "fn",
            "eval",
            "pkg",
            "--image",
            "set-namespace:v0.4.1",
            "--",
            "namespace=x",
        ],
        &["bad.yaml", "line 2"],
        Status::None,
    );
}

#[test]
fn kptfile_with_unknown_fields_writes_nothing() {
    let tmp = package(SET_NS, &[]);
    let kf = tmp.path().join("pkg/Kptfile");
    let mut text = std::fs::read_to_string(&kf).expect("read");
    text.push_str("unexpected: field\n");
    std::fs::write(&kf, text).expect("write");
    check(
        &tmp,
        &["fn", "render", "pkg"],
        &["line 10", "field unexpected not found in type v1.KptFile"],
        Status::None,
    );
}

#[test]
fn unknown_field_in_a_pipeline_step_writes_nothing() {
    let tmp = package(
        "    - image: set-namespace:v0.4.1\n      configMap:\n        namespace: x\n      targets: all\n",
        &[],
    );
    check(
        &tmp,
        &["fn", "render", "pkg"],
        &["field targets not found in type v1.Function"],
        Status::None,
    );
}

#[test]
fn set_namespace_with_a_config_of_the_wrong_kind_reports_it_and_passes() {
    // The catalog's set-namespace reports configuration problems as an error
    // result but returns success (its `Run` always does), so the render passes
    // with the result recorded and nothing changed.
    let tmp = package(
        "    - image: set-namespace:v0.4.1\n      configPath: fn.yaml\n",
        &[(
            "fn.yaml",
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: fn\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\ndata:\n  namespace: eA==\n",
        )],
    );
    let dir = tmp.path().join("pkg");
    let before = snapshot(&dir);
    let (code, stderr) = porchctl(&["fn", "render", "pkg"], tmp.path());
    assert_eq!(code, 0, "{stderr}");
    let mut after = snapshot(&dir);
    let kptfile = String::from_utf8(after.remove("Kptfile").expect("Kptfile")).expect("utf8");
    assert!(kptfile.contains("reason: RenderSuccess"), "{kptfile}");
    assert!(
        kptfile.contains("unknown functionConfig Kind=Secret"),
        "the error result is recorded:\n{kptfile}"
    );
    let mut rest = before;
    rest.remove("Kptfile");
    assert_eq!(rest, after, "files other than the Kptfile must not change");
}

#[test]
fn config_path_to_a_missing_file_names_the_field() {
    let tmp = package(
        "    - image: set-namespace:v0.4.1\n      configPath: nope.yaml\n",
        &[],
    );
    check(
        &tmp,
        &["fn", "render", "pkg"],
        &[
            "pipeline.mutators[0].configPath",
            "\"nope.yaml\"",
            "functionConfig must exist in the current package",
        ],
        // kpt validates the Kptfile (the file must exist) when it loads the package,
        // before render starts: no status is recorded.
        Status::None,
    );
}

#[test]
fn absolute_config_path_writes_nothing() {
    let tmp = package(
        "    - image: set-namespace:v0.4.1\n      configPath: /etc/fn.yaml\n",
        &[],
    );
    check(
        &tmp,
        &["fn", "render", "pkg"],
        &["pipeline.mutators[0].configPath", "path must be relative"],
        Status::None,
    );
}

#[test]
fn eval_with_a_missing_fn_config_file_changes_nothing() {
    let tmp = package(SET_NS, &[]);
    check(
        &tmp,
        &[
            "fn",
            "eval",
            "pkg",
            "--image",
            "set-namespace:v0.4.1",
            "--fn-config",
            "pkg/missing.yaml",
        ],
        &["missing.yaml"],
        Status::None,
    );
}

#[test]
fn hanging_exec_function_is_killed_by_the_timeout() {
    let tmp = package("    - exec: sleep 600\n", &[]);
    check(
        &tmp,
        &["fn", "render", "pkg", "--allow-exec", "--fn-timeout", "2"],
        &["\"sleep 600\"", "timed out"],
        Status::WithSteps,
    );
}

#[test]
fn hanging_exec_function_in_eval_changes_nothing() {
    let tmp = package(SET_NS, &[]);
    check(
        &tmp,
        &[
            "fn",
            "eval",
            "pkg",
            "--exec",
            "sleep 600",
            "--fn-timeout",
            "2",
        ],
        &["sleep 600", "timed out"],
        Status::None,
    );
}

const GARBAGE: &str = "#!/bin/sh\ncat >/dev/null\necho 'items: [not: yaml'\n";
const NOT_A_LIST: &str = "#!/bin/sh\ncat >/dev/null\necho 'hello world'\n";

#[test]
fn exec_function_writing_garbage_fails_the_step() {
    for (script, body) in [("garbage.sh", GARBAGE), ("not-a-list.sh", NOT_A_LIST)] {
        let tmp = package(&format!("    - exec: ./{script}\n"), &[(script, body)]);
        // exec paths are relative to the working directory (as kpt).
        let dir = tmp.path().join("pkg");
        let before = snapshot(&dir);
        let (code, stderr) = porchctl(&["fn", "render", ".", "--allow-exec"], &dir);
        assert_ne!(code, 0, "{script}: {stderr}");
        assert!(stderr.contains(script), "{script}: {stderr}");
        let mut after = snapshot(&dir);
        let kf = String::from_utf8(after.remove("Kptfile").expect("Kptfile")).expect("utf8");
        let mut rest = before.clone();
        let kf_before = String::from_utf8(rest.remove("Kptfile").expect("Kptfile")).expect("utf8");
        assert_eq!(rest, after, "{script}");
        let status = kf
            .strip_prefix(kf_before.as_str())
            .expect("only status added");
        assert!(status.contains("status: \"False\""), "{status}");
        assert!(status.contains(&format!("exec: ./{script}")), "{status}");
    }
}

#[test]
fn exec_function_writing_garbage_in_eval_changes_nothing() {
    let tmp = package(SET_NS, &[("garbage.sh", GARBAGE)]);
    check(
        &tmp,
        &["fn", "eval", "pkg", "--exec", "pkg/garbage.sh"],
        &["garbage.sh"],
        Status::None,
    );
}

#[test]
fn missing_image_names_the_image() {
    let tmp = package("    - image: example.com/fns/no-such-fn:v1\n", &[]);
    let stderr = check(
        &tmp,
        &["fn", "render", "pkg"],
        &["example.com/fns/no-such-fn:v1"],
        Status::WithSteps,
    );
    assert!(stderr.contains("hint:"), "{stderr}");
}

#[test]
fn missing_image_in_eval_changes_nothing() {
    let tmp = package(SET_NS, &[]);
    check(
        &tmp,
        &[
            "fn",
            "eval",
            "pkg",
            "--image",
            "example.com/fns/no-such-fn:v1",
        ],
        &["example.com/fns/no-such-fn:v1"],
        Status::None,
    );
}

#[test]
fn exec_without_allow_exec_is_refused() {
    let tmp = package("    - exec: cat\n", &[]);
    // As kpt, the refusal comes before the function would start: no `[RUNNING]` line
    // names it, the status's step does.
    check(
        &tmp,
        &["fn", "render", "pkg"],
        &["allow-exec"],
        Status::WithSteps,
    );
    let kptfile = std::fs::read_to_string(tmp.path().join("pkg/Kptfile")).expect("Kptfile");
    assert!(
        kptfile.contains("mutationSteps:\n      - exec: cat\n"),
        "{kptfile}"
    );
}

/// `--allow-alpha-wasm` asks for kpt's WebAssembly runtime, which porchctl does not have:
/// every function is refused before anything runs (never run as a container instead),
/// with a hint; without functions the flag changes nothing.
#[test]
fn wasm_functions_are_refused_before_anything_runs() {
    let tmp = package(SET_NS, &[]);
    let stderr = check(
        &tmp,
        &["fn", "render", "pkg", "--allow-alpha-wasm"],
        &["wasm functions are not supported", "hint:"],
        Status::WithSteps,
    );
    assert!(!stderr.contains("[RUNNING]"), "{stderr}");
    let tmp = package(SET_NS, &[]);
    let (code, stderr) = porchctl(
        &[
            "fn",
            "eval",
            "pkg",
            "--allow-alpha-wasm",
            "-i",
            "set-namespace:v0.4.1",
            "--",
            "namespace=a",
        ],
        tmp.path(),
    );
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.starts_with("error: wasm functions are not supported"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("pkg/cm.yaml")).expect("cm"),
        CM
    );
    let tmp = package("", &[]);
    let (code, stderr) = porchctl(
        &["fn", "render", "pkg", "--allow-alpha-wasm=true"],
        tmp.path(),
    );
    assert_eq!(code, 0, "{stderr}");
}
