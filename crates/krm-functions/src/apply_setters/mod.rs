//! `apply-setters`: set the fields tagged with `# kpt-set: <pattern>` line
//! comments from the values in the ConfigMap `data` (setter name → value).
//!
//! Mirrors the catalog's `applysetters/apply_setters.go`: a scalar whose line
//! comment holds a pattern that names at least one given setter gets the
//! pattern with the setters substituted (setters that were not given are
//! recovered from the current value by matching it against the pattern); a
//! sequence whose key (or, in flow style, the value) carries `${name}` is
//! replaced by the setter value parsed as a YAML list. One result per changed
//! field; "no matches for input setter(s)" when nothing was tagged. Errors
//! are reported as `failed to apply setters: ...`.

pub(crate) mod kyaml_parse;
mod sanitize;
mod secret_scan;
pub(crate) mod walk;

use kpt::resource_list::{FieldRef, FileRef, ResourceList, ResultItem, Severity};
use kpt::yaml::{self, Node, NodeKind, Style};
use std::collections::HashMap;

use regex::Regex;

use crate::FnError;
use crate::common::config::kyaml_data_map;
use walk::{Visitor, accept, file_path, go_quote};

/// The comment prefix that marks a setter.
const SETTER_COMMENT: &str = "# kpt-set: ";

/// One setter from the config.
#[derive(Debug, Clone)]
struct Setter {
    name: String,
    value: String,
}

/// One changed field.
struct Change {
    file_path: String,
    /// The resource, for the result's `resourceRef`.
    resource: Node,
    field_path: String,
    current: String,
    value: String,
    /// The pattern that was applied (its setter names decide redaction).
    pattern: String,
}

struct ApplySetters {
    setters: Vec<Setter>,
    changes: Vec<Change>,
    file_path: String,
    resource: Node,
    placeholder: Regex,
    /// The derivation regex of each pattern seen (`None`: it does not compile), so a
    /// pattern shared by many fields is compiled once.
    derivers: HashMap<String, Option<Regex>>,
    /// A flow list in the current item became a block list and kept its line
    /// comment (see `visit_mapping`), so the item is re-read as kpt re-reads it.
    stale_comment: bool,
}

/// Run the function.
pub fn run(list: &mut ResourceList) -> Result<(), FnError> {
    let setters = list
        .function_config
        .as_ref()
        .map(|fc| {
            kyaml_data_map(fc)
                .into_iter()
                .map(|(name, value)| Setter { name, value })
                .collect()
        })
        .unwrap_or_default();
    let mut s = ApplySetters {
        setters,
        changes: Vec::new(),
        file_path: String::new(),
        resource: Node::mapping(),
        placeholder: Regex::new(r"\$\{([^}]*)\}")
            .map_err(|e| FnError::Failed(format!("internal regex: {e}")))?,
        derivers: HashMap::new(),
        stale_comment: false,
    };
    for item in list.items.iter_mut() {
        s.file_path = file_path(item);
        s.resource = resource_header(item);
        s.stale_comment = false;
        accept(&mut s, item, "")
            .map_err(|e| FnError::Failed(format!("failed to apply setters: {e}")))?;
        if s.stale_comment {
            kyaml_parse::reread(item);
        }
    }
    if s.changes.is_empty() {
        list.results.push(ResultItem {
            message: "no matches for input setter(s)".into(),
            ..Default::default()
        });
    }
    // Releases v0.1 and v0.2 (what Porch's and kpt's examples pin) reported the field path
    // and file only; later ones add the resource and the current and proposed values.
    let legacy = crate::image_tag::is_release(0, 1) || crate::image_tag::is_release(0, 2);
    for c in s.changes {
        let names: Vec<&str> = s
            .placeholder
            .find_iter(&c.pattern)
            .map(|m| clean(m.as_str()))
            .collect();
        let proposed = sanitize::sanitize(&c.value, &c.field_path, &names);
        let current = sanitize::sanitize(&c.current, &c.field_path, &names);
        let item = ResultItem {
            message: format!("set field value to {}", go_quote(&proposed)),
            severity: Some(Severity::Info),
            field: Some(FieldRef {
                path: c.field_path,
                current_value: (!current.is_empty()).then_some(current),
                proposed_value: (!proposed.is_empty()).then_some(proposed),
            }),
            file: (!c.file_path.is_empty()).then_some(FileRef {
                path: c.file_path,
                index: 0,
            }),
            ..Default::default()
        };
        if legacy {
            // Those releases had no redaction (the message shows the value)
            // and set no severity (kpt prints such a result as `[info]`).
            list.results.push(ResultItem {
                message: format!("set field value to {}", go_quote(&c.value)),
                severity: None,
                field: item.field.map(|f| FieldRef {
                    current_value: None,
                    proposed_value: None,
                    ..f
                }),
                ..item
            });
        } else {
            list.results.push(item.about(&c.resource));
        }
    }
    Ok(())
}

/// The KRM header of an item (what a result's `resourceRef` needs), so
/// changes need not hold a copy of the whole resource.
fn resource_header(item: &Node) -> Node {
    let mut h = Node::mapping();
    for k in ["apiVersion", "kind"] {
        if let Some(v) = item.get(k) {
            h.set(k, v.clone());
        }
    }
    for k in ["name", "namespace"] {
        if let Some(v) = item.get_path(&["metadata", k]) {
            h.ensure_mapping(&["metadata"]).set(k, v.clone());
        }
    }
    h
}

/// The pattern of a `# kpt-set: ` line comment, "" when there is none.
pub(crate) fn setter_pattern(line_comment: &str) -> &str {
    line_comment
        .strip_prefix(SETTER_COMMENT)
        .map(str::trim)
        .unwrap_or_default()
}

impl ApplySetters {
    /// True when the pattern names at least one given setter.
    fn should_set(&self, pattern: &str) -> bool {
        self.setters
            .iter()
            .any(|s| pattern.contains(&format!("${{{}}}", s.name)))
    }

    /// The `${...}` references left in a pattern, in order.
    fn unresolved(&self, pattern: &str) -> Vec<String> {
        self.placeholder
            .find_iter(pattern)
            .map(|m| m.as_str().to_string())
            .collect()
    }

    /// Values of the setters in `pattern` recovered from the current `value`
    /// (each `${x}` matches `(.*)`); empty when they cannot all be derived.
    fn current_values(&mut self, pattern: &str, value: &str) -> Vec<(String, String)> {
        let refs = self.unresolved(pattern);
        let re = self.derivers.entry(pattern.to_string()).or_insert_with(|| {
            let mut re = regex::escape(pattern);
            for r in &refs {
                re = re.replace(&regex::escape(r), "(.*)");
            }
            Regex::new(&re).ok()
        });
        let Some(re) = re else {
            return Vec::new();
        };
        let Some(caps) = re.captures(value) else {
            return Vec::new();
        };
        let found: Vec<&str> = caps
            .iter()
            .skip(1)
            .map(|m| m.map(|m| m.as_str()).unwrap_or_default())
            .collect();
        if found.len() != refs.len() || found.iter().any(|v| v.is_empty()) {
            return Vec::new();
        }
        // Go collects these into a map: a setter named twice in the pattern
        // gets the value of its last occurrence.
        let mut values: Vec<(String, String)> = Vec::new();
        for (r, v) in refs.iter().zip(found) {
            let name = clean(r);
            match values.iter_mut().find(|(n, _)| n == name) {
                Some(entry) => entry.1 = v.to_string(),
                None => values.push((name.to_string(), v.to_string())),
            }
        }
        values
    }

    fn setter_value(&self, pattern: &str) -> String {
        let name = clean(pattern);
        self.setters
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.value.clone())
            .unwrap_or_default()
    }
}

/// The name inside `${...}`.
fn clean(input: &str) -> &str {
    let input = input.trim();
    let input = input.strip_prefix("${").unwrap_or(input);
    input.strip_suffix('}').unwrap_or(input)
}

impl Visitor for ApplySetters {
    fn visit_mapping(&mut self, node: &mut Node, path: &str) -> Result<(), FnError> {
        let Some(entries) = node.entries_mut() else {
            return Ok(());
        };
        for (key, value) in entries.iter_mut() {
            if !value.is_sequence() {
                continue;
            }
            let flow = value.style == Style::Flow;
            let comment = if flow {
                value.line_comment.clone()
            } else {
                key.line_comment.clone()
            };
            let pattern = setter_pattern(&comment).to_string();
            if pattern.is_empty() || !self.should_set(&pattern) {
                continue;
            }
            if !(self.unresolved(&pattern).len() == 1
                && pattern.starts_with("${")
                && pattern.ends_with('}'))
            {
                return Err(FnError::Failed(format!(
                    "invalid setter pattern for array node: {}",
                    go_quote(&pattern)
                )));
            }
            let sv = self.setter_value(&pattern);
            // The current release reports a list's current value as the
            // list written out as YAML (`yaml.String`), line comment included.
            let current = yaml::emit_node(value, yaml::SeqIndent::Compact);
            let field_path = format!("{path}.{}", key.as_str().unwrap_or_default());
            let field_path = field_path.trim_start_matches('.').to_string();
            if sv.is_empty() {
                // An empty list is written `[]` with the comment after it.
                value.kind = NodeKind::Sequence(Vec::new());
                value.style = Style::Flow;
                value.line_comment = comment;
                key.line_comment = String::new();
            } else {
                let bad = || {
                    FnError::Failed(format!(
                        "input to array setter must be an array of values, but found {}",
                        go_quote(&sv)
                    ))
                };
                let mut parsed = kyaml_parse::parse(&sv).ok_or_else(bad)?;
                let NodeKind::Sequence(items) = &mut parsed.kind else {
                    return Err(bad());
                };
                value.kind = NodeKind::Sequence(std::mem::take(items));
                // Non-empty lists are standardised to block style with the
                // comment on the key. Go leaves a flow list's comment on the
                // list too (kpt issue 3723): yaml.v3 then writes it again at
                // the next line-comment place, e.g. after the next field.
                value.style = Style::Any;
                self.stale_comment |= flow && !value.line_comment.is_empty();
                key.line_comment = comment;
            }
            self.changes.push(Change {
                file_path: self.file_path.clone(),
                resource: self.resource.clone(),
                field_path,
                current,
                value: sv,
                pattern: pattern.clone(),
            });
        }
        Ok(())
    }

    fn visit_scalar(&mut self, node: &mut Node, path: &str) -> Result<(), FnError> {
        let pattern = setter_pattern(&node.line_comment).to_string();
        if pattern.is_empty() || !self.should_set(&pattern) {
            return Ok(());
        }
        let mut out = pattern.clone();
        for s in &self.setters {
            out = out.replace(&format!("${{{}}}", s.name), &s.value);
        }
        let current = node.as_str().unwrap_or_default().to_string();
        // Values derived from the current text only fill references the given setters
        // left; when none is left the derivation (a regex per pattern) cannot change
        // anything, so it is skipped.
        if !self.unresolved(&out).is_empty() {
            for (name, value) in self.current_values(&pattern, &current) {
                out = out.replace(&format!("${{{name}}}"), &value);
            }
        }
        let left = self.unresolved(&out);
        if !left.is_empty() {
            return Err(FnError::Failed(format!(
                "values for setters [{}] must be provided",
                left.join(" ")
            )));
        }
        set_untagged(node, &out);
        self.changes.push(Change {
            file_path: self.file_path.clone(),
            resource: self.resource.clone(),
            field_path: path.trim_start_matches('.').to_string(),
            current,
            value: out,
            pattern,
        });
        Ok(())
    }
}

/// Sets a scalar's text and clears its tag so the type is inferred again, as
/// the Go code does with `Tag = ""`: the style is kept, an empty value is
/// double-quoted.
pub(crate) fn set_untagged(node: &mut Node, value: &str) {
    node.kind = NodeKind::Scalar(value.to_string());
    node.tag = None;
    if value.is_empty() {
        node.style = Style::DoubleQuoted;
    } else if node.style == Style::Any {
        node.style = Style::Plain;
    }
}

#[cfg(test)]
mod tests;
