//! The Porch resources between the generic REST machinery (`porch-apiserver`) and the
//! engine (`porch-engine`): what each kind is (schema, columns, validation hooks), the
//! backends of the `porch.kpt.dev` kinds served by the engine, the core `v1` kinds served
//! standalone, the repository controller that opens registered Repositories,
//! CustomResourceDefinitions served at runtime (`crd`) and the ownerReference garbage
//! collector (`gc`).
//!
//! What it does not do: start a server, parse flags, hold TLS or wire concrete adapters.
//! The binary (`porch-server`) does that, handing in a `MetadataStore`, the engine and a
//! `RepositoryOpener` (the git one lives in the binary, beside porch-git).
//!
//! Where the edge grows: controllers of the `config.porch.kpt.dev` kinds (PackageVariant,
//! PackageVariantSet) live in their own crate beside this one and drive the engine in
//! process; `objects` adapts this registry to their `Objects` port and `packagevariants`
//! runs the PackageVariant controller; access control plugs into `porch-apiserver`'s
//! request context.

pub mod controller;
pub mod crd;
pub mod events;
pub mod functions;
pub mod gc;
pub mod local_repos;
pub mod objects;
pub mod opener;
pub mod packagevariants;
pub mod packagevariantsets;

mod core;
mod creator;
mod git_spec;
mod namespace_finalize;
mod packagerevisions;
mod registry;
mod repository;
mod roles;
mod spec_changes;
mod variants;

pub use core::ensure_default_namespaces;
pub use registry::{registry, registry_with_events};
pub use roles::{default_policy, porch_cluster_roles};
