//! The port to Kubernetes-style objects (PackageVariants, PackageVariantSets, Repositories,
//! ConfigMaps, any kind a PackageVariantSet selects or a PackageVariant injects).

use async_trait::async_trait;
use serde_json::Value;

/// Which resource: API group (empty for core), version and plural, as in a REST path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Gvr {
    pub group: String,
    pub version: String,
    pub plural: String,
}

impl Gvr {
    pub fn new(group: &str, version: &str, plural: &str) -> Self {
        Gvr {
            group: group.into(),
            version: version.into(),
            plural: plural.into(),
        }
    }
}

/// Why an object operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind:?}: {message}")]
pub struct ObjectError {
    pub kind: porch_core::ErrorKind,
    pub message: String,
}

/// Get, list and write objects by resource. Writes carry `metadata.resourceVersion`, so a
/// stale write is an `ErrorKind::Conflict`, as with the Kubernetes API.
#[async_trait]
pub trait Objects: Send + Sync {
    async fn get(&self, r: &Gvr, namespace: &str, name: &str)
    -> Result<Option<Value>, ObjectError>;
    /// Every object of `r` in `namespace` (all namespaces for `None`) matching the
    /// label selector (Kubernetes syntax; empty selects all).
    async fn list(
        &self,
        r: &Gvr,
        namespace: Option<&str>,
        label_selector: &str,
    ) -> Result<Vec<Value>, ObjectError>;
    /// The resource serving `api_version` (`group/version` or `v1`) and `kind`, if any.
    fn resolve(&self, api_version: &str, kind: &str) -> Option<Gvr>;
    async fn create(&self, r: &Gvr, namespace: &str, obj: Value) -> Result<Value, ObjectError>;
    async fn update(&self, r: &Gvr, namespace: &str, obj: Value) -> Result<Value, ObjectError>;
    async fn update_status(
        &self,
        r: &Gvr,
        namespace: &str,
        obj: Value,
    ) -> Result<Value, ObjectError>;
    async fn delete(&self, r: &Gvr, namespace: &str, name: &str) -> Result<(), ObjectError>;
}
