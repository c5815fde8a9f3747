//! Which files of a package are KRM resources, reading them into annotated items, and
//! writing items back to files.
//!
//! Items carry kpt's reader annotations (path/index twins, seqindent, package-path)
//! while in flight; [`strip_reader`] removes them before [`write_items`] writes every
//! file through the encoder, as kpt's package writer does.

use std::collections::BTreeSet;

use super::krmignore::KrmIgnore;
pub use super::write::{
    clean_path, clean_path_cow, default_path, prune, write_items, write_items_keeping_duplicates,
};
use super::{PackageFiles, join};
use crate::kptfile::KPTFILE;
use crate::yaml::{self, Node, NodeKind, SeqIndent, Style};

/// Annotation: file path (legacy twin).
pub const LEGACY_PATH: &str = "config.kubernetes.io/path";
/// Annotation: index in file (legacy twin).
pub const LEGACY_INDEX: &str = "config.kubernetes.io/index";
/// Annotation: file path.
pub const PATH: &str = "internal.config.kubernetes.io/path";
/// Annotation: index in file.
pub const INDEX: &str = "internal.config.kubernetes.io/index";
/// Annotation: sequence indent style of the source document.
pub const SEQ_INDENT: &str = "internal.config.kubernetes.io/seqindent";
/// Annotation: package (root-relative dir) a resource belongs to.
pub const PACKAGE_PATH: &str = "internal.config.kubernetes.io/package-path";
/// Annotation: function call ids.
pub const ID: &str = "internal.config.kubernetes.io/id";
/// Annotation: legacy function call id.
pub const LEGACY_ID: &str = "config.k8s.io/id";
/// Annotation: selection ids.
pub const KPT_RESOURCE_ID: &str = "internal.config.kubernetes.io/kpt-resource-id";
/// Annotation used by SDKs to reconcile legacy annotations.
pub const MIGRATION_ID: &str = "internal.config.kubernetes.io/annotations-migration-resource-id";

/// What kpt's package writer removes before writing a resource: the reader's
/// annotations (kyaml's writers clear path, index and seqindent) and kpt's package
/// path. Function call ids are removed after each call instead, so ids a source
/// file already carries survive a render that runs no function on it, as in kpt.
const READER: &[&str] = &[
    LEGACY_INDEX,
    LEGACY_PATH,
    INDEX,
    PATH,
    SEQ_INDENT,
    PACKAGE_PATH,
];

/// What kpt and kyaml add besides the reader's: call ids, selection ids and merge
/// bookkeeping.
const BOOKKEEPING: &[&str] = &[
    ID,
    LEGACY_ID,
    KPT_RESOURCE_ID,
    MIGRATION_ID,
    "config.kubernetes.io/merge-source",
];

/// Errors reading or writing resources.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ResourceError {
    /// A resource file is not valid YAML.
    #[error("{path}: {message}")]
    Yaml { path: String, message: String },
    /// A resource would be written outside the package.
    #[error("function must not modify resources outside of package: resource has path {0}")]
    OutsidePackage(String),
    /// Two resources claim the same slot.
    #[error("resource at path {path:?} and index {index:?} already exists")]
    Duplicate { path: String, index: String },
    /// A file is not UTF-8.
    #[error("{0}: not valid UTF-8")]
    NotUtf8(String),
    /// A file's resources cannot be put in order: kyaml's `SortNodes` text.
    #[error("{0}")]
    BadIndex(String),
}

impl ResourceError {
    /// A short machine-readable kind: unreadable resource files and resources a
    /// pipeline placed where they cannot go are all the package content's
    /// fault, so always `"invalid-input"`.
    pub fn kind(&self) -> &'static str {
        "invalid-input"
    }
}

/// The resource files read (those that held a resource), for [`prune`] to delete
/// the ones no output item lives in any more.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    files: BTreeSet<String>,
}

impl Sources {
    /// The root-relative paths of every resource file read.
    pub fn files(&self) -> impl Iterator<Item = &str> {
        self.files.iter().map(String::as_str)
    }
}

/// Is this file name one kpt reads as resources?
pub fn is_resource_file(name: &str) -> bool {
    let base = name.rsplit('/').next().unwrap_or(name);
    base == KPTFILE || base.ends_with(".yaml") || base.ends_with(".yml") || base.ends_with(".json")
}

/// Read the resources of package `pkg` (own files only, `.krmignore` applied), in
/// lexical file order then document order, annotated with paths relative to `pkg`.
pub fn read_package(
    files: &PackageFiles,
    pkg: &str,
    sources: &mut Sources,
) -> Result<Vec<Node>, ResourceError> {
    let ignore = files
        .get_text(&join(pkg, ".krmignore"))
        .map(KrmIgnore::parse);
    let mut items = Vec::new();
    for (full, rel) in files.own_files(pkg) {
        if !is_resource_file(&rel) || rel == ".krmignore" {
            continue;
        }
        if ignore.as_ref().is_some_and(|k| k.is_ignored(&rel)) {
            continue;
        }
        read_file(files, &full, &rel, pkg, &mut items, sources)?;
    }
    Ok(items)
}

/// Read one resource file as kyaml's `ByteReader` does, appending its documents to
/// `items` annotated with `rel` (the path the item is written back to) and package `pkg`.
pub(crate) fn read_file(
    files: &PackageFiles,
    full: &str,
    rel: &str,
    pkg: &str,
    items: &mut Vec<Node>,
    sources: &mut Sources,
) -> Result<(), ResourceError> {
    let text = files
        .get_text(full)
        .ok_or_else(|| ResourceError::NotUtf8(full.to_string()))?;
    if let Some(message) = invalid_separator(text) {
        return Err(ResourceError::Yaml {
            path: full.to_string(),
            message,
        });
    }
    let docs = yaml::parse_stream(text).map_err(|e| ResourceError::Yaml {
        path: full.to_string(),
        message: format!("MalformedYAMLError: {}", document_error(text, &e).go_yaml()),
    })?;
    let mut index = 0usize;
    for doc in docs {
        if is_empty_doc(&doc.root) {
            continue;
        }
        if let Some(message) = not_a_mapping(&doc.root) {
            return Err(ResourceError::Yaml {
                path: full.to_string(),
                message,
            });
        }
        let seq_indent = doc.seq_indent();
        let mut node = doc.root;
        // kyaml's reader (`WrapBareSeqNode`) wraps a document that is a bare list in
        // a mapping, so it carries its file annotations like any resource.
        if matches!(node.kind, crate::yaml::NodeKind::Sequence(_)) {
            let mut wrapper = Node::mapping();
            wrapper.set(BARE_SEQ_KEY, node);
            node = wrapper;
        }
        annotate(&mut node, rel, index, seq_indent, pkg);
        items.push(node);
        index += 1;
    }
    // kyaml's reader yields nothing for an empty or comment-only file, so kpt never
    // learns of it and never prunes it: only files that held a resource are tracked.
    if index > 0 {
        sources.files.insert(full.to_string());
    }
    Ok(())
}

/// kyaml's `ByteReader` cuts a stream into documents itself, at every `\n---` up to the
/// next line break (its `splitDocuments` regexp, matches not overlapping, after `\r\n`
/// became `\n`), and refuses a separator line with anything but blanks or a comment
/// after the `---`, before any document is parsed. A `---` on the first line, or on a
/// last line without a line break, is left to the YAML parser.
pub(crate) fn invalid_separator(text: &str) -> Option<String> {
    let text = text.replace("\r\n", "\n");
    let mut pos = 0;
    while let Some(i) = text[pos..].find("\n---") {
        let start = pos + i;
        let Some(nl) = text[start + 4..].find('\n') else {
            break;
        };
        let end = start + 4 + nl;
        let rest = text[start + 4..end].trim();
        if !rest.is_empty() && !rest.starts_with('#') {
            return Some(format!(
                "invalid document separator: {}",
                text[start..end].trim()
            ));
        }
        pos = end + 1;
    }
    None
}

/// kyaml's `ByteReader` splits a file at its `---` lines and decodes each document on
/// its own, so go-yaml's line numbers count from the failing document's start: the
/// error of that document parsed alone (the whole file's error if it parses alone).
pub(crate) fn document_error(text: &str, whole: &yaml::YamlError) -> yaml::YamlError {
    let (mut from, mut to) = (0usize, text.len());
    let mut at = 0usize;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let line_no = i + 1;
        if line.trim_end() == "---" {
            if whole.line < line_no {
                to = at;
                break;
            }
            from = at + line.len();
        }
        at += line.len();
    }
    match yaml::parse_stream(&text[from..to]) {
        Err(e) => e,
        Ok(_) => yaml::YamlError {
            message: whole.message.clone(),
            line: whole.line,
            column: whole.column,
            go_line: whole.go_line,
        },
    }
}

/// kyaml sets the reader annotations on each document: on a scalar document that
/// fails as `ErrorIfInvalid` words it (the empty field path at the document's root),
/// and so it does on a `metadata` that is neither a mapping nor null, or an
/// `annotations` holding a list (an empty one, or a scalar, its `ClearEmptyAnnotations`
/// removes first).
pub(crate) fn not_a_mapping(root: &Node) -> Option<String> {
    if root.is_mapping() {
        let meta = root.get("metadata")?;
        if !meta.is_mapping() {
            return (!meta.is_null()).then(|| wrong_kind(meta));
        }
        let ann = meta.get("annotations")?;
        let listed = matches!(&ann.kind, NodeKind::Sequence(items) if !items.is_empty());
        return listed.then(|| wrong_kind(ann));
    }
    if !root.is_scalar() || root.tag.as_deref() == Some("!!null") {
        return None;
    }
    let text = root.as_str()?;
    if matches!(text, "null" | "~" | "Null" | "NULL") && root.style == Style::Plain {
        return None;
    }
    Some(wrong_kind(root))
}

/// [`not_a_mapping`] for a document kyaml reads without wrapping a bare list (a
/// function's output): a list there fails too, when the reader sets its index
/// annotation on it.
pub(crate) fn not_a_resource(root: &Node) -> Option<String> {
    match root.kind {
        NodeKind::Sequence(_) => Some(wrong_kind(root)),
        _ => not_a_mapping(root),
    }
}

/// kyaml's `ErrorIfInvalid` text for a node that should be a mapping, in the words of
/// the kyaml kpt is built with (kpt 1.0.0-beta.56 and HEAD alike): no path, the node
/// as the encoder writes it.
fn wrong_kind(n: &Node) -> String {
    let shown = yaml::emit_node(n, SeqIndent::default());
    yaml::kyaml_kind::wrong_kind_now("MappingNode", yaml::kyaml_kind::kind_name(n), &shown)
}

/// kyaml's `IsYNodeEmptyDoc`: the reader skips a document whose node is a null
/// (empty, `~`, `null`, or tagged `!!null`).
pub(crate) fn is_empty_doc(root: &Node) -> bool {
    if !root.is_scalar() {
        return false;
    }
    match root.tag.as_deref() {
        Some(tag) => tag == "!!null",
        None => {
            root.as_str().is_some_and(str::is_empty)
                || root.style == Style::Plain
                    && matches!(root.as_str(), Some("~" | "null" | "Null" | "NULL"))
        }
    }
}

/// Sets `key` of the annotations mapping `ann` as kyaml's `AnnotationSetter` does,
/// through its `FieldSetter`: the old value node is replaced whole (its comments go
/// with it).
fn set_like_kyaml(ann: &mut Node, key: &str, value: &str) {
    let existing = ann
        .entries_mut()
        .and_then(|e| e.iter_mut().find(|(k, _)| k.as_str() == Some(key)));
    match existing {
        Some((_, old)) => *old = annotation_value(Some(old), value),
        None => {
            ann.set(key, annotation_value(None, value));
        }
    }
}

/// The string node kyaml's `AnnotationSetter` puts at an annotation: single-quoted
/// when the annotation is new; an existing one keeps its value's style (`FieldSetter`
/// copies the old node's style onto the new one), so a plain value stays plain where
/// it can.
fn annotation_value(existing: Option<&Node>, s: &str) -> Node {
    let mut n = Node::string(s);
    n.style = match existing.map(|e| e.style) {
        None => Style::SingleQuoted,
        Some(st @ (Style::SingleQuoted | Style::DoubleQuoted | Style::Literal | Style::Folded)) => {
            st
        }
        Some(_) => Style::Any,
    };
    n
}

/// Add kpt's reader annotations to an item.
pub fn annotate(node: &mut Node, rel_path: &str, index: usize, seq: SeqIndent, pkg: &str) {
    if !node.is_mapping() {
        return;
    }
    let seq = match seq {
        SeqIndent::Compact => "compact",
        SeqIndent::Wide => "wide",
    };
    let idx = index.to_string();
    let pkg = if pkg.is_empty() { "." } else { pkg };
    // kyaml's `ByteReader` copies the twins a file already carries first, then sets its
    // own annotations in key order, so a twin it adds comes before them.
    copy_twins(node);
    clear_empty_metadata(node);
    let ann = node.ensure_mapping(&["metadata", "annotations"]);
    for (k, v) in [
        (LEGACY_INDEX, idx.as_str()),
        (LEGACY_PATH, rel_path),
        (INDEX, idx.as_str()),
        (PATH, rel_path),
        (SEQ_INDENT, seq),
        (PACKAGE_PATH, pkg),
    ] {
        set_like_kyaml(ann, k, v);
    }
}

/// kyaml's `ByteReader` on a document it takes as it is: the twins it carries copied,
/// then both index annotations set to its place among the stream's documents.
pub(crate) fn stamp_stream_index(node: &mut Node, index: usize) {
    if !node.is_mapping() {
        return;
    }
    copy_twins(node);
    let index = index.to_string();
    set_annotations(node, &[(LEGACY_INDEX, &index), (INDEX, &index)]);
}

/// kyaml's `CopyLegacyAnnotations`: for the path, the index and the call id, a resource
/// that carries only one of the two annotations gets the other (an empty value counts as
/// absent). Two ids that differ are left as they are; a function refuses them
/// ([`mismatched_ids`]).
fn copy_twins(node: &mut Node) {
    for (legacy_key, key) in [(LEGACY_PATH, PATH), (LEGACY_INDEX, INDEX), (LEGACY_ID, ID)] {
        let new = annotation(node, key).filter(|v| !v.is_empty());
        let legacy = annotation(node, legacy_key).filter(|v| !v.is_empty());
        match (new.map(str::to_string), legacy.map(str::to_string)) {
            (Some(v), None) => set_annotation(node, legacy_key, &v),
            (None, Some(v)) => set_annotation(node, key, &v),
            _ => {}
        }
    }
}

/// kyaml's check before it hands resources to a function: both id annotations
/// present and different cannot say which the user meant.
pub fn mismatched_ids(node: &Node) -> Option<&'static str> {
    let id = annotation(node, ID).filter(|v| !v.is_empty());
    let legacy = annotation(node, LEGACY_ID).filter(|v| !v.is_empty());
    match (id, legacy) {
        (Some(a), Some(b)) if a != b => {
            Some("resource input to function has mismatched legacy and internal id annotations")
        }
        _ => None,
    }
}

/// Read an annotation value.
pub fn annotation<'a>(node: &'a Node, key: &str) -> Option<&'a str> {
    node.get_path(&["metadata", "annotations", key])
        .and_then(Node::as_str)
}

/// Set an annotation as kyaml's `SetAnnotation` does (see [`annotation_value`]).
pub fn set_annotation(node: &mut Node, key: &str, value: &str) {
    set_annotations(node, &[(key, value)]);
}

/// Set several annotations, as [`set_annotation`] one after the other would.
pub fn set_annotations(node: &mut Node, pairs: &[(&str, &str)]) {
    if node.is_mapping() {
        // kyaml's `AnnotationSetter` first clears an empty `annotations` (and then an
        // empty `metadata`), so they are made anew at the end of their mapping.
        clear_empty_metadata(node);
        let ann = node.ensure_mapping(&["metadata", "annotations"]);
        for (k, v) in pairs {
            set_like_kyaml(ann, k, v);
        }
    }
}

/// Remove an annotation, dropping an `annotations` map left empty.
pub fn remove_annotation(node: &mut Node, key: &str) {
    remove_annotations(node, &[key]);
}

/// Remove annotations, dropping an `annotations` map left empty (the same
/// result as removing them one at a time).
pub fn remove_annotations(node: &mut Node, keys: &[&str]) {
    let Some(meta) = node.get_mut("metadata") else {
        return;
    };
    let Some(entries) = meta.get_mut("annotations").and_then(Node::entries_mut) else {
        return;
    };
    let before = entries.len();
    if keys.len() <= 64 {
        // One pass, dropping the first entry of each key: removing them one at a time
        // shifted the remaining entries (320 bytes each) once per key, and this runs on
        // every item after every function and again when writing.
        let mut gone = 0u64;
        entries.retain(|(k, _)| {
            let Some(k) = k.as_str() else {
                return true;
            };
            // The first of `keys` naming it that has not removed an entry yet.
            match keys
                .iter()
                .enumerate()
                .position(|(j, x)| *x == k && gone & (1 << j) == 0)
            {
                Some(j) => {
                    gone |= 1 << j;
                    false
                }
                None => true,
            }
        });
    } else {
        for k in keys {
            if let Some(i) = entries.iter().position(|(e, _)| e.as_str() == Some(*k)) {
                entries.remove(i);
            }
        }
    }
    if entries.len() < before && entries.is_empty() {
        meta.remove("annotations");
    }
}

/// Remove every kpt-internal annotation (path/index twins, ids, seqindent, ...), then,
/// as kyaml's writer does (`ClearEmptyAnnotations`), an `annotations` or `metadata`
/// field left with nothing in it.
pub fn strip_internal(node: &mut Node) {
    remove_annotations(node, READER);
    remove_annotations(node, BOOKKEEPING);
    clear_empty_metadata(node);
}

/// Remove the call ids, selection ids and merge bookkeeping, keeping the reader's
/// annotations (a 3-way merge result still has to be written to its files).
pub fn strip_bookkeeping(node: &mut Node) {
    remove_annotations(node, BOOKKEEPING);
}

/// Remove what kpt's package writer removes (the reader's annotations and the
/// package path), keeping annotations a source file may carry itself; then, as kyaml's
/// writer does (`ClearEmptyAnnotations`), an `annotations` field with nothing in it and
/// a `metadata` field left with nothing in it (a kustomization without metadata stays
/// without).
pub fn strip_reader(node: &mut Node) {
    remove_annotations(node, READER);
    clear_empty_metadata(node);
}

/// kyaml's `FieldClearer{IfEmpty}` removes a field whose value has no children: an
/// empty mapping or sequence, or any scalar (null included).
fn childless(n: &Node) -> bool {
    match &n.kind {
        NodeKind::Mapping(e) => e.is_empty(),
        NodeKind::Sequence(i) => i.is_empty(),
        _ => true,
    }
}

fn clear_empty_metadata(node: &mut Node) {
    let Some(meta) = node.get_mut("metadata") else {
        return;
    };
    if meta.is_mapping() {
        if meta.get("annotations").is_some_and(childless) {
            meta.remove("annotations");
        }
    } else if !meta.is_null() {
        // kyaml refuses to look into a metadata that is no mapping; left as it is.
        return;
    }
    if childless(meta) {
        node.remove("metadata");
    }
}

/// Path of an item (internal twin wins, legacy accepted).
pub fn item_path(node: &Node) -> Option<&str> {
    annotation(node, PATH).or_else(|| annotation(node, LEGACY_PATH))
}

/// Index of an item.
pub fn item_index(node: &Node) -> Option<&str> {
    annotation(node, INDEX).or_else(|| annotation(node, LEGACY_INDEX))
}

/// The key kyaml wraps a bare list document under (`kio.BareSeqNodeWrappingKey`).
pub const BARE_SEQ_KEY: &str = "bareSeqNodeWrappingKey";

/// Make the path/index twins agree (internal wins when both exist).
pub fn sync_twins(node: &mut Node) {
    for (internal, legacy) in [(PATH, LEGACY_PATH), (INDEX, LEGACY_INDEX)] {
        let i = annotation(node, internal).map(str::to_string);
        let l = annotation(node, legacy).map(str::to_string);
        match (i, l) {
            (Some(i), Some(l)) if i != l => set_annotation(node, legacy, &i),
            (Some(i), None) => set_annotation(node, legacy, &i),
            (None, Some(l)) => set_annotation(node, internal, &l),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{SeqIndent, emit_node, parse_one};

    /// What removing the keys one at a time does.
    fn one_at_a_time(node: &mut Node, keys: &[&str]) {
        let Some(meta) = node.get_mut("metadata") else {
            return;
        };
        let Some(ann) = meta.get_mut("annotations") else {
            return;
        };
        let mut removed = false;
        for k in keys {
            removed |= ann.remove(k).is_some();
        }
        if removed && ann.entries().is_empty() {
            meta.remove("annotations");
        }
    }

    #[test]
    fn removing_annotations_in_one_pass_is_removing_them_one_at_a_time() {
        let mut dup = parse_one("metadata:\n  annotations:\n    a: 1\n    b: 2\n").expect("yaml");
        let ann = dup
            .get_path_mut(&["metadata", "annotations"])
            .and_then(Node::entries_mut)
            .expect("map");
        ann.push((Node::string("a"), Node::string("3")));
        let cases: Vec<(Node, &[&str])> = vec![
            (dup.clone(), &["a"]),
            (dup.clone(), &["a", "a"]),
            (dup.clone(), &["b", "zz", "a"]),
            (dup, &["a", "b", "a"]),
            (
                parse_one("metadata:\n  annotations:\n    a: 1\n  name: x\n").expect("yaml"),
                &["a"],
            ),
            (
                parse_one("metadata:\n  annotations: [a]\n").expect("yaml"),
                &["a"],
            ),
            (
                parse_one("metadata:\n  annotations: {}\n").expect("yaml"),
                &["a"],
            ),
            (parse_one("kind: X\n").expect("yaml"), &["a"]),
        ];
        for (node, keys) in cases {
            let (mut a, mut b) = (node.clone(), node);
            remove_annotations(&mut a, keys);
            one_at_a_time(&mut b, keys);
            assert_eq!(a, b, "{keys:?}: {}", emit_node(&a, SeqIndent::Compact));
        }
    }

    #[test]
    fn separators_are_checked_as_kyamls_split_checks_them() {
        let bad = "a: 1\n---  more\nb: 2\n";
        assert_eq!(
            invalid_separator(bad).as_deref(),
            Some("invalid document separator: ---  more")
        );
        assert_eq!(
            invalid_separator("a: 1\r\n---next\r\nb: 2\r\n").as_deref(),
            Some("invalid document separator: ---next")
        );
        // Blanks or a comment after the marker; a first line; a last line without a
        // line break; a line right after a separator (the matches do not overlap).
        for fine in [
            "a: 1\n---   \nb: 2\n",
            "a: 1\n--- # two\nb: 2\n",
            "--- x\na: 1\n",
            "a: 1\n---x",
            "a: 1\n---\n--- z\nb: 1\n",
        ] {
            assert_eq!(invalid_separator(fine), None, "{fine:?}");
        }
        let mut files = PackageFiles::new();
        files.insert("r.yaml", bad.as_bytes().to_vec());
        let e = read_package(&files, "", &mut Sources::default()).expect_err("separator");
        assert_eq!(
            e.to_string(),
            "r.yaml: invalid document separator: ---  more"
        );
    }

    #[test]
    fn twins_a_file_carries_are_copied_before_the_readers_annotations_are_set() {
        let mut files = PackageFiles::new();
        let text = "kind: K\nmetadata:\n  name: n\n  annotations:\n    own: x\n    config.k8s.io/id: '4'\n    config.kubernetes.io/index: '9'\n";
        files.insert("k.yaml", text.as_bytes().to_vec());
        let items = read_package(&files, "", &mut Sources::default()).expect("read");
        let keys: Vec<&str> = items[0]
            .get_path(&["metadata", "annotations"])
            .map(Node::entries)
            .unwrap_or_default()
            .iter()
            .filter_map(|(k, _)| k.as_str())
            .collect();
        assert_eq!(
            keys,
            [
                "own",
                LEGACY_ID,
                LEGACY_INDEX,
                INDEX,
                ID,
                LEGACY_PATH,
                PATH,
                SEQ_INDENT,
                PACKAGE_PATH
            ]
        );
        assert_eq!(item_index(&items[0]), Some("0"));
        assert_eq!(annotation(&items[0], ID), Some("4"));
    }

    #[test]
    fn null_documents_are_skipped_as_kyaml_skips_them() {
        let mut files = PackageFiles::new();
        let text = "apiVersion: v1\nkind: A\nmetadata:\n  name: x\n---\n~\n---\nnull\n---\n!!null\n---\n# only\n";
        files.insert("r.yaml", text.as_bytes().to_vec());
        files.insert("s.yaml", b"--- ~\n".to_vec());
        let mut sources = Sources::default();
        let items = read_package(&files, "", &mut sources).expect("read");
        assert_eq!(items.len(), 1);
        assert_eq!(item_path(&items[0]), Some("r.yaml"));
        // A quoted string is no null: kyaml refuses it as a scalar document.
        files.insert("t.yaml", b"--- 'null'\n".to_vec());
        let e = read_package(&files, "", &mut Sources::default()).expect_err("scalar");
        assert!(
            e.to_string()
                .contains("wrong node kind: expected MappingNode but got ScalarNode"),
            "{e}"
        );
    }
}
