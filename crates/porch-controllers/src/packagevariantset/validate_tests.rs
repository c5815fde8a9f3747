//! Port of upstream `TestValidatePackageVariantSet`, case by case, plus the cases of the
//! upstream identity this port requires (revision or workspace name).

use porch_api::packagevariantset::PackageVariantSetSpec;
use serde_json::{Value, json};

use super::validate;

fn errs(spec: Value) -> Vec<String> {
    let spec: PackageVariantSetSpec = serde_json::from_value(spec).expect("test value");
    validate(&spec)
}

const NO_UPSTREAM: &str = "spec.upstream is a required field";
const NO_TARGETS: &str = "must specify at least one item in spec.targets";
const ONE_OF: &str =
    "spec.targets[0] must specify one of `repositories`, `repositorySelector`, or `objectSelector`";

#[test]
fn empty_spec() {
    assert_eq!(errs(json!({})), [NO_UPSTREAM, NO_TARGETS]);
}

#[test]
fn missing_upstream_package() {
    assert_eq!(
        errs(json!({"upstream": {"repo": "foo", "revision": 1}})),
        ["spec.upstream.package is a required field", NO_TARGETS]
    );
}

#[test]
fn missing_upstream_repo() {
    assert_eq!(
        errs(json!({"upstream": {"package": "foopkg", "revision": 3}})),
        ["spec.upstream.repo is a required field", NO_TARGETS]
    );
}

#[test]
fn missing_upstream_revision() {
    assert_eq!(
        errs(json!({"upstream": {"repo": "foo", "package": "foopkg"}})),
        ["spec.upstream.revision is a required field", NO_TARGETS]
    );
    // Revision 0 matches any draft: as good as missing.
    assert_eq!(
        errs(json!({"upstream": {"repo": "foo", "package": "foopkg", "revision": 0}})),
        ["spec.upstream.revision is a required field", NO_TARGETS]
    );
}

#[test]
fn a_workspace_name_stands_in_for_the_revision() {
    assert_eq!(
        errs(
            json!({"upstream": {"repo": "foo", "package": "foopkg", "workspaceName": "v1"},
                    "targets": [{"repositories": [{"name": "bar"}]}]})
        ),
        Vec::<String>::new()
    );
}

#[test]
fn invalid_targets() {
    assert_eq!(
        errs(json!({"targets": [
            {"repositories": [{"name": ""}]},
            {"repositories": [{"name": "bar"}], "repositorySelector": {"foo": "bar"}},
            {"repositories": [{"name": "bar", "packageNames": ["", "foo"]}]},
        ]})),
        [
            NO_UPSTREAM,
            "spec.targets[0].repositories[0].name cannot be empty",
            "spec.targets[1] must specify one of `repositories`, `repositorySelector`, or `objectSelector`",
            "spec.targets[2].repositories[0].packageNames[0] cannot be empty",
        ]
    );
}

#[test]
fn empty_repository_list_and_object_selector_fields() {
    assert_eq!(
        errs(json!({"targets": [
            {"repositories": []},
            {"objectSelector": {"matchLabels": {"a": "b"}}},
        ]})),
        [
            NO_UPSTREAM,
            "spec.targets[0].repositories must not be an empty list if specified",
            "spec.targets[1].objectselector.apiVersion cannot be empty",
            "spec.targets[1].objectselector.kind cannot be empty",
        ]
    );
}

#[test]
fn invalid_adoption_and_deletion_policies() {
    assert_eq!(
        errs(
            json!({"targets": [{"template": {"adoptionPolicy": "invalid", "deletionPolicy": "invalid"}}]})
        ),
        [
            NO_UPSTREAM,
            ONE_OF,
            "spec.targets[0].template.adoptionPolicy can only be \"adoptNone\" or \"adoptExisting\"",
            "spec.targets[0].template.deletionPolicy can only be \"orphan\" or \"delete\"",
        ]
    );
}

#[test]
fn valid_adoption_and_deletion_policies() {
    // Upstream's case puts the policies at spec level, where they mean nothing.
    assert_eq!(
        errs(json!({"adoptionPolicy": "adoptExisting", "deletionPolicy": "orphan"})),
        [NO_UPSTREAM, NO_TARGETS]
    );
    assert_eq!(
        errs(json!({"targets": [{"repositories": [{"name": "r"}],
            "template": {"adoptionPolicy": "adoptExisting", "deletionPolicy": "orphan"}}]})),
        [NO_UPSTREAM]
    );
}

#[test]
fn downstream_values_and_expressions_do_not_mix() {
    assert_eq!(
        errs(json!({"targets": [{"template": {"downstream": {
            "repo": "foo", "repoExpr": "'bar'", "package": "p", "packageExpr": "'p'"}}}]})),
        [
            NO_UPSTREAM,
            ONE_OF,
            "spec.targets[0].template may specify only one of `downstream.repo` and `downstream.repoExpr`",
            "spec.targets[0].template may specify only one of `downstream.package` and `downstream.packageExpr`",
        ]
    );
}

#[test]
fn map_exprs_do_not_allow_both_expr_and_non_expr_for_same_field() {
    let both = json!([
        {"key": "foo", "keyExpr": "'bar'", "value": "bar"},
        {"key": "foo", "value": "bar", "valueExpr": "'bar'"},
    ]);
    assert_eq!(
        errs(json!({"targets": [{"template": {
            "labelExprs": both, "annotationExprs": both,
            "packageContext": {"dataExprs": both}}}]})),
        [
            NO_UPSTREAM,
            ONE_OF,
            "spec.targets[0].template.labelExprs[0] may specify only one of `key` and `keyExpr`",
            "spec.targets[0].template.labelExprs[1] may specify only one of `value` and `valueExpr`",
            "spec.targets[0].template.annotationExprs[0] may specify only one of `key` and `keyExpr`",
            "spec.targets[0].template.annotationExprs[1] may specify only one of `value` and `valueExpr`",
            "spec.targets[0].template.packageContext.dataExprs[0] may specify only one of `key` and `keyExpr`",
            "spec.targets[0].template.packageContext.dataExprs[1] may specify only one of `value` and `valueExpr`",
        ]
    );
}

#[test]
fn injectors_must_specify_exactly_one_of_name_or_nameexpr() {
    assert_eq!(
        errs(
            json!({"targets": [{"repositories": [{"name": "bar"}], "template": {"injectors": [
            {"name": "foo", "nameExpr": "bar"}, {"group": "foo"}]}}]})
        ),
        [
            NO_UPSTREAM,
            "spec.targets[0].template.injectors[0] may specify only one of `name` and `nameExpr`",
            "spec.targets[0].template.injectors[1] must specify either `name` or `nameExpr`",
        ]
    );
}

#[test]
fn pipeline_function_must_be_valid() {
    assert_eq!(
        errs(
            json!({"targets": [{"repositories": [{"name": "bar"}], "template": {"pipeline": {
            "validators": [{"name": "foo"}, {"image": "foo", "name": "bar"}],
            "mutators": [{"name": "foo.bar", "image": "bar"}]}}}]})
        ),
        [
            NO_UPSTREAM,
            "spec.targets[0].template.pipeline.validators[0].image must not be empty",
            "spec.targets[0].template.pipeline.mutators[0].name must not contain '.'",
        ]
    );
}

#[test]
fn a_malformed_template_is_a_validation_error() {
    let e = errs(json!({"targets": [{"repositories": [{"name": "bar"}],
        "template": {"labels": ["not", "a", "map"]}}]}));
    assert_eq!(e.len(), 2, "{e:?}");
    assert!(e[1].starts_with("spec.targets[0].template: "), "{e:?}");
}

#[test]
fn combine_joins_non_empty_messages() {
    assert_eq!(
        super::combine(&["a".into(), String::new(), "b".into()]),
        "a; b"
    );
}
