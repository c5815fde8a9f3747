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

/// Runs pending housekeeping; called by the worker between jobs. The graph is written by a
/// child process the worker does not wait for, so a job queued meanwhile starts at once
/// (git replaces the graph files atomically; readers see the old or the new one).
pub(crate) fn when_idle(state: &mut MirrorState) {
    if let Some(child) = state.graph_writer.as_mut() {
        match child.try_wait() {
            Ok(None) => return,
            Ok(Some(status)) => {
                if !status.success() {
                    tracing::warn!(%status, path = %state.path.display(), "commit-graph write failed");
                }
            }
            Err(e) => tracing::warn!(error = %e, "cannot wait for git commit-graph"),
        }
        state.graph_writer = None;
    }
    if state.graph_debt < GRAPH_EVERY {
        return;
    }
    // Only local work: no network, no credentials. A failure is harmless (the graph is an
    // optional index) and retried after the next batch of updates.
    state.graph_debt = 0;
    let spawned = Command::new("git")
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
        .stderr(Stdio::null())
        .spawn();
    match spawned {
        Ok(child) => {
            tracing::debug!(path = %state.path.display(), "writing commit-graph");
            state.graph_writer = Some(child);
        }
        Err(e) => tracing::warn!(error = %e, "cannot run git commit-graph"),
    }
}

/// Waits for a running graph writer (before the mirror directory is replaced or dropped).
pub(crate) fn finish(state: &mut MirrorState) {
    if let Some(mut child) = state.graph_writer.take() {
        let _ = child.wait();
    }
}
