//! kpt's console output for render and eval: `[RUNNING]`/`[PASS]`/`[FAIL]` lines,
//! results, stderr and the summary. Written to a sink so callers choose stderr or a buffer.

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

/// Lines after `[PASS]`/`[FAIL]`: results, stderr and exit code, indented as kpt does.
pub fn step_details(results: &[ResultItem], stderr: &str, exit_code: Option<i32>) -> Vec<String> {
    let mut lines = Vec::new();
    if !results.is_empty() {
        lines.push("  [Results]:".to_string());
        for r in results {
            lines.push(format!("    {}", result_line(r)));
        }
    }
    if !stderr.is_empty() {
        lines.push("  Stderr:".to_string());
        for l in stderr.split('\n') {
            lines.push(format!("    {l}"));
        }
    }
    if let Some(code) = exit_code {
        lines.push(format!("  Exit code: {code}"));
    }
    lines
}
