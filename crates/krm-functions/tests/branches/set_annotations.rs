//! set-annotations: a kyaml `framework` function; a failure is one error
//! result, exit 1, and the results' text on stderr.

use super::harness::{call, config_map};

const CM: &str = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: the-map
  annotations:
    internal.config.kubernetes.io/path: resources.yaml
data:
  some-key: some-value
";

fn typed(kind: &str, body: &str) -> String {
    format!("apiVersion: fn.kpt.dev/v1alpha1\nkind: {kind}\nmetadata:\n  name: c\n{body}")
}

fn config_error(config: Option<&str>, message: &str) {
    let o = call("set-annotations", CM, config);
    let full = format!("failed to configure function: {message}");
    assert_eq!(o.results(), vec![format!("error|{full}")], "{config:?}");
    assert_eq!(o.exit_code, 1);
    assert_eq!(o.stderr, format!("[error]: {full}"));
    assert_eq!(o.items, CM);
}

#[test]
fn config_errors() {
    let kind = "`functionConfig` must be a `ConfigMap` or `SetAnnotations`";
    config_error(None, kind);
    config_error(
        Some("apiVersion: v2\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: b\n"),
        kind,
    );
    config_error(Some(&typed("SetLabels", "annotations:\n  a: b\n")), kind);
    let empty = "input annotation list cannot be empty";
    config_error(Some(&config_map(&[])), empty);
    config_error(Some(&typed("SetAnnotations", "annotations: {}\n")), empty);
    config_error(
        Some(&typed(
            "SetAnnotations",
            "annotations:\n  a: b\nfieldSpecs:\n- path: x\nadditionalAnnotationFields:\n- path: y\n",
        )),
        "`fieldSpecs` has been deprecated, please rename it to `additionalAnnotationFields`",
    );
}

/// sigs.k8s.io/yaml stringifies scalars bound for Go strings; a collection
/// where a string (or a scalar where a map) belongs fails `plugin.Config`.
#[test]
fn wrongly_typed_typed_config() {
    let quoted = |body: &str| {
        format!(
            "\"apiVersion: fn.kpt.dev/v1alpha1\\nkind: SetAnnotations\\nmetadata:\\n  name: c\\n{}\"",
            body.replace('\n', "\\n")
        )
    };
    for (body, error) in [
        (
            "annotations:\n  a: [x]\n",
            "json: cannot unmarshal array into Go struct field plugin.annotations of type string",
        ),
        (
            "annotations: [a]\n",
            "json: cannot unmarshal array into Go struct field plugin.annotations of type \
             map[string]string",
        ),
        (
            "annotations:\n  a: b\nadditionalAnnotationFields:\n- path\n",
            "json: cannot unmarshal string into Go struct field \
             plugin.additionalAnnotationFields of type types.FieldSpec",
        ),
    ] {
        config_error(
            Some(&typed("SetAnnotations", body)),
            &format!(
                "failed to unmarshal config {}: error unmarshaling JSON: while decoding JSON: \
                 {error}",
                quoted(body)
            ),
        );
    }
    // Numbers and booleans are annotation text.
    let o = call(
        "set-annotations",
        CM,
        Some(&typed(
            "SetAnnotations",
            "annotations:\n  n: 1\n  t: true\n",
        )),
    );
    assert_eq!(o.exit_code, 0);
    assert!(
        o.items.contains("n: \"1\"") && o.items.contains("t: \"true\""),
        "{}",
        o.items
    );
}

#[test]
fn sets_and_reports_without_severity() {
    for cfg in [
        config_map(&[("fruit", "apple"), ("color", "orange")]),
        typed(
            "SetAnnotations",
            "annotations:\n  fruit: apple\n  color: orange\n",
        ),
        typed(
            "SetAnnotationConfig",
            "annotations:\n  fruit: apple\n  color: orange\n",
        ),
    ] {
        let o = call("set-annotations", CM, Some(&cfg));
        assert_eq!(o.exit_code, 0);
        assert_eq!(
            o.results(),
            vec!["-|set annotations: {\"color\":\"orange\",\"fruit\":\"apple\"}"]
        );
        let r = &o.results[0];
        assert_eq!(
            r.field.as_ref().map(|f| f.path.as_str()),
            Some("metadata.annotations")
        );
        assert_eq!(
            r.file.as_ref().map(|f| f.path.as_str()),
            Some("resources.yaml")
        );
        assert!(o.items.contains("    color: orange\n    fruit: apple\n"));
    }
}

#[test]
fn no_resources_applies_nothing() {
    let o = call("set-annotations", "", Some(&config_map(&[("a", "b")])));
    assert_eq!(o.results(), vec!["-|no annotations applied"]);
    assert_eq!(o.exit_code, 0);
}

#[test]
fn local_config_is_annotated_too() {
    let local = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: l\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n";
    let o = call("set-annotations", local, Some(&config_map(&[("a", "b")])));
    assert!(o.items.contains("    a: b\n"));
}

#[test]
fn a_scalar_where_annotations_go_fails_the_run() {
    let bad = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  annotations: nope\n";
    let o = call("set-annotations", bad, Some(&config_map(&[("a", "b")])));
    assert_eq!(o.exit_code, 1);
    assert_eq!(o.results.len(), 1);
    assert!(
        o.results()[0].starts_with("error|failed to run function: failed to run transformer: ")
    );
    assert!(o.stderr.starts_with("[error]: failed to run function: "));
}

mod prop {
    use super::super::harness::{call, config_map};
    use proptest::prelude::*;

    const INPUT: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    keep: me
spec:
  replicas: 2
  template:
    metadata:
      labels:
        app: web
";

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]

        /// A second run with the same annotations changes nothing and
        /// reports the same; the metadata and the pod template both carry
        /// every annotation; unrelated fields are kept.
        #[test]
        fn idempotent_and_complete(
            annotations in prop::collection::btree_map("[a-z][a-z0-9./-]{0,10}", "[ -~]{0,8}", 1..4)
        ) {
            let pairs: Vec<(&str, &str)> =
                annotations.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            let config = config_map(&pairs);
            let once = call("set-annotations", INPUT, Some(&config));
            prop_assert_eq!(once.exit_code, 0);
            let twice = call("set-annotations", &once.items, Some(&config));
            prop_assert_eq!(&twice.items, &once.items);
            prop_assert_eq!(twice.results(), once.results());
            let paths: Vec<String> = once
                .results
                .iter()
                .filter_map(|r| r.field.as_ref().map(|f| f.path.clone()))
                .collect();
            prop_assert_eq!(
                paths,
                vec!["metadata.annotations".to_string(), "spec.template.metadata.annotations".to_string()]
            );
            for kept in ["    keep: me\n", "  replicas: 2\n", "        app: web\n"] {
                prop_assert!(once.items.contains(kept), "{} lost", kept);
            }
        }
    }
}

#[test]
fn additional_fields_are_created() {
    // Like the catalog's tests/set-annotations/additional-annotations.
    let input = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: local-config-map
  annotations:
    config.kubernetes.io/local-config: \"true\"
data:
  some-key: some-value
";
    let cfg = typed(
        "SetAnnotations",
        "annotations:\n  color: orange\n  fruit: apple\nadditionalAnnotationFields:\n- path: data/selector/annotations\n  kind: ConfigMap\n  create: true\n",
    );
    let o = call("set-annotations", input, Some(&cfg));
    assert_eq!(o.exit_code, 0);
    assert_eq!(
        o.items,
        "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: local-config-map
  annotations:
    config.kubernetes.io/local-config: \"true\"
    color: orange
    fruit: apple
data:
  some-key: some-value
  selector:
    annotations:
      color: orange
      fruit: apple
"
    );
    let paths: Vec<&str> = o
        .results
        .iter()
        .filter_map(|r| r.field.as_ref().map(|f| f.path.as_str()))
        .collect();
    assert_eq!(
        paths,
        vec!["data.selector.annotations", "metadata.annotations"]
    );
}

#[test]
fn data_entries_that_are_not_text_read_as_empty() {
    // kyaml's `GetDataMap`: a null or a nested value is "".
    let cfg = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  nested: {x: y}\n  none: ~\n";
    let o = call("set-annotations", CM, Some(cfg));
    assert_eq!(o.exit_code, 0);
    assert_eq!(
        o.results(),
        vec!["-|set annotations: {\"nested\":\"\",\"none\":\"\"}"]
    );
    assert!(
        o.items.contains("    nested: \"\"\n    none: \"\"\n"),
        "{}",
        o.items
    );
}
