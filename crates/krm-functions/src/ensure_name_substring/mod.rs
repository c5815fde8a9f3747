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

mod lookup;
mod nameref;

use std::collections::HashSet;
use std::sync::LazyLock;

use kpt::resource_list::ResourceList;
use kpt::yaml::{Node, NodeKind, Style};
use regex::Regex;

use crate::FnError;
use crate::common::fieldspec::{self, Create, FieldSpec};
use crate::common::{config, gomsg, meta};

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
    /// An `editMode` other than prepend/append: the catalog's switch edits
    /// nothing then.
    Other,
}

struct Config {
    substring: String,
    mode: Mode,
    field_specs: Vec<FieldSpec>,
}

/// sigs.k8s.io/yaml's wrapping of an `encoding/json` error.
fn json_error(json: &str, go_struct: &str, field: &str, go_type: &str) -> String {
    format!(
        "error unmarshaling JSON: while decoding JSON: {}",
        gomsg::json_type_error(json, go_struct, field, go_type)
    )
}

/// A string field as sigs.k8s.io/yaml decodes it: scalars of any type become
/// their text (null is empty), collections are a type error.
fn string_field(fc: &Node, key: &str, go_type: &str) -> Result<String, String> {
    match fc.get(key) {
        None => Ok(String::new()),
        Some(n) if n.is_null() => Ok(String::new()),
        Some(n) => match n.as_str() {
            Some(s) => Ok(s.to_string()),
            None => Err(json_error(
                gomsg::json_type(n).unwrap_or("object"),
                "EnsureNameSubstring",
                key,
                go_type,
            )),
        },
    }
}

/// The catalog's `UnmarshalYAML` + `Default` + `Validate`, in that order.
fn parse_config(fc: Option<&Node>) -> Result<Config, String> {
    let mut cfg = Config {
        substring: String::new(),
        mode: Mode::Prepend,
        field_specs: vec![FieldSpec::new("", "", "", "metadata/name", false)],
    };
    // No functionConfig decodes nothing; defaulting and validation still run.
    if let Some(fc) = fc.filter(|n| !n.is_null()) {
        let m = gomsg::get_validated_metadata(fc)?;
        if m.api_version == "v1" && m.kind == "ConfigMap" {
            let data = config_map_data(fc)?;
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
        } else if m.api_version == config::FN_CONFIG_API_VERSION && m.kind == "EnsureNameSubstring"
        {
            cfg.substring = string_field(fc, "substring", "string")?;
            cfg.mode = match string_field(fc, "editMode", "main.EditMode")?.as_str() {
                "" | "prepend" => Mode::Prepend,
                "append" => Mode::Append,
                _ => Mode::Other,
            };
            let list = |key: &str| -> Result<Option<&Node>, String> {
                match fc.get(key).filter(|n| !n.is_null()) {
                    Some(n) if !n.is_sequence() => Err(json_error(
                        gomsg::json_type(n).unwrap_or("object"),
                        "EnsureNameSubstring",
                        key,
                        "[]types.FieldSpec",
                    )),
                    other => Ok(other),
                }
            };
            let additional = list("additionalNameFields")?;
            let legacy = list("fieldSpecs")?;
            if cfg.substring.is_empty() {
                return Err("substring must not be empty".to_string());
            }
            if additional.is_some() && legacy.is_some() {
                return Err(
                    "`fieldSpecs` has been deprecated, please rename it to `additionalNameFields`"
                        .to_string(),
                );
            }
            // The deprecated `fieldSpecs` is decoded but, as with the catalog
            // image (its `legacy-config` test), edits nothing.
            FieldSpec::list_from(legacy).map_err(|e| e.to_string())?;
            cfg.field_specs
                .extend(FieldSpec::list_from(additional).map_err(|e| e.to_string())?);
        } else {
            return Err(format!(
                "function config must be either {} or {}, but we got: {}",
                gomsg::gvk_string("v1", "ConfigMap"),
                gomsg::gvk_string(config::FN_CONFIG_API_VERSION, "EnsureNameSubstring"),
                gomsg::gvk_string(&m.api_version, &m.kind)
            ));
        }
    }
    if cfg.substring.is_empty() {
        return Err("substring must not be empty".to_string());
    }
    Ok(cfg)
}

/// `data` of a ConfigMap as `corev1.ConfigMap` decodes it: scalar values
/// become strings (null is empty), a duplicate key keeps its last value, and
/// collections are a type error.
fn config_map_data(fc: &Node) -> Result<Vec<(String, String)>, String> {
    let Some(data) = fc.get("data").filter(|d| !d.is_null()) else {
        return Ok(Vec::new());
    };
    if !data.is_mapping() {
        return Err(json_error(
            gomsg::json_type(data).unwrap_or("string"),
            "ConfigMap",
            "data",
            "map[string]string",
        ));
    }
    let mut out: Vec<(String, String)> = Vec::new();
    for (k, v) in data.entries() {
        let key = k.as_str().unwrap_or_default().to_string();
        let value = if v.is_null() {
            String::new()
        } else {
            match v.as_str() {
                Some(s) => s.to_string(),
                None => {
                    return Err(json_error(
                        gomsg::json_type(v).unwrap_or("object"),
                        "ConfigMap",
                        "data",
                        "string",
                    ));
                }
            }
        };
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => out.push((key, value)),
        }
    }
    Ok(out)
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
            Mode::Other => s.to_string(),
        }
    }
}

/// Run the function.
pub fn run(list: &mut ResourceList) -> Result<(), FnError> {
    // A kyaml framework function: the error is printed (exit 1), no result.
    let cfg = parse_config(list.function_config.as_ref())
        .map_err(|e| FnError::Stderr(format!("failed to load the `functionConfig`: {e}")))?;
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
        // kustomize's `OrgId`: the resource as it came, before any rename.
        let org_id = lookup::res_id(o);
        for fs in &cfg.field_specs {
            if !selected(o, fs) {
                continue;
            }
            let is_name = fs.path == "metadata/name";
            if is_name {
                // The catalog's switch renames nothing in another mode.
                if cfg.mode == Mode::Other {
                    continue;
                }
                let old = meta::name(o).to_string();
                if old.contains(&cfg.substring) {
                    continue;
                }
                let new = cfg.edit(&old);
                renames.push(nameref::Rename::new(o, &old, &new));
                // The name is edited by the same prefix/suffix filter as any
                // field: its quoting style stays, and a resource without a
                // name (the default spec does not create) gets none.
                let object = lookup::res_id(o);
                if let Some(node) = o.get_path_mut(&["metadata", "name"]) {
                    set_scalar(node, &new).map_err(|e| {
                        FnError::Stderr(format!(
                            "failed to transform name substring: considering field 'metadata/name' of object {object}: {}",
                            lookup::wrong_kind(&["metadata", "name"], "ScalarNode", e)
                        ))
                    })?;
                }
            } else {
                // The catalog looks for the substring in the field's YAML
                // text, so a mapping or list counts when any of it holds it.
                let current = lookup::field_text(o, &fs.path).map_err(|e| {
                    FnError::Stderr(format!(
                        "failed to transform name substring: unable to lookup path {} in {org_id}: {e}",
                        fs.path
                    ))
                })?;
                if current.contains(&cfg.substring) {
                    continue;
                }
                if fs.create {
                    create_missing(o, &split_path(&fs.path));
                }
                let object = lookup::res_id(o);
                fieldspec::apply(o, fs, Create::Never, &mut |node, field_path| {
                    let value = cfg.edit(node.as_str().unwrap_or_default());
                    set_scalar(node, &value).map_err(|e| {
                        let path: Vec<&str> = field_path.iter().map(String::as_str).collect();
                        FnError::Failed(format!(
                            "considering field '{}' of object {object}: {}",
                            fs.path,
                            lookup::wrong_kind(&path, "ScalarNode", e)
                        ))
                    })
                })
                .map_err(|e| FnError::Stderr(format!("failed to transform name substring: {e}")))?;
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

/// kustomize's `SetScalar` through kyaml's `FieldSetter`: the value becomes a
/// fresh string node (so `123` made of a prefix is written quoted, as a
/// `!!str`) that keeps the old node's quoting style and comments; anything but
/// a scalar (or null) is refused, handing the node back for the error.
fn set_scalar<'a>(node: &'a mut Node, value: &str) -> Result<(), &'a Node> {
    if !node.is_scalar() {
        return Err(node);
    }
    let mut fresh = Node::string(value);
    if !matches!(node.style, Style::Plain | Style::Any) {
        fresh.style = node.style;
    }
    fresh.head_comment = std::mem::take(&mut node.head_comment);
    fresh.line_comment = std::mem::take(&mut node.line_comment);
    fresh.foot_comment = std::mem::take(&mut node.foot_comment);
    *node = fresh;
    Ok(())
}

/// kustomize's `fieldspec.Filter` as the prefix/suffix filter runs it
/// (`CreateKind: ScalarNode`) for a spec with `create: true`: a missing field
/// on the path is added, a mapping on the way and an empty string at its end
/// (which then becomes the substring alone); a null on the way becomes a
/// mapping. A list field (`name[]`) is never created, and lists met on the
/// way are walked element by element.
fn create_missing(node: &mut Node, path: &[String]) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    match &mut node.kind {
        NodeKind::Sequence(items) => {
            for item in items.iter_mut() {
                create_missing(item, path);
            }
        }
        NodeKind::Mapping(_) => {
            if let Some(name) = first.strip_suffix("[]") {
                if let Some(field) = node.get_mut(name) {
                    create_missing(field, rest);
                }
                return;
            }
            if first.is_empty() {
                return;
            }
            if node.get(first).is_none() {
                let created = if rest.is_empty() {
                    Node::string("")
                } else {
                    Node::mapping()
                };
                node.set(first, created);
            }
            if let Some(field) = node.get_mut(first) {
                if field.is_null() && !rest.is_empty() {
                    let mut mapping = Node::mapping();
                    mapping.head_comment = std::mem::take(&mut field.head_comment);
                    mapping.line_comment = std::mem::take(&mut field.line_comment);
                    mapping.foot_comment = std::mem::take(&mut field.foot_comment);
                    *field = mapping;
                }
                create_missing(field, rest);
            }
        }
        NodeKind::Scalar(_) | NodeKind::Alias(_) => {}
    }
}

/// kustomize's `splitPath`: `/` separates fields unless escaped as `\/`.
fn split_path(path: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for part in path.split('/') {
        match out.last_mut() {
            Some(last) if last.ends_with('\\') => {
                last.pop();
                last.push('/');
                last.push_str(part);
            }
            _ => out.push(part.to_string()),
        }
    }
    out
}

fn update_depends_on(o: &mut Node, cfg: &Config, lookup: &HashSet<(String, String, String)>) {
    // The catalog's `setDependsOnNameSubstring` leaves it in another mode.
    if cfg.mode == Mode::Other {
        return;
    }
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
    if annotations.entries().is_empty() {
        if let Some(md) = o.get_mut("metadata") {
            md.remove("annotations");
        }
        return;
    }
    rewrite_annotations(annotations);
}

/// kyaml's `SetAnnotations`, which the catalog calls on every resource that
/// has annotations (`RemoveBuildAnnotations`): the map is written anew, keys
/// sorted (kpt's order sync puts them back in a written file) and every
/// value a fresh string node (`"x"` comes back plain, `1` as the string
/// `"1"`); a key met twice keeps its last value. Comments stay for kpt to
/// heal.
fn rewrite_annotations(annotations: &mut Node) {
    let mut pairs: Vec<(Node, Node)> = Vec::new();
    for (k, v) in annotations.entries() {
        let key = k.as_str().unwrap_or_default().to_string();
        let value = if v.is_null() {
            String::new()
        } else {
            v.as_str().unwrap_or_default().to_string()
        };
        // kyaml's `FieldSetter` makes a bare key node: written plain.
        let mut key_node = Node::plain(key);
        key_node.head_comment.clone_from(&k.head_comment);
        key_node.line_comment.clone_from(&k.line_comment);
        key_node.foot_comment.clone_from(&k.foot_comment);
        let mut value_node = Node::string(value);
        value_node.line_comment.clone_from(&v.line_comment);
        value_node.foot_comment.clone_from(&v.foot_comment);
        match pairs
            .iter_mut()
            .find(|(seen, _)| seen.as_str() == key_node.as_str())
        {
            Some(slot) => *slot = (key_node, value_node),
            None => pairs.push((key_node, value_node)),
        }
    }
    pairs.sort_by(|a, b| a.0.as_str().cmp(&b.0.as_str()));
    annotations.kind = NodeKind::Mapping(pairs);
}

#[cfg(test)]
mod tests;
