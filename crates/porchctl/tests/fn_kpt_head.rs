//! Behaviour of kpt HEAD that `porchctl fn render` / `fn eval` follow, on fixtures this
//! test writes itself: `when:` CEL conditions (run, skip, broken), `resourceFileRegexp`
//! selectors, validators not seeing their own function config, `fn eval --save`, the
//! results file's item fields, and `fn eval`'s pre-run checks.

use std::path::Path;
use std::process::Command;

mod pkgfix;
use pkgfix::{package, read};

/// porchctl's exit code and stderr.
fn porchctl(cwd: &Path, args: &[&str]) -> (i32, String) {
    let (code, _, err) = pkgfix::porchctl(cwd, args);
    (code, err)
}

const NOOP: &str = "ghcr.io/kptdev/krm-functions-catalog/no-op:v0.1.0";
const SET_LABELS: &str = "ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.2.0";
const STARLARK: &str = "ghcr.io/kptdev/krm-functions-catalog/starlark:v0.5.0";

fn kptfile(pipeline: &str) -> String {
    format!("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\npipeline:\n{pipeline}")
}

const SECRETLESS: &str =
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: fast\n";

#[test]
fn when_true_runs_when_false_skips_and_both_are_recorded() {
    let pipeline = format!(
        "  mutators:\n    - image: {SET_LABELS}\n      configMap:\n        team: a\n      when: resources.exists(r, r.kind == 'ConfigMap')\n    - image: {SET_LABELS}\n      configMap:\n        team: b\n      when: resources.exists(r, r.kind == 'Secret')\n"
    );
    let (tmp, dir) = package(&[("Kptfile", &kptfile(&pipeline)), ("cm.yaml", SECRETLESS)]);
    let (code, err) = porchctl(tmp.path(), &["fn", "render", "pkg"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(&format!(
            "[SKIPPED] \"{SET_LABELS}\" (celCondition not met)\n"
        )),
        "{err}"
    );
    // A skipped step is not counted as executed.
    assert!(
        err.contains("Successfully executed 1 function(s) in 1 package(s)."),
        "{err}"
    );
    assert!(read(&dir, "cm.yaml").contains("team: a"));
    assert!(!read(&dir, "cm.yaml").contains("team: b"));
    let kf = read(&dir, "Kptfile");
    let status = &kf[kf.find("status:").expect("status")..];
    assert!(
        status.contains("        exitCode: 0\n        when: resources.exists(r, r.kind == 'Secret')\n        skipped: true\n"),
        "{status}"
    );
    assert_eq!(status.matches("skipped: true").count(), 1, "{status}");
}

#[test]
fn a_when_that_does_not_compile_or_is_not_boolean_fails_the_render() {
    for (expr, want) in [
        ("resources.exists(r, ", "failed to compile CEL expression"),
        (
            "resources.size()",
            "CEL expression must return a boolean, got int",
        ),
    ] {
        let pipeline = format!("  mutators:\n    - image: {NOOP}\n      when: \"{expr}\"\n");
        let (tmp, dir) = package(&[("Kptfile", &kptfile(&pipeline)), ("cm.yaml", SECRETLESS)]);
        let (code, err) = porchctl(tmp.path(), &["fn", "render", "pkg"]);
        assert_eq!(code, 1, "{expr}: {err}");
        assert!(err.contains(want), "{expr}: {err}");
        assert_eq!(read(&dir, "cm.yaml"), SECRETLESS);
    }
}

#[test]
fn when_is_checked_before_it_is_evaluated_and_sees_kpts_cel_extensions() {
    // A resource field is `dyn` to the checker, so a bare field is refused even
    // though it holds a boolean; so is a name other than `resources`.
    let flagged = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: flags\n  labels:\n    tier: edge\ndata:\n  on: \"true\"\nimmutable: true\n";
    for (expr, want) in [
        (
            "resources[0].immutable",
            "CEL expression must return a boolean, got dyn",
        ),
        (
            "resources.exists(r, r.kind == wanted)",
            "undeclared reference to 'wanted' (in container '')",
        ),
    ] {
        let pipeline = format!(
            "  mutators:\n    - image: {SET_LABELS}\n      configMap:\n        seen: \"yes\"\n      when: \"{expr}\"\n"
        );
        let (tmp, dir) = package(&[("Kptfile", &kptfile(&pipeline)), ("cm.yaml", flagged)]);
        let (code, err) = porchctl(tmp.path(), &["fn", "render", "pkg"]);
        assert_eq!(code, 1, "{expr}: {err}");
        assert!(err.contains(want), "{expr}: {err}");
        assert_eq!(read(&dir, "cm.yaml"), flagged);
    }
    // Two-variable quantifiers over labels, string functions and sets decide; a
    // resource without `spec` does not make `exists` fail when another matches.
    for (expr, runs) in [
        (
            "resources.exists(r, r.metadata.labels.exists(k, v, k == 'tier' && v.upperAscii() == 'EDGE'))",
            true,
        ),
        (
            "sets.contains(resources.map(r, r.metadata.name), ['flags', 'other'])",
            false,
        ),
        (
            "resources.exists(r, r.immutable == true || r.spec.paused)",
            true,
        ),
    ] {
        let pipeline = format!(
            "  mutators:\n    - image: {SET_LABELS}\n      configMap:\n        seen: \"yes\"\n      when: \"{expr}\"\n"
        );
        let (tmp, dir) = package(&[("Kptfile", &kptfile(&pipeline)), ("cm.yaml", flagged)]);
        let (code, err) = porchctl(tmp.path(), &["fn", "render", "pkg"]);
        assert_eq!(code, 0, "{expr}: {err}");
        assert_eq!(err.contains("[SKIPPED]"), !runs, "{expr}: {err}");
        assert_eq!(
            read(&dir, "cm.yaml").contains("seen: \"yes\""),
            runs,
            "{expr}"
        );
    }
}

#[test]
fn resource_file_regexp_selects_and_excludes_by_file_path() {
    let pipeline = format!(
        "  mutators:\n    - image: {SET_LABELS}\n      configMap:\n        picked: \"yes\"\n      selectors:\n        - resourceFileRegexp: \"^apps/.*\"\n      exclude:\n        - resourceFileRegexp: \"legacy\"\n"
    );
    let cm = |n: &str| format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {n}\n");
    let (tmp, dir) = package(&[
        ("Kptfile", &kptfile(&pipeline)),
        ("apps/web.yaml", &cm("web")),
        ("apps/legacy.yaml", &cm("old")),
        ("infra/db.yaml", &cm("db")),
    ]);
    let (code, err) = porchctl(tmp.path(), &["fn", "render", "pkg"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("on 1 resource(s)"), "{err}");
    assert!(read(&dir, "apps/web.yaml").contains("picked: \"yes\""));
    assert_eq!(read(&dir, "apps/legacy.yaml"), cm("old"));
    assert_eq!(read(&dir, "infra/db.yaml"), cm("db"));
}

#[test]
fn a_validator_does_not_see_its_own_function_config() {
    // The starlark program fails if its own StarlarkRun is among the items, and counts
    // what it sees into a result.
    let program = "apiVersion: fn.kpt.dev/v1alpha1\nkind: StarlarkRun\nmetadata:\n  name: guard\nsource: |-\n  for r in ctx.resource_list[\"items\"]:\n    if r[\"kind\"] == \"StarlarkRun\":\n      fail(\"saw my own config\")\n";
    let pipeline =
        format!("  validators:\n    - image: {STARLARK}\n      configPath: guard.yaml\n");
    let (tmp, _dir) = package(&[
        ("Kptfile", &kptfile(&pipeline)),
        ("guard.yaml", program),
        ("cm.yaml", SECRETLESS),
    ]);
    let (code, err) = porchctl(tmp.path(), &["fn", "render", "pkg"]);
    assert_eq!(code, 0, "{err}");
    // As a mutator the same program sees its config, which kpt still hands mutators.
    let pipeline = format!("  mutators:\n    - image: {STARLARK}\n      configPath: guard.yaml\n");
    let (tmp, _dir) = package(&[
        ("Kptfile", &kptfile(&pipeline)),
        ("guard.yaml", program),
        ("cm.yaml", SECRETLESS),
    ]);
    let (code, err) = porchctl(tmp.path(), &["fn", "render", "pkg"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("saw my own config"), "{err}");
}

#[test]
fn results_file_items_carry_only_fnresult_fields() {
    let program = "apiVersion: fn.kpt.dev/v1alpha1\nkind: StarlarkRun\nmetadata:\n  name: deny\nsource: |-\n  fail(\"denied\")\n";
    let pipeline = format!("  validators:\n    - image: {STARLARK}\n      configPath: deny.yaml\n");
    let (tmp, _dir) = package(&[
        ("Kptfile", &kptfile(&pipeline)),
        ("deny.yaml", program),
        ("cm.yaml", SECRETLESS),
    ]);
    let (code, err) = porchctl(tmp.path(), &["fn", "render", "pkg", "--results-dir", "out"]);
    assert_eq!(code, 1, "{err}");
    let results = read(tmp.path(), "out/results.yaml");
    assert!(results.contains("severity: error"), "{results}");
    for field in ["errorResults", "executionError", "skipped", "when:"] {
        assert!(!results.contains(field), "{field} in {results}");
    }
}

#[test]
fn eval_when_skips_and_a_broken_when_fails() {
    let (tmp, dir) = package(&[("cm.yaml", SECRETLESS)]);
    let (code, err) = porchctl(
        tmp.path(),
        &[
            "fn",
            "eval",
            "pkg",
            "-i",
            SET_LABELS,
            "--when",
            "resources.size() > 5",
            "--",
            "x=y",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("[SKIPPED]"), "{err}");
    assert_eq!(read(&dir, "cm.yaml"), SECRETLESS);
    let (code, err) = porchctl(
        tmp.path(),
        &[
            "fn",
            "eval",
            "pkg",
            "-i",
            SET_LABELS,
            "--when",
            "not valid CEL",
            "--",
            "x=y",
        ],
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("failed to compile CEL expression"), "{err}");
}

#[test]
fn eval_save_adds_then_updates_the_pipeline_step() {
    let (tmp, dir) = package(&[
        (
            "Kptfile",
            "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n",
        ),
        ("cm.yaml", SECRETLESS),
    ]);
    let args = |v: &'static str| {
        [
            "fn",
            "eval",
            "-s",
            "-t",
            "mutator",
            "-i",
            "set-labels:v0.2.0",
            "--",
            v,
        ]
    };
    let (code, err) = porchctl(&dir, &args("team=a"));
    assert_eq!(code, 0, "{err}");
    let image = "ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.2.0";
    assert!(
        err.contains(&format!("Added \"{image}\" as mutator in the Kptfile.")),
        "{err}"
    );
    let (code, err) = porchctl(&dir, &args("team=b"));
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(&format!("Updated \"{image}\" as mutator in the Kptfile.")),
        "{err}"
    );
    let kf = read(&dir, "Kptfile");
    assert!(
        kf.ends_with(&format!(
            "pipeline:\n  mutators:\n    - image: {image}\n      configMap:\n        team: b\n"
        )),
        "{kf}"
    );
    drop(tmp);
}

#[test]
fn eval_pre_run_checks_use_kpt_texts() {
    let (tmp, _dir) = package(&[("cm.yaml", SECRETLESS)]);
    let cases: [(&[&str], &str); 5] = [
        (
            &["fn", "eval", "pkg", "-i", NOOP, "-s"],
            "--type must be specified if saving functions to Kptfile (--save=true)",
        ),
        (
            &["fn", "eval", "pkg", "-i", NOOP, "-s", "-t", "both"],
            "--type must be either `mutator` or `validator`",
        ),
        (
            &["fn", "eval", "pkg", "-i", NOOP, "--include-meta-resources"],
            "--include-meta-resources is no longer necessary because meta resources are now included by default",
        ),
        (
            &["fn", "eval", "pkg", "-i", NOOP, "--fn-config", "nope.yaml"],
            "missing function config file: nope.yaml",
        ),
        (
            &[
                "fn",
                "eval",
                "pkg",
                "-i",
                NOOP,
                "--fn-config",
                "pkg/cm.yaml",
                "--",
                "a=b",
            ],
            "function arguments can only be specified without function config file",
        ),
    ];
    for (args, want) in cases {
        let (code, err) = porchctl(tmp.path(), args);
        assert_eq!(code, 1, "{args:?}: {err}");
        // Plain errors of kpt's preRunE: kubectl's `error: ` form.
        assert_eq!(err, format!("error: {want}\n"), "{args:?}");
    }
}

#[test]
fn eval_fn_config_must_be_one_krm_mapping() {
    let cases = [
        // kpt HEAD's kyaml words (e2e fn-eval/invalid-fn-config-file): no path, the
        // node as encoded, its document's head comment left out.
        (
            "# just a note\n\nnot a mapping\n",
            "error: wrong node kind: expected MappingNode but got ScalarNode: node contents:\nnot a mapping\n",
        ),
        (
            "# Copyright\n\nI am not a valid config file\n",
            "wrong node kind: expected MappingNode but got ScalarNode: node contents:\nI am not a valid config file\n",
        ),
        (
            "- a\n- b\n",
            "wrong node kind: expected MappingNode but got SequenceNode: node contents:\n- a\n- b\n",
        ),
        (
            "apiVersion: v1\nkind: ConfigMap\ndata:\n  a: b\n",
            "resource must have `metadata.name`",
        ),
        (
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n",
            "must not contain more than one config, got 2",
        ),
    ];
    for (config, want) in cases {
        let (tmp, dir) = package(&[("cm.yaml", SECRETLESS)]);
        std::fs::write(tmp.path().join("fn.yaml"), config).expect("write");
        let (code, err) = porchctl(
            tmp.path(),
            &[
                "fn",
                "eval",
                "pkg",
                "-i",
                SET_LABELS,
                "--fn-config",
                "fn.yaml",
            ],
        );
        assert_eq!(code, 1, "{config}: {err}");
        assert!(err.contains(want), "{config}: {err}");
        assert_eq!(read(&dir, "cm.yaml"), SECRETLESS);
    }
}

#[test]
fn tag_overrides_the_image_tag_in_render_and_eval() {
    let pipeline = "  mutators:\n    - image: set-labels:v0.1.0\n      tag: v0.2.0\n      configMap:\n        t: x\n";
    let (tmp, dir) = package(&[("Kptfile", &kptfile(pipeline)), ("cm.yaml", SECRETLESS)]);
    let (code, err) = porchctl(tmp.path(), &["fn", "render", "pkg"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains(&format!("[PASS] \"{SET_LABELS}\"")), "{err}");
    assert!(read(&dir, "Kptfile").contains(&format!("      - image: {SET_LABELS}\n")));
    // A semver range needs a registry's tag list; one that cannot be reached (a
    // `.invalid` host never resolves) knows no tag: a step error naming the constraint.
    let pipeline =
        "  mutators:\n    - image: registry.invalid/fn/set-labels\n      tag: \"~0.2\"\n";
    let (tmp, dir) = package(&[("Kptfile", &kptfile(pipeline)), ("cm.yaml", SECRETLESS)]);
    let (code, err) = porchctl(tmp.path(), &["fn", "render", "pkg"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("no tag could be found matching the version constraint \"~0.2\""),
        "{err}"
    );
    assert_eq!(read(&dir, "cm.yaml"), SECRETLESS);
    // A tag that is neither a version, a constraint nor a valid image tag.
    let pipeline = "  mutators:\n    - image: set-labels\n      tag: \"a/b\"\n";
    let (tmp, _dir) = package(&[("Kptfile", &kptfile(pipeline)), ("cm.yaml", SECRETLESS)]);
    let (code, err) = porchctl(tmp.path(), &["fn", "render", "pkg"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("`function.tag` \"a/b\" must be a valid image tag"),
        "{err}"
    );
    let (code, err) = porchctl(
        tmp.path(),
        &[
            "fn",
            "eval",
            "pkg",
            "-i",
            "set-labels:v9",
            "--tag",
            "v0.2.0",
            "--",
            "t=y",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(&format!("[RUNNING] \"{SET_LABELS}\"")),
        "{err}"
    );
}

#[test]
fn source_eval_sink_pipe_carries_meta_resources_into_a_new_directory() {
    let pipeline = "  mutators:\n    - image: set-labels\n      configPath: labels.yaml\n";
    let labels = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: labels\ndata:\n  a: b\n";
    let (tmp, dir) = package(&[
        ("Kptfile", &kptfile(pipeline)),
        ("labels.yaml", labels),
        ("sub/cm.yaml", SECRETLESS),
    ]);
    let bin = env!("CARGO_BIN_EXE_porchctl");
    let script = format!(
        "{bin} fn source pkg | {bin} fn eval - -i {SET_LABELS} -- team=x | {bin} fn sink out"
    );
    let out = Command::new("sh")
        .args(["-c", &script])
        .current_dir(tmp.path())
        .output()
        .expect("sh runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written = tmp.path().join("out");
    // kpt HEAD's source includes the meta resources: the Kptfile and the pipeline's
    // function config went through the function too.
    assert!(read(&written, "sub/cm.yaml").contains("team: x"));
    assert!(read(&written, "labels.yaml").contains("team: x"));
    assert!(read(&written, "Kptfile").contains("kind: Kptfile"));
    // The source package is untouched.
    assert_eq!(read(&dir, "labels.yaml"), labels);
    assert_eq!(read(&dir, "Kptfile"), kptfile(pipeline));
}

#[test]
fn source_refuses_include_meta_resources_and_sink_refuses_an_existing_directory() {
    let (tmp, _dir) = package(&[
        ("Kptfile", &kptfile("  mutators: []\n")),
        ("cm.yaml", SECRETLESS),
    ]);
    let (code, err) = porchctl(
        tmp.path(),
        &["fn", "source", "pkg", "--include-meta-resources"],
    );
    assert_eq!(code, 1, "{err}");
    assert_eq!(
        err,
        "error: --include-meta-resources is no longer necessary because meta resources are now included by default\n"
    );
    let (code, err) = porchctl(tmp.path(), &["fn", "source", "pkg", "-o", "json"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("invalid input for --output flag \"json\", must be \"stdout\" or \"unwrap\""),
        "{err}"
    );
    let bin = env!("CARGO_BIN_EXE_porchctl");
    for (target, want) in [
        (
            "pkg",
            "error: directory \"pkg\" already exists, please delete the directory and retry\n",
        ),
        ("", "requires at least 1 arg(s), only received 0\n"),
    ] {
        let out = Command::new("sh")
            .args([
                "-c",
                &format!("{bin} fn source pkg | {bin} fn sink {target}"),
            ])
            .current_dir(tmp.path())
            .output()
            .expect("sh runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "sink {target:?}: {err}");
        assert!(err.contains(want), "sink {target:?}: {err}");
    }
}

#[test]
fn container_only_flags_are_refused_for_exec_and_truncate_output_is_accepted() {
    let (tmp, _dir) = package(&[
        ("cm.yaml", SECRETLESS),
        ("Kptfile", &kptfile("  mutators: []\n")),
    ]);
    for flag in [
        &["--network"][..],
        &["-e", "A=b"],
        &["--mount", "type=bind,src=/,dst=/x"],
        &["--as-current-user"],
    ] {
        let mut args = vec!["fn", "eval", "pkg", "--exec", "cat"];
        args.extend_from_slice(flag);
        let (code, err) = porchctl(tmp.path(), &args);
        assert_eq!(code, 1, "{flag:?}: {err}");
        assert!(
            err.contains("--mount, --as-current-user, --network and --env can only be used with container functions"),
            "{flag:?}: {err}"
        );
    }
    for value in [
        "--truncate-output=false",
        "--truncate-output",
        "--truncate-output=true",
    ] {
        let (code, err) = porchctl(tmp.path(), &["fn", "render", "pkg", value]);
        assert_eq!(code, 0, "{value}: {err}");
    }
}
