//! `set-labels`: add or update labels in metadata and in the selectors and
//! templates that must agree with them.
//!
//! Mirrors the catalog's `setlabels/transformer.go` on the current SDK: the
//! SDK's config step first (see `common::sdk`: a config of another kind or
//! one that does not decode is an error result and exit 1), then local-config
//! resources are skipped; labels are applied in sorted key order; each label
//! location either creates missing labels or only updates existing ones. The
//! single result counts every (location, label) pair visited, whether or not
//! it changed anything, exactly as the catalog's counter does. A location the
//! SDK cannot read (a non-mapping such as `labels:` left null on the way, or
//! a label that is not a string) ends that object with the SDK's
//! unmatched-field error result, and the function exits 1. Images tagged
//! v0.1.x run the kustomize-based release instead (see [`legacy`]).

mod legacy;
mod paths;

use kpt::resource_list::{ResourceList, ResultItem};
use kpt::yaml::Node;

use crate::FnError;
use crate::common::gojson::{self, GoStruct, GoType};
use crate::common::meta;
use crate::common::sdk::{self, RunnerConfig};

/// The Go `SetLabels` struct the typed config decodes into.
static SET_LABELS: GoStruct = GoStruct {
    qualified: "setlabels.SetLabels",
    name: "SetLabels",
    fields: &[("labels", GoType::Map(&GoType::String))],
};

/// Run the function: the SDK's config step, then the catalog's `Run`.
pub fn run(list: &mut ResourceList) -> Result<(), FnError> {
    // Pipelines pinned to the kustomize-based release get that.
    if legacy::applies() {
        return legacy::run(list);
    }
    let fc = list.function_config.as_ref();
    let mut info = Vec::new();
    let configured = sdk::runner_config(fc, &SET_LABELS, "*setlabels.SetLabels", &mut info);
    list.results.extend(info.into_iter().map(ResultItem::info));
    let labels = match configured {
        Err(message) => {
            list.results.push(ResultItem::error(message));
            return Err(FnError::Reported);
        }
        Ok(RunnerConfig::NotGiven) | Ok(RunnerConfig::Data(None)) => Vec::new(),
        Ok(RunnerConfig::Data(Some(data))) => data,
        Ok(RunnerConfig::Typed(fc)) => typed_labels(fc),
    };
    let objects: Vec<usize> = (0..list.items.len())
        .filter(|&i| !meta::is_local_config(&list.items[i]))
        .collect();
    if objects.is_empty() {
        list.results.push(ResultItem::info("no input resources"));
        return Ok(());
    }
    // The catalog's own placeholder test, looser than the SDK's: no kind and
    // no name, or the `function-input` ConfigMap without data, fails the run
    // without a further result.
    if fc.is_none_or(is_placeholder_config) {
        return Err(FnError::Reported);
    }
    let mut labels = labels;
    labels.sort();
    labels.dedup_by(|a, b| a.0 == b.0);
    if labels.is_empty() {
        list.results.push(ResultItem::warning(
            "no `labels` arguments are given in FunctionConfig",
        ));
        return Ok(());
    }
    let mut setter = paths::Setter::new(labels);
    let mut failed = false;
    for i in objects {
        if let Err(message) = setter.apply(&mut list.items[i]) {
            list.results.push(ResultItem::error(message));
            failed = true;
        }
    }
    list.results.push(ResultItem::info(format!(
        "set {} labels in total",
        setter.count
    )));
    // `results.ExitCode() != 1`: any error result fails the function.
    if failed {
        return Err(FnError::Reported);
    }
    Ok(())
}

/// set-labels' `EmptyfnConfig`.
fn is_placeholder_config(fc: &Node) -> bool {
    if meta::kind(fc) == "ConfigMap" && meta::name(fc) == "function-input" {
        return crate::common::config::data_map(fc).is_empty();
    }
    meta::kind(fc).is_empty() && meta::name(fc).is_empty()
}

/// `labels` of a typed config that decoded (so every value is a string).
fn typed_labels(fc: &Node) -> Vec<(String, String)> {
    gojson::field(fc, "labels")
        .map(|m| {
            m.entries()
                .iter()
                .filter_map(|(k, v)| Some((k.as_str()?.to_string(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;
