//! The field walker the setter-style catalog functions (apply-setters,
//! create-setters, search-replace) share: their Go `acceptImpl`.
//!
//! Mappings are visited before their values, sequences by element, scalars
//! last. Paths are built like the Go code builds them (`.a.b[0].c`, with the
//! leading dot that callers trim), because the paths end up in result
//! messages and in `by-path` matching.

use kpt::yaml::{Node, NodeKind};

use crate::FnError;

/// Callbacks of a walk.
pub(crate) trait Visitor {
    /// Called for every mapping, before its values are walked; may edit the
    /// mapping's pairs (keys and values).
    fn visit_mapping(&mut self, _node: &mut Node, _path: &str) -> Result<(), FnError> {
        Ok(())
    }
    /// Called for every scalar value (never for keys).
    fn visit_scalar(&mut self, node: &mut Node, path: &str) -> Result<(), FnError>;
}

/// Walks `node` depth-first.
pub(crate) fn accept<V: Visitor>(v: &mut V, node: &mut Node, path: &str) -> Result<(), FnError> {
    match &mut node.kind {
        NodeKind::Mapping(_) => {
            v.visit_mapping(node, path)?;
            if let Some(entries) = node.entries_mut() {
                for (k, val) in entries.iter_mut() {
                    let child = format!("{path}.{}", k.as_str().unwrap_or_default());
                    accept(v, val, &child)?;
                }
            }
            Ok(())
        }
        NodeKind::Sequence(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                accept(v, item, &format!("{path}[{i}]"))?;
            }
            Ok(())
        }
        NodeKind::Scalar(_) => v.visit_scalar(node, path),
        NodeKind::Alias(_) => Ok(()),
    }
}

/// The file an item came from (kioutil.GetFileAnnotations: the internal path
/// annotation, else its legacy twin), "" when unknown.
pub(crate) fn file_path(item: &Node) -> String {
    let ann = |k: &str| {
        item.get_path(&["metadata", "annotations", k])
            .and_then(Node::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let p = ann("internal.config.kubernetes.io/path");
    if p.is_empty() {
        ann("config.kubernetes.io/path")
    } else {
        p
    }
}

/// Go's `%q` (kpt's port of `strconv.Quote`).
pub(crate) use kpt::goquote::go_quote;

/// A line comment as yaml.v3 writes one set from Go code without the `#`.
pub(crate) fn line_comment(text: &str) -> String {
    if text.starts_with('#') {
        text.to_string()
    } else {
        format!("# {text}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_quote_escapes_like_go() {
        assert_eq!(go_quote("a\"b\\c\nd"), r#""a\"b\\c\nd""#);
        assert_eq!(go_quote("é\u{1}"), "\"é\\x01\"");
    }

    #[test]
    fn line_comment_adds_pound() {
        assert_eq!(line_comment("kpt-set: x"), "# kpt-set: x");
        assert_eq!(line_comment("# x"), "# x");
    }
}
