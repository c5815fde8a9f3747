//! The PackageVariantSet controller (upstream
//! `controllers/packagevariantsets/pkg/controllers/packagevariantset`): one upstream package
//! revision fanned out to a PackageVariant per target.
//!
//! [`reconcile`] brings one `config.porch.kpt.dev/v1alpha2` PackageVariantSet to its desired
//! state through the [`Objects`] port:
//! 1. validate the spec ([`validate`]) — Stalled/`ValidationError`;
//! 2. find the upstream PackageRevision (`porch.kpt.dev/v1alpha1 packagerevisions`, same repo
//!    and package, and the revision or the workspace name) — Stalled/`UpstreamNotFound`;
//! 3. unroll the targets ([`targets`]) — Stalled/`NoMatchingTargets` when a selected kind is
//!    not served, `UnexpectedError` for other failures;
//! 4. render one PackageVariant spec per target ([`render`], CEL templates) and converge the
//!    PackageVariants labelled `config.porch.kpt.dev/packagevariantset: <set UID>`: create the
//!    missing, update in place those whose spec differs (never delete and recreate), leave
//!    equal ones unwritten, delete those no longer wanted — Ready/`Reconciled`.
//!
//! The status is written only when a condition changed.
//!
//! # Runner contract
//! [`runner::run`] is what porch-server spawns: `tokio::spawn(run(objects, rx, resync, caught_up))`. The
//! caller sends a [`runner::Wake`] on the channel
//! - `Set { namespace, name }` when that PackageVariantSet is created, changed or deleted;
//! - `Namespace(ns)` when a PackageVariant or Repository of `ns` changes, a PackageRevision of
//!   a set's upstream package, or an object of a kind a set's `objectSelector` names — as
//!   upstream, every set of the namespace is reconciled (porch-server sends nothing for other
//!   writes, so an idle set costs nothing);
//! - `All` to sweep everything.
//!
//! Every `resync` the runner sweeps all namespaces anyway, so a lost wake only delays. Wakes
//! that queue up while it works are merged. Work runs one object at a time on the runner's
//! task; failures are logged (tracing) and retried at the next wake or sweep. The runner
//! returns when every sender is dropped.
//!
//! Kubernetes deletes the PackageVariants of a deleted set through their owner reference;
//! standalone nothing does, so the runner's namespace sweeps (and a `Set` wake for a set that
//! no longer exists) delete PackageVariants whose owning set (label and controller owner
//! reference, same UID) is gone: [`reconcile::collect_orphans`].

pub mod expr;
pub mod naming;
pub mod reconcile;
pub mod render;
pub mod runner;
pub mod selector;
pub mod status;
pub mod targets;
pub mod template;
pub mod validate;

#[cfg(test)]
mod testobjects;

pub use reconcile::{Changes, Outcome, collect_orphans, reconcile};

use crate::objects::{Gvr, ObjectError};

/// Label that ties a generated PackageVariant to its set (value: the set's UID).
pub const OWNER_LABEL: &str = "config.porch.kpt.dev/packagevariantset";
/// The PackageVariant controller's finalizer, set on generated PackageVariants up front.
pub const PV_FINALIZER: &str = "config.porch.kpt.dev/packagevariants";

/// `config.porch.kpt.dev/v1alpha2 packagevariantsets`
pub fn packagevariantsets_gvr() -> Gvr {
    Gvr::new("config.porch.kpt.dev", "v1alpha2", "packagevariantsets")
}

/// `config.porch.kpt.dev/v1alpha1 packagevariants`
pub fn packagevariants_gvr() -> Gvr {
    Gvr::new("config.porch.kpt.dev", "v1alpha1", "packagevariants")
}

/// `config.porch.kpt.dev/v1alpha1 repositories`
pub fn repositories_gvr() -> Gvr {
    Gvr::new("config.porch.kpt.dev", "v1alpha1", "repositories")
}

/// `porch.kpt.dev/v1alpha1 packagerevisions`
pub fn packagerevisions_gvr() -> Gvr {
    Gvr::new("porch.kpt.dev", "v1alpha1", "packagerevisions")
}

/// Why reconciling a set failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PvsError {
    /// A target selects a kind nothing serves.
    #[error("no matches for kind {kind:?} in version {api_version:?}")]
    NoMatch { api_version: String, kind: String },
    /// A label selector is malformed.
    #[error("{0}")]
    Selector(String),
    /// A template could not be rendered (CEL error, missing repository).
    #[error("{0}")]
    Render(String),
    /// The stored object does not have the expected shape.
    #[error("{0}")]
    Malformed(String),
    /// Reading or writing an object failed.
    #[error(transparent)]
    Objects(#[from] ObjectError),
}

impl PvsError {
    pub fn kind(&self) -> porch_core::ErrorKind {
        match self {
            PvsError::NoMatch { .. } => porch_core::ErrorKind::NotFound,
            PvsError::Selector(_) | PvsError::Render(_) | PvsError::Malformed(_) => {
                porch_core::ErrorKind::Invalid
            }
            PvsError::Objects(e) => e.kind,
        }
    }
}
