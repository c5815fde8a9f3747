//! What `repo get` and `rpkg get` do with what the server lists: merge the Tables of
//! several requests, flatten a List into objects, and `--sort-by` (kubectl's sorter: rows
//! or objects ordered by a JSONPath into each object, in the order Go's `sort.Sort`
//! leaves them with kubectl's comparison).

use std::cmp::Ordering;

use serde_json::Value;

use super::error::RemoteError;
use super::jsonpath::JsonPath;
use super::quantity::Quantity;
use kpt::gosort;

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
    /// kubectl's relaxed form, `{.a.b}`, as its messages name the field.
    field: String,
    path: JsonPath,
}

/// kubectl's `RelaxedJSONPathExpression`: `a.b`, `.a.b`, `{a.b}` and `{.a.b}` are all
/// `{.a.b}`.
fn relaxed(expr: &str) -> Result<String, RemoteError> {
    let inner = expr
        .strip_prefix('{')
        .and_then(|r| r.strip_suffix('}'))
        .unwrap_or(expr);
    let spec = inner.strip_prefix('.').unwrap_or(inner);
    if spec.is_empty() || spec.contains(['{', '}']) {
        return Err(RemoteError::Usage(
            "unexpected path string, expected a 'name1.name2' or '.name1.name2' or '{name1.name2}' or '{.name1.name2}'"
                .into(),
        ));
    }
    Ok(format!("{{.{spec}}}"))
}

impl SortBy {
    /// Parses `--sort-by` (`.metadata.name` or `{.metadata.name}`); empty means no sorting.
    pub fn parse(expr: &str) -> Result<Option<Self>, RemoteError> {
        if expr.is_empty() {
            return Ok(None);
        }
        let field = relaxed(expr)?;
        Ok(Some(SortBy {
            path: JsonPath::parse(&field)?,
            field,
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
                "couldn't find any field with path {} in the list of objects",
                crate::cli::go_quote(&self.field)
            )));
        }
        Ok(())
    }

    /// Sorts objects in place as kubectl's `RuntimeSort` (Go's `sort.Sort`, not stable).
    pub fn sort_objects(&self, objects: &mut Vec<Value>) -> Result<(), RemoteError> {
        if objects.is_empty() {
            return Ok(());
        }
        let keys: Vec<Option<Value>> = objects.iter().map(|o| self.key(o).cloned()).collect();
        self.check_found(&keys.iter().map(Option::as_ref).collect::<Vec<_>>())?;
        let order = self.order(keys, "*unstructured.Unstructured")?;
        let mut taken: Vec<Option<Value>> = objects.drain(..).map(Some).collect();
        objects.extend(order.into_iter().filter_map(|i| taken[i].take()));
        Ok(())
    }

    /// Sorts a Table's rows by the path into each row's `object` (the request must have
    /// asked for `includeObject=Object`), as kubectl's `TableSorter`: only a table of
    /// more than one row is sorted (or checked for the field).
    pub fn sort_table(&self, table: &mut Value) -> Result<(), RemoteError> {
        let Some(Value::Array(rows)) = table.get_mut("rows") else {
            return Ok(());
        };
        if rows.len() <= 1 {
            return Ok(());
        }
        let null = Value::Null;
        let keys: Vec<Option<Value>> = rows
            .iter()
            .map(|r| self.key(r.get("object").unwrap_or(&null)).cloned())
            .collect();
        self.check_found(&keys.iter().map(Option::as_ref).collect::<Vec<_>>())?;
        let order = self.order(keys, "[][][]reflect.Value")?;
        let mut taken: Vec<Option<Value>> = rows.drain(..).map(Some).collect();
        rows.extend(order.into_iter().filter_map(|i| taken[i].take()));
        Ok(())
    }

    /// Where each item goes: Go's `sort.Sort` with kubectl's `Less`. `holder` is the Go
    /// type kubectl's message names.
    fn order(&self, keys: Vec<Option<Value>>, holder: &str) -> Result<Vec<usize>, RemoteError> {
        let mut sorter = KubectlSort {
            order: (0..keys.len()).collect(),
            keys,
            error: std::cell::RefCell::new(None),
        };
        gosort::sort(&mut sorter);
        if let Some(why) = sorter.error.into_inner() {
            // kubectl exits on it (klog.Exitf / Fatalf) without printing anything.
            return Err(RemoteError::Usage(format!(
                "Field {} in {holder} is an unsortable type: interface, err: {why}",
                self.field
            )));
        }
        Ok(sorter.order)
    }
}

/// kubectl's sorter over the first value of each item.
struct KubectlSort {
    keys: Vec<Option<Value>>,
    order: Vec<usize>,
    /// The first unsortable pair's reason (kubectl stops there).
    error: std::cell::RefCell<Option<String>>,
}

impl gosort::Interface for KubectlSort {
    fn len(&self) -> usize {
        self.keys.len()
    }

    /// kubectl's `Less`: an item without the field is less than any other (itself
    /// included: this is not a strict order, and Go's sort makes of it what it does).
    fn less(&self, i: usize, j: usize) -> bool {
        let (Some(a), Some(b)) = (&self.keys[i], &self.keys[j]) else {
            return self.keys[i].is_none();
        };
        match is_less(a, b) {
            Ok(less) => less,
            Err(why) => {
                self.error.borrow_mut().get_or_insert(why);
                false
            }
        }
    }

    fn swap(&mut self, i: usize, j: usize) {
        self.keys.swap(i, j);
        self.order.swap(i, j);
    }
}

/// kubectl's `isLess` for the values of an unstructured object (each an `interface{}`):
/// nil first, int64 with int64, float64 with float64, strings as quantities when both
/// are, else byte by byte (kubectl 1.32 sorts `v10` before `v2`); anything else is
/// unsortable.
fn is_less(a: &Value, b: &Value) -> Result<bool, String> {
    match (a, b) {
        (Value::Null, Value::Null) => Ok(false),
        (Value::Null, _) => Ok(true),
        (_, Value::Null) => Ok(false),
        (Value::Number(x), Value::Number(y)) => match (as_int64(x), as_int64(y)) {
            (Some(x), Some(y)) => Ok(x < y),
            (None, None) => Ok(x.as_f64().unwrap_or(0.0) < y.as_f64().unwrap_or(0.0)),
            _ => Err("unsortable interface: interface".into()),
        },
        (Value::Number(_), _) => Err("unsortable interface: interface".into()),
        (Value::String(x), Value::String(y)) => match (Quantity::parse(x), Quantity::parse(y)) {
            (Some(p), Some(q)) => Ok(p.cmp(&q) == Ordering::Less),
            _ => Ok(x < y),
        },
        (Value::String(_), _) => Err("unsortable interface: interface".into()),
        (other, _) => Err(format!("unsortable type: {}", go_type(other))),
    }
}

/// What apimachinery's JSON decoding makes of a number: int64 when it is an integer
/// that fits, else float64.
fn as_int64(n: &serde_json::Number) -> Option<i64> {
    n.as_i64()
}

fn go_type(v: &Value) -> &'static str {
    match v {
        Value::Bool(_) => "bool",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
        Value::Null => "<nil>",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn other_strings_compare_byte_by_byte() {
        // kubectl 1.32 compares them with Go's `<` (checked against it in
        // tests/repo_commands.rs): no natural order.
        let s = SortBy::parse("a").expect("parses").expect("given");
        let mut objs: Vec<Value> = ["v2", "v10", "b9", "Z", "a", "d02", "d1"]
            .iter()
            .map(|v| json!({ "a": v }))
            .collect();
        s.sort_objects(&mut objs).expect("sorted");
        let got: Vec<&str> = objs
            .iter()
            .map(|o| o["a"].as_str().unwrap_or_default())
            .collect();
        assert_eq!(got, ["Z", "a", "b9", "d02", "d1", "v10", "v2"]);
    }

    #[test]
    fn strings_that_are_quantities_compare_as_quantities() {
        let s = SortBy::parse("a").expect("parses").expect("given");
        let mut objs = vec![
            json!({"a": "1.5"}),
            json!({"a": "1.10"}),
            json!({"a": "1Ki"}),
            json!({"a": "1k"}),
        ];
        s.sort_objects(&mut objs).expect("sorted");
        let got: Vec<&str> = objs
            .iter()
            .map(|o| o["a"].as_str().unwrap_or_default())
            .collect();
        assert_eq!(got, ["1.10", "1.5", "1k", "1Ki"]);
    }

    #[test]
    fn unsortable_values_are_kubectls_errors() {
        let s = SortBy::parse(".a").expect("parses").expect("given");
        let err = s
            .sort_objects(&mut vec![json!({"a": true}), json!({"a": false})])
            .expect_err("bools do not sort");
        assert_eq!(
            err.to_string(),
            "Field {.a} in *unstructured.Unstructured is an unsortable type: interface, err: unsortable type: bool"
        );
        let err = s
            .sort_objects(&mut vec![json!({"a": 1}), json!({"a": "1"})])
            .expect_err("mixed types do not sort");
        assert!(
            err.to_string()
                .ends_with("err: unsortable interface: interface"),
            "{err}"
        );
        let err = s
            .sort_objects(&mut vec![json!({"a": 1}), json!({"a": 1.5})])
            .expect_err("int64 and float64 do not sort together");
        assert!(
            err.to_string().ends_with("unsortable interface: interface"),
            "{err}"
        );
    }

    #[test]
    fn one_row_is_not_sorted_or_checked() {
        let s = SortBy::parse(".spec.nope").expect("parses").expect("given");
        let mut t = json!({"kind": "Table", "rows": [{"cells": ["a"], "object": {}}]});
        s.sort_table(&mut t).expect("one row");
        let err = s
            .sort_objects(&mut vec![json!({})])
            .expect_err("objects are checked");
        assert_eq!(
            err.to_string(),
            "couldn't find any field with path \"{.spec.nope}\" in the list of objects"
        );
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
            {"cells": ["x.v9"], "object": {"metadata": {"name": "x.v9"}}},
            {"cells": ["x.v10"], "object": {"metadata": {"name": "x.v10"}}},
        ]});
        s.sort_table(&mut t).expect("sorted");
        assert_eq!(t["rows"][0]["cells"][0], "x.v10");
    }

    #[test]
    fn a_path_no_object_has_is_an_error() {
        let s = SortBy::parse(".spec.nope").expect("parses").expect("given");
        let err = s
            .sort_objects(&mut vec![json!({"a": 1})])
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
