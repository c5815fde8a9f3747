//! Node tree → emitter events, following yaml.v3's `encoder.node` (tag
//! dropping, forced quoting, literal style for multi-line strings, and the
//! "foot comment of a key becomes the tail of the next key" rule).

use super::super::limits::guard_at;
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

/// An event borrows its text from the node tree: emitting a document copies
/// nothing but the output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind<'a> {
    DocStart,
    DocEnd,
    SeqStart { flow: bool },
    SeqEnd,
    MapStart { flow: bool },
    MapEnd,
    Scalar { value: &'a str, style: ScalarStyle },
    Alias,
}

#[derive(Debug, Clone)]
pub struct Event<'a> {
    pub kind: Kind<'a>,
    pub anchor: Option<&'a str>,
    /// Tag to write (`None` = implicit).
    pub tag: Option<&'a str>,
    pub head: &'a str,
    pub line: &'a str,
    pub foot: &'a str,
    pub tail: &'a str,
}

impl<'a> Event<'a> {
    fn new(kind: Kind<'a>) -> Event<'a> {
        Event {
            kind,
            anchor: None,
            tag: None,
            head: "",
            line: "",
            foot: "",
            tail: "",
        }
    }
}

/// Events for one document wrapping `node` (kyaml encodes `rn.Document()`,
/// a document node without comments).
pub fn document_events(node: &Node) -> Vec<Event<'_>> {
    let mut out = vec![Event::new(Kind::DocStart)];
    node_events(node, "", false, &mut out, 0);
    out.push(Event::new(Kind::DocEnd));
    out
}

/// Whether the tag must be written, and whether a `!!str` tag dropped from a
/// plain scalar forces double quotes (yaml.v3 `forceQuoting`).
fn tag_decision(node: &Node) -> (Option<&str>, bool) {
    let explicit = node.style != Style::Any;
    match (&node.kind, &node.tag) {
        // A plain `<<` is a merge key: yaml.v3 tags it `!!merge` when parsing and writes
        // the tag back (`!!merge <<: *anchor`), as kpt's output shows.
        (NodeKind::Scalar(v), None) if v == "<<" && node.style == Style::Plain => {
            (Some("!!merge"), false)
        }
        (NodeKind::Scalar(v), None) => {
            let force = node.style == Style::Any && string_needs_quotes(v);
            (None, force)
        }
        (NodeKind::Scalar(v), Some(t)) => {
            let st = short_tag(t);
            if explicit {
                return (Some(t), false);
            }
            if st == "!!str" {
                return (None, resolve_plain(v) != "!!str");
            }
            if resolve_plain(v) == st {
                (None, false)
            } else {
                (Some(t), false)
            }
        }
        (NodeKind::Mapping(_), Some(t)) => {
            let keep = explicit || short_tag(t) != "!!map";
            (keep.then_some(t.as_str()), false)
        }
        (NodeKind::Sequence(_), Some(t)) => {
            let keep = explicit || short_tag(t) != "!!seq";
            (keep.then_some(t.as_str()), false)
        }
        _ => (None, false),
    }
}

/// `tail` is the foot comment of the previous key, written before this node;
/// with `skip_foot` the node's own foot is not written (it becomes the next
/// key's tail instead).
/// Any depth is written (under the stack guard), as yaml.v3 does.
fn node_events<'a>(
    node: &'a Node,
    tail: &'a str,
    skip_foot: bool,
    out: &mut Vec<Event<'a>>,
    depth: usize,
) {
    match &node.kind {
        NodeKind::Mapping(e) if !e.is_empty() => {
            guard_at(depth, || node_events_at(node, tail, skip_foot, out, depth))
        }
        NodeKind::Sequence(i) if !i.is_empty() => {
            guard_at(depth, || node_events_at(node, tail, skip_foot, out, depth))
        }
        _ => node_events_at(node, tail, skip_foot, out, depth),
    }
}

fn node_events_at<'a>(
    node: &'a Node,
    tail: &'a str,
    skip_foot: bool,
    out: &mut Vec<Event<'a>>,
    depth: usize,
) {
    let foot = if skip_foot {
        ""
    } else {
        node.foot_comment.as_str()
    };
    let (tag, force_quoting) = tag_decision(node);
    match &node.kind {
        NodeKind::Sequence(items) => {
            let mut ev = Event::new(Kind::SeqStart {
                flow: node.style == Style::Flow,
            });
            ev.anchor = node.anchor.as_deref();
            ev.tag = tag;
            ev.head = &node.head_comment;
            out.push(ev);
            for i in items {
                node_events(i, "", false, out, depth + 1);
            }
            let mut end = Event::new(Kind::SeqEnd);
            end.line = &node.line_comment;
            end.foot = foot;
            out.push(end);
        }
        NodeKind::Mapping(entries) => {
            let mut ev = Event::new(Kind::MapStart {
                flow: node.style == Style::Flow,
            });
            ev.anchor = node.anchor.as_deref();
            ev.tag = tag;
            ev.tail = tail;
            ev.head = &node.head_comment;
            out.push(ev);
            let mut tail = "";
            for (k, v) in entries {
                let has_foot = !k.foot_comment.is_empty();
                node_events(k, tail, has_foot, out, depth + 1);
                tail = &k.foot_comment;
                node_events(v, "", false, out, depth + 1);
            }
            let mut end = Event::new(Kind::MapEnd);
            end.tail = tail;
            end.line = &node.line_comment;
            end.foot = foot;
            out.push(end);
        }
        NodeKind::Alias(name) => {
            let mut ev = Event::new(Kind::Alias);
            ev.anchor = Some(name);
            ev.head = &node.head_comment;
            ev.line = &node.line_comment;
            ev.foot = foot;
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
            let mut ev = Event::new(Kind::Scalar { value, style });
            ev.anchor = node.anchor.as_deref();
            ev.tag = tag;
            ev.head = &node.head_comment;
            ev.line = &node.line_comment;
            ev.foot = foot;
            ev.tail = tail;
            out.push(ev);
        }
    }
}
