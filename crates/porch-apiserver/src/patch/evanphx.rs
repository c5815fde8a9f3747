//! gopkg.in/evanphx/json-patch.v4's `Patch.Apply`, as kube-apiserver uses it: what it accepts,
//! what it refuses, where it panics, and what the document becomes.

use serde_json::{Map, Value};

use super::MAX_COPY_BYTES;
use super::gojson::{self, J};

/// Why an operation did not apply.
pub(super) enum Failure {
    /// The library's error (its words, for the log).
    Error(String),
    /// The library panics.
    Panic(&'static str),
}

type Outcome<T> = Result<T, Failure>;

fn fail<T>(message: impl Into<String>) -> Outcome<T> {
    Err(Failure::Error(message.into()))
}

/// A member or item of the document; `None` is Go's nil pointer (a null read from text).
type Slot = Option<Box<Node>>;

/// A value as the library holds it (its `lazyNode`).
enum Node {
    /// A node without text: what an operation's `"value": null` adds.
    RawNil,
    /// A number, string or boolean, and its text.
    Scalar(Vec<u8>),
    /// An object. `map` `None` is Go's nil map: the text `null` read as an object (what a
    /// copy of a [`Node::RawNil`] is). `raw` is the length of its text while unread.
    Obj {
        map: Option<Vec<(String, Slot)>>,
        raw: Option<usize>,
    },
    Arr {
        items: Vec<Slot>,
        raw: Option<usize>,
    },
}

impl Node {
    fn read(&mut self) {
        if let Node::Obj { raw, .. } | Node::Arr { raw, .. } = self {
            *raw = None;
        }
    }
}

/// An operation: its members (none for a null item).
struct Op<'a>(&'a [(String, usize, J)]);

impl Op<'_> {
    /// A member; the last of the same name, as a Go map keeps it.
    fn member(&self, name: &str) -> Option<&J> {
        self.0
            .iter()
            .rev()
            .find(|(k, _, _)| k == name)
            .map(|(_, _, v)| v)
    }

    fn kind(&self) -> String {
        match self.member("op") {
            Some(J::Scalar(t)) if t.first() == Some(&b'"') => gojson::unquote(t),
            _ => "unknown".into(),
        }
    }

    fn string(&self, name: &str) -> Option<String> {
        match self.member(name) {
            Some(J::Scalar(t)) if t.first() == Some(&b'"') => Some(gojson::unquote(t)),
            _ => None,
        }
    }

    /// `value`: `None` when absent (Go's nil node); `null` is a [`Node::RawNil`].
    fn value(&self) -> Option<Node> {
        self.member("value").map(|j| match j {
            J::Null => Node::RawNil,
            j => text_node(j).0.map_or(Node::RawNil, |n| *n),
        })
    }
}

/// A node read from text (nulls inside are nil), and the length of that text compacted.
fn text_node(j: &J) -> (Slot, usize) {
    let len = j.compact_len();
    let node = match j {
        J::Null => return (None, 4),
        J::Scalar(t) => Node::Scalar(t.clone()),
        J::Arr(items) => Node::Arr {
            items: items.iter().map(|i| text_node(i).0).collect(),
            raw: Some(len),
        },
        J::Obj(members) => {
            let mut map = Vec::new();
            for (k, _, v) in members {
                put(&mut map, k.clone(), text_node(v).0);
            }
            Node::Obj {
                map: Some(map),
                raw: Some(len),
            }
        }
    };
    (Some(Box::new(node)), len)
}

/// A node of the stored object as kube-apiserver encodes it, and that text's length.
fn doc_node(v: &Value) -> (Slot, usize) {
    let node = match v {
        Value::Null => return (None, 4),
        Value::Array(items) => {
            let items: Vec<(Slot, usize)> = items.iter().map(doc_node).collect();
            let len = 2 + items.len().saturating_sub(1) + items.iter().map(|i| i.1).sum::<usize>();
            Node::Arr {
                items: items.into_iter().map(|i| i.0).collect(),
                raw: Some(len),
            }
        }
        Value::Object(members) => {
            let mut len = 2 + members.len().saturating_sub(1);
            let mut map = Vec::with_capacity(members.len());
            for (k, v) in members {
                let (node, l) = doc_node(v);
                len += gojson::quote(k).len() + 1 + l;
                map.push((k.clone(), node));
            }
            Node::Obj {
                map: Some(map),
                raw: Some(len),
            }
        }
        scalar => Node::Scalar(gojson::encode_scalar(scalar)),
    };
    let len = marshal_len(&node);
    (Some(Box::new(node)), len)
}

/// The length of what the library writes for a node.
fn marshal_len(n: &Node) -> usize {
    match n {
        Node::RawNil | Node::Obj { map: None, .. } => 4,
        Node::Scalar(t) => gojson::html_len(t),
        Node::Obj { raw: Some(len), .. } | Node::Arr { raw: Some(len), .. } => *len,
        Node::Obj { map: Some(m), .. } => {
            2 + m.len().saturating_sub(1)
                + m.iter()
                    .map(|(k, v)| gojson::quote(k).len() + 1 + slot_len(v))
                    .sum::<usize>()
        }
        Node::Arr { items, .. } => {
            2 + items.len().saturating_sub(1) + items.iter().map(slot_len).sum::<usize>()
        }
    }
}

fn slot_len(s: &Slot) -> usize {
    s.as_deref().map_or(4, marshal_len)
}

/// The library's `deepCopy`: the node's text read back, and that text's length.
fn deep_copy(n: &Node) -> (Node, usize) {
    let copy = match n {
        // The text `null`, read back as a node (not a nil one).
        Node::RawNil | Node::Obj { map: None, .. } => Node::Obj {
            map: None,
            raw: Some(4),
        },
        n => reread(n).map_or(Node::RawNil, |n| *n),
    };
    (copy, marshal_len(n))
}

/// What reading a node's text back gives, inside a container.
fn reread(n: &Node) -> Slot {
    let node = match n {
        Node::RawNil | Node::Obj { map: None, .. } => return None,
        Node::Scalar(t) => Node::Scalar(gojson::html_escape(t)),
        Node::Obj { map: Some(m), .. } => Node::Obj {
            map: Some(
                m.iter()
                    .map(|(k, v)| (k.clone(), v.as_deref().and_then(reread)))
                    .collect(),
            ),
            raw: Some(marshal_len(n)),
        },
        Node::Arr { items, .. } => Node::Arr {
            items: items
                .iter()
                .map(|i| i.as_deref().and_then(reread))
                .collect(),
            raw: Some(marshal_len(n)),
        },
    };
    Some(Box::new(node))
}

fn to_value(n: &Node) -> Result<Value, String> {
    Ok(match n {
        Node::RawNil | Node::Obj { map: None, .. } => Value::Null,
        Node::Scalar(t) => gojson::scalar_value(t)?,
        Node::Obj { map: Some(m), .. } => {
            let mut out = Map::new();
            for (k, v) in m {
                out.insert(k.clone(), slot_value(v)?);
            }
            Value::Object(out)
        }
        Node::Arr { items, .. } => {
            Value::Array(items.iter().map(slot_value).collect::<Result<_, _>>()?)
        }
    })
}

fn slot_value(s: &Slot) -> Result<Value, String> {
    s.as_deref().map_or(Ok(Value::Null), to_value)
}

/// Applies `ops` (the items of a JSON patch) to `target`.
pub(super) fn apply(target: &Value, ops: &[J]) -> Outcome<Value> {
    let mut root = match target {
        Value::Object(_) | Value::Array(_) => doc_node(target).0.map_or(Node::RawNil, |n| *n),
        Value::Null => Node::Obj {
            map: None,
            raw: None,
        },
        _ => return fail("the document is not an object"),
    };
    root.read();
    let mut copied = 0;
    for op in ops {
        let op = Op(match op {
            J::Obj(members) => members,
            _ => &[],
        });
        match op.kind().as_str() {
            "add" => add_op(&mut root, &op)?,
            "remove" => remove_op(&mut root, &op)?,
            "replace" => replace_op(&mut root, &op)?,
            "move" => move_op(&mut root, &op)?,
            "test" => test_op(&mut root, &op)?,
            "copy" => copy_op(&mut root, &op, &mut copied)?,
            other => return fail(format!("Unexpected kind: {other}")),
        }
    }
    to_value(&root).map_err(Failure::Error)
}

/// The library's error `context: inner`.
fn within<T>(outcome: Outcome<T>, context: impl FnOnce() -> String) -> Outcome<T> {
    outcome.map_err(|f| match f {
        Failure::Error(inner) => Failure::Error(format!("{}: {inner}", context())),
        panic => panic,
    })
}

const MISSING_PATH: &str = "operation missing path field: missing value";
const MISSING_FROM: &str = "operation, missing from field: missing value";

fn add_op(root: &mut Node, op: &Op) -> Outcome<()> {
    let Some(path) = op.string("path") else {
        return fail("add operation failed to decode path: missing value");
    };
    let Some((con, key)) = find(root, &path) else {
        return fail(format!(
            "add operation does not apply: doc is missing path: \"{path}\": missing value"
        ));
    };
    within(add(con, key, op.value().map(Box::new)), || {
        format!("error in add for path: '{path}'")
    })
}

fn remove_op(root: &mut Node, op: &Op) -> Outcome<()> {
    let Some(path) = op.string("path") else {
        return fail("remove operation failed to decode path: missing value");
    };
    let Some((con, key)) = find(root, &path) else {
        return fail(format!(
            "remove operation does not apply: doc is missing path: \"{path}\": missing value"
        ));
    };
    within(remove(con, &key).map(drop), || {
        format!("error in remove for path: '{path}'")
    })
}

fn replace_op(root: &mut Node, op: &Op) -> Outcome<()> {
    let Some(path) = op.string("path") else {
        return fail(format!(
            "replace operation failed to decode path: {MISSING_PATH}"
        ));
    };
    if path.is_empty() {
        // The whole document, by an object or an array.
        return match op.value() {
            None => Err(Failure::Panic("replace of the document without a value")),
            Some(Node::Obj { map: Some(map), .. }) => {
                *root = Node::Obj {
                    map: Some(map),
                    raw: None,
                };
                Ok(())
            }
            Some(Node::Arr { items, .. }) => {
                *root = Node::Arr { items, raw: None };
                Ok(())
            }
            // v4.12.0 wraps a nil error here.
            Some(_) => fail("replace operation value must be object or array: %!w(<nil>)"),
        };
    }
    let Some((con, key)) = find(root, &path) else {
        return fail(format!(
            "replace operation does not apply: doc is missing path: {path}: missing value"
        ));
    };
    if get(con, &key).is_err() {
        return fail(format!(
            "replace operation does not apply: doc is missing key: {path}: missing value"
        ));
    }
    set(con, key, op.value().map(Box::new))
}

fn move_op(root: &mut Node, op: &Op) -> Outcome<()> {
    let Some(from) = op.string("from") else {
        return fail(format!(
            "move operation failed to decode from: {MISSING_FROM}"
        ));
    };
    let Some((con, key)) = find(root, &from) else {
        return fail(format!(
            "move operation does not apply: doc is missing from path: {from}: missing value"
        ));
    };
    let context = || format!("error in move for path: '{key}'");
    within(get(con, &key).map(drop), context)?;
    let value = within(remove(con, &key), context)?;
    let Some(path) = op.string("path") else {
        return fail(format!(
            "move operation failed to decode path: {MISSING_PATH}"
        ));
    };
    let Some((con, key)) = find(root, &path) else {
        return fail(format!(
            "move operation does not apply: doc is missing destination path: {path}: \
             missing value"
        ));
    };
    within(add(con, key, value), || {
        format!("error in move for path: '{path}'")
    })
}

fn test_op(root: &mut Node, op: &Op) -> Outcome<()> {
    let Some(path) = op.string("path") else {
        return fail(format!(
            "test operation failed to decode path: {MISSING_PATH}"
        ));
    };
    let value = op.value();
    let same = if path.is_empty() {
        equal(root, value.as_ref())?
    } else {
        let Some((con, key)) = find(root, &path) else {
            return fail(format!(
                "test operation does not apply: is missing path: {path}: missing value"
            ));
        };
        let current = within(get(con, &key), || {
            format!("error in test for path: '{path}'")
        })?;
        match (current, value) {
            (None, None | Some(Node::RawNil)) => true,
            (None, Some(_)) | (Some(_), None) => false,
            (Some(n), Some(v)) => equal(n, Some(&v))?,
        }
    };
    if same {
        Ok(())
    } else {
        fail(format!("testing value {path} failed: test failed"))
    }
}

fn copy_op(root: &mut Node, op: &Op, copied: &mut usize) -> Outcome<()> {
    let Some(from) = op.string("from") else {
        return fail(format!(
            "copy operation failed to decode from: {MISSING_FROM}"
        ));
    };
    let missing_from = || {
        Failure::Error(format!(
            "copy operation does not apply: doc is missing from path: {from}: missing value"
        ))
    };
    let read = |root: &mut Node| -> Outcome<Option<(Node, usize)>> {
        let (con, key) = find(root, &from).ok_or_else(missing_from)?;
        let value = within(get(con, &key), || {
            format!("error in copy for from: '{from}'")
        })?;
        Ok(value.map(|n| deep_copy(n)))
    };
    read(root)?;
    let Some(path) = op.string("path") else {
        return fail("copy operation failed to decode path: missing value");
    };
    let missing_path = || {
        Failure::Error(format!(
            "copy operation does not apply: doc is missing destination path: {path}: \
             missing value"
        ))
    };
    find(root, &path).ok_or_else(missing_path)?;
    // Copied once the destination was found (finding it may read nodes of the source).
    let (copy, size) = match read(root)? {
        Some((copy, size)) => (Some(Box::new(copy)), size),
        None => (None, 0),
    };
    *copied += size;
    if *copied > MAX_COPY_BYTES {
        return fail(format!(
            "Unable to complete the copy, the accumulated size increase of copy is {copied}, \
             exceeding the limit {MAX_COPY_BYTES}"
        ));
    }
    let (con, key) = find(root, &path).ok_or_else(missing_path)?;
    within(add(con, key, copy), || {
        "error while adding value during copy".to_string()
    })
}

/// The library's `findObject`: the container a path ends in, and the last key. The part
/// before the first `/` is not read; containers on the way are read.
fn find<'a>(root: &'a mut Node, path: &str) -> Option<(&'a mut Node, String)> {
    let parts: Vec<&str> = path.split('/').collect();
    let (last, inner) = parts.split_last().filter(|_| parts.len() >= 2)?;
    let mut con = root;
    for part in &inner[1..] {
        let next = get(con, &unescape(part)).ok()??;
        if matches!(next, Node::RawNil | Node::Scalar(_)) {
            return None;
        }
        next.read();
        con = next;
    }
    Some((con, unescape(last)))
}

/// RFC 6901's `~1` and `~0`, read left to right.
fn unescape(part: &str) -> String {
    let mut out = String::with_capacity(part.len());
    let mut rest = part;
    while let Some(i) = rest.find('~') {
        out.push_str(&rest[..i]);
        match rest.as_bytes().get(i + 1) {
            Some(b'1') => out.push('/'),
            Some(b'0') => out.push('~'),
            _ => {
                out.push('~');
                rest = &rest[i + 1..];
                continue;
            }
        }
        rest = &rest[i + 2..];
    }
    out.push_str(rest);
    out
}

/// An array index as Go's `strconv.Atoi` reads it (`+1`, `01`), or its error.
fn atoi(key: &str) -> Result<i64, String> {
    let digits = key.strip_prefix(['+', '-']).unwrap_or(key);
    let why = if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        "invalid syntax"
    } else {
        match key.parse() {
            Ok(i) => return Ok(i),
            Err(_) => "value out of range",
        }
    };
    Err(format!(
        "strconv.Atoi: parsing {}: {why}",
        gojson::go_quote(key)
    ))
}

fn invalid_index<T>(idx: i64) -> Outcome<T> {
    fail(format!(
        "Unable to access invalid index: {idx}: invalid index referenced"
    ))
}

/// An index of an existing item, negative ones counted from the end.
fn item_index(key: &str, len: usize) -> Outcome<usize> {
    let idx = atoi(key).map_err(Failure::Error)?;
    let len = i64::try_from(len).unwrap_or(i64::MAX);
    let at = if idx < 0 { idx + len } else { idx };
    if at < 0 || at >= len {
        return invalid_index(idx);
    }
    usize::try_from(at).or_else(|_| invalid_index(idx))
}

fn put(map: &mut Vec<(String, Slot)>, key: String, value: Slot) {
    match map.iter_mut().find(|(k, _)| *k == key) {
        Some(member) => member.1 = value,
        None => map.push((key, value)),
    }
}

/// A container's member or item (`None`: missing from an object, or null).
fn get<'a>(con: &'a mut Node, key: &str) -> Outcome<Option<&'a mut Node>> {
    match con {
        Node::Obj { map, .. } => Ok(map
            .as_mut()
            .and_then(|m| m.iter_mut().find(|(k, _)| k.as_str() == key))
            .and_then(|(_, v)| v.as_deref_mut())),
        Node::Arr { items, .. } => {
            let idx = item_index(key, items.len())?;
            Ok(items[idx].as_deref_mut())
        }
        _ => Ok(None),
    }
}

const NIL_MAP: &str = "assignment to entry in nil map";

/// `replace`'s write, once `get` found the key.
fn set(con: &mut Node, key: String, value: Slot) -> Outcome<()> {
    match con {
        Node::Obj { map: Some(map), .. } => put(map, key, value),
        Node::Obj { map: None, .. } => return Err(Failure::Panic(NIL_MAP)),
        Node::Arr { items, .. } => {
            let idx = item_index(&key, items.len())?;
            items[idx] = value;
        }
        _ => {}
    }
    Ok(())
}

fn add(con: &mut Node, key: String, value: Slot) -> Outcome<()> {
    match con {
        Node::Obj { map: Some(map), .. } => put(map, key, value),
        Node::Obj { map: None, .. } => return Err(Failure::Panic(NIL_MAP)),
        Node::Arr { items, .. } if key == "-" => items.push(value),
        Node::Arr { items, .. } => {
            let idx = atoi(&key).map_err(|e| {
                Failure::Error(format!("value was not a proper array index: '{key}': {e}"))
            })?;
            let len = i64::try_from(items.len() + 1).unwrap_or(i64::MAX);
            if idx >= len || idx < -len {
                return invalid_index(idx);
            }
            let at = if idx < 0 { idx + len } else { idx };
            items.insert(usize::try_from(at).unwrap_or(0), value);
        }
        _ => {}
    }
    Ok(())
}

fn remove(con: &mut Node, key: &str) -> Outcome<Slot> {
    match con {
        Node::Obj { map, .. } => {
            let map = map.as_mut();
            match map.and_then(|m| m.iter().position(|(k, _)| k == key).map(|i| m.remove(i))) {
                Some((_, value)) => Ok(value),
                None => fail(format!(
                    "Unable to remove nonexistent key: {key}: missing value"
                )),
            }
        }
        Node::Arr { items, .. } => {
            let idx = item_index(key, items.len())?;
            Ok(items.remove(idx))
        }
        _ => Ok(None),
    }
}

/// The library's `lazyNode.equal` of a node of the document and a value of the patch
/// (`None`: a null inside an array, where the library panics). Numbers and strings are
/// compared by their text.
fn equal(n: &mut Node, o: Option<&Node>) -> Outcome<bool> {
    let panic = || Failure::Panic("comparison with a nil node");
    match n {
        Node::RawNil | Node::Scalar(_) => match (&*n, o.ok_or_else(panic)?) {
            (Node::RawNil, Node::RawNil) => Ok(true),
            (Node::Scalar(a), Node::Scalar(b)) => Ok(a == b),
            _ => Ok(false),
        },
        Node::Obj { map, raw } => {
            *raw = None;
            let Node::Obj { map: other, .. } = o.ok_or_else(panic)? else {
                return Ok(false);
            };
            let other = other.as_deref().unwrap_or_default();
            let Some(map) = map else {
                return Ok(other.is_empty());
            };
            if map.len() != other.len() {
                return Ok(false);
            }
            for (k, v) in map.iter_mut() {
                let Some((_, ov)) = other.iter().find(|(ok, _)| ok == k) else {
                    return Ok(false);
                };
                match (v, ov) {
                    (None, None) => {}
                    (Some(v), Some(ov)) => {
                        if !equal(v, Some(ov))? {
                            return Ok(false);
                        }
                    }
                    _ => return Ok(false),
                }
            }
            Ok(true)
        }
        Node::Arr { items, raw } => {
            *raw = None;
            let Node::Arr { items: other, .. } = o.ok_or_else(panic)? else {
                return Ok(false);
            };
            if items.len() != other.len() {
                return Ok(false);
            }
            for (v, ov) in items.iter_mut().zip(other) {
                let v = v.as_deref_mut().ok_or_else(panic)?;
                if !equal(v, ov.as_deref())? {
                    return Ok(false);
                }
            }
            Ok(true)
        }
    }
}
