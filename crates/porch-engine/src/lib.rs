//! The package orchestration engine: Porch's PackageRevision semantics, independent of HTTP.
//!
//! What it does:
//! - keeps an in-memory **index** of every revision of every registered repository, fed by
//!   repository listings and sync change reports plus its own writes, so reads never touch
//!   git or the store and one broken repository never fails a list; views carry Porch's
//!   object names, the computed `kpt.dev/latest-revision` label, `status.deployment`, and
//!   the Kptfile's `packageMetadata`/`readinessGates`/`conditions`, read once per commit
//!   when a revision enters the index;
//! - stores **drafts and proposed revisions** (metadata and files) in the `MetadataStore`,
//!   with compare-and-swap on the store's resourceVersion;
//! - with [`EngineOptions::push_drafts_to_git`], **mirrors** every change of a stored draft
//!   to its Porch-layout branch (`drafts/…`, `proposed/…`; deleted with the draft; published
//!   from, and deleted in the same push, on approval). The store stays the source of truth:
//!   the draft's record notes which branch commit holds which of its versions, every git
//!   write is a compare-and-swap against it, a failed write never fails the request but is
//!   served as the [`GIT_MIRROR_CONDITION`] condition and retried (next write, next sync,
//!   backoff timer, start-up), and a branch someone else wrote is never overwritten;
//! - keeps **object metadata** (labels, annotations, finalizers, ownerReferences,
//!   deletionTimestamp) of every revision, published ones and placeholders included, in
//!   its own store record per object name, so it survives lifecycle changes, restarts and
//!   syncs ([`Engine::update_metadata`] takes a [`MetadataUpdate`]); a metadata write
//!   changes the revision's resourceVersion (git revisions: `<commit>.<store version>`);
//! - **creates** drafts with one task (`init`, `clone` from a registered revision or from a
//!   raw git URL through an [`UpstreamFetcher`](porch_core::upstream::UpstreamFetcher) set
//!   with [`Engine::set_upstream_fetcher`], `edit`, `upgrade` by 3-way merge), adding
//!   kpt's merge keys (`internal.kpt.dev/upstream-identifier`) on clone/upgrade,
//!   merging `spec.packageMetadata`/`readinessGates` into the Kptfile, regenerating
//!   `package-context.yaml` on clones into deployment repositories
//!   ([`Engine::register_with`]), validating names and (repository, package, workspace)
//!   uniqueness on full paths (a package that exists only as a Draft counts); every draft
//!   is rendered and its Kptfile carries the `Rendered` condition; a failed create writes
//!   nothing;
//! - **updates resources** with comment healing and render-on-write through the Kptfile
//!   pipeline; Draft metadata updates rewrite the Kptfile fields and re-render;
//! - runs **lifecycle transitions** (propose, reject, approve = publish through the
//!   `Repository` port, refused until every readiness gate has a `True` condition,
//!   propose-delete and undo) and **deletes** by Porch's rules, waiting for finalizers
//!   with a deletionTimestamp;
//! - refuses a **concurrent** create of the same identity or update/delete of the same
//!   object with Porch's try-lock messages ([`EngineError::InProgress`], a real 409, unlike
//!   a stale resourceVersion's [`EngineError::Conflict`]);
//! - **heals interrupted approvals**: after every sync (so at registration too) a stored
//!   draft whose workspace is published in git is removed, in every mode, and a retried
//!   approval finishes an interrupted one ([`failpoint`] crashes tests between the steps);
//! - emits every change, including ones found by a sync, on an **event bus**
//!   ([`Engine::subscribe`]) the API layer turns into watch events.
//!
//! Writes to one repository run one after another on that repository's queue (no lock is
//! held across `.await`); repositories proceed in parallel.
//!
//! Deliberate difference from Go Porch: readiness gates are checked by the server at
//! approval (Go Porch leaves that to porchctl, spec §8.7), and the creation uniqueness rules
//! compare full package paths (Go Porch compares last segments, quirk §20.6).
//!
//! What it does not do: HTTP, Kubernetes wire types or selectors (the API layer converts
//! [`PackageRevision`] and maps [`EngineError::kind`]); open repositories or resolve secrets
//! (callers register `Arc<dyn Repository>`); schedule syncs (callers call [`Engine::sync`] or
//! feed [`Engine::apply_change_report`]). Not yet: oci clones, editing drafts written to
//! git by another server (they are listed and can be approved or deleted, not edited,
//! proposed or rejected), or cleaning object metadata of revisions removed by someone else.

pub mod cluster;
mod create;
mod drafts;
mod dryrun;
mod engine;
mod error;
pub mod failpoint;
mod guardrails;
mod heal;
mod index;
mod inflight;
mod kptinfo;
mod kptload;
mod lifecycle;
mod metadata;
mod mirror;
mod mirror_record;
mod model;
mod objmeta;
mod queue;
mod reconcile;
mod render;
mod resources;
mod retarget;
mod store;
mod subpackage;
mod tasks;
mod upgrade;

pub use engine::Engine;
pub use error::{EngineError, Result};
pub use guardrails::{GuardrailFunction, Guardrails};
pub use model::{
    Condition, CreateRequest, EngineEvent, EngineOptions, GIT_MIRROR_CONDITION,
    LATEST_REVISION_LABEL, ListOptions, MetadataUpdate, Origin, OwnerReference,
    PUSH_ON_RENDER_FAILURE, PackageMetadata, PackageRevision, RegisterOptions, RenderLimits,
    RenderStatus, ResourcesUpdate,
};
pub use porch_core::lifecycle::Endpoint;
