//! Unit tests for apply-setters over literal YAML.

use crate::common::testing::{messages, run};

const CONFIG: &str = r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: setters
data:
  env: |-
    - prod
    - dev
  nginx-replicas: "3"
  tag: 1.16.2
"#;

#[test]
fn sets_scalars_and_lists() {
    let input = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: my-nginx
spec:
  replicas: 4 # kpt-set: ${nginx-replicas}
  template:
    spec:
      containers:
        - name: nginx
          image: "nginx:1.16.1" # kpt-set: nginx:${tag}
---
apiVersion: v1
kind: MyKind
metadata:
  name: foo
environments: # kpt-set: ${env}
  - dev
  - stage
"#;
    let (out, results, err) = apply(input, CONFIG);
    assert_eq!(err, None);
    assert_eq!(
        out,
        r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: my-nginx
spec:
  replicas: 3 # kpt-set: ${nginx-replicas}
  template:
    spec:
      containers:
      - name: nginx
        image: "nginx:1.16.2" # kpt-set: nginx:${tag}
---
apiVersion: v1
kind: MyKind
metadata:
  name: foo
environments: # kpt-set: ${env}
- prod
- dev
"#
    );
    assert_eq!(
        messages(&results),
        vec![
            r#"set field value to "3""#,
            r#"set field value to "nginx:1.16.2""#,
            "set field value to \"- prod\\n- dev\"",
        ]
    );
    assert_eq!(
        results[1].field.as_ref().map(|f| f.path.as_str()),
        Some("spec.template.spec.containers[0].image")
    );
    assert_eq!(
        results[2].field.as_ref().map(|f| f.path.as_str()),
        Some("environments")
    );
}

#[test]
fn derives_unprovided_setters_from_current_value() {
    let input = "apiVersion: v1\nkind: X\nmetadata:\n  name: a\nhost: my-app.dev.example.com # kpt-set: my-app.${stage}.${domain}.${tld}\n";
    let config = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\ndata:\n  stage: prod\n";
    let (out, _, err) = apply(input, config);
    assert_eq!(err, None);
    assert!(
        out.contains("host: my-app.prod.example.com # kpt-set: my-app.${stage}.${domain}.${tld}"),
        "{out}"
    );
}

#[test]
fn unresolved_setters_fail() {
    let input =
        "apiVersion: v1\nkind: X\nmetadata:\n  name: a\nimage: nginx # kpt-set: ${image}:${tag}\n";
    let config = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\ndata:\n  image: ubuntu\n";
    let (_, _, err) = apply(input, config);
    assert_eq!(
        err.as_deref(),
        Some("failed to apply setters: values for setters [${tag}] must be provided")
    );
}

#[test]
fn empty_values_and_no_matches() {
    let input = "apiVersion: v1\nkind: X\nmetadata:\n  name: a\nenv: # kpt-set: ${env}\n  - a\nname: x # kpt-set: ${name}\n";
    let config =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\ndata:\n  env: \"\"\n  name: \"\"\n";
    let (out, _, err) = apply(input, config);
    assert_eq!(err, None);
    assert!(out.contains("env: [] # kpt-set: ${env}\n"), "{out}");
    assert!(out.contains("name: \"\" # kpt-set: ${name}\n"), "{out}");

    let config = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\ndata:\n  other: x\n";
    let (_, results, err) = apply(input, config);
    assert_eq!(err, None);
    assert_eq!(messages(&results), vec!["no matches for input setter(s)"]);
}

#[test]
fn array_setter_errors() {
    let input =
        "apiVersion: v1\nkind: X\nmetadata:\n  name: a\nenv: # kpt-set: ${env}-${x}\n  - a\n";
    let config = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\ndata:\n  env: a\n";
    let (_, _, err) = apply(input, config);
    assert_eq!(
        err.as_deref(),
        Some(r#"failed to apply setters: invalid setter pattern for array node: "${env}-${x}""#)
    );
    let input = "apiVersion: v1\nkind: X\nmetadata:\n  name: a\nenv: # kpt-set: ${env}\n  - a\n";
    let (_, _, err) = apply(input, config);
    assert_eq!(
        err.as_deref(),
        Some(
            r#"failed to apply setters: input to array setter must be an array of values, but found "a""#
        )
    );
}

fn apply(
    input: &str,
    config: &str,
) -> (String, Vec<kpt::resource_list::ResultItem>, Option<String>) {
    run(super::run, input, Some(config))
}

#[test]
fn results_carry_values_and_redact_secrets() {
    let input = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n  namespace: ns\ndata:\n  user: bob # kpt-set: ${user}\n  password: x # kpt-set: ${password}\n";
    let config = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\ndata:\n  user: alice\n  password: hunter2\n";
    let (out, results, err) = apply(input, config);
    assert_eq!(err, None);
    assert!(
        out.contains("  password: hunter2 # kpt-set: ${password}\n"),
        "{out}"
    );
    assert_eq!(
        messages(&results),
        vec![
            r#"set field value to "alice""#,
            r#"set field value to "<redacted>""#
        ]
    );
    let field = results[0].field.clone().expect("field");
    assert_eq!(field.path, "data.user");
    assert_eq!(field.current_value.as_deref(), Some("bob"));
    assert_eq!(field.proposed_value.as_deref(), Some("alice"));
    let rr = results[0].resource_ref.clone().expect("resourceRef");
    assert_eq!(
        (rr.kind.as_str(), rr.name.as_str(), rr.namespace.as_str()),
        ("Secret", "s", "ns")
    );
    assert_eq!(
        results[1]
            .field
            .as_ref()
            .and_then(|f| f.current_value.as_deref()),
        Some("<redacted>")
    );
}

#[test]
fn releases_v0_1_and_v0_2_report_the_field_and_file_only() {
    let input = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  foo: bar # kpt-set: ${foo}\n";
    let config = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\ndata:\n  foo: baz\n";
    let (_, newest, _) = apply(input, config);
    assert!(newest[0].resource_ref.is_some());
    for image in [
        "ghcr.io/kptdev/krm-functions-catalog/apply-setters:v0.2",
        "apply-setters:v0.1.1",
    ] {
        let (out, results, err) = crate::image_tag::with(image, || apply(input, config));
        assert_eq!(err, None);
        assert!(out.contains("  foo: baz # kpt-set: ${foo}\n"), "{out}");
        assert_eq!(messages(&results), vec![r#"set field value to "baz""#]);
        assert!(results[0].resource_ref.is_none(), "{image}");
        let field = results[0].field.clone().expect("field");
        assert_eq!(field.path, "data.foo");
        assert_eq!((field.current_value, field.proposed_value), (None, None));
    }
}

/// The comment a flow list leaves behind belongs, after the function, to the
/// field yaml.v3 writes it on (kpt re-reads the Go function's output), so a
/// later function in the same pipeline finds it there.
#[test]
fn stale_flow_comment_moves_to_the_next_field() {
    let input = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nzones: [] # kpt-set: ${zones}\nowner: team-a\n";
    let config = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\ndata:\n  zones: '[eu]'\n";
    let mut list = kpt::resource_list::ResourceList::new(crate::common::testing::items(input));
    list.function_config = Some(crate::common::testing::node(config));
    super::run(&mut list).expect("runs");
    let item = &list.items[0];
    let owner = item.get("owner").expect("owner");
    assert_eq!(owner.line_comment, "# kpt-set: ${zones}");
    let zones = item.get("zones").expect("zones");
    assert_eq!(zones.line_comment, "");
}
