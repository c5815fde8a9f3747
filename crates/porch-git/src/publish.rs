//! Publishing a revision as Go Porch does (spec §8.3, §11.3).
//!
//! A draft commit (content on top of the branch head, annotated with the creation task),
//! then a two-parent approval commit (branch head, draft) annotated with the revision, then
//! one atomic push: branch moves from the head we built on, tag `<path>/v<N>` must not exist,
//! and a mirrored draft/proposed branch is deleted from the value we read. If only the branch
//! moved, we fetch and rebuild on the new head (as Porch retries); a tag that now exists, or
//! the workspace published meanwhile, is a Conflict, so no revision number is used twice.

use porch_core::lifecycle::Lifecycle;
use porch_core::names::Revision;
use porch_core::repository::{PublishContent, PublishRequest};
use porch_core::revision::PackageRevisionKey;

use crate::annotation;
use crate::discovery::{Entry, Snapshot};
use crate::error::GitError;
use crate::mirror::MirrorState;
use crate::packed;
use crate::refs::RefName;
use crate::tree;
use crate::worker::{self, OpContext};

/// Publishes `req`; returns the new revision's entry.
pub(crate) fn publish(
    state: &mut MirrorState,
    ctx: &OpContext,
    req: &PublishRequest,
) -> Result<Entry, GitError> {
    let mut attempt = 0;
    loop {
        let snap = worker::snapshot(state, ctx)?;
        check_not_published(&snap, req)?;
        match publish_once(state, ctx, req, &snap) {
            Err(GitError::Conflict(msg)) if attempt < ctx.publish_retries => {
                attempt += 1;
                tracing::info!(package = %req.package, attempt, %msg, "publish lost a race; re-fetching and retrying");
                worker::sync(state, ctx)?;
            }
            other => return other,
        }
    }
}

fn publish_once(
    state: &mut MirrorState,
    ctx: &OpContext,
    req: &PublishRequest,
    snap: &Snapshot,
) -> Result<Entry, GitError> {
    let ws = req.workspace.as_str();
    let revision = next_revision(snap, req);
    let t = std::time::Instant::now();
    let head = worker::branch_head(&state.repo, &ctx.scope.branch);
    let (tag, updates) = packed::write_packed(&state.repo, &state.path, |repo| {
        let (tag, updates) = build_commits(repo, ctx, req, snap, head, revision)?;
        let tips = updates.iter().filter_map(|(_, new, _)| *new).collect();
        let known = updates
            .iter()
            .filter_map(|(_, _, expected)| *expected)
            .chain(head)
            .collect();
        Ok(((tag, updates), packed::NewCommits { tips, known }))
    })?;
    let built = t.elapsed();
    worker::push_and_apply(state, ctx, &updates)?;
    tracing::debug!(
        build_ms = built.as_millis() as u64,
        push_ms = (t.elapsed() - built).as_millis() as u64,
        "publish pushed"
    );
    tracing::info!(package = %req.package, workspace = ws, revision = revision.get(), "published");

    worker::refresh(state, ctx)?;
    let snap = worker::snapshot(state, ctx)?;
    snap.entries
        .values()
        .find(|e| e.ref_name == tag)
        .map(|e| Entry::clone(e))
        .ok_or_else(|| GitError::Command {
            args: "publish".into(),
            stderr: format!("published tag {} not discovered", tag.short()),
        })
}

type Updates = Vec<(RefName, Option<git2::Oid>, Option<git2::Oid>)>;

/// Writes the draft and approval commits; returns the tag and the ref updates to push.
fn build_commits(
    repo: &git2::Repository,
    ctx: &OpContext,
    req: &PublishRequest,
    snap: &Snapshot,
    head: Option<git2::Oid>,
    revision: Revision,
) -> Result<(RefName, Updates), GitError> {
    let full = req.package.in_directory(&ctx.scope.dir);
    let ws = req.workspace.as_str();
    let head_tree = head
        .map(|h| repo.find_commit(h).and_then(|c| c.tree()))
        .transpose()?
        .map(|t| t.id());

    let author = worker::signature(&ctx.author_for(&req.published_by))?;
    let committer = worker::porch_signature()?;
    let mut updates = Vec::new();
    let (draft_commit, package_tree) = match &req.content {
        PublishContent::Files { files, task } => {
            if !files.contains_key("Kptfile") {
                return Err(GitError::Invalid(
                    "package must contain Kptfile at root".into(),
                ));
            }
            let pkg_tree = tree::build(repo, files)?;
            let root = tree::replace_dir(repo, head_tree, &full, Some(pkg_tree))?
                .map_or_else(|| tree::empty(repo), Ok)?;
            let msg = annotation::draft_commit_message(&full, ws, task.as_ref());
            let parents: Vec<git2::Commit<'_>> = head
                .map(|h| repo.find_commit(h))
                .transpose()?
                .into_iter()
                .collect();
            let parent_refs: Vec<&git2::Commit<'_>> = parents.iter().collect();
            let c = repo.commit(
                None,
                &author,
                &committer,
                &msg,
                &repo.find_tree(root)?,
                &parent_refs,
            )?;
            (c, pkg_tree)
        }
        PublishContent::MirroredDraft { expected_commit } => {
            let key = PackageRevisionKey {
                repository: ctx.scope.repo.clone(),
                package: req.package.clone(),
                workspace: req.workspace.clone(),
                revision: Revision::UNPUBLISHED,
            };
            let d = snap.entries.get(&key).ok_or_else(|| {
                GitError::NotFound(format!("no draft or proposed branch for {}", key.name()))
            })?;
            // Publishing content the caller has not seen would publish someone else's edit.
            if let Some(exp) = expected_commit
                && *exp != d.commit.to_string()
            {
                return Err(GitError::Conflict(format!(
                    "branch {} is at {}, the caller expected {exp}",
                    d.ref_name.short(),
                    d.commit
                )));
            }
            // The branch may have been written by someone else: its names are checked
            // like those of a tree built here.
            tree::verify(repo, d.tree, "")?;
            updates.push((d.ref_name.clone(), None, Some(d.commit)));
            (d.commit, d.tree)
        }
    };

    let root = tree::replace_dir(repo, head_tree, &full, Some(package_tree))?
        .map_or_else(|| tree::empty(repo), Ok)?;
    let msg = annotation::approval_commit_message(&full, ws, revision.get());
    let mut parents = Vec::new();
    if let Some(h) = head {
        parents.push(repo.find_commit(h)?);
    }
    parents.push(repo.find_commit(draft_commit)?);
    let parent_refs: Vec<&git2::Commit<'_>> = parents.iter().collect();
    let approval = repo.commit(
        None,
        &author,
        &committer,
        &msg,
        &repo.find_tree(root)?,
        &parent_refs,
    )?;

    let tag = RefName::tag(&full, revision.get());
    updates.insert(0, (tag.clone(), Some(approval), None));
    updates.insert(
        0,
        (
            RefName::Branch(ctx.scope.branch.clone()),
            Some(approval),
            head,
        ),
    );
    Ok((tag, updates))
}

/// A workspace is published at most once per package (spec §2.1 uniqueness); publishing it
/// again means another writer won.
fn check_not_published(snap: &Snapshot, req: &PublishRequest) -> Result<(), GitError> {
    let dup = snap.entries.values().find(|e| {
        e.meta.key.package == req.package
            && e.meta.key.workspace == req.workspace
            && e.meta.key.revision.is_published_number()
            && e.meta.lifecycle.is_published()
    });
    match dup {
        Some(e) => Err(GitError::Conflict(format!(
            "workspace {} of package {} is already published as revision {}",
            req.workspace, req.package, e.meta.key.revision
        ))),
        None => Ok(()),
    }
}

/// `1 + max(revision)` over the package's Published/DeletionProposed revisions.
fn next_revision(snap: &Snapshot, req: &PublishRequest) -> Revision {
    let max = snap
        .entries
        .values()
        .filter(|e| {
            e.meta.key.package == req.package
                && matches!(
                    e.meta.lifecycle,
                    Lifecycle::Published | Lifecycle::DeletionProposed
                )
        })
        .map(|e| e.meta.key.revision.get())
        .max()
        .unwrap_or(0)
        .max(0);
    Revision::from_raw(max + 1)
}

/// The commit a revision points at, for callers that only hold its key.
pub(crate) fn entry<'a>(
    snap: &'a Snapshot,
    key: &PackageRevisionKey,
) -> Result<&'a Entry, GitError> {
    snap.entries.get(key).map(|e| &**e).ok_or_else(|| {
        GitError::NotFound(format!(
            "package revision {} (revision {}) not found",
            key.name(),
            key.revision
        ))
    })
}
