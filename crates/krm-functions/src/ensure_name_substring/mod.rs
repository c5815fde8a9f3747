//! `ensure-name-substring`: make sure resource names contain a prefix or
//! suffix, then fix references to renamed resources.
//!
//! Mirrors the catalog's kustomize-based implementation: a ConfigMap with
//! exactly one key `prepend` or `append`, or `EnsureNameSubstring`
//! (`substring`, `editMode`, `additionalNameFields` / deprecated `fieldSpecs`).
//! `CustomResourceDefinition`, `APIService`, `Namespace` and the Kptfile are
//! skipped; a name already containing the substring is left alone. Renamed
//! resources' `depends-on` annotations and the name references of other
//! resources (see [`nameref`]) follow. Like the catalog build the conformance
//! data was produced with, items come back without kyaml's path, index and
//! sequence-indent annotations, so kpt writes them to default file names.

mod nameref;

use std::collections::HashSet;
use std::sync::LazyLock;

use kpt::resource_list::ResourceList;
use kpt::yaml::{Node, NodeKind};
use regex::Regex;

use crate::FnError;
use crate::common::fieldspec::{self, Create, FieldSpec};
use crate::common::{config, meta};

const WORD: &str = "[-.0-9A-Za-z_]*";
static NAMESPACED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"\A({WORD})/namespaces/({WORD})/({WORD})/({WORD})\z"
    ))
    .expect("static regex compiles")
});
static CLUSTER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(r"\A({WORD})/({WORD})/({WORD})\z")).expect("static regex compiles")
});

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Prepend,
    Append,
}

struct Config {
    substring: String,
    mode: Mode,
    field_specs: Vec<FieldSpec>,
}

fn parse_config(fc: Option<&Node>) -> Result<Config, String> {
    let fc = fc.cloned().unwrap_or_else(Node::mapping);
    let (av, kind) = (meta::api_version(&fc), meta::kind(&fc));
    let mut cfg = Config {
        substring: String::new(),
        mode: Mode::Prepend,
        field_specs: vec![FieldSpec::new("", "", "", "metadata/name", false)],
    };
    if av == "v1" && kind == "ConfigMap" {
        let data = config::data_map(&fc);
        if data.len() != 1 {
            return Err(format!(
                "only 1 entry is allowed in the ConfigMap, but got: {}",
                data.len()
            ));
        }
        let (k, v) = &data[0];
        cfg.mode = match k.as_str() {
            "prepend" => Mode::Prepend,
            "append" => Mode::Append,
            _ => {
                return Err(format!(
                    "unknown editMode: {k}, only prepend and append are allowed"
                ));
            }
        };
        cfg.substring = v.clone();
    } else if config::is_typed(&fc, "EnsureNameSubstring") {
        cfg.substring = meta::str_at(&fc, &["substring"]).to_string();
        cfg.mode = match meta::str_at(&fc, &["editMode"]) {
            "append" => Mode::Append,
            _ => Mode::Prepend,
        };
        let additional = fc.get("additionalNameFields").filter(|n| !n.is_null());
        let legacy = fc.get("fieldSpecs").filter(|n| !n.is_null());
        if additional.is_some() && legacy.is_some() {
            return Err(
                "`fieldSpecs` has been deprecated, please rename it to `additionalNameFields`"
                    .to_string(),
            );
        }
        cfg.field_specs
            .extend(FieldSpec::list_from(additional.or(legacy)).map_err(|e| e.to_string())?);
    } else {
        let show = |av: &str, k: &str| match av.split_once('/') {
            Some((g, v)) => format!("{g}/{v}, Kind={k}"),
            None => format!("/{av}, Kind={k}"),
        };
        return Err(format!(
            "function config must be either {} or {}, but we got: {}",
            show("v1", "ConfigMap"),
            show(config::FN_CONFIG_API_VERSION, "EnsureNameSubstring"),
            show(av, kind)
        ));
    }
    if cfg.substring.is_empty() {
        return Err("substring must not be empty".to_string());
    }
    Ok(cfg)
}

/// Kinds never renamed (kustomize `IsSelected` on group/kind).
fn should_skip(o: &Node) -> bool {
    let (kind, group) = (meta::kind(o), meta::group(meta::api_version(o)));
    matches!(kind, "CustomResourceDefinition" | "Namespace")
        || (kind == "APIService" && group == "apiregistration.k8s.io")
        || (kind == "Kptfile" && group == "kpt.dev")
}

fn selected(o: &Node, fs: &FieldSpec) -> bool {
    let av = meta::api_version(o);
    (fs.group.is_empty() || fs.group == meta::group(av))
        && (fs.version.is_empty() || fs.version == meta::version(av))
        && (fs.kind.is_empty() || fs.kind == meta::kind(o))
}

impl Config {
    fn edit(&self, s: &str) -> String {
        match self.mode {
            Mode::Prepend => format!("{}{s}", self.substring),
            Mode::Append => format!("{s}{}", self.substring),
        }
    }
}

/// Run the function.
pub fn run(list: &mut ResourceList) -> Result<(), FnError> {
    let cfg = parse_config(list.function_config.as_ref())
        .map_err(|e| FnError::Config(format!("failed to load the `functionConfig`: {e}")))?;
    let lookup: HashSet<(String, String, String)> = list
        .items
        .iter()
        .map(|o| {
            (
                meta::group(meta::api_version(o)).to_string(),
                meta::kind(o).to_string(),
                meta::name(o).to_string(),
            )
        })
        .collect();
    let mut renames = Vec::new();
    for o in &mut list.items {
        if should_skip(o) {
            continue;
        }
        for fs in &cfg.field_specs {
            if !selected(o, fs) {
                continue;
            }
            let is_name = fs.path == "metadata/name";
            if is_name {
                let old = meta::name(o).to_string();
                if old.contains(&cfg.substring) {
                    continue;
                }
                let new = cfg.edit(&old);
                renames.push(nameref::Rename::new(o, &old, &new));
                meta::sdk_set_string(o.ensure_mapping(&["metadata"]), "name", &new);
            } else {
                let path: Vec<&str> = fs.path.split('/').collect();
                let current = o
                    .get_path(&path)
                    .map(|n| meta::str_at(n, &[]))
                    .unwrap_or("");
                if current.contains(&cfg.substring) {
                    continue;
                }
                fieldspec::apply(o, fs, Create::Never, &mut |node, _| {
                    if let NodeKind::Scalar(v) = &node.kind {
                        let new = cfg.edit(v);
                        node.kind = NodeKind::Scalar(new);
                    }
                    Ok(())
                })?;
            }
            update_depends_on(o, &cfg, &lookup);
        }
    }
    nameref::fix_references(&mut list.items, &renames);
    for o in &mut list.items {
        strip_file_annotations(o);
    }
    Ok(())
}

fn update_depends_on(o: &mut Node, cfg: &Config, lookup: &HashSet<(String, String, String)>) {
    let value = meta::annotation(o, meta::DEPENDS_ON).to_string();
    let (g, k, n) = if NAMESPACED.is_match(&value) {
        (0, 3, 4)
    } else if CLUSTER.is_match(&value) {
        (0, 1, 2)
    } else {
        return;
    };
    let mut segments: Vec<String> = value.split('/').map(str::to_string).collect();
    let key = (
        segments[g].clone(),
        segments[k].clone(),
        segments[n].clone(),
    );
    if !lookup.contains(&key) {
        return;
    }
    segments[n] = cfg.edit(&segments[n]);
    meta::set_annotation(o, meta::DEPENDS_ON, &segments.join("/"));
}

/// Drops kyaml's file bookkeeping, as the kustomize resource map did.
fn strip_file_annotations(o: &mut Node) {
    let Some(annotations) = o.get_path_mut(&["metadata", "annotations"]) else {
        return;
    };
    for key in [
        meta::PATH,
        meta::LEGACY_PATH,
        meta::INDEX,
        meta::LEGACY_INDEX,
        "internal.config.kubernetes.io/seqindent",
    ] {
        annotations.remove(key);
    }
    if annotations.entries().is_empty()
        && let Some(md) = o.get_mut("metadata")
    {
        md.remove("annotations");
    }
}

#[cfg(test)]
mod tests;
