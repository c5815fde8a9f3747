//! Table rows of listed objects, remembered while the backend keeps serving the same bytes.
//!
//! A Table list used to parse every listed object back from its serialized form to compute
//! the cells: 9.4 MB of JSON for 12,000 package revisions, most of a `kubectl get` or
//! `porchctl rpkg get`. Backends that cache serialized objects (package revisions) hand out
//! the same `Arc<[u8]>` while an object is unchanged, so its row (cells already serialized)
//! is kept under the identity of those bytes. An entry holds its bytes, so their address
//! cannot be reused by another object while the entry exists; an entry whose bytes nobody
//! else holds any more (the object changed or went away) is dropped at the next Table.
//! The Age cell depends on the time of the request and is computed then.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};

use crate::table::{IncludeObject, TableBuilder, age_text};

/// Remembered rows of one resource (its columns are fixed).
#[derive(Default)]
pub struct RowCache {
    entries: Mutex<HashMap<usize, Entry>>,
}

struct Entry {
    bytes: Arc<[u8]>,
    row: Row,
}

/// A row without its Age cell.
struct Row {
    /// The Name and column cells as JSON array elements (no brackets).
    cells: String,
    /// `metadata.creationTimestamp`, for the Age cell.
    created: Option<String>,
    /// The object's metadata as JSON, for `includeObject=Metadata`; filled when first asked.
    metadata: Option<String>,
}

impl Row {
    fn new(tb: &TableBuilder<'_>, obj: &Value) -> Self {
        let cells = tb.cells(obj);
        let json = serde_json::to_string(&cells).unwrap_or_else(|_| "[]".into());
        Row {
            cells: json[1..json.len() - 1].to_owned(),
            created: obj
                .pointer("/metadata/creationTimestamp")
                .and_then(Value::as_str)
                .map(str::to_owned),
            metadata: None,
        }
    }
}

fn metadata_json(obj: &Value) -> String {
    let metadata = obj
        .get("metadata")
        .cloned()
        .unwrap_or_else(|| Value::Object(Map::new()));
    serde_json::to_string(&metadata).unwrap_or_else(|_| "{}".into())
}

/// The serialized Table of `items` (what serializing [`TableBuilder::table`] of the parsed
/// items gives), reusing `cache`'s rows. `includeObject=Object` rows carry whole objects
/// and are built the plain way.
pub fn table_json(
    tb: &TableBuilder<'_>,
    cache: &RowCache,
    items: &[Arc<[u8]>],
    resource_version: Option<String>,
    cont: Option<String>,
) -> Vec<u8> {
    if tb.include == IncludeObject::Object {
        let objs: Vec<Value> = items
            .iter()
            .filter_map(|b| serde_json::from_slice(b).ok())
            .collect();
        return serde_json::to_vec(&tb.table(&objs, resource_version, cont)).unwrap_or_default();
    }
    // The table without rows, then the rows appended before its closing brace ("rows" is
    // its last key, as in `TableBuilder::table`).
    let head = serde_json::to_string(&tb.table(&[], resource_version, cont))
        .unwrap_or_else(|_| "{\"rows\":[]}".into());
    let head = head
        .strip_suffix("[]}")
        .expect("a serialized Table ends with its empty rows array");
    let mut out = Vec::with_capacity(head.len() + items.len() * 160);
    out.extend_from_slice(head.as_bytes());
    out.push(b'[');
    let mut entries = cache
        .entries
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut first = true;
    for bytes in items {
        let key = bytes.as_ptr() as usize;
        let fresh = !entries
            .get(&key)
            .is_some_and(|e| Arc::ptr_eq(&e.bytes, bytes));
        let mut parsed = None;
        if fresh {
            // Not JSON: skipped, as the plain path skips it.
            let Ok(obj) = serde_json::from_slice::<Value>(bytes) else {
                continue;
            };
            let row = Row::new(tb, &obj);
            entries.insert(
                key,
                Entry {
                    bytes: Arc::clone(bytes),
                    row,
                },
            );
            parsed = Some(obj);
        }
        let Some(entry) = entries.get_mut(&key) else {
            continue;
        };
        if tb.include == IncludeObject::Metadata && entry.row.metadata.is_none() {
            let obj = match parsed {
                Some(o) => o,
                None => serde_json::from_slice(bytes).unwrap_or(Value::Null),
            };
            entry.row.metadata = Some(metadata_json(&obj));
        }
        if !first {
            out.push(b',');
        }
        first = false;
        write_row(&mut out, tb, &entry.row);
    }
    out.extend_from_slice(b"]}");
    // Rows whose bytes only this cache still holds belong to objects that changed or went.
    entries.retain(|_, e| Arc::strong_count(&e.bytes) > 1);
    out
}

fn write_row(out: &mut Vec<u8>, tb: &TableBuilder<'_>, row: &Row) {
    out.extend_from_slice(b"{\"cells\":[");
    out.extend_from_slice(row.cells.as_bytes());
    if tb.age_column {
        if !row.cells.is_empty() {
            out.push(b',');
        }
        let age = Value::String(age_text(row.created.as_deref()));
        out.extend_from_slice(age.to_string().as_bytes());
    }
    out.push(b']');
    if tb.include == IncludeObject::Metadata {
        out.extend_from_slice(
            b",\"object\":{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":\"meta.k8s.io/v1\",\"metadata\":",
        );
        out.extend_from_slice(row.metadata.as_deref().unwrap_or("{}").as_bytes());
        out.push(b'}');
    }
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::Column;
    use serde_json::json;

    fn objects(version: &str) -> Vec<Arc<[u8]>> {
        (0..5)
            .map(|i| {
                let mut o = json!({
                    "apiVersion": "x/v1", "kind": "Thing",
                    "metadata": {"name": format!("t{i}"), "namespace": "ns",
                                 "labels": {"v": version}},
                    "spec": {"n": i, "s": format!("\"quoted\" {version}")},
                    "status": {"conditions": [{"type": "Ready", "status": "True"}]},
                });
                // Age: one old (a cell stable for a year), one unparseable, one missing.
                match i {
                    0 => o["metadata"]["creationTimestamp"] = json!("2000-01-01T00:00:00Z"),
                    1 => o["metadata"]["creationTimestamp"] = json!("yesterday"),
                    _ => {}
                }
                if i == 4 {
                    o.as_object_mut().expect("object").remove("metadata");
                }
                serde_json::to_vec(&o).expect("json").into()
            })
            .collect()
    }

    fn columns() -> Vec<Column> {
        vec![
            Column::path("N", "integer", ".spec.n"),
            Column::path("S", "string", ".spec.s"),
            Column::path(
                "Ready",
                "string",
                ".status.conditions[?(@.type==\"Ready\")].status",
            ),
            Column::computed("Label", "string", |o| {
                o.pointer("/metadata/labels/v")
                    .cloned()
                    .unwrap_or(Value::Null)
            }),
        ]
    }

    fn plain(tb: &TableBuilder<'_>, items: &[Arc<[u8]>], rv: Option<&str>) -> Vec<u8> {
        let objs: Vec<Value> = items
            .iter()
            .map(|b| serde_json::from_slice(b).expect("json"))
            .collect();
        let t = tb.table(&objs, rv.map(str::to_owned), rv.map(|_| "c".to_owned()));
        serde_json::to_vec(&t).expect("json")
    }

    #[test]
    fn same_bytes_as_the_plain_table_from_cache_or_not() {
        let columns = columns();
        let cache = RowCache::default();
        let v1 = objects("a");
        for include in [
            IncludeObject::None,
            IncludeObject::Metadata,
            IncludeObject::Object,
        ] {
            for age_column in [true, false] {
                let tb = TableBuilder {
                    columns: &columns,
                    age_column,
                    include,
                };
                // First from parsed objects, then from the cache.
                for _ in 0..2 {
                    let got = table_json(&tb, &cache, &v1, Some("7".into()), Some("c".into()));
                    assert_eq!(
                        String::from_utf8(got).expect("utf8"),
                        String::from_utf8(plain(&tb, &v1, Some("7"))).expect("utf8"),
                        "include {include:?} age {age_column}"
                    );
                }
            }
        }
        let tb = TableBuilder {
            columns: &columns,
            age_column: true,
            include: IncludeObject::None,
        };
        let empty = table_json(&tb, &cache, &[], None, None);
        assert_eq!(empty, plain(&tb, &[], None));
    }

    #[test]
    fn changed_objects_get_new_rows_and_old_rows_go() {
        let columns = columns();
        let cache = RowCache::default();
        let tb = TableBuilder {
            columns: &columns,
            age_column: false,
            include: IncludeObject::None,
        };
        let v1 = objects("a");
        table_json(&tb, &cache, &v1, None, None);
        assert_eq!(cache.entries.lock().expect("lock").len(), 5);
        // The backend replaces its bytes: v1's are gone, v2's are served.
        drop(v1);
        let v2 = objects("b");
        let got = table_json(&tb, &cache, &v2, None, None);
        assert_eq!(got, plain(&tb, &v2, None));
        let text = String::from_utf8(got).expect("utf8");
        assert!(text.contains("\"b\"") && !text.contains("\"a\""), "{text}");
        assert_eq!(cache.entries.lock().expect("lock").len(), 5);
    }
}
