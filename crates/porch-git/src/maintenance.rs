//! Idle-time housekeeping of a mirror: keeping its commit-graph current.
//!
//! `git fetch` and `git push` both walk every local ref's commit (fetch marks them complete
//! and checks connectivity against `--all`; push excludes every remote ref it has). With
//! thousands of tags that parsing dominates an incremental sync or a publish; a
//! commit-graph turns it into table lookups. The graph is written by the worker thread when
//! its queue is empty, never inside an operation, and as an incremental `--split` layer, so
//! it costs no operation any latency. Commits newer than the graph are simply parsed as
//! before, which is why it is refreshed only after a batch of ref updates.

use std::process::{Command, Stdio};

use crate::mirror::MirrorState;

/// Ref updates (fetched or pushed) after which the graph is refreshed.
const GRAPH_EVERY: usize = 64;

/// Debt recorded after a fresh clone: the whole history is outside the graph.
pub(crate) const AFTER_CLONE: usize = usize::MAX / 2;

/// Records `n` ref updates that may have brought commits the graph lacks.
pub(crate) fn note_ref_updates(state: &mut MirrorState, n: usize) {
    state.graph_debt = state.graph_debt.saturating_add(n);
}

/// Runs pending housekeeping; called by the worker between jobs.
pub(crate) fn when_idle(state: &mut MirrorState) {
    if state.graph_debt < GRAPH_EVERY {
        return;
    }
    let t = std::time::Instant::now();
    // Only local work: no network, no credentials. Failures are harmless (the graph is an
    // optional index) and retried after the next batch.
    let out = Command::new("git")
        .arg("--git-dir")
        .arg(&state.path)
        .args([
            "-c",
            "core.hooksPath=/dev/null",
            "commit-graph",
            "write",
            "--reachable",
            "--split",
            "--no-progress",
        ])
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output();
    match out {
        Ok(o) if o.status.success() => {
            state.graph_debt = 0;
            tracing::debug!(
                ms = t.elapsed().as_millis() as u64,
                path = %state.path.display(),
                "commit-graph written"
            );
        }
        Ok(o) => {
            state.graph_debt = 0;
            tracing::warn!(stderr = %String::from_utf8_lossy(&o.stderr).trim(), "commit-graph write failed");
        }
        Err(e) => {
            state.graph_debt = 0;
            tracing::warn!(error = %e, "cannot run git commit-graph");
        }
    }
}
