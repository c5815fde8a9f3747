//! The Go runtime's way back from the script's values to resources.
//!
//! The vendored kyaml runtime converts the *whole* `ctx.resource_list` with
//! starlib's `util.Unmarshal` (so a value it cannot convert fails the
//! function even outside `items`, e.g. in `functionConfig`), marshals it to
//! YAML, looks `items` up with kyaml (missing or null: no items; any other
//! kind: kyaml's `ErrorIfInvalid` text) and the SDK parses each element as
//! one object (anything but a mapping: `unhandled node kind`).

use ::starlark::values::dict::DictRef;
use ::starlark::values::float::StarlarkFloat;
use ::starlark::values::list::ListRef;
use ::starlark::values::tuple::TupleRef;
use ::starlark::values::{UnpackValue, Value, ValueLike};
use kpt::yaml::{SeqIndent, VALUE_MAX_DEPTH, emit_node};
use serde_json::{Map, Number, Value as Json};

use super::gofmt::type_name;
use super::merge::to_node;

/// starlib's `util.Unmarshal` of a starlark value into plain data, with its
/// error texts: each dict level prefixes `unmarshaling starlark value: ` (or
/// `key: `) to an error from below; lists and tuples add nothing.
pub(crate) fn unmarshal(v: Value) -> Result<Json, String> {
    unmarshal_at(v, 0)
}

fn unmarshal_at(v: Value, depth: usize) -> Result<Json, String> {
    // Go recurses without bound (a list holding itself overflows its stack);
    // here nesting stops where plain data stays safe to handle.
    if depth > VALUE_MAX_DEPTH {
        return Err(format!("exceeded max depth of {VALUE_MAX_DEPTH}"));
    }
    if v.is_none() {
        return Ok(Json::Null);
    }
    if let Some(b) = v.unpack_bool() {
        return Ok(Json::Bool(b));
    }
    if let Some(s) = v.unpack_str() {
        return Ok(Json::String(s.to_string()));
    }
    if let Some(f) = v.downcast_ref::<StarlarkFloat>() {
        // Go keeps ±Inf and NaN (yaml writes `.inf`, `.nan`); plain data has
        // no such numbers, so they become null here.
        return Ok(Number::from_f64(f.0).map_or(Json::Null, Json::Number));
    }
    if v.get_type() == "int" {
        // starlark.AsInt into a Go `int`.
        return match i64::unpack_value(v) {
            Ok(Some(i)) => Ok(Json::Number(i.into())),
            _ => Err(format!(
                "{} out of range (want value in signed 64-bit range)",
                v.to_str()
            )),
        };
    }
    if let Some(dict) = DictRef::from_value(v) {
        let mut out = Map::new();
        for (k, x) in dict.iter() {
            let x = unmarshal_at(x, depth + 1)
                .map_err(|e| format!("unmarshaling starlark value: {e}"))?;
            let k = unmarshal_at(k, depth + 1)
                .map_err(|e| format!("unmarshaling starlark key: {e}"))?;
            // Go keys a map by any value; plain data keys by text.
            let k = match k {
                Json::String(s) => s,
                other => other.to_string(),
            };
            out.insert(k, x);
        }
        return Ok(Json::Object(out));
    }
    let elements: Vec<Value> = if let Some(list) = ListRef::from_value(v) {
        list.iter().collect()
    } else if let Some(tuple) = TupleRef::from_value(v) {
        tuple.iter().collect()
    } else {
        return Err(match v.get_type() {
            "set" => "sets aren't yet supported".to_string(),
            // `ctx` itself: starlib can only convert structs whose constructor
            // knows how, and the default constructor is the string "struct".
            "struct" => "constructor object from *starlarkstruct.Struct not supported \
                         Marshaler to starlark object: string"
                .to_string(),
            _ => format!("unrecognized starlark type: {}", go_type(v)),
        });
    };
    elements
        .into_iter()
        .map(|x| unmarshal_at(x, depth + 1))
        .collect::<Result<Vec<_>, _>>()
        .map(Json::Array)
}

/// go.starlark.net's `Type()` for the values starlib cannot convert.
fn go_type(v: Value) -> &'static str {
    match type_name(v) {
        // A `load`ed library is a starlarkstruct.Module in Go.
        "namespace" => "module",
        t => t,
    }
}

/// The items of the converted resource list, as kyaml's `Lookup("items")`
/// and `Elements()` and the SDK's `ParseKubeObject` take them.
pub(crate) fn items_of(resource_list: Json) -> Result<Vec<Json>, String> {
    let Json::Object(mut rl) = resource_list else {
        return Ok(Vec::new());
    };
    let items = match rl.remove("items") {
        None | Some(Json::Null) => return Ok(Vec::new()),
        Some(Json::Array(items)) => items,
        Some(other) => {
            let kind = if other.is_object() {
                "MappingNode"
            } else {
                "ScalarNode"
            };
            let text = emit_node(&to_node(&other), SeqIndent::Compact);
            return Err(format!(
                "wrong Node Kind for items expected: SequenceNode was {kind}: value: {{{}}}",
                text.trim()
            ));
        }
    };
    for item in &items {
        // yaml.v3's Kind numbers: SequenceNode 2, ScalarNode 8 (null included).
        let kind = match item {
            Json::Object(_) => continue,
            Json::Array(_) => 2,
            _ => 8,
        };
        return Err(format!(
            "failed to extract objects: unhandled node kind {kind}"
        ));
    }
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn items_are_looked_up_as_kyaml_does() {
        assert_eq!(items_of(json!({"kind": "L"})), Ok(vec![]));
        assert_eq!(items_of(json!({"items": null})), Ok(vec![]));
        assert_eq!(
            items_of(json!({"items": {"b": 1, "a": "x"}})),
            Err("wrong Node Kind for items expected: SequenceNode was MappingNode: value: {b: 1\na: x}".into())
        );
        assert_eq!(
            items_of(json!({"items": "1"})),
            Err(
                "wrong Node Kind for items expected: SequenceNode was ScalarNode: value: {\"1\"}"
                    .into()
            )
        );
        assert_eq!(
            items_of(json!({"items": [{"kind": "K"}, [1]]})),
            Err("failed to extract objects: unhandled node kind 2".into())
        );
        assert_eq!(
            items_of(json!({"items": [null]})),
            Err("failed to extract objects: unhandled node kind 8".into())
        );
    }
}
