//! set-labels: the current SDK's config step, then the catalog's `Run`.

use super::harness::{SDK_FAILURE, call, config_map};
use proptest::prelude::*;

const DEPLOY: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
";

const LOCAL: &str = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: local
  annotations:
    config.kubernetes.io/local-config: \"true\"
";

fn typed(body: &str) -> String {
    format!("apiVersion: fn.kpt.dev/v1alpha1\nkind: SetLabels\nmetadata:\n  name: c\n{body}")
}

#[test]
fn no_config_fails_after_saying_so() {
    let o = call("set-labels", DEPLOY, None);
    assert_eq!(o.results(), vec!["info|`FunctionConfig` is not given"]);
    assert_eq!((o.exit_code, o.stderr.as_str()), (1, SDK_FAILURE));
    assert_eq!(o.items, DEPLOY, "nothing changes");
    // `configMap: {}` in a Kptfile is the same as no config; so is `{}`.
    let o = call("set-labels", DEPLOY, Some("{}"));
    assert_eq!(o.exit_code, 1);
    // The placeholder ConfigMap with empty data.
    let o = call("set-labels", DEPLOY, Some(&config_map(&[])));
    assert_eq!(o.results(), vec!["info|`FunctionConfig` is not given"]);
    assert_eq!(o.exit_code, 1);
}

#[test]
fn placeholder_without_data_fails_silently() {
    // Not empty for the SDK (no `data` map), but set-labels' own placeholder
    // test catches it: exit 1 with no result at all.
    let cfg = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: function-input\n";
    let o = call("set-labels", DEPLOY, Some(cfg));
    assert!(o.results.is_empty());
    assert_eq!(o.exit_code, 1);
}

#[test]
fn no_input_resources_is_info_and_success() {
    let o = call("set-labels", "", None);
    assert_eq!(
        o.results(),
        vec![
            "info|`FunctionConfig` is not given",
            "info|no input resources"
        ]
    );
    assert_eq!(o.exit_code, 0);
    let o = call("set-labels", LOCAL, Some(&config_map(&[("a", "b")])));
    assert_eq!(o.results(), vec!["info|no input resources"]);
    assert_eq!(o.exit_code, 0);
    assert!(!o.items.contains("labels"), "local config is untouched");
}

#[test]
fn wrong_group_or_kind_is_rejected() {
    for (cfg, gk) in [
        (
            "apiVersion: fn.kpt.dev/v1alpha1\nkind: BadKind\nmetadata:\n  name: c\nlabels:\n  a: b\n",
            "BadKind.fn.kpt.dev",
        ),
        (
            "apiVersion: example.com/v1\nkind: SetLabels\nmetadata:\n  name: c\nlabels:\n  a: b\n",
            "SetLabels.example.com",
        ),
        (
            "apiVersion: apps/v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: b\n",
            "ConfigMap.apps",
        ),
    ] {
        let o = call("set-labels", DEPLOY, Some(cfg));
        assert_eq!(
            o.results(),
            vec![format!(
                "error|unknown FunctionConfig `{gk}`, expect `SetLabels.fn.kpt.dev` or `ConfigMap.v1`"
            )]
        );
        assert_eq!((o.exit_code, o.stderr.as_str()), (1, SDK_FAILURE));
        assert_eq!(o.items, DEPLOY, "no label applied");
    }
}

#[test]
fn undecodable_typed_config_is_rejected() {
    for (body, what) in [
        (
            "labels:\n- a\n- b\n",
            "array into Go struct field SetLabels.labels of type map[string]string",
        ),
        (
            "labels: bad\n",
            "string into Go struct field SetLabels.labels of type map[string]string",
        ),
        (
            "labels:\n  a: 1\n",
            "number into Go struct field SetLabels.labels of type string",
        ),
        (
            "labels:\n  a: true\n",
            "bool into Go struct field SetLabels.labels of type string",
        ),
        (
            "labels:\n  a: {b: c}\n",
            "object into Go struct field SetLabels.labels of type string",
        ),
    ] {
        let o = call("set-labels", DEPLOY, Some(&typed(body)));
        assert_eq!(
            o.results(),
            vec![format!(
                "error|unable to convert object to *setlabels.SetLabels with error: json: cannot unmarshal {what}"
            )],
            "{body}"
        );
        assert_eq!(o.exit_code, 1);
        assert_eq!(o.items, DEPLOY);
    }
}

#[test]
fn no_labels_is_a_warning() {
    for cfg in [
        typed("labels: {}\n"),
        typed("labels: null\n"),
        typed(""),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n".to_string(),
    ] {
        let o = call("set-labels", DEPLOY, Some(&cfg));
        assert_eq!(
            o.results(),
            vec!["warning|no `labels` arguments are given in FunctionConfig"],
            "{cfg}"
        );
        assert_eq!(o.exit_code, 0);
        assert_eq!(o.items, DEPLOY);
    }
}

#[test]
fn labels_are_set_and_counted() {
    let want = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    app: web
spec:
  replicas: 1
  selector:
    matchLabels:
      app: web
";
    for cfg in [
        config_map(&[("app", "web")]),
        typed("labels:\n  app: web\n"),
        // Go's JSON decoding matches field names case-insensitively.
        typed("Labels:\n  app: web\n"),
        // Any version of a group-less ConfigMap.
        "apiVersion: v2\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  app: web\n".to_string(),
    ] {
        let o = call("set-labels", DEPLOY, Some(&cfg));
        assert_eq!(o.results(), vec!["info|set 2 labels in total"], "{cfg}");
        assert_eq!(o.exit_code, 0);
        assert_eq!(o.items, want);
    }
}

fn label_map() -> impl Strategy<Value = Vec<(String, String)>> {
    prop::collection::btree_map("[a-z][a-z0-9.-]{0,8}", "[a-zA-Z0-9]{0,6}", 1..5)
        .prop_map(|m| m.into_iter().collect())
}

fn cm(labels: &[(String, String)]) -> String {
    let pairs: Vec<(&str, &str)> = labels
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    config_map(&pairs)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Running twice changes nothing more, every label lands in metadata and
    /// fields the function does not own are kept.
    #[test]
    fn idempotent_and_preserving(labels in label_map()) {
        let input = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations:
    keep: me # comment
spec:
  replicas: 3
  template:
    spec:
      containers:
      - name: c
        image: nginx
";
        let config = cm(&labels);
        let once = call("set-labels", input, Some(&config));
        prop_assert_eq!(once.exit_code, 0);
        let twice = call("set-labels", &once.items, Some(&config));
        prop_assert_eq!(&twice.items, &once.items);
        prop_assert_eq!(twice.results(), once.results());
        for (k, v) in &labels {
            let line = format!("    {k}: {}", if v.is_empty() { "\"\"".to_string() } else { v.clone() });
            prop_assert!(once.items.contains(&line) || once.items.contains(&format!("    {k}: '{v}'")) || once.items.contains(&format!("    {k}: \"{v}\"")), "{} missing in {}", line, once.items);
        }
        for kept in ["    keep: me # comment\n", "  replicas: 3\n", "        image: nginx\n"] {
            prop_assert!(once.items.contains(kept), "{} lost", kept);
        }
    }
}

#[test]
fn service_selector_keeps_its_order() {
    // Like the catalog's tests/set-labels/setlabels-config.
    let input = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: the-map
data:
  some-key: some-value
---
apiVersion: v1
kind: Service
metadata:
  name: the-service
  namespace: the-namespace
spec:
  selector:
    foo: bar
";
    let o = call(
        "set-labels",
        input,
        Some(&typed("labels:\n  fruit: apple\n  color: orange\n")),
    );
    assert_eq!(o.exit_code, 0);
    assert_eq!(o.results(), vec!["info|set 6 labels in total"]);
    assert_eq!(
        o.items,
        "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: the-map
  labels:
    color: orange
    fruit: apple
data:
  some-key: some-value
---
apiVersion: v1
kind: Service
metadata:
  name: the-service
  namespace: the-namespace
  labels:
    color: orange
    fruit: apple
spec:
  selector:
    foo: bar
    color: orange
    fruit: apple
"
    );
}

/// The SDK's `ErrUnmatchedField` text for a label location.
fn unmatched(kind: &str, path: &str, ty: &str) -> String {
    format!(
        "error|Resource(apiVersion=, kind={kind}) has unmatched field type \"{ty}\" in fieldpath {path}"
    )
}

#[test]
fn unreadable_label_locations_fail_the_object() {
    let cfg = config_map(&[("a", "x"), ("b", "z")]);
    // `labels:` left empty is null, not a mapping: the first label fails.
    let null_labels = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  labels:\n";
    let o = call("set-labels", null_labels, Some(&cfg));
    assert_eq!(
        o.results(),
        vec![
            unmatched("ConfigMap", ".metadata.labels.a", "string"),
            "info|set 0 labels in total".to_string(),
        ]
    );
    assert_eq!((o.exit_code, o.stderr.as_str()), (1, SDK_FAILURE));
    // A label holding a number: the labels before it are set and counted.
    let int_label = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  labels:\n    b: 1\n";
    let o = call("set-labels", int_label, Some(&cfg));
    assert_eq!(
        o.results(),
        vec![
            unmatched("ConfigMap", ".metadata.labels.b", "string"),
            "info|set 1 labels in total".to_string(),
        ]
    );
    assert!(o.items.contains("    b: 1\n    a: x\n"), "{}", o.items);
    assert_eq!(o.exit_code, 1);
    // Other objects still get their labels.
    let both = format!("{int_label}---\n{}", DEPLOY);
    let o = call("set-labels", &both, Some(&cfg));
    assert_eq!(o.results().len(), 2);
    assert!(
        o.items.contains("  labels:\n    a: x\n    b: z\n"),
        "{}",
        o.items
    );
}

#[test]
fn a_failing_pod_template_is_skipped_silently() {
    let input = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    metadata:
      labels:
";
    let o = call("set-labels", input, Some(&config_map(&[("a", "x")])));
    assert_eq!(o.results(), vec!["info|set 2 labels in total"]);
    assert_eq!(o.exit_code, 0);
    assert!(
        o.items.contains("      labels:\n"),
        "the template is left alone"
    );
}

#[test]
fn volume_claim_templates_and_peers() {
    let sts = "\
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  volumeClaimTemplates: none
";
    let o = call("set-labels", sts, Some(&config_map(&[("a", "x")])));
    assert_eq!(
        o.results()[0],
        unmatched("StatefulSet", ".spec.volumeClaimTemplates", "struct {}")
    );
    assert_eq!(o.exit_code, 1);
    let np = "\
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: np
spec:
  ingress:
  - from:
    - podSelector:
        matchLabels:
          a: 1
";
    let o = call("set-labels", np, Some(&config_map(&[("a", "x")])));
    // List elements lose the object's kind and path in the SDK.
    assert_eq!(
        o.results()[0],
        unmatched("", ".podSelector.matchLabels.a", "string")
    );
    assert_eq!(o.exit_code, 1);
}
