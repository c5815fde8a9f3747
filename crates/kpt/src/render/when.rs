//! A pipeline step's `when:` CEL expression (kpt HEAD's conditional execution):
//! the step runs only when the expression, evaluated over the step's input as the
//! list variable `resources`, yields `true`.
//!
//! Like kpt, an expression that does not parse or whose result is not a boolean is
//! an error of the step, not a skip.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value as Json;

use crate::yaml::Node;

/// The longest expression kpt accepts.
pub const MAX_EXPRESSION_LEN: usize = 10_000;

/// Why a `when:` expression could not decide.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WhenError {
    #[error("failed to compile CEL expression: {0}")]
    Compile(String),
    #[error("CEL expression exceeds the maximum length of {MAX_EXPRESSION_LEN} characters")]
    TooLong,
    #[error("failed to evaluate CEL expression: {0}")]
    Eval(String),
    #[error("CEL expression must return a boolean, got {0}")]
    NotBool(&'static str),
}

fn to_cel(v: &Json) -> cel::Value {
    match v {
        Json::Null => cel::Value::Null,
        Json::Bool(b) => cel::Value::Bool(*b),
        Json::Number(n) => {
            if let Some(i) = n.as_i64() {
                cel::Value::Int(i)
            } else if let Some(u) = n.as_u64() {
                cel::Value::UInt(u)
            } else {
                cel::Value::Float(n.as_f64().unwrap_or_default())
            }
        }
        Json::String(s) => cel::Value::String(Arc::new(s.clone())),
        Json::Array(items) => cel::Value::List(Arc::new(items.iter().map(to_cel).collect())),
        Json::Object(map) => {
            let m: HashMap<String, cel::Value> =
                map.iter().map(|(k, v)| (k.clone(), to_cel(v))).collect();
            m.into()
        }
    }
}

fn type_name(v: &cel::Value) -> &'static str {
    match v {
        cel::Value::Int(_) => "int",
        cel::Value::UInt(_) => "uint",
        cel::Value::Float(_) => "double",
        cel::Value::String(_) => "string",
        cel::Value::Bytes(_) => "bytes",
        cel::Value::List(_) => "list",
        cel::Value::Map(_) => "map",
        cel::Value::Null => "null_type",
        cel::Value::Bool(_) => "bool",
        _ => "dyn",
    }
}

/// Evaluate `expr` over `resources`: `Ok(true)` runs the step, `Ok(false)` skips it.
pub fn evaluate(expr: &str, resources: &[Node]) -> Result<bool, WhenError> {
    if expr.len() > MAX_EXPRESSION_LEN {
        return Err(WhenError::TooLong);
    }
    let program = cel::Program::compile(expr).map_err(|e| WhenError::Compile(e.to_string()))?;
    let list: Vec<cel::Value> = resources.iter().map(|n| to_cel(&n.to_value())).collect();
    let mut ctx = cel::Context::default();
    ctx.add_variable_from_value("resources", cel::Value::List(Arc::new(list)));
    match program
        .execute(&ctx)
        .map_err(|e| WhenError::Eval(e.to_string()))?
    {
        cel::Value::Bool(b) => Ok(b),
        other => Err(WhenError::NotBool(type_name(&other))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse_one;

    fn items() -> Vec<Node> {
        [
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-config\ndata:\n  env: prod\n",
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 3\n",
        ]
        .iter()
        .map(|t| parse_one(t).expect("yaml"))
        .collect()
    }

    #[test]
    fn exists_filter_and_nested_fields_decide() {
        let r = items();
        let yes = [
            "resources.exists(r, r.kind == 'ConfigMap' && r.metadata.name == 'app-config')",
            "resources.filter(r, r.kind == 'Deployment').size() > 0",
            "resources.exists(r, r.kind == 'Deployment' && r.spec.replicas > 2)",
            "resources.exists(r, r.kind == 'ConfigMap' && r.data.env == 'prod')",
            "true",
        ];
        for e in yes {
            assert_eq!(evaluate(e, &r), Ok(true), "{e}");
        }
        let no = [
            "resources.exists(r, r.kind == 'Secret')",
            "resources.size() == 0",
            "false",
        ];
        for e in no {
            assert_eq!(evaluate(e, &r), Ok(false), "{e}");
        }
    }

    #[test]
    fn non_boolean_and_broken_expressions_are_errors() {
        let r = items();
        assert_eq!(
            evaluate("resources.size()", &r),
            Err(WhenError::NotBool("int"))
        );
        assert!(matches!(
            evaluate("resources.exists(r, ", &r),
            Err(WhenError::Compile(_))
        ));
        assert_eq!(
            evaluate(&"x".repeat(MAX_EXPRESSION_LEN + 1), &r),
            Err(WhenError::TooLong)
        );
    }

    #[test]
    fn empty_input_is_an_empty_list() {
        assert_eq!(evaluate("resources.size() == 0", &[]), Ok(true));
    }
}
