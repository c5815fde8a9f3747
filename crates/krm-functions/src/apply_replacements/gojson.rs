//! The first `encoding/json` type error decoding the config into kustomize's
//! `types.Replacement` structs would give, with Go's wording: the Go function
//! reads the config through kyaml's `MarshalJSON` (keys sorted at every
//! level) and keeps the first mismatch it meets.

use serde_json::Value;

use crate::common::gomsg;

/// The Go shape of a field.
#[derive(Clone, Copy)]
enum Shape {
    Str,
    Int,
    Bool,
    StrList,
    /// A struct (possibly behind a pointer): its Go name and fields.
    Struct(&'static str, &'static [(&'static str, Shape)]),
    /// A slice of structs, with the Go type text of the slice.
    List(&'static str, &'static Shape),
}

const RES_ID: [(&str, Shape); 5] = [
    ("group", Shape::Str),
    ("version", Shape::Str),
    ("kind", Shape::Str),
    ("name", Shape::Str),
    ("namespace", Shape::Str),
];
const OPTIONS: Shape = Shape::Struct(
    "FieldOptions",
    &[
        ("delimiter", Shape::Str),
        ("index", Shape::Int),
        ("encoding", Shape::Str),
        ("create", Shape::Bool),
    ],
);
const SOURCE: Shape = Shape::Struct(
    "SourceSelector",
    &[
        RES_ID[0],
        RES_ID[1],
        RES_ID[2],
        RES_ID[3],
        RES_ID[4],
        ("fieldPath", Shape::Str),
        ("options", OPTIONS),
    ],
);
const SELECTOR: Shape = Shape::Struct(
    "Selector",
    &[
        RES_ID[0],
        RES_ID[1],
        RES_ID[2],
        RES_ID[3],
        RES_ID[4],
        ("annotationSelector", Shape::Str),
        ("labelSelector", Shape::Str),
    ],
);
const TARGET: Shape = Shape::Struct(
    "TargetSelector",
    &[
        ("select", SELECTOR),
        ("reject", Shape::List("[]*types.Selector", &SELECTOR)),
        ("fieldPaths", Shape::StrList),
        ("options", OPTIONS),
    ],
);
const REPLACEMENT: Shape = Shape::Struct(
    "Replacement",
    &[
        ("source", SOURCE),
        ("targets", Shape::List("[]*types.TargetSelector", &TARGET)),
        ("sourceValue", Shape::Str),
    ],
);
const ROOT: Shape = Shape::Struct(
    "Replacements",
    &[(
        "replacements",
        Shape::List("[]types.Replacement", &REPLACEMENT),
    )],
);

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Object(_) => "object",
        Value::Array(_) => "array",
        Value::Number(_) => "number",
        Value::Bool(_) => "bool",
        Value::String(_) => "string",
        Value::Null => "null",
    }
}

/// The first type error of `config` (the whole functionConfig as JSON data).
pub(crate) fn first_type_error(config: &Value) -> Option<String> {
    check(config, &ROOT, "", &[])
}

/// `owner`/`path`: the innermost Go struct and the JSON field path, which is
/// what Go's error names.
fn check(v: &Value, shape: &Shape, owner: &str, path: &[&str]) -> Option<String> {
    if v.is_null() {
        return None;
    }
    let err = |go_type: &str, value: String| {
        Some(gomsg::json_type_error(
            &value,
            owner,
            &path.join("."),
            go_type,
        ))
    };
    match (shape, v) {
        (Shape::Str, Value::String(_)) | (Shape::Bool, Value::Bool(_)) => None,
        (Shape::StrList, Value::Array(items)) => items
            .iter()
            .find(|i| !i.is_null() && !i.is_string())
            .and_then(|i| err("string", json_kind(i).to_string())),
        (Shape::Str, _) => err("string", json_kind(v).to_string()),
        (Shape::Bool, _) => err("bool", json_kind(v).to_string()),
        (Shape::StrList, _) => err("[]string", json_kind(v).to_string()),
        // Go re-encodes YAML numbers through float64, so `2.0` is the integer 2.
        (Shape::Int, Value::Number(n))
            if n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0) =>
        {
            None
        }
        (Shape::Int, Value::Number(n)) => err("int", format!("number {n}")),
        (Shape::Int, _) => err("int", json_kind(v).to_string()),
        (Shape::Struct(name, fields), Value::Object(map)) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            keys.into_iter().find_map(|k| {
                // Go matches field names case-insensitively as a fallback.
                let (field, sub) = fields
                    .iter()
                    .find(|(f, _)| f == k)
                    .or_else(|| fields.iter().find(|(f, _)| f.eq_ignore_ascii_case(k)))?;
                let mut p = path.to_vec();
                p.push(field);
                check(&map[k], sub, name, &p)
            })
        }
        (Shape::Struct(name, _), _) => err(&format!("types.{name}"), json_kind(v).to_string()),
        (Shape::List(_, item), Value::Array(items)) => items.iter().find_map(|i| match item {
            Shape::Struct(name, _) if !i.is_object() && !i.is_null() => {
                err(&format!("types.{name}"), json_kind(i).to_string())
            }
            _ => check(i, item, owner, path),
        }),
        (Shape::List(go_type, _), _) => err(go_type, json_kind(v).to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn go_wording_and_order() {
        assert_eq!(first_type_error(&json!({"replacements": []})), None);
        assert_eq!(
            first_type_error(&json!({"replacements": {"a": 1}})).as_deref(),
            Some(
                "json: cannot unmarshal object into Go struct field Replacements.replacements of type []types.Replacement"
            )
        );
        assert_eq!(
            first_type_error(&json!({"replacements": ["x"]})).as_deref(),
            Some(
                "json: cannot unmarshal string into Go struct field Replacements.replacements of type types.Replacement"
            )
        );
        // Keys are visited sorted: sourceValue before targets.
        assert_eq!(
            first_type_error(&json!({"replacements": [
                {"targets": "t", "sourceValue": 3}
            ]}))
            .as_deref(),
            Some(
                "json: cannot unmarshal number into Go struct field Replacement.replacements.sourceValue of type string"
            )
        );
        assert_eq!(
            first_type_error(&json!({"replacements": [
                {"targets": [{"fieldPaths": "a.b"}]}
            ]}))
            .as_deref(),
            Some(
                "json: cannot unmarshal string into Go struct field TargetSelector.replacements.targets.fieldPaths of type []string"
            )
        );
        assert_eq!(
            first_type_error(&json!({"replacements": [
                {"source": {"kind": 5, "options": {"index": 1.5}}}
            ]}))
            .as_deref(),
            Some(
                "json: cannot unmarshal number into Go struct field SourceSelector.replacements.source.kind of type string"
            )
        );
        assert_eq!(
            first_type_error(&json!({"replacements": [
                {"source": {"options": {"index": 1.5}}}
            ]}))
            .as_deref(),
            Some(
                "json: cannot unmarshal number 1.5 into Go struct field FieldOptions.replacements.source.options.index of type int"
            )
        );
        assert_eq!(
            first_type_error(&json!({"replacements": [
                {"targets": [{"select": {"name": "x"}, "reject": [{"kind": true}]}]}
            ]}))
            .as_deref(),
            Some(
                "json: cannot unmarshal bool into Go struct field Selector.replacements.targets.reject.kind of type string"
            )
        );
    }
}
