//! A Rust kpt library.
//!
//! It reads kpt packages keeping comments and styles and writes them back as kpt does,
//! models the Kptfile
//! (`kpt.dev/v1`) and the KRM function protocol (`config.kubernetes.io/v1`
//! `ResourceList`), and renders a package through its function pipeline
//! exactly as `kpt fn render` does. Function evaluation goes through the
//! [`runtime::FunctionRuntime`] trait this crate owns; the built-in catalog
//! functions live in the `krm-functions` crate, `exec:` functions in
//! [`runtime::exec`].
//!
//! It knows nothing of Porch: no repositories, lifecycles or API types.
//! Everything works on in-memory packages ([`package::Package`]) so callers
//! can render without touching disk; [`package::fs`] reads and writes
//! directories.

pub mod gofloat;
pub mod goquote;
pub mod goregex;
pub mod gosort;
pub mod gostrconv;
pub mod image_ref;
pub mod kptfile;
pub mod package;
pub mod pkg;
pub mod render;
pub mod resource_list;
pub mod runtime;
pub mod yaml;

/// The Go programs the differential unit tests build (shared with the integration tests).
#[cfg(test)]
#[path = "../tests/support/go_oracle.rs"]
mod go_oracle;
