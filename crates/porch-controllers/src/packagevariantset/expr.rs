//! CEL evaluation of template expressions (upstream `evalExpr`/`compileExpr`), with the
//! `cel` crate. Every expression must yield a string.
//!
//! The variables are those upstream declares: `repoDefault`, `packageDefault` (strings),
//! `upstream`, `target`, `repository` (maps). Upstream type-checks at compile time, so a
//! reference to an unknown variable fails even in a branch never taken; here it fails when
//! evaluated (`Undeclared reference to 'x'`).

use serde_json::{Map, Value};

/// Variable names, as upstream's constants.
pub const REPO_DEFAULT: &str = "repoDefault";
pub const PACKAGE_DEFAULT: &str = "packageDefault";
pub const UPSTREAM: &str = "upstream";
pub const TARGET: &str = "target";
pub const REPOSITORY: &str = "repository";

/// The variables one PackageVariant's expressions see.
pub struct Evaluator {
    ctx: cel::Context<'static, 'static>,
}

impl Evaluator {
    /// An evaluator with no variables yet.
    pub fn new() -> Self {
        Evaluator {
            ctx: cel::Context::default(),
        }
    }

    /// Binds `name` to a JSON value (strings, maps of strings, nested maps).
    pub fn set(&mut self, name: &str, value: Value) -> Result<(), String> {
        self.ctx
            .add_variable(name, value)
            .map_err(|e| format!("variable {name}: {e}"))
    }

    /// Compiles and runs `expr`; its result must be a string.
    pub fn eval(&self, expr: &str) -> Result<String, String> {
        let program = cel::Program::compile(expr).map_err(|e| e.to_string())?;
        match program.execute(&self.ctx).map_err(|e| e.to_string())? {
            cel::Value::String(s) => Ok(s.as_str().to_string()),
            other => Err(format!(
                "expression returned non-string value: {}",
                show(&other)
            )),
        }
    }
}

impl Default for Evaluator {
    fn default() -> Self {
        Evaluator::new()
    }
}

/// How a non-string result reads in the error message (`2`, `true`, `null`, …).
fn show(v: &cel::Value) -> String {
    match v {
        cel::Value::Int(i) => i.to_string(),
        cel::Value::UInt(u) => u.to_string(),
        cel::Value::Float(f) => f.to_string(),
        cel::Value::Bool(b) => b.to_string(),
        cel::Value::Null => "null".to_string(),
        other => format!("{other:?}"),
    }
}

/// What expressions see of an object: its name, namespace, labels and annotations (upstream
/// `objectToInput`; absent maps read as empty).
pub fn object_input(obj: &Value) -> Value {
    let meta = obj.get("metadata");
    let text = |k: &str| {
        meta.and_then(|m| m.get(k))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let map = |k: &str| {
        meta.and_then(|m| m.get(k))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_else(Map::new)
    };
    let mut out = Map::new();
    out.insert("name".into(), Value::String(text("name")));
    out.insert("namespace".into(), Value::String(text("namespace")));
    out.insert("labels".into(), Value::Object(map("labels")));
    out.insert("annotations".into(), Value::Object(map("annotations")));
    Value::Object(out)
}

#[cfg(test)]
#[path = "expr_tests.rs"]
mod tests;
