//! Unit tests for set-image.

use crate::common::testing::{messages, run};

const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: function-input\ndata:\n  name: nginx\n  newName: bitnami/nginx\n  newTag: 1.21.4\n";

#[test]
fn pods_and_templates() {
    let input = "\
apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  initContainers:
  - name: init
    image: nginx:1.0
  containers:
  - name: server
    image: nginx:1.20.2
  - name: store
    image: postgres:14.1
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
spec:
  template:
    spec:
      containers:
      - name: web
        image: nginx
";
    let (out, results, err) = run(super::run, input, Some(CM));
    assert!(err.is_none());
    assert!(
        out.contains("    image: nginx:1.0\n"),
        "init containers are not updated (catalog quirk)"
    );
    assert!(out.contains("  - name: server\n    image: bitnami/nginx:1.21.4\n  - name: store\n    image: postgres:14.1\n"));
    assert!(out.contains("        image: bitnami/nginx:1.21.4\n"));
    assert_eq!(
        messages(&results),
        vec!["summary: updated a total of 2 image(s)"]
    );
}

#[test]
fn additional_fields() {
    let cfg = "\
apiVersion: fn.kpt.dev/v1alpha1
kind: SetImage
metadata:
  name: c
image:
  name: nginx
  newTag: '2'
additionalImageFields:
- kind: MyKind
  group: dev.example.com
  version: v1
  path: spec/manifest/images[]/image
";
    let input = "\
apiVersion: dev.example.com/v1
kind: MyKind
metadata:
  name: r
spec:
  manifest:
    images:
    - image: nginx:1.20.2
    - image: postgres:14.1
";
    let (out, results, _) = run(super::run, input, Some(cfg));
    assert!(
        out.contains("    - image: nginx:2\n    - image: postgres:14.1\n"),
        "{out}"
    );
    assert_eq!(
        messages(&results),
        vec!["summary: updated a total of 1 image(s)"]
    );
}

#[test]
fn config_errors() {
    let input = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n";
    let bad = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: function-input\ndata:\n  name: nginx\n  tag: x\n";
    let (_, _, err) = run(super::run, input, Some(bad));
    assert_eq!(
        err.as_deref(),
        Some("function is terminated: ConfigMap has wrong field name tag")
    );
    let no_name =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: function-input\ndata:\n  newTag: x\n";
    let (_, _, err) = run(super::run, input, Some(no_name));
    assert_eq!(
        err.as_deref(),
        Some("function is terminated: must specify `name`")
    );
    let nothing =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: function-input\ndata:\n  name: x\n";
    let (_, _, err) = run(super::run, input, Some(nothing));
    assert_eq!(
        err.as_deref(),
        Some("function is terminated: must specify one of `newName`, `newTag`, or `digest`")
    );
}
