//! The KRM function wire format: `config.kubernetes.io/v1` `ResourceList` and its results.
//!
//! Items are lossless YAML nodes so comments and styles survive a function call.
//! Results are typed (they are written into Kptfile `status.renderStatus` and
//! `results.yaml`) and converted to YAML through `serde_json::Value`.

use serde::{Deserialize, Serialize};

use crate::yaml::{self, Node};

/// `apiVersion` kpt writes on the wrapper.
pub const RESOURCE_LIST_API_VERSION: &str = "config.kubernetes.io/v1";

/// The function input/output envelope.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResourceList {
    /// The resources, in order.
    pub items: Vec<Node>,
    /// The function's configuration object, if any.
    pub function_config: Option<Node>,
    /// Structured results (output only).
    pub results: Vec<ResultItem>,
}

/// Severity of a result. kpt displays a missing severity as info.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Fails the pipeline when reported by a native function.
    Error,
    /// A warning.
    Warning,
    /// Information.
    #[default]
    Info,
}

/// Reference to the resource a result is about.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceRef {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
}

/// The field a result is about.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FieldRef {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_value: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposed_value: Option<String>,
}

/// The file a result is about.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRef {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub path: String,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub index: i64,
}

fn is_zero(i: &i64) -> bool {
    *i == 0
}

/// One structured result (`framework.Result`), field order as kpt writes it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResultItem {
    #[serde(default)]
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<Severity>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_ref: Option<ResourceRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<FieldRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<FileRef>,
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub tags: std::collections::BTreeMap<String, String>,
}

impl ResultItem {
    /// An info result with a message.
    pub fn info(message: impl Into<String>) -> Self {
        Self::with(Severity::Info, message)
    }
    /// A warning result with a message.
    pub fn warning(message: impl Into<String>) -> Self {
        Self::with(Severity::Warning, message)
    }
    /// An error result with a message.
    pub fn error(message: impl Into<String>) -> Self {
        Self::with(Severity::Error, message)
    }
    fn with(severity: Severity, message: impl Into<String>) -> Self {
        ResultItem {
            message: message.into(),
            severity: Some(severity),
            ..Default::default()
        }
    }
    /// Attach the resource the result is about.
    pub fn about(mut self, resource: &Node) -> Self {
        self.resource_ref = Some(ResourceRef {
            api_version: str_at(resource, &["apiVersion"]),
            kind: str_at(resource, &["kind"]),
            name: str_at(resource, &["metadata", "name"]),
            namespace: str_at(resource, &["metadata", "namespace"]),
        });
        self
    }
    /// True when the severity is error.
    pub fn is_error(&self) -> bool {
        self.severity == Some(Severity::Error)
    }
    /// The result as a YAML node (for writing into Kptfile status / results.yaml).
    pub fn to_node(&self) -> Node {
        Node::from_value(&serde_json::to_value(self).expect("ResultItem always serializes"))
    }
    /// Parse a result node as kpt does, accepting legacy shapes
    /// (`resourceRef.metadata.name`, `field.suggestedValue`, non-string values).
    pub fn from_node(node: &Node) -> Result<ResultItem, String> {
        let mut v = node.try_to_value().map_err(|e| e.to_string())?;
        if let Some(rr) = v.get_mut("resourceRef").and_then(|r| r.as_object_mut())
            && let Some(meta) = rr.remove("metadata")
        {
            for k in ["name", "namespace"] {
                if let Some(x) = meta.get(k) {
                    rr.entry(k.to_string()).or_insert(x.clone());
                }
            }
        }
        if let Some(field) = v.get_mut("field").and_then(|f| f.as_object_mut()) {
            if let Some(s) = field.remove("suggestedValue") {
                field.entry("proposedValue".to_string()).or_insert(s);
            }
            for k in ["currentValue", "proposedValue"] {
                if let Some(x) = field.get_mut(k)
                    && !x.is_string()
                    && !x.is_null()
                {
                    let text = yaml::emit_node(&Node::from_value(x), yaml::SeqIndent::Compact);
                    *x = serde_json::Value::String(text.trim().to_string());
                }
            }
        }
        if let Some(tags) = v.get_mut("tags").and_then(|t| t.as_object_mut()) {
            for (_, x) in tags.iter_mut() {
                if !x.is_string() {
                    *x = serde_json::Value::String(x.to_string());
                }
            }
        }
        serde_json::from_value(v).map_err(|e| format!("invalid result: {e}"))
    }
}

fn str_at(node: &Node, path: &[&str]) -> String {
    node.get_path(path)
        .and_then(Node::as_str)
        .unwrap_or_default()
        .to_string()
}

/// Errors reading a ResourceList.
#[derive(Debug, thiserror::Error)]
pub enum ResourceListError {
    /// The text is not YAML.
    #[error("function output is not valid YAML: {0}")]
    Yaml(#[from] yaml::YamlError),
    /// The document is not a ResourceList.
    #[error("function output is not a ResourceList: {0}")]
    Shape(String),
}

impl ResourceListError {
    /// A short machine-readable kind: the text is not an acceptable
    /// ResourceList, always `"invalid-input"`.
    pub fn kind(&self) -> &'static str {
        "invalid-input"
    }
}

impl ResourceList {
    /// A list of items with no config.
    pub fn new(items: Vec<Node>) -> Self {
        ResourceList {
            items,
            ..Default::default()
        }
    }

    /// The wrapper as a YAML node: `apiVersion, kind, items, functionConfig, results`.
    pub fn to_node(&self) -> Node {
        let mut root = Node::mapping();
        root.set("apiVersion", Node::string(RESOURCE_LIST_API_VERSION));
        root.set("kind", Node::string("ResourceList"));
        let mut items = Node::sequence();
        if let Some(seq) = items.items_mut() {
            seq.extend(self.items.iter().cloned());
        }
        root.set("items", items);
        if let Some(fc) = &self.function_config {
            root.set("functionConfig", fc.clone());
        }
        if !self.results.is_empty() {
            let mut results = Node::sequence();
            if let Some(seq) = results.items_mut() {
                seq.extend(self.results.iter().map(ResultItem::to_node));
            }
            root.set("results", results);
        }
        root
    }

    /// Serialize as the YAML text sent to a function's stdin.
    pub fn to_yaml(&self) -> String {
        yaml::emit_node(&self.to_node(), yaml::SeqIndent::Compact)
    }

    /// Parse a function's stdout. Accepts `ResourceList` or `List`, `v1` or `v1beta1`,
    /// results as a list or the legacy `{items: [...]}` wrapper.
    pub fn from_yaml(text: &str) -> Result<ResourceList, ResourceListError> {
        let docs = yaml::parse_stream(text)?;
        let root = match docs.into_iter().next() {
            Some(d) => d.root,
            None => return Ok(ResourceList::default()),
        };
        Self::from_node(root)
    }

    /// Reads a function's stdout as kyaml's `ByteReader` does for kpt's function filter: a
    /// lone `ResourceList` (or `List`) document is unwrapped; otherwise every document that is
    /// not empty is an item, so a function may print bare resources (several documents, or
    /// one of another kind). kyaml unwraps a lone list only when it has `items` or
    /// `functionConfig`; a list with only `results` is unwrapped here too rather than taken
    /// for a resource (COMPATIBILITY.md).
    pub fn from_function_output(text: &str) -> Result<ResourceList, ResourceListError> {
        if let Some(message) = crate::package::resources::invalid_separator(text) {
            return Err(ResourceListError::Shape(message));
        }
        let docs = yaml::parse_stream(text)?;
        if let [only] = docs.as_slice() {
            let kind = only.root.get("kind").and_then(Node::as_str);
            if matches!(kind, Some("ResourceList" | "List"))
                && ["items", "functionConfig", "results"]
                    .iter()
                    .any(|k| only.root.get(k).is_some())
            {
                return Self::from_node(only.root.clone());
            }
        }
        let items: Vec<Node> = docs
            .into_iter()
            .map(|d| d.root)
            .filter(|n| !n.is_null())
            .collect();
        if items.iter().any(|n| !n.is_mapping()) {
            return Err(ResourceListError::Shape(
                "the document is not a mapping".into(),
            ));
        }
        // kyaml's reader annotates each document it takes as it is (not the items of a
        // list it unwraps) with its place in the stream, over any index it carried.
        let mut items = items;
        for (i, item) in items.iter_mut().enumerate() {
            crate::package::resources::stamp_stream_index(item, i);
        }
        Ok(ResourceList::new(items))
    }

    /// Why kyaml's `ByteReader` (as kpt's function filter reads a function's stdout)
    /// refuses `text`, in its words: a document that does not parse
    /// (`MalformedYAMLError: yaml: ...`), or a scalar where a resource or the list
    /// should be (`wrong node kind: expected MappingNode but got ...`), at the top or
    /// among a ResourceList's items; before any of these, a `---` line with more than a
    /// comment after it (`invalid document separator: --- x`). `None` when kyaml reads it.
    pub fn kyaml_read_error(text: &str) -> Option<String> {
        use crate::package::resources::{
            document_error, invalid_separator, is_empty_doc, not_a_mapping, not_a_resource,
        };
        if let Some(message) = invalid_separator(text) {
            return Some(message);
        }
        let docs = match yaml::parse_stream(text) {
            Ok(docs) => docs,
            Err(e) => {
                return Some(format!(
                    "MalformedYAMLError: {}",
                    document_error(text, &e).go_yaml()
                ));
            }
        };
        // kyaml skips an empty document (`---` right after `---`) before it looks at it.
        if let Some(m) = docs
            .iter()
            .filter(|d| !is_empty_doc(&d.root))
            .find_map(|d| not_a_resource(&d.root))
        {
            return Some(m);
        }
        let [only] = docs.as_slice() else {
            return None;
        };
        let kind = only.root.get("kind").and_then(Node::as_str);
        if !matches!(kind, Some("ResourceList" | "List")) {
            return None;
        }
        only.root
            .get("items")
            .filter(|n| n.is_sequence())
            .and_then(|items| items.items().iter().find_map(not_a_mapping))
    }

    /// Is `reason` one of [`ResourceList::kyaml_read_error`]'s texts? kpt reports those
    /// as plain errors (kyaml's reader failed, not the function), without the step's
    /// exit code.
    pub fn is_kyaml_read_error(reason: &str) -> bool {
        [
            "MalformedYAMLError: ",
            "wrong node kind: ",
            "invalid document separator: ",
        ]
        .iter()
        .any(|p| reason.starts_with(p))
    }

    /// Interpret a parsed wrapper node.
    pub fn from_node(mut root: Node) -> Result<ResourceList, ResourceListError> {
        if !root.is_mapping() {
            return Err(ResourceListError::Shape(
                "the document is not a mapping".into(),
            ));
        }
        let kind = root.get("kind").and_then(Node::as_str).unwrap_or_default();
        if kind != "ResourceList" && kind != "List" {
            return Err(ResourceListError::Shape(format!(
                "kind is {kind:?}, expected \"ResourceList\""
            )));
        }
        let items = match root.remove("items") {
            Some(n) if n.is_sequence() => n.items().to_vec(),
            Some(n) if n.is_null() => Vec::new(),
            None => Vec::new(),
            Some(_) => return Err(ResourceListError::Shape("items is not a list".into())),
        };
        let function_config = root.remove("functionConfig").filter(|n| !n.is_null());
        let mut results = Vec::new();
        if let Some(r) = root.remove("results") {
            let list = if r.is_sequence() {
                r.items().to_vec()
            } else if let Some(inner) = r.get("items") {
                inner.items().to_vec()
            } else {
                Vec::new()
            };
            for item in &list {
                results.push(ResultItem::from_node(item).map_err(ResourceListError::Shape)?);
            }
        }
        Ok(ResourceList {
            items,
            function_config,
            results,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_separator_with_text_after_it_is_refused_before_anything_else() {
        let text = "kind: One\nmetadata:\n  name: first\n--- trailing\nkind: Two\n";
        assert_eq!(
            ResourceList::kyaml_read_error(text).as_deref(),
            Some("invalid document separator: --- trailing")
        );
        assert!(ResourceList::from_function_output(text).is_err());
        let reason = ResourceList::kyaml_read_error(text).unwrap_or_default();
        assert!(ResourceList::is_kyaml_read_error(&reason));
        // A comment or blanks after the `---` are fine.
        let ok = "kind: One\nmetadata:\n  name: first\n---   # two\nkind: Two\nmetadata:\n  name: second\n";
        assert_eq!(ResourceList::kyaml_read_error(ok), None);
        assert_eq!(
            ResourceList::from_function_output(ok)
                .map(|l| l.items.len())
                .ok(),
            Some(2)
        );
    }

    #[test]
    fn documents_read_as_they_are_get_their_place_in_the_stream_as_index() {
        let text = "kind: One\nmetadata:\n  name: first\n  annotations:\n    config.kubernetes.io/index: '5'\n---\nkind: Two\nmetadata:\n  name: second\n";
        let list = ResourceList::from_function_output(text).expect("read");
        let index = |n: &Node, key: &str| {
            n.get_path(&["metadata", "annotations", key])
                .and_then(Node::as_str)
                .map(str::to_string)
        };
        for (i, item) in list.items.iter().enumerate() {
            let want = Some(i.to_string());
            assert_eq!(index(item, "config.kubernetes.io/index"), want);
            assert_eq!(index(item, "internal.config.kubernetes.io/index"), want);
        }
        // The items of a list are taken as they are.
        let wrapped = "kind: ResourceList\nitems:\n- kind: One\n  metadata:\n    name: first\n";
        let list = ResourceList::from_function_output(wrapped).expect("read");
        assert_eq!(index(&list.items[0], "config.kubernetes.io/index"), None);
    }

    #[test]
    fn a_bare_list_in_function_output_is_refused_in_kyamls_words() {
        let text = "- one\n- two\n---\nkind: K\nmetadata:\n  name: k\n";
        assert_eq!(
            ResourceList::kyaml_read_error(text).as_deref(),
            Some(
                "wrong node kind: expected MappingNode but got SequenceNode: node contents:\n- one\n- two\n"
            )
        );
    }

    #[test]
    fn an_empty_document_between_separators_is_skipped() {
        let text = "---\nkind: One\nmetadata:\n  name: first\n---\n---\nkind: Two\nmetadata:\n  name: second\n";
        assert_eq!(ResourceList::kyaml_read_error(text), None);
        assert_eq!(
            ResourceList::from_function_output(text)
                .map(|l| l.items.len())
                .ok(),
            Some(2)
        );
    }
}
