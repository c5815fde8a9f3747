//! Decoding of the `rbac.authorization.k8s.io/v1` kinds, which kubectl's `create role`,
//! `create clusterrole`, `create rolebinding` and `create clusterrolebinding` send as protobuf.

use serde_json::{Map, Value, json};

use super::{
    Field, ProtobufError, envelope, fields, map_entry, object_meta, string, string_fields,
    string_lists,
};

/// `PolicyRule`: 1 verbs, 2 apiGroups, 3 resources, 4 resourceNames, 5 nonResourceURLs (all
/// repeated).
fn policy_rule(b: &[u8]) -> Result<Value, ProtobufError> {
    const NAMES: [&str; 5] = [
        "verbs",
        "apiGroups",
        "resources",
        "resourceNames",
        "nonResourceURLs",
    ];
    Ok(Value::Object(string_lists(b, &NAMES)?))
}

/// `LabelSelector`: 1 matchLabels, 2 matchExpressions {1 key, 2 operator, 3 values}.
fn label_selector(b: &[u8]) -> Result<Value, ProtobufError> {
    let mut labels = Map::new();
    let mut exprs = Vec::new();
    for (n, f) in fields(b)? {
        match (n, f) {
            (1, Field::Bytes(v)) => {
                let (k, val) = map_entry(v)?;
                labels.insert(k, string(val)?.into());
            }
            (2, Field::Bytes(v)) => {
                let mut e = Map::new();
                let mut values = Vec::new();
                for (en, ef) in fields(v)? {
                    match (en, ef) {
                        (1, Field::Bytes(s)) => {
                            e.insert("key".into(), string(s)?.into());
                        }
                        (2, Field::Bytes(s)) => {
                            e.insert("operator".into(), string(s)?.into());
                        }
                        (3, Field::Bytes(s)) => values.push(Value::String(string(s)?)),
                        _ => {}
                    }
                }
                if !values.is_empty() {
                    e.insert("values".into(), Value::Array(values));
                }
                exprs.push(Value::Object(e));
            }
            _ => {}
        }
    }
    let mut m = Map::new();
    if !labels.is_empty() {
        m.insert("matchLabels".into(), Value::Object(labels));
    }
    if !exprs.is_empty() {
        m.insert("matchExpressions".into(), Value::Array(exprs));
    }
    Ok(Value::Object(m))
}

/// Decodes a Role, ClusterRole, RoleBinding or ClusterRoleBinding into its JSON form.
pub fn decode_rbac(body: &[u8]) -> Result<Value, ProtobufError> {
    let (api_version, kind, raw) = envelope(body)?;
    let mut obj = json!({"apiVersion": api_version, "kind": kind});
    let binding = match kind.as_str() {
        "Role" | "ClusterRole" => false,
        "RoleBinding" | "ClusterRoleBinding" => true,
        other => {
            return Err(ProtobufError(format!(
                "protobuf is not supported for kind {other:?}; send JSON"
            )));
        }
    };
    let mut list = Vec::new();
    for (n, f) in fields(raw)? {
        match (n, f, binding) {
            (1, Field::Bytes(v), _) => obj["metadata"] = object_meta(v)?,
            (2, Field::Bytes(v), false) => list.push(policy_rule(v)?),
            (3, Field::Bytes(v), false) => {
                let mut selectors = Vec::new();
                for (an, af) in fields(v)? {
                    if let (1, Field::Bytes(s)) = (an, af) {
                        selectors.push(label_selector(s)?);
                    }
                }
                obj["aggregationRule"] = json!({"clusterRoleSelectors": selectors});
            }
            (2, Field::Bytes(v), true) => list.push(Value::Object(string_fields(
                v,
                &["kind", "apiGroup", "name", "namespace"],
            )?)),
            (3, Field::Bytes(v), true) => {
                obj["roleRef"] = Value::Object(string_fields(v, &["apiGroup", "kind", "name"])?);
            }
            _ => {}
        }
    }
    if binding {
        if !list.is_empty() {
            obj["subjects"] = Value::Array(list);
        }
    } else {
        obj["rules"] = Value::Array(list);
    }
    Ok(obj)
}

#[cfg(test)]
mod tests {
    use super::super::testing::field;
    use super::*;

    fn wrap(kind: &[u8], raw: &[u8]) -> Vec<u8> {
        super::super::testing::wrap(b"rbac.authorization.k8s.io/v1", kind, raw)
    }

    #[test]
    fn decodes_a_role_binding() {
        let meta = [field(1, b"authors"), field(3, b"default")].concat();
        let subject = [
            field(1, b"User"),
            field(2, b"rbac.authorization.k8s.io"),
            field(3, b"alice"),
        ]
        .concat();
        let role_ref = [
            field(1, b"rbac.authorization.k8s.io"),
            field(2, b"ClusterRole"),
            field(3, b"porch-author"),
        ]
        .concat();
        let raw = [field(1, &meta), field(2, &subject), field(3, &role_ref)].concat();
        let v = decode_rbac(&wrap(b"RoleBinding", &raw)).expect("decodes");
        assert_eq!(v["metadata"]["namespace"], "default");
        assert_eq!(
            v["subjects"][0],
            json!({"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "alice"})
        );
        assert_eq!(v["roleRef"]["name"], "porch-author");
    }

    #[test]
    fn decodes_a_cluster_role_with_rules_and_aggregation() {
        let rule = [
            field(1, b"get"),
            field(1, b"list"),
            field(2, b""),
            field(3, b"secrets"),
            field(4, b"a"),
        ]
        .concat();
        let entry = [field(1, b"agg"), field(2, b"true")].concat();
        let expr = [field(1, b"tier"), field(2, b"In"), field(3, b"x")].concat();
        let selector = [field(1, &entry), field(2, &expr)].concat();
        let raw = [
            field(1, &field(1, b"r")),
            field(2, &rule),
            field(3, &field(1, &selector)),
        ]
        .concat();
        let v = decode_rbac(&wrap(b"ClusterRole", &raw)).expect("decodes");
        assert_eq!(
            v["rules"],
            json!([{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["secrets"], "resourceNames": ["a"]}])
        );
        assert_eq!(
            v["aggregationRule"]["clusterRoleSelectors"][0],
            json!({"matchLabels": {"agg": "true"}, "matchExpressions": [{"key": "tier", "operator": "In", "values": ["x"]}]})
        );
    }
}
