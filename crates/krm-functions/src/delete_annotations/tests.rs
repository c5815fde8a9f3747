use crate::common::testing::{messages, run};
use kpt::resource_list::Severity;

fn cfg(keys: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: function-input\ndata:\n  annotationKeys: {keys}\n"
    )
}

fn cm(name: &str, annotations: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  annotations:\n{annotations}"
    )
}

const FAILED: &str = "failed to evaluate function: ";

#[test]
fn deletes_each_key_and_lists_it_with_the_file() {
    let input = format!(
        "{}---\n{}",
        cm(
            "a",
            "    # kept comment\n    keep: x # why\n    drop-me: \"1\"\n    internal.config.kubernetes.io/path: a.yaml\n    other: y\n"
        ),
        cm("b", "    other: z\n")
    );
    let (out, results, err) = run(super::run, &input, Some(&cfg("drop-me,other")));
    assert!(err.is_none());
    assert_eq!(
        messages(&results),
        vec![
            "The provided annotations were deleted from 2 resource(s)",
            "Annonation: [drop-me] removed from resource: [a]",
            "Annonation: [other] removed from resource: [a]",
            "Annonation: [other] removed from resource: [b]",
        ]
    );
    assert!(results.iter().all(|r| r.severity == Some(Severity::Info)));
    assert!(results[0].file.is_none());
    let paths: Vec<_> = results[1..]
        .iter()
        .map(|r| r.file.as_ref().map(|f| f.path.as_str()))
        .collect();
    assert_eq!(paths, vec![Some("a.yaml"), Some("a.yaml"), Some("")]);
    assert!(out.contains(
        "  annotations:\n    # kept comment\n    keep: x # why\n    internal.config.kubernetes.io/path: a.yaml\n---"
    ));
    // The emptied map stays in the function's output (kpt's writer drops it).
    assert!(out.ends_with("  name: b\n  annotations: {}\n"), "{out}");
}

#[test]
fn nothing_found_is_info() {
    let (out, results, err) = run(super::run, &cm("a", "    k: v\n"), Some(&cfg("x")));
    assert!(err.is_none());
    assert_eq!(
        messages(&results),
        vec!["None of the resources had the provided annotations to delete"]
    );
    assert_eq!(results[0].severity, Some(Severity::Info));
    assert!(out.contains("    k: v\n"));
    let (_, results, _) = run(super::run, "", Some(&cfg("x")));
    assert_eq!(results.len(), 1);
}

#[test]
fn count_follows_the_previous_removals_name() {
    let a = cm("same", "    k: v\n");
    let b = a.replace("ConfigMap", "Secret");
    let c = cm("other", "    k: v\n");
    let input = format!("{a}---\n{b}---\n{c}---\n{a}");
    let (_, results, _) = run(super::run, &input, Some(&cfg("k")));
    assert_eq!(
        results[0].message, "The provided annotations were deleted from 3 resource(s)",
        "two same-named resources in a row count once"
    );
    assert_eq!(results.len(), 5);
}

#[test]
fn keys_split_at_commas_after_trimming_the_whole_text() {
    let input = cm("a", "    a: 1\n    \" b\": 2\n    c: 3\n    \"\": 4\n");
    let (out, results, _) = run(super::run, &input, Some(&cfg("\"  a, b,,c  \"")));
    assert_eq!(
        messages(&results)[1..],
        [
            "Annonation: [a] removed from resource: [a]",
            "Annonation: [ b] removed from resource: [a]",
            "Annonation: [] removed from resource: [a]",
            "Annonation: [c] removed from resource: [a]",
        ]
    );
    assert!(out.ends_with("  annotations: {}\n"));
}

#[test]
fn duplicates_go_and_keys_match_as_strings_only() {
    use crate::common::testing::{emit, items, node};
    use kpt::resource_list::ResourceList;
    use kpt::yaml::Node;
    // yaml.v3 refuses duplicate keys when parsing; code can still make them.
    let mut list = ResourceList::new(items(&cm("a", "    k: 1\n    1: one\n    \"2\": two\n")));
    if let Some(e) = list.items[0]
        .get_path_mut(&["metadata", "annotations"])
        .and_then(Node::entries_mut)
    {
        e.push((Node::string("k"), Node::string("again")));
    }
    list.function_config = Some(node(&cfg("k,1,2")));
    assert!(super::run(&mut list).is_ok());
    assert_eq!(
        messages(&list.results)[1..],
        [
            "Annonation: [k] removed from resource: [a]",
            "Annonation: [2] removed from resource: [a]",
        ],
        "a plain 1 key is an !!int, no string field name finds it"
    );
    assert!(emit(&list.items).ends_with("  annotations:\n    1: one\n"));
}

#[test]
fn skips_resources_without_kind_name_or_api_version() {
    let keyed = "  annotations:\n    k: v\n";
    let input = format!(
        "kind: ConfigMap\nmetadata:\n  name: a\n{keyed}---\napiVersion: v1\nmetadata:\n  name: b\n{keyed}---\n\
         apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: 123\n{keyed}---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n{keyed}"
    );
    let (out, results, _) = run(super::run, &input, Some(&cfg("k")));
    assert_eq!(
        messages(&results),
        vec!["None of the resources had the provided annotations to delete"]
    );
    assert_eq!(out.matches("    k: v").count(), 4);
}

#[test]
fn config_of_any_kind_and_file_path_from_the_internal_annotation_only() {
    let fc = "apiVersion: example.com/v1\nkind: Anything\ndata:\n  annotationKeys: k\n";
    let input = cm(
        "a",
        "    k: v\n    config.kubernetes.io/path: legacy.yaml\n",
    );
    let (_, results, _) = run(super::run, &input, Some(fc));
    assert_eq!(results.len(), 2);
    assert_eq!(results[1].file.as_ref().map(|f| f.path.as_str()), Some(""));
    // Deleting the path annotation itself leaves no path to report.
    let input = cm("a", "    internal.config.kubernetes.io/path: a.yaml\n");
    let (_, results, _) = run(
        super::run,
        &input,
        Some(&cfg("internal.config.kubernetes.io/path")),
    );
    assert_eq!(results[1].file.as_ref().map(|f| f.path.as_str()), Some(""));
}

#[test]
fn missing_keys_fail() {
    let want = "annotationKeys was not provided as part of the config or paramters to the function";
    for fc in [
        None,
        Some("{}".to_string()),
        Some("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n".to_string()),
        Some(cfg("\"\"")),
        Some("data:\n  other: x\n".to_string()),
    ] {
        let (_, results, err) = run(super::run, &cm("a", "    k: v\n"), fc.as_deref());
        assert_eq!(err, Some(format!("{FAILED}{want}")), "{fc:?}");
        assert_eq!(messages(&results), vec![want]);
        assert_eq!(results[0].severity, Some(Severity::Error));
    }
    // Only the empty text is refused: blanks pass and delete the key "".
    let (_, results, err) = run(super::run, "", Some(&cfg("\"  \"")));
    assert!(err.is_none());
    assert_eq!(results.len(), 1);
}

#[test]
fn keys_that_are_no_string_are_the_sdk_panic() {
    let want = "Resource(apiVersion=v1, kind=ConfigMap, Name=function-input) has unmatched field type: `data/annotationKeys";
    for keys in ["5", "true", "", "[a, b]", "{a: b}"] {
        let (_, results, err) = run(super::run, "", Some(&cfg(keys)));
        assert_eq!(err, Some(format!("{FAILED}{want}")), "{keys}");
        assert_eq!(messages(&results), vec![want]);
    }
    let (_, _, err) = run(super::run, "", Some("kind: X\ndata: [a]\n"));
    assert_eq!(
        err.as_deref(),
        Some(
            "failed to evaluate function: Resource(apiVersion=, kind=X, Name=) has unmatched field type: `data/annotationKeys"
        )
    );
}

#[test]
fn metadata_or_annotations_that_are_no_map_fail() {
    let cases = [
        (
            "apiVersion: v1\nkind: A\nmetadata:\n  name: a\n  annotations: x\n",
            "*internal.scalarVariant",
        ),
        (
            "apiVersion: v1\nkind: A\nmetadata:\n  name: a\n  annotations:\n",
            "*internal.scalarVariant",
        ),
        (
            "apiVersion: v1\nkind: A\nmetadata:\n  name: a\n  annotations: [k]\n",
            "*internal.sliceVariant",
        ),
    ];
    for (input, go_type) in cases {
        let input = format!("{}---\n{input}", cm("first", "    k: v\n"));
        let (out, results, err) = run(super::run, &input, Some(&cfg("k")));
        let want = format!(
            "unable to remove fields [metadata annotations k] with error: value is of unexpected type {go_type}"
        );
        assert_eq!(err, Some(format!("{FAILED}{want}")));
        assert_eq!(
            messages(&results),
            vec![want],
            "earlier results are dropped"
        );
        assert!(!out.contains("    k: v"), "earlier removals stay");
    }
    // No annotations at all is nothing to delete.
    let input = "apiVersion: v1\nkind: A\nmetadata:\n  name: a\n";
    let (_, _, err) = run(super::run, input, Some(&cfg("k")));
    assert!(err.is_none());
}

#[test]
fn an_alias_on_the_way_is_the_sdk_panic() {
    let input =
        "apiVersion: v1\nkind: A\nmetadata:\n  name: a\n  labels: &l {x: y}\n  annotations: *l\n";
    let (_, results, err) = run(super::run, input, Some(&cfg("x")));
    assert_eq!(
        err.as_deref(),
        Some("failed to evaluate function: panic with unhandled yaml node kind")
    );
    assert_eq!(
        messages(&results),
        vec!["panic with unhandled yaml node kind"]
    );
}
