//! Authorization: kube-apiserver's RBAC, standalone.
//!
//! The `rbac.authorization.k8s.io/v1` kinds are served from the store like any other kind
//! (`kinds`); the [`Authorizer`] keeps an index of them by subject (`index`), rebuilt when one
//! changes, and answers for every request after authentication (`middleware`): the user
//! (`crate::auth::UserInfo` from the request's extensions), the verb, group, resource,
//! subresource, namespace and name derived from the request as kube-apiserver does
//! (`request`), matched against the rules of the user's bindings (`rules`). Members of
//! `system:masters` may do everything. The access reviews (`kubectl auth can-i`) and
//! `kubectl auth whoami` are answered by `review`; `aggregate` fills aggregated ClusterRoles.
//!
//! What this does not do: authenticate (the middleware before it does), or check in-process
//! callers: controllers call the engine and backends directly, not over HTTP.

mod aggregate;
mod defaults;
mod escalation;
mod index;
mod kinds;
mod middleware;
mod request;
mod review;
mod rules;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use porch_core::store::{ListQuery, MetadataStore, StoreError};
use serde_json::Value;

pub use aggregate::run_aggregation;
pub use defaults::{cluster_role, cluster_role_binding, ensure_defaults, kube_bootstrap_policy};
pub use index::Objects;
pub use kinds::register;
pub(crate) use middleware::authorize as middleware;
pub use request::{attributes, forbidden};
pub use rules::{Attributes, PolicyRule, rule_allows};

use crate::auth::{MASTERS_GROUP, UserInfo};
use crate::hub::WatchHub;
use index::Index;

/// The API group of the RBAC kinds.
pub const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

/// The store resources holding RBAC objects (`<group>/<plural>`).
const RESOURCES: [&str; 4] = [
    "rbac.authorization.k8s.io/roles",
    "rbac.authorization.k8s.io/clusterroles",
    "rbac.authorization.k8s.io/rolebindings",
    "rbac.authorization.k8s.io/clusterrolebindings",
];

/// An authorization answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    /// Why, as kube-apiserver words it in a SubjectAccessReview (`RBAC: allowed by …`).
    pub reason: String,
}

/// The RBAC authorizer of a server.
pub struct Authorizer {
    store: Arc<dyn MetadataStore>,
    hub: Arc<WatchHub>,
    index: RwLock<Arc<Index>>,
    /// The store resourceVersion the index is known to be current with.
    seen: AtomicU64,
}

impl std::fmt::Debug for Authorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorizer")
            .field("seen", &self.seen.load(Ordering::Relaxed))
            .finish()
    }
}

fn load(store: &dyn MetadataStore) -> Result<(Objects, u64), StoreError> {
    let rv = store.current_resource_version()?;
    let mut lists: Vec<Vec<Value>> = Vec::new();
    for resource in RESOURCES {
        let page = store.list(&ListQuery {
            resource: resource.into(),
            namespace: None,
            start_after: None,
            limit: None,
        })?;
        lists.push(
            page.items
                .iter()
                .filter_map(|o| serde_json::from_slice(&o.data).ok())
                .collect(),
        );
    }
    let mut it = lists.into_iter();
    let mut next = || it.next().unwrap_or_default();
    Ok((
        Objects {
            roles: next(),
            cluster_roles: next(),
            role_bindings: next(),
            cluster_role_bindings: next(),
        },
        rv,
    ))
}

impl Authorizer {
    /// An authorizer over the RBAC objects of `store`; call [`Authorizer::start`] to follow
    /// their changes.
    pub fn new(store: Arc<dyn MetadataStore>, hub: Arc<WatchHub>) -> Result<Arc<Self>, StoreError> {
        let (objs, rv) = load(store.as_ref())?;
        Ok(Arc::new(Self {
            store,
            hub,
            index: RwLock::new(Arc::new(Index::build(&objs))),
            seen: AtomicU64::new(rv),
        }))
    }

    fn current(&self) -> Arc<Index> {
        self.index.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Rebuilds the index from the store (blocking: call from a blocking context).
    fn reload(&self) {
        match load(self.store.as_ref()) {
            Ok((objs, rv)) => {
                let index = Arc::new(Index::build(&objs));
                *self.index.write().unwrap_or_else(|e| e.into_inner()) = index;
                self.seen.fetch_max(rv, Ordering::SeqCst);
            }
            Err(e) => tracing::warn!(error = %e, "cannot reload the RBAC objects"),
        }
    }

    /// Follows the store: the index is rebuilt after every batch that changes an RBAC object.
    pub fn start(self: &Arc<Self>) {
        let mut rx = self.hub.subscribe();
        let weak = Arc::downgrade(self);
        tokio::spawn(async move {
            // Changes between `new` and the subscription are caught by this first reload.
            let mut dirty = true;
            loop {
                let Some(this) = weak.upgrade() else { return };
                if dirty {
                    let t = this.clone();
                    let _ = crate::generic::blocking(move || {
                        t.reload();
                        Ok(())
                    })
                    .await;
                }
                drop(this);
                dirty = match rx.recv().await {
                    Ok(batch) => {
                        let rbac = batch
                            .iter()
                            .any(|e| RESOURCES.contains(&e.object.key.resource.as_str()));
                        if !rbac && let (Some(this), Some(last)) = (weak.upgrade(), batch.last()) {
                            this.seen
                                .fetch_max(last.object.resource_version, Ordering::SeqCst);
                        }
                        rbac
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => true,
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                };
            }
        });
    }

    /// The resourceVersion up to which the index reflects the store (replicas' read barrier
    /// waits for it to pass the writes a request must see).
    pub fn seen(&self) -> u64 {
        self.seen.load(Ordering::SeqCst)
    }

    /// Whether `user` may do what `attrs` describe, from the index as it is.
    pub fn authorize(&self, user: &UserInfo, attrs: &Attributes) -> Decision {
        if user.in_group(MASTERS_GROUP) {
            return Decision {
                allowed: true,
                reason: String::new(),
            };
        }
        match self.current().allowed_by(user, attrs) {
            Some(by) => Decision {
                allowed: true,
                reason: format!("RBAC: allowed by {by}"),
            },
            None => Decision {
                allowed: false,
                reason: String::new(),
            },
        }
    }

    /// [`Authorizer::authorize`], but a refusal is checked again against a fresh index when
    /// the store has moved on since the index was built: a binding created just before the
    /// request is honoured even if the follower has not caught up yet.
    pub async fn authorize_fresh(
        self: &Arc<Self>,
        user: &UserInfo,
        attrs: &Attributes,
    ) -> Decision {
        let d = self.authorize(user, attrs);
        if d.allowed || self.hub.latest() <= self.seen.load(Ordering::SeqCst) {
            return d;
        }
        let this = self.clone();
        let _ = crate::generic::blocking(move || {
            this.reload();
            Ok(())
        })
        .await;
        self.authorize(user, attrs)
    }

    /// Rebuilds the index when the store has moved on since it was built, so that what
    /// follows sees every binding stored before the request.
    pub async fn catch_up(self: &Arc<Self>) {
        if self.hub.latest() <= self.seen.load(Ordering::SeqCst) {
            return;
        }
        let this = self.clone();
        let _ = crate::generic::blocking(move || {
            this.reload();
            Ok(())
        })
        .await;
    }

    /// The rules `user` has in `namespace` (cluster-wide ones included).
    pub fn rules_for(&self, user: &UserInfo, namespace: &str) -> Vec<PolicyRule> {
        self.current().rules_for(user, namespace)
    }
}
