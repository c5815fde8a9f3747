//! `search-replace`: find fields by value, value regex, path and file path,
//! and optionally put a new value or a line comment on them.
//!
//! Mirrors the catalog's `searchreplace/search_replace.go`: the ConfigMap
//! keys are `by-value`, `by-value-regex` (RE2, unanchored), `by-path`,
//! `by-file-path`, `put-value` and `put-comment`; `${N}` in a put pattern
//! refers to a capture group of `by-value-regex`. A plain `by-path` with only
//! `put-value` creates the field when missing. One result per matched field
//! ("Matched field value ..." / "Mutated field value to ..."), or "no
//! matches". Errors are reported as `failed to perform search-replace
//! operation: "<error>"`.

mod path;

use globset::GlobBuilder;
use kpt::resource_list::{FieldRef, FileRef, ResourceList, ResultItem};
use kpt::yaml::{self, Node, NodeKind, SeqIndent, Style};
use regex::Regex;

use crate::FnError;
use crate::apply_setters::walk::{Visitor, accept, file_path, go_quote, line_comment};
use crate::common::gomsg;
use path::{is_abs_path, path_match};

const BY_VALUE: &str = "by-value";
const BY_VALUE_REGEX: &str = "by-value-regex";
const BY_PATH: &str = "by-path";
const BY_FILE_PATH: &str = "by-file-path";
const PUT_VALUE: &str = "put-value";
const PUT_COMMENT: &str = "put-comment";

/// The accepted keys, in the order the catalog lists them in errors.
const MATCHERS: [&str; 6] = [
    BY_VALUE,
    BY_FILE_PATH,
    BY_VALUE_REGEX,
    BY_PATH,
    PUT_VALUE,
    PUT_COMMENT,
];

/// One matched (or mutated) field.
struct Found {
    file_path: String,
    field_path: String,
    value: String,
}

#[derive(Default)]
struct SearchReplace {
    by_value: String,
    by_value_regex: String,
    by_path: String,
    by_file_path: String,
    put_value: String,
    put_comment: String,
    regex: Option<Regex>,
    found: Vec<Found>,
    file_path: String,
}

/// Run the function.
pub fn run(list: &mut ResourceList) -> Result<(), FnError> {
    let decoded = decode(list.function_config.as_ref());
    let sr = decoded.and_then(|mut sr| sr.filter(&mut list.items).map(|()| sr));
    // A kyaml framework function: the error is the only result, and both the
    // framework and main print it to stderr.
    let sr = match sr {
        Ok(sr) => sr,
        Err(e) => {
            list.results.push(ResultItem::error(format!(
                "failed to perform search-replace operation: {}",
                go_quote(&e)
            )));
            return Err(FnError::Stderr(format!("{e}{e}\n")));
        }
    };
    let mutated = !sr.put_comment.is_empty() || !sr.put_value.is_empty();
    if sr.found.is_empty() {
        list.results.push(ResultItem {
            message: "no matches".into(),
            ..Default::default()
        });
    }
    for f in sr.found {
        let message = if mutated {
            format!("Mutated field value to {}", go_quote(&f.value))
        } else {
            format!("Matched field value {}", go_quote(&f.value))
        };
        list.results.push(ResultItem {
            message,
            field: Some(FieldRef {
                path: f.field_path,
                ..Default::default()
            }),
            file: (!f.file_path.is_empty()).then_some(FileRef {
                path: f.file_path,
                index: 0,
            }),
            ..Default::default()
        });
    }
    Ok(())
}

/// Reads the ConfigMap data, rejecting unknown keys.
fn decode(config: Option<&Node>) -> Result<SearchReplace, String> {
    let mut sr = SearchReplace::default();
    for (k, v) in config.map(gomsg::data_map).unwrap_or_default() {
        let field = match k.as_str() {
            BY_VALUE => &mut sr.by_value,
            BY_VALUE_REGEX => &mut sr.by_value_regex,
            BY_PATH => &mut sr.by_path,
            BY_FILE_PATH => &mut sr.by_file_path,
            PUT_VALUE => &mut sr.put_value,
            PUT_COMMENT => &mut sr.put_comment,
            _ => {
                let all: Vec<String> = MATCHERS.iter().map(|m| go_quote(m)).collect();
                return Err(format!(
                    "invalid matcher {}, must be one of [{}]",
                    go_quote(&k),
                    all.join(" ")
                ));
            }
        };
        *field = v;
    }
    Ok(sr)
}

/// doublestar treats `**` as "any directories" only as a whole path
/// component; elsewhere it is a plain `*` (globset would reject it).
fn doublestar_pattern(pattern: &str) -> String {
    pattern
        .split('/')
        .map(|c| {
            if c == "**" {
                return c.to_string();
            }
            let mut out = c.to_string();
            while out.contains("**") {
                out = out.replace("**", "*");
            }
            out
        })
        .collect::<Vec<_>>()
        .join("/")
}

impl SearchReplace {
    fn filter(&mut self, items: &mut [Node]) -> Result<(), String> {
        if !self.by_value.is_empty() && !self.by_value_regex.is_empty() {
            return Err(format!(
                "only one of [{}, {}] can be provided",
                go_quote(BY_VALUE),
                go_quote(BY_VALUE_REGEX)
            ));
        }
        if !self.by_value_regex.is_empty() {
            self.regex = Some(kpt::goregex::compile(&self.by_value_regex)?);
        }
        let glob = if self.by_file_path.is_empty() {
            None
        } else {
            // doublestar reports a bad pattern when matching, so only once
            // there is an item to match.
            Some(
                GlobBuilder::new(&doublestar_pattern(&self.by_file_path))
                    .literal_separator(true)
                    .build()
                    .map(|g| g.compile_matcher())
                    .map_err(|_| "syntax error in pattern".to_string()),
            )
        };
        for item in items.iter_mut() {
            let fp = file_path(item);
            if let Some(g) = &glob
                && !g.as_ref().map_err(Clone::clone)?.is_match(&fp)
            {
                continue;
            }
            self.file_path = fp;
            if self.should_put_value_by_path() {
                self.put_value_by_path(item)?;
            } else {
                accept(self, item, "").map_err(|e| e.to_string())?;
            }
        }
        Ok(())
    }

    /// Only a plain path and a value: set it directly, creating it if needed.
    fn should_put_value_by_path(&self) -> bool {
        is_abs_path(&self.by_path)
            && !self.by_path.contains('[')
            && self.by_value.is_empty()
            && self.by_value_regex.is_empty()
            && !self.put_value.is_empty()
    }

    fn put_value_by_path(&mut self, item: &mut Node) -> Result<(), String> {
        let parts: Vec<&str> = self.by_path.split('.').collect();
        let Some((last, parents)) = parts.split_last() else {
            return Ok(());
        };
        let mut node = item;
        for p in parents {
            if node.get(p).is_none() {
                node.set(p, Node::mapping());
            }
            node = node
                .get_mut(p)
                .filter(|n| n.is_mapping())
                .ok_or_else(|| format!("wrong node kind: expected MappingNode at {p:?}"))?;
        }
        node.set(last, Node::plain(self.put_value.clone()));
        self.found.push(Found {
            file_path: self.file_path.clone(),
            field_path: self.by_path.clone(),
            value: self.put_value.clone(),
        });
        Ok(())
    }

    fn regex_match(&self, value: &str) -> bool {
        self.regex.as_ref().is_some_and(|r| r.is_match(value))
    }

    fn criteria_match(&self, value: &str, path: &str) -> bool {
        let path_ok = path_match(&self.by_path, path);
        let value_ok =
            (!self.by_value.is_empty() && self.by_value == value) || self.regex_match(value);
        (value_ok && (path_ok || self.by_path.is_empty()))
            || (path_ok && self.by_value.is_empty() && self.by_value_regex.is_empty())
    }

    /// Substitutes `${N}` capture groups of `by-value-regex` (matched against
    /// the field value) into a put pattern.
    fn resolve(&self, field_value: &str, pattern: &str) -> Result<String, String> {
        let Some(re) = &self.regex else {
            return Ok(pattern.to_string());
        };
        let mut res = pattern.to_string();
        if let Some(caps) = re.captures(field_value) {
            for (i, m) in caps.iter().enumerate().skip(1) {
                let text = m.map(|m| m.as_str()).unwrap_or_default();
                res = res.replace(&format!("${{{i}}}"), text);
            }
        }
        let left = Regex::new(r"\$\{([0-9]+)\}").map_err(|e| e.to_string())?;
        if left.is_match(&res) {
            return Err("unable to resolve capture groups".into());
        }
        Ok(res)
    }
}

impl Visitor for SearchReplace {
    fn visit_mapping(&mut self, node: &mut Node, path: &str) -> Result<(), FnError> {
        if self.put_comment.is_empty() {
            return Ok(());
        }
        let Some(entries) = node.entries_mut() else {
            return Ok(());
        };
        for (key, value) in entries.iter_mut() {
            if !value.is_sequence() || value.items().is_empty() {
                continue;
            }
            let key_text = key.as_str().unwrap_or_default().trim().to_string();
            let path_to_key = format!("{path}.{key_text}");
            if path_match(&self.by_path, path_to_key.trim_start_matches('.')) {
                key.line_comment = line_comment(&self.put_comment);
                // The result shows the list in flow style; the list itself is
                // written in block style with the comment on its key.
                let mut flow = value.clone();
                flow.style = Style::Flow;
                let text = yaml::emit_node(&flow, SeqIndent::Compact)
                    .trim()
                    .to_string();
                value.style = Style::Any;
                self.found.push(Found {
                    file_path: self.file_path.clone(),
                    field_path: format!("{} # {}", self.by_path, self.put_comment),
                    value: text,
                });
            }
        }
        Ok(())
    }

    fn visit_scalar(&mut self, node: &mut Node, path: &str) -> Result<(), FnError> {
        let value = node.as_str().unwrap_or_default().to_string();
        if !self.criteria_match(&value, path) {
            return Ok(());
        }
        if !self.put_comment.is_empty() {
            let c = self
                .resolve(&value, &self.put_comment)
                .map_err(FnError::Failed)?;
            node.line_comment = line_comment(&c);
        }
        if !self.put_value.is_empty() {
            let v = self
                .resolve(&value, &self.put_value)
                .map_err(FnError::Failed)?;
            node.kind = NodeKind::Scalar(v);
            node.tag = None;
            if node.style == Style::Any {
                node.style = Style::Plain;
            }
        }
        if !self.file_path.is_empty() {
            let text = yaml::emit_node(node, SeqIndent::Compact).trim().to_string();
            self.found.push(Found {
                file_path: self.file_path.clone(),
                field_path: path.trim_start_matches('.').to_string(),
                value: text,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
