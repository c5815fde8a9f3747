//! remove-local-config-resources: drops `local-config: "true"` items (any
//! case), lists them, warns when there are none; empty items are dropped.

use super::call;

const F: &str = "remove-local-config-resources";

#[test]
fn removes_lists_and_warns() {
    let input = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: keep
  annotations:
    config.kubernetes.io/local-config: \"false\"
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: drop
  annotations:
    config.kubernetes.io/local-config: \"True\"
    internal.config.kubernetes.io/path: local.yaml
";
    let out = call(F, input, None);
    assert_eq!((out.exit_code, out.stderr.as_str()), (0, ""));
    assert_eq!(
        out.results,
        vec![
            "info|Number of resources pruned: 1||",
            "info|Resource name: [drop]|local.yaml|"
        ]
    );
    assert!(out.items.contains("name: keep") && !out.items.contains("name: drop"));

    for input in [
        "",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
    ] {
        let out = call(F, input, None);
        assert_eq!(out.exit_code, 0);
        assert_eq!(
            out.results,
            vec!["warning|Found no resources to prune with the local config annotation||"]
        );
    }
}

#[test]
fn empty_items_are_dropped_silently() {
    let out = call(
        F,
        "{}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
        None,
    );
    assert_eq!(out.exit_code, 0);
    assert_eq!(
        out.items,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"
    );
}
