//! A revision's `spec.tasks`, reconstructed from the `kpt:` annotations of its history as
//! Go Porch's `loadTasks` does, without walking the whole history for each revision.
//!
//! Porch walks history newest first from the revision's commit and keeps the creation task
//! annotated for the revision's package and workspace, stopping at `init`/`clone`. A
//! placeholder (workspace `main`) or a revision created by `edit` never meets an
//! `init`/`clone` of its own workspace, so that walk reads every commit of the repository:
//! with 5,000 revisions, 1,000 placeholders made registration quadratic (over a minute) and
//! every publish re-walked 10,000 commits.
//!
//! [`TaskIndex`] records, for every commit reachable from an indexed commit, which
//! (package, workspace) keys it carries a creation task for. The walk then starts only when
//! the key has such commits, and stops once it has passed all of them: the same answer,
//! reading only the commits between the revision and its creation.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};

use git2::{Oid, Repository};

use crate::discovery::Entry;
use crate::error::GitError;
use crate::objects::Caches;

/// Creation-task commits by (package path, workspace), over a history closed under
/// ancestry: an indexed commit's ancestors are all indexed.
#[derive(Default)]
pub(crate) struct TaskIndex {
    indexed: HashSet<Oid>,
    by_key: HashMap<(String, String), Vec<Oid>>,
}

impl TaskIndex {
    /// Indexes `tip` and its ancestors not indexed yet (each commit read once, ever).
    fn cover(&mut self, repo: &Repository, caches: &mut Caches, tip: Oid) -> Result<(), GitError> {
        if self.indexed.contains(&tip) {
            return Ok(());
        }
        // Collected apart and merged only when complete, so an error (a missing object)
        // never leaves a commit marked indexed with unindexed ancestors.
        let mut new = HashSet::new();
        let mut keys = Vec::new();
        let mut stack = vec![tip];
        while let Some(c) = stack.pop() {
            if self.indexed.contains(&c) || !new.insert(c) {
                continue;
            }
            let info = caches.commit(repo, c)?;
            for a in info.annotations.iter() {
                if a.task.as_deref().is_some_and(|t| t.is_creation()) {
                    let ws = if a.workspace_name.is_empty() {
                        &a.revision
                    } else {
                        &a.workspace_name
                    };
                    keys.push(((a.package_path.clone(), ws.clone()), c));
                }
            }
            stack.extend(info.parents.iter().copied());
        }
        self.indexed.extend(new);
        for (k, c) in keys {
            self.by_key.entry(k).or_default().push(c);
        }
        Ok(())
    }

    fn candidates(&self, package: &str, workspace: &str) -> Option<&[Oid]> {
        // A borrowed lookup would need a second map shape; keys are short.
        self.by_key
            .get(&(package.to_owned(), workspace.to_owned()))
            .map(Vec::as_slice)
    }
}

/// History newest first by committer time (Porch's `LogOrderCommitterTime`), over cached
/// commits. libgit2's time-sorted revwalk cannot serve here: any sorting makes it "limited",
/// which reads the whole history before it returns the first commit.
struct TimeWalk {
    /// Commit time, then arrival order (earlier first among equal times).
    queue: BinaryHeap<(i64, Reverse<u64>, Oid)>,
    seen: HashSet<Oid>,
    arrivals: u64,
    started: Option<Oid>,
}

impl TimeWalk {
    fn new(start: Oid) -> Self {
        TimeWalk {
            queue: BinaryHeap::new(),
            seen: HashSet::new(),
            arrivals: 0,
            started: Some(start),
        }
    }

    fn push(&mut self, repo: &Repository, caches: &mut Caches, oid: Oid) -> Result<(), GitError> {
        if self.seen.insert(oid) {
            let time = caches.commit(repo, oid)?.commit_time;
            self.queue.push((time, Reverse(self.arrivals), oid));
            self.arrivals += 1;
        }
        Ok(())
    }

    fn next(&mut self, repo: &Repository, caches: &mut Caches) -> Result<Option<Oid>, GitError> {
        if let Some(start) = self.started.take() {
            self.push(repo, caches, start)?;
        }
        let Some((_, _, oid)) = self.queue.pop() else {
            return Ok(None);
        };
        let info = caches.commit(repo, oid)?;
        for p in info.parents.iter() {
            self.push(repo, caches, *p)?;
        }
        Ok(Some(oid))
    }
}

/// Reconstructs `spec.tasks` (Porch's `loadTasks`): walking history newest first, the last
/// creation task annotated for this package and workspace, stopping at `init`/`clone`.
pub(crate) fn load_tasks(
    repo: &Repository,
    caches: &mut Caches,
    index: &mut TaskIndex,
    entry: &Entry,
) -> Result<Vec<porch_core::revision::Task>, GitError> {
    tasks_at(
        repo,
        caches,
        index,
        entry.commit,
        &entry.full_path,
        &entry.task_workspace,
    )
}

/// [`load_tasks`] for the revision of `package` and `ws` at `commit`.
fn tasks_at(
    repo: &Repository,
    caches: &mut Caches,
    index: &mut TaskIndex,
    commit: Oid,
    package: &str,
    ws: &str,
) -> Result<Vec<porch_core::revision::Task>, GitError> {
    index.cover(repo, caches, commit)?;
    let Some(candidates) = index.candidates(package, ws) else {
        // No commit of the repository carries a task for it: Porch's walk finds nothing.
        return Ok(Vec::new());
    };
    // Commits not reached yet that could still change the answer. Candidates outside this
    // revision's history (another branch) are never reached; the walk then runs to its end.
    let mut pending: HashSet<Oid> = candidates.iter().copied().collect();
    let mut walk = TimeWalk::new(commit);
    let mut tasks = Vec::new();
    while let Some(oid) = walk.next(repo, caches)? {
        if !pending.remove(&oid) {
            continue;
        }
        let info = caches.commit(repo, oid)?;
        for a in &info.annotations {
            let ws_matches =
                a.workspace_name == ws || (a.workspace_name.is_empty() && a.revision == ws);
            if a.package_path != package || !ws_matches {
                continue;
            }
            if let Some(t) = a.task.as_deref().filter(|t| t.is_creation()) {
                tasks = vec![t.clone()];
                if matches!(t.task_type.as_str(), "init" | "clone") {
                    return Ok(tasks);
                }
            }
        }
        if pending.is_empty() {
            break;
        }
    }
    Ok(tasks)
}

#[cfg(test)]
mod tests {
    use super::*;
    use git2::{Signature, Time};

    /// Porch's walk as it was: every commit from `commit`, newest first.
    fn full_walk(
        repo: &Repository,
        caches: &mut Caches,
        commit: Oid,
        package: &str,
        ws: &str,
    ) -> Vec<String> {
        let mut walk = repo.revwalk().expect("revwalk");
        walk.set_sorting(git2::Sort::TIME).expect("sorting");
        walk.push(commit).expect("push");
        let mut tasks = Vec::new();
        for oid in walk {
            let info = caches.commit(repo, oid.expect("oid")).expect("commit");
            for a in &info.annotations {
                let ws_matches =
                    a.workspace_name == ws || (a.workspace_name.is_empty() && a.revision == ws);
                if a.package_path != package || !ws_matches {
                    continue;
                }
                if let Some(t) = a.task.as_deref().filter(|t| t.is_creation()) {
                    tasks = vec![t.task_type.clone()];
                    if matches!(t.task_type.as_str(), "init" | "clone") {
                        return tasks;
                    }
                }
            }
        }
        tasks
    }

    /// A history shaped as Porch writes it: draft commits with creation tasks, two-parent
    /// approval commits on main, an edit-created revision, a legacy annotation without a
    /// workspace, a deleted-and-recreated workspace, and a draft branch off main.
    fn history(repo: &Repository) -> Vec<Oid> {
        let tree = {
            let mut b = repo.treebuilder(None).expect("treebuilder");
            let blob = repo.blob(b"x").expect("blob");
            b.insert("f", blob, 0o100644).expect("insert");
            b.write().expect("tree")
        };
        let tree = repo.find_tree(tree).expect("tree");
        let mut t = 1_700_000_000;
        let mut commit = |msg: &str, parents: &[Oid]| -> Oid {
            t += 1;
            let sig = Signature::new("p", "p@example.com", &Time::new(t, 0)).expect("sig");
            let parents: Vec<git2::Commit<'_>> = parents
                .iter()
                .map(|p| repo.find_commit(*p).expect("parent"))
                .collect();
            let refs: Vec<&git2::Commit<'_>> = parents.iter().collect();
            repo.commit(None, &sig, &sig, msg, &tree, &refs)
                .expect("commit")
        };
        let kpt = |pkg: &str, ws: &str, rev: &str, task: Option<&str>| {
            let task = task
                .map(|t| format!(",\"task\":{{\"type\":\"{t}\"}}"))
                .unwrap_or_default();
            format!(
                "m\n\nkpt:{{\"package\":\"{pkg}\",\"workspaceName\":\"{ws}\",\"revision\":\"{rev}\"{task}}}\n"
            )
        };
        let root = commit("Initial", &[]);
        let d1 = commit(&kpt("a", "ws1", "0", Some("init")), &[root]);
        let m1 = commit(&kpt("a", "ws1", "1", None), &[root, d1]);
        let d2 = commit(&kpt("a", "ws2", "0", Some("edit")), &[m1]);
        let m2 = commit(&kpt("a", "ws2", "2", None), &[m1, d2]);
        let legacy = commit(&kpt("b", "", "v1", Some("clone")), &[m2]);
        let d3 = commit(&kpt("b", "ws1", "0", Some("upgrade")), &[legacy]);
        let d3b = commit(&kpt("b", "ws1", "0", Some("init")), &[d3]);
        let m3 = commit(&kpt("b", "ws1", "2", None), &[legacy, d3b]);
        // A draft off main that was never approved, and main moving on.
        let side = commit(&kpt("c", "ws1", "0", Some("edit")), &[m3]);
        let side2 = commit(&kpt("c", "ws1", "0", Some("upgrade")), &[side]);
        let m4 = commit(&kpt("a", "ws3", "0", Some("edit")), &[m3]);
        vec![root, d1, m1, d2, m2, legacy, d3, d3b, m3, side, side2, m4]
    }

    #[test]
    fn same_tasks_as_the_full_walk() {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = Repository::init_bare(dir.path()).expect("init");
        let commits = history(&repo);
        let keys = [
            ("a", "ws1"),
            ("a", "ws2"),
            ("a", "ws3"),
            ("a", "main"),
            ("b", "v1"),
            ("b", "ws1"),
            ("b", "main"),
            ("c", "ws1"),
            ("zz", "ws1"),
        ];
        let mut caches = Caches::default();
        let mut index = TaskIndex::default();
        let mut found = 0;
        // Newest first, then oldest first: the index must not depend on what it saw first.
        for order in [true, false] {
            let mut starts = commits.clone();
            if order {
                starts.reverse();
            }
            for &c in &starts {
                for (pkg, ws) in keys {
                    let want = full_walk(&repo, &mut caches, c, pkg, ws);
                    let got: Vec<String> = tasks_at(&repo, &mut caches, &mut index, c, pkg, ws)
                        .expect("tasks")
                        .into_iter()
                        .map(|t| t.task_type)
                        .collect();
                    assert_eq!(got, want, "commit {c} package {pkg} workspace {ws}");
                    found += usize::from(!want.is_empty());
                }
            }
        }
        assert!(found > 20, "the history exercises few keys: {found}");
    }

    #[test]
    fn a_key_without_tasks_reads_nothing_more() {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = Repository::init_bare(dir.path()).expect("init");
        let commits = history(&repo);
        let head = *commits.last().expect("commits");
        let mut caches = Caches::default();
        let mut index = TaskIndex::default();
        tasks_at(&repo, &mut caches, &mut index, head, "a", "main").expect("tasks");
        // Every ancestor of main's head is indexed; the unapproved side draft is not.
        assert_eq!(index.indexed.len(), commits.len() - 2);
        assert!(index.candidates("a", "main").is_none());
        assert_eq!(index.candidates("b", "v1").map(<[Oid]>::len), Some(1));
    }
}
