//! Port of upstream `TestUnrollDownstreamTargets` (its fake client answered every list with
//! two Pods; here the repository selector lists real Repositories), and the object selector's
//! branches.

use porch_api::packagevariantset::PackageVariantSetSpec;
use serde_json::{Value, json};

use super::unroll;
use crate::objects::Gvr;
use crate::packagevariantset::PvsError;
use crate::packagevariantset::testobjects::MemObjects;

fn spec(v: Value) -> PackageVariantSetSpec {
    serde_json::from_value(v).expect("test value")
}

fn store() -> MemObjects {
    let m = MemObjects::new();
    let repos = super::super::repositories_gvr();
    m.seed(&repos, json!({"metadata": {"name": "my-repo-1", "namespace": "ns", "labels": {"foo": "bar", "abc": "def"}}}));
    m.seed(&repos, json!({"metadata": {"name": "my-repo-2", "namespace": "ns", "labels": {"abc": "def", "efg": "hij"}}}));
    m.seed(
        &repos,
        json!({"metadata": {"name": "elsewhere", "namespace": "other"}}),
    );
    let pods = Gvr::new("", "v1", "pods");
    m.seed(&pods, json!({"metadata": {"name": "my-pod-1", "namespace": "ns", "labels": {"foo": "bar", "abc": "def"}}}));
    m.seed(&pods, json!({"metadata": {"name": "my-pod-2", "namespace": "ns", "labels": {"abc": "def", "efg": "hij"}}}));
    m
}

#[tokio::test]
async fn unroll_downstream_targets() {
    let m = store();
    let s = spec(json!({
        "upstream": {"repo": "up", "package": "up", "revision": 1},
        "targets": [
            {"repositories": [{"name": "r1", "packageNames": ["p1", "p2", "p3"]}, {"name": "r2"}]},
            {"repositorySelector": {}},
        ]
    }));
    let d = unroll(&m, "ns", &s).await.expect("test value");
    let got: Vec<(&str, &str, bool)> = d
        .iter()
        .map(|c| {
            (
                c.repo_default.as_str(),
                c.package_default.as_str(),
                c.object.is_some(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("r1", "p1", false),
            ("r1", "p2", false),
            ("r1", "p3", false),
            ("r2", "up", false),
            ("my-repo-1", "up", true),
            ("my-repo-2", "up", true),
        ]
    );
    assert_eq!(
        d[4].object.as_ref().expect("test value")["metadata"]["name"],
        "my-repo-1"
    );
}

#[tokio::test]
async fn repository_selector_filters_by_labels() {
    let m = store();
    let s = spec(
        json!({"upstream": {"repo": "up", "package": "up", "revision": 1},
        "targets": [{"repositorySelector": {"matchExpressions": [
            {"key": "efg", "operator": "Exists"}]}}]}),
    );
    let d = unroll(&m, "ns", &s).await.expect("test value");
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].repo_default, "my-repo-2");
}

#[tokio::test]
async fn object_selector_by_kind_labels_and_name() {
    let m = store();
    let s = spec(
        json!({"upstream": {"repo": "up", "package": "up", "revision": 1},
        "targets": [
            {"objectSelector": {"apiVersion": "v1", "kind": "Pod", "matchLabels": {"abc": "def"}},
             "template": {"labels": {"x": "y"}}},
            {"objectSelector": {"apiVersion": "v1", "kind": "Pod", "name": "my-pod-2"}},
        ]}),
    );
    let d = unroll(&m, "ns", &s).await.expect("test value");
    let names: Vec<&str> = d.iter().map(|c| c.repo_default.as_str()).collect();
    assert_eq!(names, ["my-pod-1", "my-pod-2", "my-pod-2"]);
    assert!(d[0].template.is_some());
    assert!(d[2].template.is_none());
    assert_eq!(d[0].package_default, "up");
}

#[tokio::test]
async fn unserved_kinds_are_no_match() {
    let m = store();
    let s = spec(
        json!({"upstream": {"repo": "up", "package": "up", "revision": 1},
        "targets": [{"objectSelector": {"apiVersion": "example.com/v1", "kind": "Widget"}}]}),
    );
    let e = unroll(&m, "ns", &s).await.expect_err("no match");
    assert_eq!(
        e,
        PvsError::NoMatch {
            api_version: "example.com/v1".into(),
            kind: "Widget".into()
        }
    );
    assert_eq!(
        e.to_string(),
        "no matches for kind \"Widget\" in version \"example.com/v1\""
    );
}

#[tokio::test]
async fn bad_selectors_are_errors() {
    let m = store();
    let s = spec(
        json!({"upstream": {"repo": "up", "package": "up", "revision": 1},
        "targets": [{"repositorySelector": {"matchExpressions": [
            {"key": "a", "operator": "Near", "values": ["b"]}]}}]}),
    );
    let e = unroll(&m, "ns", &s).await.expect_err("bad operator");
    assert!(matches!(e, PvsError::Selector(_)), "{e:?}");
}
