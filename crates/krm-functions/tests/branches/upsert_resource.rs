//! upsert-resource: replaces matching resources by the functionConfig (or
//! each item of a `List`) or adds it; reports nothing. Failures print
//! `failed to upsert resource: ...` twice and add no result.

use super::call;

const F: &str = "upsert-resource";

const SVC: &str = "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\nspec:\n  x: new\n";

fn assert_fails(out: &super::Out, error: &str) {
    let e = format!("failed to upsert resource: {error}");
    assert_eq!(out.exit_code, 1);
    assert_eq!(out.stderr, format!("{e}{e}"));
    assert!(out.results.is_empty(), "{:?}", out.results);
}

#[test]
fn replaces_or_adds_without_results() {
    let old = "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\nspec:\n  x: old\n";
    let out = call(F, old, Some(SVC));
    assert_eq!((out.exit_code, out.stderr.as_str()), (0, ""));
    assert!(out.results.is_empty());
    assert!(out.items.contains("x: new") && !out.items.contains("x: old"));

    let out = call(F, "", Some(SVC));
    assert_eq!(out.exit_code, 0);
    assert!(out.items.contains("x: new"));

    // An empty List upserts nothing.
    let out = call(
        F,
        old,
        Some("apiVersion: v1\nkind: List\nmetadata:\n  name: l\n"),
    );
    assert_eq!(out.exit_code, 0);
    assert!(out.items.contains("x: old"));
}

#[test]
fn resources_without_metadata_fail() {
    assert_fails(&call(F, SVC, None), "missing Resource metadata");
    assert_fails(
        &call(F, SVC, Some("data:\n  a: b\n")),
        "missing Resource metadata",
    );
    assert_fails(
        &call(
            F,
            SVC,
            Some("apiVersion: v1\nkind: List\nitems:\n- spec: {}\n"),
        ),
        "missing Resource metadata",
    );
    assert_fails(
        &call(F, "spec: {}\n", Some(SVC)),
        "missing Resource metadata",
    );
}

/// The annotation block of the first item named `name` in a YAML stream.
fn annotations_of(items: &str, name: &str) -> String {
    let doc = items
        .split("---\n")
        .find(|d| d.contains(&format!("  name: {name}\n")))
        .unwrap_or_else(|| panic!("no item {name} in {items}"));
    doc.lines()
        .skip_while(|l| l.trim() != "annotations:")
        .skip(1)
        .take_while(|l| l.starts_with("    "))
        .map(|l| l.trim().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_replacement_keeps_the_upserted_annotations_but_the_matched_place() {
    let existing = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm
  annotations:
    team: old
    internal.config.kubernetes.io/path: site/cm.yaml
    internal.config.kubernetes.io/index: '3'
data:
  k: v1
";
    // The upserted resource's own kyaml annotations (here from a List whose
    // items were written with them) are carried, not dropped: seqindent goes
    // on to pick the written indentation. Its path and index do not win.
    let config = "\
apiVersion: v1
kind: List
metadata:
  name: upserts
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: cm
    annotations:
      owner: ops
      internal.config.kubernetes.io/seqindent: wide
      internal.config.kubernetes.io/path: elsewhere.yaml
      internal.config.kubernetes.io/index: '9'
  data:
    k: v2
";
    let out = call(F, existing, Some(config));
    assert_eq!(out.exit_code, 0, "{}", out.stderr);
    assert_eq!(
        annotations_of(&out.items, "cm"),
        "internal.config.kubernetes.io/index: \"3\"\n\
         internal.config.kubernetes.io/path: site/cm.yaml\n\
         internal.config.kubernetes.io/seqindent: wide\n\
         owner: ops"
    );
}

#[test]
fn an_added_resource_keeps_a_legacy_path_and_loses_the_internal_one() {
    let existing = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n";
    let config = "\
apiVersion: v1
kind: List
metadata:
  name: upserts
items:
- apiVersion: v1
  kind: Secret
  metadata:
    name: legacy
    annotations:
      config.kubernetes.io/path: keep/here.yaml
      internal.config.kubernetes.io/path: dropped.yaml
      internal.config.kubernetes.io/index: '4'
- apiVersion: v1
  kind: Secret
  metadata:
    name: aimed
    annotations:
      config.kubernetes.io/target-path: aimed/at.yaml
      internal.config.kubernetes.io/target-path: just-an-annotation.yaml
      config.kubernetes.io/function: |
        container: {image: x}
";
    let out = call(F, existing, Some(config));
    assert_eq!(out.exit_code, 0, "{}", out.stderr);
    // Only the internal path and index go: the legacy path still names the
    // file kpt writes the resource to.
    assert_eq!(
        annotations_of(&out.items, "legacy"),
        "config.kubernetes.io/path: keep/here.yaml"
    );
    // The target path (only the `config.kubernetes.io/` one) becomes the
    // path; the function marker goes.
    assert_eq!(
        annotations_of(&out.items, "aimed"),
        "internal.config.kubernetes.io/path: aimed/at.yaml\n\
         internal.config.kubernetes.io/target-path: just-an-annotation.yaml"
    );
}

#[test]
fn list_items_given_as_a_mapping_are_no_resources() {
    // kyaml reads the mapping's keys and values as the resources to upsert;
    // a key is a bare scalar without metadata.
    assert_fails(
        &call(
            F,
            SVC,
            Some(
                "apiVersion: v1\nkind: List\nmetadata:\n  name: l\nitems:\n  first: {kind: Service}\n",
            ),
        ),
        "missing Resource metadata",
    );
    // A scalar `items` holds nothing to upsert.
    let out = call(
        F,
        SVC,
        Some("apiVersion: v1\nkind: List\nmetadata:\n  name: l\nitems: none\n"),
    );
    assert_eq!((out.exit_code, out.items.as_str()), (0, SVC));
}
