use super::super::testing::{files_of, pv_from_yaml, text_of};
use super::*;

const PV_BASE: &str = "\
apiVersion: config.porch.kpt.dev/v1alpha1
kind: PackageVariant
metadata:
  name: my-pv
  namespace: default
  uid: pv-uid
spec:
  upstream:
    repo: blueprints
    package: foo
    revision: 1
  downstream:
    repo: deployments
    package: bar
  pipeline:
";

const KPTFILE: &str = "\
apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: prr
  annotations:
    config.kubernetes.io/local-config: \"true\"
info:
  description: Example
";

const PRR: Prr<'static> = Prr {
    namespace: "default",
    name: "prr",
};

const SET_LABELS_AND_ANNOTATIONS: &str = "  mutators:
    - image: ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.1
      name: set-labels
      configMap:
        app: foo
    - image: ghcr.io/kptdev/krm-functions-catalog/set-annotations:v0.1
      name: set-annotations
";

const SET_NAMESPACE: &str = "    mutators:
      - image: ghcr.io/kptdev/krm-functions-catalog/set-namespace:v0.1alog/set-namespace:v0.1
        name: set-namespace
        configMap:
          namespace: my-ns
";

const GATEKEEPER: &str = "  validators:
    - image: ghcr.io/kptdev/krm-functions-catalog/gatekeeper-validate:v0.1atekeeper-validate:v0.1
      name: gatekeeper-validate
";

const VALIDATE_NAME: &str = "    validators:
      - image: ghcr.io/kptdev/krm-functions-catalog/validate-name:undefined
        name: validate-name
";

/// The Kptfile after `ensure_krm_functions` with `initial` as its pipeline body, and after
/// a second pass (which must change nothing).
fn run(initial: &str, pv_pipeline: &str) -> Result<String, MutationError> {
    let kptfile = if initial.is_empty() {
        KPTFILE.to_string()
    } else {
        format!("{KPTFILE}pipeline:\n{initial}")
    };
    let pv = pv_from_yaml(&format!("{PV_BASE}{pv_pipeline}"));
    let mut files = files_of(&[("Kptfile", &kptfile)]);
    ensure_krm_functions(&pv, &PRR, &mut files)?;
    let once = text_of(&files, "Kptfile");
    ensure_krm_functions(&pv, &PRR, &mut files)?;
    assert_eq!(
        text_of(&files, "Kptfile"),
        once,
        "second pass changed the Kptfile"
    );
    Ok(once)
}

/// Upstream `TestEnsureKRMFunctions`, every table case (upstream re-indents the whole
/// Kptfile; here the document keeps its own sequence indentation).
#[test]
fn ensure_krm_functions_table() {
    let cases: Vec<(&str, String, String, String)> = vec![
        (
            "add one mutator with existing mutators",
            SET_LABELS_AND_ANNOTATIONS.into(),
            SET_NAMESPACE.into(),
            "\
pipeline:
  mutators:
    - name: PackageVariant.my-pv.set-namespace.0
      image: ghcr.io/kptdev/krm-functions-catalog/set-namespace:v0.1alog/set-namespace:v0.1
      configMap:
        namespace: my-ns
    - image: ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.1
      name: set-labels
      configMap:
        app: foo
    - image: ghcr.io/kptdev/krm-functions-catalog/set-annotations:v0.1
      name: set-annotations
"
            .into(),
        ),
        (
            "add two mutators with existing",
            SET_LABELS_AND_ANNOTATIONS.into(),
            format!(
                "{SET_NAMESPACE}      - image: ghcr.io/kptdev/krm-functions-catalog/format:latest\n        name: format\n"
            ),
            "\
pipeline:
  mutators:
    - name: PackageVariant.my-pv.set-namespace.0
      image: ghcr.io/kptdev/krm-functions-catalog/set-namespace:v0.1alog/set-namespace:v0.1
      configMap:
        namespace: my-ns
    - name: PackageVariant.my-pv.format.1
      image: ghcr.io/kptdev/krm-functions-catalog/format:latest
    - image: ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.1
      name: set-labels
      configMap:
        app: foo
    - image: ghcr.io/kptdev/krm-functions-catalog/set-annotations:v0.1
      name: set-annotations
"
            .into(),
        ),
        (
            "add one mutator with none existing",
            String::new(),
            SET_NAMESPACE.into(),
            "\
pipeline:
  mutators:
  - name: PackageVariant.my-pv.set-namespace.0
    image: ghcr.io/kptdev/krm-functions-catalog/set-namespace:v0.1alog/set-namespace:v0.1
    configMap:
      namespace: my-ns
"
            .into(),
        ),
        (
            "add none with existing mutators",
            SET_LABELS_AND_ANNOTATIONS.into(),
            String::new(),
            format!("pipeline:\n{SET_LABELS_AND_ANNOTATIONS}"),
        ),
        (
            "add one mutator with existing with comments",
            "  mutators:
    - image: ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.1
      # this is a comment
      name: set-labels
      configMap:
        app: foo
    - image: ghcr.io/kptdev/krm-functions-catalog/set-annotations:v0.1
      name: set-annotations
"
            .into(),
            SET_NAMESPACE.into(),
            "\
pipeline:
  mutators:
    - name: PackageVariant.my-pv.set-namespace.0
      image: ghcr.io/kptdev/krm-functions-catalog/set-namespace:v0.1alog/set-namespace:v0.1
      configMap:
        namespace: my-ns
    - image: ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.1
      # this is a comment
      name: set-labels
      configMap:
        app: foo
    - image: ghcr.io/kptdev/krm-functions-catalog/set-annotations:v0.1
      name: set-annotations
"
            .into(),
        ),
        (
            "add one validator with existing validators",
            GATEKEEPER.into(),
            VALIDATE_NAME.into(),
            "\
pipeline:
  validators:
    - name: PackageVariant.my-pv.validate-name.0
      image: ghcr.io/kptdev/krm-functions-catalog/validate-name:undefined
    - image: ghcr.io/kptdev/krm-functions-catalog/gatekeeper-validate:v0.1atekeeper-validate:v0.1
      name: gatekeeper-validate
"
            .into(),
        ),
        (
            "add none with existing validator",
            GATEKEEPER.into(),
            String::new(),
            format!("pipeline:\n{GATEKEEPER}"),
        ),
        (
            "add validator and mutator with existing",
            "  validators:
    - image: ghcr.io/kptdev/krm-functions-catalog/val1
      name: val1
    - image: ghcr.io/kptdev/krm-functions-catalog/val2
      name: val2
  mutators:
    - image: ghcr.io/kptdev/krm-functions-catalog/mut1
      name: mut1
    - image: ghcr.io/kptdev/krm-functions-catalog/mut2
      name: mut2
"
            .into(),
            "    validators:
    - image: ghcr.io/kptdev/krm-functions-catalog/val3
      name: val3
    - image: ghcr.io/kptdev/krm-functions-catalog/val4
      name: val4
    mutators:
    - image: ghcr.io/kptdev/krm-functions-catalog/mut3
      name: mut3
    - image: ghcr.io/kptdev/krm-functions-catalog/mut4
      name: mut4
"
            .into(),
            "\
pipeline:
  validators:
    - name: PackageVariant.my-pv.val3.0
      image: ghcr.io/kptdev/krm-functions-catalog/val3
    - name: PackageVariant.my-pv.val4.1
      image: ghcr.io/kptdev/krm-functions-catalog/val4
    - image: ghcr.io/kptdev/krm-functions-catalog/val1
      name: val1
    - image: ghcr.io/kptdev/krm-functions-catalog/val2
      name: val2
  mutators:
    - name: PackageVariant.my-pv.mut3.0
      image: ghcr.io/kptdev/krm-functions-catalog/mut3
    - name: PackageVariant.my-pv.mut4.1
      image: ghcr.io/kptdev/krm-functions-catalog/mut4
    - image: ghcr.io/kptdev/krm-functions-catalog/mut1
      name: mut1
    - image: ghcr.io/kptdev/krm-functions-catalog/mut2
      name: mut2
"
            .into(),
        ),
        (
            "remove pv mutator",
            "  mutators:
  - image: ghcr.io/kptdev/krm-functions-catalog/mut:v1
    name: PackageVariant.my-pv.mut.0
"
            .into(),
            String::new(),
            String::new(),
        ),
        (
            "remove pv validator",
            "  validators:
  - image: ghcr.io/kptdev/krm-functions-catalog/val:v1
    name: PackageVariant.my-pv.val.0
"
            .into(),
            String::new(),
            String::new(),
        ),
        (
            "remove pv validator, keep prr one",
            "  validators:
  - image: ghcr.io/kptdev/krm-functions-catalog/val:v1
    name: PackageVariant.my-pv.val.0
  - image: ghcr.io/kptdev/krm-functions-catalog/val:v1
    name: non-pv-val
"
            .into(),
            String::new(),
            "\
pipeline:
  validators:
  - image: ghcr.io/kptdev/krm-functions-catalog/val:v1
    name: non-pv-val
"
            .into(),
        ),
    ];
    for (name, initial, pv_pipeline, expected) in cases {
        assert_eq!(
            run(&initial, &pv_pipeline),
            Ok(format!("{KPTFILE}{expected}")),
            "{name}"
        );
    }
}

/// Upstream's "add two validators with existing validators" case (its PV has one).
#[test]
fn add_two_validators_with_existing() {
    let pv = format!(
        "{VALIDATE_NAME}      - exec: ./validate\n        name: local\n        configPath: cfg.yaml\n"
    );
    assert_eq!(
        run(GATEKEEPER, &pv),
        Ok(format!(
            "{KPTFILE}pipeline:
  validators:
    - name: PackageVariant.my-pv.validate-name.0
      image: ghcr.io/kptdev/krm-functions-catalog/validate-name:undefined
    - name: PackageVariant.my-pv.local.1
      exec: ./validate
      configPath: cfg.yaml
    - image: ghcr.io/kptdev/krm-functions-catalog/gatekeeper-validate:v0.1atekeeper-validate:v0.1
      name: gatekeeper-validate
"
        ))
    );
}

#[test]
fn replaces_stale_functions_and_keeps_other_variants() {
    // An older version of this PV's list, another PV's function, and a user's one.
    let initial = "  mutators:
  - name: PackageVariant.my-pv.old.0
    image: old
  - name: PackageVariant.other-pv.theirs.0
    image: theirs
  - name: PackageVariant.my-pv.old.7
    image: old
  - name: mine # the user's
    image: mine
";
    let pv = "    mutators:\n    - name: new\n      image: new\n      selectors:\n      - kind: Deployment\n        name: \"\"\n      exclude:\n      - labels:\n          a: b\n";
    assert_eq!(
        run(initial, pv),
        Ok(format!(
            "{KPTFILE}pipeline:
  mutators:
  - name: PackageVariant.my-pv.new.0
    image: new
    selectors:
    - kind: Deployment
    exclude:
    - labels:
        a: b
  - name: PackageVariant.other-pv.theirs.0
    image: theirs
  - name: mine # the user's
    image: mine
"
        ))
    );
}

#[test]
fn converged_pipeline_keeps_its_text() {
    // Same functions, keys in another order and a comment: semantically converged.
    let initial = "  mutators:
  - image: new   # pinned
    name: PackageVariant.my-pv.new.0
  - {name: mine, image: mine}
";
    let kptfile = format!("{KPTFILE}pipeline:\n{initial}");
    assert_eq!(
        run(
            initial,
            "    mutators:\n    - name: new\n      image: new\n"
        ),
        Ok(kptfile)
    );
}

#[test]
fn empty_pipeline_is_dropped() {
    assert_eq!(
        run("  mutators: []\n  validators:\n", ""),
        Ok(KPTFILE.into())
    );
    assert_eq!(run("  {}\n", ""), Ok(KPTFILE.into()));
    // A function without a name is kept; an unnamed PV function gets an empty name part.
    assert_eq!(
        run(
            "  validators:\n  - image: x\n",
            "    mutators:\n    - image: \"y\"\n"
        ),
        Ok(format!(
            "{KPTFILE}pipeline:\n  validators:\n  - image: x\n  mutators:\n  - name: PackageVariant.my-pv..0\n    image: \"y\"\n"
        ))
    );
}

#[test]
fn malformed_pipelines_are_errors() {
    assert_eq!(
        run("  mutators: set-labels\n", ""),
        Err(MutationError(
            "\"Kptfile\" of PackageRevisionResources default/prr: pipeline.mutators is not a list"
                .into()
        ))
    );
    let bad = format!("{KPTFILE}pipeline: [a]\n");
    let pv = pv_from_yaml(PV_BASE);
    let mut files = files_of(&[("Kptfile", &bad)]);
    assert_eq!(
        ensure_krm_functions(&pv, &PRR, &mut files),
        Err(MutationError(
            "\"Kptfile\" of PackageRevisionResources default/prr: pipeline is not a map".into()
        ))
    );
    assert_eq!(
        run("  mutators:\n  - name: {a: b}\n", ""),
        Err(MutationError(
            "could not retrieve field name: the name of a pipeline function is not a string".into()
        ))
    );
    let mut files = PackageFiles::new();
    assert_eq!(
        ensure_krm_functions(&pv, &PRR, &mut files),
        Err(MutationError(
            "\"Kptfile\" not found in PackageRevisionResources 'default/prr'".into()
        ))
    );
}

/// Upstream `TestGeneratePVFuncName`.
#[test]
fn generate_pv_func_name_table() {
    assert_eq!(
        generate_pv_func_name("my-func", "my-pv", 3),
        "PackageVariant.my-pv.my-func.3"
    );
    assert_eq!(
        generate_pv_func_name("", "my-pv", 0),
        "PackageVariant.my-pv..0"
    );
}

/// Upstream `TestIsPackageVariantFunc`, every table case.
#[test]
fn is_package_variant_func_table() {
    let cases = [
        (
            "valid func name",
            "name: PackageVariant.my-pv.my-func.0",
            "my-pv",
            true,
        ),
        (
            "field name is missing",
            "otherkey: PackageVariant.my-pv.my-func.0",
            "my-pv",
            false,
        ),
        (
            "additional dots",
            "name: PackageVariant.too.many.dots.0",
            "too",
            false,
        ),
        (
            "not enough dots",
            "name: PackageVariant.not-enough.dots",
            "not-enough",
            false,
        ),
        (
            "no PackageVariantPrefix",
            "name: noprefix.my-pv.my-func.0",
            "my-pv",
            false,
        ),
        (
            "pv-name mismatch",
            "name: PackageVariant.my-pv.my-func.0",
            "actually-a-different-pv",
            false,
        ),
        (
            "empty func name",
            "name: PackageVariant.my-pv..0",
            "my-pv",
            true,
        ),
        (
            "positional location is not an int",
            "name: PackageVariant.my-pv.my-func.str",
            "my-pv",
            false,
        ),
    ];
    for (name, yaml, pv, expected) in cases {
        let node = kpt::yaml::parse_one(yaml).expect("parses");
        assert_eq!(added_by(&node, pv), Ok(expected), "{name}");
    }
    assert!(is_package_variant_func_name("PackageVariant.p.f.-1", "p"));
    assert!(!is_package_variant_func_name("PackageVariant.p.f.1.5", "p"));
    assert!(!is_package_variant_func_name("PackageVariant.p.f.", "p"));
}
