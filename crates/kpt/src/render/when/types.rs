//! The part of cel-go's type checker that decides what kpt reports before any
//! evaluation: kpt compiles a `when:` expression with `resources` declared as
//! `list(dyn)`, refuses a reference to anything undeclared, and refuses an
//! expression whose checked output type is not `bool` (a field of a resource is
//! `dyn`, so `resources[0].spec.enabled` is refused even when it holds a boolean).
//!
//! The `cel` crate has no checker, so this infers the output type of the parsed
//! expression for the shapes whose type cel-go fixes without ambiguity; anything
//! else is [`Ty::Unknown`] and left to the check of the evaluated result.

use std::collections::HashMap;
use std::fmt;

use cel::common::ast::{
    EntryExpr, Expr, IdedEntryExpr, IdedExpr, LiteralValue, SourceInfo, operators,
};

/// A checked type, printed as cel-go prints `*types.Type`.
#[derive(Debug, Clone, PartialEq)]
pub enum Ty {
    Bool,
    Int,
    Uint,
    Double,
    String,
    Bytes,
    Null,
    Dyn,
    Type,
    List(Box<Ty>),
    Map(Box<Ty>, Box<Ty>),
    /// Not inferred here; decided by the evaluated value.
    Unknown,
}

impl Ty {
    fn known(&self) -> bool {
        match self {
            Ty::Unknown => false,
            Ty::List(e) => e.known(),
            Ty::Map(k, v) => k.known() && v.known(),
            _ => true,
        }
    }

    fn element(&self) -> Ty {
        match self {
            Ty::List(e) => (**e).clone(),
            Ty::Map(k, _) => (**k).clone(),
            Ty::Dyn => Ty::Dyn,
            _ => Ty::Unknown,
        }
    }

    /// The type two alternatives share; an empty list literal takes the other's.
    fn join(a: Ty, b: Ty) -> Ty {
        match (a, b) {
            (a, b) if a == b => a,
            (Ty::List(x), Ty::List(y)) if *x == Ty::Unknown => Ty::List(y),
            (Ty::List(x), Ty::List(y)) if *y == Ty::Unknown => Ty::List(x),
            _ => Ty::Unknown,
        }
    }
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ty::Bool => f.write_str("bool"),
            Ty::Int => f.write_str("int"),
            Ty::Uint => f.write_str("uint"),
            Ty::Double => f.write_str("double"),
            Ty::String => f.write_str("string"),
            Ty::Bytes => f.write_str("bytes"),
            Ty::Null => f.write_str("null_type"),
            Ty::Dyn | Ty::Unknown => f.write_str("dyn"),
            Ty::Type => f.write_str("type"),
            Ty::List(e) => write!(f, "list({e})"),
            Ty::Map(k, v) => write!(f, "map({k}, {v})"),
        }
    }
}

/// Identifiers cel-go declares as types.
const TYPE_NAMES: &[&str] = &[
    "bool",
    "int",
    "uint",
    "double",
    "string",
    "bytes",
    "list",
    "map",
    "null_type",
    "type",
    "dyn",
    "optional_type",
];

/// Function namespaces of kpt's environment (a call `sets.contains(…)` parses as a
/// call on the identifier `sets`).
const NAMESPACES: &[&str] = &["sets", "strings", "lists", "optional"];

const BOOL_FUNCTIONS: &[&str] = &[
    operators::LOGICAL_AND,
    operators::LOGICAL_OR,
    operators::LOGICAL_NOT,
    operators::EQUALS,
    operators::NOT_EQUALS,
    operators::LESS,
    operators::LESS_EQUALS,
    operators::GREATER,
    operators::GREATER_EQUALS,
    operators::IN,
    operators::NOT_STRICTLY_FALSE,
    "startsWith",
    "endsWith",
    "contains",
    "matches",
    "bool",
    "hasValue",
    "sets.contains",
    "sets.equivalent",
    "sets.intersects",
];

const STRING_FUNCTIONS: &[&str] = &[
    "string",
    "lowerAscii",
    "upperAscii",
    "trim",
    "replace",
    "substring",
    "charAt",
    "join",
    "format",
    "strings.quote",
];

/// How deep an expression may nest: cel-go's parser refuses deeper operator
/// chains, and the `cel` crate's evaluator (and this checker) recurse per level.
pub const MAX_DEPTH: usize = 250;

/// The keys and values of a map or struct literal's entries.
fn entry_children(entries: &[IdedEntryExpr]) -> Vec<&IdedExpr> {
    entries
        .iter()
        .flat_map(|entry| match &entry.expr {
            EntryExpr::MapEntry(me) => vec![&me.key, &me.value],
            EntryExpr::StructField(f) => vec![&f.value],
        })
        .collect()
}

/// The expressions directly inside `e`.
fn children(e: &IdedExpr) -> Vec<&IdedExpr> {
    match &e.expr {
        Expr::Call(c) => c.target.as_deref().into_iter().chain(&c.args).collect(),
        Expr::Select(s) => vec![&*s.operand],
        Expr::List(l) => l.elements.iter().collect(),
        Expr::Map(m) => entry_children(&m.entries),
        Expr::Struct(st) => entry_children(&st.entries),
        Expr::Comprehension(c) => vec![
            &c.iter_range,
            &c.accu_init,
            &c.loop_cond,
            &c.loop_step,
            &c.result,
        ],
        Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => Vec::new(),
    }
}

/// The nesting depth of `root`, counted without recursing.
fn depth(root: &IdedExpr) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(root, 1usize)];
    while let Some((e, d)) = stack.pop() {
        deepest = deepest.max(d);
        stack.extend(children(e).into_iter().map(|x| (x, d + 1)));
    }
    deepest
}

/// The first undeclared identifier, in cel-go's error format, or the output type.
pub fn check(root: &IdedExpr, info: &SourceInfo) -> Result<Ty, String> {
    if depth(root) > MAX_DEPTH {
        return Err(format!(
            "ERROR: <input>:-1:0: expression recursion limit exceeded: {MAX_DEPTH}"
        ));
    }
    let mut scope = HashMap::from([("resources".to_string(), Ty::List(Box::new(Ty::Dyn)))]);
    let mut checker = Checker { info, error: None };
    let ty = checker.infer(root, &mut scope);
    match checker.error {
        Some(e) => Err(e),
        None => Ok(if ty.known() { ty } else { Ty::Unknown }),
    }
}

struct Checker<'a> {
    info: &'a SourceInfo,
    error: Option<String>,
}

impl Checker<'_> {
    fn undeclared(&mut self, id: u64, name: &str) {
        if self.error.is_some() {
            return;
        }
        let source = &self.info.source;
        let start = self.info.offset_for(id).map_or(0, |(s, _)| s as usize);
        // The parser's offsets count bytes; cel-go's columns count characters.
        let before = source.get(..start).unwrap_or(source.as_str());
        let line_no = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column: Vec<char> = before[line_start..].chars().collect();
        let line = source[line_start..].lines().next().unwrap_or_default();
        self.error = Some(format!(
            "ERROR: <input>:{line_no}:{}: undeclared reference to '{name}' (in container '')\n | {}\n | {}{}",
            column.len() + 1,
            line.replace('\t', " "),
            column
                .iter()
                .map(|c| if c.len_utf8() > 1 { '\u{ff0e}' } else { '.' })
                .collect::<String>(),
            match line.chars().nth(column.len()) {
                Some(c) if c.len_utf8() > 1 => '\u{ff3e}',
                _ => '^',
            }
        ));
    }

    fn infer(&mut self, e: &IdedExpr, scope: &mut HashMap<String, Ty>) -> Ty {
        match &e.expr {
            Expr::Literal(l) => match l {
                LiteralValue::Boolean(_) => Ty::Bool,
                LiteralValue::Bytes(_) => Ty::Bytes,
                LiteralValue::Double(_) => Ty::Double,
                LiteralValue::Int(_) => Ty::Int,
                LiteralValue::Null => Ty::Null,
                LiteralValue::String(_) => Ty::String,
                LiteralValue::UInt(_) => Ty::Uint,
            },
            Expr::Ident(name) => {
                if let Some(t) = scope.get(name) {
                    t.clone()
                } else if TYPE_NAMES.contains(&name.as_str()) {
                    Ty::Type
                } else {
                    self.undeclared(e.id, name);
                    Ty::Unknown
                }
            }
            Expr::Select(s) => {
                let operand = self.infer(&s.operand, scope);
                if s.test {
                    return Ty::Bool;
                }
                match operand {
                    Ty::Dyn => Ty::Dyn,
                    Ty::Map(_, v) => *v,
                    _ => Ty::Unknown,
                }
            }
            Expr::List(l) => {
                let types: Vec<Ty> = l.elements.iter().map(|x| self.infer(x, scope)).collect();
                match types.split_first() {
                    None => Ty::List(Box::new(Ty::Unknown)),
                    Some((first, rest)) if rest.iter().all(|t| t == first) => {
                        Ty::List(Box::new(first.clone()))
                    }
                    Some(_) => Ty::Unknown,
                }
            }
            Expr::Map(m) => {
                let mut pairs = Vec::new();
                for entry in &m.entries {
                    if let EntryExpr::MapEntry(me) = &entry.expr {
                        pairs.push((self.infer(&me.key, scope), self.infer(&me.value, scope)));
                    }
                }
                match pairs.split_first() {
                    Some((first, rest)) if rest.iter().all(|p| p == first) => {
                        Ty::Map(Box::new(first.0.clone()), Box::new(first.1.clone()))
                    }
                    _ => Ty::Unknown,
                }
            }
            Expr::Comprehension(c) => {
                let range = self.infer(&c.iter_range, scope);
                let accu_init = self.infer(&c.accu_init, scope);
                let mut inner = scope.clone();
                match &c.iter_var2 {
                    // Two variables: index or key, then value.
                    Some(v2) => {
                        let (first, second) = match &range {
                            Ty::List(el) => (Ty::Int, (**el).clone()),
                            Ty::Map(k, v) => ((**k).clone(), (**v).clone()),
                            Ty::Dyn => (Ty::Dyn, Ty::Dyn),
                            _ => (Ty::Unknown, Ty::Unknown),
                        };
                        inner.insert(c.iter_var.clone(), first);
                        inner.insert(v2.clone(), second);
                    }
                    None => {
                        inner.insert(c.iter_var.clone(), range.element());
                    }
                }
                inner.insert(c.accu_var.clone(), accu_init.clone());
                let step = self.infer(&c.loop_step, &mut inner);
                self.infer(&c.loop_cond, &mut inner);
                let accu = Ty::join(accu_init, step);
                inner.insert(c.accu_var.clone(), accu);
                self.infer(&c.result, &mut inner)
            }
            Expr::Call(call) => {
                // `sets.contains(…)` names a namespace, not a variable.
                let namespaced = match call.target.as_deref() {
                    Some(IdedExpr {
                        expr: Expr::Ident(ns),
                        ..
                    }) if NAMESPACES.contains(&ns.as_str()) && !scope.contains_key(ns) => {
                        Some(format!("{ns}.{}", call.func_name))
                    }
                    _ => None,
                };
                let target = match (&namespaced, &call.target) {
                    (None, Some(t)) => Some(self.infer(t, scope)),
                    _ => None,
                };
                let args: Vec<Ty> = call.args.iter().map(|a| self.infer(a, scope)).collect();
                let name = namespaced.as_deref().unwrap_or(call.func_name.as_str());
                result_type(name, target, &args)
            }
            Expr::Struct(_) | Expr::Unspecified => Ty::Unknown,
        }
    }
}

/// The result type of a call whose overloads agree on one.
fn result_type(name: &str, target: Option<Ty>, args: &[Ty]) -> Ty {
    if BOOL_FUNCTIONS.contains(&name) {
        return Ty::Bool;
    }
    if STRING_FUNCTIONS.contains(&name) {
        return Ty::String;
    }
    match name {
        "size" | "int" | "indexOf" | "lastIndexOf" => Ty::Int,
        "uint" => Ty::Uint,
        "double" => Ty::Double,
        "bytes" => Ty::Bytes,
        "type" => Ty::Type,
        "dyn" => Ty::Dyn,
        "split" => Ty::List(Box::new(Ty::String)),
        operators::CONDITIONAL => match args {
            [_, a, b] => Ty::join(a.clone(), b.clone()),
            _ => Ty::Unknown,
        },
        operators::INDEX => match args {
            [Ty::List(e), _] => (**e).clone(),
            [Ty::Map(_, v), _] => (**v).clone(),
            [Ty::Dyn, _] => Ty::Dyn,
            _ => Ty::Unknown,
        },
        operators::ADD => match args {
            [Ty::List(_), Ty::List(_)] => Ty::join(args[0].clone(), args[1].clone()),
            [a, b]
                if a == b
                    && matches!(a, Ty::Int | Ty::Uint | Ty::Double | Ty::String | Ty::Bytes) =>
            {
                a.clone()
            }
            _ => Ty::Unknown,
        },
        operators::SUBSTRACT | operators::MULTIPLY | operators::DIVIDE | operators::MODULO => {
            match args {
                [a, b] if a == b && matches!(a, Ty::Int | Ty::Uint | Ty::Double) => a.clone(),
                _ => Ty::Unknown,
            }
        }
        operators::NEGATE => match args {
            [a] if matches!(a, Ty::Int | Ty::Double) => a.clone(),
            _ => Ty::Unknown,
        },
        // ext.Lists' members keep the receiver's type.
        "sort" | "distinct" | "slice" | "reverse" => match target {
            Some(t @ Ty::List(_)) => t,
            Some(Ty::String) if name == "reverse" => Ty::String,
            _ => Ty::Unknown,
        },
        _ => Ty::Unknown,
    }
}
