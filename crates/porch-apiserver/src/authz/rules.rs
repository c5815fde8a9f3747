//! RBAC policy rules and how one request is matched against them, as kube-apiserver's RBAC
//! authorizer does (`rbac/v1` helpers `VerbMatches`, `APIGroupMatches`, `ResourceMatches`,
//! `ResourceNameMatches`, `NonResourceURLMatches`).

use serde_json::Value;

/// One `rules[]` entry of a Role or ClusterRole.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PolicyRule {
    pub verbs: Vec<String>,
    pub api_groups: Vec<String>,
    pub resources: Vec<String>,
    pub resource_names: Vec<String>,
    pub non_resource_urls: Vec<String>,
}

/// A list of strings (`verbs`, `resources`, …); anything else reads as empty.
pub(super) fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

impl PolicyRule {
    pub fn from_json(v: &Value) -> Self {
        Self {
            verbs: strings(v.get("verbs")),
            api_groups: strings(v.get("apiGroups")),
            resources: strings(v.get("resources")),
            resource_names: strings(v.get("resourceNames")),
            non_resource_urls: strings(v.get("nonResourceURLs")),
        }
    }

    /// The `rules` of a Role or ClusterRole object.
    pub fn list_from(obj: &Value) -> Vec<Self> {
        obj.get("rules")
            .and_then(Value::as_array)
            .map(|a| a.iter().map(Self::from_json).collect())
            .unwrap_or_default()
    }

    pub fn to_json(&self) -> Value {
        let mut m = serde_json::Map::new();
        let mut put = |k: &str, v: &[String]| {
            if !v.is_empty() {
                m.insert(k.into(), v.into());
            }
        };
        put("verbs", &self.verbs);
        put("apiGroups", &self.api_groups);
        put("resources", &self.resources);
        put("resourceNames", &self.resource_names);
        put("nonResourceURLs", &self.non_resource_urls);
        Value::Object(m)
    }
}

/// What is being asked: kube-apiserver's `authorizer.Attributes` minus the user.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Attributes {
    pub verb: String,
    /// A resource request (`/api/…`, `/apis/…` naming a resource) or a non-resource URL.
    pub resource_request: bool,
    pub api_group: String,
    pub api_version: String,
    pub resource: String,
    pub subresource: String,
    pub namespace: String,
    pub name: String,
    /// The URL path of a non-resource request.
    pub path: String,
}

impl Attributes {
    /// `resource` or `resource/subresource`, what rules name.
    pub fn combined_resource(&self) -> String {
        if self.subresource.is_empty() {
            self.resource.clone()
        } else {
            format!("{}/{}", self.resource, self.subresource)
        }
    }
}

fn has_or_star(list: &[String], want: &str) -> bool {
    list.iter().any(|v| v == "*" || v == want)
}

fn resource_matches(rule: &PolicyRule, combined: &str, subresource: &str) -> bool {
    rule.resources.iter().any(|r| {
        r == "*"
            || r == combined
            // `*/scale` names that subresource of every resource.
            || (!subresource.is_empty()
                && r.strip_prefix("*/").is_some_and(|s| s == subresource))
    })
}

fn resource_name_matches(rule: &PolicyRule, name: &str) -> bool {
    rule.resource_names.is_empty() || rule.resource_names.iter().any(|n| n == name)
}

fn non_resource_url_matches(rule: &PolicyRule, path: &str) -> bool {
    rule.non_resource_urls.iter().any(|u| {
        u == "*"
            || u == path
            || u.strip_suffix('*')
                .is_some_and(|prefix| path.starts_with(prefix))
    })
}

/// Whether `rule` allows the request (kube's `RuleAllows`).
pub fn rule_allows(attrs: &Attributes, rule: &PolicyRule) -> bool {
    if !has_or_star(&rule.verbs, &attrs.verb) {
        return false;
    }
    if attrs.resource_request {
        has_or_star(&rule.api_groups, &attrs.api_group)
            && resource_matches(rule, &attrs.combined_resource(), &attrs.subresource)
            && resource_name_matches(rule, &attrs.name)
    } else {
        non_resource_url_matches(rule, &attrs.path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rule(v: Value) -> PolicyRule {
        PolicyRule::from_json(&v)
    }

    fn res(verb: &str, group: &str, resource: &str, sub: &str, name: &str) -> Attributes {
        Attributes {
            verb: verb.into(),
            resource_request: true,
            api_group: group.into(),
            resource: resource.into(),
            subresource: sub.into(),
            name: name.into(),
            namespace: "default".into(),
            ..Default::default()
        }
    }

    fn url(verb: &str, path: &str) -> Attributes {
        Attributes {
            verb: verb.into(),
            path: path.into(),
            ..Default::default()
        }
    }

    #[test]
    fn verbs_groups_and_resources_match_exactly_or_by_star() {
        let r = rule(
            json!({"verbs": ["get", "list"], "apiGroups": ["porch.kpt.dev"], "resources": ["packagerevisions"]}),
        );
        assert!(rule_allows(
            &res("get", "porch.kpt.dev", "packagerevisions", "", "x"),
            &r
        ));
        assert!(!rule_allows(
            &res("update", "porch.kpt.dev", "packagerevisions", "", "x"),
            &r
        ));
        assert!(!rule_allows(
            &res("get", "", "packagerevisions", "", "x"),
            &r
        ));
        assert!(!rule_allows(
            &res("get", "porch.kpt.dev", "packagerevisionresources", "", ""),
            &r
        ));
        let all = rule(json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}));
        assert!(rule_allows(
            &res("deletecollection", "x.io", "things", "status", ""),
            &all
        ));
    }

    #[test]
    fn subresources_are_separate_from_their_resource() {
        let update = rule(
            json!({"verbs": ["update"], "apiGroups": ["porch.kpt.dev"], "resources": ["packagerevisions"]}),
        );
        let approval = res(
            "update",
            "porch.kpt.dev",
            "packagerevisions",
            "approval",
            "x",
        );
        assert!(!rule_allows(&approval, &update));
        let sub = rule(
            json!({"verbs": ["update"], "apiGroups": ["porch.kpt.dev"], "resources": ["packagerevisions/approval"]}),
        );
        assert!(rule_allows(&approval, &sub));
        let star_sub =
            rule(json!({"verbs": ["update"], "apiGroups": ["*"], "resources": ["*/approval"]}));
        assert!(rule_allows(&approval, &star_sub));
        assert!(!rule_allows(
            &res("update", "porch.kpt.dev", "packagerevisions", "", "x"),
            &star_sub
        ));
    }

    #[test]
    fn resource_names_restrict_and_never_match_an_unnamed_request() {
        let r = rule(
            json!({"verbs": ["get", "list", "create"], "apiGroups": [""], "resources": ["secrets"], "resourceNames": ["git-auth"]}),
        );
        assert!(rule_allows(&res("get", "", "secrets", "", "git-auth"), &r));
        assert!(!rule_allows(&res("get", "", "secrets", "", "other"), &r));
        assert!(!rule_allows(&res("list", "", "secrets", "", ""), &r));
        assert!(!rule_allows(&res("create", "", "secrets", "", ""), &r));
    }

    #[test]
    fn non_resource_urls_match_exactly_or_by_prefix_star() {
        let r = rule(json!({"verbs": ["get"], "nonResourceURLs": ["/healthz", "/apis/*"]}));
        assert!(rule_allows(&url("get", "/healthz"), &r));
        assert!(!rule_allows(&url("get", "/healthz/ping"), &r));
        assert!(rule_allows(&url("get", "/apis/porch.kpt.dev"), &r));
        assert!(!rule_allows(&url("post", "/healthz"), &r));
        assert!(!rule_allows(&url("get", "/metrics"), &r));
        // A non-resource rule never grants a resource.
        assert!(!rule_allows(&res("get", "", "pods", "", ""), &r));
        let any = rule(json!({"verbs": ["*"], "nonResourceURLs": ["*"]}));
        assert!(rule_allows(&url("delete", "/anything"), &any));
    }

    #[test]
    fn rules_round_trip_through_json() {
        let v = json!({"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"], "resourceNames": ["a"]});
        assert_eq!(rule(v.clone()).to_json(), v);
    }
}
