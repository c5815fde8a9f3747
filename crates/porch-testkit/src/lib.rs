//! Test support for crates that talk to git remotes.
//!
//! - [`GitServer`]: a real smart-HTTP git server on a loopback port: `git http-backend` run as
//!   CGI per request behind a tiny HTTP/1.1 shim, with optional basic auth, receive-pack
//!   enabled, stop/restart and [`Fault`] injection for failure tests.
//! - [`SshServer`]: OpenSSH `sshd` on a loopback port with generated host and client keys,
//!   serving bare repositories over `ssh://` as the current user.
//! - [`repos`]: build bare repositories from in-memory trees, from the upstream blueprint
//!   bundle, or from the Go Porch test tarballs.
//! - [`registry`]: a real OCI registry (`docker-registry`) and busybox-based KRM function
//!   images pushed to it with `skopeo`, for the container function runtime.
//! - [`python`]: a Python interpreter with the official Kubernetes client, for tests that
//!   drive the server as Python automation does.
//! - [`PostgresServer`]: a throwaway PostgreSQL cluster (private data dir, port and socket dir).
//! - [`RoundRobinProxy`]: one loopback address spreading TCP connections over several
//!   replicas.
//! - [`store_conformance`]: the `MetadataStore` conformance cases every store runs.
//! - [`conformance`]: locate the upstream conformance data (`PORCH_CONFORMANCE_DIR`).
//!
//! It does not mock git: every byte goes through the real `git` binary. It is not a
//! production HTTP server (one request per connection, bodies buffered in memory).

mod error;
mod http;
mod postgres;
mod proxy;
mod server;
mod ssh;

pub mod conformance;
pub mod generate;
pub mod python;
pub mod registry;
pub mod repos;
pub mod store_conformance;

pub use error::TestkitError;
pub use postgres::PostgresServer;
pub use proxy::RoundRobinProxy;
pub use server::{Fault, GitServer};
pub use ssh::SshServer;
