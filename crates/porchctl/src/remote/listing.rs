//! What `repo get` and `rpkg get` do with what the server lists: merge the Tables of
//! several requests, flatten a List into objects, and `--sort-by` (kubectl's sorter: rows
//! or objects ordered by a JSONPath into each object).

use std::cmp::Ordering;

use serde_json::Value;

use super::error::RemoteError;
use super::jsonpath::JsonPath;

/// One Table holding every row (kubectl prints the header once when the columns agree).
pub fn merge_tables(tables: Vec<Value>) -> Result<Value, RemoteError> {
    let mut iter = tables.into_iter();
    let Some(mut first) = iter.next() else {
        return Ok(Value::Null);
    };
    if first.get("kind").and_then(Value::as_str) != Some("Table") {
        return Err(RemoteError::Decode(
            "the server did not return a Table; it may not support server-side printing".into(),
        ));
    }
    for t in iter {
        if let (Some(Value::Array(rows)), Value::Object(mut t)) = (first.get_mut("rows"), t)
            && let Some(Value::Array(more)) = t.remove("rows")
        {
            rows.extend(more);
        }
    }
    Ok(first)
}

/// The items of a List, each given the list's apiVersion/kind when it lacks its own
/// (kubectl's Flatten does the same).
pub fn list_items(list: Value) -> Vec<Value> {
    let Value::Object(mut list) = list else {
        return Vec::new();
    };
    let api_version = list.get("apiVersion").cloned();
    let kind = list
        .get("kind")
        .and_then(Value::as_str)
        .and_then(|k| k.strip_suffix("List"))
        .map(|k| Value::String(k.to_string()));
    let Some(Value::Array(items)) = list.remove("items") else {
        return Vec::new();
    };
    items
        .into_iter()
        .map(|mut item| {
            if let Value::Object(m) = &mut item {
                if !m.contains_key("apiVersion")
                    && let Some(v) = &api_version
                {
                    m.insert("apiVersion".into(), v.clone());
                }
                if !m.contains_key("kind")
                    && let Some(k) = &kind
                {
                    m.insert("kind".into(), k.clone());
                }
            }
            item
        })
        .collect()
}

/// A parsed `--sort-by` expression.
#[derive(Debug, Clone)]
pub struct SortBy {
    expr: String,
    path: JsonPath,
}

impl SortBy {
    /// Parses `--sort-by` (`.metadata.name` or `{.metadata.name}`); empty means no sorting.
    pub fn parse(expr: &str) -> Result<Option<Self>, RemoteError> {
        if expr.trim().is_empty() {
            return Ok(None);
        }
        Ok(Some(SortBy {
            expr: expr.to_string(),
            path: JsonPath::parse(expr)?,
        }))
    }

    /// The first value the path selects in `obj`, if any.
    fn key<'a>(&self, obj: &'a Value) -> Option<&'a Value> {
        self.path.find(obj).into_iter().next()
    }

    /// kubectl fails when no object has the field at all (a typo would otherwise
    /// silently leave the order as it was).
    fn check_found(&self, keys: &[Option<&Value>]) -> Result<(), RemoteError> {
        if !keys.is_empty() && keys.iter().all(Option::is_none) {
            return Err(RemoteError::Usage(format!(
                "couldn't find any field with path {:?} in the list of objects",
                self.expr
            )));
        }
        Ok(())
    }

    /// Sorts objects in place (stable, like kubectl's `sort.Stable`).
    pub fn sort_objects(&self, objects: &mut [Value]) -> Result<(), RemoteError> {
        let keys: Vec<Option<&Value>> = objects.iter().map(|o| self.key(o)).collect();
        self.check_found(&keys)?;
        let mut order: Vec<usize> = (0..objects.len()).collect();
        order.sort_by(|&a, &b| compare(keys[a], keys[b]));
        let sorted: Vec<Value> = order.iter().map(|&i| objects[i].clone()).collect();
        for (slot, v) in objects.iter_mut().zip(sorted) {
            *slot = v;
        }
        Ok(())
    }

    /// Sorts a Table's rows by the path into each row's `object` (the request must have
    /// asked for `includeObject=Object`).
    pub fn sort_table(&self, table: &mut Value) -> Result<(), RemoteError> {
        let Some(Value::Array(rows)) = table.get_mut("rows") else {
            return Ok(());
        };
        let null = Value::Null;
        let keys: Vec<Option<Value>> = rows
            .iter()
            .map(|r| self.key(r.get("object").unwrap_or(&null)).cloned())
            .collect();
        self.check_found(&keys.iter().map(Option::as_ref).collect::<Vec<_>>())?;
        let mut order: Vec<usize> = (0..rows.len()).collect();
        order.sort_by(|&a, &b| compare(keys[a].as_ref(), keys[b].as_ref()));
        let mut taken: Vec<Option<Value>> = rows.drain(..).map(Some).collect();
        rows.extend(order.into_iter().filter_map(|i| taken[i].take()));
        Ok(())
    }
}

/// kubectl's `isLess`: missing values first, numbers by value, strings in natural order
/// (`v2` before `v10`), booleans false first; values of different types by type.
fn compare(a: Option<&Value>, b: Option<&Value>) -> Ordering {
    match (a, b) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(a), Some(b)) => match (a, b) {
            (Value::Number(x), Value::Number(y)) => {
                let (x, y) = (x.as_f64().unwrap_or(0.0), y.as_f64().unwrap_or(0.0));
                x.partial_cmp(&y).unwrap_or(Ordering::Equal)
            }
            (Value::String(x), Value::String(y)) => natural(x, y),
            (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
            _ => rank(a).cmp(&rank(b)),
        },
    }
}

fn rank(v: &Value) -> u8 {
    match v {
        Value::Null => 0,
        Value::Bool(_) => 1,
        Value::Number(_) => 2,
        Value::String(_) => 3,
        Value::Array(_) => 4,
        Value::Object(_) => 5,
    }
}

/// Natural order: runs of digits compare by their numeric value, everything else byte by
/// byte (the `sortorder.NaturalLess` kubectl uses).
fn natural(a: &str, b: &str) -> Ordering {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i].is_ascii_digit() && b[j].is_ascii_digit() {
            let si = i;
            while i < a.len() && a[i].is_ascii_digit() {
                i += 1;
            }
            let sj = j;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            // Compare the runs without leading zeros: longer is bigger, then digit by digit.
            let x = trim_zeros(&a[si..i]);
            let y = trim_zeros(&b[sj..j]);
            let ord = x.len().cmp(&y.len()).then_with(|| x.cmp(y));
            if ord != Ordering::Equal {
                return ord;
            }
        } else {
            let ord = a[i].cmp(&b[j]);
            if ord != Ordering::Equal {
                return ord;
            }
            i += 1;
            j += 1;
        }
    }
    (a.len() - i).cmp(&(b.len() - j))
}

fn trim_zeros(d: &[u8]) -> &[u8] {
    let start = d.iter().position(|&c| c != b'0').unwrap_or(d.len());
    &d[start..]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn natural_order_of_strings() {
        let mut v = vec!["v10", "v2", "v1", "a", "v02x"];
        v.sort_by(|a, b| natural(a, b));
        assert_eq!(v, ["a", "v1", "v2", "v02x", "v10"]);
    }

    #[test]
    fn objects_sorted_by_number_missing_first() {
        let s = SortBy::parse(".spec.revision")
            .expect("parses")
            .expect("given");
        let mut objs = vec![
            json!({"n": "b", "spec": {"revision": 10}}),
            json!({"n": "a", "spec": {}}),
            json!({"n": "c", "spec": {"revision": 2}}),
        ];
        s.sort_objects(&mut objs).expect("sorted");
        let names: Vec<&str> = objs
            .iter()
            .map(|o| o["n"].as_str().unwrap_or_default())
            .collect();
        assert_eq!(names, ["a", "c", "b"]);
    }

    #[test]
    fn table_rows_sorted_by_their_objects() {
        let s = SortBy::parse("{.metadata.name}")
            .expect("parses")
            .expect("given");
        let mut t = json!({"kind": "Table", "rows": [
            {"cells": ["x.v10"], "object": {"metadata": {"name": "x.v10"}}},
            {"cells": ["x.v9"], "object": {"metadata": {"name": "x.v9"}}},
        ]});
        s.sort_table(&mut t).expect("sorted");
        assert_eq!(t["rows"][0]["cells"][0], "x.v9");
    }

    #[test]
    fn a_path_no_object_has_is_an_error() {
        let s = SortBy::parse(".spec.nope").expect("parses").expect("given");
        let err = s
            .sort_objects(&mut [json!({"a": 1})])
            .expect_err("no object has it");
        assert!(err.to_string().contains("couldn't find any field"), "{err}");
        assert!(SortBy::parse("").expect("parses").is_none());
    }

    #[test]
    fn list_items_get_type_meta() {
        let items = list_items(json!({"apiVersion": "config.porch.kpt.dev/v1alpha1",
            "kind": "RepositoryList", "items": [{"metadata": {"name": "a"}}]}));
        assert_eq!(items[0]["kind"], "Repository");
        assert_eq!(items[0]["apiVersion"], "config.porch.kpt.dev/v1alpha1");
    }

    #[test]
    fn merge_keeps_every_row() {
        let t = |n: &str| json!({"kind": "Table", "rows": [{"cells": [n]}]});
        let merged = merge_tables(vec![t("a"), t("b")]).expect("tables");
        assert_eq!(merged["rows"].as_array().map(Vec::len), Some(2));
        assert!(merge_tables(vec![json!({"kind": "List"})]).is_err());
    }
}
