//! Node tree → emitter events, following yaml.v3's `encoder.node` (tag
//! dropping, forced quoting, literal style for multi-line strings, and the
//! "foot comment of a key becomes the tail of the next key" rule).

use super::super::node::{Node, NodeKind, Style};
use super::super::resolve::{resolve_plain, short_tag, string_needs_quotes};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalarStyle {
    Plain,
    Single,
    Double,
    Literal,
    Folded,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    DocStart,
    DocEnd,
    SeqStart { flow: bool },
    SeqEnd,
    MapStart { flow: bool },
    MapEnd,
    Scalar { value: String, style: ScalarStyle },
    Alias,
}

#[derive(Debug, Clone)]
pub struct Event {
    pub kind: Kind,
    pub anchor: Option<String>,
    /// Tag to write (`None` = implicit).
    pub tag: Option<String>,
    pub head: String,
    pub line: String,
    pub foot: String,
    pub tail: String,
}

impl Event {
    fn new(kind: Kind) -> Event {
        Event {
            kind,
            anchor: None,
            tag: None,
            head: String::new(),
            line: String::new(),
            foot: String::new(),
            tail: String::new(),
        }
    }
}

/// Events for one document wrapping `node` (kyaml encodes `rn.Document()`,
/// a document node without comments).
pub fn document_events(node: &Node) -> Vec<Event> {
    let mut out = vec![Event::new(Kind::DocStart)];
    node_events(node, "", &mut out, 0);
    out.push(Event::new(Kind::DocEnd));
    out
}

const MAX_DEPTH: usize = 1000;

/// Whether the tag must be written, and whether a `!!str` tag dropped from a
/// plain scalar forces double quotes (yaml.v3 `forceQuoting`).
fn tag_decision(node: &Node) -> (Option<String>, bool) {
    let explicit = node.style != Style::Any;
    match (&node.kind, &node.tag) {
        (NodeKind::Scalar(v), None) => {
            let force = node.style == Style::Any && string_needs_quotes(v);
            (None, force)
        }
        (NodeKind::Scalar(v), Some(t)) => {
            let st = short_tag(t);
            if explicit {
                return (Some(t.clone()), false);
            }
            if st == "!!str" {
                return (None, resolve_plain(v) != "!!str");
            }
            if resolve_plain(v) == st {
                (None, false)
            } else {
                (Some(t.clone()), false)
            }
        }
        (NodeKind::Mapping(_), Some(t)) => {
            let keep = explicit || short_tag(t) != "!!map";
            (keep.then(|| t.clone()), false)
        }
        (NodeKind::Sequence(_), Some(t)) => {
            let keep = explicit || short_tag(t) != "!!seq";
            (keep.then(|| t.clone()), false)
        }
        _ => (None, false),
    }
}

fn node_events(node: &Node, tail: &str, out: &mut Vec<Event>, depth: usize) {
    if depth > MAX_DEPTH {
        out.push(Event::new(Kind::Scalar {
            value: String::new(),
            style: ScalarStyle::Plain,
        }));
        return;
    }
    let (tag, force_quoting) = tag_decision(node);
    match &node.kind {
        NodeKind::Sequence(items) => {
            let mut ev = Event::new(Kind::SeqStart {
                flow: node.style == Style::Flow,
            });
            ev.anchor = node.anchor.clone();
            ev.tag = tag;
            ev.head = node.head_comment.clone();
            out.push(ev);
            for i in items {
                node_events(i, "", out, depth + 1);
            }
            let mut end = Event::new(Kind::SeqEnd);
            end.line = node.line_comment.clone();
            end.foot = node.foot_comment.clone();
            out.push(end);
        }
        NodeKind::Mapping(entries) => {
            let mut ev = Event::new(Kind::MapStart {
                flow: node.style == Style::Flow,
            });
            ev.anchor = node.anchor.clone();
            ev.tag = tag;
            ev.tail = tail.to_string();
            ev.head = node.head_comment.clone();
            out.push(ev);
            let mut tail = String::new();
            for (k, v) in entries {
                if k.foot_comment.is_empty() {
                    node_events(k, &tail, out, depth + 1);
                    tail.clear();
                } else {
                    let mut kk = k.clone();
                    let foot = std::mem::take(&mut kk.foot_comment);
                    node_events(&kk, &tail, out, depth + 1);
                    tail = foot;
                }
                node_events(v, "", out, depth + 1);
            }
            let mut end = Event::new(Kind::MapEnd);
            end.tail = tail;
            end.line = node.line_comment.clone();
            end.foot = node.foot_comment.clone();
            out.push(end);
        }
        NodeKind::Alias(name) => {
            let mut ev = Event::new(Kind::Alias);
            ev.anchor = Some(name.clone());
            ev.head = node.head_comment.clone();
            ev.line = node.line_comment.clone();
            ev.foot = node.foot_comment.clone();
            out.push(ev);
        }
        NodeKind::Scalar(value) => {
            let style = match node.style {
                Style::DoubleQuoted => ScalarStyle::Double,
                Style::SingleQuoted => ScalarStyle::Single,
                Style::Literal => ScalarStyle::Literal,
                Style::Folded => ScalarStyle::Folded,
                _ if value.contains('\n') => ScalarStyle::Literal,
                _ if force_quoting => ScalarStyle::Double,
                _ => ScalarStyle::Plain,
            };
            let mut ev = Event::new(Kind::Scalar {
                value: value.clone(),
                style,
            });
            ev.anchor = node.anchor.clone();
            ev.tag = tag;
            ev.head = node.head_comment.clone();
            ev.line = node.line_comment.clone();
            ev.foot = node.foot_comment.clone();
            ev.tail = tail.to_string();
            out.push(ev);
        }
    }
}
