//! Server-side apply and field ownership (`metadata.managedFields`), with the semantics of
//! kube-apiserver's field manager (structured-merge-diff), ported in behaviour:
//!
//! - every write records what its manager changed: an `Update` entry for create, update and
//!   merge/JSON/strategic patches (fields it added or changed become its own and are taken
//!   from other managers; fields it removed are owned by nobody any more);
//! - an apply merges the applied configuration into the live object, owns exactly the fields
//!   it sent, removes the fields it owned before and no longer sends (unless another manager
//!   owns them too), and fails with a 409 naming every field another manager owns that it
//!   would change, unless forced, which moves the ownership.
//!
//! The status subresource is a separate owner (`subresource: status`): writes to the main
//! resource of a kind with a status subresource own no status fields, and status writes own
//! only status fields.

mod managed;
mod path;
mod typed;

use serde_json::Value;

use crate::error::{ApiError, Details, FieldError};
use crate::meta;
use crate::rest::Part;
pub use managed::Managers;
use managed::{Identity, Operation};
use path::{Element, Set};
use typed::Node;

/// The server-set metadata nobody owns (kube's `stripmeta`).
const STRIPPED_META: &[&str] = &[
    "name",
    "namespace",
    "creationTimestamp",
    "selfLink",
    "uid",
    "clusterName",
    "generation",
    "managedFields",
    "resourceVersion",
];

/// The ownership rules of one write: the kind's schema and which part is written.
pub struct FieldManager<'a> {
    node: Node<'a>,
    api_version: String,
    part: Part,
    status_subresource: bool,
}

/// What the applier sent (its fields and its configuration), ready for
/// [`FieldManager::record_apply`].
pub struct Applied {
    set: Set,
    config: Value,
}

/// kubectl's client-side apply annotation.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// The manager `kubectl apply --server-side` uses: kube-apiserver keeps its client-side apply
/// annotation in step and lets it take over what it applied client-side (below).
const KUBECTL: &str = "kubectl";

/// The manager of the fields an object had before its first tracked apply.
const BEFORE_FIRST_APPLY: &str = "before-first-apply";

impl<'a> FieldManager<'a> {
    pub fn new(
        schema: &'a Value,
        api_version: String,
        part: Part,
        status_subresource: bool,
    ) -> Self {
        Self {
            node: Node::root(schema),
            api_version,
            part,
            status_subresource,
        }
    }

    fn identity(&self, manager: &str, operation: Operation) -> Identity {
        Identity {
            manager: manager.to_owned(),
            operation,
            api_version: self.api_version.clone(),
            subresource: if self.part == Part::Status {
                "status".into()
            } else {
                String::new()
            },
        }
    }

    /// `set` without the fields nobody owns and the fields this part does not write.
    fn strip(&self, set: &Set) -> Set {
        let mut out = set.clone();
        out.retain(|p| {
            let field = |i: usize| match p.get(i) {
                Some(Element::Field(f)) => Some(f.as_str()),
                _ => None,
            };
            let top = field(0);
            if p.len() == 1 && matches!(top, Some("apiVersion" | "kind" | "metadata")) {
                return false;
            }
            if top == Some("metadata") && field(1).is_some_and(|f| STRIPPED_META.contains(&f)) {
                return false;
            }
            match self.part {
                Part::Status => top == Some("status"),
                Part::Main => !(self.status_subresource && top == Some("status")),
            }
        });
        out
    }

    /// The managers a write starts from: the client's `managedFields` when it sent some
    /// (an update may set them; `[{}]` resets them), else the live object's. Status writes
    /// always start from the live object's.
    pub fn managers(&self, live: &Value, client: Option<&Value>) -> Managers {
        let live_managers =
            || Managers::decode(live.pointer("/metadata/managedFields")).unwrap_or_default();
        if self.part == Part::Status {
            return live_managers();
        }
        if managed::is_reset(client) {
            return Managers::default();
        }
        match Managers::decode(client) {
            Ok(m) if !m.0.is_empty() => m,
            _ => live_managers(),
        }
    }

    /// A create, update or non-apply patch by `manager`: sets `new`'s `managedFields`. An
    /// existing object that tracks no managers (stored before they were tracked, or reset
    /// with `[{}]`) stays untracked, as kube-apiserver leaves it.
    pub fn record_update(
        &self,
        old: &Value,
        new: &mut Value,
        mut managers: Managers,
        manager: &str,
    ) {
        if managers.0.is_empty() && old.pointer("/metadata/uid").is_some() {
            write(new, &mut managers);
            return;
        }
        let id = self.identity(manager, Operation::Update);
        let cmp = typed::compare(&without_managed(old), &without_managed(new), self.node);
        let changed = self.strip(&cmp.changed());
        for e in managers.0.iter_mut().filter(|e| !e.id.same(&id)) {
            e.set = e.set.difference(&changed).difference(&cmp.removed);
        }
        let entry = managers.entry(&id);
        entry.set = entry.set.difference(&cmp.removed).union(&changed);
        if !changed.is_empty() {
            entry.time = Some(meta::now_rfc3339());
        }
        write(new, &mut managers);
    }

    /// The managers an apply onto `live` starts from: its own, or for an object that tracks
    /// none, `before-first-apply` owning every field it has (kube's `skipNonAppliedManager`),
    /// so that the first apply conflicts with values it did not set.
    pub fn apply_managers(&self, live: &Value) -> Managers {
        let managers = self.managers(live, None);
        if !managers.0.is_empty() || live.pointer("/metadata/uid").is_none() {
            return managers;
        }
        let mut out = Managers::default();
        let id = self.identity(BEFORE_FIRST_APPLY, Operation::Update);
        let entry = out.entry(&id);
        entry.set = self.strip(&typed::set_of(&typed::leaves(
            &without_managed(live),
            self.node,
        )));
        entry.time = Some(meta::now_rfc3339());
        out
    }

    /// An apply of `config` by `manager` onto `live` (`{}` when the object does not exist):
    /// the merged object, with the fields `manager` applied before and no longer applies
    /// removed unless another manager owns them.
    pub fn merge_apply(
        &self,
        live: &Value,
        config: &Value,
        managers: &Managers,
        manager: &str,
    ) -> (Value, Applied) {
        let id = self.identity(manager, Operation::Apply);
        let config = without_nulls(config);
        let applied = typed::set_of(&typed::leaves(&config, self.node));
        let mut merged = typed::merge(&without_managed(live), &config, self.node);
        if let Some(last) = managers.find(&id) {
            let keep = managers.others(&id).union(&applied);
            let gone = last.set.difference(&keep);
            for p in gone.iter() {
                typed::remove(&mut merged, p, self.node, &|prefix| keep.has_prefix(prefix));
            }
        }
        (
            merged,
            Applied {
                set: applied,
                config,
            },
        )
    }

    /// Records the apply whose result (prepared, defaulted) is `new`: the applier owns what
    /// it applied; fields it changed that others own are conflicts unless `force`.
    pub fn record_apply(
        &self,
        old: &Value,
        new: &mut Value,
        mut managers: Managers,
        manager: &str,
        applied: Applied,
        force: bool,
    ) -> Result<(), ApiError> {
        let id = self.identity(manager, Operation::Apply);
        let cmp = typed::compare(&without_managed(old), &without_managed(new), self.node);
        let changed = self.strip(&cmp.changed());
        let mut conflicts: Vec<(String, path::Path)> = Vec::new();
        for e in managers.0.iter().filter(|e| !e.id.same(&id)) {
            for p in e.set.intersection(&changed).iter() {
                conflicts.push((e.id.describe(), p.clone()));
            }
        }
        if !conflicts.is_empty() && manager == KUBECTL {
            // An upgrade from client-side apply: the fields the last-applied annotation holds
            // with their live values are kubectl's to take (kube's `lastAppliedManager`).
            let allowed = self.last_applied_fields(old);
            conflicts.retain(|(_, p)| !allowed.contains(p));
        }
        if !conflicts.is_empty() && !force {
            return Err(conflict_error(
                conflicts
                    .into_iter()
                    .map(|(who, p)| (who, path::display(&p)))
                    .collect(),
            ));
        }
        for e in managers.0.iter_mut().filter(|e| !e.id.same(&id)) {
            e.set = e.set.difference(&changed).difference(&cmp.removed);
        }
        let config = applied.config;
        let applied = self.strip(&applied.set);
        let entry = managers.entry(&id);
        let unchanged = changed.is_empty() && cmp.removed.is_empty() && entry.set == applied;
        if !unchanged || entry.time.is_none() {
            entry.time = Some(meta::now_rfc3339());
        }
        entry.set = applied;
        write(new, &mut managers);
        if manager == KUBECTL {
            sync_last_applied(new, &config);
        }
        Ok(())
    }

    /// The fields of `live`'s last-applied annotation that still have the applied values.
    fn last_applied_fields(&self, live: &Value) -> Set {
        let Some(last) = live
            .pointer("/metadata/annotations")
            .and_then(|a| a.get(LAST_APPLIED))
            .and_then(Value::as_str)
            .and_then(|s| serde_json::from_str::<Value>(s).ok())
        else {
            return Set::new();
        };
        let live_leaves = typed::leaves(&without_managed(live), self.node);
        let mut out = Set::new();
        for (p, v) in typed::leaves(&last, self.node) {
            if live_leaves.get(&p) == Some(&v) {
                out.insert(p);
            }
        }
        out
    }
}

fn write(obj: &mut Value, managers: &mut Managers) {
    managers.cap_updates();
    let m = meta::metadata_mut(obj);
    match managers.encode() {
        Some(v) => {
            m.insert("managedFields".into(), v);
        }
        None => {
            m.remove("managedFields");
        }
    }
}

/// kubectl's server-side apply keeps an existing last-applied annotation equal to what it
/// applies, so that a later client-side apply computes its patch from it (kube's
/// `lastAppliedUpdater`). The change is nobody's field.
fn sync_last_applied(obj: &mut Value, config: &Value) {
    let has = obj
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(LAST_APPLIED))
        .is_some();
    if !has {
        return;
    }
    let mut applied = config.clone();
    if let Some(a) = applied
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)
    {
        a.remove(LAST_APPLIED);
        if a.is_empty()
            && let Some(m) = applied
                .pointer_mut("/metadata")
                .and_then(Value::as_object_mut)
        {
            m.remove("annotations");
        }
    }
    let text = format!("{}\n", sorted(&applied));
    if let Some(a) = obj
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)
    {
        a.insert(LAST_APPLIED.into(), text.into());
    }
}

/// `v` with every object's keys sorted (how Go encodes a map).
fn sorted(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted(&m[k])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

fn without_managed(obj: &Value) -> Value {
    let mut v = obj.clone();
    if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("managedFields");
    }
    v
}

/// An applied `null` asks for nothing: it is neither set nor owned.
fn without_nulls(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(_, x)| !x.is_null())
                .map(|(k, x)| (k.clone(), without_nulls(x)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_nulls).collect()),
        other => other.clone(),
    }
}

/// kube-apiserver's apply conflict: 409 with a `FieldManagerConflict` cause per field.
fn conflict_error(mut conflicts: Vec<(String, String)>) -> ApiError {
    conflicts.sort();
    let message = if let [(who, field)] = conflicts.as_slice() {
        format!("Apply failed with 1 conflict: conflict with {who}: {field}")
    } else {
        let mut lines = Vec::new();
        let mut current: Option<&str> = None;
        for (who, field) in &conflicts {
            if current != Some(who.as_str()) {
                lines.push(format!("conflicts with {who}:"));
                current = Some(who);
            }
            lines.push(format!("- {field}"));
        }
        format!(
            "Apply failed with {} conflicts: {}",
            conflicts.len(),
            lines.join("\n")
        )
    };
    let causes = conflicts
        .into_iter()
        .map(|(who, field)| FieldError {
            reason: "FieldManagerConflict",
            field,
            message: format!("conflict with {who}"),
        })
        .collect();
    let mut e = ApiError::new(porch_core::ErrorKind::Conflict, message);
    e.details = Some(Box::new(Details {
        causes,
        ..Details::default()
    }));
    e
}

/// Is this an apply conflict (not an optimistic-concurrency one, which is retried)?
pub fn is_apply_conflict(e: &ApiError) -> bool {
    e.details
        .as_ref()
        .is_some_and(|d| d.causes.iter().any(|c| c.reason == "FieldManagerConflict"))
}

/// The manager of a write without `fieldManager` (kube's `prefixFromUserAgent`): the user
/// agent up to its first `/`, printable characters only, at most 128 bytes.
pub fn manager_from_user_agent(user_agent: &str) -> String {
    let head = user_agent.split('/').next().unwrap_or("");
    let mut out = String::new();
    for c in head.chars().filter(|c| !c.is_control()) {
        if out.len() + c.len_utf8() > 128 {
            break;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests;
