//! cel-go's `ext.TwoVarComprehensions()`, which kpt's environment has and the
//! `cel` crate's interpreter does not: the quantifiers `list.all(i, v, p)` /
//! `map.all(k, v, p)` (likewise `exists`, `existsOne`), and `transformList(i, v,
//! [filter,] e)` / `transformMap(k, v, [filter,] e)`.
//!
//! Each is expanded into an ordinary one-variable comprehension over the pairs
//! `[index or key, value]` of the receiver (the function [`ENTRIES`]), with the
//! two names in the predicate replaced by the pair's elements.

use std::sync::Arc;

use cel::common::ast::{
    CallExpr, ComprehensionExpr, Expr, IdedExpr, ListExpr, LiteralValue, MapExpr, operators,
};
use cel::parser::{Macro, MacroExprHelper, ParseError};

/// The function giving a list's `[index, element]` or a map's `[key, value]` pairs
/// (a name no expression can spell).
pub const ENTRIES: &str = "@kpt_entries";

/// The function adding one entry to a map, for `transformMap`.
pub const MAP_INSERT: &str = "@kpt_map_insert";

#[derive(Clone, Copy)]
enum Quantifier {
    All,
    Exists,
    ExistsOne,
    TransformList,
    TransformMap,
}

/// The macros to add to the environment.
pub fn macros() -> Vec<Macro> {
    let mut out = Vec::new();
    for (name, q, arities) in [
        ("all", Quantifier::All, &[3][..]),
        ("exists", Quantifier::Exists, &[3]),
        ("existsOne", Quantifier::ExistsOne, &[3]),
        ("exists_one", Quantifier::ExistsOne, &[3]),
        ("transformList", Quantifier::TransformList, &[3, 4]),
        ("transformMap", Quantifier::TransformMap, &[3, 4]),
    ] {
        for &n in arities {
            out.push(Macro::receiver(name, n, move |h, t, a| expand(q, h, t, a)));
        }
    }
    out
}

/// `map` with `key` set to `value`.
pub fn map_insert(
    map: cel::Value,
    key: cel::Value,
    value: cel::Value,
) -> Result<cel::Value, cel::ExecutionError> {
    let key = match key {
        cel::Value::Int(i) => cel::objects::Key::Int(i),
        cel::Value::UInt(u) => cel::objects::Key::Uint(u),
        cel::Value::Bool(b) => cel::objects::Key::Bool(b),
        cel::Value::String(s) => cel::objects::Key::String(s),
        other => return Err(cel::ExecutionError::UnsupportedKeyType(other)),
    };
    let cel::Value::Map(m) = map else {
        return Err(cel::ExecutionError::function_error(
            "transformMap",
            "not a map",
        ));
    };
    let mut entries = (*m.map).clone();
    entries.insert(key, value);
    Ok(cel::Value::Map(entries.into()))
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
    let (Some(range), [first, second, ..]) = (target.take(), args.as_slice()) else {
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
    // The predicate or transform, and a transform's optional filter before it.
    let mut rest: Vec<IdedExpr> = args.drain(..).skip(2).collect();
    // A name of its own per expansion, so nested quantifiers do not capture it.
    let pair_var = format!("@kv{}", ident(h, "").id);
    for e in &mut rest {
        for (name, index) in [(&key, 0), (&value, 1)] {
            substitute(
                e,
                name,
                &mut |h2: &mut MacroExprHelper<'_>| {
                    let p = ident(h2, &pair_var);
                    let i = literal(h2, LiteralValue::Int((index as i64).into()));
                    call(h2, operators::INDEX, None, vec![p, i])
                },
                h,
            );
        }
    }
    let Some(predicate) = rest.pop() else {
        return Ok(None);
    };
    let filter = rest.pop();
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
        Quantifier::TransformList | Quantifier::TransformMap => {
            let list = matches!(q, Quantifier::TransformList);
            let init = if list {
                h.next_expr(Expr::List(ListExpr::new(Vec::new())))
            } else {
                h.next_expr(Expr::Map(MapExpr::default()))
            };
            let cond = literal(h, LiteralValue::Boolean(true.into()));
            let a = ident(h, &accu);
            let grown = if list {
                let one = h.next_expr(Expr::List(ListExpr::new(vec![predicate])));
                call(h, operators::ADD, None, vec![a, one])
            } else {
                let p = ident(h, &pair_var);
                let zero = literal(h, LiteralValue::Int(0.into()));
                let k = call(h, operators::INDEX, None, vec![p, zero]);
                call(h, MAP_INSERT, None, vec![a, k, predicate])
            };
            let step = match filter {
                Some(f) => {
                    let a = ident(h, &accu);
                    call(h, operators::CONDITIONAL, None, vec![f, grown, a])
                }
                None => grown,
            };
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
