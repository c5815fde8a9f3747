//! What a pipeline step is given besides its items: the image it names, its function
//! config (`configMap`, `configPath`, `configRef`) and kpt's KRM check on its input.

use super::call::pkg_of;
use super::{Ctx, RenderError, pkg_label};
use crate::kptfile::{ConfigRef, Function, Kptfile, KptfileError};
use crate::package::resources as res;
use crate::yaml::{Node, Style};

/// Default registry prefix for short image names.
pub const IMAGE_PREFIX: &str = "ghcr.io/kptdev/krm-functions-catalog";

/// Resolve an image as kpt does: prefix short names, default the tag to `latest`.
pub fn resolve_image(image: &str) -> String {
    let image = image.trim();
    // kpt's reserved built-in images (`builtins/gen-pkg-context`) are not registry images.
    if image.starts_with("builtins/") {
        return image.to_string();
    }
    let full = prefix_image(image);
    let last = full.rsplit('/').next().unwrap_or(&full);
    if last.contains(':') || last.contains('@') {
        full
    } else {
        format!("{full}:latest")
    }
}

/// kpt's `ResolveToImage`: a name without a `/` gets the catalog prefix, nothing else
/// changes (the tag is settled afterwards).
pub(super) fn prefix_image(image: &str) -> String {
    let image = image.trim();
    if image.contains('/') {
        image.to_string()
    } else {
        format!("{IMAGE_PREFIX}/{image}")
    }
}

/// The `function-input` ConfigMap built from a `configMap:` (every value a string).
pub fn config_map(data: &std::collections::BTreeMap<String, String>) -> Node {
    let mut cm = Node::mapping();
    cm.set("apiVersion", Node::string("v1"));
    cm.set("kind", Node::string("ConfigMap"));
    cm.ensure_mapping(&["metadata"])
        .set("name", Node::string("function-input"));
    let d = cm.ensure_mapping(&["data"]);
    // kpt fills the `data: {}` of its ConfigMap template, so a function reads the
    // data as a flow mapping (`data: {tier: web}`).
    d.style = Style::Flow;
    for (k, v) in data {
        d.set(k, Node::string(v.clone()));
    }
    cm
}

/// Check an item is KRM (kustomizations excepted); the error is kpt's.
pub fn check_krm(item: &Node) -> Result<(), String> {
    match krm_problem(item) {
        Some(problem) => Err(format!(
            "input resource list must contain only KRM resources: {problem}"
        )),
        None => Ok(()),
    }
}

/// Why an item is not KRM, as kpt's `AreKRM` words it (`<path>: resource must have
/// ...`), or `None` when it is (kustomizations are exempt).
pub(super) fn krm_problem(item: &Node) -> Option<String> {
    let path = res::item_path(item).unwrap_or_default();
    let s = |p: &[&str]| item.get_path(p).and_then(Node::as_str).unwrap_or_default();
    let base = path.rsplit('/').next().unwrap_or_default();
    let api_version = s(&["apiVersion"]);
    let kustomization = matches!(
        base,
        "kustomization.yaml" | "kustomization.yml" | "Kustomization"
    ) || api_version.starts_with("kustomize.config.k8s.io")
        || (api_version.is_empty() && s(&["kind"]) == "Kustomization");
    if kustomization {
        return None;
    }
    [
        ("apiVersion", &["apiVersion"][..]),
        ("kind", &["kind"][..]),
        ("metadata.name", &["metadata", "name"][..]),
    ]
    .into_iter()
    .find(|(_, p)| s(p).is_empty())
    .map(|(field, _)| format!("{path}: resource must have `{field}`"))
}

/// Whether item `n` is the resource `r` names (apiVersion and namespace only when given).
pub(super) fn refers_to(r: &ConfigRef, n: &Node) -> bool {
    let s = |p: &[&str]| n.get_path(p).and_then(Node::as_str).unwrap_or_default();
    s(&["kind"]) == r.kind
        && s(&["metadata", "name"]) == r.name
        && (r.api_version.is_empty() || s(&["apiVersion"]) == r.api_version)
        && (r.namespace.is_empty() || s(&["metadata", "namespace"]) == r.namespace)
}

/// The function config a step's `configRef` names among the items of package `pkg` (not
/// its subpackages'): exactly one resource must match.
pub(super) fn find_config_ref(
    pkg: &str,
    list: &str,
    i: usize,
    r: &ConfigRef,
    items: &[Node],
) -> Result<Node, RenderError> {
    let found: Vec<&Node> = items
        .iter()
        .filter(|n| pkg_of(n) == pkg_key(pkg) && refers_to(r, n))
        .collect();
    match found.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(RenderError::Package {
            pkg: pkg_label(pkg),
            message: KptfileError::Invalid {
                field: format!("pipeline.{list}[{i}].configRef"),
                value: r.describe(),
                reason: "functionConfig must exist in the current package".into(),
            }
            .to_string(),
        }),
        many => Err(RenderError::Config(format!(
            "configRef {} matches {} resources of the package; add apiVersion or namespace to name one",
            r.describe(),
            many.len()
        ))),
    }
}

pub(super) fn pkg_key(pkg: &str) -> &str {
    if pkg.is_empty() { "." } else { pkg }
}

impl Ctx<'_> {
    /// The config-file checks kpt makes when it loads a package (one KRM resource per
    /// `configPath` file); a file that is missing is reported when the pipeline runs.
    pub(super) fn check_configs(
        &self,
        pkg: &str,
        kf: &Kptfile,
        items: &[Node],
    ) -> Result<(), RenderError> {
        let Some(pipeline) = &kf.pipeline else {
            return Ok(());
        };
        for (list, fns) in [
            ("mutators", &pipeline.mutators),
            ("validators", &pipeline.validators),
        ] {
            for (i, f) in fns.iter().enumerate() {
                if let Some(r) = &f.config_ref
                    && let Err(e @ RenderError::Config(_)) = find_config_ref(pkg, list, i, r, items)
                {
                    return Err(e);
                }
                if f.config_path.is_empty() {
                    continue;
                }
                if let Err(e @ RenderError::Config(_)) = self.find_config(pkg, list, i, f, items) {
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    pub(super) fn find_config(
        &self,
        pkg: &str,
        list: &str,
        i: usize,
        f: &Function,
        items: &[Node],
    ) -> Result<Node, RenderError> {
        let want = res::clean_path(&f.config_path).unwrap_or_default();
        let found: Vec<&Node> = items
            .iter()
            // Path first: it rules out almost every item.
            .filter(|n| res::item_path(n) == Some(want.as_str()) && pkg_of(n) == pkg_key(pkg))
            .collect();
        match found.as_slice() {
            [one] => {
                check_krm(one).map_err(|m| {
                    RenderError::Config(m.rsplit(": ").next().unwrap_or_default().to_string())
                })?;
                Ok((*one).clone())
            }
            [] => {
                let fn_name = match &f.name {
                    n if !n.is_empty() => n.clone(),
                    _ => crate::runtime::image_short_name(&f.image).to_string(),
                };
                let kind = if list == "mutators" {
                    "mutator"
                } else {
                    "validator"
                };
                let invalid = KptfileError::Invalid {
                    field: format!("pipeline.{list}[{i}].configPath"),
                    value: f.config_path.clone(),
                    reason: format!(
                        "functionConfig resource for {kind} {fn_name:?} is missing from path {:?}, this also occurs if {:?} is part of a subpackage",
                        f.config_path, f.config_path
                    ),
                };
                Err(RenderError::Package {
                    pkg: pkg_label(pkg),
                    message: invalid.to_string(),
                })
            }
            many => Err(RenderError::Config(format!(
                "functionConfig {:?} must not contain more than one config, got {}",
                f.config_path,
                many.len()
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_map_data_is_a_flow_mapping_of_strings() {
        let mut data = std::collections::BTreeMap::new();
        data.insert("replicas".to_string(), "4".to_string());
        data.insert("zone".to_string(), "north".to_string());
        let text = crate::yaml::emit_node(&config_map(&data), crate::yaml::SeqIndent::Compact);
        assert!(
            text.ends_with("data: {replicas: \"4\", zone: north}\n"),
            "{text}"
        );
    }

    #[test]
    fn krm_problems_name_the_path_and_the_missing_field() {
        let item = crate::yaml::parse_one(
            "apiVersion: v1\nkind: Thing\nmetadata:\n  annotations:\n    internal.config.kubernetes.io/path: 'a/t.yaml'\n",
        )
        .expect("yaml");
        assert_eq!(
            krm_problem(&item).as_deref(),
            Some("a/t.yaml: resource must have `metadata.name`")
        );
        let err = check_krm(&item).expect_err("not KRM");
        assert!(err.starts_with("input resource list must contain only KRM resources: "));
    }

    #[test]
    fn prefixing_leaves_the_tag_alone() {
        assert_eq!(
            prefix_image("tidy"),
            "ghcr.io/kptdev/krm-functions-catalog/tidy"
        );
        assert_eq!(prefix_image("example.org/tidy:v3"), "example.org/tidy:v3");
    }

    #[test]
    fn resolves_images_like_kpt() {
        assert_eq!(
            resolve_image("set-labels"),
            "ghcr.io/kptdev/krm-functions-catalog/set-labels:latest"
        );
        assert_eq!(
            resolve_image("set-labels:v0.1"),
            "ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.1"
        );
        assert_eq!(
            resolve_image("gcr.io/kpt-fn/set-labels:v0.1"),
            "gcr.io/kpt-fn/set-labels:v0.1"
        );
        assert_eq!(
            resolve_image("ghcr.io/kptdev/krm-functions-catalog/dne"),
            "ghcr.io/kptdev/krm-functions-catalog/dne:latest"
        );
    }
}
