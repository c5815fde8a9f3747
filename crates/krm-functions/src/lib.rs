//! Native implementations of the kpt catalog's KRM functions.
//!
//! Each function runs in-process on a [`kpt::resource_list::ResourceList`] of lossless
//! YAML nodes, matching the catalog's behaviour and result messages, so packages render
//! without a container runtime. [`Builtins`] plugs them into kpt as a
//! [`kpt::runtime::FunctionRuntime`], chosen by image short name: any registry and tag of
//! `set-namespace` is the same function.
//!
//! Functions that need what cannot run here (container-only validators such as kubeval,
//! helm) are not provided; the runtime set reports them with a hint.

mod budget;
pub mod catalog;
mod common;
mod error;
mod image_tag;
mod registry;
mod stderr;

pub mod apply_replacements;
pub mod apply_setters;
pub mod create_setters;
pub mod delete_annotations;
pub mod drop_comments;
pub mod ensure_name_substring;
pub mod no_op;
pub mod remove_local_config_resources;
pub mod search_replace;
pub mod set_annotations;
pub mod set_enforcement_action;
pub mod set_image;
pub mod set_labels;
pub mod set_namespace;
pub mod starlark;
pub mod upsert_resource;

pub use error::FnError;
pub use registry::{Builtins, NativeFn};
