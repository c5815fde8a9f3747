//! `authorization.k8s.io/v1` LocalSubjectAccessReview through the real server: asked with
//! kubectl (JSON), kube-rs (JSON) and as the protobuf kube clients may send; answered for the
//! request's namespace only, refused (422) for another namespace or a non-resource URL, and
//! itself subject to RBAC.

mod common;

use common::Server;
use k8s_openapi::api::authorization::v1::LocalSubjectAccessReview;
use serde_json::{Value, json};

fn review(ns: &str, user: &str, verb: &str, resource: &str) -> LocalSubjectAccessReview {
    serde_json::from_value(json!({
        "metadata": {"namespace": ns},
        "spec": {"user": user, "resourceAttributes": {
            "namespace": ns, "verb": verb, "group": "porch.kpt.dev", "resource": resource}}
    }))
    .expect("review")
}

/// A length-delimited protobuf field (short ones only).
fn field(n: u8, bytes: &[u8]) -> Vec<u8> {
    let mut out = vec![n << 3 | 2, u8::try_from(bytes.len()).expect("short field")];
    out.extend_from_slice(bytes);
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn local_subject_access_reviews_answer_within_their_namespace() {
    let s = Server::start();
    s.kubectl_ok(&["create", "namespace", "team-a"]);
    s.kubectl_ok(&[
        "create",
        "rolebinding",
        "rita-reads",
        "--clusterrole=porch-reader",
        "--user=rita",
        "-n",
        "team-a",
    ]);

    // kubectl (JSON).
    let file = s.write_file(
        "lsar.yaml",
        "apiVersion: authorization.k8s.io/v1\nkind: LocalSubjectAccessReview\nmetadata:\n  namespace: team-a\nspec:\n  user: rita\n  resourceAttributes:\n    namespace: team-a\n    verb: list\n    group: porch.kpt.dev\n    resource: packagerevisions\n",
    );
    let out = s.kubectl_ok(&["create", "-f", file.to_str().expect("utf8"), "-o", "json"]);
    let answered: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(answered["status"]["allowed"], true, "{answered}");
    assert!(
        answered["status"]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("rita-reads")),
        "{answered}"
    );

    // kube-rs (JSON): allowed, refused, and the checks of the kind.
    let client = s.client().await;
    let api: kube::Api<LocalSubjectAccessReview> = kube::Api::namespaced(client.clone(), "team-a");
    let pp = Default::default();
    let get = api
        .create(&pp, &review("team-a", "rita", "get", "packagerevisions"))
        .await
        .expect("review");
    assert!(get.status.expect("status").allowed);
    let approve = api
        .create(&pp, &review("team-a", "rita", "create", "packagerevisions"))
        .await
        .expect("review");
    assert!(!approve.status.expect("status").allowed);
    let elsewhere = api
        .create(&pp, &review("default", "rita", "get", "packagerevisions"))
        .await;
    match elsewhere {
        Err(kube::Error::Api(e)) => {
            assert_eq!(e.code, 400, "{e:?}");
            assert!(e.message.contains("does not match the namespace"), "{e:?}");
        }
        other => panic!("review of another namespace: {other:?}"),
    }
    let mut other_ns = review("team-a", "rita", "get", "packagerevisions");
    other_ns
        .spec
        .resource_attributes
        .as_mut()
        .expect("attrs")
        .namespace = Some("default".into());
    match api.create(&pp, &other_ns).await {
        Err(kube::Error::Api(e)) => {
            assert_eq!(e.code, 422, "{e:?}");
            assert!(
                e.message.contains(
                    "spec.resourceAttributes.namespace: Invalid value: \"default\": must match metadata.namespace"
                ),
                "{e:?}"
            );
        }
        other => panic!("attributes of another namespace: {other:?}"),
    }

    // Protobuf, as kube clients built on client-go send it.
    let attrs = [
        field(1, b"team-a"),
        field(2, b"list"),
        field(3, b"porch.kpt.dev"),
        field(5, b"packagerevisions"),
    ]
    .concat();
    let spec = [field(1, &attrs), field(3, b"rita")].concat();
    let raw = [field(1, &field(3, b"team-a")), field(2, &spec)].concat();
    let type_meta = [
        field(1, b"authorization.k8s.io/v1"),
        field(2, b"LocalSubjectAccessReview"),
    ]
    .concat();
    let body = [b"k8s\x00".to_vec(), field(1, &type_meta), field(2, &raw)].concat();
    let req = http::Request::builder()
        .method("POST")
        .uri("/apis/authorization.k8s.io/v1/namespaces/team-a/localsubjectaccessreviews")
        .header("Content-Type", "application/vnd.kubernetes.protobuf")
        .header("Accept", "application/json")
        .body(body)
        .expect("request");
    let answered: Value = client.request(req).await.expect("protobuf review");
    assert_eq!(answered["kind"], "LocalSubjectAccessReview");
    assert_eq!(answered["status"]["allowed"], true, "{answered}");

    // Asking is itself authorized: rita may not create reviews.
    let refused = s.kubectl(&["create", "-f", file.to_str().expect("utf8"), "--as", "rita"]);
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains("User \"rita\" cannot create resource \"localsubjectaccessreviews\" in API group \"authorization.k8s.io\" in the namespace \"team-a\""),
        "{err}"
    );
}
