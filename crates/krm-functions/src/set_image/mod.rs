//! `set-image`: change container images by image name.
//!
//! Mirrors the catalog's `images_transformer.go`: a ConfigMap (`name`,
//! `newName`, `newTag`, `digest`; any other key is an error) or `SetImage`
//! (`image: {...}`, `additionalImageFields`). Containers of `Pod`s and of the
//! pod templates of `Deployment`, `StatefulSet`, `ReplicaSet`, `DaemonSet` and
//! `PodTemplate` are updated (the catalog reads init containers from a
//! misspelled `iniContainers` field, so real init containers are untouched),
//! then the additional fields through kustomize's image-tag filter. One
//! summary result counts the updated images.

mod image;

use kpt::resource_list::{ResourceList, ResultItem};
use kpt::yaml::Node;

use crate::FnError;
use crate::common::fieldspec::{self, Create, FieldSpec};
use crate::common::{config, meta};

pub use image::Image;

/// Parses the functionConfig into the image and the additional field specs.
/// `data` (a ConfigMap's, or a `SetImage`'s `data:` field) overrides the
/// typed `image`, key by key, as the catalog's `configDefaultData` does.
fn parse_config(fc: Option<&Node>) -> Result<(Image, Vec<FieldSpec>), String> {
    let mut img = Image::default();
    let mut specs = Vec::new();
    if let Some(fc) = fc {
        if let Some(i) = fc.get("image").filter(|n| n.is_mapping()) {
            let s = |k: &str| meta::str_at(i, &[k]).to_string();
            img = Image {
                name: s("name"),
                new_name: s("newName"),
                new_tag: s("newTag"),
                digest: s("digest"),
            };
        }
        for (key, value) in config::data_map(fc) {
            match key.as_str() {
                "name" => img.name = value,
                "newName" => img.new_name = value,
                "newTag" => img.new_tag = value,
                "digest" => img.digest = value,
                _ => return Err(format!("ConfigMap has wrong field name {key}")),
            }
        }
        specs = FieldSpec::list_from(fc.get("additionalImageFields").filter(|n| !n.is_null()))
            .map_err(|e| e.to_string())?;
    }
    if img.name.is_empty() {
        return Err("must specify `name`".to_string());
    }
    if img.new_name.is_empty() && img.new_tag.is_empty() && img.digest.is_empty() {
        return Err("must specify one of `newName`, `newTag`, or `digest`".to_string());
    }
    Ok((img, specs))
}

/// Run the function: the 2022 SDK's config step, then the catalog's `Run`.
/// Configuration errors end the function the SDK's way (`ResultErrAndDie`):
/// the error result, then "function is terminated: ..." as a second one.
pub fn run(list: &mut ResourceList) -> Result<(), FnError> {
    let fc = list
        .function_config
        .clone()
        .filter(|n| !n.entries().is_empty());
    match &fc {
        None => list
            .results
            .push(ResultItem::info("`FunctionConfig` is not given")),
        Some(c)
            if meta::is_gvk(c, "", "v1", "ConfigMap")
                || meta::is_gvk(c, "fn.kpt.dev", "v1alpha1", "SetImage") => {}
        Some(c) => {
            let message = format!(
                "unknown FunctionConfig `{}`, expect SetImage",
                meta::kind(c)
            );
            list.results.push(ResultItem::error(&message).about(c));
            return Err(FnError::terminated(&message, Some(c)));
        }
    }
    let (img, specs) = match parse_config(fc.as_ref()) {
        Ok(parsed) => parsed,
        Err(message) => {
            list.results.push(ResultItem::error(&message));
            return Err(FnError::terminated(&message, None));
        }
    };
    let mut count = 0usize;
    for o in &mut list.items {
        let pod_spec_path: &[&str] = match meta::kind(o) {
            "Pod" => &["spec"],
            "Deployment" | "StatefulSet" | "ReplicaSet" | "DaemonSet" | "PodTemplate" => {
                &["spec", "template", "spec"]
            }
            _ => continue,
        };
        let Some(pod) = o.get_path_mut(pod_spec_path).filter(|n| n.is_mapping()) else {
            continue;
        };
        for key in ["iniContainers", "containers"] {
            let Some(containers) = pod.get_mut(key).and_then(Node::items_mut) else {
                continue;
            };
            for c in containers.iter_mut().filter(|c| c.is_mapping()) {
                let old = meta::str_at(c, &["image"]).to_string();
                if !image::is_matched(&old, &img.name) {
                    continue;
                }
                let new = img.replacement(&old);
                if new != old {
                    meta::sdk_set_string(c, "image", &new);
                    count += 1;
                }
            }
        }
    }
    if !specs.is_empty() {
        for o in &mut list.items {
            for fs in &specs {
                fieldspec::apply(o, fs, Create::Never, &mut |node, _| {
                    if let Some(v) = node.as_str().filter(|_| node.is_scalar())
                        && image::is_matched(v, &img.name)
                    {
                        let new = img.kustomize_replacement(v);
                        node.kind = kpt::yaml::NodeKind::Scalar(new);
                        // The tracker of kustomize's filter counts every match.
                        count += 1;
                    }
                    Ok(())
                })?;
            }
        }
    }
    list.results.push(ResultItem::info(format!(
        "summary: updated a total of {count} image(s)"
    )));
    Ok(())
}

#[cfg(test)]
mod tests;
