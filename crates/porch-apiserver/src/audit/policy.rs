//! The `audit.k8s.io/v1` Policy: which level a request is logged at, matched rule by rule as
//! kube-apiserver's policy checker does (the first rule that matches decides; none: `None`).

use serde::Deserialize;

use super::AuditError;
use super::request::RequestAttributes;

/// How much of a request is logged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
pub enum Level {
    None,
    Metadata,
    Request,
    RequestResponse,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::None => "None",
            Level::Metadata => "Metadata",
            Level::Request => "Request",
            Level::RequestResponse => "RequestResponse",
        }
    }
}

/// Resources of one API group a rule names.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GroupResources {
    #[serde(default)]
    pub group: String,
    #[serde(default)]
    pub resources: Vec<String>,
    #[serde(default)]
    pub resource_names: Vec<String>,
}

/// One rule of the policy.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyRule {
    pub level: Level,
    #[serde(default)]
    pub users: Vec<String>,
    #[serde(default)]
    pub user_groups: Vec<String>,
    #[serde(default)]
    pub verbs: Vec<String>,
    #[serde(default)]
    pub resources: Vec<GroupResources>,
    #[serde(default)]
    pub namespaces: Vec<String>,
    #[serde(default, rename = "nonResourceURLs")]
    pub non_resource_urls: Vec<String>,
    #[serde(default)]
    pub omit_stages: Vec<String>,
}

/// The policy file's contents.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Policy {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub rules: Vec<PolicyRule>,
    #[serde(default)]
    pub omit_stages: Vec<String>,
}

/// What the policy decides for one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub level: Level,
    pub omit_stages: Vec<String>,
}

impl Decision {
    /// Whether an event of `stage` is written.
    pub fn logs(&self, stage: &str) -> bool {
        self.level != Level::None && !self.omit_stages.iter().any(|s| s == stage)
    }
}

impl Policy {
    /// Parses a policy file (YAML or JSON); `audit.k8s.io/v1` (or v1beta1) `Policy` only.
    pub fn parse(text: &str) -> Result<Policy, AuditError> {
        let policy: Policy = serde_yaml::from_str(text)
            .map_err(|e| AuditError::Policy(format!("cannot parse the audit policy: {e}")))?;
        if !matches!(
            policy.api_version.as_str(),
            "audit.k8s.io/v1" | "audit.k8s.io/v1beta1"
        ) || policy.kind != "Policy"
        {
            return Err(AuditError::Policy(format!(
                "the audit policy must be apiVersion audit.k8s.io/v1, kind Policy (got {:?}, {:?})",
                policy.api_version, policy.kind
            )));
        }
        for stage in policy
            .omit_stages
            .iter()
            .chain(policy.rules.iter().flat_map(|r| r.omit_stages.iter()))
        {
            if !matches!(
                stage.as_str(),
                "RequestReceived" | "ResponseStarted" | "ResponseComplete" | "Panic"
            ) {
                return Err(AuditError::Policy(format!(
                    "unknown audit stage {stage:?} in omitStages"
                )));
            }
        }
        Ok(policy)
    }

    /// The level and omitted stages of a request.
    pub fn decide(&self, attrs: &RequestAttributes) -> Decision {
        for rule in &self.rules {
            if rule.matches(attrs) {
                let mut omit = self.omit_stages.clone();
                omit.extend(rule.omit_stages.iter().cloned());
                return Decision {
                    level: rule.level,
                    omit_stages: omit,
                };
            }
        }
        Decision {
            level: Level::None,
            omit_stages: Vec::new(),
        }
    }
}

impl PolicyRule {
    fn matches(&self, a: &RequestAttributes) -> bool {
        if !self.users.is_empty() && !self.users.contains(&a.user.name) {
            return false;
        }
        if !self.user_groups.is_empty()
            && !a.user.groups.iter().any(|g| self.user_groups.contains(g))
        {
            return false;
        }
        if !self.verbs.is_empty() && !self.verbs.contains(&a.verb) {
            return false;
        }
        if self.namespaces.is_empty()
            && self.resources.is_empty()
            && self.non_resource_urls.is_empty()
        {
            return true;
        }
        match &a.resource {
            Some(r) => self.matches_resource(r),
            None => self
                .non_resource_urls
                .iter()
                .any(|u| match u.strip_suffix('*') {
                    Some(prefix) => a.path.starts_with(prefix),
                    None => a.path == *u,
                }),
        }
    }

    fn matches_resource(&self, r: &super::request::ResourceAttributes) -> bool {
        // A rule naming only non-resource URLs does not match resource requests.
        if self.namespaces.is_empty() && self.resources.is_empty() {
            return false;
        }
        if !self.namespaces.is_empty() && !self.namespaces.contains(&r.namespace) {
            return false;
        }
        if self.resources.is_empty() {
            return true;
        }
        let combined = if r.subresource.is_empty() {
            r.resource.clone()
        } else {
            format!("{}/{}", r.resource, r.subresource)
        };
        self.resources.iter().any(|gr| {
            if gr.group != r.api_group {
                return false;
            }
            if gr.resources.is_empty() {
                return true;
            }
            gr.resources.iter().any(|res| {
                if !gr.resource_names.is_empty() && !gr.resource_names.contains(&r.name) {
                    return false;
                }
                res == &combined
                    || res == "*"
                    || (!r.subresource.is_empty()
                        && res.strip_prefix("*/") == Some(r.subresource.as_str()))
                    || res.strip_suffix("/*") == Some(r.resource.as_str())
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::request::{RequestAttributes, ResourceAttributes};
    use crate::auth::UserInfo;

    fn req(verb: &str, group: &str, resource: &str, sub: &str, ns: &str) -> RequestAttributes {
        RequestAttributes {
            user: UserInfo {
                name: "alice".into(),
                groups: vec!["porch-authors".into()],
                ..Default::default()
            },
            verb: verb.into(),
            path: "/apis/x".into(),
            resource: Some(ResourceAttributes {
                api_group: group.into(),
                api_version: "v1alpha1".into(),
                resource: resource.into(),
                subresource: sub.into(),
                namespace: ns.into(),
                name: "n".into(),
            }),
        }
    }

    const POLICY: &str = r#"
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  nonResourceURLs: ["/healthz*", "/readyz"]
- level: None
  users: [bob]
- level: RequestResponse
  resources:
  - group: porch.kpt.dev
    resources: ["packagerevisions/approval"]
- level: Request
  verbs: [create, update]
  namespaces: [prod]
- level: Metadata
  userGroups: [porch-authors]
  resources:
  - group: porch.kpt.dev
    resources: ["*/status", "packagerevisionresources"]
"#;

    #[test]
    fn first_matching_rule_decides() {
        let p = Policy::parse(POLICY).expect("policy");
        let level = |a: &RequestAttributes| p.decide(a).level;
        assert_eq!(
            level(&req(
                "update",
                "porch.kpt.dev",
                "packagerevisions",
                "approval",
                "d"
            )),
            Level::RequestResponse
        );
        assert_eq!(
            level(&req("create", "", "configmaps", "", "prod")),
            Level::Request
        );
        assert_eq!(
            level(&req("create", "", "configmaps", "", "dev")),
            Level::None
        );
        assert_eq!(
            level(&req(
                "get",
                "porch.kpt.dev",
                "packagerevisions",
                "status",
                "d"
            )),
            Level::Metadata
        );
        assert_eq!(
            level(&req(
                "get",
                "porch.kpt.dev",
                "packagerevisionresources",
                "",
                "d"
            )),
            Level::Metadata
        );
        assert_eq!(
            level(&req("get", "porch.kpt.dev", "packagerevisions", "", "d")),
            Level::None
        );
        let mut bob = req(
            "update",
            "porch.kpt.dev",
            "packagerevisions",
            "approval",
            "d",
        );
        bob.user.name = "bob".into();
        assert_eq!(level(&bob), Level::None);
        let mut health = req("get", "", "", "", "");
        health.resource = None;
        health.path = "/healthz".into();
        assert_eq!(level(&health), Level::None);
        let d = p.decide(&req("create", "", "configmaps", "", "prod"));
        assert!(d.logs("ResponseComplete") && !d.logs("RequestReceived"));
    }

    #[test]
    fn rejects_other_kinds_and_unknown_stages() {
        assert!(Policy::parse("apiVersion: v1\nkind: ConfigMap\n").is_err());
        assert!(
            Policy::parse("apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [Later]\n")
                .is_err()
        );
        assert!(Policy::parse("apiVersion: audit.k8s.io/v1\nkind: Policy\n").is_ok());
    }
}
