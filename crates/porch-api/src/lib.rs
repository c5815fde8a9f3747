//! Serde wire types of the Porch APIs, JSON-compatible with Go Porch.
//!
//! `config.porch.kpt.dev/v1alpha1` `Repository` and `PackageVariant`, and
//! `config.porch.kpt.dev/v1alpha2` `PackageVariantSet`, derived with kube's `CustomResource` so
//! they come with typed objects for kube-rs clients and a structural OpenAPI schema the server
//! uses for strict decoding and `/openapi/v3`. Hand-written schemas for the core `v1`
//! `Namespace` and `Secret` live in [`core`].
//!
//! What it does not do: validation rules beyond the schema, defaulting, or conversion — the
//! server's resource hooks own those. Field names follow Porch's Go `json` tags exactly.

pub mod core;
pub mod event;
pub mod packagevariant;
pub mod packagevariantset;
pub mod protobuf;
pub mod repository;
mod schema;

pub use packagevariant::{PackageVariant, PackageVariantSpec, PackageVariantStatus};
pub use packagevariantset::{PackageVariantSet, PackageVariantSetSpec, PackageVariantSetStatus};
pub use repository::{
    GitRepository, OciRepository, Repository, RepositorySpec, RepositoryStatus, RepositorySync,
    SecretRef,
};
pub use schema::crd_schema;

/// The group of the Porch configuration types.
pub const CONFIG_GROUP: &str = "config.porch.kpt.dev";
