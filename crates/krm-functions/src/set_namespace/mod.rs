//! `set-namespace`: point every namespace field of the package at one namespace.
//!
//! Mirrors the catalog's `transformer/namespace.go` on the Go SDK (the
//! released image kpt's own render cases were recorded with): local-config
//! resources are ignored; `metadata.namespace` of namespace-scoped resources,
//! `Namespace` names and the namespace fields of a few cluster-scoped kinds
//! are rewritten (all of them, or those whose value or upstream origin is
//! `namespaceMatcher`; several upstream namespaces no longer stop a
//! replace-all), then `depends-on` annotations that point at resources of
//! the list. A config that does not decode into the catalog's types fails as
//! "failed to parse FunctionConfig". Results: one summary line for namespaces and
//! one for `depends-on` annotations. Configuration problems are reported as a
//! single error result about the config, and the function still exits 0: the
//! catalog's `Run` returns success whatever it reported. Images tagged
//! v0.1.x/v0.2.x run the kustomize-based releases instead (see [`legacy`]).

mod config;
mod legacy;
mod walk;

use kpt::resource_list::{FileRef, ResourceList, ResultItem};

use crate::FnError;
use crate::common::meta;

pub use config::Config;

/// Run the function.
pub fn run(list: &mut ResourceList) -> Result<(), FnError> {
    // Pipelines pinned to the kustomize-based releases get those.
    if legacy::applies() {
        return legacy::run(list);
    }
    let config = match Config::from_function_config(list.function_config.as_ref()) {
        Ok(c) => c,
        Err(message) => {
            list.results.push(config_error(message, list));
            return Ok(());
        }
    };
    let results = walk::transform(&mut list.items, &config);
    list.results.extend(results);
    Ok(())
}

/// SDK `ErrorConfigObjectResult`: the error about the config object itself,
/// its file from the (non-legacy) path and index annotations; a missing index
/// is -1, an unparsable one 0.
fn config_error(message: String, list: &ResourceList) -> ResultItem {
    let fc = list
        .function_config
        .clone()
        .unwrap_or_else(kpt::yaml::Node::mapping);
    let index = match meta::annotation(&fc, meta::INDEX) {
        "" => -1,
        i => i.parse().unwrap_or(0),
    };
    let mut r = ResultItem::error(message).about(&fc);
    r.file = Some(FileRef {
        path: meta::annotation(&fc, meta::PATH).to_string(),
        index,
    });
    r
}

#[cfg(test)]
mod tests;
