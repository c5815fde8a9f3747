//! set-image: the 2022 SDK's config step and `ResultErrAndDie` endings.

use super::harness::{call, config_map};

const POD: &str = "\
apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
  - name: server
    image: nginx:1.20.2
  - name: store
    image: nginx:1.14.1
";

/// The two error results and the stderr of a terminated run.
fn assert_terminated(function_results: Vec<String>, message: &str, stderr: &str) {
    assert_eq!(
        function_results,
        vec![
            format!("error|{message}"),
            format!("error|function is terminated: {message}"),
        ]
    );
    assert_eq!(
        stderr,
        format!("failed to evaluate function: function is terminated: {message}")
    );
}

#[test]
fn missing_name() {
    let o = call(
        "set-image",
        POD,
        Some(&config_map(&[("newName", "bar"), ("newTag", "v1.0")])),
    );
    assert_terminated(o.results(), "must specify `name`", &o.stderr);
    assert_eq!(o.exit_code, 1);
    assert_eq!(o.items, POD);
}

#[test]
fn missing_new_values() {
    let o = call("set-image", POD, Some(&config_map(&[("name", "nginx")])));
    assert_terminated(
        o.results(),
        "must specify one of `newName`, `newTag`, or `digest`",
        &o.stderr,
    );
    assert_eq!(o.exit_code, 1);
}

#[test]
fn unknown_data_key() {
    let o = call(
        "set-image",
        POD,
        Some(&config_map(&[("name", "nginx"), ("tag", "x")])),
    );
    assert_terminated(o.results(), "ConfigMap has wrong field name tag", &o.stderr);
}

#[test]
fn no_config_says_so_then_terminates() {
    for cfg in [None, Some("{}")] {
        let o = call("set-image", POD, cfg);
        assert_eq!(
            o.results(),
            vec![
                "info|`FunctionConfig` is not given",
                "error|must specify `name`",
                "error|function is terminated: must specify `name`",
            ]
        );
        assert_eq!(o.exit_code, 1);
    }
}

#[test]
fn unknown_kind_terminates_about_the_config() {
    let cfg = "apiVersion: fn.kpt.dev/v1alpha1\nkind: SetImages\nmetadata:\n  name: cfg\nimage:\n  name: nginx\n  newTag: '2'\n";
    let o = call("set-image", POD, Some(cfg));
    let by = "Resource(apiVersion=fn.kpt.dev/v1alpha1, kind=SetImages, namespace=, name=cfg)";
    assert_eq!(
        o.results(),
        vec![
            "error|unknown FunctionConfig `SetImages`, expect SetImage".to_string(),
            format!(
                "error|function is terminated by {by}: unknown FunctionConfig `SetImages`, expect SetImage"
            ),
        ]
    );
    let r = o.results[0]
        .resource_ref
        .as_ref()
        .expect("about the config");
    assert_eq!((r.kind.as_str(), r.name.as_str()), ("SetImages", "cfg"));
    assert_eq!(o.exit_code, 1);
    assert!(
        o.stderr
            .starts_with("failed to evaluate function: function is terminated by ")
    );
    assert_eq!(o.items, POD);
}

#[test]
fn same_name_updates_every_match() {
    let o = call(
        "set-image",
        POD,
        Some(&config_map(&[("name", "nginx"), ("newTag", "1.20.2")])),
    );
    assert_eq!(
        o.results(),
        vec!["info|summary: updated a total of 1 image(s)"]
    );
    assert_eq!(o.exit_code, 0);
    assert!(
        o.items
            .contains("    image: nginx:1.20.2\n  - name: store\n    image: nginx:1.20.2\n")
    );
}

#[test]
fn data_overrides_the_typed_image_key_by_key() {
    // `data:` of a SetImage fills the same map a ConfigMap's does, and each key
    // it holds replaces the typed image's field, even with an empty value.
    let cfg = "apiVersion: fn.kpt.dev/v1alpha1\nkind: SetImage\nmetadata:\n  name: c\nimage:\n  name: nginx\n  newTag: '9'\ndata:\n  newTag: '3'\n";
    let o = call("set-image", POD, Some(cfg));
    assert_eq!(
        o.results(),
        vec!["info|summary: updated a total of 2 image(s)"]
    );
    assert!(o.items.contains("image: nginx:3\n"));
    let cfg = "apiVersion: fn.kpt.dev/v1alpha1\nkind: SetImage\nmetadata:\n  name: c\nimage:\n  name: nginx\n  newTag: '9'\ndata:\n  name: ''\n";
    let o = call("set-image", POD, Some(cfg));
    assert_eq!(o.results()[0], "error|must specify `name`");
}
