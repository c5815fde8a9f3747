//! The Kptfile (`kpt.dev/v1`): typed, strictly decoded, and written as kpt writes it.
//!
//! Decoding rejects unknown fields with kpt's message (`field X not found in type
//! v1.Function`) and old schema versions. Writing ([`Kptfile::to_node`]) follows Go
//! struct marshalling: canonical field order, map keys sorted, wide sequences.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::goquote::go_quote;
use crate::resource_list::ResultItem;
use crate::yaml::{self, Node, SeqIndent};

mod validate;

/// File name of a Kptfile.
pub const KPTFILE: &str = "Kptfile";
/// Annotation: render top-down.
pub const BFS_RENDERING: &str = "kpt.dev/bfs-rendering";
/// Annotation: write partial results when render fails.
pub const SAVE_ON_RENDER_FAILURE: &str = "kpt.dev/save-on-render-failure";

/// A decoded Kptfile.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Kptfile {
    pub api_version: String,
    pub kind: String,
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream: Option<Upstream>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream_lock: Option<Locator>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub info: Option<PackageInfo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pipeline: Option<Pipeline>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inventory: Option<Inventory>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
}

/// The ObjectMeta subset a Kptfile has.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ObjectMeta {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// User-specified upstream.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Upstream {
    #[serde(default, rename = "type", skip_serializing_if = "String::is_empty")]
    pub origin_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git: Option<Git>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub update_strategy: String,
}

/// Git locator.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Git {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub repo: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub directory: String,
    #[serde(default, rename = "ref", skip_serializing_if = "String::is_empty")]
    pub git_ref: String,
}

/// Resolved locator of the last fetch.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Locator {
    #[serde(default, rename = "type", skip_serializing_if = "String::is_empty")]
    pub origin_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git: Option<GitLock>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generic: Option<GenericLock>,
}

/// Resolved git locator.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GitLock {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub repo: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub directory: String,
    #[serde(default, rename = "ref", skip_serializing_if = "String::is_empty")]
    pub git_ref: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub commit: String,
}

/// Locator for non-git storage.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct GenericLock {
    #[serde(default, rename = "storeID", skip_serializing_if = "String::is_empty")]
    pub store_id: String,
    #[serde(
        default,
        rename = "resourceID",
        skip_serializing_if = "String::is_empty"
    )]
    pub resource_id: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub resource_version: String,
}

/// Pass-through package information.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PackageInfo {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub site: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub emails: Vec<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub license: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub license_file: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keywords: Vec<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub man: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub readiness_gates: Vec<ReadinessGate>,
}

/// A readiness gate (Porch mirrors these to PackageRevision spec).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReadinessGate {
    #[serde(default)]
    pub condition_type: String,
}

/// The function pipeline.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pipeline {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mutators: Vec<Function>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub validators: Vec<Function>,
}

impl Pipeline {
    /// No functions at all.
    pub fn is_empty(&self) -> bool {
        self.mutators.is_empty() && self.validators.is_empty()
    }
}

/// One pipeline step.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Function {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub image: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub exec: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub config_path: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub config_map: BTreeMap<String, String>,
    /// kpt HEAD: the function config is the package resource this names (kind, name and,
    /// when given, apiVersion and namespace), wherever in the package it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_ref: Option<ConfigRef>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tag: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub selectors: Vec<Selector>,
    #[serde(default, rename = "exclude", skip_serializing_if = "Vec::is_empty")]
    pub exclusions: Vec<Selector>,
    /// kpt HEAD: a CEL expression over the step's input; the step runs only when true.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub when: String,
}

/// A reference to the package resource a step takes as its function config.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ConfigRef {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
}

impl ConfigRef {
    /// How the reference reads in messages: `apiVersion/Kind name` (namespace/name when set).
    pub fn describe(&self) -> String {
        let gvk = match (self.api_version.as_str(), self.kind.as_str()) {
            ("", k) => k.to_string(),
            (v, k) => format!("{v}/{k}"),
        };
        let name = match self.namespace.as_str() {
            "" => self.name.clone(),
            ns => format!("{ns}/{}", self.name),
        };
        format!("{gvk} {name}")
    }
}

/// Resource selection criteria (all set fields must match).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Selector {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
    /// kpt HEAD: a regular expression over the resource's file path in the package.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub resource_file_regexp: String,
}

impl Selector {
    /// No criteria set.
    pub fn is_empty(&self) -> bool {
        self.api_version.is_empty()
            && self.kind.is_empty()
            && self.name.is_empty()
            && self.namespace.is_empty()
            && self.labels.is_empty()
            && self.annotations.is_empty()
            && self.resource_file_regexp.is_empty()
    }
}

/// Inventory for `kpt live` (passed through).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Inventory {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(
        default,
        rename = "inventoryID",
        skip_serializing_if = "String::is_empty"
    )]
    pub inventory_id: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// Tool-written status.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Status {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub render_status: Option<RenderStatus>,
}

/// A status condition.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Condition {
    #[serde(rename = "type")]
    pub condition_type: String,
    pub status: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

/// Result of the last in-place render.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RenderStatus {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mutation_steps: Vec<StepResult>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub validation_steps: Vec<StepResult>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub error_summary: String,
}

/// One executed (or failed-to-start) pipeline step.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StepResult {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub image: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub exec: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub execution_error: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub stderr: String,
    #[serde(default)]
    pub exit_code: i32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub results: Vec<ResultItem>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub error_results: Vec<ResultItem>,
    /// The step's `when:` expression, as written in the pipeline.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub when: String,
    /// The `when:` expression was false, so the step did not run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub skipped: bool,
}

/// Why a Kptfile could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum KptfileError {
    /// Not YAML at all.
    #[error("can't be read.\n\nDetails:\n{0}")]
    Syntax(String),
    /// apiVersion `kpt.dev/v1alpha1|2`.
    #[error("has an old version ({0:?}) of the Kptfile schema")]
    OldVersion(String),
    /// Another apiVersion/kind.
    #[error("unknown resource type {0:?}")]
    UnknownType(String),
    /// Unknown field or a value of the wrong type.
    #[error("yaml: unmarshal errors:\n  {0}")]
    Unmarshal(String),
    /// A rule of the Kptfile schema is broken (kpt's `ValidateError`: the `Value:` line
    /// only when there is a value, every line ending in a newline).
    #[error("{}", invalid_text(field, value, reason))]
    Invalid {
        field: String,
        value: String,
        reason: String,
    },
}

/// kpt's `ValidateError.Error()`.
fn invalid_text(field: &str, value: &str, reason: &str) -> String {
    let mut out = format!("Kptfile is invalid:\nField: `{field}`\n");
    if !value.is_empty() {
        out.push_str(&format!("Value: {}\n", go_quote(value)));
    }
    out.push_str(&format!("Reason: {reason}\n"));
    out
}

/// kpt's reason when a `configPath` names no file of the package.
pub const CONFIG_PATH_MISSING: &str = "functionConfig must exist in the current package";

impl KptfileError {
    /// A short machine-readable kind: every variant is the Kptfile's own
    /// content, so always `"invalid-input"`.
    pub fn kind(&self) -> &'static str {
        "invalid-input"
    }
}

impl Kptfile {
    /// Decode Kptfile text strictly, as kpt does.
    pub fn parse(text: &str) -> Result<Kptfile, KptfileError> {
        let root = yaml::parse_one(text).map_err(|e| KptfileError::Syntax(go_yaml_error(&e)))?;
        let api_version = root
            .get("apiVersion")
            .and_then(Node::as_str)
            .unwrap_or_default();
        let kind = root.get("kind").and_then(Node::as_str).unwrap_or_default();
        if api_version == "kpt.dev/v1alpha1" || api_version == "kpt.dev/v1alpha2" {
            let v = api_version.trim_start_matches("kpt.dev/").to_string();
            return Err(KptfileError::OldVersion(v));
        }
        if api_version != "kpt.dev/v1" || kind != "Kptfile" {
            return Err(KptfileError::UnknownType(format!(
                "{api_version}, Kind={kind}"
            )));
        }
        serde_yaml::from_str::<Kptfile>(text)
            .map_err(|e| KptfileError::Unmarshal(unmarshal_msg(&e)))
    }

    /// Decode from a node (e.g. a rendered resource).
    pub fn from_node(node: &Node) -> Result<Kptfile, KptfileError> {
        Self::parse(&yaml::emit_node(node, SeqIndent::Compact))
    }

    /// The node kpt's struct marshalling produces.
    pub fn to_node(&self) -> Node {
        Node::from_value(&serde_json::to_value(self).expect("Kptfile always serializes"))
    }

    /// The text kpt writes (`kptfileutil.WriteFile`).
    pub fn to_yaml(&self) -> String {
        yaml::emit_node(&self.to_node(), SeqIndent::Wide)
    }

    /// Case-insensitive `"true"` annotation.
    pub fn annotation_is_true(&self, key: &str) -> bool {
        self.metadata
            .annotations
            .get(key)
            .is_some_and(|v| v.eq_ignore_ascii_case("true"))
    }
}

/// go-yaml's wording for a syntax error: `yaml: line N: message`.
fn go_yaml_error(e: &yaml::YamlError) -> String {
    e.go_yaml()
}

/// Rewrite serde's unknown-field error into go-yaml's
/// `line N: field X not found in type v1.T`.
fn unmarshal_msg(e: &serde_yaml::Error) -> String {
    let text = e.to_string();
    let line = e.location().map(|l| l.line()).unwrap_or(0);
    if let Some(rest) = text.split("unknown field `").nth(1) {
        let field = rest.split('`').next().unwrap_or_default();
        let type_name = type_for_expected(rest);
        return format!("line {line}: field {field} not found in type v1.{type_name}");
    }
    if let Some(msg) = type_mismatch(&text) {
        return format!("line {line}: {msg}");
    }
    format!("line {line}: {text}")
}

/// go-yaml's `cannot unmarshal !!seq into string` for serde's
/// `path.to.key: invalid type: sequence, expected a string at line N column M`.
fn type_mismatch(text: &str) -> Option<String> {
    let (path, rest) = match text.split_once(": invalid type: ") {
        Some((path, rest)) => (path, rest),
        None => ("", text.strip_prefix("invalid type: ")?),
    };
    let (found, expected) = rest.split_once(", expected ")?;
    let expected = expected.split(" at line ").next().unwrap_or(expected);
    // go-yaml shows a scalar's text, shortened past ten characters.
    let scalar = |tag: &str, v: &str| {
        let v = if v.chars().count() > 10 {
            format!("{}...", v.chars().take(7).collect::<String>())
        } else {
            v.to_string()
        };
        format!("!!{tag} `{v}`")
    };
    let quoted = |s: &str, open: char, close: char| {
        s.strip_prefix(open)
            .and_then(|v| v.strip_suffix(close))
            .map(str::to_string)
    };
    let tag = match found {
        "sequence" => "!!seq".to_string(),
        "map" => "!!map".to_string(),
        f if f.starts_with("string ") => {
            let v = quoted(&f["string ".len()..], '"', '"')?;
            scalar("str", &v.replace("\\\"", "\""))
        }
        f if f.starts_with("integer ") => scalar("int", &quoted(&f["integer ".len()..], '`', '`')?),
        f if f.starts_with("floating point ") => {
            scalar("float", &quoted(&f["floating point ".len()..], '`', '`')?)
        }
        f if f.starts_with("boolean ") => {
            scalar("bool", &quoted(&f["boolean ".len()..], '`', '`')?)
        }
        _ => return None,
    };
    let key = path.rsplit('.').next().unwrap_or_default();
    let key = key.split('[').next().unwrap_or(key);
    let go_type = match expected {
        "a string" => "string".to_string(),
        "a boolean" => "bool".to_string(),
        "i8" | "i16" | "i32" | "i64" | "u8" | "u16" | "u32" | "u64" => "int".to_string(),
        "a sequence" => match key {
            "mutators" | "validators" => "[]v1.Function",
            "selectors" | "exclude" => "[]v1.Selector",
            "conditions" => "[]v1.Condition",
            "readinessGates" => "[]v1.ReadinessGate",
            "mutationSteps" | "validationSteps" => "[]v1.PipelineStepResult",
            _ => "[]string",
        }
        .to_string(),
        "a map" => "map[string]string".to_string(),
        e => {
            let name = e.strip_prefix("struct ")?;
            let go = match name {
                "Kptfile" => "KptFile",
                "Info" => "PackageInfo",
                other => other,
            };
            format!("v1.{go}")
        }
    };
    Some(format!("cannot unmarshal {tag} into {go_type}"))
}

/// Which Go type a serde "expected one of" list belongs to: the first row whose
/// marker fields all appear in the list (more specific rows first).
fn type_for_expected(rest: &str) -> &'static str {
    const MARKERS: &[(&[&str], &str)] = &[
        (&["configPath"], "Function"),
        (&["upstreamLock"], "KptFile"),
        (&["mutators"], "Pipeline"),
        (&["readinessGates"], "PackageInfo"),
        (&["inventoryID"], "Inventory"),
        (&["updateStrategy"], "Upstream"),
        (&["commit"], "GitLock"),
        (&["generic"], "Locator"),
        (&["renderStatus"], "Status"),
        (&["mutationSteps"], "RenderStatus"),
        (&["conditionType"], "ReadinessGate"),
        (&["apiVersion", "labels"], "Selector"),
        (&["namespace", "kind", "apiVersion", "name"], "ConfigRef"),
        (&["labels"], "ObjectMeta"),
        (&["repo"], "Git"),
    ];
    MARKERS
        .iter()
        .find(|(fields, _)| fields.iter().all(|f| rest.contains(&format!("`{f}`"))))
        .map_or("KptFile", |(_, t)| t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_unknown_fields_like_kpt() {
        let text = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: x\npipeline:\n  mutators:\n    - image: set-labels\n      targetResources: []\n";
        let err = Kptfile::parse(text).expect_err("unknown field");
        assert_eq!(
            err.to_string(),
            "yaml: unmarshal errors:\n  line 8: field targetResources not found in type v1.Function"
        );
    }

    #[test]
    fn rejects_old_versions() {
        let err = Kptfile::parse("apiVersion: kpt.dev/v1alpha2\nkind: Kptfile\n").expect_err("old");
        assert_eq!(
            err.to_string(),
            "has an old version (\"v1alpha2\") of the Kptfile schema"
        );
    }

    /// A v1 Kptfile named `x` followed by `rest` (also used by `validate`'s tests).
    pub(super) fn head(rest: &str) -> String {
        format!("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: x\n{rest}")
    }

    #[test]
    fn type_errors_are_go_yamls() {
        let cases = [
            (
                "info:\n  description: [a, b]\n",
                "line 6: cannot unmarshal !!seq into string",
            ),
            (
                "info:\n  description:\n    a: b\n",
                "line 7: cannot unmarshal !!map into string",
            ),
            (
                "pipeline:\n  mutators: set-labels\n",
                "line 6: cannot unmarshal !!str `set-labels` into []v1.Function",
            ),
            (
                "pipeline:\n  mutators: a-very-long-name\n",
                "line 6: cannot unmarshal !!str `a-very-...` into []v1.Function",
            ),
            (
                "metadata2: x\npipeline: 5\n",
                "line 5: field metadata2 not found in type v1.KptFile",
            ),
            (
                "pipeline: 5\n",
                "line 5: cannot unmarshal !!int `5` into v1.Pipeline",
            ),
            (
                "metadata:\n  labels: [a]\n",
                "line 4: cannot unmarshal !!seq into map[string]string",
            ),
        ];
        for (rest, want) in cases {
            let text = if rest.starts_with("metadata:") {
                format!("apiVersion: kpt.dev/v1\nkind: Kptfile\n{rest}")
            } else {
                head(rest)
            };
            let err = Kptfile::parse(&text).expect_err(rest);
            assert_eq!(
                err.to_string(),
                format!("yaml: unmarshal errors:\n  {want}"),
                "{rest}"
            );
        }
    }

    #[test]
    fn a_list_in_a_config_map_is_go_yamls_error() {
        // kpt's `invalid-configmap-fnconfig` case, in kpt.dev/v1.
        let text = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\npipeline:\n  mutators:\n    - image: gcr.io/kpt-fn/set-namespace:unstable\n      configMap:\n        namespace: staging\n    - image: gcr.io/kpt-fn/set-label:unstable\n      configMap: # invalid config\n        tier: backend\n        envs: # lists are not allowed in configmap\n         - dev\n         - staging\n";
        let err = Kptfile::parse(text).expect_err("a list");
        assert_eq!(
            err.to_string(),
            "yaml: unmarshal errors:\n  line 14: cannot unmarshal !!seq into string"
        );
    }
}
