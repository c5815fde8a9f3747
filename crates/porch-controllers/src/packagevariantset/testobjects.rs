//! An in-memory [`Objects`] for the controller's tests (not what they test): objects by
//! resource, namespace and name, resourceVersions checked on write, label selectors in
//! Kubernetes syntax, and a log of every write.

use std::collections::BTreeMap;
use std::sync::Mutex;

use async_trait::async_trait;
use porch_core::ErrorKind;
use serde_json::{Value, json};

use crate::objects::{Gvr, ObjectError, Objects};

/// Which write happened: `("create" | "update" | "status" | "delete", plural, name)`.
pub type Write = (&'static str, String, String);

#[derive(Default)]
pub struct MemObjects {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    objects: BTreeMap<(String, String, String), Value>,
    kinds: BTreeMap<(String, String), Gvr>,
    writes: Vec<Write>,
    next: u64,
}

fn key(r: &Gvr) -> String {
    format!("{}/{}/{}", r.group, r.version, r.plural)
}

fn err(kind: ErrorKind, message: String) -> ObjectError {
    ObjectError { kind, message }
}

impl MemObjects {
    /// A store serving the Porch kinds the controller reads, plus core v1 Pods.
    pub fn new() -> Self {
        let m = MemObjects::default();
        for (av, kind, gvr) in [
            (
                "config.porch.kpt.dev/v1alpha1",
                "Repository",
                super::repositories_gvr(),
            ),
            (
                "config.porch.kpt.dev/v1alpha1",
                "PackageVariant",
                super::packagevariants_gvr(),
            ),
            (
                "config.porch.kpt.dev/v1alpha2",
                "PackageVariantSet",
                super::packagevariantsets_gvr(),
            ),
            (
                "porch.kpt.dev/v1alpha1",
                "PackageRevision",
                super::packagerevisions_gvr(),
            ),
            ("v1", "Pod", Gvr::new("", "v1", "pods")),
        ] {
            m.lock().kinds.insert((av.into(), kind.into()), gvr);
        }
        m
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().expect("test store lock")
    }

    /// Stores `obj` as is (no write logged), with a UID and resourceVersion if it has none.
    pub fn seed(&self, r: &Gvr, obj: Value) {
        let mut st = self.lock();
        st.next += 1;
        let n = st.next;
        let mut obj = obj;
        let meta = &mut obj["metadata"];
        if meta.get("uid").is_none() {
            meta["uid"] = json!(format!("uid-{n}"));
        }
        meta["resourceVersion"] = json!(n.to_string());
        let ns = meta["namespace"].as_str().unwrap_or("").to_string();
        let name = meta["name"].as_str().unwrap_or("").to_string();
        st.objects.insert((key(r), ns, name), obj);
    }

    pub fn writes(&self) -> Vec<Write> {
        self.lock().writes.clone()
    }

    pub fn clear_writes(&self) {
        self.lock().writes.clear();
    }

    pub fn all(&self, r: &Gvr, namespace: &str) -> Vec<Value> {
        let k = key(r);
        self.lock()
            .objects
            .iter()
            .filter(|((g, ns, _), _)| *g == k && ns == namespace)
            .map(|(_, v)| v.clone())
            .collect()
    }

    pub fn object(&self, r: &Gvr, namespace: &str, name: &str) -> Option<Value> {
        self.lock()
            .objects
            .get(&(key(r), namespace.into(), name.into()))
            .cloned()
    }
}

/// Whether `labels` satisfy a Kubernetes label selector string.
pub fn matches(selector: &str, labels: &serde_json::Map<String, Value>) -> bool {
    let get = |k: &str| labels.get(k).and_then(Value::as_str);
    let mut terms = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in selector.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                terms.push(&selector[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    terms.push(&selector[start..]);
    terms
        .iter()
        .map(|t| t.trim())
        .filter(|t| !t.is_empty())
        .all(|t| {
            let set = |rest: &str| -> Vec<String> {
                rest.trim()
                    .trim_start_matches('(')
                    .trim_end_matches(')')
                    .split(',')
                    .map(|s| s.trim().to_string())
                    .collect()
            };
            if let Some((k, rest)) = t.split_once(" notin ") {
                !get(k.trim()).is_some_and(|v| set(rest).iter().any(|x| x == v))
            } else if let Some((k, rest)) = t.split_once(" in ") {
                get(k.trim()).is_some_and(|v| set(rest).iter().any(|x| x == v))
            } else if let Some(k) = t.strip_prefix('!') {
                get(k.trim()).is_none()
            } else if let Some((k, v)) = t.split_once("!=") {
                get(k.trim()) != Some(v.trim())
            } else if let Some((k, v)) = t.split_once("==").or_else(|| t.split_once('=')) {
                get(k.trim()) == Some(v.trim())
            } else {
                get(t).is_some()
            }
        })
}

#[async_trait]
impl Objects for MemObjects {
    async fn get(
        &self,
        r: &Gvr,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Value>, ObjectError> {
        Ok(self.object(r, namespace, name))
    }

    async fn list(
        &self,
        r: &Gvr,
        namespace: Option<&str>,
        label_selector: &str,
    ) -> Result<Vec<Value>, ObjectError> {
        let k = key(r);
        let empty = serde_json::Map::new();
        Ok(self
            .lock()
            .objects
            .iter()
            .filter(|((g, ns, _), _)| *g == k && namespace.is_none_or(|n| n == ns))
            .filter(|(_, v)| {
                let labels = v
                    .pointer("/metadata/labels")
                    .and_then(Value::as_object)
                    .unwrap_or(&empty);
                matches(label_selector, labels)
            })
            .map(|(_, v)| v.clone())
            .collect())
    }

    fn resolve(&self, api_version: &str, kind: &str) -> Option<Gvr> {
        self.lock()
            .kinds
            .get(&(api_version.into(), kind.into()))
            .cloned()
    }

    async fn create(&self, r: &Gvr, namespace: &str, mut obj: Value) -> Result<Value, ObjectError> {
        let mut st = self.lock();
        let name = obj
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let k = (key(r), namespace.to_string(), name.clone());
        if st.objects.contains_key(&k) {
            return Err(err(
                ErrorKind::AlreadyExists,
                format!("{name} already exists"),
            ));
        }
        st.next += 1;
        let n = st.next;
        obj["metadata"]["uid"] = json!(format!("uid-{n}"));
        obj["metadata"]["resourceVersion"] = json!(n.to_string());
        obj["metadata"]["namespace"] = json!(namespace);
        st.objects.insert(k, obj.clone());
        st.writes.push(("create", r.plural.clone(), name));
        Ok(obj)
    }

    async fn update(&self, r: &Gvr, namespace: &str, obj: Value) -> Result<Value, ObjectError> {
        self.write(r, namespace, obj, "update")
    }

    async fn update_status(
        &self,
        r: &Gvr,
        namespace: &str,
        obj: Value,
    ) -> Result<Value, ObjectError> {
        self.write(r, namespace, obj, "status")
    }

    async fn delete(&self, r: &Gvr, namespace: &str, name: &str) -> Result<(), ObjectError> {
        let mut st = self.lock();
        match st.objects.remove(&(key(r), namespace.into(), name.into())) {
            Some(_) => {
                st.writes.push(("delete", r.plural.clone(), name.into()));
                Ok(())
            }
            None => Err(err(ErrorKind::NotFound, format!("{name} not found"))),
        }
    }
}

impl MemObjects {
    /// An update of the whole object (`update`, status kept) or of its status only.
    fn write(
        &self,
        r: &Gvr,
        namespace: &str,
        obj: Value,
        op: &'static str,
    ) -> Result<Value, ObjectError> {
        let mut st = self.lock();
        let name = obj
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let k = (key(r), namespace.to_string(), name.clone());
        let Some(old) = st.objects.get(&k).cloned() else {
            return Err(err(ErrorKind::NotFound, format!("{name} not found")));
        };
        if obj.pointer("/metadata/resourceVersion") != old.pointer("/metadata/resourceVersion") {
            return Err(err(ErrorKind::Conflict, format!("{name} was modified")));
        }
        // A status write changes only the status; any other write keeps it.
        let (mut new, status) = if op == "status" {
            (old.clone(), obj.get("status").cloned())
        } else {
            (obj.clone(), old.get("status").cloned())
        };
        match (new.as_object_mut(), status) {
            (Some(m), Some(st)) => {
                m.insert("status".into(), st);
            }
            (Some(m), None) => {
                m.remove("status");
            }
            (None, _) => {}
        }
        st.next += 1;
        new["metadata"]["resourceVersion"] = json!(st.next.to_string());
        st.objects.insert(k, new.clone());
        st.writes.push((op, r.plural.clone(), name));
        Ok(new)
    }
}

#[test]
fn selectors_match_like_kubernetes() {
    let labels = json!({"a": "b", "c": "d"});
    let labels = labels.as_object().expect("test value");
    assert!(matches("", labels));
    assert!(matches("a=b,c", labels));
    assert!(matches("a in (x,b),e notin (f)", labels));
    assert!(matches("!e,a!=x", labels));
    assert!(!matches("a=x", labels));
    assert!(!matches("a notin (b)", labels));
}
