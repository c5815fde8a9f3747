//! Documents and streams: per-document source text for byte-identical
//! output of unchanged documents, and the stream-level parse/emit entry
//! points.

use super::fingerprint::{fingerprint, matches};
use super::node::Node;
use super::{emit, parse};

/// A parse error with a 1-based line and column. Always the input's fault:
/// [`YamlError::kind`] is `"invalid-input"`.
#[derive(Debug, thiserror::Error)]
#[error("{message} at line {line}, column {column}")]
pub struct YamlError {
    pub message: String,
    pub line: usize,
    pub column: usize,
    /// The line go-yaml v3 names for this error (`yaml: line N: ...`), `None` when it
    /// names none. libyaml keeps 0-based marks; go-yaml's `parser.fail` adds one only
    /// for scanner errors, so a parser error (`did not find expected key`, `did not find
    /// expected ',' or '}'`, ...) names the 0-based line of the construct it was
    /// parsing, and an error on the first line names no line at all.
    pub go_line: Option<usize>,
}

impl YamlError {
    /// A short machine-readable kind: the text given is not acceptable YAML.
    pub fn kind(&self) -> &'static str {
        "invalid-input"
    }

    /// The error as go-yaml v3 words it: `yaml: line N: message` or `yaml: message`.
    pub fn go_yaml(&self) -> String {
        match self.go_line {
            Some(n) => format!("yaml: line {n}: {}", self.message),
            None => format!("yaml: {}", self.message),
        }
    }
}

/// libyaml's reader check (go-yaml v3 `readerc.go`): only printable
/// characters, tab and line breaks may appear anywhere in a stream, comments
/// included. NUL bytes and other control characters are refused with
/// go-yaml's message.
fn check_characters(text: &str) -> Result<(), YamlError> {
    let allowed = |c: char| {
        matches!(c, '\t' | '\n' | '\r' | ' '..='~' | '\u{85}' | '\u{a0}'..='\u{d7ff}')
            || ('\u{e000}'..='\u{fffd}').contains(&c)
            || c >= '\u{10000}'
    };
    // Nearly all input is printable ASCII: find the first byte that is not.
    let suspect = first_non_printable_ascii(text.as_bytes());
    let Some(start) = suspect else {
        return Ok(());
    };
    let Some((at, _)) = text[start..].char_indices().find(|&(_, c)| !allowed(c)) else {
        return Ok(());
    };
    Err(error_at(
        text,
        start + at,
        "control characters are not allowed",
    ))
}

/// The first byte that is not printable ASCII, tab or a line break. Scans 64-byte blocks
/// without an early exit inside a block (the compiler vectorizes that), then finds the byte
/// in the block that has one: every document is scanned, so this is on the hot path.
fn first_non_printable_ascii(bytes: &[u8]) -> Option<usize> {
    let suspect = |b: u8| !matches!(b, b'\t' | b'\n' | b'\r' | b' '..=b'~');
    let mut offset = 0;
    for block in bytes.chunks(64) {
        if block.iter().fold(false, |any, &b| any | suspect(b)) {
            return block.iter().position(|&b| suspect(b)).map(|p| offset + p);
        }
        offset += block.len();
    }
    None
}

/// A lone carriage return (old Mac line ends) is a line break in YAML, as go-yaml reads
/// it: the text with each one turned into a line feed reads exactly as go-yaml reads the
/// original (scalars fold and break the same, lines are counted the same), and is written
/// back with line feeds, as kpt writes it. CRLF is left to the parser.
fn lone_carriage_returns_as_line_feeds(text: &str) -> std::borrow::Cow<'_, str> {
    let bytes = text.as_bytes();
    let lone = |i: usize| bytes[i] == b'\r' && bytes.get(i + 1) != Some(&b'\n');
    // Nearly every stream has no carriage return at all: one quick scan says so.
    if !bytes.contains(&b'\r') || !(0..bytes.len()).any(lone) {
        return std::borrow::Cow::Borrowed(text);
    }
    // Only ASCII bytes change, so the result is still UTF-8.
    let fixed: Vec<u8> = (0..bytes.len())
        .map(|i| if lone(i) { b'\n' } else { bytes[i] })
        .collect();
    std::borrow::Cow::Owned(
        String::from_utf8(fixed)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
    )
}

fn error_at(text: &str, at: usize, message: &str) -> YamlError {
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    // libyaml's reader errors carry no mark: go-yaml names no line for them.
    YamlError {
        message: message.into(),
        line,
        column,
        go_line: None,
    }
}

/// Indentation of block sequences nested in mappings, per document
/// (kyaml `DeriveSeqIndentStyle`): `Compact` puts `- ` at the parent key's
/// column, `Wide` indents it by two.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SeqIndent {
    #[default]
    Compact,
    Wide,
}

/// One YAML document of a stream.
#[derive(Debug, Clone)]
pub struct Document {
    pub root: Node,
    /// Exact text of this document as it appeared in the stream (including
    /// any `---` marker line and trailing `...`/comments), if parsed.
    source: Option<String>,
    /// Fingerprint of the root as parsed, to detect modifications without
    /// keeping a copy of the tree.
    original: Option<Box<[u8]>>,
    seq_indent: SeqIndent,
}

impl Document {
    /// A fresh document (no source), compact sequence indent.
    pub fn new(root: Node) -> Document {
        Document {
            root,
            source: None,
            original: None,
            seq_indent: SeqIndent::Compact,
        }
    }

    pub fn seq_indent(&self) -> SeqIndent {
        self.seq_indent
    }

    pub fn set_seq_indent(&mut self, s: SeqIndent) {
        self.seq_indent = s;
    }

    /// True when the document has no source or its tree differs from the
    /// parsed one (comments, styles, tags and anchors included).
    pub fn is_modified(&self) -> bool {
        self.source.is_none()
            || !self
                .original
                .as_ref()
                .is_some_and(|print| matches(&self.root, print))
    }

    /// This document alone, without `---`.
    pub fn to_yaml(&self) -> String {
        emit_node(&self.root, self.seq_indent)
    }
}

/// Parses a multi-document stream; an empty stream gives no documents.
pub fn parse_stream(text: &str) -> Result<Vec<Document>, YamlError> {
    check_characters(text)?;
    let text = &*lone_carriage_returns_as_line_feeds(text);
    if let Some(line) = parse::leading_document_end(text) {
        // A parser error: go-yaml names the 0-based line, none for the first.
        return Err(YamlError {
            message: "did not find expected node content".into(),
            line: line + 1,
            column: 1,
            go_line: (line != 0).then_some(line),
        });
    }
    let mut docs = Vec::new();
    for chunk in parse::split_documents(text) {
        let raw = &text[chunk.start..chunk.end];
        let root = parse::parse_document(raw, chunk.first_line)?;
        check_aliases(&root)?;
        docs.push(Document {
            original: Some(fingerprint(&root)),
            root,
            source: Some(raw.to_string()),
            seq_indent: parse::derive_seq_indent(raw),
        });
    }
    Ok(docs)
}

/// go-yaml's composer: an alias must name an anchor set earlier in the document (an
/// anchor counts from its node's start, so a node may refer to itself); otherwise
/// `unknown anchor 'x' referenced`, a failure that names no line.
fn check_aliases(root: &Node) -> Result<(), YamlError> {
    use super::node::NodeKind;
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        if let Some(a) = &n.anchor {
            seen.insert(a.as_str());
        }
        match &n.kind {
            NodeKind::Alias(name) if !seen.contains(name.as_str()) => {
                return Err(unknown_anchor(name));
            }
            NodeKind::Mapping(entries) => {
                for (k, v) in entries.iter().rev() {
                    stack.push(v);
                    stack.push(k);
                }
            }
            NodeKind::Sequence(items) => stack.extend(items.iter().rev()),
            _ => {}
        }
    }
    Ok(())
}

/// go-yaml's `unknown anchor 'x' referenced`, which names no line.
pub(crate) fn unknown_anchor(name: &str) -> YamlError {
    YamlError {
        message: format!("unknown anchor '{name}' referenced"),
        line: 1,
        column: 1,
        go_line: None,
    }
}

impl Document {
    /// The source without its `---` line and trailing `...`, for writing an
    /// unchanged document into a stream that is re-emitted; `None` when that
    /// cannot be done without losing text (directives, `--- content`).
    fn body(&self) -> Option<String> {
        let src = self.source.as_deref()?;
        let mut out = String::new();
        let mut seen_start = false;
        for line in src.split_inclusive('\n') {
            let l = line.trim_start_matches('\u{feff}');
            let t = l.trim_end_matches(['\n', '\r']);
            if !seen_start && t.starts_with("---") && t[3..].trim().is_empty() {
                seen_start = true;
                continue;
            }
            if t.starts_with('%') || t.starts_with("---") {
                return None;
            }
            if t.starts_with("...") && t[3..].trim().is_empty() {
                continue;
            }
            out.push_str(l);
        }
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        Some(out)
    }
}

/// Writes documents back. An unchanged stream gives back its exact bytes;
/// otherwise documents are joined with `---` lines as kyaml's `ByteWriter`
/// does, unchanged documents keeping their own text.
pub fn emit_stream(docs: &[Document]) -> String {
    // Each check walks the tree: do it once per document.
    let modified: Vec<bool> = docs.iter().map(Document::is_modified).collect();
    if !modified.contains(&true) {
        return docs.iter().filter_map(|d| d.source.as_deref()).collect();
    }
    let mut out = String::new();
    for (i, (d, &changed)) in docs.iter().zip(&modified).enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        match d.body().filter(|_| !changed) {
            Some(b) => out.push_str(&b),
            None => out.push_str(&emit_node(&d.root, d.seq_indent)),
        }
    }
    out
}

/// Parses a single-document string.
pub fn parse_one(text: &str) -> Result<Node, YamlError> {
    let mut docs = parse_stream(text)?;
    if docs.len() > 1 {
        return Err(YamlError {
            message: "expected a single document, found several".into(),
            line: 1,
            column: 1,
            go_line: None,
        });
    }
    Ok(docs
        .pop()
        .map(|d| d.root)
        .unwrap_or_else(|| Node::plain("")))
}

/// yaml.v3 encoding of one node as a document (indent 2, `seq` style).
pub fn emit_node(node: &Node, seq: SeqIndent) -> String {
    emit::emit_one(node, seq)
}
