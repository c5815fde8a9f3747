//! Turning the script's plain-data output back into lossless nodes.
//!
//! The Go function round-trips every item through plain data, so comments
//! and styles are lost and keys come out sorted; kpt's id-based healing then
//! copies comments back and restores the input key order. Natively we can do
//! better without changing the result: an item whose data the script did
//! not change keeps its original node untouched, and a changed item is
//! patched into its original node field by field, so untouched subtrees keep
//! their styles and comments. New keys are appended in sorted order, which
//! is where kpt's order sync puts them too.

use kpt::yaml::{Node, NodeKind};
use serde_json::Value;

/// Annotation keys kpt uses to match function output to input.
const ID_ANNOTATIONS: [&str; 2] = ["internal.config.kubernetes.io/id", "config.k8s.io/id"];
const PATH_ANNOTATIONS: [&str; 2] = [
    "internal.config.kubernetes.io/path",
    "config.kubernetes.io/path",
];

/// Builds the output items: each output item is matched to an input item (by
/// kpt's id annotation, else by identity and file, else by identity) and
/// patched onto it; unmatched items are built fresh.
pub(crate) fn reconcile(originals: &[Node], outputs: &[Value]) -> Result<Vec<Node>, String> {
    let orig_values: Vec<Value> = originals.iter().map(Node::to_value).collect();
    let mut used = vec![false; originals.len()];
    let mut out = Vec::with_capacity(outputs.len());
    for item in outputs {
        if !item.is_object() {
            return Err(format!("resource must be a mapping, got: {item}"));
        }
        let found = find_original(&orig_values, &used, item);
        match found {
            Some(i) => {
                used[i] = true;
                let mut node = originals[i].clone();
                if orig_values[i] != *item {
                    apply(&mut node, item);
                }
                out.push(node);
            }
            None => out.push(to_node(item)),
        }
    }
    Ok(out)
}

fn annotation<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get("metadata")?.get("annotations")?.get(key)?.as_str()
}

fn identity(v: &Value) -> [Option<&str>; 4] {
    let meta = |k: &str| {
        v.get("metadata")
            .and_then(|m| m.get(k))
            .and_then(Value::as_str)
    };
    [
        v.get("apiVersion").and_then(Value::as_str),
        v.get("kind").and_then(Value::as_str),
        meta("namespace"),
        meta("name"),
    ]
}

/// [`identity`] without the namespace.
fn loose(v: &Value) -> [Option<&str>; 3] {
    let [a, k, _, n] = identity(v);
    [a, k, n]
}

fn path_of(v: &Value) -> Option<&str> {
    PATH_ANNOTATIONS.iter().find_map(|k| annotation(v, k))
}

fn find_original(origs: &[Value], used: &[bool], item: &Value) -> Option<usize> {
    let free = |i: &usize| !used[*i];
    for key in ID_ANNOTATIONS {
        if let Some(id) = annotation(item, key)
            && let Some(i) = (0..origs.len())
                .filter(free)
                .find(|&i| annotation(&origs[i], key) == Some(id))
        {
            return Some(i);
        }
    }
    let ident = identity(item);
    (0..origs.len())
        .filter(free)
        .find(|&i| identity(&origs[i]) == ident && path_of(&origs[i]) == path_of(item))
        .or_else(|| {
            (0..origs.len())
                .filter(free)
                .find(|&i| identity(&origs[i]) == ident)
        })
        // A script that sets the namespace changes the identity; name and
        // kind still tell which input it was.
        .or_else(|| {
            (0..origs.len())
                .filter(free)
                .find(|&i| loose(&origs[i]) == loose(item))
        })
}

/// Patches `node` so that its data becomes `new`, touching as little as
/// possible: equal subtrees are kept, changed scalars are replaced (keeping
/// the node's comments), removed keys are dropped, new keys appended.
pub(crate) fn apply(node: &mut Node, new: &Value) {
    if node.to_value() == *new {
        return;
    }
    match (&mut node.kind, new) {
        (NodeKind::Mapping(entries), Value::Object(map)) => {
            entries.retain(|(k, _)| k.as_str().is_some_and(|k| map.contains_key(k)));
            for (k, v) in map {
                match entries.iter_mut().find(|(ek, _)| ek.as_str() == Some(k)) {
                    Some((_, existing)) => apply(existing, v),
                    None => entries.push((Node::string(k.clone()), to_node(v))),
                }
            }
        }
        (NodeKind::Sequence(items), Value::Array(new_items)) => {
            let old = std::mem::take(items);
            let old_values: Vec<Value> = old.iter().map(Node::to_value).collect();
            let mut used = vec![false; old.len()];
            for (i, nv) in new_items.iter().enumerate() {
                let pick = (0..old.len())
                    .find(|&j| !used[j] && old_values[j] == *nv)
                    .or_else(|| {
                        let name = nv.get("name").and_then(Value::as_str)?;
                        (0..old.len()).find(|&j| {
                            !used[j]
                                && old_values[j].get("name").and_then(Value::as_str) == Some(name)
                        })
                    })
                    .or_else(|| {
                        (i < old.len() && !used[i] && same_shape(&old_values[i], nv)).then_some(i)
                    });
                match pick {
                    Some(j) => {
                        used[j] = true;
                        let mut n = old[j].clone();
                        apply(&mut n, nv);
                        items.push(n);
                    }
                    None => items.push(to_node(nv)),
                }
            }
        }
        _ => {
            let mut fresh = to_node(new);
            fresh.head_comment = std::mem::take(&mut node.head_comment);
            fresh.line_comment = std::mem::take(&mut node.line_comment);
            fresh.foot_comment = std::mem::take(&mut node.foot_comment);
            *node = fresh;
        }
    }
}

fn same_shape(a: &Value, b: &Value) -> bool {
    matches!(
        (a, b),
        (Value::Object(_), Value::Object(_)) | (Value::Array(_), Value::Array(_))
    ) || (!a.is_object() && !a.is_array() && !b.is_object() && !b.is_array())
}

/// A fresh node for plain data, as yaml.v3 marshals Go data: strings quoted
/// only when needed, numbers/bools/null plain, keys in the given order.
pub(crate) fn to_node(v: &Value) -> Node {
    match v {
        Value::Null => Node::plain("null"),
        Value::Bool(b) => Node::plain(b.to_string()),
        Value::Number(n) => Node::plain(go_number(n)),
        Value::String(s) => Node::string(s.clone()),
        Value::Array(a) => {
            let mut n = Node::sequence();
            if let Some(items) = n.items_mut() {
                items.extend(a.iter().map(to_node));
            }
            n
        }
        Value::Object(o) => {
            let mut n = Node::mapping();
            if let Some(e) = n.entries_mut() {
                e.extend(o.iter().map(|(k, v)| (Node::string(k.clone()), to_node(v))));
            }
            n
        }
    }
}

/// yaml.v3's text of a Go float (`strconv.FormatFloat(f, 'g', -1, 64)`:
/// `2`, `1e+06`); integers as they are.
fn go_number(n: &serde_json::Number) -> String {
    if n.is_f64() {
        let f = n.as_f64().unwrap_or_default();
        if f.is_finite() {
            super::gofmt::shortest_g(f)
        } else if f.is_nan() {
            ".nan".into()
        } else if f.is_infinite() {
            if f > 0.0 { ".inf" } else { "-.inf" }.into()
        } else {
            format!("{f}")
        }
    } else {
        n.to_string()
    }
}

/// Sorts object keys recursively (Go marshals maps in key order).
pub(crate) fn sort_keys(v: Value) -> Value {
    match v {
        Value::Object(o) => {
            let mut pairs: Vec<(String, Value)> = o.into_iter().collect();
            pairs.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(pairs.into_iter().map(|(k, v)| (k, sort_keys(v))).collect())
        }
        Value::Array(a) => Value::Array(a.into_iter().map(sort_keys).collect()),
        other => other,
    }
}

/// Refuses numbers starlark cannot hold (`1e4002` from JSON or YAML: not an `f64`, not an
/// integer): allocating one panics inside starlark ("Unrepresentable number").
pub(crate) fn check_numbers(v: &Value) -> Result<(), String> {
    match v {
        Value::Number(n) => {
            let text = n.to_string();
            let integer = {
                let digits = text.strip_prefix('-').unwrap_or(&text);
                !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
            };
            if n.as_u64().is_some() || n.as_i64().is_some() || n.as_f64().is_some() || integer {
                Ok(())
            } else {
                Err(format!("number {text} is out of range"))
            }
        }
        Value::Array(items) => items.iter().try_for_each(check_numbers),
        Value::Object(map) => map.values().try_for_each(check_numbers),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testing::{emit, node};
    use serde_json::json;

    #[test]
    fn unchanged_items_keep_their_node() {
        let orig = node("a: \"x\" # c\nb: [1, 2]\n");
        let v = orig.to_value();
        let out = reconcile(std::slice::from_ref(&orig), &[v]).expect("ok");
        assert_eq!(out[0], orig);
    }

    #[test]
    fn changes_are_patched_in_place() {
        let orig = node(
            "kind: K\nmetadata:\n  name: n # keep\nspec:\n  b: 'q'\n  a: 1\n  list:\n    - name: x\n      v: 1\n    - name: y\n      v: 2\n",
        );
        let new = sort_keys(json!({
            "kind": "K",
            "metadata": {"name": "n", "namespace": "prod"},
            "spec": {"b": "q", "a": 5, "list": [{"name": "y", "v": 2}, {"v": 3, "name": "z"}], "c": true}
        }));
        let out = reconcile(std::slice::from_ref(&orig), &[new]).expect("ok");
        assert_eq!(
            emit(&out),
            "kind: K\nmetadata:\n  name: n # keep\n  namespace: prod\nspec:\n  b: 'q'\n  a: 5\n  list:\n  - name: y\n    v: 2\n  - name: z\n    v: 3\n  c: true\n"
        );
    }

    #[test]
    fn new_items_are_built_fresh() {
        let out = reconcile(
            &[],
            &[sort_keys(
                json!({"kind": "K", "n": 2.0, "s": "3", "z": null}),
            )],
        )
        .expect("ok");
        assert_eq!(emit(&out), "kind: K\n\"n\": 2\ns: \"3\"\nz: null\n");
        assert!(reconcile(&[], &[json!(1)]).is_err());
    }
}
