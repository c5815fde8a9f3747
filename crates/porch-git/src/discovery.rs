//! Discovery: from the mirror's refs to package revisions, incrementally (spec §11.2).
//!
//! Tags `<path>/v<N>` are published revisions, `drafts/…`/`proposed/…` branches are drafts,
//! packages on the registered branch are the `-1` placeholders, and `deletionProposed/…`
//! branches flip Published to DeletionProposed. Each ref's revision is cached by the ref's
//! target, so a re-list after a sync only reloads refs that moved.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use git2::{Oid, Repository};
use porch_core::lifecycle::Lifecycle;
use porch_core::names::{PackagePath, RepositoryName, Revision, WorkspaceName};
use porch_core::repository::ChangeReport;
use porch_core::revision::{GitLock, Locator, PackageRevisionKey, PackageRevisionMeta, Timestamp};

use crate::error::GitError;
use crate::objects::{Caches, PackageAt};
use crate::refs::{self, DELETION_PROPOSED, RefName};

/// The registration-level facts discovery needs.
#[derive(Debug, Clone)]
pub(crate) struct Scope {
    pub repo: RepositoryName,
    pub url: String,
    pub branch: String,
    /// Directory, trimmed of `/`.
    pub dir: String,
}

/// One discovered revision plus where it lives.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub meta: PackageRevisionMeta,
    pub ref_name: RefName,
    pub commit: Oid,
    pub tree: Oid,
    /// Path from the repository root.
    pub full_path: String,
    /// Workspace to match in annotations when reconstructing tasks.
    pub task_workspace: String,
}

/// What the engine sees: every revision, sorted by key.
///
/// Entries are shared with the index (`Arc`), so building the next snapshot after a sync
/// copies pointers, not revisions, and comparing two snapshots mostly compares pointers.
#[derive(Debug, Default)]
pub(crate) struct Snapshot {
    pub entries: BTreeMap<ByKey, Arc<Entry>>,
    pub branch_head: Option<Oid>,
}

/// A snapshot's map key: the entry's own key, borrowed from the entry, so building a
/// snapshot of thousands of revisions clones pointers instead of key strings. Lookups take
/// a `&PackageRevisionKey` (`Borrow`); order and equality are the key's.
#[derive(Debug, Clone)]
pub(crate) struct ByKey(Arc<Entry>);

impl ByKey {
    pub(crate) fn key(&self) -> &PackageRevisionKey {
        &self.0.meta.key
    }
}

impl PartialEq for ByKey {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for ByKey {}

impl PartialOrd for ByKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ByKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key().cmp(other.key())
    }
}

impl std::borrow::Borrow<PackageRevisionKey> for ByKey {
    fn borrow(&self) -> &PackageRevisionKey {
        self.key()
    }
}

struct MainState {
    head: Oid,
    placeholders: Vec<Arc<Entry>>,
    /// Full package path → newest commit annotated for it (for publishedBy of placeholders).
    latest: HashMap<String, Oid>,
}

/// Per-registration discovery state, owned by the mirror worker.
#[derive(Default)]
pub(crate) struct RepoIndex {
    tags: HashMap<String, (Oid, Option<Arc<Entry>>)>,
    drafts: HashMap<String, (Oid, Option<Arc<Entry>>)>,
    /// `<path>/<v<N>|branch>` of every `deletionProposed/…` branch.
    deletion_proposed: HashSet<String>,
    head: Option<Oid>,
    main: Option<MainState>,
    pub snapshot: Arc<Snapshot>,
    pub synced: bool,
    /// Position in the mirror's [`crate::mirror::RefLog`] this index reflects.
    pub seen: u64,
    /// A ref this index tracks moved since the snapshot was built.
    dirty: bool,
}

impl RepoIndex {
    /// Re-reads all of the mirror's refs and rebuilds the snapshot; returns what changed.
    pub(crate) fn refresh(
        &mut self,
        repo: &Repository,
        caches: &mut Caches,
        scope: &Scope,
    ) -> Result<ChangeReport, GitError> {
        let t0 = std::time::Instant::now();
        let mut present = HashSet::new();
        self.deletion_proposed.clear();
        self.head = None;
        for r in repo.references()? {
            let r = r?;
            let (Ok(name), Some(target)) = (r.name(), r.target()) else {
                continue;
            };
            self.update_ref(repo, caches, scope, name, Some(target))?;
            present.insert(name.to_owned());
        }
        self.tags.retain(|name, _| present.contains(name));
        self.drafts.retain(|name, _| present.contains(name));
        self.dirty = true;
        self.finish(repo, caches, scope, t0)
    }

    /// Re-reads only the refs `names` (local names; missing ones were deleted), when
    /// nothing else moved since the last refresh; returns what changed.
    pub(crate) fn refresh_refs(
        &mut self,
        repo: &Repository,
        caches: &mut Caches,
        scope: &Scope,
        names: &[String],
    ) -> Result<ChangeReport, GitError> {
        let t0 = std::time::Instant::now();
        let mut done = HashSet::new();
        for name in names {
            if done.insert(name.as_str()) {
                let target = repo.find_reference(name).ok().and_then(|r| r.target());
                self.update_ref(repo, caches, scope, name, target)?;
            }
        }
        if !self.dirty {
            // Nothing this registration shows moved (a sync with no change).
            return Ok(ChangeReport::default());
        }
        self.finish(repo, caches, scope, t0)
    }

    /// Takes in one ref's current value (`None`: deleted). A revision is reloaded only
    /// when its ref's target moved.
    fn update_ref(
        &mut self,
        repo: &Repository,
        caches: &mut Caches,
        scope: &Scope,
        name: &str,
        target: Option<Oid>,
    ) -> Result<(), GitError> {
        match RefName::from_local(name) {
            Some(RefName::Tag(t)) => match target {
                None => {
                    self.dirty |= self.tags.remove(name).is_some();
                }
                Some(target) => {
                    if self.tags.get(name).map(|(old, _)| *old) != Some(target) {
                        let entry = load_tag(repo, caches, scope, &t, target)?.map(Arc::new);
                        self.tags.insert(name.to_owned(), (target, entry));
                        self.dirty = true;
                    }
                }
            },
            Some(RefName::Branch(b)) if b == scope.branch => {
                self.dirty |= self.head != target;
                self.head = target;
            }
            Some(RefName::Branch(b)) if b.starts_with(DELETION_PROPOSED) => {
                let key = b[DELETION_PROPOSED.len()..].to_owned();
                self.dirty |= if target.is_some() {
                    self.deletion_proposed.insert(key)
                } else {
                    self.deletion_proposed.remove(&key)
                };
            }
            Some(RefName::Branch(b)) => {
                let Some(parsed) = refs::parse_draft_branch(&b) else {
                    return Ok(());
                };
                match target {
                    None => {
                        self.dirty |= self.drafts.remove(name).is_some();
                    }
                    Some(target) => {
                        if self.drafts.get(name).map(|(old, _)| *old) != Some(target) {
                            let entry =
                                load_draft(repo, caches, scope, parsed, &b, target)?.map(Arc::new);
                            self.drafts.insert(name.to_owned(), (target, entry));
                            self.dirty = true;
                        }
                    }
                }
            }
            None => {}
        }
        Ok(())
    }

    /// Placeholders, the snapshot and its difference to the previous one.
    fn finish(
        &mut self,
        repo: &Repository,
        caches: &mut Caches,
        scope: &Scope,
        t0: std::time::Instant,
    ) -> Result<ChangeReport, GitError> {
        let t_refs = t0.elapsed();
        let head = self.head;
        self.refresh_main(repo, caches, scope, head)?;
        let t_main = t0.elapsed();

        let deletion_proposed = &self.deletion_proposed;
        let mut entries = BTreeMap::new();
        let published = self
            .tags
            .values()
            .filter_map(|(_, e)| e.as_ref())
            .chain(self.main.iter().flat_map(|m| m.placeholders.iter()));
        for e in published {
            let proposed_for_deletion = !deletion_proposed.is_empty() && {
                let suffix = if e.meta.key.revision == Revision::PLACEHOLDER {
                    scope.branch.clone()
                } else {
                    e.meta.key.revision.tag_suffix()
                };
                deletion_proposed.contains(&format!("{}/{}", e.full_path, suffix))
            };
            let e = if proposed_for_deletion {
                let mut flagged = Entry::clone(e);
                flagged.meta.lifecycle = Lifecycle::DeletionProposed;
                Arc::new(flagged)
            } else {
                Arc::clone(e)
            };
            entries.insert(ByKey(Arc::clone(&e)), e);
        }
        // Proposed wins over a draft of the same workspace (deterministic on a half-done move).
        let mut ds: Vec<&Arc<Entry>> = self
            .drafts
            .values()
            .filter_map(|(_, e)| e.as_ref())
            .collect();
        ds.sort_by_key(|e| e.meta.lifecycle == Lifecycle::Proposed);
        for e in ds {
            entries.insert(ByKey(Arc::clone(e)), Arc::clone(e));
        }
        let new = Arc::new(Snapshot {
            entries,
            branch_head: head,
        });
        let t_build = t0.elapsed();
        let report = diff(&self.snapshot, &new);
        tracing::debug!(
            refs_us = t_refs.as_micros() as u64,
            main_us = (t_main - t_refs).as_micros() as u64,
            build_us = (t_build - t_main).as_micros() as u64,
            diff_us = (t0.elapsed() - t_build).as_micros() as u64,
            "discovery refreshed"
        );
        self.snapshot = new;
        self.synced = true;
        self.dirty = false;
        Ok(report)
    }

    fn refresh_main(
        &mut self,
        repo: &Repository,
        caches: &mut Caches,
        scope: &Scope,
        head: Option<Oid>,
    ) -> Result<(), GitError> {
        let Some(head) = head else {
            self.main = None;
            return Ok(());
        };
        if self.main.as_ref().is_some_and(|m| m.head == head) {
            return Ok(());
        }
        let latest = latest_package_commits(
            repo,
            caches,
            head,
            self.main.as_ref().map(|m| (m.head, &m.latest)),
        )?;
        let root = repo.find_commit(head)?.tree()?;
        let base = if scope.dir.is_empty() {
            Some(root.id())
        } else {
            match root.get_path(std::path::Path::new(&scope.dir)) {
                Ok(e) if e.kind() == Some(git2::ObjectType::Tree) => Some(e.id()),
                _ => None,
            }
        };
        let mut placeholders = Vec::new();
        if let Some(base) = base {
            for (rel, pkg) in caches.packages_in(repo, base)?.iter() {
                let full = if scope.dir.is_empty() {
                    rel.clone()
                } else {
                    format!("{}/{rel}", scope.dir)
                };
                let (by, ws) = match latest.get(&full) {
                    Some(c) => {
                        let info = caches.commit(repo, *c)?;
                        let ws = info
                            .annotations
                            .iter()
                            .find(|a| a.package_path == full && !a.workspace_name.is_empty())
                            .map(|a| a.workspace_name.clone())
                            .unwrap_or_default();
                        (Some((info.author_email.clone(), info.author_time)), ws)
                    }
                    None => (None, String::new()),
                };
                let rev = PublishedAt { by };
                let branch_ref = RefName::Branch(scope.branch.clone());
                if let Some(mut e) = build_entry(
                    repo,
                    caches,
                    scope,
                    &full,
                    &scope.branch,
                    Revision::PLACEHOLDER,
                    Lifecycle::Published,
                    branch_ref,
                    head,
                    *pkg,
                    rev,
                )? {
                    e.task_workspace = ws;
                    placeholders.push(Arc::new(e));
                }
            }
        }
        self.main = Some(MainState {
            head,
            placeholders,
            latest,
        });
        Ok(())
    }
}

/// Author of the commit that published a revision (Published/DeletionProposed only).
struct PublishedAt {
    by: Option<(String, i64)>,
}

#[allow(clippy::too_many_arguments)] // one call site per ref kind; a struct would only rename them
fn build_entry(
    repo: &Repository,
    caches: &mut Caches,
    scope: &Scope,
    full_path: &str,
    workspace: &str,
    revision: Revision,
    lifecycle: Lifecycle,
    ref_name: RefName,
    commit: Oid,
    pkg: PackageAt,
    published: PublishedAt,
) -> Result<Option<Entry>, GitError> {
    let rel = refs::relative(full_path, &scope.dir);
    let (Ok(package), Ok(ws)) = (
        PackagePath::discovered(&rel),
        WorkspaceName::discovered(workspace),
    ) else {
        tracing::warn!(
            path = full_path,
            workspace,
            "skipping revision with an unusable name"
        );
        return Ok(None);
    };
    let (published_by, publish_timestamp) = match published.by {
        Some((email, t)) => ((!email.is_empty()).then_some(email), Some(Timestamp(t))),
        None => (None, None),
    };
    let meta = PackageRevisionMeta {
        key: PackageRevisionKey {
            repository: scope.repo.clone(),
            package,
            workspace: ws,
            revision,
        },
        lifecycle,
        commit: commit.to_string(),
        self_lock: Locator::git(GitLock {
            repo: scope.url.clone(),
            directory: full_path.to_owned(),
            git_ref: ref_name.short().to_owned(),
            commit: commit.to_string(),
        }),
        upstream_lock: caches.upstream_lock(repo, pkg.kptfile)?,
        published_by,
        publish_timestamp,
        tasks: Vec::new(),
    };
    Ok(Some(Entry {
        meta,
        ref_name,
        commit,
        tree: pkg.tree,
        full_path: full_path.to_owned(),
        task_workspace: workspace.to_owned(),
    }))
}

fn load_tag(
    repo: &Repository,
    caches: &mut Caches,
    scope: &Scope,
    tag: &str,
    target: Oid,
) -> Result<Option<Entry>, GitError> {
    // Tags without `/` are release tags, not packages.
    let Some((path, rev_str)) = tag.rsplit_once('/') else {
        return Ok(None);
    };
    if !refs::in_directory(path, &scope.dir) {
        return Ok(None);
    }
    // Lightweight tags (what Porch writes) point at the commit itself: no peeling needed.
    // Reading it as a commit through the cache decompresses it once for all later lookups.
    let commit = if caches.commit(repo, target).is_ok() {
        target
    } else {
        match repo
            .find_object(target, None)
            .and_then(|o| o.peel_to_commit())
        {
            Ok(c) => c.id(),
            Err(e) => {
                tracing::warn!(tag, error = %e, "tag does not point to a commit");
                return Ok(None);
            }
        }
    };
    let Some(pkg) = caches.package_at(repo, commit, path)? else {
        tracing::debug!(tag, "tag has no Kptfile at its path; ignored");
        return Ok(None);
    };
    let info = caches.commit(repo, commit)?;
    let revision = Revision::parse_tag_suffix(rev_str);
    let workspace = info
        .annotations
        .iter()
        .find(|a| a.package_path == path && !a.workspace_name.is_empty())
        .map(|a| a.workspace_name.clone())
        .unwrap_or_else(|| rev_str.to_owned());
    let published = PublishedAt {
        by: Some((info.author_email.clone(), info.author_time)),
    };
    build_entry(
        repo,
        caches,
        scope,
        path,
        &workspace,
        revision,
        Lifecycle::Published,
        RefName::Tag(tag.to_owned()),
        commit,
        pkg,
        published,
    )
}

fn load_draft(
    repo: &Repository,
    caches: &mut Caches,
    scope: &Scope,
    (proposed, path, ws): (bool, &str, &str),
    branch: &str,
    target: Oid,
) -> Result<Option<Entry>, GitError> {
    if !refs::in_directory(path, &scope.dir) {
        return Ok(None);
    }
    let Some(pkg) = caches.package_at(repo, target, path)? else {
        tracing::warn!(
            branch,
            "draft branch has no Kptfile at its package path; ignored"
        );
        return Ok(None);
    };
    let lifecycle = if proposed {
        Lifecycle::Proposed
    } else {
        Lifecycle::Draft
    };
    let rn = RefName::Branch(branch.to_owned());
    build_entry(
        repo,
        caches,
        scope,
        path,
        ws,
        Revision::UNPUBLISHED,
        lifecycle,
        rn,
        target,
        pkg,
        PublishedAt { by: None },
    )
}

/// Newest annotated commit per package path reachable from `head`, in committer-time order
/// (Porch's `findLatestPackageCommit`). With the previous head and map, only new commits are walked.
fn latest_package_commits(
    repo: &Repository,
    caches: &mut Caches,
    head: Oid,
    previous: Option<(Oid, &HashMap<String, Oid>)>,
) -> Result<HashMap<String, Oid>, GitError> {
    if let Some((old, map)) = previous {
        let new = walk_time_order(repo, head, Some(old))?;
        // A fast-forward (the usual case) only adds commits on top of the old head; then
        // only those need reading. After a rewrite, walk everything again.
        let fast_forward = new.iter().any(|c| {
            repo.find_commit(*c)
                .map(|c| c.parent_ids().any(|p| p == old))
                .unwrap_or(false)
        });
        if fast_forward {
            let mut base = map.clone();
            base.extend(newest_per_package(repo, caches, &new)?);
            return Ok(base);
        }
    }
    let all = walk_time_order(repo, head, None)?;
    newest_per_package(repo, caches, &all)
}

fn walk_time_order(repo: &Repository, head: Oid, hide: Option<Oid>) -> Result<Vec<Oid>, GitError> {
    let mut walk = repo.revwalk()?;
    walk.set_sorting(git2::Sort::TIME)?;
    walk.push(head)?;
    if let Some(h) = hide {
        walk.hide(h)?;
    }
    Ok(walk.collect::<Result<Vec<_>, _>>()?)
}

/// First (newest) commit annotated for each package path, in the given order.
fn newest_per_package(
    repo: &Repository,
    caches: &mut Caches,
    commits: &[Oid],
) -> Result<HashMap<String, Oid>, GitError> {
    let mut found: HashMap<String, Oid> = HashMap::new();
    for oid in commits {
        for a in caches.commit(repo, *oid)?.annotations.iter() {
            if !a.package_path.is_empty() && !found.contains_key(&a.package_path) {
                found.insert(a.package_path.clone(), *oid);
            }
        }
    }
    Ok(found)
}

/// Added, changed and removed revisions between two snapshots: one merge pass over both
/// sorted maps; an entry shared by both (same `Arc`) is unchanged without comparing fields.
fn diff(old: &Snapshot, new: &Snapshot) -> ChangeReport {
    use std::cmp::Ordering;
    let mut report = ChangeReport::default();
    let mut olds = old.entries.iter().peekable();
    let mut news = new.entries.iter().peekable();
    loop {
        match (olds.peek(), news.peek()) {
            (None, None) => break,
            (Some((k, _)), None) => {
                report.removed.push(k.key().clone());
                olds.next();
            }
            (None, Some((_, e))) => {
                report.added.push(e.meta.clone());
                news.next();
            }
            (Some((ko, o)), Some((kn, n))) => match ko.cmp(kn) {
                Ordering::Less => {
                    report.removed.push(ko.key().clone());
                    olds.next();
                }
                Ordering::Greater => {
                    report.added.push(n.meta.clone());
                    news.next();
                }
                Ordering::Equal => {
                    if !Arc::ptr_eq(o, n) && o.meta != n.meta {
                        report.changed.push(n.meta.clone());
                    }
                    olds.next();
                    news.next();
                }
            },
        }
    }
    report
}
