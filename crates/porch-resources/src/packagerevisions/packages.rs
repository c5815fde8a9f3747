//! `packages` (PorchPackage, spec §4): one object per package of every repository, with its
//! latest published revision, derived from the engine's index on each read. Read-only.
//! Porch's CR cache never fills this list (a quirk); we always do.

use std::collections::BTreeMap;
use std::sync::Arc;

use porch_apiserver::{
    ApiError, Expect, ListOptions, ListResult, RequestContext, ResourceBackend, WatchStart,
    WatchStream,
};
use porch_engine::{Engine, PackageRevision};
use serde_json::{Value, json};

use super::convert::API_VERSION;

pub struct PackagesBackend {
    pub engine: Engine,
    pub log: Arc<super::events::EventLog>,
}

/// `<repo>.<dotted path>`.
fn package_name(pr: &PackageRevision) -> String {
    format!("{}.{}", pr.key.repository, pr.key.package.dotted())
}

fn package_json(namespace: &str, revisions: &[&PackageRevision], rv: u64) -> Value {
    let first = revisions[0];
    let name = package_name(first);
    let latest = revisions
        .iter()
        .filter(|p| p.lifecycle.is_published())
        .map(|p| p.key.revision.get())
        .max()
        .unwrap_or(0)
        .max(0);
    let uid = uuid::Uuid::new_v5(
        &porch_core::revision::UID_NAMESPACE,
        format!("package:porch.kpt.dev/v1alpha1/{namespace}/{name}").as_bytes(),
    );
    json!({
        "apiVersion": API_VERSION,
        "kind": "PorchPackage",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": uid.to_string(),
            "resourceVersion": rv.to_string(),
        },
        "spec": {
            "packageName": first.key.package.as_str(),
            "repository": first.key.repository.as_str(),
        },
        "status": {"latestRevision": latest},
    })
}

impl PackagesBackend {
    fn all(&self, namespace: Option<&str>) -> Vec<Value> {
        let revisions = self.engine.list(&porch_engine::ListOptions {
            namespace: namespace.map(str::to_owned),
            ..Default::default()
        });
        let mut groups: BTreeMap<(String, String), Vec<&PackageRevision>> = BTreeMap::new();
        for pr in &revisions {
            groups
                .entry((pr.namespace.clone(), package_name(pr)))
                .or_default()
                .push(pr);
        }
        let rv = self.log.latest();
        groups
            .iter()
            .map(|((ns, _), prs)| package_json(ns, prs, rv))
            .collect()
    }
}

fn read_only() -> ApiError {
    ApiError::method_not_allowed(
        "packages are read-only; create, update or delete PackageRevisions instead",
    )
}

#[async_trait::async_trait]
impl ResourceBackend for PackagesBackend {
    async fn get(
        &self,
        _: &RequestContext,
        namespace: &str,
        name: &str,
    ) -> Result<Value, ApiError> {
        self.all(Some(namespace))
            .into_iter()
            .find(|o| o.pointer("/metadata/name").and_then(Value::as_str) == Some(name))
            .ok_or_else(|| ApiError::not_found(super::convert::GROUP, "packages", name))
    }

    async fn list(
        &self,
        _: &RequestContext,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<ListResult, ApiError> {
        let items = self
            .all(namespace)
            .into_iter()
            .filter(|o| options.selectors.matches(o))
            .map(|o| Arc::from(serde_json::to_vec(&o).unwrap_or_default()))
            .collect();
        Ok(ListResult {
            items,
            resource_version: self.log.latest(),
            continue_token: None,
            remaining_item_count: None,
        })
    }

    async fn create(&self, _: &RequestContext, _: &str, _: Value) -> Result<Value, ApiError> {
        Err(read_only())
    }

    async fn update(
        &self,
        _: &RequestContext,
        _: &str,
        _: &str,
        _: Value,
        _: Expect,
    ) -> Result<Value, ApiError> {
        Err(read_only())
    }

    async fn delete(
        &self,
        _: &RequestContext,
        _: &str,
        _: &str,
        _: Expect,
    ) -> Result<Value, ApiError> {
        Err(read_only())
    }

    async fn watch(
        &self,
        _: &RequestContext,
        _: Option<&str>,
        _: WatchStart,
        _: &ListOptions,
    ) -> Result<WatchStream, ApiError> {
        Err(ApiError::method_not_allowed(
            "watch is not supported on packages; watch packagerevisions",
        ))
    }
}
