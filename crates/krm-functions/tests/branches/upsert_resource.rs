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
