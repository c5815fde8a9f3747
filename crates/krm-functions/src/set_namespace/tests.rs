//! Unit tests for set-namespace, with the catalog's messages.

use crate::common::testing::{messages, run};

const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: function-input\ndata:\n  namespace: staging\n";

/// An unknown kind (a custom resource) without a namespace counts as
/// cluster-scoped, as does a known cluster-scoped kind: both are left alone.
#[test]
fn sets_namespace_on_namespaced_resources_only() {
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
---
apiVersion: v1
kind: PersistentVolume
metadata:
  name: pv
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
  namespace: staging
spec:
  replicas: 3
---
apiVersion: custom.io/v1
kind: Custom
metadata:
  name: custom
---
apiVersion: v1
kind: PersistentVolume
metadata:
  name: pv
"
    );
    assert_eq!(
        messages(&results),
        vec![
            "namespace [default] updated to \"staging\", 1 value(s) changed",
            "all `depends-on` annotations are up-to-date. no `namespace` changed",
        ]
    );
}

#[test]
fn special_cluster_scoped_fields_and_depends_on() {
    let input = "\
apiVersion: v1
kind: Namespace
metadata:
  name: old
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: api
spec:
  service:
    name: svc
    namespace: old
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: no-service
spec: {}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: crb
subjects:
- kind: ServiceAccount
  name: default
  namespace: old
- kind: Group
  name: admins
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm
  namespace: old
  annotations:
    config.kubernetes.io/depends-on: apps/namespaces/old/StatefulSet/db
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
  namespace: old
";
    let (out, results, _) = run(super::run, input, Some(CM));
    assert!(out.contains("kind: Namespace\nmetadata:\n  name: staging\n"));
    assert!(out.contains("    name: svc\n    namespace: staging\n"));
    assert!(
        out.contains("name: no-service\nspec: {}\n"),
        "absent fields are not created"
    );
    assert!(out.contains("  name: default\n  namespace: staging\n- kind: Group\n  name: admins\n"));
    assert!(out.contains("depends-on: apps/namespaces/staging/StatefulSet/db\n"));
    assert_eq!(
        messages(&results),
        vec![
            "namespace [old] updated to \"staging\", 5 value(s) changed",
            "`depends-on` annotation namespace [old] updated to \"staging\", 1 value(s) changed",
        ]
    );
}

#[test]
fn matcher_changes_only_matching_and_defaults_missing() {
    let cfg = "apiVersion: fn.kpt.dev/v1alpha1\nkind: SetNamespace\nmetadata:\n  name: x\nnamespace: prod\nnamespaceMatcher: dev\n";
    let input = "\
apiVersion: v1
kind: Service
metadata:
  name: a
  namespace: dev
---
apiVersion: v1
kind: Service
metadata:
  name: b
  namespace: other
---
apiVersion: v1
kind: Service
metadata:
  name: c
";
    let (out, results, _) = run(super::run, input, Some(cfg));
    assert!(out.contains("name: a\n  namespace: prod\n"));
    assert!(out.contains("name: b\n  namespace: other\n"));
    assert!(out.contains("name: c\n  namespace: default\n"));
    assert_eq!(
        messages(&results),
        vec![
            "[Resource(apiVersion=v1, kind=Service, namespace=dev, name=a)] has matching origin dev",
            "namespace [dev] updated to \"prod\", 1 value(s) changed",
            "all `depends-on` annotations are up-to-date. no `namespace` changed",
        ]
    );
}

#[test]
fn package_context_and_origins() {
    let cfg =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kptfile.kpt.dev\ndata:\n  name: ctx\n";
    let input = "\
apiVersion: v1
kind: Service
metadata:
  name: a
  namespace: x
  annotations:
    internal.kpt.dev/upstream-identifier: '|Service|example|a'
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: local
  namespace: x
  annotations:
    config.kubernetes.io/local-config: \"true\"
";
    let (out, results, _) = run(super::run, input, Some(cfg));
    assert!(out.contains("name: a\n  namespace: ctx\n"));
    assert!(
        out.contains("name: local\n  namespace: x\n"),
        "local config untouched"
    );
    assert_eq!(
        results[0].message,
        "namespace [x] updated to \"ctx\", 1 value(s) changed"
    );

    let two = "\
apiVersion: v1
kind: Service
metadata:
  name: a
  annotations:
    internal.kpt.dev/upstream-identifier: '|Service|one|a'
---
apiVersion: v1
kind: Service
metadata:
  name: b
  annotations:
    internal.kpt.dev/upstream-identifier: '|Service|two|b'
";
    // Several upstream namespaces no longer stop a replace-all.
    let (out, results, _) = run(super::run, two, Some(CM));
    assert!(!results[0].is_error());
    assert_eq!(out.matches("namespace: staging").count(), 2);
}

#[test]
fn already_set_and_config_errors() {
    let input = "apiVersion: v1\nkind: Service\nmetadata:\n  name: a\n  namespace: staging\n";
    let (_, results, _) = run(super::run, input, Some(CM));
    assert_eq!(
        results[0].message,
        "all matching namespaces are already \"staging\". no value changed"
    );

    let (_, results, err) = run(super::run, input, None);
    assert!(err.is_none());
    assert!(results[0].is_error());
    assert_eq!(
        results[0].message,
        "FunctionConfig is missing. Expect `ConfigMap.v1` or `SetNamespace.v1alpha1.fn.kpt.dev`"
    );
    assert_eq!(results[0].file.as_ref().map(|f| f.index), Some(-1));
    let empty =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: function-input\ndata:\n  x: y\n";
    let (_, results, _) = run(super::run, input, Some(empty));
    assert_eq!(results[0].message, "`data.namespace` should not be empty");
    let typed = "apiVersion: fn.kpt.dev/v1alpha1\nkind: SetNamespace\nmetadata:\n  name: x\n";
    let (_, results, _) = run(super::run, input, Some(typed));
    assert_eq!(results[0].message, "`namespace` should not be empty");
    let bad_cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  namespace: 42\n";
    let (_, results, _) = run(super::run, input, Some(bad_cm));
    assert_eq!(
        results[0].message,
        "failed to parse FunctionConfig as ConfigMap"
    );
    let bad_typed = "apiVersion: fn.kpt.dev/v1alpha1\nkind: SetNamespace\nmetadata:\n  name: x\nnamespace: [a]\n";
    let (_, results, _) = run(super::run, input, Some(bad_typed));
    assert_eq!(
        results[0].message,
        "failed to parse FunctionConfig as fn.kpt.dev.v1alpha1.SetNamespace"
    );
    let other = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: x\n";
    let (_, results, _) = run(super::run, input, Some(other));
    assert_eq!(
        results[0].message,
        "unknown functionConfig Kind=Secret ApiVersion=v1, expect `ConfigMap.v1` or `SetNamespace.v1alpha1.fn.kpt.dev`"
    );
}

#[test]
fn several_old_namespaces_are_listed_sorted() {
    let input = "\
apiVersion: v1
kind: Service
metadata:
  name: a
  namespace: db
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: b
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: c
  namespace: db
";
    let (_, results, _) = run(super::run, input, Some(CM));
    assert_eq!(
        results[0].message,
        "namespace [db default] updated to \"staging\", 3 value(s) changed"
    );
}
