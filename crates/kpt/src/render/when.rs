//! A pipeline step's `when:` CEL expression (kpt HEAD's conditional execution):
//! the step runs only when the expression, evaluated over the step's input as the
//! list variable `resources`, yields `true`.
//!
//! Like kpt, an expression that does not parse, names anything but `resources`,
//! or whose checked type is not `bool` is an error of the step, not a skip; so is
//! an evaluation that fails.

mod twovar;
mod types;

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use serde_json::Value as Json;

use crate::yaml::Node;

/// cel-go's parser refuses an expression of more code points than this (its
/// default `ParserExpressionSizeLimit`; kpt HEAD sets no length limit of its own).
pub const MAX_EXPRESSION_LEN: usize = 100_000;

/// Why a `when:` expression could not decide.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WhenError {
    #[error("failed to compile CEL expression: {0}")]
    Compile(String),
    #[error("failed to evaluate CEL expression: {0}")]
    Eval(String),
    #[error("CEL expression must return a boolean, got {0}")]
    NotBool(String),
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

/// A resource as kpt hands it to CEL (`ensureMetadata`): its fields as plain
/// data, with `apiVersion`, `kind`, `metadata.name` and `metadata.namespace`
/// present (empty when the resource has none, and a `metadata` that is no mapping
/// replaced), so `r.kind == "Deployment"` never fails for want of a field.
fn resource_value(node: &Node) -> cel::Value {
    let mut value = node.to_value();
    if let Json::Object(map) = &mut value {
        for key in ["apiVersion", "kind"] {
            map.entry(key)
                .or_insert_with(|| Json::String(String::new()));
        }
        let metadata = map
            .entry("metadata")
            .or_insert_with(|| Json::Object(Default::default()));
        if !metadata.is_object() {
            *metadata = Json::Object(Default::default());
        }
        if let Json::Object(meta) = metadata {
            for key in ["name", "namespace"] {
                meta.entry(key)
                    .or_insert_with(|| Json::String(String::new()));
            }
        }
    }
    to_cel(&value)
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

/// kpt's CEL environment, as far as the `cel` crate has it: the standard
/// library, optional values (`r.?spec.?replicas.orValue(0)`), the string and list
/// extensions (`lowerAscii`, `split`, `join`, `sort`, `distinct`, …) and the
/// two-variable comprehensions; `sets.*` are added to each context.
fn environment() -> Option<Arc<cel::Env>> {
    static ENV: OnceLock<Option<Arc<cel::Env>>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = cel::Env::stdlib().with_optional_support(true);
        env.add_extension(cel::extensions::strings).ok()?;
        env.add_extension(cel::extensions::lists).ok()?;
        for m in twovar::macros() {
            env.add_macro(m).ok()?;
        }
        Some(Arc::new(env))
    })
    .clone()
}

/// cel-go's `ext.Sets()`: lists compared as sets, by CEL equality.
fn add_sets(ctx: &mut cel::Context) -> Result<(), cel::DeclarationError> {
    type List = Arc<Vec<cel::Value>>;
    ctx.add_function("sets.contains", |a: List, b: List| {
        b.iter().all(|x| a.contains(x))
    })?;
    ctx.add_function("sets.equivalent", |a: List, b: List| {
        b.iter().all(|x| a.contains(x)) && a.iter().all(|x| b.contains(x))
    })?;
    ctx.add_function("sets.intersects", |a: List, b: List| {
        b.iter().any(|x| a.contains(x))
    })
}

/// cel-go's words for the evaluation errors both interpreters have.
fn eval_message(e: &cel::ExecutionError) -> String {
    use cel::ExecutionError as E;
    match e {
        E::NoSuchKey(k) => format!("no such key: {k}"),
        E::NoSuchOverload(_) | E::UnsupportedBinaryOperator(..) => "no such overload".into(),
        E::DivisionByZero(_) => "division by zero".into(),
        E::RemainderByZero(_) => "modulus by zero".into(),
        E::Overflow(_, cel::Value::UInt(_), _) => "unsigned integer overflow".into(),
        E::Overflow(..) => "integer overflow".into(),
        other => other.to_string(),
    }
}

/// Evaluate `expr` over `resources`: `Ok(true)` runs the step, `Ok(false)` skips it.
pub fn evaluate(expr: &str, resources: &[Node]) -> Result<bool, WhenError> {
    // The `cel` crate parses and evaluates recursively, one frame per level of a
    // long operator chain (`1 + 1 + …`), which a caller's small thread stack (a
    // test's, an async worker's) cannot hold; so the work gets a stack of its own.
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("cel-when".into())
            .stack_size(EVAL_STACK)
            .spawn_scoped(scope, || evaluate_here(expr, resources))
            .map_err(|e| WhenError::Eval(e.to_string()))?
            .join()
            .unwrap_or_else(|_| Err(WhenError::Eval("CEL evaluation panicked".into())))
    })
}

/// Enough for the deepest expression [`MAX_EXPRESSION_LEN`] allows; only the
/// pages used are committed.
const EVAL_STACK: usize = 256 << 20;

fn evaluate_here(expr: &str, resources: &[Node]) -> Result<bool, WhenError> {
    let size = expr.chars().count();
    if size > MAX_EXPRESSION_LEN {
        return Err(WhenError::Compile(format!(
            "ERROR: <input>:-1:0: expression code point size exceeds limit: size: {size}, limit {MAX_EXPRESSION_LEN}"
        )));
    }
    let env = environment()
        .ok_or_else(|| WhenError::Compile("failed to create CEL environment".into()))?;
    let program = env
        .compile(expr)
        .map_err(|e| WhenError::Compile(e.to_string().replace("\n| ", "\n | ")))?;
    // What cel-go's checker refuses before anything is evaluated.
    match types::check(program.expression(), program.source_info()) {
        Err(refused) => return Err(WhenError::Compile(refused)),
        Ok(types::Ty::Bool | types::Ty::Unknown) => {}
        Ok(other) => return Err(WhenError::NotBool(other.to_string())),
    }
    let list: Vec<cel::Value> = resources.iter().map(resource_value).collect();
    let mut ctx = cel::Context::with_env(env);
    add_sets(&mut ctx).map_err(|e| WhenError::Compile(e.to_string()))?;
    ctx.add_function(twovar::ENTRIES, twovar::entries)
        .map_err(|e| WhenError::Compile(e.to_string()))?;
    ctx.add_function(twovar::MAP_INSERT, twovar::map_insert)
        .map_err(|e| WhenError::Compile(e.to_string()))?;
    ctx.add_variable_from_value("resources", cel::Value::List(Arc::new(list)));
    match program
        .execute(&ctx)
        .map_err(|e| WhenError::Eval(eval_message(&e)))?
    {
        cel::Value::Bool(b) => Ok(b),
        other => Err(WhenError::NotBool(type_name(&other).to_string())),
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
            Err(WhenError::NotBool("int".into()))
        );
        assert!(matches!(
            evaluate("resources.exists(r, ", &r),
            Err(WhenError::Compile(_))
        ));
        // Past cel-go's parser limit; a long expression under it is fine.
        assert_eq!(
            evaluate(&"x".repeat(MAX_EXPRESSION_LEN + 1), &r),
            Err(WhenError::Compile(
                "ERROR: <input>:-1:0: expression code point size exceeds limit: size: 100001, limit 100000".into()
            ))
        );
        let long = vec!["true"; 3000].join(" && ");
        assert!(long.len() > 10_000);
        assert_eq!(evaluate(&long, &r), Ok(true));
        // An operator chain nested past the parser's limit is refused, not a crash.
        let deep = format!("{} > 0", vec!["1"; 5000].join(" + "));
        assert_eq!(
            evaluate(&deep, &r),
            Err(WhenError::Compile(
                "ERROR: <input>:-1:0: expression recursion limit exceeded: 250".into()
            ))
        );
    }

    #[test]
    fn empty_input_is_an_empty_list() {
        assert_eq!(evaluate("resources.size() == 0", &[]), Ok(true));
    }

    #[test]
    fn the_checker_refuses_undeclared_names_and_non_boolean_types_before_evaluating() {
        // No resources at all: these fail on their checked type alone.
        let not_bool = [
            ("resources[0].metadata.name", "dyn"),
            ("resources.map(x, x.kind)", "list(dyn)"),
            ("resources.filter(x, true)", "list(dyn)"),
            ("'text'", "string"),
            ("[7, 8]", "list(int)"),
            ("resources.size() + 2", "int"),
        ];
        for (e, ty) in not_bool {
            assert_eq!(
                evaluate(e, &[]),
                Err(WhenError::NotBool(ty.to_string())),
                "{e}"
            );
        }
        let err = evaluate("resources.exists(x, x.kind == wanted)", &[]).expect_err("undeclared");
        assert_eq!(
            err.to_string(),
            "failed to compile CEL expression: ERROR: <input>:1:31: undeclared reference to \
             'wanted' (in container '')\n | resources.exists(x, x.kind == wanted)\n | \
             ..............................^"
        );
        // Comprehension variables, type names and a ternary of booleans are fine.
        assert_eq!(
            evaluate("resources.all(x, type(x) == map) ? true : false", &items()),
            Ok(true)
        );
    }

    #[test]
    fn resources_lacking_identity_fields_read_as_empty_strings() {
        let bare = vec![parse_one("data:\n  k: v\n").expect("yaml")];
        assert_eq!(
            evaluate(
                "resources.exists(x, x.kind == '' && x.apiVersion == '' && x.metadata.name == '')",
                &bare
            ),
            Ok(true)
        );
        // A metadata that is no mapping is replaced; a present name is kept.
        let odd = vec![
            parse_one("kind: A\nmetadata: nonsense\n").expect("yaml"),
            parse_one("kind: B\nmetadata:\n  name: b\n").expect("yaml"),
        ];
        assert_eq!(
            evaluate(
                "resources.all(x, x.metadata.namespace == '') && resources.map(x, x.metadata.name) == ['', 'b']",
                &odd
            ),
            Ok(true)
        );
        // Other missing fields are still errors, in cel-go's words.
        assert_eq!(
            evaluate("resources.exists(x, x.spec.paused)", &bare),
            Err(WhenError::Eval("no such key: spec".into()))
        );
        for (e, want) in [
            ("resources.exists(x, x.data.k > 1)", "no such overload"),
            ("resources.exists(x, x.data.k + 1 == 2)", "no such overload"),
            ("resources.size() / 0 == 1", "division by zero"),
            ("resources.size() % 0 == 1", "modulus by zero"),
            (
                "9223372036854775807 + resources.size() > 0",
                "integer overflow",
            ),
        ] {
            assert_eq!(evaluate(e, &bare), Err(WhenError::Eval(want.into())), "{e}");
        }
    }

    #[test]
    fn string_list_set_and_optional_extensions_are_available() {
        let r = items();
        let yes = [
            "resources.exists(x, x.kind.lowerAscii() == 'deployment')",
            "resources.map(x, x.metadata.name).join('+') == 'app-config+web'",
            "'a.b.c'.split('.').size() == 3",
            "resources.map(x, x.kind).sort() == ['ConfigMap', 'Deployment']",
            "sets.contains(resources.map(x, x.kind), ['Deployment'])",
            "sets.equivalent(['a', 'b'], ['b', 'a'])",
            "sets.intersects(resources.map(x, x.metadata.name), ['web', 'db'])",
            "resources.exists(x, x.?spec.?replicas.orValue(0) == 3)",
        ];
        for e in yes {
            assert_eq!(evaluate(e, &r), Ok(true), "{e}");
        }
        assert_eq!(evaluate("sets.contains(['a'], ['a', 'z'])", &r), Ok(false));
    }

    #[test]
    fn two_variable_quantifiers_see_index_or_key_and_value() {
        let r = items();
        let yes = [
            "resources.all(i, x, i < 2 && x.kind != '')",
            "resources.exists(i, x, i == 1 && x.metadata.name == 'web')",
            "resources.existsOne(i, x, x.kind == 'ConfigMap')",
            "resources[0].data.exists(k, v, k == 'env' && v == 'prod')",
            // An inner quantifier may reuse a name; it hides the outer one.
            "resources.exists(i, x, [7].all(i, y, i == 0 && y == 7))",
            "resources.transformList(i, x, x.kind) == ['ConfigMap', 'Deployment']",
            "resources.transformList(i, x, i > 0, x.metadata.name) == ['web']",
            "resources[0].data.transformMap(k, v, v + '!') == {'env': 'prod!'}",
            "resources.transformMap(i, x, x.kind.size() > 9, x.kind)[1] == 'Deployment'",
        ];
        for e in yes {
            assert_eq!(evaluate(e, &r), Ok(true), "{e}");
        }
        assert_eq!(evaluate("resources.exists(i, x, i > 1)", &r), Ok(false));
    }

    #[test]
    fn compile_errors_are_laid_out_as_cel_go_lays_them_out() {
        let err = evaluate("1 +", &[]).expect_err("syntax");
        let text = err.to_string();
        assert!(
            text.starts_with("failed to compile CEL expression: ERROR: <input>:1:4: "),
            "{text}"
        );
        assert!(text.ends_with("\n | 1 +\n | ...^"), "{text}");
        // A wide character before the reference is marked with a wide dot.
        let err = evaluate("'\u{e9}' == nope", &[]).expect_err("undeclared");
        assert!(
            err.to_string()
                .ends_with(" | '\u{e9}' == nope\n | .\u{ff0e}.....^"),
            "{err}"
        );
        // Names of functions outside kpt's environment are undeclared too.
        let err = evaluate("math.greatest(1, 2) == 2", &[]).expect_err("undeclared");
        assert!(
            err.to_string().contains("undeclared reference to 'math'"),
            "{err}"
        );
    }
}
