//! What a request asks for, from its method, path and query alone, as kube-apiserver's
//! `RequestInfoFactory` derives it (no lookup of served kinds: an unknown resource is
//! authorized like any other and then answers 404), and the 403 it gets when refused.

use crate::error::ApiError;

use super::rules::Attributes;

/// Path segments that are namespace subresources rather than namespaced resources
/// (`/api/v1/namespaces/<ns>/status`).
const NAMESPACE_SUBRESOURCES: [&str; 2] = ["status", "finalize"];

fn query_pairs(query: Option<&str>) -> Vec<(String, String)> {
    query
        .map(crate::http::form_urlencoded_parse)
        .unwrap_or_default()
}

/// The attributes of a request (kube's `RequestInfo`).
pub fn attributes(method: &str, path: &str, query: Option<&str>) -> Attributes {
    let non_resource = || Attributes {
        verb: method.to_ascii_lowercase(),
        resource_request: false,
        path: path.to_string(),
        ..Default::default()
    };
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, rest) = match parts.as_slice() {
        ["api", rest @ ..] if rest.len() >= 2 => ("", rest),
        ["apis", g, rest @ ..] if rest.len() >= 2 => (*g, rest),
        _ => return non_resource(),
    };
    let (version, mut rest) = (rest[0], &rest[1..]);
    let mut verb = match method {
        "POST" => "create",
        "GET" | "HEAD" => "get",
        "PUT" => "update",
        "PATCH" => "patch",
        "DELETE" => "delete",
        _ => "",
    }
    .to_string();
    let mut namespace = String::new();
    if rest.first() == Some(&"namespaces") && rest.len() > 1 {
        namespace = rest[1].to_string();
        if rest.len() > 2 && !NAMESPACE_SUBRESOURCES.contains(&rest[2]) {
            rest = &rest[2..];
        }
    }
    let resource = rest.first().copied().unwrap_or("").to_string();
    let name = rest.get(1).copied().unwrap_or("").to_string();
    let subresource = rest.get(2).copied().unwrap_or("").to_string();
    let q = query_pairs(query);
    let mut attrs = Attributes {
        verb: String::new(),
        resource_request: true,
        api_group: group.to_string(),
        api_version: version.to_string(),
        resource,
        subresource,
        namespace,
        name,
        path: path.to_string(),
    };
    if rest.len() == 1 {
        if verb == "get" {
            let watch = q
                .iter()
                .any(|(k, v)| k == "watch" && (v == "true" || v == "1"));
            verb = if watch { "watch" } else { "list" }.into();
        } else if verb == "delete" {
            verb = "deletecollection".into();
        }
        // A list or watch of one name by field selector (`kubectl get x -w`) is about that name.
        if (verb == "list" || verb == "watch")
            && let Some((_, fs)) = q.iter().find(|(k, _)| k == "fieldSelector")
            && let Some(n) = single_name(fs)
        {
            attrs.name = n.to_string();
        }
    }
    attrs.verb = verb;
    attrs
}

/// `metadata.name=x` (or `==`) as the whole field selector.
fn single_name(selector: &str) -> Option<&str> {
    if selector.contains(',') {
        return None;
    }
    let v = selector.strip_prefix("metadata.name")?;
    let v = v.strip_prefix("==").or_else(|| v.strip_prefix('='))?;
    (!v.is_empty()).then_some(v)
}

/// kube-apiserver's 403 for a refused request: `<resource>.<group> "<name>" is forbidden: User
/// "<user>" cannot <verb> resource "<resource>[/<sub>]" in API group "<group>" in the namespace
/// "<ns>"` (or `at the cluster scope`; `cannot <verb> path "<path>"` for non-resource URLs).
pub fn forbidden(user: &str, a: &Attributes, reason: &str) -> ApiError {
    let mut why = if !a.resource_request {
        format!("User {user:?} cannot {} path {:?}", a.verb, a.path)
    } else if a.namespace.is_empty() {
        format!(
            "User {user:?} cannot {} resource {:?} in API group {:?} at the cluster scope",
            a.verb,
            a.combined_resource(),
            a.api_group
        )
    } else {
        format!(
            "User {user:?} cannot {} resource {:?} in API group {:?} in the namespace {:?}",
            a.verb,
            a.combined_resource(),
            a.api_group,
            a.namespace
        )
    };
    if !reason.is_empty() {
        why = format!("{why}: {reason}");
    }
    forbidden_of(&a.api_group, &a.resource, &a.name, &why)
}

/// `apierrors.NewForbidden(groupResource, name, err)`.
pub fn forbidden_of(group: &str, resource: &str, name: &str, why: &str) -> ApiError {
    let qualified = if group.is_empty() {
        resource.to_string()
    } else {
        format!("{resource}.{group}")
    };
    let message = if resource.is_empty() {
        format!("forbidden: {why}")
    } else if name.is_empty() {
        format!("{qualified} is forbidden: {why}")
    } else {
        format!("{qualified} {name:?} is forbidden: {why}")
    };
    ApiError::new(porch_core::ErrorKind::Forbidden, message).with_details(name, group, resource)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbs_follow_method_and_shape() {
        let a = attributes("GET", "/apis/porch.kpt.dev/v1alpha1/packagerevisions", None);
        assert_eq!((a.verb.as_str(), a.namespace.as_str()), ("list", ""));
        let a = attributes(
            "GET",
            "/apis/porch.kpt.dev/v1alpha1/namespaces/default/packagerevisions",
            Some("watch=true"),
        );
        assert_eq!(a.verb, "watch");
        assert_eq!(a.namespace, "default");
        let a = attributes(
            "DELETE",
            "/apis/porch.kpt.dev/v1alpha1/namespaces/default/packagerevisions",
            None,
        );
        assert_eq!(a.verb, "deletecollection");
        let a = attributes(
            "PUT",
            "/apis/porch.kpt.dev/v1alpha1/namespaces/default/packagerevisions/x/approval",
            None,
        );
        assert_eq!(
            (
                a.verb.as_str(),
                a.resource.as_str(),
                a.subresource.as_str(),
                a.name.as_str()
            ),
            ("update", "packagerevisions", "approval", "x")
        );
        let a = attributes(
            "GET",
            "/api/v1/namespaces/default/secrets",
            Some("fieldSelector=metadata.name%3Dauth&watch=1"),
        );
        assert_eq!((a.verb.as_str(), a.name.as_str()), ("watch", "auth"));
    }

    #[test]
    fn namespaces_are_their_own_namespace() {
        let a = attributes("GET", "/api/v1/namespaces/prod", None);
        assert_eq!(
            (
                a.resource.as_str(),
                a.name.as_str(),
                a.namespace.as_str(),
                a.verb.as_str()
            ),
            ("namespaces", "prod", "prod", "get")
        );
        let a = attributes("PUT", "/api/v1/namespaces/prod/finalize", None);
        assert_eq!(a.subresource, "finalize");
        let a = attributes("GET", "/api/v1/namespaces", None);
        assert_eq!(
            (a.resource.as_str(), a.verb.as_str()),
            ("namespaces", "list")
        );
    }

    #[test]
    fn discovery_and_health_are_non_resource_urls() {
        for p in [
            "/api",
            "/api/v1",
            "/apis",
            "/apis/porch.kpt.dev/v1alpha1",
            "/healthz",
            "/openapi/v3",
        ] {
            let a = attributes("GET", p, None);
            assert!(!a.resource_request, "{p}");
            assert_eq!(a.verb, "get");
        }
    }

    #[test]
    fn forbidden_reads_as_kube_apiserver() {
        let a = attributes(
            "PUT",
            "/apis/porch.kpt.dev/v1alpha1/namespaces/default/packagerevisions/x/approval",
            None,
        );
        let e = forbidden("bob", &a, "");
        assert_eq!(
            e.message,
            "packagerevisions.porch.kpt.dev \"x\" is forbidden: User \"bob\" cannot update resource \"packagerevisions/approval\" in API group \"porch.kpt.dev\" in the namespace \"default\""
        );
        assert_eq!(e.code_and_reason(), (403, "Forbidden"));
        let a = attributes("GET", "/api/v1/namespaces", None);
        assert_eq!(
            forbidden("bob", &a, "").message,
            "namespaces is forbidden: User \"bob\" cannot list resource \"namespaces\" in API group \"\" at the cluster scope"
        );
        let a = attributes("GET", "/metrics", None);
        assert_eq!(
            forbidden("bob", &a, "").message,
            "forbidden: User \"bob\" cannot get path \"/metrics\""
        );
    }
}
