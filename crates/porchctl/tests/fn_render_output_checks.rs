//! What `fn render` does with a function's output before it takes it, as kpt's
//! `FunctionRunner.do`: the path invariants and the KRM check fail the step with
//! `[FAIL]` and the error only (no results, stderr or exit code shown), and such a call
//! is not in the results list; the results list holds the calls in the order they ran;
//! a failed mutator call leaves no call ids on what save-on-render-failure writes; a
//! step refused before it ran is recorded with its image as kpt's `NewRunner` left it.
//! Exec functions are `sh` scripts printing fixed output.

mod pkgfix;
use pkgfix::{executable, kptfile, package, render};

const GADGET: &str = "apiVersion: example.org/v1\nkind: Gadget\nmetadata:\n  name: g0\n";

/// A script that drops its input and prints `items` (YAML list entries, indented by
/// two) and `results` as a ResourceList.
fn script(items: &str, results: &str) -> String {
    format!(
        "#!/bin/sh\ncat >/dev/null\ncat <<'OUT'\napiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n{items}{results}OUT\n"
    )
}

fn gadget_at(name: &str, path: &str, index: Option<&str>) -> String {
    let mut s = format!(
        "- apiVersion: example.org/v1\n  kind: Gadget\n  metadata:\n    name: {name}\n    annotations:\n      internal.config.kubernetes.io/path: '{path}'\n"
    );
    if let Some(i) = index {
        s.push_str(&format!(
            "      internal.config.kubernetes.io/index: '{i}'\n"
        ));
    }
    s
}

/// Renders `dir` with exec functions allowed and the results file written under `tmp`:
/// exit code, stderr and the results file's text.
fn render_with_results(dir: &std::path::Path, tmp: &std::path::Path) -> (i32, String, String) {
    let results_dir = tmp.join("results");
    let (code, err) = render(
        dir,
        &[
            "--allow-exec",
            "--results-dir",
            &results_dir.to_string_lossy(),
        ],
    );
    let list = std::fs::read_to_string(results_dir.join("results.yaml")).expect("results");
    (code, err, list)
}

#[test]
fn two_outputs_in_one_slot_fail_the_step_without_its_results() {
    let (tmp, dir) = package(&[("gadget.yaml", GADGET)]);
    let items = format!(
        "{}{}",
        gadget_at("left", "pair.yaml", Some("0")),
        gadget_at("right", "pair.yaml", Some("0"))
    );
    let results = "results:\n- message: looked at both\n  severity: info\n";
    let fn_path = executable(tmp.path(), "clash.sh", &script(&items, results));
    std::fs::write(
        dir.join("Kptfile"),
        kptfile(
            "pkg",
            &format!("pipeline:\n  mutators:\n    - exec: {fn_path}\n"),
        ),
    )
    .expect("Kptfile");
    let (code, err, list) = render_with_results(&dir, tmp.path());
    assert_eq!(code, 1, "{err}");
    assert!(err.contains(&format!("[FAIL] {fn_path:?} in ")), "{err}");
    assert!(!err.contains("[PASS]"), "{err}");
    assert!(
        !err.contains("looked at both"),
        "results are not shown: {err}"
    );
    assert!(!err.contains("Exit code"), "{err}");
    assert!(
        err.contains("Error: resource at path \"pair.yaml\" and index \"0\" already exists"),
        "{err}"
    );
    // kpt's results list never records the call, and its exit code stays 0.
    assert!(list.contains("exitCode: 0"), "{list}");
    assert!(!list.contains("clash.sh"), "{list}");
    // The step is in the Kptfile's renderStatus with the error and no results.
    let kf = std::fs::read_to_string(dir.join("Kptfile")).expect("Kptfile");
    assert!(kf.contains("executionError"), "{kf}");
    assert!(!kf.contains("looked at both"), "{kf}");
}

#[test]
fn outputs_with_one_path_and_no_index_clash_on_the_empty_index() {
    let (tmp, dir) = package(&[("gadget.yaml", GADGET)]);
    let items = format!(
        "{}{}",
        gadget_at("first", "made.yaml", None),
        gadget_at("second", "made.yaml", None)
    );
    let fn_path = executable(tmp.path(), "twins.sh", &script(&items, ""));
    std::fs::write(
        dir.join("Kptfile"),
        kptfile(
            "pkg",
            &format!("pipeline:\n  mutators:\n    - exec: {fn_path}\n"),
        ),
    )
    .expect("Kptfile");
    let (code, err) = render(&dir, &["--allow-exec"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("resource at path \"made.yaml\" and index \"\" already exists"),
        "{err}"
    );
    assert!(!dir.join("made.yaml").exists());
}

#[test]
fn an_output_item_without_a_name_is_refused_by_its_default_path() {
    let (tmp, dir) = package(&[("gadget.yaml", GADGET)]);
    let items =
        "- apiVersion: example.org/v1\n  kind: Widget\n  metadata:\n    labels:\n      a: b\n";
    let fn_path = executable(tmp.path(), "nameless.sh", &script(items, ""));
    std::fs::write(
        dir.join("Kptfile"),
        kptfile(
            "pkg",
            &format!("pipeline:\n  mutators:\n    - exec: {fn_path}\n"),
        ),
    )
    .expect("Kptfile");
    let (code, err) = render(&dir, &["--allow-exec"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(
            "Error: output resource list must contain only KRM resources: widget_.yaml: resource must have `metadata.name`"
        ),
        "{err}"
    );
    assert!(!err.contains("[PASS]"), "{err}");
}

#[test]
fn a_check_on_a_selective_step_looks_at_what_the_function_returned() {
    // The function sees only g0 and returns it next to a copy in the same slot.
    let (tmp, dir) = package(&[
        ("gadget.yaml", GADGET),
        (
            "other.yaml",
            "apiVersion: example.org/v1\nkind: Gadget\nmetadata:\n  name: g9\n",
        ),
    ]);
    let items = format!(
        "{}{}",
        gadget_at("g0", "gadget.yaml", Some("0")),
        gadget_at("g0-copy", "gadget.yaml", Some("0"))
    );
    let fn_path = executable(tmp.path(), "copy.sh", &script(&items, ""));
    std::fs::write(
        dir.join("Kptfile"),
        kptfile(
            "pkg",
            &format!(
                "pipeline:\n  mutators:\n    - exec: {fn_path}\n      selectors:\n        - name: g0\n"
            ),
        ),
    )
    .expect("Kptfile");
    let (code, err) = render(&dir, &["--allow-exec"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("[FAIL]"), "{err}");
    assert!(
        err.contains("resource at path \"gadget.yaml\" and index \"0\" already exists"),
        "{err}"
    );
}

#[test]
fn the_results_list_keeps_the_order_the_functions_ran_in() {
    let (tmp, dir) = package(&[("gadget.yaml", GADGET)]);
    let pass = executable(
        tmp.path(),
        "pass.sh",
        "#!/bin/sh\necho \"step $1\" >&2\nexec cat\n",
    );
    let pipeline = |who: &str| {
        format!(
            "pipeline:\n  mutators:\n    - exec: {pass} {who}-mutator\n  validators:\n    - exec: {pass} {who}-validator\n"
        )
    };
    std::fs::write(dir.join("Kptfile"), kptfile("pkg", &pipeline("top"))).expect("Kptfile");
    std::fs::create_dir_all(dir.join("inner")).expect("mkdir");
    std::fs::write(
        dir.join("inner/Kptfile"),
        kptfile("inner", &pipeline("inner")),
    )
    .expect("Kptfile");
    let (code, err, list) = render_with_results(&dir, tmp.path());
    assert_eq!(code, 0, "{err}");
    let at = |needle: &str| {
        list.find(needle)
            .unwrap_or_else(|| panic!("{needle} missing: {list}"))
    };
    // The sub-package's validator ran before the parent's mutator.
    assert!(at("inner-mutator") < at("inner-validator"), "{list}");
    assert!(at("inner-validator") < at("top-mutator"), "{list}");
    assert!(at("top-mutator") < at("top-validator"), "{list}");
}

/// A resource whose file carries call and selection ids, in a package that saves on
/// render failure, failing at `list` with a script that exits 1.
fn failing_with_ids(list: &str) -> String {
    let (tmp, dir) = package(&[(
        "thing.yaml",
        "apiVersion: example.org/v1\nkind: Gadget\nmetadata:\n  name: g1\n  annotations:\n    config.k8s.io/id: \"4\"\n    internal.config.kubernetes.io/id: \"4\"\n    internal.config.kubernetes.io/kpt-resource-id: \"q\"\n    owner: team-b\n",
    )]);
    let fail = executable(
        tmp.path(),
        "fail.sh",
        "#!/bin/sh\ncat >/dev/null\necho refused >&2\nexit 1\n",
    );
    std::fs::write(
        dir.join("Kptfile"),
        format!(
            "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\n  annotations:\n    kpt.dev/save-on-render-failure: \"true\"\npipeline:\n  {list}:\n    - exec: {fail}\n"
        ),
    )
    .expect("Kptfile");
    let (code, err) = render(&dir, &["--allow-exec"]);
    assert_eq!(code, 1, "{err}");
    std::fs::read_to_string(dir.join("thing.yaml")).expect("thing")
}

#[test]
fn a_failed_mutator_saves_the_items_without_any_call_ids() {
    let saved = failing_with_ids("mutators");
    assert!(saved.contains("owner: team-b"), "{saved}");
    for id in [
        "config.k8s.io/id",
        "internal.config.kubernetes.io/id",
        "kpt-resource-id",
    ] {
        assert!(!saved.contains(id), "{id} left: {saved}");
    }
}

#[test]
fn a_failed_validator_saves_the_items_as_they_were() {
    let saved = failing_with_ids("validators");
    assert!(saved.contains("config.k8s.io/id: \"4\""), "{saved}");
    assert!(saved.contains("kpt-resource-id: \"q\""), "{saved}");
}

#[test]
fn a_step_whose_tag_does_not_settle_is_recorded_with_the_prefixed_image_only() {
    let (_tmp, dir) = package(&[
        (
            "Kptfile",
            &kptfile(
                "pkg",
                "pipeline:\n  mutators:\n    - image: tidy-fn\n      tag: \"not/a-tag\"\n",
            ),
        ),
        ("gadget.yaml", GADGET),
    ]);
    let (code, err) = render(&dir, &[]);
    assert_eq!(code, 1, "{err}");
    let kf = std::fs::read_to_string(dir.join("Kptfile")).expect("Kptfile");
    assert!(
        kf.contains("- image: ghcr.io/kptdev/krm-functions-catalog/tidy-fn\n"),
        "{kf}"
    );
    assert!(!kf.contains("tidy-fn:latest"), "{kf}");
}
