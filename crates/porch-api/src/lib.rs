//! Serde wire types of the Porch APIs, JSON-compatible with Go Porch.
//!
//! `config.porch.kpt.dev/v1alpha1` `Repository` and `PackageVariant`, and
//! `config.porch.kpt.dev/v1alpha2` `PackageVariantSet`, derived with kube's `CustomResource` so
//! they come with typed objects for kube-rs clients and a structural OpenAPI schema the server
//! uses for strict decoding and `/openapi/v3`. Hand-written schemas for the core `v1`
//! `Namespace` and `Secret` live in [`core`].
//!
//! `porch.kpt.dev/v1alpha1` `PackageRevision`, `PackageRevisionResources` and `PorchPackage`
//! (the kinds Porch serves from its aggregated apiserver) are derived the same way; their
//! schema ([`aggregated_schema`]) documents the fields and drives unknown-field detection but
//! requires nothing, as Porch's Go strategies, not the schema, validate them.
//!
//! What it does not do: validation rules beyond the schema, defaulting, or conversion — the
//! server's resource hooks own those. Field names follow Porch's Go `json` tags exactly.

pub mod core;
pub mod event;
pub mod function;
pub mod functionconfig;
pub mod package;
pub mod packagerevision;
pub mod packagevariant;
pub mod packagevariantset;
pub mod protobuf;
pub mod repository;
pub mod resources;
mod schema;
pub mod tasks;

pub use function::{Function, FunctionSpec};
pub use functionconfig::{FunctionConfig, FunctionConfigSpec, FunctionConfigStatus};
pub use package::{PackageSpec, PackageStatus, PorchPackage};
pub use packagerevision::{PackageRevision, PackageRevisionSpec, PackageRevisionStatus};
pub use packagevariant::{PackageVariant, PackageVariantSpec, PackageVariantStatus};
pub use packagevariantset::{PackageVariantSet, PackageVariantSetSpec, PackageVariantSetStatus};
pub use repository::{
    FunctionEval, FunctionEvalRef, GitRepository, OciRepository, Repository, RepositorySpec,
    RepositoryStatus, RepositorySync, SecretRef,
};
pub use resources::{
    PackageRevisionResources, PackageRevisionResourcesSpec, PackageRevisionResourcesStatus,
};
pub use schema::{aggregated_schema, crd_schema};
pub use tasks::Task;

/// The group of the Porch configuration types.
pub const CONFIG_GROUP: &str = "config.porch.kpt.dev";

/// The group of the kinds Porch serves from its aggregated apiserver.
pub const PORCH_GROUP: &str = "porch.kpt.dev";
