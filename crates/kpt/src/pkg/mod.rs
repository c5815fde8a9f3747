//! Package relationships: `kpt pkg init`, `get` (clone from git) and `update` (3-way
//! merge of original upstream, updated upstream and local).
//!
//! The merge ([`merge3`], [`update`]) is pure: it works on in-memory
//! [`PackageFiles`](crate::package::PackageFiles) so a server can upgrade drafts
//! without touching disk. [`git`] is the only part that talks to repositories and
//! [`get`]/[`update::driver`] the only parts that touch the local file system.

pub mod console;
pub mod context;
pub mod get;
pub mod git;
pub mod ids;
pub mod init;
pub mod merge3;
pub mod redact;
pub mod update;
pub mod url;

pub use update::Strategy;
