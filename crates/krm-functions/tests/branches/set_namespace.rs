//! set-namespace: configuration problems are one error result about the
//! config, and the function still exits 0 (its `Run` always returns true).

use super::harness::{call, config_map};

const DEPLOY: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: old
";

fn config_error(config: Option<&str>, message: &str) {
    let o = call("set-namespace", DEPLOY, config);
    assert_eq!(o.results(), vec![format!("error|{message}")], "{config:?}");
    assert_eq!(
        o.exit_code, 0,
        "an error result alone does not fail the step"
    );
    assert!(o.stderr.is_empty());
    assert_eq!(o.items, DEPLOY, "nothing changes");
    let file = o.results[0].file.as_ref().expect("file reference");
    assert_eq!(file.index, -1);
}

#[test]
fn missing_config() {
    let msg =
        "FunctionConfig is missing. Expect `ConfigMap.v1` or `SetNamespace.v1alpha1.fn.kpt.dev`";
    config_error(None, msg);
    config_error(Some("{}"), msg);
    let o = call("set-namespace", DEPLOY, None);
    let r = o.results[0].resource_ref.clone().unwrap_or_default();
    assert!(r.kind.is_empty() && r.name.is_empty(), "resourceRef: {{}}");
}

#[test]
fn empty_values() {
    config_error(
        Some(&config_map(&[])),
        "`data.namespace` should not be empty",
    );
    // The package-context name only counts in the ConfigMap of that name.
    config_error(
        Some(&config_map(&[("name", "x")])),
        "`data.namespace` should not be empty",
    );
    config_error(
        Some("apiVersion: fn.kpt.dev/v1alpha1\nkind: SetNamespace\nmetadata:\n  name: c\n"),
        "`namespace` should not be empty",
    );
}

#[test]
fn unknown_kind() {
    config_error(
        Some("apiVersion: example.com/v1\nkind: Other\nmetadata:\n  name: c\n"),
        "unknown functionConfig Kind=Other ApiVersion=example.com/v1, expect `ConfigMap.v1` or `SetNamespace.v1alpha1.fn.kpt.dev`",
    );
}

#[test]
fn package_context_and_success() {
    let ctx = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kptfile.kpt.dev\ndata:\n  name: fromctx\n";
    let o = call("set-namespace", DEPLOY, Some(ctx));
    assert_eq!(o.exit_code, 0);
    assert!(o.items.contains("namespace: fromctx"));
    let o = call(
        "set-namespace",
        DEPLOY,
        Some(&config_map(&[("namespace", "new")])),
    );
    assert_eq!(
        o.results(),
        vec![
            "info|namespace [old] updated to \"new\", 1 value(s) changed",
            "info|all `depends-on` annotations are up-to-date. no `namespace` changed",
        ]
    );
    assert_eq!(o.exit_code, 0);
}

/// Several upstream namespaces no longer stop a replace-all (the catalog
/// dropped its single-origin check): every namespace is replaced.
#[test]
fn several_origins_without_matcher_replace_all() {
    let input = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: a
  namespace: one
  annotations:
    internal.kpt.dev/upstream-identifier: '|ConfigMap|one|a'
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: b
  namespace: two
  annotations:
    internal.kpt.dev/upstream-identifier: '|ConfigMap|two|b'
";
    let o = call(
        "set-namespace",
        input,
        Some(&config_map(&[("namespace", "new")])),
    );
    assert_eq!(
        o.results(),
        vec![
            "info|namespace [one two] updated to \"new\", 2 value(s) changed",
            "info|all `depends-on` annotations are up-to-date. no `namespace` changed",
        ]
    );
    assert_eq!(o.exit_code, 0);
    assert_eq!(o.items.matches("namespace: new\n").count(), 2);
}

/// A custom resource is namespaced only when it has a namespace (the SDK's
/// guess for kinds it does not know); the Kptfile and known cluster-scoped
/// kinds are left alone.
#[test]
fn custom_resources_namespaced_only_with_a_namespace() {
    let input = "\
apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: pkg
---
apiVersion: custom.io/v1
kind: Custom
metadata:
  name: c
---
apiVersion: custom.io/v1
kind: Custom
metadata:
  name: d
  namespace: old
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: fast
";
    let o = call(
        "set-namespace",
        input,
        Some(&config_map(&[("namespace", "prod")])),
    );
    assert_eq!(
        o.results()[0],
        "info|namespace [old] updated to \"prod\", 1 value(s) changed"
    );
    assert_eq!(o.items.matches("namespace: prod").count(), 1);
    assert!(o.items.contains("name: d\n  namespace: prod\n"));
}

/// An upstream identifier in a bad format leaves the resource alone.
#[test]
fn malformed_upstream_identifier_leaves_the_resource() {
    let input = "\
apiVersion: v1
kind: Service
metadata:
  name: s
  namespace: old
  annotations:
    internal.kpt.dev/upstream-identifier: 'not-an-id'
";
    let o = call(
        "set-namespace",
        input,
        Some(&config_map(&[("namespace", "prod")])),
    );
    assert_eq!(
        o.results()[0],
        "info|all matching namespaces are already \"prod\". no value changed"
    );
    assert!(o.items.contains("namespace: old"));
}

/// A RoleBinding (namespaced) gets its own namespace, a ClusterRoleBinding
/// its subjects'; a CRD only when it converts through a named webhook
/// service; an APIService only with a named service (a missing service
/// namespace is added).
#[test]
fn bindings_crd_and_apiservice_fields() {
    let input = "\
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: rb
  namespace: old
subjects:
  - kind: ServiceAccount
    name: sa
    namespace: elsewhere
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: crb
subjects:
  - kind: ServiceAccount
    name: sb
    namespace: old
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: none
spec:
  conversion:
    strategy: None
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: url
spec:
  conversion:
    strategy: Webhook
    webhook:
      clientConfig:
        url: https://x
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: svc
spec:
  conversion:
    strategy: Webhook
    webhook:
      clientConfig:
        service:
          name: conv
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: local
spec:
  group: x
";
    let o = call(
        "set-namespace",
        input,
        Some(&config_map(&[("namespace", "new")])),
    );
    assert_eq!(
        o.results()[0],
        "info|namespace [default old] updated to \"new\", 3 value(s) changed"
    );
    assert!(o.items.contains("  name: rb\n  namespace: new\n"));
    assert!(
        o.items.contains("  name: sa\n  namespace: elsewhere\n"),
        "{}",
        o.items
    );
    assert!(
        o.items.contains("  name: sb\n  namespace: new\n"),
        "{}",
        o.items
    );
    assert!(
        o.items
            .contains("          name: conv\n          namespace: new\n")
    );
    assert_eq!(o.items.matches("namespace: new").count(), 3);
}

/// A config that does not decode into the catalog's types is its own error.
#[test]
fn undecodable_configs() {
    config_error(
        Some("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  namespace: true\n"),
        "failed to parse FunctionConfig as ConfigMap",
    );
    config_error(
        Some(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  labels: [a]\ndata:\n  namespace: x\n",
        ),
        "failed to parse FunctionConfig as ConfigMap",
    );
    config_error(
        Some(
            "apiVersion: fn.kpt.dev/v1alpha1\nkind: SetNamespace\nmetadata:\n  name: c\nnamespaceMatcher: {a: b}\nnamespace: x\n",
        ),
        "failed to parse FunctionConfig as fn.kpt.dev.v1alpha1.SetNamespace",
    );
}

mod prop {
    use super::super::harness::{call, config_map};
    use proptest::prelude::*;

    const INPUT: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: old
---
apiVersion: v1
kind: Service
metadata:
  name: svc
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: reader
";

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]

        /// Any namespace lands on every namespace-scoped resource (and on no
        /// cluster-scoped one); a second run finds nothing left to change.
        #[test]
        fn sets_every_namespaced_resource(ns in "[a-z][a-z0-9-]{0,20}[a-z0-9]") {
            let config = config_map(&[("namespace", ns.as_str())]);
            let once = call("set-namespace", INPUT, Some(&config));
            prop_assert_eq!(once.exit_code, 0);
            prop_assert_eq!(once.items.matches(&format!("  namespace: {ns}\n")).count(), 2);
            prop_assert!(!once.items.contains("namespace: old"));
            let role = once.items.split("---\n").find(|d| d.contains("kind: ClusterRole")).unwrap_or_default().to_string();
            prop_assert!(!role.contains("namespace:"), "cluster-scoped: {}", role);
            let twice = call("set-namespace", &once.items, Some(&config));
            prop_assert_eq!(&twice.items, &once.items);
            prop_assert_eq!(
                twice.results()[0].clone(),
                format!("info|all matching namespaces are already \"{ns}\". no value changed")
            );
        }
    }
}

#[test]
fn config_error_points_at_the_config_file() {
    let cfg = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations:\n    internal.config.kubernetes.io/path: fn-config.yaml\ndata: {}\n";
    let o = call("set-namespace", DEPLOY, Some(cfg));
    let f = o.results[0].file.as_ref().expect("file");
    assert_eq!((f.path.as_str(), f.index), ("fn-config.yaml", -1));
    let cfg = cfg.replace(
        "fn-config.yaml\n",
        "fn-config.yaml\n    internal.config.kubernetes.io/index: '2'\n",
    );
    let o = call("set-namespace", DEPLOY, Some(&cfg));
    let f = o.results[0].file.as_ref().expect("file");
    assert_eq!((f.path.as_str(), f.index), ("fn-config.yaml", 2));
    let r = o.results[0].resource_ref.as_ref().expect("resourceRef");
    assert_eq!((r.kind.as_str(), r.name.as_str()), ("ConfigMap", "c"));
}
