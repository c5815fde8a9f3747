use super::*;

const HEAD: &str = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: k\n";

const WITH_GATES: &str = "apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: k
info:
  readinessGates:
  - conditionType: test
  - conditionType: test3
status:
  conditions:
  - type: test
    status: \"False\"
    reason: test
    message: test
  - type: test2
    status: \"True\"
    reason: test2
    message: test2
  - type: test3
    status: \"True\"
    reason: test3
    message: test3
";

fn point(condition_type: &str, required: bool, injected: Option<&str>) -> PointCondition {
    let (status, reason, message) = match injected {
        Some(n) => (
            "True",
            "ConfigInjected",
            format!("injected resource {n:?} from cluster"),
        ),
        None => (
            "False",
            "NoResourceSelected",
            "no resource matched any injection selector for this injection point".to_string(),
        ),
    };
    PointCondition {
        condition_type: condition_type.into(),
        required,
        status,
        reason,
        message,
    }
}

fn run(kptfile: &str, points: &[PointCondition]) -> String {
    let mut docs = kpt::yaml::parse_stream(kptfile).expect("parses");
    set_conditions_and_gates(&mut docs[0].root, points);
    kpt::yaml::emit_stream(&docs)
}

const NOT_SELECTED: &str =
    "message: no resource matched any injection selector for this injection point";

/// Upstream `TestSetInjectionPointConditionsAndGates`, every table case.
#[test]
fn set_injection_point_conditions_and_gates_table() {
    let cm = "config.injection.ConfigMap.foo";
    let some = "config.injection.SomeResource.foo";
    let another = "config.injection.AnotherResource.foo";
    let multiple = [
        point(cm, false, Some("my-injected-resource")),
        point(some, false, Some("some-injected-resource")),
        point(another, false, None),
    ];
    let mixed = [
        point(cm, false, Some("my-injected-resource")),
        point(some, true, Some("some-injected-resource")),
        point(another, false, None),
    ];
    let cases: Vec<(&str, &str, Vec<PointCondition>, String)> = vec![
        ("no injection points", HEAD, vec![], HEAD.into()),
        (
            "no injection points, existing gates and conditions",
            WITH_GATES,
            vec![],
            WITH_GATES.into(),
        ),
        (
            "optional, not injected",
            HEAD,
            vec![point(cm, false, None)],
            format!(
                "{HEAD}status:\n  conditions:\n  - type: {cm}\n    status: \"False\"\n    {NOT_SELECTED}\n    reason: NoResourceSelected\n"
            ),
        ),
        (
            "required, not injected",
            HEAD,
            vec![point(cm, true, None)],
            format!(
                "{HEAD}info:\n  readinessGates:\n  - conditionType: {cm}\nstatus:\n  conditions:\n  - type: {cm}\n    status: \"False\"\n    {NOT_SELECTED}\n    reason: NoResourceSelected\n"
            ),
        ),
        (
            "optional, injected",
            HEAD,
            vec![point(cm, false, Some("my-injected-resource"))],
            format!(
                "{HEAD}status:\n  conditions:\n  - type: {cm}\n    status: \"True\"\n    message: injected resource \"my-injected-resource\" from cluster\n    reason: ConfigInjected\n"
            ),
        ),
        (
            "multiple optional",
            HEAD,
            multiple.to_vec(),
            format!(
                "{HEAD}status:
  conditions:
  - type: {another}
    status: \"False\"
    {NOT_SELECTED}
    reason: NoResourceSelected
  - type: {cm}
    status: \"True\"
    message: injected resource \"my-injected-resource\" from cluster
    reason: ConfigInjected
  - type: {some}
    status: \"True\"
    message: injected resource \"some-injected-resource\" from cluster
    reason: ConfigInjected
"
            ),
        ),
        (
            "mixed existing, optional, required",
            WITH_GATES,
            mixed.to_vec(),
            format!(
                "{HEAD}info:
  readinessGates:
  - conditionType: {some}
  - conditionType: test
  - conditionType: test3
status:
  conditions:
  - type: {another}
    status: \"False\"
    {NOT_SELECTED}
    reason: NoResourceSelected
  - type: {cm}
    status: \"True\"
    message: injected resource \"my-injected-resource\" from cluster
    reason: ConfigInjected
  - type: {some}
    status: \"True\"
    message: injected resource \"some-injected-resource\" from cluster
    reason: ConfigInjected
  - type: test
    status: \"False\"
    reason: test
    message: test
  - type: test2
    status: \"True\"
    reason: test2
    message: test2
  - type: test3
    status: \"True\"
    reason: test3
    message: test3
"
            ),
        ),
    ];
    for (name, kptfile, points, expected) in cases {
        assert_eq!(run(kptfile, &points), expected, "{name}");
    }
}

#[test]
fn existing_condition_is_updated_in_place() {
    let kptfile = format!(
        "{HEAD}status:
  # set by the PackageVariant controller
  conditions:
  - type: config.injection.ConfigMap.foo # the endpoints
    reason: NoResourceSelected
    status: \"False\"
  renderStatus:
    errorSummary: \"\"
"
    );
    let got = run(
        &kptfile,
        &[point("config.injection.ConfigMap.foo", false, Some("east"))],
    );
    assert_eq!(
        got,
        format!(
            "{HEAD}status:
  # set by the PackageVariant controller
  conditions:
  - type: config.injection.ConfigMap.foo # the endpoints
    reason: ConfigInjected
    status: \"True\"
    message: injected resource \"east\" from cluster
  renderStatus:
    errorSummary: \"\"
"
        )
    );
    // converged: the same outcome again changes nothing
    assert_eq!(
        run(
            &got,
            &[point("config.injection.ConfigMap.foo", false, Some("east"))]
        ),
        got
    );
}

#[test]
fn gates_are_sorted_deduplicated_and_placed_before_description() {
    let kptfile = format!("{HEAD}info:\n  site: https://example.com\n  description: d\n  man: m\n");
    assert_eq!(
        run(&kptfile, &[point("b", true, None), point("a", false, None)]),
        format!(
            "{HEAD}info:
  site: https://example.com
  readinessGates:
  - conditionType: b
  description: d
  man: m
status:
  conditions:
  - type: a
    status: \"False\"
    {NOT_SELECTED}
    reason: NoResourceSelected
  - type: b
    status: \"False\"
    {NOT_SELECTED}
    reason: NoResourceSelected
"
        )
    );
    // Existing gates out of order or repeated are sorted and deduplicated even without
    // injection points, as upstream rewrites them on every pass.
    let kptfile = format!(
        "{HEAD}info:\n  readinessGates:\n  - conditionType: z # last\n  - conditionType: a\n  - conditionType: z\n"
    );
    assert_eq!(
        run(&kptfile, &[]),
        format!(
            "{HEAD}info:\n  readinessGates:\n  - conditionType: a\n  - conditionType: z # last\n"
        )
    );
}

#[test]
fn new_info_goes_before_the_pipeline() {
    let kptfile = format!("{HEAD}pipeline:\n  mutators:\n  - image: m\n");
    assert_eq!(
        run(&kptfile, &[point("g", true, Some("x"))]),
        format!(
            "{HEAD}info:
  readinessGates:
  - conditionType: g
pipeline:
  mutators:
  - image: m
status:
  conditions:
  - type: g
    status: \"True\"
    message: injected resource \"x\" from cluster
    reason: ConfigInjected
"
        )
    );
}
