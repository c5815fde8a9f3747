//! A generic Kubernetes-style REST framework on axum: the API machinery of porch-server.
//!
//! What it does, in one place for every resource: discovery (legacy and aggregated v2),
//! OpenAPI v3, get/list/watch/create/update/patch/delete with Kubernetes semantics (label and
//! field selectors in list and watch, `limit`/`continue`, watch resumption with bookmarks,
//! `sendInitialEvents` and 410 Gone, merge/JSON/strategic patches, server-side apply with
//! kube-apiserver's field ownership in `managedFields` (`apply`)), the status subresource,
//! server-side Table output, strict field validation, and `Status` errors with the right codes
//! (mapped from error kinds in one place, `error.rs`).
//!
//! A resource plugs in with a [`ResourceKind`] descriptor (names, scope, columns, schema, hooks)
//! and a [`ResourceBackend`]: the [`GenericBackend`] stores objects in a
//! `porch_core::store::MetadataStore`; other backends (package revisions from the engine) bring
//! their own storage and reuse everything else.
//!
//! The served set can change at runtime: [`LiveRegistry`] holds an immutable [`Registry`]
//! snapshot that is swapped whole (CustomResourceDefinitions add and remove kinds); each
//! request reads one snapshot.
//!
//! What it does not do: TLS, process lifecycle or which resources exist — the `porch-server`
//! binary decides those. Authentication is a static bearer-token check; authorization is RBAC (`authz`).

mod apply;
pub mod audit;
pub mod auth;
pub mod authz;
mod body;
mod discovery;
mod dryrun;
mod error;
mod generic;
mod http;
mod hub;
mod meta;
mod metrics;
mod openapi;
mod patch;
mod registry;
mod resource;
mod rest;
mod selector;
mod table;
mod table_rows;
mod validation;

pub use error::{ApiError, Details, FieldError};
pub use generic::{GenericBackend, blocking};
pub use http::{ApiServer, GaugeFn, ServerConfig};
pub use hub::WatchHub;
pub use meta::now_rfc3339;
pub use patch::{apply_json_patch, apply_merge_patch};
pub use registry::{LiveRegistry, Registry};
pub use resource::{
    Expect, ListOptions, ListResult, NoHooks, ProtobufDecoder, RequestContext, Resource,
    ResourceBackend, ResourceHooks, ResourceKind, WatchItem, WatchStart, WatchStream,
};
pub use rest::{FieldValidation, Part, Rest};
pub use rest::{ORPHAN_FINALIZER, delete_object};
pub use selector::{FieldReq, Selectors};
pub use table::{Column, eval_path, human_duration};
pub use validation::{is_dns1123_label, is_dns1123_subdomain};
