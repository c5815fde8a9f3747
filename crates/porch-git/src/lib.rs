//! Git storage for package revisions, in Go Porch's layout.
//!
//! Start with [`GitRepository::open`] (a registration: URL, branch, directory, credentials)
//! on a [`MirrorPool`]; it implements the porch-core [`Repository`](porch_core::repository::Repository)
//! port: list/get/read revisions, publish (merge commit + tag `<path>/v<N>`), delete,
//! propose-delete, optional draft mirroring, and sync with a change report.
//! [`spawn_sync_loop`] runs syncs on the Repository's cron schedule.
//!
//! How it works: each remote URL has one local bare mirror under `<data_dir>/git/`, shared
//! by the registrations of that URL, with one worker thread (alive while there is work)
//! doing all of its git work in order. Discovery indexes refs by name and caches by object
//! id, so re-listing after a sync only reads what moved. Smart-HTTP remotes are spoken to in
//! process; pushes are atomic with the expected old value of every ref (in process, or
//! `git push --atomic --force-with-lease` through the CLI), so a lost race is a typed
//! Conflict, never an overwrite, and a failed push leaves the mirror as it was. New objects
//! are stored as one pack per write. See `docs/git-storage.md`.
//!
//! It does not: resolve Kubernetes secrets (callers pass [`GitAuth`]), render packages,
//! store drafts (the engine's metadata store does; this crate only mirrors them on request),
//! compute the latest-revision label, or speak OCI.

mod annotation;
mod cli;
mod discovery;
mod error;
mod kptfile;
mod maintenance;
mod mirror;
mod objects;
mod packed;
mod publish;
mod redact;
mod refs;
mod repository;
mod schedule;
mod smart;
mod spec;
mod tasks;
mod transport;
mod tree;
mod upstream_fetch;
mod worker;
mod write;

pub use annotation::{
    Annotation, approval_commit_message, draft_commit_message, parse as parse_annotations,
};
pub use error::GitError;
pub use mirror::MirrorPool;
pub use redact::{redact_url, scrub};
pub use repository::GitRepository;
pub use schedule::{Cron, OnChange, SyncLoop, spawn_sync_loop};
pub use spec::{DEFAULT_NETWORK_TIMEOUT, GitAuth, GitOptions, RepoSpec, check_url};
pub use upstream_fetch::{CredentialResolver, GitUpstreamFetcher};
