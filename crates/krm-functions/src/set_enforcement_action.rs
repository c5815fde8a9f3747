//! `set-enforcement-action`: set `spec.enforcementAction` of every Gatekeeper
//! constraint (`constraints.gatekeeper.sh/v1beta1`) to the configured
//! `deny`, `warn` or `dryrun`, reporting the count and each policy.

use kpt::resource_list::{FileRef, ResourceList, ResultItem};
use kpt::yaml::{self, Node, SeqIndent};

use crate::FnError;
use crate::common::{gomsg, meta};

const POLICY_API_VERSION: &str = "constraints.gatekeeper.sh/v1beta1";

fn action(fc: Option<&Node>) -> Result<String, String> {
    let data = fc.map(gomsg::data_map).unwrap_or_default();
    if data.len() != 1 {
        return Err("expecting exactly 1 enforcementAction as part of the ConfigMap".to_string());
    }
    let acn = data
        .iter()
        .find(|(k, _)| k == "enforcementAction")
        .map(|(_, v)| v.clone())
        .unwrap_or_default();
    if !matches!(acn.as_str(), "deny" | "warn" | "dryrun") {
        return Err(
            "expected values for enforcementAction are [deny] or [warn] or [dryrun]".to_string(),
        );
    }
    Ok(acn)
}

/// kyaml `LookupCreate(ScalarNode, "spec")` + `SetField`: a missing `spec` is
/// created as an empty scalar, and setting a field on a scalar (or a list)
/// fails; on a null `spec` the field is appended to a node written as a
/// scalar, so the output keeps `spec:` unchanged (the policy still counts).
fn set_action(node: &mut Node, acn: &str) -> Result<(), String> {
    let wrong = |s: &Node| {
        let text = if s.is_scalar() {
            s.as_str().unwrap_or_default().to_string()
        } else {
            yaml::emit_node(s, SeqIndent::Compact)
        };
        yaml::kyaml_kind::wrong_kind("spec", "MappingNode", yaml::kyaml_kind::kind_name(s), &text)
    };
    match node.get("spec") {
        None => return Err(wrong(&Node::string(""))),
        Some(s) if s.is_null() => return Ok(()),
        Some(s) if !s.is_mapping() => return Err(wrong(s)),
        Some(_) => {}
    }
    meta::sdk_set_string(node.ensure_mapping(&["spec"]), "enforcementAction", acn);
    Ok(())
}

fn process(items: &mut [Node], acn: &str) -> Result<Vec<ResultItem>, String> {
    let mut policies = Vec::new();
    for node in items.iter_mut() {
        if node.is_null() || (node.is_mapping() && node.entries().is_empty()) {
            continue;
        }
        let m = gomsg::get_meta(node)?;
        if m.name.is_empty() || m.kind.is_empty() || m.api_version != POLICY_API_VERSION {
            continue;
        }
        set_action(node, acn)?;
        let mut r = ResultItem::info(format!("Policy name: [{}]", meta::name(node)));
        r.file = Some(FileRef {
            path: meta::file_ref(node).map(|f| f.path).unwrap_or_default(),
            index: 0,
        });
        policies.push(r);
    }
    if policies.is_empty() {
        return Ok(vec![ResultItem::warning(format!(
            "Found no policy to set to [{acn}]"
        ))]);
    }
    let mut results = vec![ResultItem::info(format!(
        "Number of policies set to [{acn}]: {}",
        policies.len()
    ))];
    results.extend(policies);
    Ok(results)
}

/// Run the function.
///
/// A kyaml framework function: an error is one error result (written with the
/// items) and the bare error on stderr, exit 1.
pub fn run(list: &mut ResourceList) -> Result<(), FnError> {
    let outcome =
        action(list.function_config.as_ref()).and_then(|acn| process(&mut list.items, &acn));
    match outcome {
        Ok(results) => {
            list.results.extend(results);
            Ok(())
        }
        Err(e) => {
            list.results.push(ResultItem::error(format!(
                "failed to process policies: {e}"
            )));
            Err(FnError::Stderr(e))
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::common::testing::{messages, run};

    const CFG: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: function-input\ndata:\n  enforcementAction: dryrun\n";

    #[test]
    fn sets_action_on_constraints() {
        let input = "\
apiVersion: constraints.gatekeeper.sh/v1beta1
kind: K8sRule
metadata: # keep
  name: p1
spec:
  enforcementAction: deny # was deny
  parameters: {}
---
apiVersion: constraints.gatekeeper.sh/v1beta1
kind: K8sRule
metadata:
  name: p2
spec:
  x: 1
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: other
";
        let (out, results, err) = run(super::run, input, Some(CFG));
        assert!(err.is_none());
        assert!(out.contains("  enforcementAction: dryrun # was deny\n  parameters: {}\n"));
        assert!(out.contains("name: p2\nspec:\n  x: 1\n  enforcementAction: dryrun\n"));
        assert_eq!(
            messages(&results),
            vec![
                "Number of policies set to [dryrun]: 2",
                "Policy name: [p1]",
                "Policy name: [p2]"
            ]
        );
    }

    #[test]
    fn errors_and_nothing_found() {
        let bad = CFG.replace("dryrun", "block");
        let (_, results, err) = run(super::run, "", Some(&bad));
        assert_eq!(
            err.as_deref(),
            Some("expected values for enforcementAction are [deny] or [warn] or [dryrun]")
        );
        assert_eq!(
            messages(&results),
            vec![
                "failed to process policies: expected values for enforcementAction are [deny] or [warn] or [dryrun]"
            ]
        );
        let (_, results, err) = run(super::run, "", None);
        assert_eq!(
            err.as_deref(),
            Some("expecting exactly 1 enforcementAction as part of the ConfigMap")
        );
        assert_eq!(
            messages(&results),
            vec![
                "failed to process policies: expecting exactly 1 enforcementAction as part of the ConfigMap"
            ]
        );
        let (_, results, _) = run(
            super::run,
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
            Some(CFG),
        );
        assert_eq!(
            messages(&results),
            vec!["Found no policy to set to [dryrun]"]
        );
    }
}
