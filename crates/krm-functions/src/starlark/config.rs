//! The starlark functionConfig: `StarlarkRun` (`fn.kpt.dev/v1alpha1`) with
//! `source` (+ `params`), or a ConfigMap whose `data.source` is the script.

use kpt::yaml::Node;

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

/// The SDK's `IsGVK`: empty group/version/kind are wildcards and an object
/// without group passes any group test.
fn is_gvk(n: &Node, group: &str, version: &str, kind: &str) -> bool {
    let av = text(n, &["apiVersion"]);
    let (g, v) = av.split_once('/').unwrap_or(("", av));
    (group.is_empty() || g.is_empty() || g == group)
        && (version.is_empty() || v == version)
        && (kind.is_empty() || text(n, &["kind"]) == kind)
}

/// `schema.FromAPIVersionAndKind(..).String()`.
fn gvk_string(api_version: &str, kind: &str) -> String {
    let (g, v) = api_version.split_once('/').unwrap_or(("", api_version));
    format!("{g}/{v}, Kind={kind}")
}

/// Reads the program from the functionConfig, with the catalog's messages.
pub(crate) fn program(fc: Option<&Node>) -> Result<Program, String> {
    let fc = match fc {
        Some(fc) if !fc.entries().is_empty() => fc,
        _ => return Err("FunctionConfig is missing. Expect `ConfigMap` or `StarlarkRun`".into()),
    };
    let source = if is_gvk(fc, "", "v1", "ConfigMap") {
        text(fc, &["data", "source"]).to_string()
    } else if is_gvk(fc, "fn.kpt.dev", "v1alpha1", "StarlarkRun") {
        if let Some(p) = fc.get("params")
            && !(p.is_mapping() || p.is_null())
        {
            // encoding/json's wording for a non-object `params`.
            let json_type = match p.to_value() {
                serde_json::Value::Array(_) => "array",
                serde_json::Value::Bool(_) => "bool",
                serde_json::Value::Number(_) => "number",
                _ => "string",
            };
            return Err(format!(
                "json: cannot unmarshal {json_type} into Go struct field \
                 StarlarkRun.params of type map[string]interface {{}}"
            ));
        }
        text(fc, &["source"]).to_string()
    } else {
        return Err(format!(
            "`functionConfig` must be either {} or {}, but we got: {}",
            gvk_string("v1", "ConfigMap"),
            gvk_string("fn.kpt.dev/v1alpha1", "StarlarkRun"),
            gvk_string(text(fc, &["apiVersion"]), text(fc, &["kind"]))
        ));
    };
    let mut name = text(fc, &["metadata", "name"]).to_string();
    if name.is_empty() {
        name = DEFAULT_PROGRAM_NAME.to_string();
    }
    if source.is_empty() {
        return Err("`source` must not be empty".into());
    }
    Ok(Program { name, source })
}
