//! kpt's console output for render and eval: `[RUNNING]`/`[PASS]`/`[FAIL]` lines,
//! results, stderr and the summary. Written to a sink so callers choose stderr or a buffer.

use crate::goquote::go_quote;
use crate::resource_list::{ResultItem, Severity};

/// One result line as kpt prints it: `[info] v1/Service/web spec.x: message`.
pub fn result_line(r: &ResultItem) -> String {
    let sev = match r.severity.unwrap_or_default() {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "info",
    };
    let mut out = format!("[{sev}]");
    if let Some(rr) = &r.resource_ref {
        let mut id = String::new();
        if !rr.api_version.is_empty() {
            id.push_str(&rr.api_version);
            id.push('/');
        }
        id.push_str(&rr.kind);
        id.push('/');
        if !rr.namespace.is_empty() {
            id.push_str(&rr.namespace);
            id.push('/');
        }
        id.push_str(&rr.name);
        out.push(' ');
        out.push_str(&id);
    }
    if let Some(f) = &r.field
        && !f.path.is_empty()
    {
        out.push(' ');
        out.push_str(&f.path);
    }
    out.push_str(": ");
    out.push_str(&r.message);
    out
}

/// How a step's results and stderr are shown under `[PASS]`/`[FAIL]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DetailsStyle {
    /// `fn render`: every stderr line as written.
    #[default]
    Render,
    /// `fn eval` (fnruntime's `MultiLineFormatter` with `UseQuote`): the stderr lines in
    /// Go's `%q`, cut at [`TRUNCATE_LINES`] unless `--truncate-output=false`.
    Eval { truncate: bool },
}

/// fnruntime's `FnExecErrorTruncateLines`.
pub const TRUNCATE_LINES: usize = 4;

/// Lines after `[PASS]`/`[FAIL]`: results, stderr and exit code, indented as kpt does.
pub fn step_details(results: &[ResultItem], stderr: &str, exit_code: Option<i32>) -> Vec<String> {
    step_details_styled(results, stderr, exit_code, DetailsStyle::Render)
}

/// [`step_details`] with the results and stderr shown in `style`.
pub fn step_details_styled(
    results: &[ResultItem],
    stderr: &str,
    exit_code: Option<i32>,
    style: DetailsStyle,
) -> Vec<String> {
    let mut lines = Vec::new();
    // Results are listed whole under `[Results]:` by both commands (kpt HEAD's goldens;
    // 1.0.0-beta.56's `fn eval` titled them `Results:` and cut them like stderr).
    if !results.is_empty() {
        lines.push("  [Results]:".to_string());
        for r in results {
            lines.push(format!("    {}", result_line(r)));
        }
    }
    if !stderr.is_empty() {
        lines.push("  Stderr:".to_string());
        match style {
            DetailsStyle::Render => {
                for l in stderr.split('\n') {
                    lines.push(format!("    {l}"));
                }
            }
            DetailsStyle::Eval { truncate } => {
                let all: Vec<String> = stderr.split('\n').map(go_quote).collect();
                push_truncated(&mut lines, &all, truncate);
            }
        }
    }
    if let Some(code) = exit_code {
        lines.push(format!("  Exit code: {code}"));
    }
    lines
}

/// `MultiLineFormatter`'s body: the lines indented by four, at most
/// [`TRUNCATE_LINES`] of them when truncating, then how many were left out.
fn push_truncated(out: &mut Vec<String>, all: &[String], truncate: bool) {
    let shown = if truncate {
        all.len().min(TRUNCATE_LINES)
    } else {
        all.len()
    };
    for l in &all[..shown] {
        out.push(format!("    {l}"));
    }
    if shown < all.len() {
        out.push(format!(
            "    ...({} line(s) truncated, use '--truncate-output=false' to disable)",
            all.len() - shown
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_stderr_keeps_every_line_as_written() {
        let got = step_details(&[], "a\nb\n", None);
        assert_eq!(got, vec!["  Stderr:", "    a", "    b", "    "]);
    }

    #[test]
    fn quoted_stderr_truncates_after_four_lines_counting_the_last_empty_one() {
        let err: String = (0..6).map(|i| format!("line {i}\n")).collect();
        let got = step_details_styled(&[], &err, None, DetailsStyle::Eval { truncate: true });
        assert_eq!(
            got,
            vec![
                "  Stderr:",
                "    \"line 0\"",
                "    \"line 1\"",
                "    \"line 2\"",
                "    \"line 3\"",
                "    ...(3 line(s) truncated, use '--truncate-output=false' to disable)",
            ]
        );
    }

    #[test]
    fn quoted_stderr_untruncated_shows_all_lines_and_the_exit_code() {
        let got = step_details_styled(&[], "x\ny", Some(2), DetailsStyle::Eval { truncate: false });
        assert_eq!(
            got,
            vec!["  Stderr:", "    \"x\"", "    \"y\"", "  Exit code: 2"]
        );
    }

    #[test]
    fn quoted_stderr_of_four_lines_is_not_truncated() {
        let got = step_details_styled(
            &[],
            "1\n2\n3\n4",
            None,
            DetailsStyle::Eval { truncate: true },
        );
        assert_eq!(got.len(), 5);
        assert!(!got.iter().any(|l| l.contains("truncated")));
    }

    fn info(message: &str) -> ResultItem {
        ResultItem {
            message: message.into(),
            severity: Some(Severity::Info),
            ..Default::default()
        }
    }

    #[test]
    fn results_are_listed_whole_under_the_same_title_in_both_styles() {
        let results: Vec<ResultItem> = (1..=6).map(|i| info(&format!("m{i}"))).collect();
        for style in [DetailsStyle::Render, DetailsStyle::Eval { truncate: true }] {
            let got = step_details_styled(&results, "", None, style);
            assert_eq!(got.len(), 7, "{style:?}");
            assert_eq!(got[0], "  [Results]:");
            assert_eq!(got[6], "    [info]: m6");
        }
    }
}
