//! Unit tests for ensure-name-substring.

use crate::common::testing::run;

const PREPEND: &str =
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: function-input\ndata:\n  prepend: prod-\n";

#[test]
fn renames_and_fixes_references() {
    let input = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: the-map
  namespace: ns
  annotations:
    internal.config.kubernetes.io/path: r.yaml
---
apiVersion: v1
kind: Pod
metadata:
  name: prod-pod
  namespace: ns
spec:
  containers:
  - name: c
    env:
    - name: K
      valueFrom:
        configMapKeyRef:
          name: the-map
          key: k
---
apiVersion: v1
kind: Namespace
metadata:
  name: ns
";
    let (out, results, err) = run(super::run, input, Some(PREPEND));
    assert!(err.is_none() && results.is_empty());
    assert_eq!(
        out,
        "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: prod-the-map
  namespace: ns
---
apiVersion: v1
kind: Pod
metadata:
  name: prod-pod
  namespace: ns
spec:
  containers:
  - name: c
    env:
    - name: K
      valueFrom:
        configMapKeyRef:
          name: prod-the-map
          key: k
---
apiVersion: v1
kind: Namespace
metadata:
  name: ns
"
    );
}

#[test]
fn depends_on_and_role_refs_with_append() {
    let cfg = "apiVersion: fn.kpt.dev/v1alpha1\nkind: EnsureNameSubstring\nmetadata:\n  name: c\nsubstring: -prod\neditMode: append\n";
    let input = "\
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: crb
  annotations:
    config.kubernetes.io/depends-on: rbac.authorization.k8s.io/ClusterRole/reader
roleRef:
  kind: ClusterRole
  name: reader
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: reader
";
    let (out, _, _) = run(super::run, input, Some(cfg));
    assert!(out.contains("  name: crb-prod\n  annotations:\n    config.kubernetes.io/depends-on: rbac.authorization.k8s.io/ClusterRole/reader-prod\n"));
    assert!(out.contains("roleRef:\n  kind: ClusterRole\n  name: reader-prod\n"));
}

#[test]
fn config_errors() {
    let two = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: function-input\ndata:\n  prepend: a\n  append: b\n";
    let (_, _, err) = run(super::run, "", Some(two));
    assert_eq!(
        err.as_deref(),
        Some(
            "failed to load the `functionConfig`: only 1 entry is allowed in the ConfigMap, but got: 2"
        )
    );
    let bad =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: function-input\ndata:\n  middle: a\n";
    let (_, _, err) = run(super::run, "", Some(bad));
    assert_eq!(
        err.as_deref(),
        Some(
            "failed to load the `functionConfig`: unknown editMode: middle, only prepend and append are allowed"
        )
    );
}
