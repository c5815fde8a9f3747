//! Conversion between [`Node`] trees and plain `serde_json::Value` data,
//! resolving scalars the way yaml.v3 decodes them into `interface{}`.

use std::collections::HashMap;

use serde_json::{Map, Number, Value};

use super::limits::{AliasBudget, VALUE_MAX_DEPTH, depth_message, guard};
use super::node::{Node, NodeKind};
use super::resolve;

/// Why a tree cannot be turned into plain data (go-yaml v3's messages).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("yaml: {0}")]
pub struct ValueError(pub String);

impl Node {
    /// Plain data: aliases resolved (to the most recent anchor of that name
    /// seen before them, as YAML defines), merge keys `<<` expanded like
    /// yaml.v3 does when decoding, ints/bools/floats/null per yaml.v3
    /// resolution, timestamps kept as strings.
    ///
    /// Alias expansion is bounded like go-yaml v3's decoder: a document whose
    /// data comes mostly from aliases ("billion laughs") fails with
    /// `document contains excessive aliasing`; data nested deeper than
    /// [`VALUE_MAX_DEPTH`] fails with `exceeded max depth of 1000` (the
    /// `Value` could not be dropped safely on a small stack).
    pub fn try_to_value(&self) -> Result<Value, ValueError> {
        let mut cx = Cx::default();
        to_value_inner(self, &mut cx, 0).map_err(ValueError)
    }

    /// [`Node::try_to_value`] for trees known to be sane (built by code, or
    /// already converted once); a tree that cannot be converted gives `null`.
    /// Input from users should go through `try_to_value`.
    pub fn to_value(&self) -> Value {
        self.try_to_value().unwrap_or(Value::Null)
    }

    /// Builds a tree from plain data: strings become [`Node::string`],
    /// numbers/bools/null become tagged scalars emitted plain.
    pub fn from_value(v: &Value) -> Node {
        guard(|| Node::from_value_at(v))
    }

    fn from_value_at(v: &Value) -> Node {
        match v {
            Value::Null => Node::tagged_scalar("null", "!!null"),
            Value::Bool(b) => Node::tagged_scalar(b.to_string(), "!!bool"),
            Value::Number(n) => {
                if n.is_f64() {
                    Node::tagged_scalar(format_float(n.as_f64().unwrap_or(0.0)), "!!float")
                } else {
                    Node::tagged_scalar(n.to_string(), "!!int")
                }
            }
            Value::String(s) => Node::string(s.clone()),
            Value::Array(a) => {
                let mut n = Node::sequence();
                if let Some(items) = n.items_mut() {
                    items.extend(a.iter().map(Node::from_value));
                }
                n
            }
            Value::Object(o) => {
                let mut n = Node::mapping();
                if let Some(e) = n.entries_mut() {
                    e.extend(o.iter().map(|(k, v)| {
                        (Node::tagged_scalar(k.clone(), "!!str"), Node::from_value(v))
                    }));
                }
                n
            }
        }
    }
}

/// Go `strconv.FormatFloat(f, 'g', -1, 64)`-like output, which is what
/// yaml.v3 writes for a float64.
fn format_float(f: f64) -> String {
    if f.is_nan() {
        return ".nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { ".inf" } else { "-.inf" }.into();
    }
    crate::gofloat::shortest_g(f)
}

/// Conversion state: the anchors in scope, and an undo log so that what an
/// alias's expansion defines or hides is put back afterwards (without
/// copying the map per alias, which many anchors times many aliases made
/// quadratic).
#[derive(Default)]
struct Cx<'a> {
    anchors: HashMap<&'a str, &'a Node>,
    undo: Vec<(&'a str, Option<&'a Node>)>,
    budget: AliasBudget,
}

impl<'a> Cx<'a> {
    fn set(&mut self, name: &'a str, n: Option<&'a Node>) {
        let old = match n {
            Some(n) => self.anchors.insert(name, n),
            None => self.anchors.remove(name),
        };
        self.undo.push((name, old));
    }

    fn unwind(&mut self, mark: usize) {
        while self.undo.len() > mark {
            if let Some((name, old)) = self.undo.pop() {
                match old {
                    Some(n) => self.anchors.insert(name, n),
                    None => self.anchors.remove(name),
                };
            }
        }
    }
}

/// `depth` is the nesting of the data produced, aliases included.
fn to_value_inner<'a>(n: &'a Node, cx: &mut Cx<'a>, depth: usize) -> Result<Value, String> {
    if depth > VALUE_MAX_DEPTH {
        return Err(depth_message(VALUE_MAX_DEPTH));
    }
    cx.budget.step().map_err(str::to_string)?;
    if let Some(a) = &n.anchor {
        cx.set(a.as_str(), Some(n));
    }
    Ok(match &n.kind {
        NodeKind::Alias(name) => match cx.anchors.get(name.as_str()).copied() {
            // The anchor is out of scope inside its own expansion, so an alias
            // inside its own anchor cannot loop.
            Some(target) if !std::ptr::eq(target, n) => {
                let mark = cx.undo.len();
                cx.set(name.as_str(), None);
                cx.budget.alias_depth += 1;
                let v = to_value_inner(target, cx, depth);
                cx.budget.alias_depth -= 1;
                cx.unwind(mark);
                v?
            }
            _ => Value::Null,
        },
        NodeKind::Scalar(s) => scalar_value(n, s),
        NodeKind::Sequence(items) => guard(|| {
            items
                .iter()
                .map(|i| to_value_inner(i, cx, depth + 1))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Array)
        })?,
        NodeKind::Mapping(entries) => guard(|| {
            let mut m = Map::new();
            for (k, v) in entries {
                let key = to_value_inner(k, cx, depth + 1)?;
                let val = to_value_inner(v, cx, depth + 1)?;
                if k.is_scalar() && k.resolved_tag() == "!!merge" {
                    merge_into(&mut m, val);
                    continue;
                }
                m.insert(key_string(&key), val);
            }
            Ok::<_, String>(Value::Object(m))
        })?,
    })
}

/// `<<: *base` / `<<: [*a, *b]`: keys already present win.
fn merge_into(m: &mut Map<String, Value>, val: Value) {
    let sources = match val {
        Value::Array(a) => a,
        other => vec![other],
    };
    for s in sources {
        if let Value::Object(o) = s {
            for (k, v) in o {
                m.entry(k).or_insert(v);
            }
        }
    }
}

fn key_string(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "null".into(),
        other => other.to_string(),
    }
}

fn scalar_value(n: &Node, s: &str) -> Value {
    match n.resolved_tag() {
        "!!null" => Value::Null,
        "!!bool" => match s {
            "true" | "True" | "TRUE" => Value::Bool(true),
            "false" | "False" | "FALSE" => Value::Bool(false),
            _ => Value::String(s.to_string()),
        },
        "!!int" => {
            let plain: String = s.chars().filter(|c| *c != '_').collect();
            match resolve::go_parse_int(&plain) {
                Some(i) if i < 0 => Value::Number(Number::from(i as i64)),
                Some(i) => Value::Number(Number::from(i as u64)),
                None => float_or_string(s),
            }
        }
        "!!float" => float_or_string(s),
        _ => Value::String(s.to_string()),
    }
}

fn float_or_string(s: &str) -> Value {
    let plain: String = s.chars().filter(|c| *c != '_').collect();
    resolve::go_parse_float(&plain)
        .and_then(Number::from_f64)
        .map(Value::Number)
        .unwrap_or_else(|| Value::String(s.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::Style;
    use serde_json::json;

    #[test]
    fn scalars_resolve_like_yaml_v3() {
        let mut m = Node::mapping();
        m.set("a", Node::plain("3"));
        m.set("b", Node::plain("true"));
        m.set("c", Node::plain("~"));
        m.set("d", Node::plain("1.5"));
        m.set("e", Node::plain("0755"));
        m.set("f", Node::plain("yes"));
        let mut q = Node::plain("3");
        q.style = Style::DoubleQuoted;
        m.set("g", q);
        m.set("h", Node::plain("2001-12-14"));
        m.set("i", Node::tagged_scalar("5", "!!str"));
        assert_eq!(
            m.to_value(),
            json!({"a": 3, "b": true, "c": null, "d": 1.5, "e": 493, "f": "yes",
                   "g": "3", "h": "2001-12-14", "i": "5"})
        );
    }

    #[test]
    fn aliases_and_merge_keys() {
        let mut base = Node::mapping();
        base.set("x", Node::plain("1"));
        base.anchor = Some("b".into());
        let mut m = Node::mapping();
        m.set("base", base);
        let mut derived = Node::mapping();
        derived
            .entries_mut()
            .expect("map")
            .push((Node::plain("<<"), Node::alias("b")));
        derived.set("y", Node::plain("2"));
        m.set("d", derived);
        m.set("again", Node::alias("b"));
        m.set("missing", Node::alias("nope"));
        assert_eq!(
            m.to_value(),
            json!({"base": {"x": 1}, "d": {"x": 1, "y": 2}, "again": {"x": 1}, "missing": null})
        );
    }

    #[test]
    fn from_value_round_trip() {
        let v =
            json!({"s": "80", "n": 80, "f": 1.5, "b": false, "z": null, "l": [1, "a"], "e": {}});
        let n = Node::from_value(&v);
        assert_eq!(n.get("s").map(|n| n.style), Some(Style::Any));
        assert_eq!(n.get("n").map(Node::resolved_tag), Some("!!int"));
        assert_eq!(n.to_value(), v);
    }

    #[test]
    fn go_float_format() {
        assert_eq!(format_float(1.5), "1.5");
        assert_eq!(format_float(1e21), "1e+21");
        assert_eq!(format_float(1e6), "1e+06");
        assert_eq!(format_float(123456.0), "123456");
        assert_eq!(format_float(1.5e-7), "1.5e-07");
    }
}
