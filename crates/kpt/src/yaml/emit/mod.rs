//! yaml.v3-compatible emitter: [`events`] turns a [`Node`] tree into the
//! event stream yaml.v3's encoder would produce, [`machine`] runs the ported
//! libyaml/yaml.v3 emitter over it.

mod events;
mod machine;
mod props;
mod scalar;

use super::document::SeqIndent;
use super::node::Node;

/// Emits `nodes` as consecutive documents with one encoder, as kyaml's
/// `ByteWriter` does (documents after the first start with `---`).
pub fn emit_documents<'a>(docs: impl IntoIterator<Item = (&'a Node, SeqIndent)>) -> String {
    let mut out = String::new();
    let mut first = true;
    // A line comment no event wrote yet (a block sequence's: yaml.v3 leaves it pending)
    // goes on with the encoder to the next document.
    let mut pending: &str = "";
    for (node, seq) in docs {
        let mut em = machine::Emitter::new(seq == SeqIndent::Compact);
        em.line = pending;
        em.emit_all(&events::document_events(node));
        pending = em.line;
        if !first {
            out.push_str("---\n");
        }
        first = false;
        out.push_str(&em.out);
    }
    out
}

/// yaml.v3 encoding of one node as a single document.
pub fn emit_one(node: &Node, seq: SeqIndent) -> String {
    emit_documents([(node, seq)])
}

#[cfg(test)]
mod tests;
