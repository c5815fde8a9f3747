//! The typed `spec.targets[].template` of a PackageVariantSet (upstream
//! `PackageVariantTemplate` and friends in `api/v1alpha2`). porch-api keeps the template as
//! raw JSON so the stored object round-trips whatever a client wrote; the controller reads it
//! through these types.

use std::collections::BTreeMap;

use porch_api::packagevariant::Function;
use serde::Deserialize;

/// How to build one PackageVariant from a target.
#[derive(Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct PackageVariantTemplate {
    #[serde(default)]
    pub downstream: Option<DownstreamTemplate>,
    #[serde(default)]
    pub adoption_policy: Option<String>,
    #[serde(default)]
    pub deletion_policy: Option<String>,
    #[serde(default)]
    pub labels: Option<BTreeMap<String, String>>,
    #[serde(default)]
    pub label_exprs: Option<Vec<MapExpr>>,
    #[serde(default)]
    pub annotations: Option<BTreeMap<String, String>>,
    #[serde(default)]
    pub annotation_exprs: Option<Vec<MapExpr>>,
    #[serde(default)]
    pub package_context: Option<PackageContextTemplate>,
    #[serde(default)]
    pub pipeline: Option<PipelineTemplate>,
    #[serde(default)]
    pub injectors: Option<Vec<InjectionSelectorTemplate>>,
}

/// Overrides of the downstream repository and package; a literal or an expression each.
#[derive(Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct DownstreamTemplate {
    #[serde(default)]
    pub repo: Option<String>,
    #[serde(default)]
    pub package: Option<String>,
    #[serde(default)]
    pub repo_expr: Option<String>,
    #[serde(default)]
    pub package_expr: Option<String>,
}

/// The package context of the generated PackageVariants; expression entries win over
/// literal ones with the same key.
#[derive(Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct PackageContextTemplate {
    #[serde(default)]
    pub data: Option<BTreeMap<String, String>>,
    #[serde(default)]
    pub remove_keys: Option<Vec<String>>,
    #[serde(default)]
    pub data_exprs: Option<Vec<MapExpr>>,
    #[serde(default)]
    pub remove_key_exprs: Option<Vec<String>>,
}

/// One injector; exactly one of `name` and `nameExpr`.
#[derive(Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct InjectionSelectorTemplate {
    #[serde(default)]
    pub group: Option<String>,
    #[serde(default)]
    pub version: Option<String>,
    #[serde(default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub name_expr: Option<String>,
}

/// One map entry: at most one of `key`/`keyExpr` and of `value`/`valueExpr`.
#[derive(Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct MapExpr {
    #[serde(default)]
    pub key: Option<String>,
    #[serde(default)]
    pub value: Option<String>,
    #[serde(default)]
    pub key_expr: Option<String>,
    #[serde(default)]
    pub value_expr: Option<String>,
}

/// The pipeline of the generated PackageVariants.
#[derive(Deserialize, Clone, Debug, Default, PartialEq)]
pub struct PipelineTemplate {
    #[serde(default)]
    pub validators: Option<Vec<FunctionTemplate>>,
    #[serde(default)]
    pub mutators: Option<Vec<FunctionTemplate>>,
}

/// A kpt function with CEL entries for its `configMap`.
#[derive(Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct FunctionTemplate {
    #[serde(flatten)]
    pub function: Function,
    #[serde(default)]
    pub config_map_exprs: Option<Vec<MapExpr>>,
}

/// Reads a target's raw template. `null` is no template, as an absent field.
pub fn parse_template(
    raw: Option<&serde_json::Value>,
) -> Result<Option<PackageVariantTemplate>, serde_json::Error> {
    match raw {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(v) => PackageVariantTemplate::deserialize(v).map(Some),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn function_template_reads_the_inline_function_and_its_exprs() {
        let t = parse_template(Some(&json!({"pipeline": {"mutators": [
            {"image": "img", "name": "fn", "configMap": {"a": "b"},
             "configMapExprs": [{"key": "k", "valueExpr": "repoDefault"}]}]}})))
        .expect("test value")
        .expect("test value");
        let m = &t
            .pipeline
            .expect("test value")
            .mutators
            .expect("test value")[0];
        assert_eq!(m.function.image.as_deref(), Some("img"));
        assert_eq!(m.function.name.as_deref(), Some("fn"));
        assert_eq!(
            m.function.config_map.as_ref().expect("test value")["a"],
            "b"
        );
        assert_eq!(
            m.config_map_exprs.as_ref().expect("test value")[0]
                .value_expr
                .as_deref(),
            Some("repoDefault")
        );
    }

    #[test]
    fn null_template_is_none_and_a_malformed_one_is_an_error() {
        assert_eq!(
            parse_template(Some(&serde_json::Value::Null)).expect("test value"),
            None
        );
        assert!(parse_template(Some(&json!({"labels": "not-a-map"}))).is_err());
    }
}
