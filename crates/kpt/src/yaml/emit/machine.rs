//! The yaml.v3 (kyaml fork) emitter state machine, ported from
//! `emitterc.go`: indentation (including kyaml's compact sequence indent),
//! simple keys, flow/block collections and head/line/foot/tail comments.

use super::events::{Event, Kind, ScalarStyle};
use super::props::split_tag;
use super::scalar::{ScalarAnalysis, analyze};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum State {
    DocStart,
    DocContent,
    DocEnd,
    FlowSeqFirst,
    FlowSeqTrail,
    FlowSeq,
    FlowMapFirst,
    FlowMapTrail,
    FlowMapKey,
    FlowMapSimpleValue,
    FlowMapValue,
    BlockSeqFirst,
    BlockSeq,
    BlockMapFirst,
    BlockMapKey,
    BlockMapSimpleValue,
    BlockMapValue,
    End,
}

pub struct Emitter<'a> {
    pub out: String,
    pub column: usize,
    pub whitespace: bool,
    pub indention: bool,
    pub open_ended: bool,
    pub root_context: bool,
    pub best_indent: usize,
    pub(super) foot_indent: i64,
    pub(super) indent: i64,
    pub(super) indents: Vec<i64>,
    pub(super) state: State,
    pub(super) states: Vec<State>,
    pub(super) flow_level: usize,
    pub(super) simple_key_context: bool,
    pub(super) mapping_context: bool,
    pub(super) compact_seq: bool,
    pub(super) head: &'a str,
    pub(super) line: &'a str,
    pub(super) foot: &'a str,
    pub(super) tail: &'a str,
    pub(super) key_line: &'a str,
    pub(super) anchor: Option<(&'a str, bool)>,
    pub(super) tag: Option<(&'a str, &'a str)>,
    pub(super) scalar: ScalarAnalysis,
    pub(super) scalar_style: ScalarStyle,
    pub(super) docs_started: usize,
}

impl<'a> Emitter<'a> {
    pub fn new(compact_seq: bool) -> Emitter<'a> {
        Emitter {
            out: String::new(),
            column: 0,
            whitespace: true,
            indention: true,
            open_ended: false,
            root_context: false,
            best_indent: 2,
            foot_indent: -1,
            indent: -1,
            indents: Vec::new(),
            state: State::DocStart,
            states: Vec::new(),
            flow_level: 0,
            simple_key_context: false,
            mapping_context: false,
            compact_seq,
            head: "",
            line: "",
            foot: "",
            tail: "",
            key_line: "",
            anchor: None,
            tag: None,
            scalar: ScalarAnalysis::default(),
            scalar_style: ScalarStyle::Plain,
            docs_started: 0,
        }
    }

    pub fn put(&mut self, c: char) {
        self.out.push(c);
        self.column += 1;
    }

    pub fn put_break(&mut self) {
        self.out.push('\n');
        self.column = 0;
        self.indention = true;
    }

    pub fn write_indent(&mut self) {
        let indent = self.indent.max(0) as usize;
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.put_break();
        }
        if self.foot_indent == indent as i64 {
            self.put_break();
        }
        while self.column < indent {
            self.put(' ');
        }
        self.whitespace = true;
        self.foot_indent = -1;
    }

    pub fn write_indicator(&mut self, ind: &str, need_ws: bool, is_ws: bool, is_indention: bool) {
        if need_ws && !self.whitespace {
            self.put(' ');
        }
        for c in ind.chars() {
            self.put(c);
        }
        self.whitespace = is_ws;
        self.indention = self.indention && is_indention;
        self.open_ended = false;
    }

    fn increase_indent(&mut self, flow: bool, indentless: bool, compact_seq: bool) {
        self.indents.push(self.indent);
        if self.indent < 0 {
            self.indent = if flow { self.best_indent as i64 } else { 0 };
        } else if !indentless {
            let bi = self.best_indent as i64;
            if self.states.last() == Some(&State::BlockSeq) {
                self.indent += 2;
            } else {
                self.indent = bi * ((self.indent + bi) / bi);
            }
            if compact_seq {
                self.indent -= 2;
            }
        }
    }

    fn pop_indent(&mut self) {
        self.indent = self.indents.pop().unwrap_or(-1);
    }

    fn pop_state(&mut self) {
        self.state = self.states.pop().unwrap_or(State::End);
    }

    /// Runs all events; `events` must be a well-formed stream of documents.
    pub fn emit_all(&mut self, events: &[Event<'a>]) {
        for i in 0..events.len() {
            self.analyze_event(&events[i]);
            self.dispatch(events, i);
        }
    }

    fn analyze_event(&mut self, ev: &Event<'a>) {
        self.anchor = None;
        self.tag = None;
        if !ev.head.is_empty() {
            self.head = ev.head;
        }
        if !ev.line.is_empty() {
            self.line = ev.line;
        }
        if !ev.foot.is_empty() {
            self.foot = ev.foot;
        }
        if !ev.tail.is_empty() {
            self.tail = ev.tail;
        }
        match &ev.kind {
            Kind::Alias => self.anchor = ev.anchor.map(|a| (a, true)),
            Kind::Scalar { value, .. } => {
                self.anchor = ev.anchor.map(|a| (a, false));
                self.tag = ev.tag.map(split_tag);
                self.scalar = analyze(value);
            }
            Kind::SeqStart { .. } | Kind::MapStart { .. } => {
                self.anchor = ev.anchor.map(|a| (a, false));
                self.tag = ev.tag.map(split_tag);
            }
            _ => {}
        }
    }

    fn dispatch(&mut self, evs: &[Event<'a>], i: usize) {
        let ev = &evs[i];
        match self.state {
            State::DocStart => self.emit_doc_start(ev),
            State::DocContent => {
                self.states.push(State::DocEnd);
                self.process_head_comment();
                self.emit_node(evs, i, true, false, false);
                self.process_line_comment(false);
                self.process_foot_comment();
            }
            State::DocEnd => self.emit_doc_end(),
            State::FlowSeqFirst => self.flow_seq_item(evs, i, true, false),
            State::FlowSeqTrail => self.flow_seq_item(evs, i, false, true),
            State::FlowSeq => self.flow_seq_item(evs, i, false, false),
            State::FlowMapFirst => self.flow_map_key(evs, i, true, false),
            State::FlowMapTrail => self.flow_map_key(evs, i, false, true),
            State::FlowMapKey => self.flow_map_key(evs, i, false, false),
            State::FlowMapSimpleValue => self.flow_map_value(evs, i, true),
            State::FlowMapValue => self.flow_map_value(evs, i, false),
            State::BlockSeqFirst => self.block_seq_item(evs, i, true),
            State::BlockSeq => self.block_seq_item(evs, i, false),
            State::BlockMapFirst => self.block_map_key(evs, i, true),
            State::BlockMapKey => self.block_map_key(evs, i, false),
            State::BlockMapSimpleValue => self.block_map_value(evs, i, true),
            State::BlockMapValue => self.block_map_value(evs, i, false),
            State::End => {}
        }
    }

    fn emit_doc_start(&mut self, ev: &Event<'a>) {
        if ev.kind != Kind::DocStart {
            self.state = State::End;
            return;
        }
        // Every document after the first gets an explicit `---`.
        self.docs_started += 1;
        if self.docs_started > 1 {
            self.write_indent();
            self.write_indicator("---", true, false, false);
            self.write_indent();
        }
        if !self.head.is_empty() {
            self.process_head_comment();
            self.put_break();
        }
        self.state = State::DocContent;
    }

    fn emit_doc_end(&mut self) {
        self.foot_indent = 0;
        self.process_foot_comment();
        self.foot_indent = -1;
        self.write_indent();
        self.state = State::DocStart;
    }

    fn flow_seq_item(&mut self, evs: &[Event<'a>], i: usize, first: bool, trail: bool) {
        if first {
            self.write_indicator("[", true, true, false);
            self.increase_indent(true, false, false);
            self.flow_level += 1;
        }
        if evs[i].kind == Kind::SeqEnd {
            self.flow_level -= 1;
            self.pop_indent();
            if self.column == 0 {
                self.write_indent();
            }
            self.write_indicator("]", false, false, false);
            self.process_line_comment(false);
            self.process_foot_comment();
            self.pop_state();
            return;
        }
        if !first && !trail {
            self.write_indicator(",", false, false, false);
        }
        self.process_head_comment();
        if self.column == 0 {
            self.write_indent();
        }
        let pending = !self.line.is_empty() || !self.foot.is_empty() || !self.tail.is_empty();
        self.states.push(if pending {
            State::FlowSeqTrail
        } else {
            State::FlowSeq
        });
        self.emit_node(evs, i, false, false, false);
        if !self.line.is_empty() || !self.foot.is_empty() || !self.tail.is_empty() {
            self.write_indicator(",", false, false, false);
        }
        self.process_line_comment(false);
        self.process_foot_comment();
    }

    fn flow_map_key(&mut self, evs: &[Event<'a>], i: usize, first: bool, trail: bool) {
        if first {
            self.write_indicator("{", true, true, false);
            self.increase_indent(true, false, false);
            self.flow_level += 1;
        }
        if evs[i].kind == Kind::MapEnd {
            let pending = !self.head.is_empty() || !self.foot.is_empty() || !self.tail.is_empty();
            if pending && !first && !trail {
                self.write_indicator(",", false, false, false);
            }
            self.process_head_comment();
            self.flow_level -= 1;
            self.pop_indent();
            self.write_indicator("}", false, false, false);
            self.process_line_comment(false);
            self.process_foot_comment();
            self.pop_state();
            return;
        }
        if !first && !trail {
            self.write_indicator(",", false, false, false);
        }
        self.process_head_comment();
        if self.column == 0 {
            self.write_indent();
        }
        if self.check_simple_key(evs, i) {
            self.states.push(State::FlowMapSimpleValue);
            self.emit_node(evs, i, false, true, true);
        } else {
            self.write_indicator("?", true, false, false);
            self.states.push(State::FlowMapValue);
            self.emit_node(evs, i, false, true, false);
        }
    }

    fn flow_map_value(&mut self, evs: &[Event<'a>], i: usize, simple: bool) {
        if simple {
            self.write_indicator(":", false, false, false);
        } else {
            self.write_indicator(":", true, false, false);
        }
        let pending = !self.line.is_empty() || !self.foot.is_empty() || !self.tail.is_empty();
        self.states.push(if pending {
            State::FlowMapTrail
        } else {
            State::FlowMapKey
        });
        self.emit_node(evs, i, false, true, false);
        if !self.line.is_empty() || !self.foot.is_empty() || !self.tail.is_empty() {
            self.write_indicator(",", false, false, false);
        }
        self.process_line_comment(false);
        self.process_foot_comment();
    }

    fn block_seq_item(&mut self, evs: &[Event<'a>], i: usize, first: bool) {
        if first {
            let seq =
                self.mapping_context && (self.column == 0 || !self.indention) && self.compact_seq;
            self.increase_indent(false, false, seq);
        }
        if evs[i].kind == Kind::SeqEnd {
            self.pop_indent();
            self.pop_state();
            return;
        }
        self.process_head_comment();
        self.write_indent();
        self.write_indicator("-", true, false, true);
        self.states.push(State::BlockSeq);
        self.emit_node(evs, i, false, false, false);
        self.process_line_comment(false);
        self.process_foot_comment();
    }

    fn block_map_key(&mut self, evs: &[Event<'a>], i: usize, first: bool) {
        if first {
            self.increase_indent(false, false, false);
        }
        self.process_head_comment();
        if evs[i].kind == Kind::MapEnd {
            self.pop_indent();
            self.pop_state();
            return;
        }
        self.write_indent();
        if !self.line.is_empty() {
            self.key_line = std::mem::take(&mut self.line);
        }
        if self.check_simple_key(evs, i) {
            self.states.push(State::BlockMapSimpleValue);
            self.emit_node(evs, i, false, true, true);
        } else {
            self.write_indicator("?", true, false, true);
            self.states.push(State::BlockMapValue);
            self.emit_node(evs, i, false, true, false);
        }
    }

    fn block_map_value(&mut self, evs: &[Event<'a>], i: usize, simple: bool) {
        if simple {
            self.write_indicator(":", false, false, false);
        } else {
            self.write_indent();
            self.write_indicator(":", true, false, true);
        }
        if !self.key_line.is_empty() {
            match &evs[i].kind {
                Kind::Scalar { .. } if self.line.is_empty() => {
                    self.line = std::mem::take(&mut self.key_line);
                }
                // go-yaml tests `event.sequence_style() != yaml_FLOW_SEQUENCE_STYLE`,
                // which a flow mapping's style (the same number) fails too: the key's
                // comment before any flow collection is never written.
                Kind::MapStart { flow: false } | Kind::SeqStart { flow: false } => {
                    std::mem::swap(&mut self.line, &mut self.key_line);
                    self.process_line_comment(false);
                    std::mem::swap(&mut self.line, &mut self.key_line);
                }
                _ => {}
            }
        }
        self.states.push(State::BlockMapKey);
        self.emit_node(evs, i, false, true, false);
        self.process_line_comment(false);
        self.process_foot_comment();
    }

    fn emit_node(&mut self, evs: &[Event<'a>], i: usize, root: bool, mapping: bool, simple: bool) {
        self.root_context = root;
        self.mapping_context = mapping;
        self.simple_key_context = simple;
        let ev = &evs[i];
        match &ev.kind {
            Kind::Alias => {
                self.process_anchor();
                self.pop_state();
            }
            Kind::Scalar { value, style } => {
                self.select_scalar_style(value, *style);
                self.process_anchor();
                self.process_tag();
                self.increase_indent(true, false, false);
                match self.scalar_style {
                    ScalarStyle::Plain => self.write_plain(value),
                    ScalarStyle::Single => self.write_single(value),
                    ScalarStyle::Double => self.write_double(value),
                    ScalarStyle::Literal => self.write_literal(value),
                    ScalarStyle::Folded => self.write_folded(value),
                }
                self.pop_indent();
                self.pop_state();
            }
            Kind::SeqStart { flow } => {
                self.process_anchor();
                self.process_tag();
                let empty = evs.get(i + 1).is_some_and(|e| e.kind == Kind::SeqEnd);
                self.state = if self.flow_level > 0 || *flow || empty {
                    State::FlowSeqFirst
                } else {
                    State::BlockSeqFirst
                };
            }
            Kind::MapStart { flow } => {
                self.process_anchor();
                self.process_tag();
                let empty = evs.get(i + 1).is_some_and(|e| e.kind == Kind::MapEnd);
                self.state = if self.flow_level > 0 || *flow || empty {
                    State::FlowMapFirst
                } else {
                    State::BlockMapFirst
                };
            }
            _ => self.state = State::End,
        }
    }
}
