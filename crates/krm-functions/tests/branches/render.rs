//! The catalog's `tests/` packages whose outcome is the render's: a Kptfile
//! pipeline with one of these functions, rendered with the built-ins.

use kpt::package::PackageFiles;
use kpt::render::{RenderOptions, render};
use kpt::runtime::RunOptions;
use krm_functions::Builtins;

use super::harness::image;

fn render_with(
    function: &str,
    config_lines: &str,
    extra: &[(&str, &str)],
) -> kpt::render::RenderOutput {
    let kptfile = format!(
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\npipeline:\n  mutators:\n    - image: {}\n{config_lines}",
        image(function)
    );
    let mut files = PackageFiles::new();
    files.insert("Kptfile", kptfile.into_bytes());
    for (path, text) in extra {
        files.insert(*path, text.as_bytes().to_vec());
    }
    let runtime = Builtins;
    let opts = RenderOptions {
        runtime: &runtime,
        run: RunOptions::default(),
        root_name: "pkg".into(),
        write_status: true,
    };
    render(&files, &opts)
}

const RESOURCES: &str =
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: old\n";

#[test]
fn set_namespace_without_config_renders() {
    // tests/set-namespace/no-fnconfig-resource: the error result does not
    // fail the render.
    let out = render_with("set-namespace", "", &[("resources.yaml", RESOURCES)]);
    assert!(out.error.is_none(), "{:?}", out.log);
    assert_eq!(out.files.get_text("resources.yaml"), Some(RESOURCES));
    let step = &out.mutation_steps[0];
    assert_eq!(step.exit_code, 0);
}

#[test]
fn set_labels_wrong_kind_fails_the_render() {
    // tests/set-labels/wrong-config-group.
    let cfg = "apiVersion: fn.kpt.dev/v1alpha1\nkind: BadKind\nmetadata:\n  name: c\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\nlabels:\n  a: b\n";
    let out = render_with(
        "set-labels",
        "      configPath: fn-config.yaml\n",
        &[("resources.yaml", RESOURCES), ("fn-config.yaml", cfg)],
    );
    assert!(out.error.is_some());
    let step = &out.mutation_steps[0];
    assert_eq!(step.exit_code, 1);
    assert_eq!(
        step.stderr,
        "failed to evaluate function: error: function failure"
    );
    let messages: Vec<&str> = step.results.iter().map(|r| r.message.as_str()).collect();
    assert_eq!(
        messages,
        vec![
            "unknown FunctionConfig `BadKind.fn.kpt.dev`, expect `SetLabels.fn.kpt.dev` or `ConfigMap.v1`"
        ]
    );
    assert_eq!(out.files.get_text("resources.yaml"), Some(RESOURCES));
}

#[test]
fn empty_config_map_fails_set_labels_and_set_annotations() {
    // tests/set-{labels,annotations}/empty-list/simple: `configMap: {}`.
    for function in ["set-labels", "set-annotations"] {
        let out = render_with(
            function,
            "      configMap: {}\n",
            &[("resources.yaml", RESOURCES)],
        );
        assert!(out.error.is_some(), "{function}");
    }
}

#[test]
fn set_image_missing_name_fails_the_render() {
    // tests/set-image/no-image-name.
    let out = render_with(
        "set-image",
        "      configMap:\n        newName: bar\n        newTag: v1.0\n",
        &[("resources.yaml", RESOURCES)],
    );
    assert!(out.error.is_some());
    let step = &out.mutation_steps[0];
    assert_eq!(
        step.stderr,
        "failed to evaluate function: function is terminated: must specify `name`"
    );
    let messages: Vec<&str> = step.results.iter().map(|r| r.message.as_str()).collect();
    assert_eq!(
        messages,
        vec![
            "must specify `name`",
            "function is terminated: must specify `name`"
        ]
    );
}

#[test]
fn apply_setters_without_matches_renders() {
    // tests/apply-setters/no-matches-error: nothing tagged, the render
    // passes and kpt re-encodes the Kptfile (configMap keys sorted).
    let out = render_with(
        "apply-setters",
        "      configMap:\n        name: my-new-map\n        env: |\n          - prod\n          - stage\n",
        &[("resources.yaml", RESOURCES)],
    );
    assert!(out.error.is_none(), "{:?}", out.log);
    let kptfile = out.files.get_text("Kptfile").unwrap_or_default();
    assert!(
        kptfile.contains(
            "      configMap:\n        env: |\n          - prod\n          - stage\n        name: my-new-map\n"
        ),
        "{kptfile}"
    );
    let step = &out.mutation_steps[0];
    let messages: Vec<&str> = step.results.iter().map(|r| r.message.as_str()).collect();
    assert_eq!(messages, vec!["no matches for input setter(s)"]);
}
