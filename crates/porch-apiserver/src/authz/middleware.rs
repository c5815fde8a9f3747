//! Enforcement on every request, after authentication: impersonation first (kubectl `--as`,
//! `--as-group`), then RBAC, then the access reviews, which are answered here because they
//! need the requesting user.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::HeaderMap;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::{Authorizer, request};
use crate::auth::{AUTHENTICATED_GROUP, UserInfo};
use crate::error::ApiError;
use crate::http::ApiServer;

const UNAUTHENTICATED_GROUP: &str = "system:unauthenticated";
const ANONYMOUS: &str = "system:anonymous";

/// The middleware: refuses with kube-apiserver's 403 what the user may not do.
pub(crate) async fn authorize(
    State(s): State<Arc<ApiServer>>,
    mut req: Request,
    next: Next,
) -> Response {
    let Some(authz) = s.config.authorizer.clone() else {
        return next.run(req).await;
    };
    let path = req.uri().path().to_string();
    let user = match req.extensions().get::<UserInfo>() {
        Some(u) => u.clone(),
        // The server's public paths (health, version, metrics) are open to everyone.
        None if crate::http::public_path(&path) => return next.run(req).await,
        None => UserInfo {
            name: ANONYMOUS.into(),
            groups: vec![UNAUTHENTICATED_GROUP.into()],
            ..Default::default()
        },
    };
    let user = match impersonate(&authz, user, req.headers()).await {
        Ok(u) => u,
        Err(e) => return e.into_response(),
    };
    let attrs = request::attributes(req.method().as_str(), &path, req.uri().query());
    let decision = authz.authorize_fresh(&user, &attrs).await;
    if !decision.allowed {
        tracing::info!(user = %user.name, verb = %attrs.verb, resource = %attrs.combined_resource(),
            namespace = %attrs.namespace, path = %path, "request forbidden");
        return request::forbidden(&user.name, &attrs, "").into_response();
    }
    if super::review::is_review(&attrs) {
        return super::review::serve(&s, &authz, &user, req).await;
    }
    req.extensions_mut().insert(user);
    next.run(req).await
}

fn header_values<'a>(headers: &'a HeaderMap, name: &str) -> Vec<&'a str> {
    headers
        .get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect()
}

/// kube-apiserver's impersonation: `Impersonate-User` (and `Impersonate-Group`,
/// `Impersonate-Uid`) replace the requester when RBAC lets it `impersonate` that user, each of
/// those groups and that uid. The impersonated user is authenticated (`system:authenticated`
/// added), as kube-apiserver does.
async fn impersonate(
    authz: &Arc<Authorizer>,
    user: UserInfo,
    headers: &HeaderMap,
) -> Result<UserInfo, ApiError> {
    let name = header_values(headers, "impersonate-user");
    let groups = header_values(headers, "impersonate-group");
    let uid = header_values(headers, "impersonate-uid");
    let Some(target) = name.first() else {
        if groups.is_empty() && uid.is_empty() {
            return Ok(user);
        }
        return Err(ApiError::bad_request(
            "requested impersonation of groups or uid without impersonating a user",
        ));
    };
    let mut checks: Vec<(&str, String, &str)> = Vec::new();
    // A service account user is impersonated through `serviceaccounts` in its namespace.
    match target
        .strip_prefix("system:serviceaccount:")
        .and_then(|r| r.split_once(':'))
    {
        Some((ns, sa)) => checks.push(("serviceaccounts", ns.to_string(), sa)),
        None => checks.push(("users", String::new(), target)),
    }
    checks.extend(groups.iter().map(|g| ("groups", String::new(), *g)));
    checks.extend(uid.iter().map(|u| ("uids", String::new(), *u)));
    for (resource, namespace, object) in checks {
        let attrs = super::Attributes {
            verb: "impersonate".into(),
            resource_request: true,
            resource: resource.into(),
            namespace,
            name: object.into(),
            ..Default::default()
        };
        if !authz.authorize_fresh(&user, &attrs).await.allowed {
            return Err(request::forbidden(&user.name, &attrs, ""));
        }
    }
    let mut groups: Vec<String> = groups.iter().map(|g| g.to_string()).collect();
    if *target != ANONYMOUS && !groups.iter().any(|g| g == AUTHENTICATED_GROUP) {
        groups.push(AUTHENTICATED_GROUP.into());
    }
    Ok(UserInfo {
        name: target.to_string(),
        uid: uid.first().map(|u| u.to_string()).unwrap_or_default(),
        groups,
        extra: Default::default(),
    })
}
