//! Decoding of the access and identity reviews kubectl 1.32 sends as protobuf only
//! (`kubectl auth can-i`, `kubectl auth can-i --list`, `kubectl auth whoami`): the
//! `authorization.k8s.io/v1` SelfSubjectAccessReview, SubjectAccessReview,
//! LocalSubjectAccessReview and SelfSubjectRulesReview, and the `authentication.k8s.io/v1`
//! SelfSubjectReview. Only their specs are read (a status sent by a client is ignored, as
//! kube-apiserver overwrites it).

use serde_json::{Map, Value, json};

use super::{
    Field, ProtobufError, envelope, fields, map_entry, object_meta, string, string_fields,
};

/// `ResourceAttributes`: 1 namespace, 2 verb, 3 group, 4 version, 5 resource, 6 subresource,
/// 7 name (8 and 9, the selector attributes, are not used by RBAC).
fn resource_attributes(b: &[u8]) -> Result<Value, ProtobufError> {
    const NAMES: [&str; 7] = [
        "namespace",
        "verb",
        "group",
        "version",
        "resource",
        "subresource",
        "name",
    ];
    Ok(Value::Object(string_fields(b, &NAMES)?))
}

/// `NonResourceAttributes`: 1 path, 2 verb.
fn non_resource_attributes(b: &[u8]) -> Result<Value, ProtobufError> {
    Ok(Value::Object(string_fields(b, &["path", "verb"])?))
}

/// `SubjectAccessReviewSpec` (and the self and local variants, which have fields 1 and 2 only):
/// 1 resourceAttributes, 2 nonResourceAttributes, 3 user, 4 groups, 5 extra, 6 uid.
fn access_review_spec(b: &[u8]) -> Result<Value, ProtobufError> {
    let mut m = Map::new();
    let mut groups = Vec::new();
    let mut extra = Map::new();
    for (n, f) in fields(b)? {
        match (n, f) {
            (1, Field::Bytes(v)) => {
                m.insert("resourceAttributes".into(), resource_attributes(v)?);
            }
            (2, Field::Bytes(v)) => {
                m.insert("nonResourceAttributes".into(), non_resource_attributes(v)?);
            }
            (3, Field::Bytes(v)) => {
                m.insert("user".into(), string(v)?.into());
            }
            (4, Field::Bytes(v)) => groups.push(Value::String(string(v)?)),
            (5, Field::Bytes(v)) => {
                // map<string, ExtraValue>; ExtraValue is `repeated string items = 1`.
                let (k, val) = map_entry(v)?;
                let mut items = Vec::new();
                for (vn, vf) in fields(val)? {
                    if let (1, Field::Bytes(s)) = (vn, vf) {
                        items.push(Value::String(string(s)?));
                    }
                }
                extra.insert(k, Value::Array(items));
            }
            (6, Field::Bytes(v)) => {
                m.insert("uid".into(), string(v)?.into());
            }
            _ => {}
        }
    }
    if !groups.is_empty() {
        m.insert("groups".into(), Value::Array(groups));
    }
    if !extra.is_empty() {
        m.insert("extra".into(), Value::Object(extra));
    }
    Ok(Value::Object(m))
}

/// `SelfSubjectRulesReviewSpec`: 1 namespace.
fn rules_review_spec(b: &[u8]) -> Result<Value, ProtobufError> {
    Ok(Value::Object(string_fields(b, &["namespace"])?))
}

/// Decodes one of the review kinds into its JSON form.
pub fn decode_review(body: &[u8]) -> Result<Value, ProtobufError> {
    let (api_version, kind, raw) = envelope(body)?;
    let mut obj = json!({"apiVersion": api_version, "kind": kind, "metadata": {}});
    let spec: fn(&[u8]) -> Result<Value, ProtobufError> = match kind.as_str() {
        "SelfSubjectAccessReview" | "SubjectAccessReview" | "LocalSubjectAccessReview" => {
            access_review_spec
        }
        "SelfSubjectRulesReview" => rules_review_spec,
        // Metadata and status only: nothing to read but the metadata.
        "SelfSubjectReview" => |_: &[u8]| Ok(Value::Null),
        other => {
            return Err(ProtobufError(format!(
                "protobuf is not supported for kind {other:?}; send JSON"
            )));
        }
    };
    for (n, f) in fields(raw)? {
        match (n, f) {
            (1, Field::Bytes(v)) => obj["metadata"] = object_meta(v)?,
            (2, Field::Bytes(v)) => {
                let s = spec(v)?;
                if !s.is_null() {
                    obj["spec"] = s;
                }
            }
            _ => {}
        }
    }
    Ok(obj)
}

#[cfg(test)]
mod tests {
    use super::super::testing::{field, wrap};
    use super::*;

    #[test]
    fn decodes_a_self_subject_access_review() {
        let attrs = [
            field(1, b"default"),
            field(2, b"update"),
            field(3, b"porch.kpt.dev"),
            field(5, b"packagerevisions"),
            field(6, b"approval"),
        ]
        .concat();
        let spec = field(1, &attrs);
        let body = wrap(
            b"authorization.k8s.io/v1",
            b"SelfSubjectAccessReview",
            &field(2, &spec),
        );
        let v = decode_review(&body).expect("decodes");
        assert_eq!(v["kind"], "SelfSubjectAccessReview");
        assert_eq!(
            v["spec"]["resourceAttributes"],
            json!({"namespace": "default", "verb": "update", "group": "porch.kpt.dev", "resource": "packagerevisions", "subresource": "approval"})
        );
    }

    #[test]
    fn decodes_a_subject_access_review_with_user_and_groups() {
        let nr = [field(1, b"/healthz"), field(2, b"get")].concat();
        let spec = [
            field(2, &nr),
            field(3, b"bob"),
            field(4, b"a"),
            field(4, b"b"),
        ]
        .concat();
        let body = wrap(
            b"authorization.k8s.io/v1",
            b"SubjectAccessReview",
            &field(2, &spec),
        );
        let v = decode_review(&body).expect("decodes");
        assert_eq!(v["spec"]["user"], "bob");
        assert_eq!(v["spec"]["groups"], json!(["a", "b"]));
        assert_eq!(v["spec"]["nonResourceAttributes"]["path"], "/healthz");
    }

    #[test]
    fn decodes_a_local_subject_access_review() {
        let attrs = [field(1, b"team-a"), field(2, b"get"), field(5, b"secrets")].concat();
        let spec = [field(1, &attrs), field(3, b"alice")].concat();
        let raw = [field(1, &field(3, b"team-a")), field(2, &spec)].concat();
        let body = wrap(
            b"authorization.k8s.io/v1",
            b"LocalSubjectAccessReview",
            &raw,
        );
        let v = decode_review(&body).expect("decodes");
        assert_eq!(v["kind"], "LocalSubjectAccessReview");
        assert_eq!(v["metadata"]["namespace"], "team-a");
        assert_eq!(v["spec"]["user"], "alice");
        assert_eq!(
            v["spec"]["resourceAttributes"],
            json!({"namespace": "team-a", "verb": "get", "resource": "secrets"})
        );
    }

    #[test]
    fn decodes_rules_and_identity_reviews() {
        let body = wrap(
            b"authorization.k8s.io/v1",
            b"SelfSubjectRulesReview",
            &field(2, &field(1, b"ns1")),
        );
        assert_eq!(
            decode_review(&body).expect("decodes")["spec"]["namespace"],
            "ns1"
        );
        let body = wrap(b"authentication.k8s.io/v1", b"SelfSubjectReview", &[]);
        assert_eq!(
            decode_review(&body).expect("decodes")["kind"],
            "SelfSubjectReview"
        );
        assert!(decode_review(&wrap(b"v1", b"Pod", &[])).is_err());
    }
}
