//! go.starlark.net features the Rust dialect lacks, rewritten into what it
//! has before parsing: a `while cond:` loop becomes a `for` over a huge range
//! that breaks when the condition no longer holds (the run's time and step
//! limits still stop a loop that never ends). A one-line `while cond: stmt`
//! gets its statement on a line of its own.
//!
//! The break test is a line of its own, so the rewritten script has more
//! lines than the original; [`Lines`] maps positions back for the error
//! messages that name them.

use super::scan::outside_strings;

/// Iterations a rewritten `while` may make; larger than any loop finishes
/// within the time limit.
const FOREVER: &str = "2147483647";

/// Where each line of a rewritten script came from.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Lines {
    /// Per rewritten line (0-based): the original line (0-based) and, for a
    /// line holding a moved `while` condition, the column the condition starts
    /// at here and in the original.
    lines: Vec<(usize, Option<(usize, usize)>)>,
}

impl Lines {
    /// The original 1-based line and column of a 1-based position in the
    /// rewritten script.
    pub(crate) fn original(&self, line: usize, col: usize) -> (usize, usize) {
        match self.lines.get(line.wrapping_sub(1)) {
            None => (line, col),
            Some(&(orig, None)) => (orig + 1, col),
            Some(&(orig, Some((here, there)))) => {
                // A position in the moved condition keeps its place in it; others
                // name the start of the `while` statement's condition.
                let col = if col > here {
                    col - here + there
                } else {
                    there + 1
                };
                (orig + 1, col)
            }
        }
    }
}

/// Rewrites every `while <cond>:` line.
pub(crate) fn rewrite(source: &str) -> (String, Lines) {
    let mut map = Lines::default();
    if !source.lines().any(|l| while_header(l).is_some()) {
        return (source.to_string(), map);
    }
    let lines: Vec<&str> = source.lines().collect();
    let mut out = String::with_capacity(source.len());
    for (i, &line) in lines.iter().enumerate() {
        let Some((indent, cond, cond_at, body)) = while_header(line) else {
            out.push_str(line);
            out.push('\n');
            map.lines.push((i, None));
            continue;
        };
        // The body's indentation is that of the next non-blank, non-comment line
        // (or the header's plus two for a one-line loop).
        let next_indent = lines[i + 1..]
            .iter()
            .find(|l| {
                let t = l.trim();
                !t.is_empty() && !t.starts_with('#')
            })
            .map(|l| &l[..l.len() - l.trim_start().len()])
            .filter(|b| b.len() > indent.len() && body.is_none());
        let body_indent = next_indent.map_or_else(|| format!("{indent}  "), str::to_string);
        out.push_str(&format!("{indent}for _ in range({FOREVER}):\n"));
        map.lines.push((i, None));
        let test = format!("{body_indent}if not (");
        out.push_str(&format!("{test}{cond}): break\n"));
        map.lines.push((i, Some((test.chars().count(), cond_at))));
        if let Some(body) = body {
            out.push_str(&format!("{body_indent}{body}\n"));
            map.lines.push((i, None));
        }
    }
    if !source.ends_with('\n') && out.ends_with('\n') {
        out.pop();
    }
    (out, map)
}

/// `(indent, condition, condition's column, one-line body)` of a
/// `while <cond>:` line (an optional trailing comment allowed), or `None`.
fn while_header(line: &str) -> Option<(&str, &str, usize, Option<&str>)> {
    let trimmed = line.trim_start();
    let indent = &line[..line.len() - trimmed.len()];
    let rest = trimmed.strip_prefix("while")?;
    if !rest.starts_with([' ', '\t', '(']) {
        return None;
    }
    let colon = header_colon(rest)?;
    let cond = rest[..colon].trim();
    if cond.is_empty() {
        return None;
    }
    let body = rest[colon + 1..].trim();
    let body = (!body.is_empty() && !body.starts_with('#')).then_some(body);
    let cond_at = line[..line.len() - rest.len()].chars().count()
        + rest[..rest.len() - rest.trim_start().len()].chars().count();
    Some((indent, cond, cond_at, body))
}

/// The offset of the `:` ending a `while` header in `rest`: the first outside
/// brackets and string literals.
fn header_colon(rest: &str) -> Option<usize> {
    for (i, c, depth) in outside_strings(rest) {
        match c {
            '#' => return None,
            ':' if depth == 0 => return Some(i),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn while_becomes_a_breaking_for() {
        let src = "i = 0\nwhile i < 3:  # count\n  i += 1\nprint(i)\n";
        assert_eq!(
            rewrite(src).0,
            "i = 0\nfor _ in range(2147483647):\n  if not (i < 3): break\n  i += 1\nprint(i)\n"
        );
        let nested = "def f(n):\n    while (n > 0):\n        n -= 1\n    return n";
        assert_eq!(
            rewrite(nested).0,
            "def f(n):\n    for _ in range(2147483647):\n        if not ((n > 0)): break\n        n -= 1\n    return n"
        );
        // A one-line loop gets its body on a line of its own.
        assert_eq!(
            rewrite("while x[1:2]: x.pop()\n").0,
            "for _ in range(2147483647):\n  if not (x[1:2]): break\n  x.pop()\n"
        );
        // Not loops: names starting with `while`.
        assert_eq!(rewrite("whiles = 1\n").0, "whiles = 1\n");
    }

    #[test]
    fn positions_map_back_to_the_original_lines() {
        let src = "i = 0\nwhile i < nope:\n  i += 1\nprint(x)\n";
        let (_, lines) = rewrite(src);
        // `nope` on the break test (line 3, column 15) is line 2, column 11.
        assert_eq!(lines.original(3, 15), (2, 11));
        assert_eq!(lines.original(2, 1), (2, 1));
        // Lines after the loop move back up by one.
        assert_eq!(lines.original(5, 7), (4, 7));
        assert_eq!(lines.original(1, 1), (1, 1));
    }
}
