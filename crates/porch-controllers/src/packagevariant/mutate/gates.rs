//! The Kptfile side of config injection: a readiness gate per required injection point and
//! a status condition per point, both lists sorted by condition type (upstream
//! `setInjectionPointConditionsAndGates`). Existing entries keep their nodes (and comments);
//! lists already in the wanted state are not touched.

use kpt::yaml::Node;

/// The outcome of one injection point, as its Kptfile condition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PointCondition {
    pub condition_type: String,
    pub required: bool,
    pub status: &'static str,
    pub reason: &'static str,
    pub message: String,
}

/// `info` fields that come after `readinessGates` in the Kptfile schema: a new gate list is
/// inserted before the first of them, where kpt would write it.
const AFTER_GATES: [&str; 3] = ["description", "keywords", "man"];
/// Kptfile fields that come after `info`: a new `info` goes before the first of them.
const AFTER_INFO: [&str; 3] = ["pipeline", "inventory", "status"];

/// Sets the gates and conditions of the points on the Kptfile object `root`.
pub(crate) fn set_conditions_and_gates(root: &mut Node, points: &[PointCondition]) {
    set_gates(root, points);
    set_conditions(root, points);
}

fn condition_type_of(item: &Node) -> &str {
    item.get("conditionType")
        .and_then(Node::as_str)
        .unwrap_or_default()
}

fn set_gates(root: &mut Node, points: &[PointCondition]) {
    let current: Vec<Node> = root
        .get_path(&["info", "readinessGates"])
        .map(|g| g.items().to_vec())
        .unwrap_or_default();
    let mut types: Vec<String> = current
        .iter()
        .map(|g| condition_type_of(g).to_string())
        .chain(
            points
                .iter()
                .filter(|p| p.required)
                .map(|p| p.condition_type.clone()),
        )
        .collect();
    types.sort();
    types.dedup();
    if types.is_empty() {
        return;
    }
    let gates: Vec<Node> = types
        .iter()
        .map(|t| {
            current
                .iter()
                .find(|g| condition_type_of(g) == t)
                .cloned()
                .unwrap_or_else(|| {
                    let mut g = Node::mapping();
                    g.set("conditionType", Node::string(t.clone()));
                    g
                })
        })
        .collect();
    if gates == current {
        return;
    }
    let mut list = Node::sequence();
    if let Some(items) = list.items_mut() {
        *items = gates;
    }
    if root.get("info").is_none() {
        insert_before(root, "info", Node::mapping(), &AFTER_INFO);
    }
    let info = root.ensure_mapping(&["info"]);
    if info.get("readinessGates").is_some() {
        info.set("readinessGates", list);
    } else {
        insert_before(info, "readinessGates", list, &AFTER_GATES);
    }
}

/// Adds `key` to the mapping before the first of `later` present, else at the end: where
/// kpt's struct order would put it.
fn insert_before(map: &mut Node, key: &str, value: Node, later: &[&str]) {
    let Some(entries) = map.entries_mut() else {
        return;
    };
    let at = entries
        .iter()
        .position(|(k, _)| later.contains(&k.as_str().unwrap_or_default()))
        .unwrap_or(entries.len());
    entries.insert(at, (Node::tagged_scalar(key, "!!str"), value));
}

fn set_conditions(root: &mut Node, points: &[PointCondition]) {
    let current: Vec<Node> = root
        .get_path(&["status", "conditions"])
        .map(|c| c.items().to_vec())
        .unwrap_or_default();
    let mut conditions = current.clone();
    for p in points {
        let existing = conditions
            .iter_mut()
            .find(|c| c.get("type").and_then(Node::as_str) == Some(p.condition_type.as_str()));
        match existing {
            // meta.SetStatusCondition: an existing condition of that type is updated
            Some(c) if c.is_mapping() => {
                c.set_string("status", p.status);
                c.set_string("reason", p.reason);
                c.set_string("message", &p.message);
            }
            _ => {
                let mut c = Node::mapping();
                c.set("type", Node::string(p.condition_type.clone()));
                c.set("status", Node::string(p.status));
                c.set("message", Node::string(p.message.clone()));
                c.set("reason", Node::string(p.reason));
                conditions.push(c);
            }
        }
    }
    if conditions.is_empty() {
        return;
    }
    conditions.sort_by(|a, b| {
        let t = |n: &Node| {
            n.get("type")
                .and_then(Node::as_str)
                .unwrap_or_default()
                .to_string()
        };
        t(a).cmp(&t(b))
    });
    if conditions == current {
        return;
    }
    let mut list = Node::sequence();
    if let Some(items) = list.items_mut() {
        *items = conditions;
    }
    root.ensure_mapping(&["status"]).set("conditions", list);
}

#[cfg(test)]
mod tests;
