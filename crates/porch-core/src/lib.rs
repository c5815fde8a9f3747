//! Domain types and ports of the package orchestrator.
//!
//! This crate holds what the rest of the system agrees on: validated names
//! (repository, package path, workspace, revision name), the package revision
//! lifecycle and its single transition function, the error kinds every layer
//! maps its errors to, and the ports (traits) the engine needs from storage
//! adapters.
//!
//! It does not know about git, HTTP, Kubernetes wire types or databases:
//! adapters implement the ports, binaries wire them together.

pub mod error;
pub mod lifecycle;
pub mod names;
pub mod paths;
pub mod repository;
pub mod revision;
pub mod store;
pub mod upstream;

pub use error::ErrorKind;
