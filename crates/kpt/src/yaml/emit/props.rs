//! Emitter helpers ported from yaml.v3's `emitterc.go`: simple-key check,
//! scalar style selection, anchors, tags and head/line/foot comments.

use super::events::{Event, Kind, ScalarStyle};
use super::machine::Emitter;

impl<'a> Emitter<'a> {
    pub(super) fn check_simple_key(&self, evs: &[Event<'a>], i: usize) -> bool {
        let anchor_len = self.anchor.as_ref().map_or(0, |a| a.0.len());
        let tag_len = self.tag.as_ref().map_or(0, |t| t.0.len() + t.1.len());
        let len = match &evs[i].kind {
            Kind::Alias => anchor_len,
            Kind::Scalar { value, .. } => {
                if self.scalar.multiline {
                    return false;
                }
                anchor_len + tag_len + value.len()
            }
            Kind::SeqStart { .. } => {
                if !evs.get(i + 1).is_some_and(|e| e.kind == Kind::SeqEnd) {
                    return false;
                }
                anchor_len + tag_len
            }
            Kind::MapStart { .. } => {
                if !evs.get(i + 1).is_some_and(|e| e.kind == Kind::MapEnd) {
                    return false;
                }
                anchor_len + tag_len
            }
            _ => return false,
        };
        len <= 128
    }

    pub(super) fn select_scalar_style(&mut self, value: &str, requested: ScalarStyle) {
        let mut style = requested;
        if self.simple_key_context && self.scalar.multiline {
            style = ScalarStyle::Double;
        }
        if style == ScalarStyle::Plain {
            let allowed = if self.flow_level > 0 {
                self.scalar.flow_plain_allowed
            } else {
                self.scalar.block_plain_allowed
            };
            if !allowed || (value.is_empty() && (self.flow_level > 0 || self.simple_key_context)) {
                style = ScalarStyle::Single;
            }
        }
        if style == ScalarStyle::Single && !self.scalar.single_quoted_allowed {
            style = ScalarStyle::Double;
        }
        if matches!(style, ScalarStyle::Literal | ScalarStyle::Folded)
            && (!self.scalar.block_allowed || self.flow_level > 0 || self.simple_key_context)
        {
            style = ScalarStyle::Double;
        }
        self.scalar_style = style;
    }

    pub(super) fn process_anchor(&mut self) {
        if let Some((a, alias)) = self.anchor {
            self.write_indicator(if alias { "*" } else { "&" }, true, false, false);
            for c in a.chars() {
                self.put(c);
            }
            self.whitespace = false;
            self.indention = false;
        }
    }

    pub(super) fn process_tag(&mut self) {
        let Some((handle, suffix)) = self.tag else {
            return;
        };
        if handle.is_empty() {
            self.write_indicator("!<", true, false, false);
            self.write_tag_content(suffix);
            self.write_indicator(">", false, false, false);
        } else {
            if !self.whitespace {
                self.put(' ');
            }
            for c in handle.chars() {
                self.put(c);
            }
            self.whitespace = false;
            self.indention = false;
            self.write_tag_content(suffix);
        }
    }

    fn write_tag_content(&mut self, s: &str) {
        for c in s.chars() {
            if c.is_ascii_alphanumeric() || "-;/?:@&=+$,_.~*'()[]".contains(c) {
                self.put(c);
            } else {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    for ch in format!("%{b:02X}").chars() {
                        self.put(ch);
                    }
                }
            }
        }
        self.whitespace = false;
        self.indention = false;
    }

    pub(super) fn process_head_comment(&mut self) {
        if !self.tail.is_empty() {
            self.write_indent();
            let t = std::mem::take(&mut self.tail);
            self.write_comment(t);
            self.foot_indent = self.indent.max(0);
        }
        if self.head.is_empty() {
            return;
        }
        self.write_indent();
        let h = std::mem::take(&mut self.head);
        self.write_comment(h);
    }

    pub fn process_line_comment(&mut self, linebreak: bool) {
        if self.line.is_empty() {
            if linebreak {
                self.put_break();
            }
            return;
        }
        if !self.whitespace {
            self.put(' ');
        }
        let l = std::mem::take(&mut self.line);
        self.write_comment(l);
    }

    pub(super) fn process_foot_comment(&mut self) {
        if self.foot.is_empty() {
            return;
        }
        self.write_indent();
        let f = std::mem::take(&mut self.foot);
        self.write_comment(f);
        self.foot_indent = self.indent.max(0);
    }
}

/// Splits a tag into yaml.v3's (handle, suffix) using the default
/// directives `!` and `!!`; verbatim tags get an empty handle.
pub(super) fn split_tag(tag: &str) -> (&str, &str) {
    if let Some(rest) = tag.strip_prefix("tag:yaml.org,2002:") {
        return ("!!", rest);
    }
    if let Some(rest) = tag.strip_prefix("!!") {
        return ("!!", rest);
    }
    if let Some(rest) = tag.strip_prefix('!') {
        return ("!", rest);
    }
    ("", tag)
}
