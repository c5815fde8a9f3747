//! The `load()`able libraries of the Go function (qri-io/starlib + `krmfn`):
//! `encoding/json.star`, `encoding/yaml.star`, `encoding/base64.star` and
//! `krmfn.star` here, the rest of starlib in `starlib`. Any other module
//! fails the load with a message naming what is supported.

use ::starlark::environment::{FrozenModule, GlobalsBuilder};
use ::starlark::eval::FileLoader;
use ::starlark::starlark_module;
use ::starlark::values::{Heap, Value};
use base64::Engine;
use kpt::yaml::{self, Node, SeqIndent};

/// Modules this runtime can load.
const SUPPORTED: [&str; 4] = [
    "encoding/json.star",
    "encoding/yaml.star",
    "encoding/base64.star",
    "krmfn.star",
];

/// An error raised by a library function.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct ModuleError(String);

/// Converts any displayable error into a starlark error.
fn fail(e: impl std::fmt::Display) -> ::starlark::Error {
    ::starlark::Error::new_native(ModuleError(e.to_string()))
}

/// Resolves `load()` paths to the built-in modules.
pub(crate) struct Loader;

impl FileLoader for Loader {
    fn load(&self, path: &str) -> ::starlark::Result<FrozenModule> {
        let globals = match path {
            "encoding/json.star" => GlobalsBuilder::new().with_namespace("json", json_members),
            "encoding/yaml.star" => GlobalsBuilder::new().with_namespace("yaml", yaml_members),
            "encoding/base64.star" => {
                GlobalsBuilder::new().with_namespace("base64", base64_members)
            }
            "krmfn.star" => GlobalsBuilder::new().with_namespace("krmfn", krmfn_members),
            other => match super::starlib::module(other) {
                Some(globals) => globals,
                None => {
                    return Err(::starlark::Error::new_native(ModuleError(format!(
                        "module {path:?} is not supported by the native starlark runtime \
                     (supported: {}, math.star, {})",
                        SUPPORTED.join(", "),
                        super::starlib::EMPTY.map(|(p, _)| p).join(", ")
                    ))));
                }
            },
        }
        .build();
        FrozenModule::from_globals(&globals)
            .map_err(|e| ::starlark::Error::new_native(ModuleError(format!("{e:?}"))))
    }
}

/// starlib `encoding/json`: `encode`, `decode`, `indent`.
#[starlark_module]
fn json_members(builder: &mut GlobalsBuilder) {
    fn encode<'v>(#[starlark(require = pos)] x: Value<'v>) -> ::starlark::Result<String> {
        // go.starlark.net's json.encode writes dict keys in sorted order.
        let v = super::merge::sort_keys(x.to_json_value().map_err(fail)?);
        serde_json::to_string(&v).map_err(fail)
    }

    fn decode<'v>(
        #[starlark(require = pos)] x: &str,
        heap: Heap<'v>,
    ) -> ::starlark::Result<Value<'v>> {
        let value = serde_json::from_str::<serde_json::Value>(x).map_err(fail)?;
        super::merge::check_numbers(&value).map_err(fail)?;
        Ok(heap.alloc(value))
    }

    fn indent(
        #[starlark(require = pos)] x: &str,
        #[starlark(require = named, default = "")] prefix: &str,
        #[starlark(require = named, default = "\t")] indent: &str,
    ) -> ::starlark::Result<String> {
        let v: serde_json::Value = serde_json::from_str(x).map_err(fail)?;
        Ok(indent_json(&v, prefix, indent, 0))
    }
}

/// Go `json.Indent` layout of a value.
fn indent_json(v: &serde_json::Value, prefix: &str, unit: &str, depth: usize) -> String {
    let pad = |d: usize| format!("\n{prefix}{}", unit.repeat(d));
    match v {
        serde_json::Value::Array(a) if !a.is_empty() => {
            let inner: Vec<String> = a
                .iter()
                .map(|x| {
                    format!(
                        "{}{}",
                        pad(depth + 1),
                        indent_json(x, prefix, unit, depth + 1)
                    )
                })
                .collect();
            format!("[{}{}]", inner.join(","), pad(depth))
        }
        serde_json::Value::Object(o) if !o.is_empty() => {
            let inner: Vec<String> = o
                .iter()
                .map(|(k, x)| {
                    format!(
                        "{}{}: {}",
                        pad(depth + 1),
                        serde_json::Value::String(k.clone()),
                        indent_json(x, prefix, unit, depth + 1)
                    )
                })
                .collect();
            format!("{{{}{}}}", inner.join(","), pad(depth))
        }
        other => other.to_string(),
    }
}

/// starlib `encoding/yaml`: `dumps`, `loads`.
#[starlark_module]
fn yaml_members(builder: &mut GlobalsBuilder) {
    fn dumps<'v>(#[starlark(require = pos)] x: Value<'v>) -> ::starlark::Result<String> {
        let v = super::merge::sort_keys(x.to_json_value().map_err(fail)?);
        Ok(yaml::emit_node(
            &super::merge::to_node(&v),
            SeqIndent::Compact,
        ))
    }

    fn loads<'v>(
        #[starlark(require = pos)] x: &str,
        heap: Heap<'v>,
    ) -> ::starlark::Result<Value<'v>> {
        let node: Node = yaml::parse_one(x).map_err(|e| fail(e.message))?;
        let value = node.try_to_value().map_err(|e| fail(e.to_string()))?;
        super::merge::check_numbers(&value).map_err(fail)?;
        Ok(heap.alloc(value))
    }
}

/// starlib `encoding/base64`: `encode`, `decode` with the encodings
/// `standard`, `standard_raw`, `url` and `url_raw`.
#[starlark_module]
fn base64_members(builder: &mut GlobalsBuilder) {
    fn encode(
        #[starlark(require = pos)] data: &str,
        #[starlark(default = "standard")] encoding: &str,
    ) -> ::starlark::Result<String> {
        Ok(base64_engine(encoding)?.encode(data))
    }

    fn decode(
        #[starlark(require = pos)] data: &str,
        #[starlark(default = "standard")] encoding: &str,
    ) -> ::starlark::Result<String> {
        let bytes = base64_engine(encoding)?.decode(data).map_err(fail)?;
        String::from_utf8(bytes).map_err(fail)
    }
}

fn base64_engine(encoding: &str) -> ::starlark::Result<base64::engine::GeneralPurpose> {
    use base64::engine::general_purpose as gp;
    match encoding {
        "standard" => Ok(gp::STANDARD),
        "standard_raw" => Ok(gp::STANDARD_NO_PAD),
        "url" => Ok(gp::URL_SAFE),
        "url_raw" => Ok(gp::URL_SAFE_NO_PAD),
        other => Err(fail(format!("unsupported encoding format: {other}"))),
    }
}

/// The Go function's `krmfn` helpers.
#[starlark_module]
fn krmfn_members(builder: &mut GlobalsBuilder) {
    fn match_gvk<'v>(
        #[starlark(require = pos)] resource: Value<'v>,
        #[starlark(require = pos)] api_version: &str,
        #[starlark(require = pos)] kind: &str,
    ) -> ::starlark::Result<bool> {
        let r = resource.to_json_value().map_err(fail)?;
        Ok(
            r.get("apiVersion").and_then(|v| v.as_str()) == Some(api_version)
                && r.get("kind").and_then(|v| v.as_str()) == Some(kind),
        )
    }

    fn match_name<'v>(
        #[starlark(require = pos)] resource: Value<'v>,
        #[starlark(require = pos)] name: &str,
    ) -> ::starlark::Result<bool> {
        Ok(metadata(&resource.to_json_value().map_err(fail)?, "name") == name)
    }

    fn match_namespace<'v>(
        #[starlark(require = pos)] resource: Value<'v>,
        #[starlark(require = pos)] namespace: &str,
    ) -> ::starlark::Result<bool> {
        Ok(metadata(&resource.to_json_value().map_err(fail)?, "namespace") == namespace)
    }
}

fn metadata(r: &serde_json::Value, key: &str) -> String {
    r.get("metadata")
        .and_then(|m| m.get(key))
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_string()
}
