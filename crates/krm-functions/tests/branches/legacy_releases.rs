//! Images pinned to the 2021 kustomize-based releases (set-namespace v0.1 and
//! v0.2, set-labels v0.1, set-annotations v0.1.0-v0.1.3), through the runtime: what
//! kpt's own e2e cases pinned to those tags recorded.

use super::harness::{call, call_image};

const INPUT: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
spec:
  replicas: 3
---
apiVersion: custom.io/v1
kind: Custom
metadata:
  name: c
";

fn cm(key: &str, value: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: function-input\ndata:\n  {key}: {value}\n"
    )
}

#[test]
fn set_namespace_releases_namespace_custom_resources_silently() {
    for image in [
        "gcr.io/kpt-fn/set-namespace:v0.1.3",
        "ghcr.io/kptdev/krm-functions-catalog/set-namespace:v0.2.0",
    ] {
        let o = call_image(image, INPUT, Some(&cm("namespace", "staging")));
        assert_eq!(o.exit_code, 0, "{image}");
        assert!(o.results.is_empty(), "{image}: {:?}", o.results());
        assert_eq!(
            o.items.matches("namespace: staging").count(),
            2,
            "{image}: {}",
            o.items
        );
    }
    // The current release leaves a custom resource without a namespace alone.
    let o = call("set-namespace", INPUT, Some(&cm("namespace", "staging")));
    assert_eq!(o.items.matches("namespace: staging").count(), 1);
}

#[test]
fn release_failures_use_the_2021_framework_text() {
    let o = call_image("gcr.io/kpt-fn/set-namespace:v0.1.3", INPUT, None);
    let message = "failed to configure function: input namespace cannot be empty";
    assert_eq!(o.exit_code, 1);
    assert_eq!(o.results(), vec![format!("error|{message}")]);
    assert_eq!(o.stderr, format!("[error] /// : {message}"));
    assert_eq!(o.items, INPUT);
    let o = call_image(
        "ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.1.5",
        INPUT,
        None,
    );
    let message = "failed to configure function: input label list cannot be empty";
    assert_eq!(
        (o.exit_code, o.stderr.as_str()),
        (1, format!("[error] /// : {message}").as_str())
    );
}

#[test]
fn set_labels_release_creates_selector_and_template() {
    let o = call_image(
        "ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.1.5",
        INPUT,
        Some(&cm("tier", "db")),
    );
    assert_eq!(o.exit_code, 0);
    assert!(o.results.is_empty());
    assert!(
        o.items.contains("  selector:\n    matchLabels:\n      tier: db\n  template:\n    metadata:\n      labels:\n        tier: db\n"),
        "{}",
        o.items
    );
}

#[test]
fn set_annotations_release_reports_nothing() {
    let o = call_image(
        "gcr.io/kpt-fn/set-annotations:v0.1.3",
        INPUT,
        Some(&cm("foo", "bar")),
    );
    assert_eq!(o.exit_code, 0);
    assert!(o.results.is_empty());
    // Both metadata and the Deployment's pod template.
    assert_eq!(o.items.matches("foo: bar").count(), 3);
    let o = call("set-annotations", INPUT, Some(&cm("foo", "bar")));
    assert_eq!(
        o.results.len(),
        2,
        "the current release reports each location"
    );
}
