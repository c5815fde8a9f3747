//! Idle-time housekeeping of a mirror: keeping its commit-graph current, and its objects
//! in few packs.
//!
//! `git fetch` and `git push` both walk every local ref's commit (fetch marks them complete
//! and checks connectivity against `--all`; push excludes every remote ref it has). With
//! thousands of tags that parsing dominates an incremental sync or a publish; a
//! commit-graph turns it into table lookups. The graph is written by the worker thread when
//! its queue is empty, never inside an operation, and as an incremental `--split` layer, so
//! it costs no operation any latency. Commits newer than the graph are simply parsed as
//! before, which is why it is refreshed only after a batch of ref updates.
//!
//! Every fetch adds a pack, and every publish one more (see [`crate::packed`]); lookups of
//! a missing object try every pack, so when a batch of updates has left more than
//! [`PACK_LIMIT`] packs (or many loose objects), `git gc --auto` runs instead: it
//! consolidates the packs and writes the commit-graph too. git's own locks keep it safe
//! next to the worker's fetches, pushes and ref updates.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::mirror::MirrorState;

/// Ref updates (fetched or pushed) after which the graph is refreshed.
const GRAPH_EVERY: usize = 64;

/// More packs than this and the next housekeeping is a `git gc --auto`, told the same
/// limit (git's default `gc.autoPackLimit` is 50).
const PACK_LIMIT: usize = 40;
const GC_PACK_LIMIT: &str = "gc.autoPackLimit=40";

/// Loose objects in one fan-out directory above which gc runs (git estimates the same
/// way: `gc.auto` 6700 over 256 directories is about 27 per directory).
const LOOSE_PER_DIR_LIMIT: usize = 27;

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
    // optional index, packs are an optimisation) and retried after the next batch.
    state.graph_debt = 0;
    let gc = needs_gc(&state.path);
    let task: &[&str] = if gc {
        // Not detached: the child is tracked like the graph writer, one at a time.
        &[
            "-c",
            "gc.autoDetach=false",
            "-c",
            GC_PACK_LIMIT,
            "gc",
            "--auto",
            "--quiet",
        ]
    } else {
        &[
            "commit-graph",
            "write",
            "--reachable",
            "--split",
            "--no-progress",
        ]
    };
    let spawned = Command::new("git")
        .arg("--git-dir")
        .arg(&state.path)
        .args(["-c", "core.hooksPath=/dev/null"])
        .args(task)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    match spawned {
        Ok(child) => {
            tracing::debug!(path = %state.path.display(), gc, "housekeeping started");
            state.graph_writer = Some(child);
        }
        Err(e) => tracing::warn!(error = %e, "cannot run git commit-graph"),
    }
}

/// Too many packs, or many loose objects (sampled in one fan-out directory as git does)?
fn needs_gc(git_dir: &Path) -> bool {
    let count = |dir: std::path::PathBuf, keep: &dyn Fn(&std::fs::DirEntry) -> bool| {
        std::fs::read_dir(dir).map_or(0, |d| d.filter_map(Result::ok).filter(keep).count())
    };
    let packs = count(git_dir.join("objects/pack"), &|e| {
        e.path().extension().is_some_and(|x| x == "pack")
    });
    let loose = count(git_dir.join("objects/17"), &|_| true);
    packs > PACK_LIMIT || loose > LOOSE_PER_DIR_LIMIT
}

/// Waits for a running graph writer (before the mirror directory is replaced or dropped).
pub(crate) fn finish(state: &mut MirrorState) {
    if let Some(mut child) = state.graph_writer.take() {
        let _ = child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packed::tests::{commit_of, packs};
    use crate::packed::{NewCommits, write_packed};

    #[test]
    fn gc_is_told_our_pack_limit() {
        assert_eq!(GC_PACK_LIMIT, format!("gc.autoPackLimit={PACK_LIMIT}"));
    }

    #[test]
    fn many_packs_are_consolidated_when_idle() {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = git2::Repository::init_bare(dir.path()).expect("init");
        let mut parent: Option<git2::Oid> = None;
        for _ in 0..PACK_LIMIT + 5 {
            let c = write_packed(&repo, dir.path(), |w| {
                let c = commit_of(w, 1, parent)?;
                Ok((
                    c,
                    NewCommits {
                        tips: vec![c],
                        known: parent.into_iter().collect(),
                    },
                ))
            })
            .expect("write");
            parent = Some(c);
        }
        let tip = parent.expect("commits");
        repo.reference("refs/heads/main", tip, true, "test")
            .expect("ref");
        assert_eq!(packs(dir.path()), PACK_LIMIT + 5);

        let mut state = crate::mirror::MirrorState::new(repo, dir.path().to_owned());
        note_ref_updates(&mut state, GRAPH_EVERY);
        when_idle(&mut state);
        finish(&mut state);
        assert!(packs(dir.path()) < PACK_LIMIT, "gc consolidated the packs");
        let repo = git2::Repository::open_bare(dir.path()).expect("reopen");
        assert_eq!(
            repo.find_commit(tip)
                .expect("tip kept")
                .tree()
                .expect("tree")
                .len(),
            1
        );
        // Below the limits the housekeeping is the commit-graph again.
        note_ref_updates(&mut state, GRAPH_EVERY);
        when_idle(&mut state);
        finish(&mut state);
        assert!(
            dir.path().join("objects/info/commit-graphs").is_dir()
                || dir.path().join("objects/info/commit-graph").is_file()
        );
    }
}
