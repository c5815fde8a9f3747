//! The package orchestration engine: Porch's PackageRevision semantics, independent of HTTP.
//!
//! What it does:
//! - keeps an in-memory **index** of every revision of every registered repository, fed by
//!   repository listings and sync change reports plus its own writes, so reads never touch
//!   git or the store and one broken repository never fails a list; views carry Porch's
//!   object names and the computed `kpt.dev/latest-revision` label;
//! - stores **drafts and proposed revisions** (metadata and files) in the `MetadataStore`,
//!   with compare-and-swap on the store's resourceVersion;
//! - **creates** drafts with one task (`init`, `clone` from a registered revision, `edit`,
//!   `upgrade` by 3-way merge),
//!   validating names and (repository, package, workspace) uniqueness on full paths;
//! - **updates resources** with render-on-write through the Kptfile pipeline;
//! - updates **labels and annotations** of drafts and proposed revisions;
//! - runs **lifecycle transitions** (propose, reject, approve = publish through the
//!   `Repository` port, propose-delete and undo) and **deletes** by Porch's rules;
//! - emits every change, including ones found by a sync, on an **event bus**
//!   ([`Engine::subscribe`]) the API layer turns into watch events.
//!
//! Writes to one repository run one after another on that repository's queue (no lock is
//! held across `.await`); repositories proceed in parallel.
//!
//! What it does not do: HTTP, Kubernetes wire types or selectors (the API layer converts
//! [`PackageRevision`] and maps [`EngineError::kind`]); open repositories or resolve secrets
//! (callers register `Arc<dyn Repository>`); schedule syncs (callers call [`Engine::sync`] or
//! feed [`Engine::apply_change_report`]). Not yet: raw git/oci clones, metadata
//! (labels/annotations/finalizers) of published revisions, comment healing on resource
//! updates, finalizers/deletionTimestamp, or mirroring drafts to git.

mod create;
mod drafts;
mod engine;
mod error;
mod index;
mod lifecycle;
mod metadata;
mod model;
mod queue;
mod render;
mod resources;
mod tasks;
mod upgrade;

pub use engine::Engine;
pub use error::{EngineError, Result};
pub use model::{
    CreateRequest, EngineEvent, LATEST_REVISION_LABEL, ListOptions, Origin, PUSH_ON_RENDER_FAILURE,
    PackageRevision, RenderStatus, ResourcesUpdate,
};
pub use porch_core::lifecycle::Endpoint;
