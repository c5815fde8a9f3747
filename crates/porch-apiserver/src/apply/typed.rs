//! An object read through its OpenAPI schema, as structured-merge-diff reads it: which maps
//! are structs or granular maps, which lists are associative (`x-kubernetes-list-type: map`
//! keyed by `x-kubernetes-list-map-keys`), sets (`set`) or atomic (anything else, as kube
//! treats a CRD list without a list type). Fields the schema does not describe are read as
//! kube reads an untyped value: maps granular, lists atomic.
//!
//! On that reading: the set of fields an object sets, the comparison of two objects, the
//! merge of an applied configuration into a live object, and the removal of fields.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use serde_json::{Value, json};

use super::path::{Element, Path, Set};

/// `metadata` as kube types it (CRD schemas only say `type: object`).
static OBJECT_META: LazyLock<Value> = LazyLock::new(|| {
    let string_map = json!({"type": "object", "additionalProperties": {"type": "string"}});
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "generateName": {"type": "string"},
            "namespace": {"type": "string"},
            "labels": string_map,
            "annotations": string_map,
            "finalizers": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
            "ownerReferences": {
                "type": "array",
                "items": {"type": "object", "properties": {
                    "apiVersion": {"type": "string"}, "kind": {"type": "string"},
                    "name": {"type": "string"}, "uid": {"type": "string"},
                    "controller": {"type": "boolean"}, "blockOwnerDeletion": {"type": "boolean"}}},
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["uid"]
            }
        }
    })
});

/// A place in the schema (`None`: not described, read as untyped).
#[derive(Clone, Copy)]
pub struct Node<'a> {
    schema: Option<&'a Value>,
    root: bool,
}

/// How a value at a node merges and is owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shape {
    /// Named fields (a schema with `properties`): granular.
    Struct,
    /// Arbitrary keys: granular.
    Map,
    /// Associative list keyed by these fields.
    Keyed(Vec<String>),
    /// List of distinct scalars.
    SetList,
    /// Replaced and owned as a whole (scalars, atomic lists and maps).
    Atomic,
}

impl<'a> Node<'a> {
    pub fn root(schema: &'a Value) -> Self {
        Node {
            schema: Some(schema),
            root: true,
        }
    }

    fn get(&self, key: &str) -> Option<&'a Value> {
        self.schema.and_then(|s| s.get(key))
    }

    /// The node of field `name` of an object at this node.
    pub fn field(&self, name: &str) -> Node<'a> {
        if self.root && name == "metadata" {
            return Node {
                schema: Some(&OBJECT_META),
                root: false,
            };
        }
        let schema = self
            .get("properties")
            .and_then(|p| p.get(name))
            .or_else(|| self.get("additionalProperties").filter(|a| a.is_object()));
        Node {
            schema,
            root: false,
        }
    }

    /// The node of the items of a list at this node.
    pub fn items(&self) -> Node<'a> {
        Node {
            schema: self.get("items"),
            root: false,
        }
    }

    /// The shape of `v` at this node.
    pub fn shape(&self, v: &Value) -> Shape {
        match v {
            Value::Object(_) => {
                if self.get("x-kubernetes-map-type").and_then(Value::as_str) == Some("atomic") {
                    Shape::Atomic
                } else if self.root || self.get("properties").is_some() {
                    Shape::Struct
                } else {
                    Shape::Map
                }
            }
            Value::Array(items) => {
                match self.get("x-kubernetes-list-type").and_then(Value::as_str) {
                    Some("map") => {
                        let keys: Vec<String> = self
                            .get("x-kubernetes-list-map-keys")
                            .and_then(Value::as_array)
                            .map(|k| {
                                k.iter()
                                    .filter_map(Value::as_str)
                                    .map(String::from)
                                    .collect()
                            })
                            .unwrap_or_default();
                        if !keys.is_empty() && distinct(items, |i| Element::key_of(i, &keys)) {
                            Shape::Keyed(keys)
                        } else {
                            Shape::Atomic
                        }
                    }
                    Some("set")
                        if distinct(items, |i| {
                            (!i.is_object() && !i.is_array()).then(|| Element::value_of(i))
                        }) =>
                    {
                        Shape::SetList
                    }
                    _ => Shape::Atomic,
                }
            }
            _ => Shape::Atomic,
        }
    }
}

/// Every item has an element and no two items share one (else the list is read as atomic).
fn distinct(items: &[Value], elem: impl Fn(&Value) -> Option<Element>) -> bool {
    let mut seen = std::collections::HashSet::new();
    items
        .iter()
        .all(|i| elem(i).is_some_and(|e| seen.insert(e)))
}

/// The element of each item of a granular list.
fn item_elements(shape: &Shape, items: &[Value]) -> Vec<Element> {
    items
        .iter()
        .map(|i| match shape {
            Shape::Keyed(keys) => Element::key_of(i, keys).unwrap_or_else(|| Element::value_of(i)),
            _ => Element::value_of(i),
        })
        .collect()
}

/// The leaves of an object: each owned path, with its value when it is owned as a whole
/// (`None` for list items, whose fields are owned one by one).
pub type Leaves = BTreeMap<Path, Option<Value>>;

/// The fields `v` sets (what the applier of `v` owns).
pub fn leaves(v: &Value, node: Node<'_>) -> Leaves {
    let mut out = Leaves::new();
    collect(v, node, &mut Vec::new(), &mut out);
    out
}

fn collect(v: &Value, node: Node<'_>, path: &mut Path, out: &mut Leaves) {
    match (node.shape(v), v) {
        (Shape::Struct | Shape::Map, Value::Object(m)) => {
            for (k, child) in m {
                path.push(Element::Field(k.clone()));
                collect(child, node.field(k), path, out);
                path.pop();
            }
        }
        (shape @ (Shape::Keyed(_) | Shape::SetList), Value::Array(items)) => {
            let elems = item_elements(&shape, items);
            for (item, e) in items.iter().zip(elems) {
                path.push(e);
                if shape == Shape::SetList {
                    out.insert(path.clone(), Some(item.clone()));
                } else {
                    out.insert(path.clone(), None);
                    collect_item(item, node.items(), path, out);
                }
                path.pop();
            }
        }
        _ => {
            if !path.is_empty() {
                out.insert(path.clone(), Some(v.clone()));
            }
        }
    }
}

fn collect_item(item: &Value, node: Node<'_>, path: &mut Path, out: &mut Leaves) {
    if let Value::Object(m) = item {
        for (k, child) in m {
            path.push(Element::Field(k.clone()));
            collect(child, node.field(k), path, out);
            path.pop();
        }
    }
}

/// The paths of some leaves.
pub fn set_of(leaves: &Leaves) -> Set {
    let mut s = Set::new();
    for p in leaves.keys() {
        s.insert(p.clone());
    }
    s
}

/// What changed from `old` to `new`: fields added, fields whose value changed, fields removed.
pub struct Comparison {
    pub added: Set,
    pub modified: Set,
    pub removed: Set,
}

impl Comparison {
    pub fn changed(&self) -> Set {
        self.added.union(&self.modified)
    }
}

pub fn compare(old: &Value, new: &Value, node: Node<'_>) -> Comparison {
    let (a, b) = (leaves(old, node), leaves(new, node));
    let mut c = Comparison {
        added: Set::new(),
        modified: Set::new(),
        removed: Set::new(),
    };
    for (p, v) in &b {
        match a.get(p) {
            None => c.added.insert(p.clone()),
            Some(old_v) if old_v != v => c.modified.insert(p.clone()),
            Some(_) => {}
        }
    }
    for p in a.keys() {
        if !b.contains_key(p) {
            c.removed.insert(p.clone());
        }
    }
    c
}

/// `config` merged into `live`: granular maps and structs field by field, associative lists
/// item by item (by key), set lists as a union, everything else replaced.
pub fn merge(live: &Value, config: &Value, node: Node<'_>) -> Value {
    match (live, config) {
        (Value::Object(l), Value::Object(c))
            if matches!(node.shape(config), Shape::Struct | Shape::Map)
                && matches!(node.shape(live), Shape::Struct | Shape::Map) =>
        {
            let mut out = l.clone();
            for (k, cv) in c {
                let merged = match l.get(k) {
                    Some(lv) => merge(lv, cv, node.field(k)),
                    None => cv.clone(),
                };
                out.insert(k.clone(), merged);
            }
            Value::Object(out)
        }
        (Value::Array(l), Value::Array(c)) => {
            let (ls, cs) = (node.shape(live), node.shape(config));
            if ls != cs || matches!(cs, Shape::Atomic) {
                return config.clone();
            }
            let le = item_elements(&ls, l);
            let ce = item_elements(&cs, c);
            let mut out = l.clone();
            for (item, e) in c.iter().zip(ce) {
                match le.iter().position(|x| *x == e) {
                    Some(i) if matches!(cs, Shape::Keyed(_)) => {
                        out[i] = merge_item(&l[i], item, node.items());
                    }
                    Some(_) => {}
                    None => out.push(item.clone()),
                }
            }
            Value::Array(out)
        }
        _ => config.clone(),
    }
}

fn merge_item(live: &Value, config: &Value, node: Node<'_>) -> Value {
    match (live, config) {
        (Value::Object(l), Value::Object(c)) => {
            let mut out = l.clone();
            for (k, cv) in c {
                let merged = match l.get(k) {
                    Some(lv) => merge(lv, cv, node.field(k)),
                    None => cv.clone(),
                };
                out.insert(k.clone(), merged);
            }
            Value::Object(out)
        }
        _ => config.clone(),
    }
}

/// Removes the value at `path` (a field, or a list item by key or value); then every map,
/// struct or list that this emptied on the way up, unless `keep` says otherwise.
pub fn remove(
    obj: &mut Value,
    path: &[Element],
    node: Node<'_>,
    keep: &dyn Fn(&[Element]) -> bool,
) {
    remove_at(obj, path, 0, node, keep);
}

/// Returns whether `v` became empty through this removal.
fn remove_at(
    v: &mut Value,
    path: &[Element],
    depth: usize,
    node: Node<'_>,
    keep: &dyn Fn(&[Element]) -> bool,
) -> bool {
    let Some(e) = path.get(depth) else {
        return false;
    };
    let last = depth + 1 == path.len();
    match (e, v) {
        (Element::Field(name), Value::Object(m)) => {
            if last {
                m.remove(name);
            } else if let Some(child) = m.get_mut(name)
                && remove_at(child, path, depth + 1, node.field(name), keep)
                && !keep(&path[..=depth])
            {
                m.remove(name);
            }
            m.is_empty()
        }
        (Element::Key(_) | Element::Value(_), Value::Array(items)) => {
            let shape = node.shape(&Value::Array(items.clone()));
            let elems = item_elements(&shape, items);
            if let Some(i) = elems.iter().position(|x| x == e) {
                // The item itself, or an item its removed field emptied.
                let gone = last
                    || (remove_at(&mut items[i], path, depth + 1, node.items(), keep)
                        && !keep(&path[..=depth]));
                if gone {
                    items.remove(i);
                }
            }
            items.is_empty()
        }
        (Element::Index(i), Value::Array(items)) => {
            let i = usize::try_from(*i).unwrap_or(usize::MAX);
            if last && i < items.len() {
                items.remove(i);
            }
            items.is_empty()
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> Value {
        json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "ports": {"type": "array", "x-kubernetes-list-type": "map",
                          "x-kubernetes-list-map-keys": ["name"],
                          "items": {"type": "object", "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}},
                "hosts": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                "args": {"type": "array", "items": {"type": "string"}},
                "sel": {"type": "object", "x-kubernetes-map-type": "atomic"}
            }}
        }})
    }

    fn f(n: &str) -> Element {
        Element::Field(n.into())
    }

    #[test]
    fn leaves_follow_list_and_map_types() {
        let s = schema();
        let obj = json!({"metadata": {"name": "x", "labels": {"a": "1"}, "finalizers": ["f"]},
                         "spec": {"ports": [{"name": "http", "port": 80}], "hosts": ["h"],
                                  "args": ["x", "y"], "sel": {"k": "v"}, "extra": {"u": 1}}});
        let set = set_of(&leaves(&obj, Node::root(&s)));
        let http = Element::key_of(&json!({"name": "http"}), &["name".into()]).expect("key");
        for p in [
            vec![f("metadata"), f("name")],
            vec![f("metadata"), f("labels"), f("a")],
            vec![
                f("metadata"),
                f("finalizers"),
                Element::value_of(&json!("f")),
            ],
            vec![f("spec"), f("ports"), http.clone()],
            vec![f("spec"), f("ports"), http.clone(), f("port")],
            vec![f("spec"), f("hosts"), Element::value_of(&json!("h"))],
            vec![f("spec"), f("args")],
            vec![f("spec"), f("sel")],
            vec![f("spec"), f("extra"), f("u")],
        ] {
            assert!(set.contains(&p), "{p:?} in {set:?}");
        }
        assert!(!set.contains(&[f("spec")]));
        assert!(!set.contains(&[f("spec"), f("sel"), f("k")]));
    }

    #[test]
    fn merge_is_granular_where_the_schema_says_so() {
        let s = schema();
        let live = json!({"spec": {"ports": [{"name": "a", "port": 1}, {"name": "b", "port": 2}],
                                   "hosts": ["x"], "args": ["1", "2"], "sel": {"a": "1"}, "m": {"k": 1}}});
        let config = json!({"spec": {"ports": [{"name": "b", "port": 3}, {"name": "c", "port": 4}],
                                     "hosts": ["y"], "args": ["3"], "sel": {"b": "2"}, "m": {"j": 2}}});
        let merged = merge(&live, &config, Node::root(&s));
        assert_eq!(
            merged,
            json!({"spec": {"ports": [{"name": "a", "port": 1}, {"name": "b", "port": 3}, {"name": "c", "port": 4}],
                            "hosts": ["x", "y"], "args": ["3"], "sel": {"b": "2"}, "m": {"k": 1, "j": 2}}})
        );
        let c = compare(&live, &merged, Node::root(&s));
        let b_port = vec![
            f("spec"),
            f("ports"),
            Element::key_of(&json!({"name": "b"}), &["name".into()]).expect("key"),
            f("port"),
        ];
        assert!(c.modified.contains(&b_port));
        assert!(c.added.contains(&[f("spec"), f("m"), f("j")]));
        assert!(c.removed.is_empty());
    }

    #[test]
    fn remove_drops_emptied_parents_unless_kept() {
        let s = schema();
        let mut obj = json!({"metadata": {"labels": {"a": "1"}}, "spec": {"m": {"k": 1, "j": 2}}});
        // `metadata` stays (kept: owned by someone), the emptied labels go.
        let top = |p: &[Element]| p.len() == 1;
        remove(
            &mut obj,
            &[f("metadata"), f("labels"), f("a")],
            Node::root(&s),
            &top,
        );
        assert_eq!(
            obj,
            json!({"metadata": {}, "spec": {"m": {"k": 1, "j": 2}}})
        );
        remove(
            &mut obj,
            &[f("spec"), f("m"), f("k")],
            Node::root(&s),
            &|_| false,
        );
        assert_eq!(obj["spec"], json!({"m": {"j": 2}}));
        let key = Element::key_of(&json!({"name": "a"}), &["name".into()]).expect("key");
        let mut obj = json!({"spec": {"ports": [{"name": "a", "port": 1}, {"name": "b"}]}});
        remove(
            &mut obj,
            &[f("spec"), f("ports"), key],
            Node::root(&s),
            &|_| false,
        );
        assert_eq!(obj, json!({"spec": {"ports": [{"name": "b"}]}}));
    }
}
