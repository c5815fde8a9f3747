//! The starlark functionConfig: `StarlarkRun` (`fn.kpt.dev/v1alpha1`) with
//! `source` (+ `params`), or a ConfigMap whose `data.source` is the script.

use kpt::yaml::Node;

use crate::common::gomsg;

/// Program name when the config has none; it prefixes syntax errors.
const DEFAULT_PROGRAM_NAME: &str = "starlark-function-run";

/// What to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Program {
    pub name: String,
    pub source: String,
}

fn text<'a>(n: &'a Node, path: &[&str]) -> &'a str {
    n.get_path(path).and_then(Node::as_str).unwrap_or_default()
}

/// The SDK's `IsGVK`: a part compares only when both the wanted and the
/// object's part are set (an apiVersion that does not parse has neither group
/// nor version).
fn is_gvk(n: &Node, group: &str, version: &str, kind: &str) -> bool {
    let av = text(n, &["apiVersion"]);
    let (g, v) = match av.split_once('/') {
        None => ("", av),
        Some((_, v)) if v.contains('/') => ("", ""),
        Some((g, v)) => (g, v),
    };
    let k = text(n, &["kind"]);
    let same = |mine: &str, want: &str| mine.is_empty() || want.is_empty() || mine == want;
    same(k, kind) && same(g, group) && same(v, version)
}

/// The SDK's `As` failure: `encoding/json` could not store a field.
fn as_error(go_type: &str, json: &str, go_struct: &str, field: &str, field_type: &str) -> String {
    format!(
        "unable to convert object to {go_type} with error: {}",
        gomsg::json_type_error(json, go_struct, field, field_type)
    )
}

/// A string field decoded by `encoding/json` (no YAML-side conversion: a
/// number or bool is a type error); null leaves it empty.
fn json_string(n: &Node, path: &[&str], go_type: &str, go_struct: &str) -> Result<String, String> {
    match n.get_path(path) {
        None => Ok(String::new()),
        Some(v) => match gomsg::json_type(v) {
            None => Ok(String::new()),
            Some("string") => Ok(v.as_str().unwrap_or_default().to_string()),
            Some(t) => Err(as_error(go_type, t, go_struct, &path.join("."), "string")),
        },
    }
}

/// Reads the program from the functionConfig, with the catalog's messages.
pub(crate) fn program(fc: Option<&Node>) -> Result<Program, String> {
    let fc = match fc {
        Some(fc) if !fc.entries().is_empty() => fc,
        _ => return Err("FunctionConfig is missing. Expect `ConfigMap` or `StarlarkRun`".into()),
    };
    let (source, name) = if is_gvk(fc, "", "v1", "ConfigMap") {
        const CM: &str = "*v1.ConfigMap";
        if let Some(d) = fc.get("data")
            && let Some(t) = gomsg::json_type(d).filter(|t| *t != "object")
        {
            return Err(as_error(CM, t, "ConfigMap", "data", "map[string]string"));
        }
        // kyaml's MarshalJSON sorts keys, so the first bad value in key order fails.
        let mut values: Vec<&(Node, Node)> = fc
            .get("data")
            .map(Node::entries)
            .unwrap_or_default()
            .iter()
            .collect();
        values.sort_by(|a, b| a.0.as_str().cmp(&b.0.as_str()));
        for (_, v) in values {
            if let Some(t) = gomsg::json_type(v).filter(|t| *t != "string") {
                return Err(as_error(CM, t, "ConfigMap", "data", "string"));
            }
        }
        let name = json_string(fc, &["metadata", "name"], CM, "ConfigMap")?;
        (json_string(fc, &["data", "source"], CM, "ConfigMap")?, name)
    } else if is_gvk(fc, "fn.kpt.dev", "v1alpha1", "StarlarkRun") {
        const SR: &str = "*starlark.StarlarkRun";
        // Fields fail in key order: metadata, params, source.
        let name = json_string(fc, &["metadata", "name"], SR, "StarlarkRun")?;
        if let Some(p) = fc.get("params")
            && let Some(t) = gomsg::json_type(p).filter(|t| *t != "object")
        {
            return Err(as_error(
                SR,
                t,
                "StarlarkRun",
                "params",
                "map[string]interface {}",
            ));
        }
        (json_string(fc, &["source"], SR, "StarlarkRun")?, name)
    } else {
        return Err(format!(
            "`functionConfig` must be either {} or {}, but we got: {}",
            gomsg::gvk_string("v1", "ConfigMap"),
            gomsg::gvk_string("fn.kpt.dev/v1alpha1", "StarlarkRun"),
            gomsg::gvk_string(text(fc, &["apiVersion"]), text(fc, &["kind"]))
        ));
    };
    let mut name = name;
    if name.is_empty() {
        name = DEFAULT_PROGRAM_NAME.to_string();
    }
    if source.is_empty() {
        return Err("`source` must not be empty".into());
    }
    Ok(Program { name, source })
}
