//! The PostgreSQL metadata store: `porch_core::store::MetadataStore` on one PostgreSQL
//! database, so that several porch-server replicas share their objects, drafts (with their
//! files), resourceVersions and the watch event log.
//!
//! What it does:
//! * applies its versioned schema migrations at start-up under an advisory lock, so replicas
//!   starting at once migrate once (`schema`);
//! * gives every write the next value of one global counter row, locked for the length of the
//!   write transaction: resourceVersions are strictly increasing across replicas and commit in
//!   resourceVersion order, so the event log never shows a later version before an earlier one;
//! * checks preconditions inside that transaction (compare-and-swap: a stale resourceVersion is
//!   a `Conflict` whichever replica wrote the newer one);
//! * keeps the event log with the redb store's retention and 410 (`Gone`) semantics;
//! * delivers every committed event, whichever replica wrote it, to the registered listener
//!   once, in resourceVersion order (LISTEN/NOTIFY wakes a follower that reads the log; a slow
//!   poll covers lost notifications) (`follow`);
//! * offers the cluster primitives replicas need: per-key leases on session advisory locks that
//!   a crashed replica's closed connection releases, and leader election (`lease`), and the
//!   current resourceVersion for read barriers, one coalesced query per round (`rv_probe`).
//!
//! * talks TLS to PostgreSQL (rustls) with libpq's `sslmode` (`disable`, `prefer`, `require`,
//!   `verify-ca`, `verify-full`) and `sslrootcert` (`tls`).
//!
//! What it does not do: parse objects, present a client certificate, or retry writes whose commit outcome is unknown (they fail as
//! `Unavailable`; the client retries with its resourceVersion, so a retry is never applied twice
//! unconditionally).
//!
//! The port is synchronous: each call runs its query on the store's own small tokio runtime and
//! waits for the answer, so callers must use a blocking thread (`spawn_blocking`), as they do
//! for redb.

mod bridge;
mod error;
mod follow;
pub mod lease;
mod ops;
mod pg_store;
mod rv_probe;
mod schema;
pub mod tls;

pub use error::PgError;
pub use lease::{LeaderElection, Lease};
pub use pg_store::{LocalWrites, PgStore, PgStoreOptions};
pub use rv_probe::RvProbe;
pub use tls::PgConnect;
