//! Go's `text/tabwriter` as kubectl configures it (`minwidth 6, tabwidth 4, padding 3,
//! padchar ' ', flags 0`), so tables line up byte for byte with upstream's.

const MIN_WIDTH: usize = 6;
const PADDING: usize = 3;

/// Buffers tab-separated lines and aligns their cells on [`TabWriter::finish`].
#[derive(Debug, Default)]
pub struct TabWriter {
    text: String,
}

impl TabWriter {
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends raw text: cells end at `\t`, lines at `\n`.
    pub fn write(&mut self, s: &str) {
        self.text.push_str(s);
    }

    /// The aligned output.
    pub fn finish(self) -> String {
        let mut lines: Vec<Vec<&str>> = self
            .text
            .split('\n')
            .map(|l| l.split('\t').collect())
            .collect();
        // A trailing newline leaves one empty line behind; it is not part of the output.
        let trailing_newline = self.text.ends_with('\n');
        if trailing_newline {
            lines.pop();
        }
        let mut out = String::new();
        let mut widths = Vec::new();
        format(&mut out, &lines, &mut widths, 0, lines.len(), 0);
        out
    }
}

/// Go's `Writer.format`: a column block is a run of consecutive lines that have a
/// tab-terminated cell in `column`; each block gets its own width.
fn format(
    out: &mut String,
    lines: &[Vec<&str>],
    widths: &mut Vec<usize>,
    mut line0: usize,
    line1: usize,
    column: usize,
) {
    let mut this = line0;
    while this < line1 {
        if column + 1 >= lines[this].len() {
            this += 1;
            continue;
        }
        write_lines(out, lines, widths, line0, this);
        line0 = this;
        let mut width = MIN_WIDTH;
        while this < line1 {
            let line = &lines[this];
            if column + 1 >= line.len() {
                break;
            }
            let w = line[column].chars().count() + PADDING;
            width = width.max(w);
            this += 1;
        }
        widths.push(width);
        format(out, lines, widths, line0, this, column + 1);
        widths.pop();
        line0 = this;
    }
    write_lines(out, lines, widths, line0, line1);
}

fn write_lines(
    out: &mut String,
    lines: &[Vec<&str>],
    widths: &[usize],
    line0: usize,
    line1: usize,
) {
    for line in &lines[line0..line1] {
        for (j, cell) in line.iter().enumerate() {
            out.push_str(cell);
            if j + 1 < line.len()
                && let Some(w) = widths.get(j)
            {
                let pad = w.saturating_sub(cell.chars().count());
                out.extend(std::iter::repeat_n(' ', pad));
            }
        }
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligns_like_kubectl() {
        let mut w = TabWriter::new();
        w.write("NAME\tDESC\n");
        w.write("test-blueprints\tTest Blueprints\n");
        assert_eq!(
            w.finish(),
            "NAME              DESC\ntest-blueprints   Test Blueprints\n"
        );
    }

    #[test]
    fn min_width_applies() {
        let mut w = TabWriter::new();
        w.write("A\tB\n");
        assert_eq!(w.finish(), "A     B\n");
    }

    #[test]
    fn ragged_lines_form_blocks() {
        let mut w = TabWriter::new();
        w.write("aaaaaaaa\tb\nc\n");
        assert_eq!(w.finish(), "aaaaaaaa   b\nc\n");
    }
}
