//! `set-annotations`: add annotations to metadata and pod templates.
//!
//! Mirrors the catalog's kustomize-based implementation: the annotations come
//! from a ConfigMap's data or a `SetAnnotations` (legacy `SetAnnotationConfig`)
//! config, optionally with `additionalAnnotationFields` (deprecated alias
//! `fieldSpecs`) walked before kustomize's default `commonAnnotations` field
//! specs. Local-config resources are included. One result per (file, index,
//! field path) lists the annotations set there, sorted like kyaml sorts results.
//! A typed config that does not decode into the catalog's struct (see
//! [`crate::common::plugin`]) fails the function before anything is changed.

mod results;

use kpt::resource_list::ResourceList;
use kpt::yaml::Node;

use crate::FnError;
use crate::common::fieldspec::{self, Create, FieldSpec};
use crate::common::plugin::{self, Plugin};
use crate::common::{config, legacy, meta};

/// The catalog's kustomize `plugin` struct.
static PLUGIN: Plugin = Plugin {
    string_map: Some("annotations"),
    strings: &[],
    field_specs: &["fieldSpecs", "additionalAnnotationFields"],
};

/// kustomize's default `commonAnnotations` field specs.
fn default_field_specs() -> Vec<FieldSpec> {
    let t = "spec/template/metadata/annotations";
    vec![
        FieldSpec::new("", "", "", "metadata/annotations", true),
        FieldSpec::new("", "v1", "ReplicationController", t, true),
        FieldSpec::new("", "", "Deployment", t, true),
        FieldSpec::new("", "", "ReplicaSet", t, true),
        FieldSpec::new("", "", "DaemonSet", t, true),
        FieldSpec::new("", "", "StatefulSet", t, true),
        FieldSpec::new("batch", "", "Job", t, true),
        FieldSpec::new(
            "batch",
            "",
            "CronJob",
            "spec/jobTemplate/metadata/annotations",
            true,
        ),
        FieldSpec::new(
            "batch",
            "",
            "CronJob",
            "spec/jobTemplate/spec/template/metadata/annotations",
            true,
        ),
    ]
}

/// The parsed configuration.
struct Config {
    annotations: Vec<(String, String)>,
    field_specs: Vec<FieldSpec>,
}

fn parse_config(fc: Option<&Node>) -> Result<Config, String> {
    let fc = fc.cloned().unwrap_or_else(Node::mapping);
    let (annotations, mut field_specs) = if config::is_config_map(&fc) {
        (config::kyaml_data_map(&fc), Vec::new())
    } else if config::is_typed(&fc, "SetAnnotations")
        || config::is_typed(&fc, "SetAnnotationConfig")
    {
        if let Some(e) = plugin::plugin_error(&fc, &PLUGIN) {
            return Err(e);
        }
        let additional = fc
            .get("additionalAnnotationFields")
            .filter(|n| !n.is_null());
        let legacy = fc.get("fieldSpecs").filter(|n| !n.is_null());
        if additional.is_some() && legacy.is_some() {
            return Err(
                "`fieldSpecs` has been deprecated, please rename it to `additionalAnnotationFields`"
                    .to_string(),
            );
        }
        let specs = FieldSpec::list_from(additional.or(legacy)).map_err(|e| e.to_string())?;
        (config::string_map(&fc, "annotations"), specs)
    } else {
        return Err("`functionConfig` must be a `ConfigMap` or `SetAnnotations`".to_string());
    };
    if annotations.is_empty() {
        return Err("input annotation list cannot be empty".to_string());
    }
    field_specs.extend(default_field_specs());
    Ok(Config {
        annotations,
        field_specs,
    })
}

/// Run the function. Releases v0.1.0-v0.1.3 (2021's kyaml framework, before
/// the catalog's results were added in v0.1.4) reported nothing
/// on success and failed with `[error] /// : <message>` (see
/// [`crate::common::legacy`]); kpt's eval hands it a data-less ConfigMap when
/// no config is given.
pub fn run(list: &mut ResourceList) -> Result<(), FnError> {
    let release_0_1 = crate::image_tag::release_patch(0, 1).is_some_and(|p| p <= 3);
    let fc = if release_0_1 {
        Some(legacy::config_or_placeholder(list.function_config.as_ref()))
    } else {
        list.function_config.clone()
    };
    let cfg = match parse_config(fc.as_ref()) {
        Ok(c) => c,
        Err(e) => {
            let message = format!("failed to configure function: {e}");
            if release_0_1 {
                return Err(legacy::fail(list, message));
            }
            return Err(FnError::Framework(message));
        }
    };
    let mut keys: Vec<(String, String)> = cfg.annotations.clone();
    keys.sort();
    keys.dedup_by(|a, b| a.0 == b.0);
    let mut collected = results::Collected::default();
    let mut failure = None;
    'items: for item in &mut list.items {
        let file = meta::file_ref(item);
        for (key, value) in &keys {
            for fs in &cfg.field_specs {
                let r = fieldspec::apply(item, fs, Create::Mapping, &mut |node, path| {
                    if !node.is_mapping() {
                        return Err(FnError::Framework(format!(
                            "failed to run function: failed to run transformer: wrong node kind: \
                             expected MappingNode but got {} at {}",
                            kind_name(node),
                            path.join(".")
                        )));
                    }
                    meta::sdk_set_string(node, key, value);
                    collected.record(file.as_ref(), &path.join("."), key, value);
                    Ok(())
                });
                if let Err(e) = r {
                    failure = Some(e);
                    break 'items;
                }
            }
        }
    }
    match failure {
        Some(e) if release_0_1 => Err(legacy::fail(list, e.to_string())),
        Some(e) => Err(e),
        None => {
            if !release_0_1 {
                list.results.extend(collected.into_results());
            }
            Ok(())
        }
    }
}

fn kind_name(node: &Node) -> &'static str {
    if node.is_sequence() {
        "SequenceNode"
    } else {
        "ScalarNode"
    }
}

#[cfg(test)]
mod tests;
