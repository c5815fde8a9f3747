//! set-namespace's functionConfig: a ConfigMap (`data.namespace`, optional
//! `data.namespaceMatcher`), the package-context ConfigMap `kptfile.kpt.dev`
//! (`data.name`), or `fn.kpt.dev/v1alpha1 SetNamespace`.

use kpt::yaml::Node;

use crate::common::gojson::{self, GoStruct, GoType};
use crate::common::{config, gotypes, meta};

/// The catalog's own `ObjectMeta`.
static SET_NAMESPACE_META: GoStruct = GoStruct {
    qualified: "set_namespace.ObjectMeta",
    name: "ObjectMeta",
    fields: &[
        ("name", GoType::String),
        ("namespace", GoType::String),
        ("labels", GoType::Map(&GoType::String)),
        ("annotations", GoType::Map(&GoType::String)),
    ],
};

/// The catalog's `SetNamespace` struct.
static SET_NAMESPACE: GoStruct = GoStruct {
    qualified: "set_namespace.SetNamespace",
    name: "SetNamespace",
    fields: &[
        ("apiVersion", GoType::String),
        ("kind", GoType::String),
        ("metadata", GoType::Struct(&SET_NAMESPACE_META)),
        ("namespace", GoType::String),
        ("namespaceMatcher", GoType::String),
    ],
};

/// Name of the package-context ConfigMap whose `data.name` is the namespace.
const PACKAGE_CONTEXT_NAME: &str = "kptfile.kpt.dev";

/// The parsed configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// The namespace to set.
    pub namespace: String,
    /// Only fields whose value or origin equals this are changed (when set).
    pub matcher: Option<String>,
}

impl Config {
    /// Parses the functionConfig; the error is the catalog's message.
    pub fn from_function_config(fc: Option<&Node>) -> Result<Config, String> {
        let fc = match fc {
            Some(n) if !n.entries().is_empty() => n,
            _ => {
                return Err("FunctionConfig is missing. Expect `ConfigMap.v1` or \
                            `SetNamespace.v1alpha1.fn.kpt.dev`"
                    .to_string());
            }
        };
        let non_empty = |s: &str| (!s.is_empty()).then(|| s.to_string());
        if meta::is_gvk(fc, "", "v1", "ConfigMap") {
            // `o.As(&cm)`: a config that does not decode into a ConfigMap.
            if gojson::check(fc, &gotypes::CONFIG_MAP).is_some() {
                return Err("failed to parse FunctionConfig as ConfigMap".to_string());
            }
            let data = config::data_map(fc);
            let get = |k: &str| {
                data.iter()
                    .find(|(key, _)| key == k)
                    .map(|(_, v)| v.as_str())
                    .unwrap_or("")
            };
            let matcher = non_empty(get("namespaceMatcher"));
            if !get("namespace").is_empty() {
                return Ok(Config {
                    namespace: get("namespace").to_string(),
                    matcher,
                });
            }
            if !get("name").is_empty() && meta::name(fc) == PACKAGE_CONTEXT_NAME {
                return Ok(Config {
                    namespace: get("name").to_string(),
                    matcher,
                });
            }
            return Err("`data.namespace` should not be empty".to_string());
        }
        if meta::is_gvk(fc, "fn.kpt.dev", "v1alpha1", "SetNamespace") {
            if gojson::check(fc, &SET_NAMESPACE).is_some() {
                return Err(
                    "failed to parse FunctionConfig as fn.kpt.dev.v1alpha1.SetNamespace"
                        .to_string(),
                );
            }
            let namespace = meta::str_at(fc, &["namespace"]);
            if namespace.is_empty() {
                return Err("`namespace` should not be empty".to_string());
            }
            return Ok(Config {
                namespace: namespace.to_string(),
                matcher: non_empty(meta::str_at(fc, &["namespaceMatcher"])),
            });
        }
        Err(format!(
            "unknown functionConfig Kind={} ApiVersion={}, expect `ConfigMap.v1` or \
             `SetNamespace.v1alpha1.fn.kpt.dev`",
            meta::kind(fc),
            meta::api_version(fc)
        ))
    }
}
