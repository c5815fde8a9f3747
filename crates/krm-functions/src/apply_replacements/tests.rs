//! Unit tests for apply-replacements over literal YAML.

use kpt::resource_list::ResultItem;

use crate::common::testing::run;

fn replace(input: &str, replacements: &str) -> (String, Vec<ResultItem>, Option<String>) {
    let config = format!(
        "apiVersion: fn.kpt.dev/v1alpha1\nkind: ApplyReplacements\nmetadata:\n  name: r\nreplacements:\n{replacements}"
    );
    run(super::run, input, Some(&config))
}

const RESOURCES: &str = r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: kptfile.kpt.dev
data:
  name: frontend
  port: "8080"
  image: nginx:1.2.3
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    app: web
spec:
  replicas: 3
  template:
    spec:
      containers:
        - name: nginx
          image: nginx:1.0.0 # the image
          env:
            - name: PORT
              value: 80
        - name: sidecar
          image: envoy:1.0
"#;

#[test]
fn copies_scalars_keeping_target_style() {
    let (out, results, err) = replace(
        RESOURCES,
        r#"- source:
    kind: ConfigMap
    name: kptfile.kpt.dev
    fieldPath: data.name
  targets:
  - select:
      kind: Deployment
    fieldPaths:
    - metadata.labels.app
    - metadata.name
"#,
    );
    assert_eq!(err, None);
    assert!(results.is_empty());
    assert!(
        out.contains("  name: frontend\n  labels:\n    app: frontend\n"),
        "{out}"
    );
}

#[test]
fn string_sources_stay_strings_and_wildcards_match_lists() {
    let (out, _, err) = replace(
        RESOURCES,
        r#"- source:
    kind: ConfigMap
    fieldPath: data.port
  targets:
  - select:
      kind: Deployment
    fieldPaths:
    - spec.template.spec.containers.[name=nginx].env.[name=PORT].value
- source:
    kind: ConfigMap
    fieldPath: data.image
    options:
      delimiter: ':'
      index: 1
  targets:
  - select:
      kind: Deployment
    fieldPaths:
    - spec.template.spec.containers.*.image
    options:
      delimiter: ':'
      index: 1
"#,
    );
    assert_eq!(err, None);
    assert!(out.contains("          value: \"8080\"\n"), "{out}");
    assert!(out.contains("image: nginx:1.2.3 # the image\n"), "{out}");
    assert!(out.contains("image: envoy:1.2.3\n"), "{out}");
}

#[test]
fn creates_missing_fields_from_a_mapping_source() {
    let input = r#"apiVersion: batch/v1
kind: Job
metadata:
  name: hello
---
apiVersion: v1
kind: Pod
metadata:
  name: my-pod
spec:
  containers:
    - image: busybox
      name: myapp-container
  restartPolicy: OnFailure
"#;
    let (out, _, err) = replace(
        input,
        r#"- source:
    kind: Pod
    name: my-pod
    fieldPath: spec
  targets:
  - select:
      name: hello
      kind: Job
    fieldPaths:
    - spec.template.spec
    options:
      create: true
"#,
    );
    assert_eq!(err, None);
    assert!(
        out.starts_with(
            "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: hello\nspec:\n  template:\n    spec:\n      containers:\n      - image: busybox\n        name: myapp-container\n      restartPolicy: OnFailure\n"
        ),
        "{out}"
    );
}

#[test]
fn reject_and_label_selectors() {
    let (out, _, err) = replace(
        RESOURCES,
        r#"- sourceValue: changed
  targets:
  - select:
      labelSelector: app=web
    fieldPaths:
    - metadata.name
  - select:
      kind: ConfigMap
    reject:
    - name: kptfile.kpt.dev
    fieldPaths:
    - data.name
"#,
    );
    assert_eq!(err, None);
    assert!(out.contains("  name: changed\n  labels:"), "{out}");
    assert!(out.contains("  name: frontend\n"), "{out}");
}

#[test]
fn error_messages() {
    let one = |r: &str| replace(RESOURCES, r).2;
    assert_eq!(
        one("- source:\n    kind: Nope\n  targets:\n  - select:\n      kind: X\n").as_deref(),
        Some("nothing selected by Nope.[noVer].[noGrp]/[noName].[noNs]")
    );
    assert_eq!(
        one("- source:\n    name: web\n    fieldPath: spec.nope\n  targets:\n  - select:\n      kind: X\n")
            .as_deref(),
        Some("fieldPath `spec.nope` is missing for replacement source [noKind].[noVer].[noGrp]/web.[noNs]")
    );
    assert_eq!(
        one("- source:\n    version: v1\n  targets:\n  - select:\n      kind: X\n").as_deref(),
        Some("multiple matches for selector [noKind].v1.[noGrp]/[noName].[noNs]")
    );
    assert_eq!(
        one("- source:\n    kind: ConfigMap\n  targets:\n  - select:\n      kind: Deployment\n    fieldPaths:\n    - spec.nope\n")
            .as_deref(),
        Some("unable to find field \"spec.nope\" in replacement target")
    );
    assert_eq!(
        one("- source:\n    kind: ConfigMap\n").as_deref(),
        Some("replacements must specify a source and at least one target")
    );
    let (_, _, err) = run(
        super::run,
        RESOURCES,
        Some("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"),
    );
    assert_eq!(
        err.as_deref(),
        Some(
            "received functionConfig of kind ConfigMap and apiVersion v1, only functionConfig of kind ApplyReplacements and apiVersion fn.kpt.dev/v1alpha1 is supported"
        )
    );
    let (_, _, err) = run(super::run, RESOURCES, None);
    assert_eq!(
        err.as_deref(),
        Some("FunctionConfig is missing. Expect `ApplyReplacements`")
    );
}
