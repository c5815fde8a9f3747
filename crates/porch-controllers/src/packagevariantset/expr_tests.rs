//! Port of upstream `TestEvalExpr` (same cases; error texts are those of the `cel` crate), of
//! `TestConvertObjectToRNode` (here: what expressions see of a Pod and a Repository), and
//! cases for results that are not strings.

use serde_json::{Value, json};

use super::{Evaluator, object_input};

fn repo1() -> Value {
    json!({"apiVersion": "config.porch.kpt.dev/v1alpha1", "kind": "Repository",
           "metadata": {"name": "my-repo-1", "labels": {"foo": "bar", "abc": "def"}}})
}

fn eval(expr: &str, target: Option<Value>) -> Result<String, String> {
    let mut ev = Evaluator::new();
    ev.set("repoDefault", json!("foo-repo"))
        .expect("test value");
    ev.set("packageDefault", json!("bar-package"))
        .expect("test value");
    if let Some(t) = target {
        ev.set("target", t).expect("test value");
    }
    ev.eval(expr)
}

#[test]
fn no_vars() {
    assert_eq!(eval("'foo'", None), Ok("foo".into()));
}

#[test]
fn defaults_and_their_concatenation() {
    assert_eq!(eval("repoDefault", None), Ok("foo-repo".into()));
    assert_eq!(eval("packageDefault", None), Ok("bar-package".into()));
    assert_eq!(
        eval("packageDefault + '-' + repoDefault", None),
        Ok("bar-package-foo-repo".into())
    );
}

#[test]
fn repositories_target() {
    let t = json!({"repo": "my-repo", "package": "my-package"});
    assert_eq!(
        eval("target.repo + '/' + target.package", Some(t)),
        Ok("my-repo/my-package".into())
    );
}

#[test]
fn repository_target() {
    assert_eq!(
        eval(
            "target.name + '/' + target.labels['foo']",
            Some(object_input(&repo1()))
        ),
        Ok("my-repo-1/bar".into())
    );
}

#[test]
fn bad_variable() {
    let e = eval("badvar", None).expect_err("undeclared");
    assert!(e.contains("Undeclared reference to 'badvar'"), "{e}");
}

#[test]
fn bad_expr() {
    let e = eval("/", None).expect_err("syntax");
    assert!(e.starts_with("ERROR: <input>:1:"), "{e}");
    assert!(e.contains("Syntax error"), "{e}");
}

#[test]
fn missing_label() {
    let e = eval(
        "target.name + '/' + target.labels['no-such-label']",
        Some(object_input(&repo1())),
    )
    .expect_err("missing key");
    assert!(
        e.to_lowercase().contains("no such key: no-such-label"),
        "{e}"
    );
}

#[test]
fn non_string_results_are_errors() {
    assert_eq!(
        eval("1 + 1", None),
        Err("expression returned non-string value: 2".into())
    );
    assert_eq!(
        eval("repoDefault == 'foo-repo'", None),
        Err("expression returned non-string value: true".into())
    );
    let e = eval("target.labels", Some(object_input(&repo1()))).expect_err("map");
    assert!(
        e.starts_with("expression returned non-string value: "),
        "{e}"
    );
}

#[test]
fn object_input_of_pod_and_repository() {
    let pod = json!({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": "my-pod", "namespace": "ns"}, "spec": {"containers": null}});
    assert_eq!(
        object_input(&pod),
        json!({"name": "my-pod", "namespace": "ns", "labels": {}, "annotations": {}})
    );
    let repo = repo1();
    assert_eq!(
        object_input(&repo),
        json!({"name": "my-repo-1", "namespace": "", "labels": {"foo": "bar", "abc": "def"},
               "annotations": {}})
    );
}

#[test]
fn standard_functions_are_available() {
    assert_eq!(
        eval("repoDefault.startsWith('foo') ? 'yes' : 'no'", None),
        Ok("yes".into())
    );
    assert_eq!(
        eval(
            "repoDefault.matches('^foo-[a-z]+$') ? packageDefault : ''",
            None
        ),
        Ok("bar-package".into())
    );
    assert_eq!(eval("string(size(repoDefault))", None), Ok("8".into()));
}
