//! Field paths and sets of them, and their `FieldsV1` encoding (the trie kube-apiserver keeps
//! in `metadata.managedFields[].fieldsV1`): `f:<name>` a field, `k:<json>` an item of an
//! associative list by its key fields, `v:<json>` an item of a set list, `i:<n>` a list index,
//! and `.` the node itself when it is a member and has children too.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

/// One step of a path. Keys and values are kept as compact JSON (keys with sorted fields) so
/// that elements compare and order without parsing.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Element {
    Field(String),
    Key(String),
    Value(String),
    Index(u64),
}

pub type Path = Vec<Element>;

impl Element {
    /// The associative-list element for the key fields of `item` (`None` when one is missing).
    pub fn key_of(item: &Value, keys: &[String]) -> Option<Element> {
        let obj = item.as_object()?;
        let mut sorted: Vec<&String> = keys.iter().collect();
        sorted.sort();
        let mut m = Map::new();
        for k in sorted {
            m.insert(k.clone(), obj.get(k)?.clone());
        }
        Some(Element::Key(Value::Object(m).to_string()))
    }

    pub fn value_of(item: &Value) -> Element {
        Element::Value(item.to_string())
    }

    fn encode(&self) -> String {
        match self {
            Element::Field(n) => format!("f:{n}"),
            Element::Key(k) => format!("k:{k}"),
            Element::Value(v) => format!("v:{v}"),
            Element::Index(i) => format!("i:{i}"),
        }
    }

    fn decode(s: &str) -> Result<Element, String> {
        let (tag, rest) = s
            .split_once(':')
            .ok_or_else(|| format!("invalid path element {s:?}"))?;
        let json = |r: &str| -> Result<Value, String> {
            serde_json::from_str(r).map_err(|e| format!("invalid path element {s:?}: {e}"))
        };
        match tag {
            "f" => Ok(Element::Field(rest.to_owned())),
            "k" => {
                let v = json(rest)?;
                let obj = v.as_object().ok_or_else(|| format!("invalid key {s:?}"))?;
                let keys: Vec<String> = obj.keys().cloned().collect();
                Element::key_of(&v, &keys).ok_or_else(|| format!("invalid key {s:?}"))
            }
            "v" => Ok(Element::value_of(&json(rest)?)),
            "i" => rest
                .parse()
                .map(Element::Index)
                .map_err(|_| format!("invalid index {s:?}")),
            _ => Err(format!("invalid path element {s:?}")),
        }
    }
}

/// A path as kube-apiserver prints it in conflicts: `.spec.x`, `.spec.l[name="a"].v`,
/// `.metadata.finalizers[="f"]`, `.spec.l[0]`.
pub fn display(path: &[Element]) -> String {
    let mut out = String::new();
    for e in path {
        match e {
            Element::Field(n) => {
                out.push('.');
                out.push_str(n);
            }
            Element::Key(k) => {
                let parts: Vec<String> = serde_json::from_str::<Map<String, Value>>(k)
                    .unwrap_or_default()
                    .iter()
                    .map(|(n, v)| format!("{n}={v}"))
                    .collect();
                out.push('[');
                out.push_str(&parts.join(","));
                out.push(']');
            }
            Element::Value(v) => {
                out.push_str("[=");
                out.push_str(v);
                out.push(']');
            }
            Element::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// A set of field paths (the fields one manager owns, or that a change touched).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Set(BTreeSet<Path>);

impl Set {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn insert(&mut self, p: Path) {
        self.0.insert(p);
    }

    pub fn contains(&self, p: &[Element]) -> bool {
        self.0.contains(p)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Path> {
        self.0.iter()
    }

    pub fn union(&self, other: &Set) -> Set {
        Set(self.0.union(&other.0).cloned().collect())
    }

    pub fn difference(&self, other: &Set) -> Set {
        Set(self.0.difference(&other.0).cloned().collect())
    }

    pub fn intersection(&self, other: &Set) -> Set {
        Set(self.0.intersection(&other.0).cloned().collect())
    }

    pub fn retain(&mut self, f: impl FnMut(&Path) -> bool) {
        self.0.retain(f);
    }

    /// Is some member `prefix` or below it?
    pub fn has_prefix(&self, prefix: &[Element]) -> bool {
        self.0
            .range(prefix.to_vec()..)
            .next()
            .is_some_and(|p| p.starts_with(prefix))
    }

    /// The `FieldsV1` trie of the set.
    pub fn to_fields_v1(&self) -> Value {
        let mut root = Map::new();
        for path in &self.0 {
            let Some((last, parents)) = path.split_last() else {
                continue;
            };
            let mut node = &mut root;
            for e in parents {
                node = child(node, &e.encode());
                // A node with children marks its own membership with `.` (added below when
                // it is a member); a node reached only as a parent has none.
            }
            let leaf = child(node, &last.encode());
            if !leaf.is_empty() {
                mark_member(leaf);
            }
        }
        // A member that later got children needs its `.`: members were inserted in sorted
        // order, so a parent member was inserted before its children as an empty object.
        fix_members(&mut root, self, &mut Vec::new());
        Value::Object(root)
    }

    /// Parses a `FieldsV1` trie.
    pub fn from_fields_v1(v: &Value) -> Result<Set, String> {
        let mut set = Set::new();
        let obj = v
            .as_object()
            .ok_or_else(|| "fieldsV1 must be an object".to_string())?;
        walk(obj, &mut Vec::new(), &mut set)?;
        Ok(set)
    }
}

fn child<'a>(node: &'a mut Map<String, Value>, key: &str) -> &'a mut Map<String, Value> {
    let entry = node
        .entry(key.to_owned())
        .or_insert_with(|| Value::Object(Map::new()));
    if !entry.is_object() {
        *entry = Value::Object(Map::new());
    }
    match entry {
        Value::Object(m) => m,
        _ => unreachable!("made an object above"),
    }
}

fn mark_member(node: &mut Map<String, Value>) {
    // `.` comes first, as kube-apiserver writes it.
    if node.contains_key(".") {
        return;
    }
    let rest = std::mem::take(node);
    node.insert(".".into(), Value::Object(Map::new()));
    node.extend(rest);
}

fn fix_members(node: &mut Map<String, Value>, set: &Set, path: &mut Path) {
    for (k, v) in node.iter_mut() {
        if k == "." {
            continue;
        }
        let Ok(e) = Element::decode(k) else {
            continue;
        };
        path.push(e);
        if let Value::Object(m) = v
            && !m.is_empty()
        {
            if set.contains(path) {
                mark_member(m);
            }
            fix_members(m, set, path);
        }
        path.pop();
    }
}

fn walk(obj: &Map<String, Value>, path: &mut Path, set: &mut Set) -> Result<(), String> {
    for (k, v) in obj {
        if k == "." {
            set.insert(path.clone());
            continue;
        }
        path.push(Element::decode(k)?);
        match v.as_object() {
            Some(m) if m.is_empty() => set.insert(path.clone()),
            Some(m) => walk(m, path, set)?,
            None => return Err(format!("fieldsV1 entry {k:?} must be an object")),
        }
        path.pop();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn f(n: &str) -> Element {
        Element::Field(n.into())
    }

    #[test]
    fn fields_v1_round_trip_with_dot_for_members_with_children() {
        let item = Element::key_of(
            &json!({"name": "x", "port": 1}),
            &["port".into(), "name".into()],
        )
        .expect("keyed");
        let mut s = Set::new();
        s.insert(vec![f("metadata"), f("labels"), f("a")]);
        s.insert(vec![f("spec"), f("list"), item.clone()]);
        s.insert(vec![f("spec"), f("list"), item.clone(), f("v")]);
        s.insert(vec![
            f("metadata"),
            f("finalizers"),
            Element::value_of(&json!("fin")),
        ]);
        let v = s.to_fields_v1();
        assert_eq!(
            v,
            json!({
                "f:metadata": {"f:labels": {"f:a": {}}, "f:finalizers": {"v:\"fin\"": {}}},
                "f:spec": {"f:list": {"k:{\"name\":\"x\",\"port\":1}": {".": {}, "f:v": {}}}}
            })
        );
        assert_eq!(Set::from_fields_v1(&v).expect("parses"), s);
        assert_eq!(
            display(&[f("spec"), f("list"), item, f("v")]),
            ".spec.list[name=\"x\",port=1].v"
        );
        assert_eq!(
            display(&[
                f("metadata"),
                f("finalizers"),
                Element::value_of(&json!("fin"))
            ]),
            ".metadata.finalizers[=\"fin\"]"
        );
        assert!(Set::from_fields_v1(&json!({"x:y": {}})).is_err());
        assert!(s.has_prefix(&[f("spec")]));
        assert!(!s.has_prefix(&[f("status")]));
    }
}
