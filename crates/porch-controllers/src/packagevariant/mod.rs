//! The PackageVariant controller (upstream `controllers/packagevariants/pkg/controllers/packagevariant`):
//! keeps one downstream package cloned from an upstream revision, upgraded when the
//! upstream moves, and mutated as the variant says (spec §16.1, §16.2).
//!
//! - `validate`: the spec checks that make a variant Stalled;
//! - `upstream`: which upstream revision, whether a downstream is based on it, workspaces;
//! - `downstream`: targets, adoption, delete/orphan by policy;
//! - `drafts`: clone, upgrade and edit drafts, the mutations written into them;
//! - `reconcile`: one reconcile, over the [`crate::objects::Objects`] and
//!   [`crate::revisions::Revisions`] ports;
//! - `status`: conditions and downstream targets, written only when they change;
//! - `concerns`: which variants a package revision change concerns, indexed from their watch;
//! - `runner`: the work queue (de-duplicated per variant, retried with backoff) and what
//!   feeds it (variant changes, package revision events, a periodic resync).

mod concerns;
mod downstream;
mod drafts;
pub mod mutate;
mod reconcile;
pub mod runner;
mod status;
mod upstream;
mod validate;

#[cfg(test)]
mod testing;
#[cfg(test)]
mod tests;

pub use concerns::ConcernIndex;
pub use reconcile::{FINALIZER, ReconcileError, Reconciler, gvr};
pub use runner::{Key, WorkQueue};
pub use upstream::WORKSPACE_PREFIX;
