//! How Go's `encoding/json` judges a typed functionConfig.
//!
//! The catalog's SDK decodes a typed config (`fn.kpt.dev/v1alpha1 <Kind>`) by
//! turning the YAML into JSON (through an `interface{}` map, so object keys
//! come out sorted) and `json.Unmarshal`ing it into the function's struct. A
//! value of the wrong JSON type fails with Go's `UnmarshalTypeError` text; the
//! first such error is the one reported (Go keeps decoding but remembers only
//! the first). Unknown keys are ignored, `null` fits anything, and struct
//! fields match their JSON name exactly or, failing that, case-insensitively.
//! This module checks a node against a declared shape and returns that text.
//!
//! The data is either the YAML node itself (the SDK's `As`) or JSON data
//! already re-encoded the way kyaml's `MarshalJSON` does (apply-replacements:
//! numbers through `float64`, so `2.0` fits an int); [`JsonData`] is what
//! differs between the two.

use kpt::yaml::{Node, NodeKind};
use serde_json::Value;

/// The Go type a field is decoded into (the whole small type system, though
/// not every function's struct uses every variant).
#[allow(dead_code)]
#[derive(Debug, Clone, Copy)]
pub enum GoType {
    String,
    Bool,
    Int,
    /// `map[string]T`.
    Map(&'static GoType),
    /// `[]T`.
    Slice(&'static GoType),
    Struct(&'static GoStruct),
    /// `*T`: decodes as `T` (errors name `T`), prints as `*T` inside others.
    Ptr(&'static GoType),
    /// `interface{}` or a type with a custom decoder: anything goes.
    Any,
}

/// A Go struct: its package-qualified and plain names and its JSON fields.
#[derive(Debug)]
pub struct GoStruct {
    /// `reflect.Type.String()`, e.g. `setlabels.SetLabels`.
    pub qualified: &'static str,
    /// `reflect.Type.Name()`, e.g. `SetLabels`.
    pub name: &'static str,
    pub fields: &'static [(&'static str, GoType)],
}

impl GoType {
    /// `reflect.Type.String()`.
    fn go_string(&self) -> String {
        match self {
            GoType::String => "string".into(),
            GoType::Bool => "bool".into(),
            GoType::Int => "int".into(),
            GoType::Map(t) => format!("map[string]{}", t.go_string()),
            GoType::Slice(t) => format!("[]{}", t.go_string()),
            GoType::Struct(s) => s.qualified.into(),
            GoType::Ptr(t) => format!("*{}", t.go_string()),
            GoType::Any => "interface {}".into(),
        }
    }
}

/// The JSON kind of a value, its members in the order Go decodes them.
pub enum JsonKind<'a, D> {
    Null,
    Bool,
    /// The number's JSON text.
    Number(String),
    String,
    Array(Vec<&'a D>),
    /// Keys sorted, as `json.Marshal` of a Go map writes them.
    Object(Vec<(&'a str, &'a D)>),
}

/// Data that can be judged: a YAML node or JSON data.
pub trait JsonData: Sized {
    fn kind(&self) -> JsonKind<'_, Self>;
    /// Whether this number decodes into a Go `int`.
    fn fits_int(&self) -> bool;
}

/// A YAML node as yaml.v3 decodes it into `interface{}`, then JSON.
impl JsonData for Node {
    fn kind(&self) -> JsonKind<'_, Node> {
        match &self.kind {
            NodeKind::Mapping(entries) => {
                let mut fields: Vec<(&str, &Node)> = entries
                    .iter()
                    .map(|(k, v)| (k.as_str().unwrap_or(""), v))
                    .collect();
                fields.sort_by(|a, b| a.0.cmp(b.0));
                JsonKind::Object(fields)
            }
            NodeKind::Sequence(items) => JsonKind::Array(items.iter().collect()),
            NodeKind::Scalar(text) => match self.resolved_tag() {
                "!!null" => JsonKind::Null,
                "!!bool" => JsonKind::Bool,
                "!!int" | "!!float" => JsonKind::Number(text.clone()),
                _ => JsonKind::String,
            },
            _ => JsonKind::Null,
        }
    }

    /// YAML integers Go decodes to an int include ones Rust's parser
    /// rejects (`0x1F`, `+3`).
    fn fits_int(&self) -> bool {
        matches!(&self.kind, NodeKind::Scalar(t) if t.parse::<i64>().is_ok())
            || self.resolved_tag() == "!!int"
    }
}

/// JSON data re-encoded through Go's `float64`.
impl JsonData for Value {
    fn kind(&self) -> JsonKind<'_, Value> {
        match self {
            Value::Object(map) => {
                let mut fields: Vec<(&str, &Value)> =
                    map.iter().map(|(k, v)| (k.as_str(), v)).collect();
                fields.sort_by(|a, b| a.0.cmp(b.0));
                JsonKind::Object(fields)
            }
            Value::Array(items) => JsonKind::Array(items.iter().collect()),
            Value::Number(n) => JsonKind::Number(n.to_string()),
            Value::Bool(_) => JsonKind::Bool,
            Value::String(_) => JsonKind::String,
            Value::Null => JsonKind::Null,
        }
    }

    /// `2.0` went through `float64` and comes out as the integer 2.
    fn fits_int(&self) -> bool {
        self.as_number().is_some_and(|n| {
            n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
        })
    }
}

/// The first `json: cannot unmarshal ...` error decoding `node` into `ty`
/// (which must be a struct type), or `None` when it decodes.
pub fn check<D: JsonData>(node: &D, ty: &'static GoStruct) -> Option<String> {
    let mut ctx = Ctx {
        stack: Vec::new(),
        strukt: "",
        first: None,
    };
    ctx.value(node, &GoType::Struct(ty));
    ctx.first
}

/// A field of a decoded struct the way `encoding/json` finds it: the exact
/// key, else the last key equal to it ignoring case.
pub fn field<'a>(node: &'a Node, name: &str) -> Option<&'a Node> {
    node.get(name).or_else(|| {
        node.entries()
            .iter()
            .rev()
            .find(|(k, _)| k.as_str().is_some_and(|k| k.eq_ignore_ascii_case(name)))
            .map(|(_, v)| v)
    })
}

struct Ctx {
    stack: Vec<&'static str>,
    strukt: &'static str,
    first: Option<String>,
}

impl Ctx {
    fn mismatch(&mut self, value: String, ty: &GoType) {
        if self.first.is_some() {
            return;
        }
        let into = if self.strukt.is_empty() && self.stack.is_empty() {
            "Go value".to_string()
        } else {
            format!("Go struct field {}.{}", self.strukt, self.stack.join("."))
        };
        self.first = Some(format!(
            "json: cannot unmarshal {value} into {into} of type {}",
            ty.go_string()
        ));
    }

    fn value<D: JsonData>(&mut self, node: &D, ty: &GoType) {
        let kind = node.kind();
        if matches!(kind, JsonKind::Null) || matches!(ty, GoType::Any) {
            return;
        }
        match (ty, kind) {
            // Go dereferences: errors inside name the pointed-to type.
            (GoType::Ptr(inner), _) => self.value(node, inner),
            (GoType::String, JsonKind::String) | (GoType::Bool, JsonKind::Bool) => {}
            (GoType::Int, JsonKind::Number(text)) => {
                if !node.fits_int() {
                    self.mismatch(format!("number {text}"), ty);
                }
            }
            (GoType::Map(elem), JsonKind::Object(fields)) => {
                for (_, v) in fields {
                    self.value(v, elem);
                }
            }
            (GoType::Slice(elem), JsonKind::Array(items)) => {
                for v in items {
                    self.value(v, elem);
                }
            }
            (GoType::Struct(s), JsonKind::Object(fields)) => {
                for (key, v) in fields {
                    let found = s
                        .fields
                        .iter()
                        .find(|(n, _)| *n == key)
                        .or_else(|| s.fields.iter().find(|(n, _)| n.eq_ignore_ascii_case(key)));
                    let Some((name, fty)) = found else {
                        continue;
                    };
                    let saved = self.strukt;
                    self.stack.push(name);
                    self.strukt = s.name;
                    self.value(v, fty);
                    self.stack.pop();
                    self.strukt = saved;
                }
            }
            (_, kind) => {
                let value = match kind {
                    JsonKind::Bool => "bool",
                    JsonKind::Number(_) => "number",
                    JsonKind::String => "string",
                    JsonKind::Array(_) => "array",
                    _ => "object",
                };
                self.mismatch(value.to_string(), ty);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testing::node;

    static STR: GoType = GoType::String;
    static STR_MAP: GoType = GoType::Map(&STR);
    static INNER: GoStruct = GoStruct {
        qualified: "pkg.Inner",
        name: "Inner",
        fields: &[("name", GoType::String), ("count", GoType::Int)],
    };
    static OUTER: GoStruct = GoStruct {
        qualified: "pkg.Outer",
        name: "Outer",
        fields: &[
            ("labels", GoType::Map(&STR)),
            ("inner", GoType::Struct(&INNER)),
            ("list", GoType::Slice(&STR_MAP)),
            ("flag", GoType::Bool),
        ],
    };

    #[test]
    fn go_texts() {
        let ok = node(
            "kind: X\nlabels:\n  a: b\ninner:\n  name: n\n  count: 3\nflag: true\nlist: [{a: b}]\nother: [1]\n",
        );
        assert_eq!(check(&ok, &OUTER), None);
        let cases = [
            (
                "labels: [a]",
                "json: cannot unmarshal array into Go struct field Outer.labels of type map[string]string",
            ),
            (
                "labels: {a: 1}",
                "json: cannot unmarshal number into Go struct field Outer.labels of type string",
            ),
            (
                "inner: {name: true}",
                "json: cannot unmarshal bool into Go struct field Inner.inner.name of type string",
            ),
            (
                "inner: {count: 1.5}",
                "json: cannot unmarshal number 1.5 into Go struct field Inner.inner.count of type int",
            ),
            (
                "inner: x",
                "json: cannot unmarshal string into Go struct field Outer.inner of type pkg.Inner",
            ),
            (
                "list: [{a: [1]}]",
                "json: cannot unmarshal array into Go struct field Outer.list of type string",
            ),
            (
                "Flag: 'yes'",
                "json: cannot unmarshal string into Go struct field Outer.flag of type bool",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(check(&node(text), &OUTER).as_deref(), Some(want), "{text}");
        }
        // Keys are decoded in sorted order: `flag` fails before `labels`.
        let two = node("labels: [a]\nflag: x\n");
        assert!(check(&two, &OUTER).is_some_and(|e| e.contains("Outer.flag")));
        // null fits anything.
        assert_eq!(check(&node("labels: null\ninner: ~\n"), &OUTER), None);
    }

    static PTRS: GoStruct = GoStruct {
        qualified: "pkg.P",
        name: "P",
        fields: &[
            ("inner", GoType::Ptr(&GoType::Struct(&INNER))),
            (
                "items",
                GoType::Slice(&GoType::Ptr(&GoType::Struct(&INNER))),
            ),
        ],
    };

    #[test]
    fn pointers_and_json_data() {
        // A pointer field names the pointed-to type; in a slice it prints `*`.
        assert_eq!(
            check(&node("inner: x"), &PTRS).as_deref(),
            Some("json: cannot unmarshal string into Go struct field P.inner of type pkg.Inner")
        );
        assert_eq!(
            check(&node("items: x"), &PTRS).as_deref(),
            Some("json: cannot unmarshal string into Go struct field P.items of type []*pkg.Inner")
        );
        assert_eq!(
            check(&node("items: [x]"), &PTRS).as_deref(),
            Some("json: cannot unmarshal string into Go struct field P.items of type pkg.Inner")
        );
        // Through float64 `2.0` is an int; as YAML text it is not.
        assert_eq!(
            check(&serde_json::json!({"inner": {"count": 2.0}}), &PTRS),
            None
        );
        assert!(check(&node("inner: {count: 2.0}"), &PTRS).is_some());
        assert_eq!(
            check(&serde_json::json!({"inner": {"count": 2.5}}), &PTRS).as_deref(),
            Some(
                "json: cannot unmarshal number 2.5 into Go struct field Inner.inner.count of type int"
            )
        );
    }

    #[test]
    fn case_insensitive_fields() {
        let n = node("Labels: {a: b}\n");
        assert!(field(&n, "labels").is_some());
        assert!(field(&n, "other").is_none());
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            /// Any map of quoted strings decodes; swapping one value for a
            /// number fails on exactly that field's type.
            #[test]
            fn string_maps(
                map in prop::collection::btree_map("[a-z]{1,6}", "[ -~]{0,6}", 1..5),
                n in 0i64..1000,
            ) {
                let body: String = map
                    .iter()
                    .map(|(k, v)| format!("  {k}: '{}'\n", v.replace('\'', "''")))
                    .collect();
                let ok = node(&format!("labels:\n{body}"));
                prop_assert_eq!(check(&ok, &OUTER), None);
                let bad = node(&format!("labels:\n{body}  zzzzzzz: {n}\n"));
                let got = check(&bad, &OUTER);
                prop_assert_eq!(
                    got.as_deref(),
                    Some("json: cannot unmarshal number into Go struct field Outer.labels of type string")
                );
            }

            /// The YAML node and its JSON re-encoding get the same verdict
            /// for every value that is the same in both (no non-integral
            /// numbers, where the texts differ on purpose).
            #[test]
            fn node_and_json_agree(
                entries in prop::collection::btree_map(
                    "[a-z]{1,6}",
                    prop_oneof![
                        "[a-z]{0,4}".prop_map(|v| format!("'{v}'")),
                        (0i64..100).prop_map(|n| n.to_string()),
                        any::<bool>().prop_map(|b| b.to_string()),
                        Just("[a]".to_string()),
                        Just("{a: b}".to_string()),
                    ],
                    1..4,
                ),
                field in prop_oneof![Just("labels"), Just("inner"), Just("flag"), Just("list")],
            ) {
                let body: String = entries.iter().map(|(k, v)| format!("  {k}: {v}\n")).collect();
                let yaml = format!("{field}:\n{body}");
                let n = node(&yaml);
                prop_assert_eq!(check(&n, &OUTER), check(&n.to_value(), &OUTER));
            }
        }
    }
}
