//! The parser: splits a stream into documents (keeping each document's
//! exact source text) and parses each into a [`Node`] tree with yaml.v3-like
//! comment attribution.

mod block;
mod comments;
mod cursor;
mod flow;
mod flow_comments;
mod gap;
mod junk;
mod scalar;

use super::document::{SeqIndent, YamlError};
use super::node::Node;
use comments::{join, normalize_feet};
use cursor::Cursor;

/// One document's slice of the stream.
pub struct Chunk {
    /// Byte range in the stream.
    pub start: usize,
    pub end: usize,
    /// 0-based line of `start`.
    pub first_line: usize,
}

fn is_marker(line: &str, m: &str) -> bool {
    line.starts_with(m)
        && matches!(
            line.as_bytes().get(3),
            None | Some(b' ' | b'\t' | b'\r' | b'\n')
        )
}

/// The 0-based line of a `...` document end marker that comes before any document (only
/// blank and comment lines above it): libyaml skips extra end markers after a document,
/// but at the stream's start its parser wants a node there.
pub fn leading_document_end(text: &str) -> Option<usize> {
    for (i, line) in text.split_inclusive('\n').enumerate() {
        if is_marker(line, "...") {
            return Some(i);
        }
        if !is_blank_or_comment(line) {
            return None;
        }
    }
    None
}

fn is_blank_or_comment(line: &str) -> bool {
    let t = line.trim_start_matches([' ', '\t']);
    t.is_empty() || t.starts_with('#') || t == "\n" || t == "\r\n" || t.starts_with('\r')
}

/// Splits a stream into document chunks that partition it exactly.
pub fn split_documents(text: &str) -> Vec<Chunk> {
    let mut chunks = Vec::new();
    let mut start = 0;
    let mut start_line = 0;
    let mut in_doc = false; // current chunk has an explicit start or content
    let mut ended_at: Option<(usize, usize)> = None; // after a `...` line
    let mut off = 0;
    for (ln, line) in text.split_inclusive('\n').enumerate() {
        let line_start = off;
        off += line.len();
        let l = if ln == 0 {
            line.trim_start_matches('\u{feff}')
        } else {
            line
        };
        if is_marker(l, "---") {
            if in_doc || ended_at.is_some() {
                // kyaml cuts only at `---`: comments between a `...` and the next
                // `---` belong to the ended document (its end comment).
                let (s, sl) = (line_start, ln);
                chunks.push(Chunk {
                    start,
                    end: s,
                    first_line: start_line,
                });
                start = s;
                start_line = sl;
            }
            in_doc = true;
            ended_at = None;
        } else if is_marker(l, "...") {
            ended_at = Some((off, ln + 1));
        } else if l.starts_with('%') || is_blank_or_comment(l) {
        } else {
            if let Some((s, sl)) = ended_at.take() {
                chunks.push(Chunk {
                    start,
                    end: s,
                    first_line: start_line,
                });
                start = s;
                start_line = sl;
            }
            in_doc = true;
        }
    }
    if start < text.len() || chunks.is_empty() && !text.is_empty() {
        chunks.push(Chunk {
            start,
            end: text.len(),
            first_line: start_line,
        });
    }
    chunks
}

/// The text the node parser sees: LF line ends, no BOM, and marker and
/// directive lines blanked (keeping `--- ` line content) so lines and
/// columns still match the source. Also what follows a `...` line, if the
/// chunk has one: yaml.v3 makes the comment block right after the marker (up to
/// a blank line, any column) the document end's comment (`Some("")` when there
/// is none); the rest is lost.
fn parse_text(raw: &str, first_line: usize) -> (String, Option<String>) {
    let mut out = String::with_capacity(raw.len());
    let mut ended: Option<String> = None;
    let mut end_block_open = false;
    // kyaml cuts a stream at every `---` line but the first line's, and decodes each
    // piece alone: comments above a `---` that starts a later line are a piece of
    // their own, with no resource, and are lost (blanked here, keeping the lines).
    let before_marker = raw
        .split_inclusive('\n')
        .position(|l| is_marker(l.trim_end_matches(['\n', '\r']), "---"))
        .filter(|&at| {
            at > 0
                && raw
                    .split_inclusive('\n')
                    .take(at)
                    .enumerate()
                    .all(|(i, l)| {
                        let l = if i == 0 {
                            l.trim_start_matches('\u{feff}')
                        } else {
                            l
                        };
                        is_blank_or_comment(l)
                    })
        })
        .unwrap_or(0);
    for (i, line) in raw.split_inclusive('\n').enumerate() {
        let line = if i == 0 {
            line.trim_start_matches('\u{feff}')
        } else {
            line
        };
        let body = line.trim_end_matches('\n').trim_end_matches('\r');
        if let Some(end) = &mut ended {
            // After `...` the chunk holds only comments and blank lines, and the
            // parser sees none of it (nor the marker's line).
            let t = body.trim_start_matches([' ', '\t']);
            if end_block_open && t.starts_with('#') {
                join_line(end, t);
            } else {
                end_block_open = false;
            }
            continue;
        } else if i < before_marker {
        } else if is_marker(body, "---") {
            out.push_str("   ");
            // kyaml's stream split takes a later `---` line whole, a comment after the
            // marker with it; only the stream's first line reaches go-yaml as a marker.
            let rest = &body[3..];
            if first_line + i == 0 || !rest.trim_start_matches([' ', '\t']).starts_with('#') {
                out.push_str(rest);
            }
        } else if is_marker(body, "...") {
            ended = Some(String::new());
            end_block_open = true;
            continue;
        } else if body.starts_with('%') {
        } else {
            out.push_str(body);
        }
        if line.ends_with('\n') {
            out.push('\n');
        }
    }
    (out, ended)
}

/// The `%TAG handle prefix` directives before a document's `---`.
fn tag_directives(raw: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for line in raw.split('\n') {
        let line = line.trim_start_matches('\u{feff}').trim_end_matches('\r');
        if is_marker(line, "---") {
            break;
        }
        let mut words = line.split_whitespace();
        if words.next() == Some("%TAG")
            && let (Some(handle), Some(prefix)) = (words.next(), words.next())
        {
            out.push((handle.to_string(), prefix.to_string()));
        }
    }
    out
}

fn join_line(block: &mut String, line: &str) {
    if !block.is_empty() {
        block.push('\n');
    }
    block.push_str(line);
}

/// Parses one document chunk.
pub fn parse_document(raw: &str, first_line: usize) -> Result<Node, YamlError> {
    let (text, ended) = parse_text(raw, first_line);
    let mut c = Cursor::new(text, first_line);
    c.tag_handles = tag_directives(raw);
    // go-yaml's composer resolves each alias as its event arrives: an unknown one
    // before the point where the text stops parsing is the error it reports.
    document_in(&mut c, raw, first_line, ended).map_err(|e| match c.unknown_alias.take() {
        Some(name) => super::document::unknown_anchor(&name),
        None => e,
    })
}

fn document_in(
    c: &mut Cursor,
    raw: &str,
    first_line: usize,
    ended: Option<String>,
) -> Result<Node, YamlError> {
    c.skip_to_content()?;
    let gap = std::mem::take(&mut c.pending);
    let all = gap::head_only(&gap);
    if c.eof() {
        let mut n = Node::plain("");
        n.head_comment = all.trim_end_matches('\n').to_string();
        return Ok(n);
    }
    // yaml.v3: the part of the leading comments before the last blank line
    // is the document's head comment; kyaml keeps it on the root node. Only for an
    // implicit document: after an explicit `---` every leading comment is the first
    // node's head. kyaml cuts a stream at each later `---` and hands go-yaml the
    // text after it, so only a stream's first line can start an explicit document.
    let explicit = first_line == 0
        && raw
            .trim_start_matches('\u{feff}')
            .split('\n')
            .next()
            .is_some_and(|l| is_marker(l.trim_end_matches('\r'), "---"));
    let (doc_head, first_head) = match all.rfind("\n\n") {
        _ if explicit => (String::new(), all.trim_end_matches('\n').to_string()),
        _ if all.ends_with('\n') => (all.trim_end_matches('\n').to_string(), String::new()),
        Some(i) => (all[..i].to_string(), all[i + 2..].to_string()),
        None => (String::new(), all),
    };
    let mut p = c.block_node(-1, false, 0).map_err(|e| {
        // A root node first on its line, then a plain scalar and a `:` (`'k' x: v`): the
        // node became the key of a mapping whose parser wants the next key.
        match c.junk.take() {
            Some(j) if j.value_indicator => c
                .parser_err::<()>("did not find expected key", c.line)
                .err()
                .unwrap_or(e),
            _ => e,
        }
    })?;
    c.skip_to_content()?;
    if !c.eof() {
        return c.parser_err("did not find expected <document start>", c.line);
    }
    // go-yaml's DOCUMENT-END event takes the feet left (with those right after a
    // `...`), else the head left; a head next to feet is lost.
    let (mut head, mut document_foot) = c.take_trailing(&mut p, ended.is_some());
    join(&mut document_foot, ended.as_deref().unwrap_or(""));
    block::set_first_head(&mut p.node, first_head);
    // Heads read before empty scalars wait for the next event, the last for this one.
    let waiting = comments::pass_on_empty_heads(&mut p.node);
    if !waiting.is_empty() {
        head = if head.is_empty() {
            waiting
        } else {
            format!("{waiting}\n{head}")
        };
    }
    if document_foot.is_empty() {
        document_foot = head;
    }
    // go-yaml keeps the document's head comment apart from the root's and writes a
    // blank line after it: kept here as the root's head comment ending in a blank line
    // (`doc\n\n`, then the root's own head if any). A function call drops the blank
    // ([`collapse_document_head`]), as kyaml hands functions the root node only.
    normalize_feet(&mut p.node);
    // The document's foot comment: kept as the root collection's own foot, which the
    // emitter writes after a blank line at column 0, as yaml.v3 writes a document's.
    if !document_foot.is_empty() && !p.chain.is_empty() {
        join(&mut p.node.foot_comment, &document_foot);
    }
    if !doc_head.is_empty() {
        let mut head = doc_head;
        head.push_str("\n\n");
        head.push_str(&p.node.head_comment);
        p.node.head_comment = head;
    }
    Ok(p.node)
}

/// The root head comment a resource has once it went through a function: kyaml hands
/// functions the root node, so the document's head comment is joined to the root's
/// without the blank line between them (see [`parse_document`]).
pub fn collapse_document_head(head: &str) -> std::borrow::Cow<'_, str> {
    if let Some(doc) = head.strip_suffix("\n\n") {
        return std::borrow::Cow::Borrowed(doc);
    }
    match head.rfind("\n\n") {
        Some(i) => std::borrow::Cow::Owned(format!("{}\n{}", &head[..i], &head[i + 2..])),
        None => std::borrow::Cow::Borrowed(head),
    }
}

/// kyaml `DeriveSeqIndentStyle`: the first block sequence whose key line
/// (the previous non-comment line, trailing comment removed) is `key:`
/// decides; compact by default.
pub fn derive_seq_indent(text: &str) -> SeqIndent {
    // The last line before the current one that is not a comment line.
    let mut prev_content: Option<&str> = None;
    for line in text.split('\n') {
        // kyaml derives the style after turning CRLF into LF.
        let line = line.strip_suffix('\r').unwrap_or(line);
        // `pre` is the text before the first "- ", which must be only spaces:
        // that is, the line is spaces and then "- ".
        let body = line.trim_start_matches(' ');
        let candidate = body
            .starts_with("- ")
            .then(|| &line[..line.len() - body.len()]);
        let key_line = prev_content;
        if !line.trim_matches(' ').starts_with('#') {
            prev_content = Some(line);
        }
        let Some(pre) = candidate else {
            continue;
        };
        if !pre.trim_matches(' ').is_empty() {
            continue;
        }
        let Some(key) = key_line.map(|l| l.split('#').next().unwrap_or("")) else {
            continue;
        };
        if key.is_empty() {
            continue;
        }
        let key_spaces = key.len() - key.trim_start_matches(' ').len();
        let trimmed = key.trim_matches(' ');
        if trimmed.matches(':').count() != 1 || !trimmed.ends_with(':') {
            continue;
        }
        if pre.len() == key_spaces {
            return SeqIndent::Compact;
        }
        if pre.len() == key_spaces + 2 {
            return SeqIndent::Wide;
        }
    }
    SeqIndent::Compact
}
