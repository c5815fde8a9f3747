//! set-enforcement-action: exactly one `enforcementAction` of deny/warn/dryrun;
//! constraints get it set and are listed; failures are one error result plus
//! the bare error on stderr.

use proptest::prelude::*;

use super::{call, config_map};

const F: &str = "set-enforcement-action";

fn constraint(name: &str, spec: &str) -> String {
    format!(
        "apiVersion: constraints.gatekeeper.sh/v1beta1\nkind: K8sRule\nmetadata:\n  name: {name}\n  annotations:\n    internal.config.kubernetes.io/path: policies.yaml\n{spec}"
    )
}

#[test]
fn sets_and_lists_every_constraint() {
    let input = format!(
        "{}---\n{}---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n",
        constraint("a", "spec:\n  enforcementAction: deny\n"),
        constraint("b", "spec:\n  parameters: {}\n")
    );
    let out = call(F, &input, Some(&config_map("  enforcementAction: warn\n")));
    assert_eq!((out.exit_code, out.stderr.as_str()), (0, ""));
    assert_eq!(
        out.results,
        vec![
            "info|Number of policies set to [warn]: 2||",
            "info|Policy name: [a]|policies.yaml|",
            "info|Policy name: [b]|policies.yaml|",
        ]
    );
    assert_eq!(out.items.matches("enforcementAction: warn").count(), 2);
}

#[test]
fn nothing_to_set_is_a_warning() {
    for input in [
        "",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
    ] {
        let out = call(F, input, Some(&config_map("  enforcementAction: dryrun\n")));
        assert_eq!(out.exit_code, 0);
        assert_eq!(
            out.results,
            vec!["warning|Found no policy to set to [dryrun]||"]
        );
    }
}

fn assert_fails(out: &super::Out, error: &str) {
    assert_eq!(out.exit_code, 1);
    assert_eq!(out.stderr, error);
    assert_eq!(
        out.results,
        vec![format!("error|failed to process policies: {error}||")]
    );
}

#[test]
fn config_must_hold_exactly_one_valid_action() {
    let one = "expecting exactly 1 enforcementAction as part of the ConfigMap";
    let values = "expected values for enforcementAction are [deny] or [warn] or [dryrun]";
    let input = constraint("a", "spec: {}\n");
    let cases: Vec<(Option<String>, &str)> = vec![
        (None, one),
        (
            Some("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n".into()),
            one,
        ),
        (
            Some(config_map("  {}\n").replace("data:\n  {}\n", "data: {}\n")),
            one,
        ),
        (
            Some(config_map("  enforcementAction: deny\n  other: x\n")),
            one,
        ),
        (Some(config_map("  enforcementAction: block\n")), values),
        (Some(config_map("  action: deny\n")), values),
        // A nested value still counts as an entry; its text is empty.
        (Some(config_map("  enforcementAction: {a: b}\n")), values),
        // Any kind is read by its `data`.
        (
            Some("apiVersion: x/v1\nkind: Other\ndata:\n  enforcementAction: deny\n".into()),
            "",
        ),
    ];
    for (config, error) in cases {
        let out = call(F, &input, config.as_deref());
        if error.is_empty() {
            assert_eq!(out.exit_code, 0, "{config:?}");
            continue;
        }
        assert_fails(&out, error);
    }
}

#[test]
fn a_constraint_without_a_spec_mapping_fails() {
    let cfg = config_map("  enforcementAction: deny\n");
    let out = call(F, &constraint("a", ""), Some(&cfg));
    assert_fails(
        &out,
        "wrong Node Kind for spec expected: MappingNode was ScalarNode: value: {}",
    );
    let out = call(F, &constraint("a", "spec: on\n"), Some(&cfg));
    assert_fails(
        &out,
        "wrong Node Kind for spec expected: MappingNode was ScalarNode: value: {on}",
    );
    // A null spec is left as it is, yet the policy is listed.
    let out = call(F, &constraint("a", "spec:\n"), Some(&cfg));
    assert_eq!(out.exit_code, 0);
    assert!(out.items.ends_with("spec:\n"), "{}", out.items);
    assert_eq!(out.results[1], "info|Policy name: [a]|policies.yaml|");
    let out = call(F, "kind: x\n---\nfoo: bar\n", Some(&cfg));
    assert_fails(&out, "missing Resource metadata");
}

proptest! {
    #[test]
    fn only_the_three_actions_are_accepted(action in "[a-z]{1,8}") {
        let out = call(
            F,
            &constraint("a", "spec:\n  x: 1\n"),
            Some(&config_map(&format!("  enforcementAction: {action}\n"))),
        );
        let valid = matches!(action.as_str(), "deny" | "warn" | "dryrun");
        prop_assert_eq!(out.exit_code, i32::from(!valid));
        if valid {
            let expected = format!("enforcementAction: {action}");
            prop_assert!(out.items.contains(&expected));
        }
    }
}
