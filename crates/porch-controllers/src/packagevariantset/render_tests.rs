//! Port of upstream `TestRenderPackageVariantSpec` and `TestCopyAndOverlayMapExpr`, case by
//! case, and the error branches of rendering.

use std::collections::BTreeMap;

use porch_api::packagevariant::Upstream;
use serde_json::{Value, json};

use super::{overlay_map, render_spec};
use crate::packagevariantset::expr::Evaluator;
use crate::packagevariantset::targets::PvContext;
use crate::packagevariantset::template::{MapExpr, parse_template};

fn repos() -> Vec<Value> {
    vec![
        json!({"apiVersion": "config.porch.kpt.dev/v1alpha1", "kind": "Repository",
               "metadata": {"name": "my-repo-1", "labels": {"foo": "bar", "abc": "def"}}}),
        json!({"apiVersion": "config.porch.kpt.dev/v1alpha1", "kind": "Repository",
               "metadata": {"name": "my-repo-2", "labels": {"foo": "bar", "abc": "def", "efg": "hij"}}}),
    ]
}

fn upstream() -> Upstream {
    serde_json::from_value(json!({"repo": "up-repo", "package": "up-pkg", "revision": 2}))
        .expect("test value")
}

fn upstream_pr() -> Value {
    json!({"metadata": {"name": "p", "namespace": "default",
        "labels": {"vendor": "bigco.com", "product": "snazzy", "version": "1.6.8"},
        "annotations": {"bigco.com/team": "us-platform"}}})
}

fn render(template: Option<Value>) -> Result<Value, String> {
    render_ctx(PvContext {
        template: parse_template(template.as_ref()).expect("test value"),
        repo_default: "my-repo-1".into(),
        package_default: "p".into(),
        object: None,
    })
}

fn render_ctx(ctx: PvContext) -> Result<Value, String> {
    let spec = render_spec(&upstream(), &repos(), &upstream_pr(), &ctx)?;
    Ok(serde_json::to_value(spec).expect("test value"))
}

/// The expected spec: upstream's fields, then `fields` over the default downstream.
fn want(fields: Value) -> Value {
    let mut v = json!({
        "upstream": {"repo": "up-repo", "package": "up-pkg", "revision": 2},
        "downstream": {"repo": "my-repo-1", "package": "p"},
    });
    for (k, x) in fields.as_object().expect("test value") {
        v[k] = x.clone();
    }
    v
}

#[test]
fn no_template() {
    assert_eq!(render(None), Ok(want(json!({}))));
}

#[test]
fn template_downstream_repo() {
    assert_eq!(
        render(Some(json!({"downstream": {"repo": "my-repo-2"}}))),
        Ok(want(
            json!({"downstream": {"repo": "my-repo-2", "package": "p"}})
        ))
    );
}

#[test]
fn template_downstream_package() {
    assert_eq!(
        render(Some(json!({"downstream": {"package": "new-p"}}))),
        Ok(want(
            json!({"downstream": {"repo": "my-repo-1", "package": "new-p"}})
        ))
    );
}

#[test]
fn template_adoption_and_deletion() {
    assert_eq!(
        render(Some(
            json!({"adoptionPolicy": "adoptExisting", "deletionPolicy": "delete"})
        )),
        Ok(want(
            json!({"adoptionPolicy": "adoptExisting", "deletionPolicy": "delete"})
        ))
    );
}

#[test]
fn template_static_labels_and_annotations() {
    assert_eq!(
        render(Some(json!({"labels": {"foo": "bar", "hello": "there"},
                           "annotations": {"foobar": "barfoo"}}))),
        Ok(want(json!({"labels": {"foo": "bar", "hello": "there"},
                       "annotations": {"foobar": "barfoo"}})))
    );
}

#[test]
fn template_static_package_context() {
    assert_eq!(
        render(Some(
            json!({"packageContext": {"data": {"foo": "bar", "hello": "there"},
                                              "removeKeys": ["foobar", "barfoo"]}})
        )),
        Ok(want(
            json!({"packageContext": {"data": {"foo": "bar", "hello": "there"},
                                          "removeKeys": ["barfoo", "foobar"]}})
        ))
    );
}

#[test]
fn template_downstream_with_expressions() {
    assert_eq!(
        render(Some(json!({"downstream": {"repoExpr": "'my-repo-2'",
            "packageExpr": "repoDefault + '-' + packageDefault"}}))),
        Ok(want(
            json!({"downstream": {"repo": "my-repo-2", "package": "my-repo-1-p"}})
        ))
    );
}

#[test]
fn template_labels_and_annotations_with_expressions() {
    let got = render(Some(json!({
        "downstream": {"repoExpr": "'my-repo-2'", "packageExpr": "repoDefault + '-' + packageDefault"},
        "labels": {"foo": "bar", "hello": "there"},
        "labelExprs": [
            {"key": "foo", "valueExpr": "repoDefault"},
            {"keyExpr": "repository.labels['efg']", "valueExpr": "packageDefault + '-' + repository.name"},
            {"key": "hello", "value": "goodbye"},
        ],
        "annotations": {"bigco.com/sample-annotation": "some-annotation", "foo.org/id": "123456"},
        "annotationExprs": [
            {"key": "foo.org/id", "value": "54321"},
            {"key": "bigco.com/team", "valueExpr": "upstream.annotations['bigco.com/team']"},
        ],
    })));
    assert_eq!(
        got,
        Ok(want(json!({
            "downstream": {"repo": "my-repo-2", "package": "my-repo-1-p"},
            "labels": {"foo": "my-repo-1", "hello": "goodbye", "hij": "p-my-repo-2"},
            "annotations": {"bigco.com/sample-annotation": "some-annotation",
                            "foo.org/id": "54321", "bigco.com/team": "us-platform"},
        })))
    );
}

#[test]
fn template_with_package_context_with_expressions() {
    let got = render(Some(json!({"packageContext": {
        "data": {"foo": "bar", "hello": "there"},
        "dataExprs": [
            {"key": "foo", "valueExpr": "upstream.name"},
            {"keyExpr": "upstream.namespace", "valueExpr": "upstream.name"},
            {"keyExpr": "upstream.name", "value": "foo"},
        ],
        "removeKeys": ["foobar", "barfoo"],
        "removeKeyExprs": ["repository.labels['abc']"],
    }})));
    assert_eq!(
        got,
        Ok(want(json!({"packageContext": {
            "data": {"foo": "p", "hello": "there", "default": "p", "p": "foo"},
            "removeKeys": ["barfoo", "def", "foobar"],
        }})))
    );
}

#[test]
fn template_injectors() {
    let got = render(Some(json!({"injectors": [
        {"group": "kpt.dev", "version": "v1alpha1", "kind": "Foo", "name": "bar"},
        {"group": "kpt.dev", "version": "v1alpha1", "kind": "Foo", "nameExpr": "repository.labels['abc']"},
        {"nameExpr": "repository.name + '-test'"},
    ]})));
    assert_eq!(
        got,
        Ok(want(json!({"injectors": [
            {"group": "kpt.dev", "version": "v1alpha1", "kind": "Foo", "name": "bar"},
            {"group": "kpt.dev", "version": "v1alpha1", "kind": "Foo", "name": "def"},
            {"name": "my-repo-1-test"},
        ]})))
    );
}

#[test]
fn pipeline_injectors() {
    let got = render(Some(json!({"pipeline": {
        "validators": [
            {"image": "foo:bar", "name": "hey"},
            {"image": "foo:bar", "configMap": {"k1": "v1", "k2": "v2"},
             "configMapExprs": [{"key": "k1", "valueExpr": "repository.name"},
                                {"keyExpr": "'k3'", "value": "bar"}]},
        ],
        "mutators": [{"image": "mutates", "configMapExprs": [{"key": "k1", "value": "yo"}]}],
    }})));
    assert_eq!(
        got,
        Ok(want(json!({"pipeline": {
            "validators": [
                {"image": "foo:bar", "name": "hey"},
                {"image": "foo:bar", "configMap": {"k1": "my-repo-1", "k2": "v2", "k3": "bar"}},
            ],
            "mutators": [{"image": "mutates", "configMap": {"k1": "yo"}}],
        }})))
    );
}

#[test]
fn object_targets_are_visible_as_target() {
    let got = render_ctx(PvContext {
        template: parse_template(Some(&json!({"downstream": {"repo": "my-repo-2",
            "packageExpr": "target.labels['site'] + '-' + target.name"}})))
        .expect("test value"),
        repo_default: "cluster-a".into(),
        package_default: "p".into(),
        object: Some(json!({"metadata": {"name": "cluster-a", "labels": {"site": "east"}}})),
    });
    assert_eq!(
        got,
        Ok(want(
            json!({"downstream": {"repo": "my-repo-2", "package": "east-cluster-a"}})
        ))
    );
}

#[test]
fn listed_repositories_are_visible_as_target_repo_and_package() {
    assert_eq!(
        render(Some(json!({"labels": {}, "labelExprs": [
            {"key": "t", "valueExpr": "target.repo + '.' + target.package"}]}))),
        Ok(want(json!({"labels": {"t": "my-repo-1.p"}})))
    );
}

#[test]
fn expression_errors_name_the_field() {
    let e = render(Some(json!({"downstream": {"repoExpr": "nosuch"}}))).expect_err("undeclared");
    assert!(e.starts_with("template.downstream.repoExpr: "), "{e}");
    let e = render(Some(json!({"downstream": {"packageExpr": "'a' +"}}))).expect_err("syntax");
    assert!(
        e.starts_with("template.downstream.packageExpr: ERROR: <input>:"),
        "{e}"
    );
    let e = render(Some(
        json!({"labelExprs": [{"key": "k", "valueExpr": "1"}]}),
    ))
    .expect_err("int");
    assert_eq!(
        e,
        "template.labelExprs[0].valueExpr: expression returned non-string value: 1"
    );
    let e = render(Some(
        json!({"annotationExprs": [{"keyExpr": "true", "value": "v"}]}),
    ))
    .expect_err("bool");
    assert_eq!(
        e,
        "template.annotationExprs[0].keyExpr: expression returned non-string value: true"
    );
    let e = render(Some(
        json!({"packageContext": {"removeKeyExprs": ["'a'", "upstream"]}}),
    ))
    .expect_err("map");
    assert!(
        e.starts_with(
            "template.packageContext.removeKeyExprs[1]: expression returned non-string value"
        ),
        "{e}"
    );
    let e = render(Some(
        json!({"injectors": [{"nameExpr": "repository.labels['none']"}]}),
    ))
    .expect_err("missing key");
    assert!(e.starts_with("template.injectors[0].nameExpr: "), "{e}");
    let e = render(Some(json!({"pipeline": {"mutators": [{"image": "i",
        "configMapExprs": [{"key": "k", "valueExpr": "2.5"}]}]}})))
    .expect_err("float");
    assert_eq!(
        e,
        "template.pipeline.mutators[0].configMapExprs[0].valueExpr: expression returned non-string value: 2.5"
    );
}

#[test]
fn repository_expression_cannot_see_repository() {
    // `repository` is bound only once the downstream repository is known.
    let e =
        render(Some(json!({"downstream": {"repoExpr": "repository.name"}}))).expect_err("unbound");
    assert!(e.contains("repository"), "{e}");
}

#[test]
fn a_template_needs_the_downstream_repository() {
    assert_eq!(
        render(Some(json!({"downstream": {"repo": "nope"}}))),
        Err("repository \"nope\" could not be loaded".into())
    );
    // Without a template nothing is looked up.
    let got = render_ctx(PvContext {
        template: None,
        repo_default: "nope".into(),
        package_default: "p".into(),
        object: None,
    });
    assert_eq!(got.expect("test value")["downstream"]["repo"], "nope");
}

fn base_eval() -> Evaluator {
    let mut ev = Evaluator::new();
    ev.set("repoDefault", json!("foo-repo"))
        .expect("test value");
    ev.set("packageDefault", json!("bar-package"))
        .expect("test value");
    ev
}

fn me(
    key: Option<&str>,
    value: Option<&str>,
    key_expr: Option<&str>,
    value_expr: Option<&str>,
) -> MapExpr {
    MapExpr {
        key: key.map(Into::into),
        value: value.map(Into::into),
        key_expr: key_expr.map(Into::into),
        value_expr: value_expr.map(Into::into),
    }
}

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn copy_and_overlay_map_expr_empty_starting_map() {
    let got = overlay_map(
        "f",
        Some(&map(&[])),
        Some(&[
            me(Some("foo"), Some("bar"), None, None),
            me(None, Some("barbar"), Some("repoDefault"), None),
            me(Some("bar"), None, None, Some("packageDefault")),
        ]),
        &base_eval(),
    );
    assert_eq!(
        got,
        Ok(Some(map(&[
            ("foo", "bar"),
            ("foo-repo", "barbar"),
            ("bar", "bar-package")
        ])))
    );
}

#[test]
fn copy_and_overlay_map_expr_static_overlay() {
    let got = overlay_map(
        "f",
        Some(&map(&[("foo", "bar"), ("bar", "foo")])),
        Some(&[
            me(Some("foo"), Some("new-bar"), None, None),
            me(Some("foofoo"), Some("barbar"), None, None),
        ]),
        &base_eval(),
    );
    assert_eq!(
        got,
        Ok(Some(map(&[
            ("foo", "new-bar"),
            ("bar", "foo"),
            ("foofoo", "barbar")
        ])))
    );
}

#[test]
fn copy_and_overlay_map_expr_exprs_overlay() {
    let got = overlay_map(
        "f",
        Some(&map(&[("foo", "bar"), ("bar", "foo")])),
        Some(&[
            me(None, Some("new-bar"), Some("'foo'"), None),
            me(Some("bar"), None, None, Some("packageDefault")),
        ]),
        &base_eval(),
    );
    assert_eq!(
        got,
        Ok(Some(map(&[("foo", "new-bar"), ("bar", "bar-package")])))
    );
}

#[test]
fn copy_and_overlay_map_expr_nothing_is_none() {
    assert_eq!(overlay_map("f", None, None, &base_eval()), Ok(None));
    assert_eq!(
        overlay_map(
            "f",
            None,
            Some(&[me(Some("k"), None, None, Some("1"))]),
            &base_eval()
        ),
        Err("f[0].valueExpr: expression returned non-string value: 1".into())
    );
}
