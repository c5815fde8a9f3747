//! The ClusterRole aggregation controller, as kube-controller-manager's: a ClusterRole with
//! an `aggregationRule` gets, as its `rules`, the rules of every other ClusterRole whose labels
//! match one of its `clusterRoleSelectors` (in name order, without duplicates). It runs at
//! start and after every change of a ClusterRole.

use std::sync::Arc;

use serde_json::Value;

use super::RBAC_GROUP;
use crate::hub::WatchHub;
use crate::registry::LiveRegistry;
use crate::resource::{Expect, ListOptions, RequestContext};

/// kube's `LabelSelector` match (`matchLabels` and `matchExpressions`).
fn selector_matches(selector: &Value, labels: &serde_json::Map<String, Value>) -> bool {
    let label = |k: &str| labels.get(k).and_then(Value::as_str);
    let by_labels = selector
        .get("matchLabels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .all(|(k, v)| label(k) == v.as_str());
    let by_expressions = selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .all(|e| {
            let key = e.get("key").and_then(Value::as_str).unwrap_or("");
            let values: Vec<&str> = e
                .get("values")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            match e.get("operator").and_then(Value::as_str) {
                Some("In") => label(key).is_some_and(|v| values.contains(&v)),
                Some("NotIn") => label(key).is_none_or(|v| !values.contains(&v)),
                Some("Exists") => label(key).is_some(),
                Some("DoesNotExist") => label(key).is_none(),
                _ => false,
            }
        });
    by_labels && by_expressions
}

/// The rules `role` should have, from `all` ClusterRoles; `None` if it aggregates nothing.
pub fn aggregated_rules(role: &Value, all: &[Value]) -> Option<Vec<Value>> {
    let selectors = role
        .pointer("/aggregationRule/clusterRoleSelectors")?
        .as_array()?;
    let name = role.pointer("/metadata/name");
    let mut sources: Vec<&Value> = all
        .iter()
        .filter(|o| o.pointer("/metadata/name") != name)
        .filter(|o| {
            let empty = serde_json::Map::new();
            let labels = o
                .pointer("/metadata/labels")
                .and_then(Value::as_object)
                .unwrap_or(&empty);
            selectors.iter().any(|s| selector_matches(s, labels))
        })
        .collect();
    sources.sort_by_key(|o| {
        o.pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    });
    let mut rules: Vec<Value> = Vec::new();
    for r in sources
        .iter()
        .filter_map(|o| o.get("rules").and_then(Value::as_array))
        .flatten()
    {
        if !rules.contains(r) {
            rules.push(r.clone());
        }
    }
    Some(rules)
}

/// One pass: every aggregated ClusterRole whose rules differ is updated.
async fn reconcile(live: &LiveRegistry) {
    let reg = live.load();
    let Some(resource) = reg.find(RBAC_GROUP, "v1", "clusterroles") else {
        return;
    };
    let ctx = RequestContext {
        user: "system:controller:clusterrole-aggregation-controller".into(),
        ..Default::default()
    };
    let list = match resource
        .backend
        .list(&ctx, None, &ListOptions::default())
        .await
    {
        Ok(l) => l,
        Err(e) => {
            tracing::warn!(error = %e, "cannot list ClusterRoles for aggregation");
            return;
        }
    };
    let all: Vec<Value> = list
        .items
        .iter()
        .filter_map(|i| serde_json::from_slice(i).ok())
        .collect();
    for role in &all {
        let Some(rules) = aggregated_rules(role, &all) else {
            continue;
        };
        let current = role.get("rules").and_then(Value::as_array);
        if current.map(Vec::as_slice).unwrap_or_default() == rules.as_slice() {
            continue;
        }
        let name = role
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        let rv = role
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let mut next = role.clone();
        next["rules"] = Value::Array(rules);
        // A conflict means another change: the next round sees it.
        match resource
            .backend
            .update(&ctx, "", name, next, Expect::ResourceVersion(rv))
            .await
        {
            Ok(_) => tracing::info!(name, "aggregated ClusterRole rules updated"),
            Err(e) => tracing::debug!(name, error = %e, "ClusterRole aggregation deferred"),
        }
    }
}

/// Runs the aggregation controller until the hub closes.
pub async fn run_aggregation(live: LiveRegistry, hub: Arc<WatchHub>) {
    let mut rx = hub.subscribe();
    let mut dirty = true;
    loop {
        if dirty {
            reconcile(&live).await;
        }
        dirty = match rx.recv().await {
            Ok(batch) => batch
                .iter()
                .any(|e| e.object.key.resource == "rbac.authorization.k8s.io/clusterroles"),
            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => true,
            Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn aggregation_collects_matching_roles_in_name_order() {
        let view = json!({"metadata": {"name": "view"}, "aggregationRule": {"clusterRoleSelectors": [
            {"matchLabels": {"agg": "view"}},
            {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["read"]}]}
        ]}});
        let b = json!({"metadata": {"name": "b", "labels": {"agg": "view"}}, "rules": [{"verbs": ["get"]}, {"verbs": ["list"]}]});
        let a = json!({"metadata": {"name": "a", "labels": {"tier": "read"}}, "rules": [{"verbs": ["list"]}]});
        let other = json!({"metadata": {"name": "c", "labels": {"agg": "edit"}}, "rules": [{"verbs": ["delete"]}]});
        let all = vec![view.clone(), b, a, other];
        assert_eq!(
            aggregated_rules(&view, &all),
            Some(vec![json!({"verbs": ["list"]}), json!({"verbs": ["get"]})])
        );
        assert_eq!(aggregated_rules(&all[1], &all), None);
    }

    #[test]
    fn expressions_follow_label_selector_semantics() {
        let labels = json!({"a": "1"});
        let labels = labels.as_object().expect("object");
        let sel = |e: Value| json!({"matchExpressions": [e]});
        assert!(selector_matches(
            &sel(json!({"key": "a", "operator": "Exists"})),
            labels
        ));
        assert!(selector_matches(
            &sel(json!({"key": "b", "operator": "DoesNotExist"})),
            labels
        ));
        assert!(selector_matches(
            &sel(json!({"key": "b", "operator": "NotIn", "values": ["1"]})),
            labels
        ));
        assert!(!selector_matches(
            &sel(json!({"key": "a", "operator": "NotIn", "values": ["1"]})),
            labels
        ));
        // An empty selector matches everything, as in Kubernetes.
        assert!(selector_matches(&json!({}), labels));
    }
}
