//! `metadata.managedFields`: one entry per (manager, operation, subresource, and for updates
//! apiVersion), each with the set of fields it owns, in kube-apiserver's encoding and order.

use serde_json::{Map, Value, json};

use super::path::Set;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Operation {
    Apply,
    Update,
}

impl Operation {
    fn as_str(self) -> &'static str {
        match self {
            Operation::Apply => "Apply",
            Operation::Update => "Update",
        }
    }
}

/// Who owns an entry. Two appliers with the same name are one manager whatever apiVersion
/// they used (kube's `BuildManagerIdentifier`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub manager: String,
    pub operation: Operation,
    pub api_version: String,
    pub subresource: String,
}

impl Identity {
    pub fn same(&self, other: &Identity) -> bool {
        self.manager == other.manager
            && self.operation == other.operation
            && self.subresource == other.subresource
            && (self.operation == Operation::Apply || self.api_version == other.api_version)
    }

    /// How conflicts name the manager (kube's `printManager`).
    pub fn describe(&self) -> String {
        let mut s = Value::from(self.manager.as_str()).to_string();
        if !self.subresource.is_empty() {
            s.push_str(&format!(
                " with subresource {}",
                Value::from(self.subresource.as_str())
            ));
        }
        if self.operation == Operation::Update {
            s.push_str(&format!(" using {}", self.api_version));
        }
        s
    }
}

#[derive(Debug, Clone)]
pub struct Entry {
    pub id: Identity,
    pub time: Option<String>,
    pub set: Set,
}

/// The decoded `managedFields` of an object.
#[derive(Debug, Clone, Default)]
pub struct Managers(pub Vec<Entry>);

impl Managers {
    /// Parses `metadata.managedFields` (absent or null: no managers).
    pub fn decode(v: Option<&Value>) -> Result<Managers, String> {
        let items = match v {
            None | Some(Value::Null) => return Ok(Managers::default()),
            Some(Value::Array(items)) => items,
            Some(_) => return Err("managedFields must be a list".into()),
        };
        let mut out = Vec::new();
        for item in items {
            let s = |k: &str| item.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
            let operation = match s("operation").as_str() {
                "Apply" => Operation::Apply,
                "Update" => Operation::Update,
                other => return Err(format!("invalid managedFields operation {other:?}")),
            };
            let fields_type = s("fieldsType");
            if fields_type != "FieldsV1" {
                return Err(format!("invalid managedFields fieldsType {fields_type:?}"));
            }
            let set = match item.get("fieldsV1") {
                None | Some(Value::Null) => Set::new(),
                Some(f) => Set::from_fields_v1(f)?,
            };
            out.push(Entry {
                id: Identity {
                    manager: s("manager"),
                    operation,
                    api_version: s("apiVersion"),
                    subresource: s("subresource"),
                },
                time: item.get("time").and_then(Value::as_str).map(str::to_owned),
                set,
            });
        }
        Ok(Managers(out))
    }

    /// The `managedFields` value, sorted as kube-apiserver sorts it (operation, time, manager,
    /// apiVersion, subresource); `None` when nobody owns anything.
    pub fn encode(&self) -> Option<Value> {
        let mut entries: Vec<&Entry> = self.0.iter().filter(|e| !e.set.is_empty()).collect();
        if entries.is_empty() {
            return None;
        }
        entries.sort_by(|a, b| {
            (
                a.id.operation,
                &a.time,
                &a.id.manager,
                &a.id.api_version,
                &a.id.subresource,
            )
                .cmp(&(
                    b.id.operation,
                    &b.time,
                    &b.id.manager,
                    &b.id.api_version,
                    &b.id.subresource,
                ))
        });
        let list = entries
            .into_iter()
            .map(|e| {
                let mut m = Map::new();
                m.insert("manager".into(), e.id.manager.clone().into());
                m.insert("operation".into(), e.id.operation.as_str().into());
                m.insert("apiVersion".into(), e.id.api_version.clone().into());
                if let Some(t) = &e.time {
                    m.insert("time".into(), t.clone().into());
                }
                m.insert("fieldsType".into(), "FieldsV1".into());
                m.insert("fieldsV1".into(), e.set.to_fields_v1());
                if !e.id.subresource.is_empty() {
                    m.insert("subresource".into(), e.id.subresource.clone().into());
                }
                Value::Object(m)
            })
            .collect();
        Some(Value::Array(list))
    }

    pub fn find(&self, id: &Identity) -> Option<&Entry> {
        self.0.iter().find(|e| e.id.same(id))
    }

    /// The entry of `id`, created empty when missing.
    pub fn entry(&mut self, id: &Identity) -> &mut Entry {
        let i = match self.0.iter().position(|e| e.id.same(id)) {
            Some(i) => i,
            None => {
                self.0.push(Entry {
                    id: id.clone(),
                    time: None,
                    set: Set::new(),
                });
                self.0.len() - 1
            }
        };
        &mut self.0[i]
    }

    /// Everything owned by managers other than `id`.
    pub fn others(&self, id: &Identity) -> Set {
        self.0
            .iter()
            .filter(|e| !e.id.same(id))
            .fold(Set::new(), |acc, e| acc.union(&e.set))
    }
}

/// At most this many `Update` entries are kept (kube's `DefaultMaxUpdateManagers`).
const MAX_UPDATE_MANAGERS: usize = 10;

/// The entry the oldest updates are merged into beyond the cap.
const ANCIENT_CHANGES: &str = "ancient-changes";

impl Managers {
    /// Merges the oldest `Update` entries into `ancient-changes` (one per apiVersion) until
    /// at most [`MAX_UPDATE_MANAGERS`] remain, as kube-apiserver's `capManagersManager` does.
    pub fn cap_updates(&mut self) {
        let mut updates: Vec<usize> = (0..self.0.len())
            .filter(|&i| self.0[i].id.operation == Operation::Update && !self.0[i].set.is_empty())
            .collect();
        if updates.len() <= MAX_UPDATE_MANAGERS {
            return;
        }
        updates.sort_by(|&a, &b| {
            (&self.0[a].time, &self.0[a].id.manager).cmp(&(&self.0[b].time, &self.0[b].id.manager))
        });
        let excess = updates.len() - MAX_UPDATE_MANAGERS;
        let mut merged: Vec<Entry> = Vec::new();
        let mut drop = Vec::new();
        // Merging n entries of one version into a bucket removes n - 1 of them.
        let mut removed = 0;
        for &i in &updates {
            if removed >= excess {
                break;
            }
            let e = &self.0[i];
            match merged
                .iter_mut()
                .find(|b| b.id.api_version == e.id.api_version)
            {
                Some(bucket) => {
                    bucket.set = bucket.set.union(&e.set);
                    bucket.time = e.time.clone();
                    removed += 1;
                }
                None => merged.push(Entry {
                    id: Identity {
                        manager: ANCIENT_CHANGES.into(),
                        operation: Operation::Update,
                        api_version: e.id.api_version.clone(),
                        subresource: String::new(),
                    },
                    time: e.time.clone(),
                    set: e.set.clone(),
                }),
            }
            drop.push(i);
        }
        let mut i = 0;
        self.0.retain(|_| {
            i += 1;
            !drop.contains(&(i - 1))
        });
        self.0.extend(merged);
    }
}

/// A client's `managedFields: [{}]`: drop every entry (kube's `isResetManagedFields`).
pub fn is_reset(v: Option<&Value>) -> bool {
    matches!(v, Some(Value::Array(items)) if items.len() == 1 && items[0] == json!({}))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apply::path::Element;

    #[test]
    fn entries_round_trip_in_kube_order() {
        let stored = json!([
            {"manager": "kubectl-edit", "operation": "Update", "apiVersion": "v1",
             "time": "2024-01-01T00:00:00Z", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:data": {"f:x": {}}}},
            {"manager": "mgr", "operation": "Apply", "apiVersion": "v1",
             "time": "2024-01-02T00:00:00Z", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:metadata": {"f:labels": {"f:a": {}}}}}
        ]);
        let m = Managers::decode(Some(&stored)).expect("decodes");
        let out = m.encode().expect("entries");
        assert_eq!(out[0]["manager"], "mgr");
        assert_eq!(out[1]["manager"], "kubectl-edit");
        assert_eq!(out[1]["fieldsV1"], json!({"f:data": {"f:x": {}}}));
        assert!(
            m.find(&Identity {
                manager: "mgr".into(),
                operation: Operation::Apply,
                api_version: "v2".into(),
                subresource: String::new()
            })
            .is_some_and(|e| e.set.contains(&[
                Element::Field("metadata".into()),
                Element::Field("labels".into()),
                Element::Field("a".into())
            ]))
        );
        assert!(
            Managers::decode(Some(
                &json!([{"operation": "Bad", "fieldsType": "FieldsV1"}])
            ))
            .is_err()
        );
        assert!(is_reset(Some(&json!([{}]))));
        assert!(!is_reset(Some(&json!([]))));
        let upd = &m.0[0].id;
        assert_eq!(upd.describe(), "\"kubectl-edit\" using v1");
    }
}
