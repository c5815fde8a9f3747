//! Reading a function's `functionConfig`: the `ConfigMap` kpt builds from a
//! Kptfile `configMap:` (every value a string) and the typed
//! `fn.kpt.dev/v1alpha1` kinds.

use kpt::yaml::Node;

use super::meta;

/// Group/version of the catalog's typed configs.
pub const FN_CONFIG_API_VERSION: &str = "fn.kpt.dev/v1alpha1";

/// The `data` of a ConfigMap as ordered (key, string value) pairs; non-scalar
/// values are skipped (a ConfigMap cannot hold them).
pub fn data_map(config: &Node) -> Vec<(String, String)> {
    config
        .get("data")
        .map(|d| {
            d.entries()
                .iter()
                .filter_map(|(k, v)| {
                    let key = k.as_str()?;
                    let value = if v.is_null() { "" } else { v.as_str()? };
                    Some((key.to_string(), value.to_string()))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// kyaml `RNode.GetDataMap`, which the kyaml-framework functions read
/// setters and annotations with: every `data` entry, a scalar's text, a
/// null (`GetValue` of a missing-or-null node) and anything else as `""`.
pub fn kyaml_data_map(config: &Node) -> Vec<(String, String)> {
    config
        .get("data")
        .map(|d| {
            d.entries()
                .iter()
                .filter_map(|(k, v)| {
                    let value = if v.is_null() {
                        ""
                    } else {
                        v.as_str().unwrap_or("")
                    };
                    Some((k.as_str()?.to_string(), value.to_string()))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A string-to-string map field of a typed config (e.g. `labels:`), ordered.
pub fn string_map(config: &Node, key: &str) -> Vec<(String, String)> {
    config
        .get(key)
        .map(|d| {
            d.entries()
                .iter()
                .filter_map(|(k, v)| Some((k.as_str()?.to_string(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

/// True when `config` is `apiVersion: v1, kind: ConfigMap`.
pub fn is_config_map(config: &Node) -> bool {
    meta::api_version(config) == "v1" && meta::kind(config) == "ConfigMap"
}

/// True when `config` is the typed config kind `kind` (`fn.kpt.dev/v1alpha1`).
pub fn is_typed(config: &Node, kind: &str) -> bool {
    meta::api_version(config) == FN_CONFIG_API_VERSION && meta::kind(config) == kind
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kyaml_data_map_keeps_what_is_written() {
        let cm =
            kpt::yaml::parse_one("data:\n  a: ~\n  b:\n  c: {x: y}\n  d: 1\n").expect("parses");
        let got = kyaml_data_map(&cm);
        let want: Vec<(String, String)> = [("a", ""), ("b", ""), ("c", ""), ("d", "1")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(got, want);
        assert_eq!(data_map(&cm).len(), 3, "data_map drops non-scalars");
    }

    #[test]
    fn data_map_keeps_order() {
        let mut cm = Node::mapping();
        cm.set("apiVersion", Node::string("v1"));
        cm.set("kind", Node::string("ConfigMap"));
        cm.ensure_mapping(&["metadata"])
            .set("name", Node::string("function-input"));
        assert!(is_config_map(&cm));
        cm.ensure_mapping(&["data"]).set("b", Node::string("2"));
        cm.ensure_mapping(&["data"]).set("a", Node::string("1"));
        assert_eq!(
            data_map(&cm),
            vec![("b".into(), "2".into()), ("a".into(), "1".into())]
        );
    }
}
