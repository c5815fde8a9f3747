//! Unit tests for set-labels.

use crate::common::testing::{messages, run};

const CM: &str =
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: function-input\ndata:\n  tier: backend\n";

#[test]
fn metadata_and_created_selector() {
    let input = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 3
---
apiVersion: custom.io/v1
kind: Custom
metadata:
  name: custom
";
    let (out, results, err) = run(super::run, input, Some(CM));
    assert!(err.is_none());
    assert_eq!(
        out,
        "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    tier: backend
spec:
  replicas: 3
  selector:
    matchLabels:
      tier: backend
---
apiVersion: custom.io/v1
kind: Custom
metadata:
  name: custom
  labels:
    tier: backend
"
    );
    assert_eq!(messages(&results), vec!["set 3 labels in total"]);
}

#[test]
fn update_only_locations_and_sorted_keys() {
    let cfg = "apiVersion: fn.kpt.dev/v1alpha1\nkind: SetLabels\nmetadata:\n  name: c\nlabels:\n  b: new\n  a: x\n";
    let input = "\
apiVersion: batch/v1
kind: Job
metadata:
  name: pi
spec:
  selector:
    matchLabels:
      b: old
  template:
    metadata:
      labels:
        c: keep
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: local
  annotations:
    config.kubernetes.io/local-config: \"true\"
";
    let (out, results, _) = run(super::run, input, Some(cfg));
    assert!(out.contains("  labels:\n    a: x\n    b: new\nspec:\n"));
    assert!(
        out.contains("    matchLabels:\n      b: new\n  template:"),
        "update-only: no `a` added"
    );
    assert!(out.contains("        c: keep\n        a: x\n        b: new\n"));
    assert!(
        out.contains("name: local\n  annotations:"),
        "local config skipped"
    );
    assert!(!out.contains("name: local\n  labels"));
    // metadata 2 + selector 2 (update-only still counts) + template 2
    assert_eq!(messages(&results), vec!["set 6 labels in total"]);
}

#[test]
fn missing_or_empty_config() {
    let input = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n";
    let (_, results, err) = run(super::run, input, None);
    assert_eq!(messages(&results), vec!["`FunctionConfig` is not given"]);
    assert!(err.is_some());
    let cfg = "apiVersion: fn.kpt.dev/v1alpha1\nkind: SetLabels\nmetadata:\n  name: c\n";
    let (_, results, err) = run(super::run, input, Some(cfg));
    assert!(err.is_none());
    assert_eq!(
        messages(&results),
        vec!["no `labels` arguments are given in FunctionConfig"]
    );
}
