//! go.starlark.net features the Rust dialect lacks, rewritten into what it
//! has before parsing: a `while cond:` loop becomes a `for` over a huge range
//! that breaks when the condition no longer holds (the run's time and step
//! limits still stop a loop that never ends).

/// Iterations a rewritten `while` may make; larger than any loop finishes
/// within the time limit.
const FOREVER: &str = "2147483647";

/// Rewrites every block `while <cond>:` line. The break test is a line of its
/// own, so errors after a loop are reported one line later than Go would.
pub(crate) fn rewrite(source: &str) -> String {
    if !source.lines().any(|l| while_header(l).is_some()) {
        return source.to_string();
    }
    let lines: Vec<&str> = source.lines().collect();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        let Some((indent, cond)) = while_header(line) else {
            out.push_str(line);
            out.push('\n');
            continue;
        };
        // The body's indentation is that of the next non-blank, non-comment line.
        let body_indent = lines[i..]
            .iter()
            .find(|l| {
                let t = l.trim();
                !t.is_empty() && !t.starts_with('#')
            })
            .map(|l| &l[..l.len() - l.trim_start().len()])
            .filter(|b| b.len() > indent.len())
            .unwrap_or("    ");
        out.push_str(&format!("{indent}for _ in range({FOREVER}):\n"));
        out.push_str(&format!("{body_indent}if not ({cond}): break\n"));
    }
    if !source.ends_with('\n') && out.ends_with('\n') {
        out.pop();
    }
    out
}

/// `(indent, condition)` of a `while <cond>:` line (an optional trailing
/// comment allowed), or `None`.
fn while_header(line: &str) -> Option<(&str, &str)> {
    let trimmed = line.trim_start();
    let indent = &line[..line.len() - trimmed.len()];
    let rest = trimmed.strip_prefix("while")?;
    if !rest.starts_with([' ', '\t', '(']) {
        return None;
    }
    let rest = match rest.find('#') {
        // A `#` inside a string is not a comment: only strip when no quote precedes it.
        Some(h) if !rest[..h].contains(['"', '\'']) => &rest[..h],
        _ => rest,
    };
    let cond = rest.trim_end().strip_suffix(':')?.trim();
    (!cond.is_empty()).then_some((indent, cond))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn while_becomes_a_breaking_for() {
        let src = "i = 0\nwhile i < 3:  # count\n  i += 1\nprint(i)\n";
        assert_eq!(
            rewrite(src),
            "i = 0\nfor _ in range(2147483647):\n  if not (i < 3): break\n  i += 1\nprint(i)\n"
        );
        let nested = "def f(n):\n    while (n > 0):\n        n -= 1\n    return n";
        assert_eq!(
            rewrite(nested),
            "def f(n):\n    for _ in range(2147483647):\n        if not ((n > 0)): break\n        n -= 1\n    return n"
        );
        // Not loops: names starting with `while`, or a one-line body.
        assert_eq!(rewrite("whiles = 1\n"), "whiles = 1\n");
        assert_eq!(rewrite("while x: pass\n"), "while x: pass\n");
    }
}
