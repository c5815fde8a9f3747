//! Label selectors (`matchLabels` + `matchExpressions`) as the Kubernetes selector strings the
//! [`Objects`](crate::objects::Objects) port takes (upstream `metav1.LabelSelectorAsSelector`).

use std::collections::BTreeMap;

use serde::Deserialize;

/// One `matchExpressions` entry.
#[derive(Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Requirement {
    #[serde(default)]
    pub key: String,
    #[serde(default)]
    pub operator: String,
    #[serde(default)]
    pub values: Option<Vec<String>>,
}

/// The selector string; an empty selector (select everything) is `""`. Errors name the bad
/// requirement, as `LabelSelectorAsSelector` refuses it.
pub fn to_selector_string(
    match_labels: Option<&BTreeMap<String, String>>,
    match_expressions: &[Requirement],
) -> Result<String, String> {
    let mut parts = Vec::new();
    for (k, v) in match_labels.into_iter().flatten() {
        parts.push(format!("{k}={v}"));
    }
    for r in match_expressions {
        let values = r.values.as_deref().unwrap_or_default();
        if r.key.is_empty() {
            return Err("label selector requirement has an empty key".into());
        }
        match r.operator.as_str() {
            "In" | "NotIn" => {
                if values.is_empty() {
                    return Err(format!(
                        "values for key {:?}: for 'in', 'notin' operators, values set can't be empty",
                        r.key
                    ));
                }
                let op = if r.operator == "In" { "in" } else { "notin" };
                parts.push(format!("{} {op} ({})", r.key, values.join(",")));
            }
            "Exists" | "DoesNotExist" => {
                if !values.is_empty() {
                    return Err(format!(
                        "values for key {:?}: values set must be empty for exists and does not exist",
                        r.key
                    ));
                }
                let bang = if r.operator == "Exists" { "" } else { "!" };
                parts.push(format!("{bang}{}", r.key));
            }
            other => return Err(format!("{other:?} is not a valid label selector operator")),
        }
    }
    Ok(parts.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(key: &str, op: &str, values: &[&str]) -> Requirement {
        Requirement {
            key: key.into(),
            operator: op.into(),
            values: Some(values.iter().map(|s| s.to_string()).collect()),
        }
    }

    #[test]
    fn labels_and_expressions_join_with_commas() {
        let labels = BTreeMap::from([("a".to_string(), "b".to_string())]);
        let s = to_selector_string(
            Some(&labels),
            &[
                req("c", "In", &["x", "y"]),
                req("d", "NotIn", &["z"]),
                req("e", "Exists", &[]),
                req("f", "DoesNotExist", &[]),
            ],
        )
        .expect("test value");
        assert_eq!(s, "a=b,c in (x,y),d notin (z),e,!f");
        assert_eq!(to_selector_string(None, &[]).expect("test value"), "");
    }

    #[test]
    fn bad_requirements_are_refused() {
        assert!(to_selector_string(None, &[req("a", "In", &[])]).is_err());
        assert!(to_selector_string(None, &[req("a", "Exists", &["x"])]).is_err());
        let e = to_selector_string(None, &[req("a", "Near", &["x"])]).expect_err("operator");
        assert_eq!(e, "\"Near\" is not a valid label selector operator");
    }
}
