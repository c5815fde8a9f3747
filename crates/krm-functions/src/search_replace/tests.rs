//! Unit tests for search-replace over literal YAML.

use kpt::resource_list::ResultItem;

use crate::common::testing::{messages, run};

fn sr(input: &str, data: &str) -> (String, Vec<ResultItem>, Option<String>) {
    let config = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: function-input\ndata:\n{data}"
    );
    run(super::run, input, Some(&config))
}

const DEPLOY: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: the-deployment
  namespace: my-space
  annotations:
    internal.config.kubernetes.io/path: resources.yaml
spec:
  replicas: 3
"#;

#[test]
fn by_path_and_value_put_value() {
    let (out, results, err) = sr(
        DEPLOY,
        "  by-path: metadata.name\n  by-value: the-deployment\n  put-value: my-deployment\n",
    );
    assert_eq!(err, None);
    assert!(out.contains("  name: my-deployment\n"), "{out}");
    assert_eq!(
        messages(&results),
        vec![r#"Mutated field value to "my-deployment""#]
    );
    assert_eq!(
        results[0].field.as_ref().map(|f| f.path.as_str()),
        Some("metadata.name")
    );
    assert_eq!(
        results[0].file.as_ref().map(|f| f.path.as_str()),
        Some("resources.yaml")
    );
}

#[test]
fn match_only_reports() {
    let (out, results, err) = sr(DEPLOY, "  by-value: my-space\n");
    assert_eq!(err, None);
    assert_eq!(out, DEPLOY);
    assert_eq!(
        messages(&results),
        vec![r#"Matched field value "my-space""#]
    );
    let (_, results, _) = sr(DEPLOY, "  by-value: nothing\n");
    assert_eq!(messages(&results), vec!["no matches"]);
}

#[test]
fn regex_capture_groups_in_comments() {
    let input = r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: nginx-urls
  annotations:
    internal.config.kubernetes.io/path: resources.yaml
data:
  FQDN: nginx.com
  MY_BAR_URL: https://nginx.com/bar
"#;
    let (out, results, err) = sr(
        input,
        "  by-path: data.**\n  by-value-regex: (.*)nginx.com(.*)\n  put-comment: 'kpt-set: ${1}${host}${2}'\n",
    );
    assert_eq!(err, None);
    assert!(
        out.contains("  FQDN: nginx.com # kpt-set: ${host}\n"),
        "{out}"
    );
    assert!(
        out.contains("  MY_BAR_URL: https://nginx.com/bar # kpt-set: https://${host}/bar\n"),
        "{out}"
    );
    assert_eq!(
        messages(&results)[0],
        r#"Mutated field value to "nginx.com # kpt-set: ${host}""#
    );
}

#[test]
fn put_value_creates_plain_path() {
    let (out, results, err) = sr(DEPLOY, "  by-path: spec.template.x\n  put-value: \"5\"\n");
    assert_eq!(err, None);
    assert!(out.contains("  template:\n    x: 5\n"), "{out}");
    assert_eq!(results.len(), 1);
}

#[test]
fn put_comment_on_lists() {
    let input = "apiVersion: v1\nkind: X\nmetadata:\n  name: a\n  annotations:\n    internal.config.kubernetes.io/path: x.yaml\nenv: [dev, stage]\n";
    let (out, results, err) = sr(input, "  by-path: env\n  put-comment: 'kpt-set: ${env}'\n");
    assert_eq!(err, None);
    assert!(
        out.contains("env: # kpt-set: ${env}\n- dev\n- stage\n"),
        "{out}"
    );
    assert_eq!(
        messages(&results),
        vec![r#"Mutated field value to "[dev, stage]""#]
    );
    assert_eq!(
        results[0].field.as_ref().map(|f| f.path.as_str()),
        Some("env # kpt-set: ${env}")
    );
}

#[test]
fn errors() {
    // The error result carries the quoted error; stderr has it twice (the
    // framework's print, then main's line).
    let cases = [
        (
            "  by-value: a\n  by-value-regex: b\n",
            r#"only one of ["by-value", "by-value-regex"] can be provided"#,
        ),
        (
            "  by-nothing: a\n",
            r#"invalid matcher "by-nothing", must be one of ["by-value" "by-file-path" "by-value-regex" "by-path" "put-value" "put-comment"]"#,
        ),
        (
            "  by-value-regex: my-(.*)\n  put-value: ${2}\n",
            "unable to resolve capture groups",
        ),
    ];
    for (config, e) in cases {
        let (_, results, err) = sr(DEPLOY, config);
        assert_eq!(err, Some(format!("{e}{e}\n")), "{config}");
        assert_eq!(
            messages(&results),
            vec![format!(
                "failed to perform search-replace operation: {}",
                crate::apply_setters::walk::go_quote(e)
            )]
        );
        assert!(results[0].is_error());
    }
}

#[test]
fn by_file_path_filters() {
    let (_, results, _) = sr(
        DEPLOY,
        "  by-value: my-space\n  by-file-path: other/*.yaml\n",
    );
    assert_eq!(messages(&results), vec!["no matches"]);
    let (_, results, _) = sr(
        DEPLOY,
        "  by-value: my-space\n  by-file-path: '**/*.yaml'\n",
    );
    assert_eq!(
        messages(&results),
        vec![r#"Matched field value "my-space""#]
    );
}
