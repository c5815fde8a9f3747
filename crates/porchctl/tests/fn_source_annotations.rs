//! Annotations a source file already carries that kpt and kyaml also use in flight:
//! call ids (`internal.config.kubernetes.io/id` and its legacy twin
//! `config.k8s.io/id`), kyaml's migration id, merge sources and selection ids. kpt's
//! package writer removes only the reader's annotations, so these survive a render
//! that runs no function; a function call replaces the ids with its own and removes
//! them (and the migration id) afterwards; two ids that disagree are refused before a
//! function starts. Expected texts are what kpt 1.0.0-beta.56 writes for the same
//! inputs.

mod pkgfix;
use pkgfix::{package, porchctl, read, render, snapshot};

const NO_PIPELINE: &str = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: p\n";
const CAT_PIPELINE: &str = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: p\npipeline:\n  mutators:\n    - exec: cat\n";

/// Two ConfigMaps; `x` carries `annotations` (indented lines), `y` none.
fn resources(annotations: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  annotations:\n{annotations}data:\n  a: b\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\n"
    )
}

const Y_ONLY: &str = "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\n";

fn render_with(kptfile: &str, annotations: &str) -> (i32, String, String) {
    let text = resources(annotations);
    let (_tmp, dir) = package(&[("Kptfile", kptfile), ("r.yaml", &text)]);
    let (code, stderr) = render(&dir, &["--allow-exec"]);
    (code, stderr, read(&dir, "r.yaml"))
}

#[test]
fn ids_in_a_source_file_survive_a_render_that_runs_no_function() {
    // Disagreeing twins are not checked when nothing runs.
    let ids = "    config.k8s.io/id: '7'\n    internal.config.kubernetes.io/id: '9'\n";
    let (code, stderr, out) = render_with(NO_PIPELINE, ids);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(out, resources(ids));

    // The migration id, merge source and selection id stay; kpt's package path and
    // the reader's path, index and seqindent go.
    let kept = "    internal.config.kubernetes.io/annotations-migration-resource-id: '0'\n    config.kubernetes.io/merge-source: 'x'\n    internal.config.kubernetes.io/kpt-resource-id: '0'\n";
    let dropped = "    internal.config.kubernetes.io/package-path: 'foo'\n    config.kubernetes.io/index: '4'\n    internal.config.kubernetes.io/path: 'elsewhere.yaml'\n    internal.config.kubernetes.io/seqindent: 'wide'\n";
    let (code, stderr, out) = render_with(NO_PIPELINE, &format!("{kept}{dropped}"));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(out, resources(kept));
}

#[test]
fn a_lone_id_gets_its_twin_when_read() {
    for (given, expected) in [
        (
            "    internal.config.kubernetes.io/id: '1'\n",
            "    internal.config.kubernetes.io/id: '1'\n    config.k8s.io/id: '1'\n",
        ),
        (
            "    config.k8s.io/id: \"3\"\n",
            "    config.k8s.io/id: \"3\"\n    internal.config.kubernetes.io/id: '3'\n",
        ),
        // An empty value counts as missing.
        (
            "    config.k8s.io/id: ''\n    internal.config.kubernetes.io/id: '3'\n",
            "    config.k8s.io/id: '3'\n    internal.config.kubernetes.io/id: '3'\n",
        ),
    ] {
        let (code, stderr, out) = render_with(NO_PIPELINE, given);
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(out, resources(expected), "{given}");
    }
}

#[test]
fn a_function_call_replaces_and_removes_the_ids_and_the_migration_id() {
    let plain = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: b\n";
    for given in [
        "    config.k8s.io/id: '7'\n    internal.config.kubernetes.io/id: '7'\n",
        "    config.k8s.io/id: '7'\n",
        "    internal.config.kubernetes.io/id: '1'\n",
        "    internal.config.kubernetes.io/annotations-migration-resource-id: '0'\n",
    ] {
        let (code, stderr, out) = render_with(CAT_PIPELINE, given);
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(out, format!("{plain}{Y_ONLY}"), "{given}");
    }
    let kept = "    config.kubernetes.io/merge-source: 'x'\n    internal.config.kubernetes.io/kpt-resource-id: '0'\n";
    let (code, stderr, out) = render_with(CAT_PIPELINE, kept);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(out, resources(kept));
}

#[test]
fn disagreeing_ids_are_refused_before_the_function_starts() {
    let ids = "    config.k8s.io/id: '7'\n    internal.config.kubernetes.io/id: '9'\n";
    let text = resources(ids);
    let (_tmp, dir) = package(&[("Kptfile", CAT_PIPELINE), ("r.yaml", &text)]);
    let before = snapshot(&dir);
    let (code, stderr) = render(&dir, &["--allow-exec"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains(
            "resource input to function has mismatched legacy and internal id annotations"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("[RUNNING]"), "{stderr}");
    // The resources are untouched; the Kptfile records the failed render (kpt HEAD's
    // status; 1.0.0-beta.56 writes none).
    let after = snapshot(&dir);
    assert_eq!(after.get("r.yaml"), before.get("r.yaml"));
    let kptfile = &after["Kptfile"];
    assert!(kptfile.starts_with(CAT_PIPELINE), "{kptfile}");
    assert!(
        kptfile.contains("reason: RenderFailed\n      message: resource input to function has mismatched legacy and internal id annotations\n"),
        "{kptfile}"
    );

    // fn eval refuses the same input.
    let dir_s = dir.to_string_lossy();
    let (code, _, stderr) = porchctl(
        std::path::Path::new("."),
        &["fn", "eval", dir_s.as_ref(), "--exec", "cat"],
    );
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("mismatched legacy and internal id"),
        "{stderr}"
    );
    assert!(!stderr.contains("[RUNNING]"), "{stderr}");
}

#[test]
fn an_item_the_function_does_not_see_keeps_its_ids() {
    let text = resources("    internal.config.kubernetes.io/id: '1'\n");
    let (_tmp, dir) = package(&[("r.yaml", &text)]);
    let dir_s = dir.to_string_lossy();
    let (code, _, stderr) = porchctl(
        std::path::Path::new("."),
        &[
            "fn",
            "eval",
            dir_s.as_ref(),
            "--exec",
            "cat",
            "--match-name",
            "y",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        read(&dir, "r.yaml"),
        resources("    internal.config.kubernetes.io/id: '1'\n    config.k8s.io/id: '1'\n")
    );
}
