//! The node model: a yaml.v3-like tree that keeps comments, styles, tags and
//! anchors, plus the accessors and edit helpers the rest of the crate uses.

use super::limits::guard;
use super::resolve;

/// One YAML node (scalar, mapping, sequence or alias), modelled on
/// go-yaml v3's `yaml.Node`.
///
/// Tags: `tag` is `None` when the tag is implicit. A `Some` tag on a node
/// with a concrete style (as produced by the parser) is an explicit tag and
/// is always emitted; on a node with [`Style::Any`] it behaves like a tag set
/// by Go code (yaml.v3 drops it on output when the value resolves to it).
///
/// `Clone`, `PartialEq`, `Debug` and dropping are written out so that they
/// run under the stack guard: a tree may be nested as deeply as the parser
/// allows (or deeper, when built by code) without overflowing the stack.
pub struct Node {
    pub kind: NodeKind,
    /// How it was / should be written.
    pub style: Style,
    /// Explicit tag as written (`"!!str"`, `"!foo"`), `None` when implicit.
    pub tag: Option<String>,
    /// Anchor name without the `&`.
    pub anchor: Option<String>,
    /// yaml.v3 head comment: lines including the leading `#`, joined by `\n`.
    pub head_comment: String,
    pub line_comment: String,
    pub foot_comment: String,
}

#[derive(Debug, Clone, PartialEq)]
pub enum NodeKind {
    Scalar(String),
    Mapping(Vec<(Node, Node)>),
    Sequence(Vec<Node>),
    /// Alias to the anchor of this name (without the `*`).
    Alias(String),
}

impl Default for NodeKind {
    /// An empty scalar (no allocation), for taking a kind out of a node.
    fn default() -> NodeKind {
        NodeKind::Scalar(String::new())
    }
}

impl NodeKind {
    fn is_leaf(&self) -> bool {
        match self {
            NodeKind::Mapping(e) => e.is_empty(),
            NodeKind::Sequence(i) => i.is_empty(),
            NodeKind::Scalar(_) | NodeKind::Alias(_) => true,
        }
    }
}

impl Drop for NodeKind {
    // The compiler's drop glue recurses once per level; each collection's
    // children are dropped under the guard instead.
    fn drop(&mut self) {
        match self {
            NodeKind::Mapping(e) if !e.is_empty() => {
                let e = std::mem::take(e);
                guard(move || drop(e));
            }
            NodeKind::Sequence(i) if !i.is_empty() => {
                let i = std::mem::take(i);
                guard(move || drop(i));
            }
            _ => {}
        }
    }
}

impl Clone for Node {
    fn clone(&self) -> Node {
        let copy = || Node {
            kind: self.kind.clone(),
            style: self.style,
            tag: self.tag.clone(),
            anchor: self.anchor.clone(),
            head_comment: self.head_comment.clone(),
            line_comment: self.line_comment.clone(),
            foot_comment: self.foot_comment.clone(),
        };
        if self.kind.is_leaf() {
            copy()
        } else {
            guard(copy)
        }
    }
}

impl PartialEq for Node {
    fn eq(&self, other: &Node) -> bool {
        let same_props = self.style == other.style
            && self.tag == other.tag
            && self.anchor == other.anchor
            && self.head_comment == other.head_comment
            && self.line_comment == other.line_comment
            && self.foot_comment == other.foot_comment;
        same_props && guard(|| self.kind == other.kind)
    }
}

impl std::fmt::Debug for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        guard(|| {
            f.debug_struct("Node")
                .field("kind", &self.kind)
                .field("style", &self.style)
                .field("tag", &self.tag)
                .field("anchor", &self.anchor)
                .field("head_comment", &self.head_comment)
                .field("line_comment", &self.line_comment)
                .field("foot_comment", &self.foot_comment)
                .finish()
        })
    }
}

/// Presentation style. [`Style::Any`] lets the emitter choose (yaml.v3's zero
/// style). For mappings and sequences only `Flow` matters; anything else is
/// block style.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Style {
    #[default]
    Any,
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
    Folded,
    Flow,
}

impl Node {
    fn with_kind(kind: NodeKind, style: Style) -> Node {
        Node {
            kind,
            style,
            tag: None,
            anchor: None,
            head_comment: String::new(),
            line_comment: String::new(),
            foot_comment: String::new(),
        }
    }

    /// A string scalar; the emitter quotes it when needed, like kyaml's
    /// `SetField` with a string value: when it would resolve to another
    /// type, and also for YAML 1.1 booleans (`yes`, `on`, `n`...) and
    /// base-60 numbers. Use `tagged_scalar(s, "!!str")` for yaml.v3's own
    /// rule (no YAML 1.1 quoting).
    pub fn string(s: impl Into<String>) -> Node {
        Node::with_kind(NodeKind::Scalar(s.into()), Style::Any)
    }

    /// A scalar with a tag set by code, e.g. `("3", "!!int")`; the tag is
    /// dropped on output when the value resolves to it (so `3` is plain).
    pub fn tagged_scalar(value: impl Into<String>, tag: &str) -> Node {
        let mut n = Node::with_kind(NodeKind::Scalar(value.into()), Style::Any);
        n.tag = Some(tag.to_string());
        n
    }

    /// A plain scalar written exactly as given (no quoting decision other
    /// than libyaml's "is plain allowed here" analysis).
    pub fn plain(value: impl Into<String>) -> Node {
        Node::with_kind(NodeKind::Scalar(value.into()), Style::Plain)
    }

    /// An empty block mapping.
    pub fn mapping() -> Node {
        Node::with_kind(NodeKind::Mapping(Vec::new()), Style::Any)
    }

    /// An empty block sequence.
    pub fn sequence() -> Node {
        Node::with_kind(NodeKind::Sequence(Vec::new()), Style::Any)
    }

    /// An alias node `*name`.
    pub fn alias(name: impl Into<String>) -> Node {
        Node::with_kind(NodeKind::Alias(name.into()), Style::Any)
    }

    pub fn is_scalar(&self) -> bool {
        matches!(self.kind, NodeKind::Scalar(_))
    }
    pub fn is_mapping(&self) -> bool {
        matches!(self.kind, NodeKind::Mapping(_))
    }
    pub fn is_sequence(&self) -> bool {
        matches!(self.kind, NodeKind::Sequence(_))
    }
    pub fn is_alias(&self) -> bool {
        matches!(self.kind, NodeKind::Alias(_))
    }

    /// True for scalars resolving to `!!null` (plain `null`, `~`, empty, or
    /// an explicit `!!null` tag).
    pub fn is_null(&self) -> bool {
        self.is_scalar() && self.resolved_tag() == "!!null"
    }

    /// Scalar text; `None` for non-scalars.
    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            NodeKind::Scalar(s) => Some(s),
            _ => None,
        }
    }

    /// The tag per yaml.v3 resolution: explicit tags win (in short form),
    /// quoted/block/new strings are `!!str`, plain scalars are resolved.
    pub fn resolved_tag(&self) -> &str {
        if let Some(t) = &self.tag {
            return resolve::short_tag(t);
        }
        match &self.kind {
            NodeKind::Mapping(_) => "!!map",
            NodeKind::Sequence(_) => "!!seq",
            NodeKind::Alias(_) => "!!str",
            NodeKind::Scalar(v) => match self.style {
                Style::Plain => resolve::resolve_plain(v),
                _ => "!!str",
            },
        }
    }

    /// Mapping lookup by scalar key.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entries()
            .iter()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(_, v)| v)
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Node> {
        self.entries_mut()?
            .iter_mut()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(_, v)| v)
    }

    /// Walks mappings only.
    pub fn get_path(&self, path: &[&str]) -> Option<&Node> {
        path.iter().try_fold(self, |n, k| n.get(k))
    }

    pub fn get_path_mut(&mut self, path: &[&str]) -> Option<&mut Node> {
        let mut n = self;
        for k in path {
            n = n.get_mut(k)?;
        }
        Some(n)
    }

    /// Sets `key` to `value`. An existing pair keeps its key node (and its
    /// comments) and the value is replaced; the old value's comments are
    /// carried over where the new value has none. A missing key is appended
    /// (kyaml `SetField`). Returns `false` (and does nothing) when `self` is
    /// not a mapping.
    pub fn set(&mut self, key: &str, mut value: Node) -> bool {
        let Some(entries) = self.entries_mut() else {
            return false;
        };
        if let Some((_, v)) = entries.iter_mut().find(|(k, _)| k.as_str() == Some(key)) {
            if value.head_comment.is_empty() {
                value.head_comment = std::mem::take(&mut v.head_comment);
            }
            if value.line_comment.is_empty() {
                value.line_comment = std::mem::take(&mut v.line_comment);
            }
            if value.foot_comment.is_empty() {
                value.foot_comment = std::mem::take(&mut v.foot_comment);
            }
            *v = value;
        } else {
            // Keys are plain yaml.v3 strings (quoted only when they would
            // resolve to another type), as kyaml creates them.
            entries.push((Node::tagged_scalar(key, "!!str"), value));
        }
        true
    }

    /// Sets a string scalar. An existing scalar with the same text is left
    /// untouched; an existing scalar keeps its style (and comments) when that
    /// style can still represent the new text as a string, otherwise the
    /// emitter picks a style. Returns `false` when `self` is not a mapping.
    pub fn set_string(&mut self, key: &str, value: &str) -> bool {
        if !self.is_mapping() {
            return false;
        }
        if let Some(v) = self.get_mut(key)
            && v.is_scalar()
            && v.tag.is_none()
        {
            if v.as_str() == Some(value) {
                return true;
            }
            let keep = match v.style {
                Style::SingleQuoted | Style::DoubleQuoted => true,
                Style::Literal | Style::Folded => value.contains('\n'),
                _ => false,
            };
            v.kind = NodeKind::Scalar(value.to_string());
            if !keep {
                v.style = Style::Any;
            }
            return true;
        }
        self.set(key, Node::string(value))
    }

    /// Removes `key`, returning its value.
    pub fn remove(&mut self, key: &str) -> Option<Node> {
        let entries = self.entries_mut()?;
        let i = entries.iter().position(|(k, _)| k.as_str() == Some(key))?;
        Some(entries.remove(i).1)
    }

    /// Key/value pairs; empty for non-mappings.
    pub fn entries(&self) -> &[(Node, Node)] {
        match &self.kind {
            NodeKind::Mapping(e) => e,
            _ => &[],
        }
    }

    pub fn entries_mut(&mut self) -> Option<&mut Vec<(Node, Node)>> {
        match &mut self.kind {
            NodeKind::Mapping(e) => Some(e),
            _ => None,
        }
    }

    /// Sequence items; empty for non-sequences.
    pub fn items(&self) -> &[Node] {
        match &self.kind {
            NodeKind::Sequence(e) => e,
            _ => &[],
        }
    }

    pub fn items_mut(&mut self) -> Option<&mut Vec<Node>> {
        match &mut self.kind {
            NodeKind::Sequence(e) => Some(e),
            _ => None,
        }
    }

    /// Walks (creating where missing) nested mappings along `path` and
    /// returns the innermost one. Null scalars and non-mapping values on the
    /// way are replaced by empty mappings (keeping their comments).
    pub fn ensure_mapping(&mut self, path: &[&str]) -> &mut Node {
        let mut n = self;
        if !n.is_mapping() {
            n.kind = NodeKind::Mapping(Vec::new());
            n.style = Style::Any;
            n.tag = None;
        }
        for k in path {
            let needs = !n.get(k).is_some_and(Node::is_mapping);
            if needs {
                if n.get(k).is_some() {
                    let v = n.get_mut(k).expect("checked above");
                    v.kind = NodeKind::Mapping(Vec::new());
                    v.style = Style::Any;
                    v.tag = None;
                } else {
                    n.set(k, Node::mapping());
                }
            }
            n = n.get_mut(k).expect("ensured above");
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Node {
        let mut m = Node::mapping();
        m.set("a", Node::string("x"));
        let mut inner = Node::mapping();
        inner.set("c", Node::plain("3"));
        m.set("b", inner);
        m
    }

    #[test]
    fn get_and_paths() {
        let m = sample();
        assert_eq!(m.get("a").and_then(Node::as_str), Some("x"));
        assert_eq!(m.get_path(&["b", "c"]).and_then(Node::as_str), Some("3"));
        assert_eq!(
            m.get_path(&["b", "c"]).map(Node::resolved_tag),
            Some("!!int")
        );
        assert!(m.get_path(&["a", "c"]).is_none());
        assert!(m.get("zz").is_none());
    }

    #[test]
    fn set_keeps_key_and_old_comments() {
        let mut m = sample();
        m.entries_mut().expect("map")[0].0.head_comment = "# head".into();
        m.get_mut("a").expect("a").line_comment = "# line".into();
        assert!(m.set("a", Node::string("y")));
        assert_eq!(m.entries()[0].0.head_comment, "# head");
        assert_eq!(m.get("a").map(|n| n.line_comment.as_str()), Some("# line"));
        assert!(m.set("new", Node::string("z")));
        assert_eq!(m.entries().last().and_then(|e| e.0.as_str()), Some("new"));
        assert!(!Node::string("s").set("a", Node::string("b")));
    }

    #[test]
    fn set_string_keeps_or_drops_style() {
        let mut m = Node::mapping();
        let mut q = Node::string("80");
        q.style = Style::DoubleQuoted;
        m.set("port", q.clone());
        m.set_string("port", "80");
        assert_eq!(m.get("port"), Some(&q));
        m.set_string("port", "81");
        assert_eq!(m.get("port").map(|n| n.style), Some(Style::DoubleQuoted));
        m.set("p", Node::plain("x"));
        m.set_string("p", "true");
        assert_eq!(m.get("p").map(|n| n.style), Some(Style::Any));
        assert_eq!(m.get("p").map(Node::resolved_tag), Some("!!str"));
        // same text: untouched, even when it resolves to a bool
        m.set("b", Node::plain("true"));
        m.set_string("b", "true");
        assert_eq!(m.get("b").map(|n| n.style), Some(Style::Plain));
    }

    #[test]
    fn remove_and_items() {
        let mut m = sample();
        assert!(m.remove("a").is_some());
        assert!(m.remove("a").is_none());
        assert_eq!(m.entries().len(), 1);
        let mut s = Node::sequence();
        s.items_mut().expect("seq").push(Node::string("i"));
        assert_eq!(s.items().len(), 1);
        assert!(m.items().is_empty());
        assert!(s.entries().is_empty());
    }

    #[test]
    fn ensure_mapping_creates_and_replaces_null() {
        let mut m = Node::mapping();
        m.set("metadata", Node::plain(""));
        m.ensure_mapping(&["metadata", "annotations"])
            .set_string("k", "v");
        assert_eq!(
            m.get_path(&["metadata", "annotations", "k"])
                .and_then(Node::as_str),
            Some("v")
        );
        assert!(Node::plain("~").is_null());
        assert!(Node::plain("").is_null());
        assert!(!Node::string("").is_null());
        assert!(Node::tagged_scalar("", "!!null").is_null());
    }
}
