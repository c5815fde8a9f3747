//! The embedded metadata store: redb files under the data directory implementing
//! `porch_core::store::MetadataStore`.
//!
//! What it does: keeps every API object with a real, monotonic resourceVersion and an event log
//! for watch, all in one ACID redb file. Writes go through one writer thread that groups
//! concurrent requests into a single durable commit (group commit), so an acknowledged write
//! survives a kill -9 and throughput is not bounded by one fsync per write. Reads use redb's MVCC
//! snapshots and never wait for the writer.
//!
//! What it does not do: parse objects (callers stamp the bytes), validate anything, or fan out
//! watch events (the listener registered with `set_listener` does that).

mod codec;
mod error;
mod redb_store;
mod writer;

pub use error::RedbError;
pub use redb_store::{RedbStore, StoreOptions};
