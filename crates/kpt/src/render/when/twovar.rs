//! cel-go's `ext.TwoVarComprehensions()` quantifiers, which kpt's environment has
//! and the `cel` crate's interpreter does not: `list.all(i, v, p)` /
//! `map.all(k, v, p)`, and likewise `exists` and `existsOne`.
//!
//! Each is expanded into an ordinary one-variable comprehension over the pairs
//! `[index or key, value]` of the receiver (the function [`ENTRIES`]), with the
//! two names in the predicate replaced by the pair's elements.

use std::sync::Arc;

use cel::common::ast::{CallExpr, ComprehensionExpr, Expr, IdedExpr, LiteralValue, operators};
use cel::parser::{Macro, MacroExprHelper, ParseError};

/// The function giving a list's `[index, element]` or a map's `[key, value]` pairs
/// (a name no expression can spell).
pub const ENTRIES: &str = "@kpt_entries";

#[derive(Clone, Copy)]
enum Quantifier {
    All,
    Exists,
    ExistsOne,
}

/// The three-argument macros to add to the environment.
pub fn macros() -> Vec<Macro> {
    let mut out = Vec::new();
    for (name, q) in [
        ("all", Quantifier::All),
        ("exists", Quantifier::Exists),
        ("existsOne", Quantifier::ExistsOne),
        ("exists_one", Quantifier::ExistsOne),
    ] {
        out.push(Macro::receiver(name, 3, move |h, t, a| expand(q, h, t, a)));
    }
    out
}

/// The pairs of a list or map value.
pub fn entries(value: cel::Value) -> Result<cel::Value, cel::ExecutionError> {
    let pair = |a: cel::Value, b: cel::Value| cel::Value::List(Arc::new(vec![a, b]));
    let pairs: Vec<cel::Value> = match value {
        cel::Value::List(items) => items
            .iter()
            .enumerate()
            .map(|(i, v)| pair(cel::Value::Int(i as i64), v.clone()))
            .collect(),
        cel::Value::Map(m) => m
            .map
            .iter()
            .map(|(k, v)| pair(k.clone().into(), v.clone()))
            .collect(),
        other => {
            return Err(cel::ExecutionError::function_error(
                "all",
                format!("cannot iterate over {other:?}"),
            ));
        }
    };
    Ok(cel::Value::List(Arc::new(pairs)))
}

fn call(
    h: &mut MacroExprHelper<'_>,
    name: &str,
    target: Option<IdedExpr>,
    args: Vec<IdedExpr>,
) -> IdedExpr {
    h.next_expr(Expr::Call(CallExpr {
        func_name: name.to_string(),
        target: target.map(Box::new),
        args,
    }))
}

fn ident(h: &mut MacroExprHelper<'_>, name: &str) -> IdedExpr {
    h.next_expr(Expr::Ident(name.to_string()))
}

fn literal(h: &mut MacroExprHelper<'_>, v: LiteralValue) -> IdedExpr {
    h.next_expr(Expr::Literal(v))
}

fn expand(
    q: Quantifier,
    h: &mut MacroExprHelper<'_>,
    target: &mut Option<IdedExpr>,
    args: &mut Vec<IdedExpr>,
) -> Result<Option<IdedExpr>, ParseError> {
    let (Some(range), [first, second, _]) = (target.take(), args.as_slice()) else {
        return Ok(None);
    };
    let names = |e: &IdedExpr| match &e.expr {
        Expr::Ident(n) => Some(n.clone()),
        _ => None,
    };
    let (Some(key), Some(value)) = (names(first), names(second)) else {
        let id = if names(first).is_none() {
            first.id
        } else {
            second.id
        };
        return Err(h.new_error(id, "argument must be a simple name"));
    };
    let Some(mut predicate) = args.pop() else {
        return Ok(None);
    };
    args.clear();
    // A name of its own per expansion, so nested quantifiers do not capture it.
    let pair_var = format!("@kv{}", ident(h, "").id);
    for (name, index) in [(&key, 0), (&value, 1)] {
        substitute(
            &mut predicate,
            name,
            &mut |h2: &mut MacroExprHelper<'_>| {
                let p = ident(h2, &pair_var);
                let i = literal(h2, LiteralValue::Int((index as i64).into()));
                call(h2, operators::INDEX, None, vec![p, i])
            },
            h,
        );
    }
    let range = call(h, ENTRIES, None, vec![range]);
    let accu = "@result".to_string();
    let (init, cond, step, result) = match q {
        Quantifier::All => {
            let init = literal(h, LiteralValue::Boolean(true.into()));
            let a = ident(h, &accu);
            let cond = call(h, operators::NOT_STRICTLY_FALSE, None, vec![a]);
            let a = ident(h, &accu);
            let step = call(h, operators::LOGICAL_AND, None, vec![a, predicate]);
            (init, cond, step, ident(h, &accu))
        }
        Quantifier::Exists => {
            let init = literal(h, LiteralValue::Boolean(false.into()));
            let a = ident(h, &accu);
            let not = call(h, operators::LOGICAL_NOT, None, vec![a]);
            let cond = call(h, operators::NOT_STRICTLY_FALSE, None, vec![not]);
            let a = ident(h, &accu);
            let step = call(h, operators::LOGICAL_OR, None, vec![a, predicate]);
            (init, cond, step, ident(h, &accu))
        }
        Quantifier::ExistsOne => {
            let init = literal(h, LiteralValue::Int(0.into()));
            let cond = literal(h, LiteralValue::Boolean(true.into()));
            let a = ident(h, &accu);
            let one = literal(h, LiteralValue::Int(1.into()));
            let plus = call(h, operators::ADD, None, vec![a, one]);
            let a = ident(h, &accu);
            let step = call(h, operators::CONDITIONAL, None, vec![predicate, plus, a]);
            let a = ident(h, &accu);
            let one = literal(h, LiteralValue::Int(1.into()));
            (
                init,
                cond,
                step,
                call(h, operators::EQUALS, None, vec![a, one]),
            )
        }
    };
    Ok(Some(h.next_expr(Expr::Comprehension(Box::new(
        ComprehensionExpr {
            iter_range: range,
            iter_var: pair_var,
            iter_var2: None,
            accu_var: accu,
            accu_init: init,
            loop_cond: cond,
            loop_step: step,
            result,
        },
    )))))
}

/// Replaces every free reference to `name` in `e`; a comprehension that binds
/// the name again hides it from its body.
fn substitute(
    e: &mut IdedExpr,
    name: &str,
    make: &mut dyn FnMut(&mut MacroExprHelper<'_>) -> IdedExpr,
    h: &mut MacroExprHelper<'_>,
) {
    match &mut e.expr {
        Expr::Ident(n) if n == name => *e = make(h),
        Expr::Call(c) => {
            if let Some(t) = c.target.as_deref_mut() {
                substitute(t, name, make, h);
            }
            for a in &mut c.args {
                substitute(a, name, make, h);
            }
        }
        Expr::Select(s) => substitute(&mut s.operand, name, make, h),
        Expr::List(l) => {
            for x in &mut l.elements {
                substitute(x, name, make, h);
            }
        }
        Expr::Map(m) => {
            for entry in &mut m.entries {
                if let cel::common::ast::EntryExpr::MapEntry(me) = &mut entry.expr {
                    substitute(&mut me.key, name, make, h);
                    substitute(&mut me.value, name, make, h);
                }
            }
        }
        Expr::Comprehension(c) => {
            substitute(&mut c.iter_range, name, make, h);
            substitute(&mut c.accu_init, name, make, h);
            let rebound =
                c.iter_var == name || c.accu_var == name || c.iter_var2.as_deref() == Some(name);
            if !rebound {
                substitute(&mut c.loop_cond, name, make, h);
                substitute(&mut c.loop_step, name, make, h);
                substitute(&mut c.result, name, make, h);
            }
        }
        _ => {}
    }
}
