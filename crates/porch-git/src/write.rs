//! Writes other than publish: draft mirroring, deletion, deletion proposals (spec §8.3-8.4).
//! Every write is one atomic compare-and-swap push.

use porch_core::lifecycle::Lifecycle;
use porch_core::names::Revision;
use porch_core::repository::DraftWrite;
use porch_core::revision::{Author, PackageRevisionKey};

use crate::annotation;
use crate::discovery::Entry;
use crate::error::GitError;
use crate::mirror::MirrorState;
use crate::packed;
use crate::publish;
use crate::refs::RefName;
use crate::tree;
use crate::worker::{self, OpContext};

/// Creates or updates a draft/proposed branch; the other one is deleted in the same push.
pub(crate) fn write_draft(
    state: &mut MirrorState,
    ctx: &OpContext,
    req: &DraftWrite,
) -> Result<Entry, GitError> {
    if !matches!(req.lifecycle, Lifecycle::Draft | Lifecycle::Proposed) {
        return Err(GitError::Invalid(format!(
            "draft branches hold Draft or Proposed revisions, not {}",
            req.lifecycle
        )));
    }
    if !req.files.contains_key("Kptfile") {
        return Err(GitError::Invalid(
            "package must contain Kptfile at root".into(),
        ));
    }
    let snap = worker::snapshot(state, ctx)?;
    let key = PackageRevisionKey {
        repository: ctx.scope.repo.clone(),
        package: req.package.clone(),
        workspace: req.workspace.clone(),
        revision: Revision::UNPUBLISHED,
    };
    let existing = snap.entries.get(&key);
    let seen = existing.map(|e| e.commit.to_string());
    if seen != req.expected_commit {
        return Err(GitError::Conflict(format!(
            "draft {} is at {:?}, the caller expected {:?}",
            key.name(),
            seen,
            req.expected_commit
        )));
    }
    let full = req.package.in_directory(&ctx.scope.dir);
    let ws = req.workspace.as_str();
    // Objects built in memory and stored as one pack (see `packed`).
    let commit = packed::write_packed(&state.repo, &state.path, |repo| {
        let base = existing
            .map(|e| e.commit)
            .or_else(|| worker::branch_head(repo, &ctx.scope.branch));
        let base_tree = base
            .map(|b| repo.find_commit(b).and_then(|c| c.tree()))
            .transpose()?
            .map(|t| t.id());
        let pkg_tree = tree::build(repo, &req.files)?;
        let commit = match existing {
            // A pure lifecycle move (propose/reject) keeps the commit, as Porch does.
            Some(e) if e.tree == pkg_tree => e.commit,
            _ => {
                let root = tree::replace_dir(repo, base_tree, &full, Some(pkg_tree))?
                    .map_or_else(|| tree::empty(repo), Ok)?;
                let msg = annotation::draft_commit_message(&full, ws, req.task.as_ref());
                let author = worker::signature(&ctx.author_for(&req.author))?;
                let parents: Vec<git2::Commit<'_>> = base
                    .map(|b| repo.find_commit(b))
                    .transpose()?
                    .into_iter()
                    .collect();
                let parent_refs: Vec<&git2::Commit<'_>> = parents.iter().collect();
                repo.commit(
                    None,
                    &author,
                    &worker::porch_signature()?,
                    &msg,
                    &repo.find_tree(root)?,
                    &parent_refs,
                )?
            }
        };
        let known = base.into_iter().collect();
        Ok((
            commit,
            packed::NewCommits {
                tips: vec![commit],
                known,
            },
        ))
    })?;
    let target = match req.lifecycle {
        Lifecycle::Proposed => RefName::proposed(&full, ws),
        _ => RefName::draft(&full, ws),
    };
    if let Some(e) = existing
        && e.ref_name == target
        && e.commit == commit
    {
        // Nothing to push: the branch already holds exactly this (a retried write).
        return Ok(Entry::clone(e));
    }
    let mut updates = vec![];
    match existing {
        Some(e) if e.ref_name == target => {
            updates.push((target.clone(), Some(commit), Some(e.commit)))
        }
        Some(e) => {
            updates.push((target.clone(), Some(commit), None));
            updates.push((e.ref_name.clone(), None, Some(e.commit)));
        }
        None => updates.push((target.clone(), Some(commit), None)),
    }
    worker::push_and_apply(state, ctx, &updates)?;
    worker::refresh(state, ctx)?;
    let snap = worker::snapshot(state, ctx)?;
    publish::entry(&snap, &key).cloned()
}

/// Deletes a revision (spec §8.4).
pub(crate) fn delete(
    state: &mut MirrorState,
    ctx: &OpContext,
    key: &PackageRevisionKey,
    expected: Option<&str>,
) -> Result<(), GitError> {
    let snap = worker::snapshot(state, ctx)?;
    let e = publish::entry(&snap, key)?.clone();
    if let Some(exp) = expected
        && exp != e.commit.to_string()
    {
        return Err(GitError::Conflict(format!(
            "{} is at {}, the caller expected {exp}",
            key.name(),
            e.commit
        )));
    }
    let repo = &state.repo;
    let mut updates = Vec::new();
    let suffix = deletion_suffix(ctx, key);
    let dp = RefName::deletion_proposed(&e.full_path, &suffix);
    if let Some(old) = worker::ref_target(repo, &dp) {
        updates.push((dp, None, Some(old)));
    }
    match &e.ref_name {
        RefName::Branch(b) if *b == ctx.scope.branch => {
            // The placeholder: remove the package directory from the branch.
            let head = worker::branch_head(repo, b)
                .ok_or_else(|| GitError::NotFound(format!("branch {b} not found")))?;
            let head_commit = repo.find_commit(head)?;
            let root = tree::replace_dir(repo, Some(head_commit.tree_id()), &e.full_path, None)?
                .map_or_else(|| tree::empty(repo), Ok)?;
            let sig = worker::signature(&ctx.author_for(&Author::porch()))?;
            let msg = format!("Delete {}", e.full_path);
            let c = repo.commit(
                None,
                &sig,
                &worker::porch_signature()?,
                &msg,
                &repo.find_tree(root)?,
                &[&head_commit],
            )?;
            updates.insert(0, (e.ref_name.clone(), Some(c), Some(head)));
        }
        r => {
            let old = worker::ref_target(repo, r)
                .ok_or_else(|| GitError::NotFound(format!("ref {} not found", r.short())))?;
            updates.insert(0, (r.clone(), None, Some(old)));
        }
    }
    worker::push_and_apply(state, ctx, &updates)?;
    worker::refresh(state, ctx)?;
    Ok(())
}

/// Creates or removes `deletionProposed/<path>/<v<N>|branch>` at the revision's commit.
pub(crate) fn set_deletion_proposed(
    state: &mut MirrorState,
    ctx: &OpContext,
    key: &PackageRevisionKey,
    proposed: bool,
) -> Result<Entry, GitError> {
    let snap = worker::snapshot(state, ctx)?;
    let e = publish::entry(&snap, key)?.clone();
    if !e.meta.lifecycle.is_published() {
        return Err(GitError::Invalid(format!(
            "can only propose published packages for deletion; package {} is not published",
            key.name()
        )));
    }
    let dp = RefName::deletion_proposed(&e.full_path, &deletion_suffix(ctx, key));
    let current = worker::ref_target(&state.repo, &dp);
    let update = match (proposed, current) {
        (true, None) => Some((dp, Some(e.commit), None)),
        (false, Some(old)) => Some((dp, None, Some(old))),
        _ => None,
    };
    if let Some(u) = update {
        worker::push_and_apply(state, ctx, &[u])?;
        worker::refresh(state, ctx)?;
    }
    let snap = worker::snapshot(state, ctx)?;
    publish::entry(&snap, key).cloned()
}

fn deletion_suffix(ctx: &OpContext, key: &PackageRevisionKey) -> String {
    if key.revision == Revision::PLACEHOLDER {
        ctx.scope.branch.clone()
    } else {
        key.revision.tag_suffix()
    }
}
