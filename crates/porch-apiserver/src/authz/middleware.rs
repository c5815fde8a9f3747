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
    // The server's public paths (health, version, metrics) are open to everyone, as they are
    // without authentication.
    if crate::http::public_path(&path) {
        return next.run(req).await;
    }
    let user = match req.extensions().get::<UserInfo>() {
        Some(u) => u.clone(),
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
        return super::review::serve(&s, &authz, &user, &attrs, req).await;
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
    // A service account without requested groups is in its groups, as when it authenticates.
    if groups.is_empty()
        && let Some((ns, _)) = target
            .strip_prefix("system:serviceaccount:")
            .and_then(|r| r.split_once(':'))
    {
        groups.push("system:serviceaccounts".into());
        groups.push(format!("system:serviceaccounts:{ns}"));
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hub::WatchHub;
    use crate::registry::Registry;
    use crate::resource::RequestContext;
    use porch_core::store::MetadataStore;
    use serde_json::json;

    async fn authorizer_with(
        objects: Vec<serde_json::Value>,
    ) -> (tempfile::TempDir, Arc<Authorizer>) {
        let dir = tempfile::tempdir().expect("tempdir");
        let store: Arc<dyn MetadataStore> = Arc::new(
            porch_store::RedbStore::open(&dir.path().join("s.redb"), Default::default())
                .expect("store"),
        );
        let hub = WatchHub::attach(&store, 16);
        let mut reg = Registry::new();
        super::super::register(&mut reg, &store, &hub);
        let ctx = RequestContext::default();
        for o in objects {
            let plural = format!("{}s", o["kind"].as_str().unwrap_or("").to_lowercase());
            let r = reg
                .find(super::super::RBAC_GROUP, "v1", &plural)
                .expect("served");
            r.backend.create(&ctx, "", o).await.expect("created");
        }
        let authz = Authorizer::new(store, hub).expect("authorizer");
        (dir, authz)
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, v.parse().expect("header value"));
        }
        h
    }

    fn user(name: &str) -> UserInfo {
        UserInfo {
            name: name.into(),
            groups: vec![AUTHENTICATED_GROUP.into()],
            ..Default::default()
        }
    }

    #[tokio::test]
    async fn impersonation_needs_the_impersonate_verb() {
        let (_dir, authz) = authorizer_with(vec![
            super::super::cluster_role(
                "impersonate-alice",
                json!({}),
                json!([{"apiGroups": [""], "resources": ["users"], "verbs": ["impersonate"], "resourceNames": ["alice"]}]),
            ),
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                   "metadata": {"name": "bob-as-alice"},
                   "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "impersonate-alice"},
                   "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "bob"}]}),
        ])
        .await;
        let as_alice = impersonate(
            &authz,
            user("bob"),
            &headers(&[("impersonate-user", "alice")]),
        )
        .await
        .expect("bob may impersonate alice");
        assert_eq!(as_alice.name, "alice");
        assert_eq!(as_alice.groups, [AUTHENTICATED_GROUP]);
        let e = impersonate(
            &authz,
            user("bob"),
            &headers(&[("impersonate-user", "carol")]),
        )
        .await
        .expect_err("not carol");
        assert_eq!(
            e.message,
            "users \"carol\" is forbidden: User \"bob\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope"
        );
        let e = impersonate(
            &authz,
            user("bob"),
            &headers(&[
                ("impersonate-user", "alice"),
                ("impersonate-group", "system:masters"),
            ]),
        )
        .await
        .expect_err("not a group");
        assert!(
            e.message.contains("cannot impersonate resource \"groups\""),
            "{}",
            e.message
        );
        // The admin may impersonate anyone, service accounts with their groups.
        let sa = impersonate(
            &authz,
            UserInfo::bootstrap_admin(),
            &headers(&[("impersonate-user", "system:serviceaccount:ci:deployer")]),
        )
        .await
        .expect("admin impersonates");
        assert_eq!(
            sa.groups,
            [
                "system:serviceaccounts",
                "system:serviceaccounts:ci",
                AUTHENTICATED_GROUP
            ]
        );
        // Without headers the user stays who it is.
        assert_eq!(
            impersonate(&authz, user("bob"), &HeaderMap::new())
                .await
                .expect("no-op")
                .name,
            "bob"
        );
    }
}
