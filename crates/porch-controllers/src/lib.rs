//! The fan-out controllers of `config.porch.kpt.dev`: PackageVariant (one upstream package
//! kept cloned, customised and up to date in one downstream) and PackageVariantSet (one
//! upstream fanned out to many PackageVariants), as upstream Porch specifies them
//! (`controllers/packagevariants`, `controllers/packagevariantsets`), with its bugs fixed.
//!
//! Package revisions are driven through the engine's API in process; PackageVariants,
//! PackageVariantSets and the objects they select or inject are reached through the
//! [`objects::Objects`] port, which porch-server backs with its own registry standalone and a
//! later in-cluster mode backs with the Kubernetes API.
//!
//! What it does not do: serve HTTP, open repositories, or know about git.

pub mod access;
pub mod events;
pub mod objects;
pub mod packagevariant;
pub mod packagevariantset;
pub mod revisions;
