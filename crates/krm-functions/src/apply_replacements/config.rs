//! The `ApplyReplacements` functionConfig: kustomize's `types.Replacement`
//! shape, decoded leniently the way Go's `json.Unmarshal` does (unknown
//! fields ignored, missing ones zero).

use serde::Deserialize;

/// kustomize `resid.ResId` as written in selectors; empty fields are
/// wildcards.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub(crate) struct ResId {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub name: String,
    pub namespace: String,
}

impl ResId {
    pub fn is_empty(&self) -> bool {
        *self == ResId::default()
    }
}

/// kustomize's `ResId.String()`: `Kind.version.group/name.namespace` with
/// placeholders for empty parts; used in error messages.
impl std::fmt::Display for ResId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let or = |s: &str, d: &'static str| {
            if s.is_empty() {
                d.to_string()
            } else {
                s.to_string()
            }
        };
        write!(
            f,
            "{}.{}.{}/{}.{}",
            or(&self.kind, "[noKind]"),
            or(&self.version, "[noVer]"),
            or(&self.group, "[noGrp]"),
            or(&self.name, "[noName]"),
            or(&self.namespace, "[noNs]")
        )
    }
}

/// `options` of a source or target.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct FieldOptions {
    pub delimiter: String,
    pub index: i64,
    pub create: bool,
}

/// Where a replacement's value comes from.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct SourceSelector {
    #[serde(flatten)]
    pub id: ResId,
    pub field_path: String,
    pub options: Option<FieldOptions>,
}

/// A resource selector of a target (`select` / `reject`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct Selector {
    #[serde(flatten)]
    pub id: ResId,
    pub annotation_selector: String,
    pub label_selector: String,
}

/// Where a replacement's value goes.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct TargetSelector {
    pub select: Option<Selector>,
    pub reject: Vec<Selector>,
    pub field_paths: Vec<String>,
    pub options: Option<FieldOptions>,
}

/// One replacement.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct Replacement {
    pub source: Option<SourceSelector>,
    pub source_value: Option<String>,
    pub targets: Option<Vec<TargetSelector>>,
}

/// The whole config.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Config {
    pub replacements: Vec<Replacement>,
}

/// `fieldPath` default of sources and targets.
pub(crate) const DEFAULT_FIELD_PATH: &str = "metadata.name";
