//! `porchctl fn eval` branches ported from kpt's eval command (`cmdeval`, `runfn`) and
//! kyaml's package writer, on fixtures written here: line breaks of rewritten files,
//! the out-of-place destinations, and the pre-run checks.

use std::process::Command;

const NOOP: &str = "ghcr.io/kptdev/krm-functions-catalog/no-op:v0.1.0";
const SET_ANNOTATIONS: &str = "ghcr.io/kptdev/krm-functions-catalog/set-annotations:v0.1.4";

const TWO_DOCS: &str = "# header\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a # keep\ndata:\n  k: v\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n";

mod pkgfix;
use pkgfix::{package, porchctl, read};

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
        &[
            "fn",
            "eval",
            "pkg",
            "-i",
            SET_ANNOTATIONS,
            "--match-name",
            "b",
            "--",
            "x=y",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let text = read(&dir, "cm.yaml");
    assert!(!text.contains('\r'), "{text:?}");
    assert!(text.starts_with("# header\napiVersion: v1\n"), "{text}");
    assert!(text.contains("  name: a # keep\n"), "{text}");
    assert!(text.contains("    x: \"y\"\n"), "{text}");
}

#[test]
fn a_rewritten_file_keeps_its_mode() {
    use std::os::unix::fs::PermissionsExt;
    let (tmp, dir) = package(&[("cm.yaml", &crlf(TWO_DOCS))]);
    let path = dir.join("cm.yaml");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let (code, _, err) = porchctl(tmp.path(), &["fn", "eval", "pkg", "-i", NOOP]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(read(&dir, "cm.yaml"), TWO_DOCS, "rewritten");
    let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
    assert_eq!(mode & 0o777, 0o755);
}

/// kpt's eval errors are plain Go errors, printed by kubectl's `CheckErr` after kpt's
/// main fails to resolve them: `error: <message>` and a line break.
#[test]
fn eval_errors_are_printed_as_kubectl_prints_them() {
    let (tmp, _dir) = package(&[
        ("cm.yaml", TWO_DOCS),
        ("nonkrm.yaml", "Non-krm-resource: true"),
    ]);
    std::fs::write(
        tmp.path().join("fn-config.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  namespace: x\n",
    )
    .expect("write");
    let (code, _, err) = porchctl(tmp.path(), &["fn", "eval", "pkg", "-i", NOOP]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.ends_with(&format!(
            "[FAIL] \"{NOOP}\" in 0s\nerror: input resource list must contain only KRM resources: nonkrm.yaml: resource must have `apiVersion`\n"
        )),
        "{err}"
    );
    std::fs::remove_file(tmp.path().join("pkg/nonkrm.yaml")).expect("rm");
    let (code, _, err) = porchctl(
        tmp.path(),
        &[
            "fn",
            "eval",
            "pkg",
            "-i",
            NOOP,
            "--fn-config",
            "fn-config.yaml",
        ],
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.starts_with("error: functionConfig "), "{err}");
    assert!(
        err.ends_with("resource must have `metadata.name`\n"),
        "{err}"
    );
    std::fs::create_dir(tmp.path().join("out")).expect("mkdir");
    let (code, _, err) = porchctl(tmp.path(), &["fn", "eval", "pkg", "-i", NOOP, "-o", "out"]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(
        err,
        "error: directory \"out\" already exists, please delete the directory and retry\n"
    );
}

/// `preRunE`'s checks in kpt's order and words: the results directory is made first,
/// then the `--` arguments, then the image reference.
#[test]
fn pre_run_checks_follow_kpts_order_and_words() {
    let (tmp, _dir) = package(&[("cm.yaml", TWO_DOCS)]);
    let (code, _, err) = porchctl(
        tmp.path(),
        &[
            "fn",
            "eval",
            "pkg",
            "-i",
            NOOP,
            "--results-dir",
            "made",
            "--",
            "a=b",
            "c",
        ],
    );
    assert_eq!(code, 1, "{err}");
    assert_eq!(
        err,
        "error: args must have keys and values separated by =\n"
    );
    assert!(
        tmp.path().join("made").is_dir(),
        "results dir made up front"
    );
    let (code, _, err) = porchctl(tmp.path(), &["fn", "eval", "pkg", "-i", "Bad/Image:v1"]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(
        err,
        "error: function image reference \"Bad/Image:v1\" is invalid: repository name must be lowercase\n"
    );
    // A leading word without `=` is the config's kind, not an error.
    let (code, _, err) = porchctl(
        tmp.path(),
        &["fn", "eval", "pkg", "-i", NOOP, "--", "MyKind", "a=b"],
    );
    assert_eq!(code, 0, "{err}");
}

/// runfn prints where the results went, after a blank line, also when the function fails.
#[test]
fn the_results_file_is_announced_after_a_blank_line() {
    let (tmp, _dir) = package(&[("cm.yaml", TWO_DOCS)]);
    let (code, _, err) = porchctl(
        tmp.path(),
        &["fn", "eval", "pkg", "-i", NOOP, "--results-dir", "res"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        err.ends_with("in 0s\n\nFor complete results, see res/results.yaml\n"),
        "{err}"
    );
    let (code, _, err) = porchctl(
        tmp.path(),
        &[
            "fn",
            "eval",
            "pkg",
            "--exec",
            "false",
            "--results-dir",
            "res2",
        ],
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("\n\nFor complete results, see res2/results.yaml\n"),
        "{err}"
    );
    assert!(tmp.path().join("res2/results.yaml").is_file());
}

/// `--image-pull-policy` takes kpt's values in any case and refuses others as pflag
/// reports kpt's `ImagePullPolicy.Set` error.
#[test]
fn image_pull_policy_values_are_kpts() {
    let (tmp, _dir) = package(&[("cm.yaml", TWO_DOCS)]);
    for ok in ["never", "IFNOTPRESENT", "Always"] {
        let (code, _, err) = porchctl(
            tmp.path(),
            &["fn", "eval", "pkg", "-i", NOOP, "--image-pull-policy", ok],
        );
        assert_eq!(code, 0, "{ok}: {err}");
    }
    let (code, _, err) = porchctl(
        tmp.path(),
        &[
            "fn",
            "eval",
            "pkg",
            "-i",
            NOOP,
            "--image-pull-policy=sometimes",
        ],
    );
    assert_eq!(code, 1, "{err}");
    assert_eq!(
        err,
        "error: invalid argument \"sometimes\" for \"--image-pull-policy\" flag: must must be one of Always, IfNotPresent, Never\n"
    );
}

/// `getFunctionSpec` takes the image when both `--image` and `--exec` are given.
#[test]
fn the_image_wins_over_exec() {
    let (tmp, _dir) = package(&[("cm.yaml", TWO_DOCS)]);
    let (code, _, err) = porchctl(
        tmp.path(),
        &["fn", "eval", "pkg", "-i", NOOP, "--exec", "false"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(err.starts_with(&format!("[RUNNING] \"{NOOP}\"\n")), "{err}");
}

/// `getCLIFunctionConfig`: an image or exec function always gets a `function-input`
/// ConfigMap, empty without arguments, fields in kpt's order; a ResourceList read from
/// stdin brings its items only, not its functionConfig.
#[test]
fn the_command_line_config_map_is_always_given() {
    let (tmp, _dir) = package(&[("cm.yaml", TWO_DOCS)]);
    let seen = |args: &[&str]| -> String {
        let mut all = vec!["fn", "eval", "pkg", "--exec", "tee seen.yaml"];
        all.extend_from_slice(args);
        let (code, _, err) = porchctl(tmp.path(), &all);
        assert_eq!(code, 0, "{err}");
        let text = read(tmp.path(), "seen.yaml");
        text[text.find("functionConfig:").expect("functionConfig")..].to_string()
    };
    assert_eq!(
        seen(&[]),
        "functionConfig:\n  metadata:\n    name: function-input\n  data: {}\n  kind: ConfigMap\n  apiVersion: v1\n"
    );
    assert_eq!(
        seen(&["--", "MyKind", "z=1", "a=true"]),
        // kpt fills the `data: {}` of its template, so the data stays a flow mapping
        // (checked against kpt 1.0.0-beta.56).
        "functionConfig:\n  metadata:\n    name: function-input\n  data: {z: \"1\", a: \"true\"}\n  kind: MyKind\n  apiVersion: v1\n"
    );
    let bin = env!("CARGO_BIN_EXE_porchctl");
    std::fs::write(
        tmp.path().join("other.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-the-list\n",
    )
    .expect("write");
    let out = Command::new("sh")
        .args([
            "-c",
            &format!("{bin} fn source pkg --fn-config other.yaml | {bin} fn eval - --exec 'tee seen.yaml' >/dev/null"),
        ])
        .current_dir(tmp.path())
        .output()
        .expect("sh runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = read(tmp.path(), "seen.yaml");
    assert!(!text.contains("from-the-list"), "{text}");
    assert!(text.contains("name: function-input"), "{text}");
}

/// `argutil.ResolveSymlink`: a missing package fails as Go's `EvalSymlinks` does, a
/// symlinked one is followed with kpt's warning (relative for eval's argument, absolute
/// for source, which resolves the absolute path).
#[test]
fn package_arguments_are_resolved_as_kpt_resolves_symlinks() {
    let (tmp, _dir) = package(&[("cm.yaml", TWO_DOCS)]);
    let (code, _, err) = porchctl(tmp.path(), &["fn", "eval", "gone/pkg", "-i", NOOP]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(err, "error: lstat gone: no such file or directory\n");
    std::os::unix::fs::symlink("pkg", tmp.path().join("link")).expect("symlink");
    let (code, _, err) = porchctl(tmp.path(), &["fn", "eval", "link", "-i", NOOP]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.starts_with("[WARN] resolved symlink \"link\" to \"pkg\", please note that the symlinks within the package are ignored\n"),
        "{err}"
    );
    let root = std::fs::canonicalize(tmp.path()).expect("canonical");
    let (code, out, err) = porchctl(tmp.path(), &["fn", "source", "link"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        err,
        format!(
            "[WARN] resolved symlink {:?} to {:?}, please note that the symlinks within the package are ignored\n",
            std::path::absolute(tmp.path().join("link"))
                .expect("abs")
                .display()
                .to_string(),
            root.join("pkg").display().to_string()
        )
    );
    assert!(out.contains("name: a"), "{out}");
}

/// A failing exec function: `[FAIL]`, its stderr as written (each line in `%q`, the
/// empty one after the final newline included), the exit code line and a blank line
/// (fnruntime's `printFnExecErr`), then runfn's results note after another blank line;
/// no error line (the failure was already reported).
#[test]
fn a_failing_function_is_reported_as_fnruntime_prints_it() {
    let (tmp, _dir) = package(&[("cm.yaml", TWO_DOCS)]);
    let (code, _, err) = porchctl(
        tmp.path(),
        &[
            "fn",
            "eval",
            "pkg",
            "--exec",
            "sh -c 'echo oops >&2; exit 3'",
            "--results-dir",
            "res",
        ],
    );
    assert_eq!(code, 1, "{err}");
    assert_eq!(
        err,
        "[RUNNING] \"sh -c 'echo oops >&2; exit 3'\"\n[FAIL] \"sh -c 'echo oops >&2; exit 3'\" in 0s\n  Stderr:\n    \"oops\"\n    \"\"\n  Exit code: 3\n\n\nFor complete results, see res/results.yaml\n"
    );
}

/// kyaml's package reader walks the tree: sub-package files come where their directory
/// sorts, between the parent's files, for `fn source` and `fn eval`'s input alike.
#[test]
fn resources_are_read_in_walk_order() {
    let cm = |name: &str| format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n");
    let (tmp, _dir) = package(&[
        (
            "Kptfile",
            "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: root\n",
        ),
        ("a.yaml", &cm("a")),
        ("z.yaml", &cm("z")),
        (
            "db/Kptfile",
            "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: db\n",
        ),
        ("db/m.yaml", &cm("m")),
        ("db.yaml", &cm("dbfile")),
        ("c/n.yaml", &cm("n")),
    ]);
    let paths = |out: &str| -> Vec<String> {
        out.lines()
            .filter_map(|l| l.trim().strip_prefix("config.kubernetes.io/path: "))
            .map(|p| p.trim_matches('\'').to_string())
            .collect()
    };
    let want = [
        "Kptfile",
        "a.yaml",
        "c/n.yaml",
        "db/Kptfile",
        "db/m.yaml",
        "db.yaml",
        "z.yaml",
    ];
    let (code, out, err) = porchctl(tmp.path(), &["fn", "source", "pkg"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(paths(&out), want);
    let (code, out, err) = porchctl(
        tmp.path(),
        &["fn", "eval", "pkg", "-i", NOOP, "-o", "stdout"],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(paths(&out), want);
}

/// The package's `.krmignore` is applied during the one walk over the tree, so a
/// sub-package it names is not read by `fn eval` at all (as kyaml's reader skips it).
#[test]
fn a_krmignored_sub_package_is_not_evaluated() {
    let cm = |name: &str| format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n");
    let (tmp, _dir) = package(&[
        (".krmignore", "vendored\n"),
        ("a.yaml", &cm("a")),
        (
            "vendored/Kptfile",
            "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: vendored\n",
        ),
        ("vendored/v.yaml", &cm("v")),
        ("plain/p.yaml", &cm("p")),
    ]);
    let (code, out, err) = porchctl(
        tmp.path(),
        &["fn", "eval", "pkg", "-i", NOOP, "-o", "stdout"],
    );
    assert_eq!(code, 0, "{err}");
    let names: Vec<&str> = out
        .lines()
        .filter_map(|l| l.trim().strip_prefix("name: "))
        .collect();
    assert_eq!(names, ["a", "p"], "{out}");
}

/// runfn reads every package resource: a `--fn-config` file inside the package is also
/// in the function's input (and is changed like any other resource).
#[test]
fn a_function_config_inside_the_package_is_part_of_the_input() {
    let (tmp, dir) = package(&[
        ("cm.yaml", TWO_DOCS),
        (
            "fn-config.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  team: x\n",
        ),
    ]);
    let (code, _, err) = porchctl(
        tmp.path(),
        &[
            "fn",
            "eval",
            "pkg",
            "-i",
            "ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.2.0",
            "--fn-config",
            "pkg/fn-config.yaml",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        read(&dir, "fn-config.yaml").contains("    team: x\n"),
        "{}",
        read(&dir, "fn-config.yaml")
    );
    assert!(read(&dir, "cm.yaml").contains("team: x"));
}

/// A passing function's stderr (fnruntime's `printFnStderr`): each line in Go's `%q`,
/// four of them at most, then how many were left out and how to see them.
#[test]
fn a_passing_functions_stderr_is_quoted_and_truncated() {
    let (tmp, _dir) = package(&[("cm.yaml", TWO_DOCS)]);
    let script = "cat; for i in 1 2 3 4 5 6; do echo \"say \\\"$i\\\"\" >&2; done";
    let exec = format!("sh -c '{script}'");
    let (code, _, err) = porchctl(tmp.path(), &["fn", "eval", "pkg", "--exec", &exec]);
    assert_eq!(code, 0, "{err}");
    let want = format!(
        "[RUNNING] {exec:?}\n[PASS] {exec:?} in 0s\n  Stderr:\n    \"say \\\"1\\\"\"\n    \"say \\\"2\\\"\"\n    \"say \\\"3\\\"\"\n    \"say \\\"4\\\"\"\n    ...(3 line(s) truncated, use '--truncate-output=false' to disable)\n"
    );
    assert_eq!(err, want);
}

/// `--truncate-output=false` (any of pflag's false spellings) shows every line, the
/// empty one after the final newline too; `--truncate-output` alone keeps truncation.
#[test]
fn truncate_output_false_shows_all_of_the_stderr() {
    let (tmp, _dir) = package(&[("cm.yaml", TWO_DOCS)]);
    let exec = "sh -c 'cat; for i in 1 2 3 4 5; do echo l$i >&2; done'";
    for off in [
        "--truncate-output=false",
        "--truncate-output=f",
        "--truncate-output=0",
    ] {
        let (code, _, err) = porchctl(tmp.path(), &["fn", "eval", "pkg", "--exec", exec, off]);
        assert_eq!(code, 0, "{err}");
        assert!(
            err.ends_with(
                "  Stderr:\n    \"l1\"\n    \"l2\"\n    \"l3\"\n    \"l4\"\n    \"l5\"\n    \"\"\n"
            ),
            "{off}: {err}"
        );
    }
    let (code, _, err) = porchctl(
        tmp.path(),
        &["fn", "eval", "pkg", "--exec", exec, "--truncate-output"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        err.ends_with("    ...(2 line(s) truncated, use '--truncate-output=false' to disable)\n"),
        "{err}"
    );
}

/// kyaml's package reader: a file that does not parse is named by the path it walked
/// (the package directory made absolute) with `MalformedYAMLError: ` before go-yaml's
/// words, the line counted from the start of the failing document; nothing runs.
#[test]
fn a_malformed_resource_file_is_reported_as_kyaml_reads_it() {
    let second = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a\n";
    let (tmp, dir) = package(&[("sub/cm.yaml", second)]);
    let (code, _, err) = porchctl(tmp.path(), &["fn", "eval", "pkg", "-i", NOOP]);
    assert_eq!(code, 1, "{err}");
    let file = std::fs::canonicalize(&dir)
        .expect("abs")
        .join("sub/cm.yaml");
    assert_eq!(
        err,
        format!(
            "error: {}: MalformedYAMLError: yaml: line 2: did not find expected ',' or '}}'\n",
            file.display()
        )
    );
}

/// A document that is a plain scalar cannot take the reader's annotations: kyaml's
/// `ErrorIfInvalid` words it, for `fn eval` and `fn render` alike.
#[test]
fn a_scalar_document_is_refused_as_not_a_mapping() {
    let (tmp, dir) = package(&[
        ("cm.yaml", "hello\n"),
        (
            "Kptfile",
            "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\n",
        ),
    ]);
    let file = std::fs::canonicalize(&dir).expect("abs").join("cm.yaml");
    let want = format!(
        "{}: wrong node kind: expected MappingNode but got ScalarNode: node contents:\nhello\n",
        file.display()
    );
    let (code, _, err) = porchctl(tmp.path(), &["fn", "eval", "pkg", "-i", NOOP]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(err, format!("error: {want}"));
    let (code, _, err) = porchctl(tmp.path(), &["fn", "render", "pkg"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.ends_with(&format!("Error: {want} \n")), "{err}");
}

/// An exec function that never starts (kpt's ExecFn gets no ExitError): `[FAIL]` with no
/// exit code, then Go's `exec` error wrapped as unexpected — `fork/exec <path>: <errno>`
/// for a path, `exec: "<name>": executable file not found in $PATH` for a bare name.
#[test]
fn an_exec_function_that_cannot_start_is_reported_in_gos_words() {
    let (tmp, _dir) = package(&[("cm.yaml", TWO_DOCS)]);
    for (exec, error) in [
        (
            "/nonexistent/fn",
            "unexpected function error: fork/exec /nonexistent/fn: no such file or directory",
        ),
        (
            "porch-no-such-command-xyz --flag",
            "unexpected function error: exec: \"porch-no-such-command-xyz\": executable file not found in $PATH",
        ),
    ] {
        let (code, _, err) = porchctl(tmp.path(), &["fn", "eval", "pkg", "--exec", exec]);
        assert_eq!(code, 1, "{err}");
        assert_eq!(
            err,
            format!("[RUNNING] {exec:?}\n[FAIL] {exec:?} in 0s\nerror: {error}\n")
        );
    }
}

/// Output kyaml cannot read fails the step with no exit code (no ExecError) and
/// kyaml's words as the error.
#[test]
fn unreadable_function_output_is_reported_in_kyamls_words() {
    let (tmp, _dir) = package(&[("cm.yaml", TWO_DOCS)]);
    for (out, error) in [
        (
            "notyaml",
            "wrong node kind: expected MappingNode but got ScalarNode: node contents:\nnotyaml",
        ),
        (
            "a: b: c",
            "MalformedYAMLError: yaml: mapping values are not allowed in this context",
        ),
    ] {
        let exec = format!("sh -c 'cat >/dev/null; echo \"{out}\"'");
        let (code, _, err) = porchctl(tmp.path(), &["fn", "eval", "pkg", "--exec", &exec]);
        assert_eq!(code, 1, "{err}");
        assert_eq!(
            err,
            format!("[RUNNING] {exec:?}\n[FAIL] {exec:?} in 0s\nerror: {error}\n")
        );
    }
}
