//! Conversion between [`Node`] trees and plain `serde_json::Value` data,
//! resolving scalars the way yaml.v3 decodes them into `interface{}`.

use std::collections::HashMap;

use serde_json::{Map, Number, Value};

use super::node::{Node, NodeKind};
use super::resolve;

impl Node {
    /// Plain data: aliases resolved (to the most recent anchor of that name
    /// seen before them, as YAML defines), merge keys `<<` expanded like
    /// yaml.v3 does when decoding, ints/bools/floats/null per yaml.v3
    /// resolution, timestamps kept as strings.
    pub fn to_value(&self) -> Value {
        let mut anchors = HashMap::new();
        to_value_inner(self, &mut anchors, 0)
    }

    /// Builds a tree from plain data: strings become [`Node::string`],
    /// numbers/bools/null become tagged scalars emitted plain.
    pub fn from_value(v: &Value) -> Node {
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
    let exp = if f == 0.0 {
        0
    } else {
        f.abs().log10().floor() as i32
    };
    if (-4..6).contains(&exp) {
        format!("{f}")
    } else {
        let s = format!("{f:e}");
        // Rust: 1e21 / 1.5e-7; Go: 1e+21 / 1.5e-07
        match s.split_once('e') {
            Some((m, e)) => {
                let (sign, digits) = match e.strip_prefix('-') {
                    Some(d) => ('-', d),
                    None => ('+', e),
                };
                format!("{m}e{sign}{digits:0>2}")
            }
            None => s,
        }
    }
}

const MAX_DEPTH: usize = 512;

fn to_value_inner<'a>(
    n: &'a Node,
    anchors: &mut HashMap<&'a str, &'a Node>,
    depth: usize,
) -> Value {
    if depth > MAX_DEPTH {
        return Value::Null;
    }
    if let Some(a) = &n.anchor {
        anchors.insert(a.as_str(), n);
    }
    match &n.kind {
        NodeKind::Alias(name) => match anchors.get(name.as_str()).copied() {
            // Clone the map so an alias inside its own anchor cannot loop.
            Some(target) if !std::ptr::eq(target, n) => {
                let mut inner = anchors.clone();
                inner.remove(name.as_str());
                to_value_inner(target, &mut inner, depth + 1)
            }
            _ => Value::Null,
        },
        NodeKind::Scalar(s) => scalar_value(n, s),
        NodeKind::Sequence(items) => Value::Array(
            items
                .iter()
                .map(|i| to_value_inner(i, anchors, depth + 1))
                .collect(),
        ),
        NodeKind::Mapping(entries) => {
            let mut m = Map::new();
            for (k, v) in entries {
                let key = to_value_inner(k, anchors, depth + 1);
                let val = to_value_inner(v, anchors, depth + 1);
                if k.is_scalar() && k.resolved_tag() == "!!merge" {
                    merge_into(&mut m, val);
                    continue;
                }
                m.insert(key_string(&key), val);
            }
            Value::Object(m)
        }
    }
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
