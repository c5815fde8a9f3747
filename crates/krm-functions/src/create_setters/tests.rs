//! Unit tests for create-setters over literal YAML.

use kpt::resource_list::ResultItem;

use crate::common::testing::{messages, run};

fn create(input: &str, config: &str) -> (String, Vec<ResultItem>, Option<String>) {
    run(super::run, input, Some(config))
}

const CONFIG: &str = r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: setters
data:
  env: |-
    - stage
    - dev
  nginx-replicas: "4"
  tag: 1.16.1
"#;

#[test]
fn adds_scalar_and_array_comments() {
    let input = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: my-nginx
spec:
  replicas: 4
  template:
    spec:
      containers:
        - name: nginx
          image: "nginx:1.16.1"
---
apiVersion: v1
kind: MyKind
metadata:
  name: foo
environments:
  - dev
  - stage
"#;
    let (out, results, err) = create(input, CONFIG);
    assert_eq!(err, None);
    assert_eq!(
        out,
        r#"apiVersion: apps/v1
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
"#
    );
    assert_eq!(
        messages(&results),
        vec![
            r#"Added line comment "kpt-set: ${nginx-replicas}" for field with value "4""#,
            r#"Added line comment "kpt-set: nginx:${tag}" for field with value "nginx:1.16.1""#,
            r#"Added line comment "kpt-set: ${env}" for field with value "[dev stage]""#,
        ]
    );
    assert_eq!(
        results[1].field.as_ref().map(|f| f.path.as_str()),
        Some("spec.template.spec.containers[0].image")
    );
}

#[test]
fn longest_value_wins_and_bookkeeping_is_skipped() {
    let input = r#"apiVersion: v1
kind: X
metadata:
  name: a
  annotations:
    config.kubernetes.io/index: "nginx"
spec: nginx-abc-development
"#;
    let config = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\ndata:\n  image: nginx\n  ubuntu: nginx-abc\n";
    let (out, results, err) = create(input, config);
    assert_eq!(err, None);
    assert!(
        out.contains("spec: nginx-abc-development # kpt-set: ${ubuntu}-development\n"),
        "{out}"
    );
    assert!(
        out.contains("config.kubernetes.io/index: \"nginx\"\n"),
        "{out}"
    );
    assert_eq!(results.len(), 1);
}

#[test]
fn flow_lists() {
    let input = "apiVersion: v1\nkind: X\nmetadata:\n  name: a\nenv: [foo, bar]\n";
    let config =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\ndata:\n  env: '[bar, foo]'\n";
    let (out, _, err) = create(input, config);
    assert_eq!(err, None);
    assert!(
        out.contains("env: # kpt-set: ${env}\n- foo\n- bar\n"),
        "{out}"
    );
}

#[test]
fn errors() {
    let input = "apiVersion: v1\nkind: X\nmetadata:\n  name: a\n";
    let (_, _, err) = create(
        input,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\n",
    );
    assert_eq!(
        err.as_deref(),
        Some("failed to create setters: config map cannot be empty")
    );
    let config = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\ndata:\n  a: zzz\n";
    let (_, _, err) = create(input, config);
    assert_eq!(
        err.as_deref(),
        Some("failed to create setters: no matches for the input list of setters")
    );
}

/// A commented flow list that becomes a block list keeps its comment on the
/// list (as in Go); yaml.v3 writes it after the next field, which is where
/// kpt, reading the output back, finds it: the item is re-read the same way.
#[test]
fn stale_flow_comment_moves_to_the_next_field() {
    let input =
        "apiVersion: v1\nkind: X\nmetadata:\n  name: a\nzones: [eu, us] # regions\nowner: team\n";
    let config =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\ndata:\n  zones: '[us, eu]'\n";
    let mut list = kpt::resource_list::ResourceList::new(crate::common::testing::items(input));
    list.function_config = Some(crate::common::testing::node(config));
    super::run(&mut list).expect("runs");
    let item = &list.items[0];
    assert_eq!(
        item.get("owner").map(|n| n.line_comment.as_str()),
        Some("# regions")
    );
    assert_eq!(item.get("zones").map(|n| n.line_comment.as_str()), Some(""));
}
