//! Test fixtures shared by the unit tests of this module.

use porch_core::lifecycle::Lifecycle;
use porch_core::names::{PackagePath, RepositoryName, Revision, WorkspaceName};
use porch_core::revision::PackageRevisionKey;

/// A store-backed revision `r.p.w` in namespace `ns` with `lifecycle` and revision `number`.
pub fn revision(lifecycle: Lifecycle, number: i64) -> porch_engine::PackageRevision {
    porch_engine::PackageRevision {
        namespace: "ns".into(),
        key: PackageRevisionKey {
            repository: RepositoryName::discovered("r").expect("name"),
            package: PackagePath::new("p").expect("path"),
            workspace: WorkspaceName::new("w").expect("workspace"),
            revision: Revision::from_raw(number),
        },
        lifecycle,
        resource_version: "1".into(),
        labels: Default::default(),
        annotations: Default::default(),
        tasks: Vec::new(),
        self_lock: None,
        upstream_lock: None,
        published_by: None,
        publish_timestamp: None,
        creation_timestamp: None,
        latest: false,
        origin: porch_engine::Origin::Store,
        package_metadata: Default::default(),
        readiness_gates: Vec::new(),
        conditions: Vec::new(),
        deployment: false,
        finalizers: Vec::new(),
        owner_references: Vec::new(),
        deletion_timestamp: None,
    }
}
