//! delete-annotations through the runtime: success exits 0 with info results
//! and the items in the SDK's order; a failure is one error result and
//! `failed to evaluate function: <error>` on stderr; every tag is the same
//! program.

use super::{call, call_image, config_map};

const F: &str = "delete-annotations";

fn cm(kind: &str, name: &str) -> String {
    format!(
        "apiVersion: v1\nkind: {kind}\nmetadata:\n  name: {name}\n  annotations:\n    drop: x\n    internal.config.kubernetes.io/path: {name}.yaml\n"
    )
}

#[test]
fn deletes_and_sorts_like_the_sdk() {
    let input = format!("{}---\n{}", cm("Secret", "s"), cm("ConfigMap", "c"));
    let out = call(F, &input, Some(&config_map("  annotationKeys: drop\n")));
    assert_eq!((out.exit_code, out.stderr.as_str()), (0, ""));
    assert_eq!(
        out.results,
        vec![
            "info|The provided annotations were deleted from 2 resource(s)||",
            "info|Annonation: [drop] removed from resource: [s]|s.yaml|",
            "info|Annonation: [drop] removed from resource: [c]|c.yaml|",
        ],
        "results in input order"
    );
    assert!(!out.items.contains("drop"));
    let (c, s) = (
        out.items.find("kind: ConfigMap"),
        out.items.find("kind: Secret"),
    );
    assert!(c < s, "items sorted by apiVersion and kind:\n{}", out.items);
}

#[test]
fn failures_exit_1_with_the_error_on_stderr() {
    let msg = "annotationKeys was not provided as part of the config or paramters to the function";
    let out = call(F, &cm("ConfigMap", "c"), None);
    assert_eq!(out.exit_code, 1);
    assert_eq!(out.stderr, format!("failed to evaluate function: {msg}"));
    assert_eq!(out.results, vec![format!("error|{msg}||")]);
    let bad = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations: [drop]\n";
    let out = call(F, bad, Some(&config_map("  annotationKeys: drop\n")));
    assert_eq!(out.exit_code, 1);
    assert_eq!(
        out.stderr,
        "failed to evaluate function: unable to remove fields [metadata annotations drop] with \
         error: value is of unexpected type *internal.sliceVariant"
    );
    assert_eq!(out.results.len(), 1);
}

#[test]
fn every_registry_and_tag_is_the_same_program() {
    let input = cm("ConfigMap", "c");
    let fc = config_map("  annotationKeys: drop,none\n");
    let want = call(F, &input, Some(&fc));
    for image in [
        "ghcr.io/kptdev/krm-functions-catalog/delete-annotations:v0.1",
        "ghcr.io/kptdev/krm-functions-catalog/delete-annotations:v0.1.0",
        "gcr.io/kpt-fn-contrib/delete-annotations:unstable",
        "gcr.io/kpt-fn/delete-annotations:unstable",
        "delete-annotations",
    ] {
        let out = call_image(image, &input, Some(&fc));
        assert_eq!(out.results, want.results, "{image}");
        assert_eq!((out.exit_code, &out.items), (0, &want.items), "{image}");
    }
}
