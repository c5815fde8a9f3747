//! `create-setters`: tag fields whose values contain setter values with
//! `# kpt-set: <pattern>` comments, the inverse of apply-setters.
//!
//! Mirrors the catalog's `createsetters/create_setters.go`: ConfigMap values
//! that parse as YAML lists are array setters (a list field whose sorted
//! elements equal the sorted setter values gets `# kpt-set: ${name}` on its
//! key), the others scalar setters (every occurrence of a value inside a
//! single-line scalar is replaced by `${name}`, longest values first, and the
//! result becomes the comment). kpt's bookkeeping annotations are skipped.
//! Finding nothing is an error, as in the catalog.

use kpt::resource_list::{FieldRef, FileRef, ResourceList, ResultItem};
use kpt::yaml::{Node, NodeKind, Style};

use crate::FnError;
use crate::apply_setters::kyaml_parse;
use crate::apply_setters::walk::{Visitor, accept, file_path, go_quote, line_comment};
use crate::common::config::kyaml_data_map;

/// A scalar setter: name and value.
#[derive(Debug, Clone)]
struct ScalarSetter {
    name: String,
    value: String,
}

/// An array setter: name and sorted element values.
#[derive(Debug, Clone)]
struct ArraySetter {
    name: String,
    values: Vec<String>,
}

/// One added comment.
struct Added {
    file_path: String,
    field_path: String,
    value: String,
    comment: String,
}

#[derive(Default)]
struct CreateSetters {
    scalars: Vec<ScalarSetter>,
    arrays: Vec<ArraySetter>,
    added: Vec<Added>,
    file_path: String,
    /// A commented flow list in the current item became a block list; its
    /// comment stays on the list as in Go, so the item is re-read as kpt
    /// re-reads the function's output (see `kyaml_parse::reread`).
    stale_comment: bool,
}

/// Run the function.
pub fn run(list: &mut ResourceList) -> Result<(), FnError> {
    let fail = |m: String| FnError::Failed(format!("failed to create setters: {m}"));
    let mut cs = decode(list.function_config.as_ref()).map_err(fail)?;
    for item in list.items.iter_mut() {
        cs.file_path = file_path(item);
        cs.stale_comment = false;
        accept(&mut cs, item, "").map_err(|e| fail(e.to_string()))?;
        if cs.stale_comment {
            kyaml_parse::reread(item);
        }
    }
    if cs.added.is_empty() {
        return Err(fail("no matches for the input list of setters".into()));
    }
    for a in cs.added {
        list.results.push(ResultItem {
            message: format!(
                "Added line comment {} for field with value {}",
                go_quote(&a.comment),
                go_quote(&a.value)
            ),
            field: Some(FieldRef {
                path: a.field_path,
                ..Default::default()
            }),
            file: (!a.file_path.is_empty()).then_some(FileRef {
                path: a.file_path,
                index: 0,
            }),
            ..Default::default()
        });
    }
    Ok(())
}

/// Splits the ConfigMap data into array and scalar setters.
fn decode(config: Option<&Node>) -> Result<CreateSetters, String> {
    let data = config.map(kyaml_data_map).unwrap_or_default();
    if data.is_empty() {
        return Err("config map cannot be empty".into());
    }
    let mut cs = CreateSetters::default();
    for (name, value) in data {
        // kyaml's yaml.Parse: the first document, an error without one.
        let parsed = kyaml_parse::parse(&value).ok_or_else(|| "parsing error".to_string())?;
        match &parsed.kind {
            NodeKind::Sequence(items) => {
                let mut values: Vec<String> = items.iter().map(scalar_text).collect();
                values.sort();
                cs.arrays.push(ArraySetter { name, values });
            }
            NodeKind::Scalar(_) => cs.scalars.push(ScalarSetter { name, value }),
            _ => {}
        }
    }
    // Longest values first so a value containing another one wins.
    cs.scalars.sort_by_key(|s| std::cmp::Reverse(s.value.len()));
    Ok(cs)
}

/// yaml.v3 `Node.Value`: the text of a scalar, "" otherwise.
fn scalar_text(n: &Node) -> String {
    n.as_str().unwrap_or_default().to_string()
}

impl CreateSetters {
    /// Go `strings.Replacer` over the scalar setters: at each position the
    /// first setter (in priority order) whose value starts there is replaced
    /// by `${name}`.
    fn replace(&self, value: &str) -> String {
        let mut out = String::with_capacity(value.len());
        let mut rest = value;
        'outer: while !rest.is_empty() {
            for s in &self.scalars {
                if !s.value.is_empty() && rest.starts_with(&s.value) {
                    out.push_str(&format!("${{{}}}", s.name));
                    rest = &rest[s.value.len()..];
                    continue 'outer;
                }
            }
            let mut chars = rest.chars();
            if let Some(c) = chars.next() {
                out.push(c);
            }
            rest = chars.as_str();
        }
        out
    }

    fn any_scalar_match(&self, values: &[String]) -> bool {
        values
            .iter()
            .any(|v| self.scalars.iter().any(|s| v.contains(&s.value)))
    }
}

impl Visitor for CreateSetters {
    fn visit_mapping(&mut self, node: &mut Node, path: &str) -> Result<(), FnError> {
        let Some(entries) = node.entries_mut() else {
            return Ok(());
        };
        for (key, value) in entries.iter_mut() {
            if !value.is_sequence() {
                continue;
            }
            let field_path = format!("{path}.{}", key.as_str().unwrap_or_default());
            let field_path = field_path.trim_start_matches('.').to_string();
            let mut values: Vec<String> = value.items().iter().map(scalar_text).collect();
            values.sort();
            // Where the comment goes: the key for block lists, the value for
            // flow lists (which become block lists when an element will get
            // a scalar setter comment).
            let mut on_key = true;
            let commented_flow = value.style == Style::Flow && !value.line_comment.is_empty();
            if value.style == Style::Flow {
                if self.any_scalar_match(&values) {
                    value.style = Style::Any;
                    self.stale_comment |= commented_flow;
                } else {
                    on_key = false;
                }
            }
            if let Some(a) = self.arrays.iter().find(|a| a.values == values) {
                self.stale_comment |= commented_flow && !values.is_empty();
                if !on_key && !values.is_empty() {
                    value.style = Style::Any;
                    on_key = true;
                }
                let comment = format!("kpt-set: ${{{}}}", a.name);
                let target = if on_key { &mut *key } else { &mut *value };
                target.line_comment = line_comment(&comment);
                self.added.push(Added {
                    file_path: self.file_path.clone(),
                    field_path,
                    value: format!("[{}]", values.join(" ")),
                    comment,
                });
            }
        }
        Ok(())
    }

    fn visit_scalar(&mut self, node: &mut Node, path: &str) -> Result<(), FnError> {
        // kpt's own annotations are runtime bookkeeping, not user content.
        if path.contains(".annotations.internal.config.kubernetes.io")
            || path.contains(".annotations.config.kubernetes.io")
        {
            return Ok(());
        }
        let value = node.as_str().unwrap_or_default().to_string();
        if value.contains('\n') {
            return Ok(());
        }
        let replaced = self.replace(&value);
        if replaced != value {
            let comment = format!("kpt-set: {replaced}");
            node.line_comment = line_comment(&comment);
            self.added.push(Added {
                file_path: self.file_path.clone(),
                field_path: path.trim_start_matches('.').to_string(),
                value,
                comment,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
