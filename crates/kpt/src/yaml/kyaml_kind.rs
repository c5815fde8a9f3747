//! kyaml's `ErrorIfInvalid` text, which kpt and the catalog's functions print when a
//! node is not of the kind a path or reader expects:
//! `wrong Node Kind for <path> expected: <Kind>Node was <Kind>Node: value: {<node>}`.
//! How the node is shown differs by caller (the encoder, a scalar's raw text, a node
//! rebuilt from a Go map), so callers pass it.

use super::{Node, NodeKind};

/// yaml.v3's name for the node's kind.
pub fn kind_name(n: &Node) -> &'static str {
    match n.kind {
        NodeKind::Mapping(_) => "MappingNode",
        NodeKind::Sequence(_) => "SequenceNode",
        NodeKind::Scalar(_) => "ScalarNode",
        NodeKind::Alias(_) => "AliasNode",
    }
}

/// The message for `found` (a yaml.v3 kind name) at `path` where `expected` was
/// wanted, the node shown as `shown` (trimmed, as kyaml prints `RNode.String()`).
pub fn wrong_kind(path: &str, expected: &str, found: &str, shown: &str) -> String {
    format!(
        "wrong Node Kind for {path} expected: {expected} was {found}: value: {{{}}}",
        shown.trim()
    )
}

/// The same check as the kyaml kpt HEAD is built with words it: no path, and the node
/// as the encoder writes it, untrimmed (`wrong node kind: expected <Kind>Node but got
/// <Kind>Node: node contents:\n<node>`). kpt HEAD's own readers print this; a
/// catalog function keeps the words of the kyaml its image was built with.
pub fn wrong_kind_now(expected: &str, found: &str, encoded: &str) -> String {
    format!("wrong node kind: expected {expected} but got {found}: node contents:\n{encoded}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kyamls_words() {
        let n = Node::sequence();
        assert_eq!(kind_name(&n), "SequenceNode");
        assert_eq!(
            wrong_kind("spec", "MappingNode", kind_name(&n), " []\n"),
            "wrong Node Kind for spec expected: MappingNode was SequenceNode: value: {[]}"
        );
    }

    #[test]
    fn current_kyamls_words_keep_the_whole_encoding() {
        assert_eq!(
            wrong_kind_now("MappingNode", "SequenceNode", "- nope\n"),
            "wrong node kind: expected MappingNode but got SequenceNode: node contents:\n- nope\n"
        );
    }
}
