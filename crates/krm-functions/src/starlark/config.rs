//! The starlark functionConfig: `StarlarkRun` (`fn.kpt.dev/v1alpha1`) with
//! `source` (+ `params`), or a ConfigMap whose `data.source` is the script.

use kpt::yaml::Node;

use crate::common::gojson::{self, GoStruct, GoType};
use crate::common::{gomsg, gotypes};

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

/// The catalog's `StarlarkRun`: kyaml's `ResourceMeta` inline, `source`,
/// `params`.
static STARLARK_RUN: GoStruct = GoStruct {
    qualified: "starlark.StarlarkRun",
    name: "StarlarkRun",
    fields: &[
        ("apiVersion", GoType::String),
        ("kind", GoType::String),
        ("metadata", GoType::Struct(&gotypes::KYAML_OBJECT_META)),
        ("source", GoType::String),
        ("params", GoType::Map(&GoType::Any)),
    ],
};

/// The SDK's `As`: the first field `encoding/json` cannot store, in the
/// order it decodes the sorted keys, fails the conversion.
fn as_struct(fc: &Node, ty: &'static GoStruct, go_type: &str) -> Result<(), String> {
    match gojson::check(fc, ty) {
        None => Ok(()),
        Some(e) => Err(format!(
            "unable to convert object to {go_type} with error: {e}"
        )),
    }
}

/// Reads the program from the functionConfig, with the catalog's messages.
pub(crate) fn program(fc: Option<&Node>) -> Result<Program, String> {
    let fc = match fc {
        Some(fc) if !fc.entries().is_empty() => fc,
        _ => return Err("FunctionConfig is missing. Expect `ConfigMap` or `StarlarkRun`".into()),
    };
    let (source, name) = if is_gvk(fc, "", "v1", "ConfigMap") {
        as_struct(fc, &gotypes::CONFIG_MAP, "*v1.ConfigMap")?;
        (
            text(fc, &["data", "source"]).to_string(),
            text(fc, &["metadata", "name"]).to_string(),
        )
    } else if is_gvk(fc, "fn.kpt.dev", "v1alpha1", "StarlarkRun") {
        as_struct(fc, &STARLARK_RUN, "*starlark.StarlarkRun")?;
        (
            text(fc, &["source"]).to_string(),
            text(fc, &["metadata", "name"]).to_string(),
        )
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
