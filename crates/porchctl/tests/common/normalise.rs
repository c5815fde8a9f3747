//! The upstream CLI harness's output normalisations (test/e2e/cli/suite.go), older and
//! newer, as the golden runner applies them before comparing.

use serde_json::Value;

/// `reorderCommandStdout`: first line kept, the others sorted, every line newline-ended.
pub fn reorder_lines(s: &str) -> String {
    if s.is_empty() {
        return String::new();
    }
    let mut lines: Vec<&str> = s.lines().collect();
    if lines.len() > 1 {
        lines[1..].sort_unstable();
    }
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// `reorderYamlStdout` minus the re-encoding: lines with `resourceVersion:` or
/// `creationTimestamp:` dropped, then parsed. Comparing parsed values is what comparing
/// go-yaml's re-encoding of both sides amounts to. `None` when it is not YAML.
///
/// The newer harness also drops `uid:` lines (from the output only; its goldens have
/// none): dropping them from both sides passes the goldens of either harness.
pub fn yaml_value(s: &str) -> Option<Value> {
    let kept: String = s
        .lines()
        .filter(|l| {
            !l.contains("resourceVersion:")
                && !l.contains("creationTimestamp:")
                && !l.contains("uid:")
        })
        .map(|l| format!("{l}\n"))
        .collect();
    serde_yaml::from_str(&kept).ok()
}

/// `cleanupStderr`: `[PASS]` lines dropped, every line newline-ended.
pub fn clean_stderr(s: &str) -> String {
    s.lines()
        .filter(|l| !l.contains("[PASS]"))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// `normalizeWhitespace`: runs of spaces collapsed.
pub fn collapse_spaces(s: &str) -> String {
    s.split(' ')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The newer harness's `stripColumns`: the named columns (found as whole words in the
/// header) cut out of every line by the header's byte ranges; a last column to the end.
pub fn strip_columns(out: &str, columns: &[String]) -> String {
    if columns.is_empty() || out.is_empty() {
        return out.to_string();
    }
    let lines: Vec<&str> = out.split('\n').collect();
    let header = lines[0];
    let mut ranges: Vec<(usize, Option<usize>)> = Vec::new();
    for col in columns {
        let Some(at) = whole_word(header, col) else {
            continue;
        };
        let mut end = at + col.len();
        while header.as_bytes().get(end) == Some(&b' ') {
            end += 1;
        }
        ranges.push((at, (end < header.len()).then_some(end)));
    }
    if ranges.is_empty() {
        return out.to_string();
    }
    ranges.sort_by_key(|r| std::cmp::Reverse(r.0));
    lines
        .iter()
        .map(|line| {
            let mut l = line.to_string();
            for (start, end) in &ranges {
                if *start >= l.len() {
                    continue;
                }
                let end = end.unwrap_or(l.len()).min(l.len());
                l.replace_range(*start..end, "");
            }
            l.trim_end_matches(' ').to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn whole_word(header: &str, col: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = header[from..].find(col) {
        let at = from + i;
        let end = at + col.len();
        let left = at == 0 || header.as_bytes()[at - 1] == b' ';
        let right = end >= header.len() || header.as_bytes()[end] == b' ';
        if left && right {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// The newer harness's `{{ANY}}`: each placeholder word of an expected line takes the
/// word at the same position of the actual line (words split on whitespace).
pub fn replace_any(want: &str, got: &str) -> String {
    const ANY: &str = "{{ANY}}";
    if !want.contains(ANY) {
        return want.to_string();
    }
    let got_lines: Vec<&str> = got.split('\n').collect();
    want.split('\n')
        .enumerate()
        .map(|(i, line)| match got_lines.get(i) {
            Some(actual) if line.contains(ANY) => {
                let words: Vec<&str> = actual.split_whitespace().collect();
                line.split_whitespace()
                    .enumerate()
                    .map(|(j, w)| match words.get(j) {
                        Some(a) if w == ANY => *a,
                        _ => w,
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            }
            _ => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}
