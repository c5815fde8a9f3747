//! Unit tests for set-annotations.

use crate::common::testing::{messages, run};

#[test]
fn metadata_and_templates_with_results() {
    let cfg =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: function-input\ndata:\n  foo: bar\n";
    let input = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations:
    internal.config.kubernetes.io/path: app.yaml
    internal.config.kubernetes.io/index: '1'
spec:
  template:
    spec: {}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: local
  annotations:
    config.kubernetes.io/local-config: \"true\"
    internal.config.kubernetes.io/path: app.yaml
";
    let (out, results, err) = run(super::run, input, Some(cfg));
    assert!(err.is_none());
    assert!(out.contains("    internal.config.kubernetes.io/index: '1'\n    foo: bar\nspec:\n  template:\n    spec: {}\n    metadata:\n      annotations:\n        foo: bar\n"));
    assert!(
        out.contains("internal.config.kubernetes.io/path: app.yaml\n    foo: bar\n"),
        "local config included"
    );
    assert_eq!(
        messages(&results),
        vec!["set annotations: {\"foo\":\"bar\"}"; 3]
    );
    let locs: Vec<(String, i64, String)> = results
        .iter()
        .map(|r| {
            let f = r.file.clone().unwrap_or_default();
            (f.path, f.index, r.field.clone().unwrap_or_default().path)
        })
        .collect();
    assert_eq!(
        locs,
        vec![
            ("app.yaml".into(), 0, "metadata.annotations".into()),
            ("app.yaml".into(), 1, "metadata.annotations".into()),
            (
                "app.yaml".into(),
                1,
                "spec.template.metadata.annotations".into()
            ),
        ]
    );
    assert!(results.iter().all(|r| r.severity.is_none()));
}

#[test]
fn additional_fields_and_errors() {
    let cfg = "\
apiVersion: fn.kpt.dev/v1alpha1
kind: SetAnnotations
metadata:
  name: c
annotations:
  b: '2'
  a: '1'
additionalAnnotationFields:
- kind: MyResource
  path: spec/selector/annotations
  create: true
";
    let input = "apiVersion: dev.example.com/v1\nkind: MyResource\nmetadata:\n  name: r\nspec:\n  selector:\n    annotations:\n      foo: bar\n";
    let (out, _, _) = run(super::run, input, Some(cfg));
    assert!(out.contains("  annotations:\n    a: '1'\n    b: '2'\nspec:\n  selector:\n    annotations:\n      foo: bar\n      a: '1'\n      b: '2'\n")
        || out.contains("  annotations:\n    a: \"1\"\n    b: \"2\"\nspec:\n  selector:\n    annotations:\n      foo: bar\n      a: \"1\"\n      b: \"2\"\n"), "{out}");

    let empty = "apiVersion: fn.kpt.dev/v1alpha1\nkind: SetAnnotations\nmetadata:\n  name: c\n";
    let (_, _, err) = run(super::run, input, Some(empty));
    assert_eq!(
        err.as_deref(),
        Some("failed to configure function: input annotation list cannot be empty")
    );
    let (_, _, err) = run(super::run, input, None);
    assert_eq!(
        err.as_deref(),
        Some(
            "failed to configure function: `functionConfig` must be a `ConfigMap` or `SetAnnotations`"
        )
    );
    let both = format!("{cfg}fieldSpecs:\n- path: x\n");
    let (_, _, err) = run(super::run, input, Some(&both));
    assert_eq!(
        err.as_deref(),
        Some(
            "failed to configure function: `fieldSpecs` has been deprecated, please rename it to `additionalAnnotationFields`"
        )
    );
}

/// Release v0.1: the same edits, nothing reported; failures in the 2021
/// framework's form, a missing config read as kpt's empty ConfigMap.
#[test]
fn release_0_1_reports_nothing() {
    let at = |config: Option<&str>| {
        crate::image_tag::with("gcr.io/kpt-fn/set-annotations:v0.1.3", || {
            run(
                super::run,
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: m\n",
                config,
            )
        })
    };
    let cfg = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: f\ndata:\n  foo: bar\n";
    let (out, results, err) = at(Some(cfg));
    assert!(err.is_none() && results.is_empty());
    assert!(out.contains("annotations:\n    foo: bar"), "{out}");
    let (_, results, err) = at(None);
    let message = "failed to configure function: input annotation list cannot be empty";
    assert_eq!(messages(&results), vec![message]);
    assert_eq!(err, Some(format!("[error] /// : {message}")));
}
