//! `porchctl fn render` in the forms kpt prints and writes for cases the shared
//! conformance data does not cover: the resource count of a function with selectors,
//! a function's stderr kept in `renderStatus` on success, Kptfile validation before
//! anything renders, an existing `-o` directory, a sub-package Kptfile that does not
//! decode, and go-yaml's words for a Kptfile value of the wrong type. Exec functions
//! are `sh` scripts, so this runs on any Unix clone.

use std::path::Path;

/// Write `files` under `<tmp>/pkg`; returns the temp dir and the package dir.
mod pkgfix;
use pkgfix::{cm, executable, kptfile, package, render, snapshot};

/// An executable `sh` script beside the package (not inside it).
fn script(tmp: &Path, name: &str, body: &str) -> String {
    executable(tmp, name, &format!("#!/bin/sh\n{body}\n"))
}

#[test]
fn a_function_with_selectors_or_exclusions_names_its_resource_count() {
    let (tmp, _) = package(&[]);
    let pass = script(tmp.path(), "pass.sh", "cat");
    let pipeline = format!(
        "pipeline:\n  mutators:\n    - exec: {pass}\n      selectors:\n        - kind: ConfigMap\n    - exec: {pass}\n      exclude:\n        - name: b\n    - exec: {pass}\n  validators:\n    - exec: {pass}\n      selectors:\n        - name: a\n"
    );
    let (_tmp2, dir) = package(&[
        ("Kptfile", &kptfile("pkg", &pipeline)),
        ("cm.yaml", &format!("{}---\n{}", cm("a"), cm("b"))),
    ]);
    let (code, stderr) = render(&dir, &["--allow-exec"]);
    assert_eq!(code, 0, "{stderr}");
    let want = format!(
        "Package \"pkg\":\n\
         [RUNNING] \"{pass}\" on 2 resource(s) on package \"pkg\"\n\
         [PASS] \"{pass}\" in 0s\n\
         [RUNNING] \"{pass}\" on 2 resource(s) on package \"pkg\"\n\
         [PASS] \"{pass}\" in 0s\n\
         [RUNNING] \"{pass}\" on package \"pkg\"\n\
         [PASS] \"{pass}\" in 0s\n\
         [RUNNING] \"{pass}\" on 1 resource(s) on package \"pkg\"\n\
         [PASS] \"{pass}\" in 0s\n\
         \n\
         Successfully executed 4 function(s) in 1 package(s).\n"
    );
    assert_eq!(stderr, want);
}

#[test]
fn a_passing_functions_stderr_is_kept_in_render_status() {
    let (tmp, _) = package(&[]);
    let noisy = script(
        tmp.path(),
        "noisy.sh",
        "echo 'line one' >&2\necho 'line two' >&2\ncat",
    );
    let (_tmp2, dir) = package(&[
        (
            "Kptfile",
            &kptfile(
                "pkg",
                &format!("pipeline:\n  mutators:\n    - exec: {noisy}\n"),
            ),
        ),
        ("cm.yaml", &cm("a")),
    ]);
    let (code, stderr) = render(&dir, &["--allow-exec"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "Package \"pkg\":\n[RUNNING] \"{noisy}\" on package \"pkg\"\n[PASS] \"{noisy}\" in 0s\n  Stderr:\n    line one\n    line two\n    \n\nSuccessfully executed 1 function(s) in 1 package(s).\n"
        )
    );
    let kf = &snapshot(&dir)["Kptfile"];
    let want_status = format!(
        "status:\n  conditions:\n    - type: Rendered\n      status: \"True\"\n      reason: RenderSuccess\n  renderStatus:\n    mutationSteps:\n      - exec: {noisy}\n        stderr: |\n          line one\n          line two\n        exitCode: 0\n"
    );
    assert!(kf.ends_with(&want_status), "{kf}");
}

#[test]
fn a_missing_config_path_stops_render_before_any_package_renders() {
    let (tmp, _) = package(&[]);
    let marker = tmp.path().join("ran");
    let touch = script(
        tmp.path(),
        "touch.sh",
        &format!("touch {}\ncat", marker.display()),
    );
    let root = kptfile(
        "pkg",
        &format!(
            "pipeline:\n  mutators:\n    - exec: {touch}\n    - exec: {touch}\n      configPath: labelconfig1.yaml\n"
        ),
    );
    let sub = kptfile(
        "db",
        &format!("pipeline:\n  mutators:\n    - exec: {touch}\n"),
    );
    let files = [
        ("Kptfile", root.as_str()),
        ("cm.yaml", &cm("a")),
        ("db/Kptfile", sub.as_str()),
        ("db/cm.yaml", &cm("b")),
    ];
    let (_tmp2, dir) = package(&files);
    let before = snapshot(&dir);
    let (code, stderr) = render(&dir, &["--allow-exec"]);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(
        stderr,
        // kpt prints a validation block as it is, then " \n".
        "Kptfile is invalid:\nField: `pipeline.mutators[1].configPath`\nValue: \"labelconfig1.yaml\"\nReason: functionConfig must exist in the current package\n \n"
    );
    assert!(!marker.exists(), "no function may run");
    assert_eq!(snapshot(&dir), before, "nothing is written");
}

#[test]
fn an_image_that_is_no_reference_stops_render_before_any_function_runs() {
    let (tmp, _) = package(&[]);
    let marker = tmp.path().join("ran");
    let touch = script(
        tmp.path(),
        "touch.sh",
        &format!("touch {}\ncat", marker.display()),
    );
    // kpt checks each step's image with distribution/reference's grammar when it
    // validates the Kptfile: an upper-case repository, then a malformed tag.
    for (image, reason) in [
        ("Acme/Fn:v1", "repository name must be lowercase"),
        ("acme/fn:v1:v2", "invalid reference format"),
    ] {
        let root = kptfile(
            "pkg",
            &format!("pipeline:\n  mutators:\n    - exec: {touch}\n    - image: {image}\n"),
        );
        let (_tmp2, dir) = package(&[("Kptfile", root.as_str()), ("cm.yaml", &cm("a"))]);
        let before = snapshot(&dir);
        let (code, stderr) = render(&dir, &["--allow-exec"]);
        assert_eq!(code, 1, "{stderr}");
        assert_eq!(
            stderr,
            format!(
                "Kptfile is invalid:\nField: `pipeline.mutators[1].image`\nValue: \"{image}\"\nReason: function image reference \"{image}\" is invalid: {reason}\n \n"
            )
        );
        assert!(!marker.exists(), "no function may run");
        assert_eq!(snapshot(&dir), before, "nothing is written");
    }
}

#[test]
fn a_missing_config_path_in_a_sub_package_is_reported_when_it_is_reached() {
    let sub = kptfile(
        "db",
        "pipeline:\n  validators:\n    - image: ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.2.0\n      configPath: nope.yaml\n",
    );
    let (_tmp, dir) = package(&[("Kptfile", &kptfile("pkg", "")), ("db/Kptfile", &sub)]);
    let (code, stderr) = render(&dir, &[]);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(
        stderr,
        "Kptfile is invalid:\nField: `pipeline.validators[0].configPath`\nValue: \"nope.yaml\"\nReason: functionConfig must exist in the current package\n \n"
    );
}

#[test]
fn an_existing_output_directory_is_refused() {
    let (tmp, dir) = package(&[("Kptfile", &kptfile("pkg", "")), ("cm.yaml", &cm("a"))]);
    let out = tmp.path().join("out");
    std::fs::create_dir(&out).expect("mkdir");
    let out_arg = out.display().to_string();
    let (code, stderr) = render(&dir, &["-o", &out_arg]);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "error: directory {out_arg:?} already exists, please delete the directory and retry\n"
        )
    );
    assert_eq!(std::fs::read_dir(&out).expect("read_dir").count(), 0);
}

#[test]
fn a_sub_package_kptfile_that_does_not_decode_is_recorded_against_the_root() {
    let (tmp, _) = package(&[]);
    let marker = tmp.path().join("ran");
    let touch = script(
        tmp.path(),
        "touch.sh",
        &format!("touch {}\ncat", marker.display()),
    );
    let root = kptfile(
        "pkg",
        &format!("pipeline:\n  mutators:\n    - exec: {touch}\n"),
    );
    let broken = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: db\npipeline:\n  mutators:\n  - image: set-labels\n# malformed\nconfigPath: x.yaml\n  - image: set-namespace\n";
    let fine = kptfile(
        "app",
        &format!("pipeline:\n  mutators:\n    - exec: {touch}\n"),
    );
    let (_tmp2, dir) = package(&[
        ("Kptfile", &root),
        ("app/Kptfile", &fine),
        ("app/cm.yaml", &cm("a")),
        ("db/Kptfile", broken),
    ]);
    let (code, stderr) = render(&dir, &["--allow-exec"]);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "Error: Kptfile at {:?} can't be read.\n\nDetails:\nyaml: line 10: mapping values are not allowed in this context \n",
            dir.join("db").display().to_string()
        )
    );
    assert!(
        !marker.exists(),
        "the sibling sub-package does not render first"
    );
    let files = snapshot(&dir);
    assert_eq!(
        files["Kptfile"],
        format!(
            "{root}status:\n  conditions:\n    - type: Rendered\n      status: \"False\"\n      reason: RenderFailed\n      message: |-\n        pkg.render: pkg .:\n        \tpkg.Subpackages: pkg ./db: error reading Kptfile at \"./db\": yaml: line 10: mapping values are not allowed in this context\n"
        )
    );
    assert_eq!(files["db/Kptfile"], broken);
}

#[test]
fn a_kptfile_value_of_the_wrong_type_is_reported_in_go_yamls_words() {
    let (_tmp, dir) = package(&[(
        "Kptfile",
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\ninfo:\n  description:\n    - a\n",
    )]);
    let (code, stderr) = render(&dir, &[]);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "Error: Kptfile at {:?} can't be read.\n\nDetails:\nyaml: unmarshal errors:\n  line 7: cannot unmarshal !!seq into string \n",
            dir.display().to_string()
        )
    );
}

#[test]
fn kptfiles_that_are_not_v1_or_missing_are_named_by_their_directory() {
    let at = |dir: &Path| format!("{:?}", dir.display().to_string());
    let (_tmp, dir) = package(&[(
        "Kptfile",
        "apiVersion: kpt.dev/v1alpha2\nkind: Kptfile\nmetadata:\n  name: pkg\n",
    )]);
    assert_eq!(
        render(&dir, &[]),
        (
            1,
            format!(
                "Error: Kptfile at {} has an old version (\"v1alpha2\") of the Kptfile schema.\nPlease run \"kpt fn eval <PKG_PATH> -i gcr.io/kpt-fn/fix:v0.2 --include-meta-resources\" to upgrade the package and retry. \n",
                at(&dir)
            )
        )
    );
    let (_tmp, dir) = package(&[(
        "Kptfile",
        "apiVersion: foo/v1\nkind: Bar\nmetadata:\n  name: pkg\n",
    )]);
    assert_eq!(
        render(&dir, &[]),
        (
            1,
            format!(
                "Error: Kptfile at {} has an unknown resource type (\"foo/v1, Kind=Bar\"). \n",
                at(&dir)
            )
        )
    );
    let (_tmp, dir) = package(&[("cm.yaml", &cm("a"))]);
    assert_eq!(
        render(&dir, &[]),
        (1, format!("Error: No Kptfile found at {}. \n", at(&dir)))
    );
}

#[test]
fn other_errors_are_printed_with_kpts_trailing_space() {
    let (_tmp, dir) = package(&[
        (
            "Kptfile",
            &kptfile("pkg", "pipeline:\n  mutators:\n    - exec: cat\n"),
        ),
        ("cm.yaml", &cm("a")),
    ]);
    let (code, stderr) = render(&dir, &[]);
    assert_eq!(code, 1);
    assert!(
        stderr.ends_with(
            "Error: must run with `--allow-exec` option to allow running function binaries \n"
        ),
        "{stderr:?}"
    );
}

/// kpt's results list marks `items` omitempty: a render that ran no function writes none.
#[test]
fn a_results_file_without_calls_has_no_items_key() {
    let (tmp, dir) = package(&[("Kptfile", &kptfile("pkg", "")), ("cm.yaml", &cm("a"))]);
    let results = tmp.path().join("results");
    let (code, stderr) = render(&dir, &["--results-dir", &results.to_string_lossy()]);
    assert_eq!(code, 0, "{stderr}");
    let list = std::fs::read_to_string(results.join("results.yaml")).expect("results file");
    assert_eq!(
        list,
        "apiVersion: kpt.dev/v1\nkind: FunctionResultList\nmetadata:\n  name: fnresults\nexitCode: 0\n"
    );
}
