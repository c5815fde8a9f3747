//! Lossless YAML for KRM files, modelled on go-yaml v3 as kpt/kyaml use it.
//!
//! [`parse_stream`] turns text into [`Document`]s holding a [`Node`] tree
//! that keeps comments, styles, tags and anchors. [`emit_stream`] writes
//! documents back: a document whose tree was not changed is written as its
//! original bytes; a changed one is written exactly as yaml.v3's encoder
//! (configured like kyaml: indent 2, the document's sequence indent style,
//! unlimited width) would write it, so output matches `kpt fn render`. Render and eval
//! write whole files through [`emit_documents`] (kpt rewrites every file it read), and
//! [`go_json`] for a `.json` file's lone resource.
//!
//! It does not do schema-aware merging, comment healing or KRM semantics;
//! those live elsewhere in the crate on top of this model.

mod document;
mod emit;
mod fingerprint;
pub mod go_json;
pub mod kyaml_kind;
pub(crate) mod limits;
mod node;
mod parse;
mod resolve;
mod value;

pub use document::{
    Document, SeqIndent, YamlError, emit_node, emit_stream, parse_one, parse_stream,
};
pub use emit::emit_documents;
pub use limits::{EXCESSIVE_ALIASING, MAX_DEPTH, VALUE_MAX_DEPTH};
pub use node::{Node, NodeKind, Style};
pub use parse::collapse_document_head;
pub use resolve::{resolve_plain, string_needs_quotes};
pub use value::ValueError;
