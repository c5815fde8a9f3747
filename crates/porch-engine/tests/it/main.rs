//! Engine integration tests on real parts: porch-git on `file://` bare remotes and the redb
//! metadata store in a temporary directory, native functions for render.

mod clone_git;
mod common;
mod create;
mod discovery;
mod finalizers;
mod fuzz_resources;
mod goldens;
mod heal;
mod in_place;
mod lifecycle;
mod metadata;
mod push_drafts;
mod resources;
mod uniqueness;
mod upstream_data;
