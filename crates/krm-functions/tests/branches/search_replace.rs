//! search-replace: matchers from the ConfigMap data; one result per matched
//! field or "no matches"; a failure is one error result with the quoted
//! error and the error printed twice on stderr (framework, then main).

use super::{call, config_map};

const F: &str = "search-replace";

const DEPLOY: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  namespace: my-space
  annotations:
    internal.config.kubernetes.io/path: deploy.yaml
spec:
  replicas: 3
";

#[test]
fn matches_and_mutations_are_listed() {
    let out = call(F, DEPLOY, Some(&config_map("  by-value: my-space\n")));
    assert_eq!((out.exit_code, out.stderr.as_str()), (0, ""));
    assert_eq!(
        out.results,
        vec![r#"|Matched field value "my-space"|deploy.yaml|metadata.namespace"#]
    );
    let out = call(
        F,
        DEPLOY,
        Some(&config_map(
            "  by-path: spec.replicas\n  put-value: \"5\"\n",
        )),
    );
    assert_eq!(
        out.results,
        vec![r#"|Mutated field value to "5"|deploy.yaml|spec.replicas"#]
    );
    assert!(out.items.contains("  replicas: 5\n"));
}

#[test]
fn nothing_matched_or_nothing_asked() {
    for (input, config) in [
        (DEPLOY, None),
        (DEPLOY, Some(config_map("  by-value: nowhere\n"))),
        ("", Some(config_map("  by-value: my-space\n"))),
        // A nested value reads as empty: no matcher at all.
        (DEPLOY, Some(config_map("  by-value: {a: b}\n"))),
    ] {
        let out = call(F, input, config.as_deref());
        assert_eq!(out.exit_code, 0);
        assert_eq!(out.results, vec!["|no matches||"]);
    }
}

#[test]
fn failures() {
    let cases = [
        (
            "  by-value: a\n  by-value-regex: b\n",
            r#"only one of ["by-value", "by-value-regex"] can be provided"#,
            r#"only one of [\"by-value\", \"by-value-regex\"] can be provided"#,
        ),
        (
            "  by-name: a\n",
            r#"invalid matcher "by-name", must be one of ["by-value" "by-file-path" "by-value-regex" "by-path" "put-value" "put-comment"]"#,
            r#"invalid matcher \"by-name\", must be one of [\"by-value\" \"by-file-path\" \"by-value-regex\" \"by-path\" \"put-value\" \"put-comment\"]"#,
        ),
        // Unknown keys are rejected even when their value is nested.
        (
            "  nope: {a: b}\n",
            r#"invalid matcher "nope", must be one of ["by-value" "by-file-path" "by-value-regex" "by-path" "put-value" "put-comment"]"#,
            r#"invalid matcher \"nope\", must be one of [\"by-value\" \"by-file-path\" \"by-value-regex\" \"by-path\" \"put-value\" \"put-comment\"]"#,
        ),
        (
            "  by-value-regex: my-(.*)\n  put-value: ${2}\n",
            "unable to resolve capture groups",
            "unable to resolve capture groups",
        ),
        (
            "  by-value: my-space\n  by-file-path: '[a'\n",
            "syntax error in pattern",
            "syntax error in pattern",
        ),
    ];
    for (data, error, quoted) in cases {
        let out = call(F, DEPLOY, Some(&config_map(data)));
        assert_eq!(out.exit_code, 1, "{data}");
        assert_eq!(out.stderr, format!("{error}{error}"));
        assert_eq!(
            out.results,
            vec![format!(
                "error|failed to perform search-replace operation: \"{quoted}\"||"
            )]
        );
    }
}

/// Cases of the catalog's `searchreplacecases_test.go`: (data, input, expected
/// `field path=value` per result, expected text in the output).
#[test]
fn catalog_cases() {
    let dep = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: nginx-deployment\n  annotations:\n    internal.config.kubernetes.io/path: d.yaml\nspec:\n  replicas: 3\n";
    let cases: Vec<(&str, String, Vec<&str>, &str)> = vec![
        (
            "  by-value: '3'\n  put-value: four\n",
            dep.to_string(),
            vec!["spec.replicas=four"],
            "replicas: four\n",
        ),
        (
            "  by-path: spec.foo[1]\n  put-value: c\n",
            format!("{dep}  foo:\n  - a\n  - b\n"),
            vec!["spec.foo[1]=c"],
            "  - c\n",
        ),
        (
            "  by-path: spec.foo[2]\n  put-value: c\n",
            format!("{dep}  foo:\n  - a\n  - b\n"),
            vec![],
            "  - b\n",
        ),
        (
            "  by-path: spec.foo[*]\n",
            format!("{dep}  foo:\n  - a\n  - b\n"),
            vec!["spec.foo[0]=a", "spec.foo[1]=b"],
            "",
        ),
        (
            "  by-path: spec.foo[1].c\n  put-value: thing-new\n",
            format!("{dep}  foo:\n  - c: thing0\n  - c: thing1\n"),
            vec!["spec.foo[1].c=thing-new"],
            "  - c: thing-new\n",
        ),
        (
            "  by-path: metadata.namespace\n  put-value: myspace\n",
            dep.to_string(),
            vec!["metadata.namespace=myspace"],
            "  namespace: myspace\n",
        ),
        (
            "  by-value-regex: (\\w+)-dep(\\w+)\n  put-value: ${1}-prod-${2}\n",
            dep.to_string(),
            vec!["metadata.name=nginx-prod-loyment"],
            "name: nginx-prod-loyment\n",
        ),
        (
            "  by-value-regex: nginx-(.*)\n  put-value: ubuntu\n",
            format!("{dep}  x: {{? {{replicas: ''}} : ''}}\n  foo:\n"),
            vec!["metadata.name=ubuntu"],
            "  foo:\n",
        ),
        (
            "  put-value: foo\n",
            dep.to_string(),
            vec![],
            "replicas: 3\n",
        ),
    ];
    for (data, input, want, contains) in cases {
        let out = call(F, &input, Some(&config_map(data)));
        assert_eq!(out.exit_code, 0, "{data}: {:?}", out.results);
        let got: Vec<String> = out
            .results
            .iter()
            .filter(|r| r.as_str() != "|no matches||")
            .map(|r| {
                let parts: Vec<&str> = r.split('|').collect();
                let value = parts[1]
                    .rsplit_once(' ')
                    .map(|(_, v)| v.trim_matches('"'))
                    .unwrap_or("");
                format!("{}={value}", parts[3])
            })
            .collect();
        assert_eq!(got, want, "{data}");
        assert!(out.items.contains(contains), "{data}: {}", out.items);
    }
    let out = call(
        F,
        dep,
        Some("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata: ~\n"),
    );
    assert_eq!(out.results, vec!["|no matches||"]);
}

/// Cases of the catalog's `putcommentcases_test.go`: the result value of a
/// commented scalar carries the comment; a matched list gets the comment on
/// its key and turns block style.
#[test]
fn put_comment_cases() {
    let dep = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: my-project-deployment\n  annotations:\n    internal.config.kubernetes.io/path: d.yaml\nspec:\n  replicas: 3\n  images: [nginx, ubuntu]\n  other: [foo, bar]\n";
    let out = call(
        F,
        dep,
        Some(&config_map(
            "  by-value: '3'\n  put-comment: 'kpt-set: ${replicas}'\n",
        )),
    );
    assert_eq!(
        out.results,
        vec![r#"|Mutated field value to "3 # kpt-set: ${replicas}"|d.yaml|spec.replicas"#]
    );
    assert!(out.items.contains("  replicas: 3 # kpt-set: ${replicas}\n"));

    let out = call(
        F,
        dep,
        Some(&config_map(
            "  by-path: spec.images\n  put-comment: 'kpt-set: ${image}'\n",
        )),
    );
    assert_eq!(
        out.results,
        vec![r#"|Mutated field value to "[nginx, ubuntu]"|d.yaml|spec.images # kpt-set: ${image}"#]
    );
    assert!(
        out.items.contains(
            "  images: # kpt-set: ${image}\n  - nginx\n  - ubuntu\n  other: [foo, bar]\n"
        ),
        "{}",
        out.items
    );

    let out = call(
        F,
        dep,
        Some(&config_map(
            "  by-value-regex: 'my-project-(.*)'\n  put-comment: 'kpt-set: ${project}-${1}'\n",
        )),
    );
    assert!(
        out.items
            .contains("name: my-project-deployment # kpt-set: ${project}-deployment\n")
    );

    let out = call(
        F,
        dep,
        Some(&config_map(
            "  by-value-regex: 'my-(\\w+)-(\\w+)'\n  put-comment: 'kpt-set: ${3}'\n",
        )),
    );
    assert_eq!(out.exit_code, 1);
    assert_eq!(
        out.results,
        vec![
            r#"error|failed to perform search-replace operation: "unable to resolve capture groups"||"#
        ]
    );
}

#[test]
fn regex_syntax_errors_read_like_go() {
    let out = call(F, DEPLOY, Some(&config_map("  by-value-regex: 'my-(.*'\n")));
    assert_eq!(out.exit_code, 1);
    assert_eq!(
        out.results,
        vec![
            "error|failed to perform search-replace operation: \"error parsing regexp: missing closing ): `my-(.*`\"||"
        ]
    );
}

#[test]
fn file_path_globs_match_like_doublestar() {
    let by = |glob: &str| config_map(&format!("  by-value: my-space\n  by-file-path: '{glob}'\n"));
    for (glob, matches) in [
        ("deploy.yaml", true),
        ("**/deploy.yaml", true),
        ("de**.yaml", true),
        ("*/deploy.yaml", false),
        ("{a,deploy}.yaml", true),
    ] {
        let out = call(F, DEPLOY, Some(&by(glob)));
        assert_eq!(out.exit_code, 0, "{glob}");
        assert_eq!(
            out.results[0].contains("Matched"),
            matches,
            "{glob}: {:?}",
            out.results
        );
    }
    // A bad pattern fails only once there is an item to match.
    let out = call(F, "", Some(&by("[a")));
    assert_eq!(
        (out.exit_code, out.results.clone()),
        (0, vec!["|no matches||".to_string()])
    );
}
