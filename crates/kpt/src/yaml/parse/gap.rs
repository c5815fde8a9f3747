//! go-yaml v3's comment placement over one gap (the blank and comment lines between
//! two tokens), ported from its scanner and parser:
//!
//! - [`scan`] is `yaml_parser_scan_comments`: it cuts the gap's comment lines into
//!   foot comments and a final head comment, and gives each the "token mark" go-yaml
//!   unfolds it at (the prior token, or a position in the gap).
//! - [`block_end`] is the repositioning in `yaml_parser_unroll_indent`: the BLOCK-END
//!   token of a closing block moves to the first comment of the gap that sits at the
//!   block's indentation.
//! - [`place`] is `yaml_parser_unfold_comments` with the events that take comments
//!   (`yaml_parser_set_event_comments`): the prior token's event takes the feet kept
//!   with it, each closing block mapping's MAPPING-END takes the feet unfolded before
//!   its BLOCK-END (a block sequence's end takes none), and the rest waits for the next
//!   event that takes comments.
//!
//! Positions are the gap's line index times a stride plus the column, so comparing
//! them orders them as go-yaml's marks (byte indexes) would.

use super::cursor::GapLine;

/// The token before a gap, as go-yaml's scanner and parser see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prior {
    /// A scalar, alias or flow collection: its event takes the feet kept with it.
    Content,
    /// `key:` with nothing more on its line (a VALUE token, no event of its own).
    Value,
    /// `-` with nothing more on its line (a BLOCK-ENTRY token, no event of its own).
    Entry,
}

/// A position in or around the gap.
pub type Pos = i64;
const STRIDE: Pos = 1 << 32;
/// The prior token's start.
const PRIOR: Pos = -2;
/// Just after the prior token (go-yaml's `scan_mark.index - 1`).
pub const BEFORE: Pos = -1;

fn pos(line: usize, col: usize) -> Pos {
    line as Pos * STRIDE + col as Pos
}

/// Just before the token after a gap of `lines` lines that starts at column 0 (the
/// end of stream, a `...` marker): where go-yaml's last BLOCK-END starts by default.
pub fn end_of(lines: usize) -> Pos {
    pos(lines, 0) - 1
}

/// One comment block as go-yaml's scanner queues it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scanned {
    pub head: bool,
    pub text: String,
    /// Column of the block's first line.
    pub col: usize,
    pub start: Pos,
    /// Unfolded when the parser peeks a token starting at or after this.
    pub token_mark: Pos,
    /// Where the scan for this block began, and where it ended.
    pub scan: Pos,
    pub end: Pos,
}

struct Scanner {
    out: Vec<Scanned>,
    text: String,
    start_col: usize,
    start: Pos,
    /// go-yaml's `start_mark.line == foot_line`.
    on_foot_line: bool,
    token_mark: Pos,
    scan_mark: Pos,
}

impl Scanner {
    /// The text so far is a foot comment ending at `end`.
    fn foot(&mut self, end: Pos, token_mark: Pos) {
        self.out.push(Scanned {
            head: false,
            text: std::mem::take(&mut self.text),
            col: self.start_col,
            start: self.start,
            token_mark,
            scan: self.scan_mark,
            end,
        });
        self.scan_mark = end;
        self.token_mark = end;
    }
}

/// `yaml_parser_scan_comments` over a gap. `indent` is the innermost open block's
/// indentation (0 when none); `next_col` the column of the token after the gap, or
/// `None` at the end of the stream. `foot_line` is the gap line go-yaml takes for the
/// line right after the prior content (0, or 2 when the gap starts with a comment on
/// a `-` line), `None` when it has none (its scan began on the stream's first line).
pub fn scan(
    gap: &[GapLine],
    prior: Prior,
    indent: usize,
    next_col: Option<usize>,
    foot_line: Option<usize>,
) -> Vec<Scanned> {
    let mut s = Scanner {
        out: Vec::new(),
        text: String::new(),
        start_col: 0,
        start: 0,
        on_foot_line: false,
        token_mark: PRIOR,
        scan_mark: 0,
    };
    // No blank line between the prior token and the first comment.
    let mut first_empty = !matches!(gap.first(), None | Some(GapLine::Blank));
    let mut recent_empty = false;
    let mut first_comment = true;
    // At a line break (or the end of the stream) after comment text: the first one,
    // if the text started right below the prior token (not after a VALUE) or is
    // dedented below the open block, ends a foot of the prior content.
    let line_break = |s: &mut Scanner, first_empty: bool, at: Pos, eof: bool| {
        let dedented = s.start_col < indent;
        if first_empty && ((s.on_foot_line && prior != Prior::Value) || dedented) {
            if !s.text.is_empty() {
                // Dedented, it is unrelated to the prior token.
                let tm = if dedented { s.start } else { s.token_mark };
                s.foot(at, tm);
            }
        } else if !s.text.is_empty() && !eof {
            s.text.push('\n');
        }
    };
    for (i, l) in gap.iter().enumerate() {
        match l {
            GapLine::Blank => {
                if !recent_empty {
                    line_break(&mut s, first_empty, pos(i, 0) + STRIDE - 1, false);
                }
                first_empty = false;
                recent_empty = true;
            }
            GapLine::Comment { col, text } | GapLine::IndicatorComment { col, text } => {
                // A comment dedented below the open block, at another column than the
                // text so far: that text is a foot of the preceding data.
                if !s.text.is_empty() && *col < indent && *col != s.start_col {
                    s.foot(pos(i, *col), s.token_mark);
                }
                if s.text.is_empty() {
                    s.start_col = *col;
                    s.start = pos(i, *col);
                    // go-yaml counts the lines after the gap's first comment one short.
                    let line = if first_comment { i } else { i - 1 };
                    s.on_foot_line = foot_line == Some(line);
                } else {
                    s.text.push('\n');
                }
                first_comment = false;
                s.text.push_str(text);
                recent_empty = false;
            }
        }
    }
    let n = gap.len();
    match next_col {
        None if !recent_empty => line_break(&mut s, first_empty, pos(n, 0), true),
        Some(c) if !s.text.is_empty() && c < indent && c != s.start_col => {
            s.foot(pos(n, c), s.token_mark)
        }
        _ => {}
    }
    if !s.text.is_empty() {
        let end = pos(n, next_col.unwrap_or(0)) - 1;
        s.out.push(Scanned {
            head: true,
            text: std::mem::take(&mut s.text),
            col: s.start_col,
            start: s.start,
            token_mark: s.start,
            scan: s.scan_mark,
            end,
        });
    }
    s.out
}

/// A gap where go-yaml takes no feet (a document's or a collection's start): all of
/// it is the next token's head.
pub fn head_only(gap: &[GapLine]) -> String {
    let mut s = scan(gap, Prior::Value, 0, Some(0), None);
    s.pop().map(|c| c.text).unwrap_or_default()
}

/// The position of the BLOCK-END token closing the block at `indent`, starting from
/// `block_mark` (just after the prior token for the first block closed, else the
/// previous block's end; the stream's end for go-yaml's final unroll): the first
/// comment of the gap at the block's indentation, searching back while the comments
/// are contiguous (`yaml_parser_unroll_indent`).
pub fn block_end(comments: &[Scanned], indent: usize, block_mark: Pos) -> Pos {
    let mut mark = block_mark;
    let mut stop = block_mark;
    for c in comments.iter().rev() {
        if c.end < stop {
            break;
        }
        if c.col == indent {
            mark = c.start;
        }
        stop = c.scan;
    }
    mark
}

/// Where a gap's comments go.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Placed {
    /// Feet the prior token's event takes.
    pub prior: String,
    /// Feet each closing block mapping's end takes: (its index in `closing`, text).
    pub ends: Vec<(usize, String)>,
    /// Feet left for the next event that takes comments.
    pub pending: String,
    /// The next token's head comment.
    pub head: String,
}

/// Unfolds the scanned comments in token order: the prior token (which takes its feet
/// when `prior_takes`), then each closing block's BLOCK-END, innermost first, as
/// `(position, is a mapping)`. `pending` holds feet no event took yet.
pub fn place(
    comments: Vec<Scanned>,
    prior_takes: bool,
    closing: &[(Pos, bool)],
    pending: String,
) -> Placed {
    let mut placed = Placed {
        pending,
        ..Placed::default()
    };
    let mut queue = comments.into_iter().peekable();
    while let Some(c) = queue.next_if(|c| c.token_mark <= PRIOR) {
        let to = if prior_takes {
            &mut placed.prior
        } else {
            &mut placed.pending
        };
        join(to, &c.text);
    }
    for (i, &(at, mapping)) in closing.iter().enumerate() {
        // No heads on block ends: a head and what follows wait for the next token.
        while let Some(c) = queue.next_if(|c| !c.head && c.token_mark <= at) {
            join(&mut placed.pending, &c.text);
        }
        if mapping && !placed.pending.is_empty() {
            placed.ends.push((i, std::mem::take(&mut placed.pending)));
        }
    }
    for c in queue {
        if c.head {
            join(&mut placed.head, &c.text);
        } else {
            join(&mut placed.pending, &c.text);
        }
    }
    placed
}

fn join(a: &mut String, b: &str) {
    if !a.is_empty() {
        a.push('\n');
    }
    a.push_str(b);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(col: usize, t: &str) -> GapLine {
        GapLine::Comment {
            col,
            text: t.into(),
        }
    }

    fn texts(v: &[Scanned]) -> Vec<(bool, &str)> {
        v.iter().map(|s| (s.head, s.text.as_str())).collect()
    }

    /// Right below content and followed by a blank line: a foot; after the blank
    /// line: the next token's head.
    #[test]
    fn foot_then_head() {
        let gap = [c(0, "# f"), GapLine::Blank, c(0, "# h")];
        let s = scan(&gap, Prior::Content, 0, Some(0), Some(0));
        assert_eq!(texts(&s), [(false, "# f"), (true, "# h")]);
        assert_eq!(s[0].token_mark, PRIOR);
        // After a VALUE token the block is not a foot.
        let s = scan(&gap, Prior::Value, 0, Some(2), Some(0));
        assert_eq!(texts(&s), [(true, "# f\n\n# h")]);
    }

    /// A comment dedented below the open block ends the text before it as a foot; a
    /// dedented block is unfolded at its own position, not with the prior token.
    #[test]
    fn dedent_splits() {
        let gap = [c(6, "# f5"), c(0, "# f6"), c(2, "# c7"), GapLine::Blank];
        let s = scan(&gap, Prior::Content, 4, Some(0), Some(0));
        assert_eq!(
            texts(&s),
            [(false, "# f5"), (false, "# f6"), (false, "# c7")]
        );
        assert_eq!(s[0].token_mark, PRIOR);
        assert_eq!(s[1].token_mark, s[1].start);
        assert_eq!(s[2].token_mark, s[2].start);
        // The block at indentation 4 ends before the gap; the one at 2 at `# c7`, so
        // its mapping's end takes `# f6` and `# c7`.
        let b4 = block_end(&s, 4, BEFORE);
        let b2 = block_end(&s, 2, b4);
        assert_eq!((b4, b2), (BEFORE, s[2].start));
        let p = place(s, true, &[(b4, true), (b2, true)], String::new());
        assert_eq!(p.prior, "# f5");
        assert_eq!(p.ends, [(1, "# f6\n# c7".to_string())]);
    }
}
