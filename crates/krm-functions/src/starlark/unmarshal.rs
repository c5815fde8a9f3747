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
use kpt::yaml::{SeqIndent, VALUE_MAX_DEPTH, emit_node, kyaml_kind};
use serde_json::{Map, Number, Value as Json};

use super::gofmt::type_name;
use super::merge::to_node;

/// starlib's `util.Unmarshal` of a starlark value into plain data, with its
/// error texts: each dict level prefixes `unmarshaling starlark value: ` (or
/// `key: `) to an error from below; lists and tuples add nothing.
///
/// Go recurses (and overflows its stack on a list holding itself); this walk
/// keeps its own stack, so deep data cannot overflow the thread's, and stops
/// past the nesting plain data is safe to handle at.
pub(crate) fn unmarshal(root: Value) -> Result<Json, String> {
    let mut stack: Vec<Frame> = Vec::new();
    let mut current = root;
    loop {
        let mut done = match leaf(current) {
            Err(e) => return Err(wrap(&stack, e)),
            Ok(Leaf::Done(j)) => j,
            Ok(Leaf::Open(frame)) if frame.is_empty() => frame.finish(),
            Ok(Leaf::Open(frame)) => {
                if stack.len() >= VALUE_MAX_DEPTH {
                    return Err(format!("exceeded max depth of {VALUE_MAX_DEPTH}"));
                }
                current = frame.first();
                stack.push(frame);
                continue;
            }
        };
        // Hand the converted value to the enclosing containers, closing those
        // it completes.
        loop {
            let Some(frame) = stack.last_mut() else {
                return Ok(done);
            };
            if let Some(next) = frame.take(done) {
                current = next;
                break;
            }
            let Some(closed) = stack.pop() else {
                return Ok(Json::Null);
            };
            done = closed.finish();
        }
    }
}

/// A value that converts on its own, or a container to walk.
enum Leaf<'v> {
    Done(Json),
    Open(Frame<'v>),
}

/// A container being converted: Go converts a dict entry's value, then its key.
enum Frame<'v> {
    List {
        items: Vec<Value<'v>>,
        next: usize,
        out: Vec<Json>,
    },
    Dict {
        entries: Vec<(Value<'v>, Value<'v>)>,
        next: usize,
        out: Map<String, Json>,
        /// The current entry's converted value, while its key converts.
        value: Option<Json>,
    },
}

impl<'v> Frame<'v> {
    fn list(items: Vec<Value<'v>>) -> Leaf<'v> {
        Leaf::Open(Frame::List {
            items,
            next: 0,
            out: Vec::new(),
        })
    }

    fn dict(entries: Vec<(Value<'v>, Value<'v>)>) -> Leaf<'v> {
        Leaf::Open(Frame::Dict {
            entries,
            next: 0,
            out: Map::new(),
            value: None,
        })
    }

    fn is_empty(&self) -> bool {
        match self {
            Frame::List { items, .. } => items.is_empty(),
            Frame::Dict { entries, .. } => entries.is_empty(),
        }
    }

    /// The first child to convert (a dict entry's value comes first); only
    /// called on a non-empty container.
    fn first(&self) -> Value<'v> {
        match self {
            Frame::List { items, .. } => items[0],
            Frame::Dict { entries, .. } => entries[0].1,
        }
    }

    /// Takes the converted child; returns the next child to convert, or
    /// `None` when the container is complete.
    fn take(&mut self, done: Json) -> Option<Value<'v>> {
        match self {
            Frame::List { items, next, out } => {
                out.push(done);
                *next += 1;
                items.get(*next).copied()
            }
            Frame::Dict {
                entries,
                next,
                out,
                value,
            } => match value.take() {
                None => {
                    *value = Some(done);
                    Some(entries[*next].0)
                }
                Some(v) => {
                    // Go keys a map by any value; plain data keys by text.
                    let k = match done {
                        Json::String(s) => s,
                        other => other.to_string(),
                    };
                    out.insert(k, v);
                    *next += 1;
                    entries.get(*next).map(|e| e.1)
                }
            },
        }
    }

    fn finish(self) -> Json {
        match self {
            Frame::List { out, .. } => Json::Array(out),
            Frame::Dict { out, .. } => Json::Object(out),
        }
    }
}

/// The error as Go's recursion returns it: one prefix per enclosing dict.
fn wrap(stack: &[Frame], mut error: String) -> String {
    for frame in stack.iter().rev() {
        if let Frame::Dict { value, .. } = frame {
            let part = if value.is_some() { "key" } else { "value" };
            error = format!("unmarshaling starlark {part}: {error}");
        }
    }
    error
}

/// Converts a scalar, lists a container's children, or fails with starlib's
/// text for what it cannot convert.
fn leaf(v: Value) -> Result<Leaf, String> {
    if v.is_none() {
        return Ok(Leaf::Done(Json::Null));
    }
    if let Some(b) = v.unpack_bool() {
        return Ok(Leaf::Done(Json::Bool(b)));
    }
    if let Some(s) = v.unpack_str() {
        return Ok(Leaf::Done(Json::String(s.to_string())));
    }
    if let Some(f) = v.downcast_ref::<StarlarkFloat>() {
        // Go keeps ±Inf and NaN (yaml writes `.inf`, `.nan`); plain data has
        // no such numbers, so they become null here.
        return Ok(Leaf::Done(
            Number::from_f64(f.0).map_or(Json::Null, Json::Number),
        ));
    }
    if v.get_type() == "int" {
        // starlark.AsInt into a Go `int`.
        return match i64::unpack_value(v) {
            Ok(Some(i)) => Ok(Leaf::Done(Json::Number(i.into()))),
            _ => Err(format!(
                "{} out of range (want value in signed 64-bit range)",
                v.to_str()
            )),
        };
    }
    if let Some(dict) = DictRef::from_value(v) {
        return Ok(Frame::dict(dict.iter().collect()));
    }
    if let Some(list) = ListRef::from_value(v) {
        return Ok(Frame::list(list.iter().collect()));
    }
    if let Some(tuple) = TupleRef::from_value(v) {
        return Ok(Frame::list(tuple.iter().collect()));
    }
    Err(match v.get_type() {
        "set" => "sets aren't yet supported".to_string(),
        // `ctx` itself: starlib can only convert structs whose constructor
        // knows how, and the default constructor is the string "struct".
        "struct" => "constructor object from *starlarkstruct.Struct not supported \
                     Marshaler to starlark object: string"
            .to_string(),
        _ => format!("unrecognized starlark type: {}", go_type(v)),
    })
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
            let node = to_node(&other);
            let text = emit_node(&node, SeqIndent::Compact);
            return Err(kyaml_kind::wrong_kind(
                "items",
                "SequenceNode",
                kyaml_kind::kind_name(&node),
                &text,
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
