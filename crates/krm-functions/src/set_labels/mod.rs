//! `set-labels`: add or update labels in metadata and in the selectors and
//! templates that must agree with them.
//!
//! Mirrors the catalog's `setlabels/transformer.go` (v0.2): local-config
//! resources are skipped; labels are applied in sorted key order; each label
//! location either creates missing labels or only updates existing ones. The
//! single result counts every (location, label) pair visited, whether or not
//! it changed anything, exactly as the catalog's counter does.

mod paths;

use kpt::resource_list::{ResourceList, ResultItem};
use kpt::yaml::Node;

use crate::FnError;
use crate::common::{config, meta};

/// Run the function.
pub fn run(list: &mut ResourceList) -> Result<(), FnError> {
    let fc = list.function_config.as_ref();
    if config::is_empty(fc) {
        list.results
            .push(ResultItem::info("`FunctionConfig` is not given"));
        return Err(FnError::Reported);
    }
    let objects: Vec<usize> = (0..list.items.len())
        .filter(|&i| !meta::is_local_config(&list.items[i]))
        .collect();
    if objects.is_empty() {
        list.results.push(ResultItem::info("no input resources"));
        return Ok(());
    }
    let labels = labels_from(fc);
    if labels.is_empty() {
        list.results.push(ResultItem::warning(
            "no `labels` arguments are given in FunctionConfig",
        ));
        return Ok(());
    }
    let mut setter = paths::Setter::new(labels);
    for i in objects {
        setter.apply(&mut list.items[i]);
    }
    list.results.push(ResultItem::info(format!(
        "set {} labels in total",
        setter.count
    )));
    Ok(())
}

/// Labels from a ConfigMap's data or a `SetLabels` config's `labels`, sorted.
fn labels_from(fc: Option<&Node>) -> Vec<(String, String)> {
    let Some(fc) = fc else {
        return Vec::new();
    };
    let mut labels = if meta::kind(fc) == "ConfigMap" {
        config::data_map(fc)
    } else {
        config::string_map(fc, "labels")
    };
    labels.sort();
    labels.dedup_by(|a, b| a.0 == b.0);
    labels
}

#[cfg(test)]
mod tests;
