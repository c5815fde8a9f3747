//! The Kptfile pipeline: the PackageVariant's mutators and validators, renamed
//! `PackageVariant.<pv>.<fn>.<index>`, go first; the ones it added before (found by that
//! name pattern) are removed; empty lists and an empty pipeline are dropped (upstream
//! `ensureKRMFunctions`, `isPackageVariantFunc`, `generatePVFuncName`).

use kpt::yaml::Node;
use porch_core::repository::PackageFiles;
use serde_json::{Map, Value};

use super::MutationError;
use super::files::{Prr, single_object, write_back};

const PREFIX: &str = "PackageVariant";
const KPTFILE: &str = kpt::kptfile::KPTFILE;

/// The name a PackageVariant gives the function at `index` of its list.
pub fn generate_pv_func_name(func_name: &str, pv_name: &str, index: usize) -> String {
    format!("{PREFIX}.{pv_name}.{func_name}.{index}")
}

/// Whether a function of that name was added by the PackageVariant `pv_name`: exactly four
/// dot-separated parts, the prefix, the PackageVariant's name, any name, an integer.
pub fn is_package_variant_func_name(name: &str, pv_name: &str) -> bool {
    let parts: Vec<&str> = name.split('.').collect();
    matches!(parts[..], [PREFIX, pv, _, index] if pv == pv_name && index.parse::<i64>().is_ok())
}

/// Puts the PackageVariant's functions at the head of the Kptfile pipeline.
pub(crate) fn ensure_krm_functions(
    pv: &porch_api::PackageVariant,
    prr: &Prr<'_>,
    files: &mut PackageFiles,
) -> Result<(), MutationError> {
    let (mut docs, index) = single_object(files, prr, KPTFILE, "", "")?;
    let pv_name = pv.metadata.name.as_deref().unwrap_or_default();
    let spec = pv.spec.pipeline.clone().unwrap_or_default();
    let root = &mut docs[index].root;
    if root
        .get("pipeline")
        .is_some_and(|p| !p.is_mapping() && !p.is_null())
    {
        return Err(MutationError(format!(
            "{KPTFILE:?} of PackageRevisionResources {prr}: pipeline is not a map"
        )));
    }
    for (field, functions) in [("mutators", spec.mutators), ("validators", spec.validators)] {
        let functions = functions.unwrap_or_default();
        let current = root.get_path(&["pipeline", field]);
        let mut desired: Vec<Node> = functions
            .iter()
            .enumerate()
            .map(|(i, f)| function_node(f, pv_name, i))
            .collect();
        if let Some(current) = current.filter(|c| !c.is_null()) {
            if !current.is_sequence() {
                return Err(MutationError(format!(
                    "{KPTFILE:?} of PackageRevisionResources {prr}: pipeline.{field} is not a list"
                )));
            }
            for item in current.items() {
                if !added_by(item, pv_name)? {
                    desired.push(item.clone());
                }
            }
        }
        if desired.is_empty() {
            if let Some(p) = root.get_mut("pipeline") {
                p.remove(field);
            }
        } else if !same_items(current, &desired) {
            let mut list = Node::sequence();
            if let Some(items) = list.items_mut() {
                *items = desired;
            }
            root.ensure_mapping(&["pipeline"]).set(field, list);
        }
    }
    let empty = root.get("pipeline").is_some_and(|p| {
        p.get("mutators").is_none_or(Node::is_null) && p.get("validators").is_none_or(Node::is_null)
    });
    if empty {
        root.remove("pipeline");
    }
    write_back(files, KPTFILE, &docs);
    Ok(())
}

/// Whether a pipeline item is one this PackageVariant added; a `name` that is not a string
/// is an error, as upstream's `NestedString`.
fn added_by(item: &Node, pv_name: &str) -> Result<bool, MutationError> {
    match item.get("name") {
        None => Ok(false),
        Some(n) if n.is_scalar() => Ok(is_package_variant_func_name(
            n.as_str().unwrap_or_default(),
            pv_name,
        )),
        Some(_) => Err(MutationError(
            "could not retrieve field name: the name of a pipeline function is not a string".into(),
        )),
    }
}

/// The list already holds exactly these functions (semantically): leave its text alone.
fn same_items(current: Option<&Node>, desired: &[Node]) -> bool {
    let Some(current) = current else {
        return false;
    };
    let values = |nodes: &[Node]| -> Option<Vec<Value>> {
        nodes.iter().map(|n| n.try_to_value().ok()).collect()
    };
    current.items().len() == desired.len() && values(current.items()) == values(desired)
}

/// A PackageVariant function as the Kptfile gets it: renamed, the name first and then the
/// other fields in Kptfile order, empty fields omitted (Go `omitempty`).
fn function_node(f: &porch_api::packagevariant::Function, pv_name: &str, index: usize) -> Node {
    let mut out = Map::new();
    let name = generate_pv_func_name(f.name.as_deref().unwrap_or_default(), pv_name, index);
    out.insert("name".into(), Value::String(name));
    if let Ok(Value::Object(fields)) = serde_json::to_value(f) {
        for (k, v) in fields {
            if k == "name" {
                continue;
            }
            let v = match (k.as_str(), v) {
                ("selectors" | "exclude", Value::Array(items)) => {
                    Value::Array(items.into_iter().map(omit_empty).collect())
                }
                (_, v) => v,
            };
            if !is_empty(&v) {
                out.insert(k, v);
            }
        }
    }
    Node::from_value(&Value::Object(out))
}

fn omit_empty(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(m.into_iter().filter(|(_, v)| !is_empty(v)).collect()),
        v => v,
    }
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
        _ => false,
    }
}

#[cfg(test)]
mod tests;
