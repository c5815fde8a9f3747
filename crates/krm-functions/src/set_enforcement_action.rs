//! `set-enforcement-action`: set `spec.enforcementAction` of every Gatekeeper
//! constraint (`constraints.gatekeeper.sh/v1beta1`) to the configured
//! `deny`, `warn` or `dryrun`, reporting the count and each policy.

use kpt::resource_list::{FileRef, ResourceList, ResultItem};
use kpt::yaml::Node;

use crate::FnError;
use crate::common::{config, meta};

const POLICY_API_VERSION: &str = "constraints.gatekeeper.sh/v1beta1";

fn action(fc: Option<&Node>) -> Result<String, String> {
    let data = fc.map(config::data_map).unwrap_or_default();
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

/// Run the function.
pub fn run(list: &mut ResourceList) -> Result<(), FnError> {
    let acn = action(list.function_config.as_ref())
        .map_err(|e| FnError::Config(format!("failed to process policies: {e}")))?;
    let mut policies = Vec::new();
    for node in &mut list.items {
        if meta::name(node).is_empty()
            || meta::kind(node).is_empty()
            || meta::api_version(node) != POLICY_API_VERSION
        {
            continue;
        }
        meta::sdk_set_string(node.ensure_mapping(&["spec"]), "enforcementAction", &acn);
        let mut r = ResultItem::info(format!("Policy name: [{}]", meta::name(node)));
        r.file = Some(FileRef {
            path: meta::file_ref(node).map(|f| f.path).unwrap_or_default(),
            index: 0,
        });
        policies.push(r);
    }
    if policies.is_empty() {
        list.results.push(ResultItem::warning(format!(
            "Found no policy to set to [{acn}]"
        )));
    } else {
        list.results.push(ResultItem::info(format!(
            "Number of policies set to [{acn}]: {}",
            policies.len()
        )));
        list.results.extend(policies);
    }
    Ok(())
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
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: other
";
        let (out, results, err) = run(super::run, input, Some(CFG));
        assert!(err.is_none());
        assert!(out.contains("  enforcementAction: dryrun # was deny\n  parameters: {}\n"));
        assert!(out.contains("name: p2\nspec:\n  enforcementAction: dryrun\n"));
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
        let (_, _, err) = run(super::run, "", Some(&bad));
        assert_eq!(
            err.as_deref(),
            Some(
                "failed to process policies: expected values for enforcementAction are [deny] or [warn] or [dryrun]"
            )
        );
        let (_, _, err) = run(super::run, "", None);
        assert_eq!(
            err.as_deref(),
            Some(
                "failed to process policies: expecting exactly 1 enforcementAction as part of the ConfigMap"
            )
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
