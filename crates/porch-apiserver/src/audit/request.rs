//! What a request is, in the policy's terms: kube-apiserver's `RequestInfo` (verb, group,
//! version, resource, subresource, namespace, name) read from the method and the path alone,
//! so that requests for kinds not served are described too.

use crate::auth::UserInfo;

/// The resource a resource request addresses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResourceAttributes {
    pub api_group: String,
    pub api_version: String,
    pub resource: String,
    pub subresource: String,
    pub namespace: String,
    pub name: String,
}

/// Who asks for what.
#[derive(Debug, Clone)]
pub struct RequestAttributes {
    pub user: UserInfo,
    /// `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`, `deletecollection`; the
    /// lower-case HTTP method for non-resource requests.
    pub verb: String,
    pub path: String,
    /// `None` for a non-resource request (`/healthz`, `/version`, discovery roots).
    pub resource: Option<ResourceAttributes>,
}

/// `true` when the query asks for a watch.
fn watch_query(query: &str) -> bool {
    query
        .split('&')
        .any(|p| p == "watch=true" || p == "watch=1")
}

impl RequestAttributes {
    pub fn new(user: UserInfo, method: &str, path: &str, query: &str) -> Self {
        let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
        let (group, version, rest) = match segs.as_slice() {
            ["api", v, rest @ ..] if !rest.is_empty() => ("", *v, rest),
            ["apis", g, v, rest @ ..] if !rest.is_empty() => (*g, *v, rest),
            _ => {
                return RequestAttributes {
                    user,
                    verb: method.to_ascii_lowercase(),
                    path: path.to_owned(),
                    resource: None,
                };
            }
        };
        let mut r = ResourceAttributes {
            api_group: group.to_owned(),
            api_version: version.to_owned(),
            ..Default::default()
        };
        let mut parts: &[&str] = rest;
        // `namespaces/<ns>/<resource>…`; `namespaces/<ns>` itself is the namespace object.
        if parts.first() == Some(&"namespaces") && parts.len() > 1 {
            r.namespace = parts[1].to_owned();
            if parts.len() > 2 && !matches!(parts[2], "status" | "finalize") {
                parts = &parts[2..];
            }
        }
        if let Some(res) = parts.first() {
            r.resource = (*res).to_owned();
        }
        if let Some(name) = parts.get(1) {
            r.name = (*name).to_owned();
        }
        if let Some(sub) = parts.get(2) {
            r.subresource = (*sub).to_owned();
        }
        let named = !r.name.is_empty();
        let verb = match method {
            "GET" | "HEAD" if watch_query(query) => "watch",
            "GET" | "HEAD" if named => "get",
            "GET" | "HEAD" => "list",
            "POST" => "create",
            "PUT" => "update",
            "PATCH" => "patch",
            "DELETE" if named => "delete",
            "DELETE" => "deletecollection",
            other => return Self::other(user, other, path, r),
        };
        RequestAttributes {
            user,
            verb: verb.to_owned(),
            path: path.to_owned(),
            resource: Some(r),
        }
    }

    fn other(user: UserInfo, method: &str, path: &str, r: ResourceAttributes) -> Self {
        RequestAttributes {
            user,
            verb: method.to_ascii_lowercase(),
            path: path.to_owned(),
            resource: Some(r),
        }
    }

    /// A Secret (whose data is never logged).
    pub fn is_secret(&self) -> bool {
        self.resource
            .as_ref()
            .is_some_and(|r| r.api_group.is_empty() && r.resource == "secrets")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attrs(method: &str, path: &str, query: &str) -> RequestAttributes {
        RequestAttributes::new(UserInfo::default(), method, path, query)
    }

    #[test]
    fn reads_kube_request_info() {
        let a = attrs(
            "PUT",
            "/apis/porch.kpt.dev/v1alpha1/namespaces/default/packagerevisions/r1/approval",
            "",
        );
        assert_eq!(a.verb, "update");
        let r = a.resource.expect("resource");
        assert_eq!(
            (r.api_group.as_str(), r.api_version.as_str()),
            ("porch.kpt.dev", "v1alpha1")
        );
        assert_eq!(
            (r.namespace.as_str(), r.resource.as_str(), r.name.as_str()),
            ("default", "packagerevisions", "r1")
        );
        assert_eq!(r.subresource, "approval");

        let a = attrs("GET", "/api/v1/namespaces/default/secrets", "watch=true");
        assert_eq!(a.verb, "watch");
        assert!(a.is_secret());
        assert_eq!(attrs("GET", "/api/v1/secrets", "").verb, "list");
        assert_eq!(
            attrs("DELETE", "/api/v1/namespaces/d/pods", "").verb,
            "deletecollection"
        );

        let ns = attrs("DELETE", "/api/v1/namespaces/team", "");
        assert_eq!(ns.verb, "delete");
        let r = ns.resource.expect("resource");
        assert_eq!(
            (r.resource.as_str(), r.name.as_str(), r.namespace.as_str()),
            ("namespaces", "team", "team")
        );

        let h = attrs("GET", "/healthz", "");
        assert!(h.resource.is_none());
        assert_eq!(h.verb, "get");
        assert!(
            attrs("GET", "/apis/porch.kpt.dev/v1alpha1", "")
                .resource
                .is_none()
        );
    }
}
