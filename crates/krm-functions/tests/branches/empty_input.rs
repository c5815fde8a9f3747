//! An empty input (no items: empty files, files with no resources) with a
//! valid configuration, function by function.

use super::harness::{call, config_map};

#[test]
fn each_function_on_nothing() {
    let cases: [(&str, String, Vec<&str>, i32); 6] = [
        (
            "set-labels",
            config_map(&[("a", "b")]),
            vec!["info|no input resources"],
            0,
        ),
        (
            "set-image",
            config_map(&[("name", "nginx"), ("newTag", "2")]),
            vec!["info|summary: updated a total of 0 image(s)"],
            0,
        ),
        (
            "set-namespace",
            config_map(&[("namespace", "ns")]),
            vec![
                "info|all matching namespaces are already \"ns\". no value changed",
                "info|all `depends-on` annotations are up-to-date. no `namespace` changed",
            ],
            0,
        ),
        (
            "set-annotations",
            config_map(&[("a", "b")]),
            vec!["-|no annotations applied"],
            0,
        ),
        (
            "apply-setters",
            config_map(&[("a", "b")]),
            vec!["-|no matches for input setter(s)"],
            0,
        ),
        (
            "create-setters",
            config_map(&[("a", "b")]),
            vec!["error|failed to create setters: no matches for the input list of setters"],
            1,
        ),
    ];
    for (function, config, results, exit_code) in cases {
        let o = call(function, "", Some(&config));
        assert_eq!(o.results(), results, "{function}");
        assert_eq!(o.exit_code, exit_code, "{function}");
        assert!(o.items.is_empty(), "{function} made items from nothing");
    }
}
