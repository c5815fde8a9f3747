//! Operations that run on a mirror's worker thread: sync and the shared push plumbing.

use git2::{Oid, Repository, Signature};
use porch_core::repository::ChangeReport;
use porch_core::revision::Author;

use crate::cli::{self, RefUpdate, Remote};
use crate::discovery::{RepoIndex, Scope, Snapshot};
use crate::error::GitError;
use crate::mirror::MirrorState;
use crate::refs::{LOCAL_BRANCHES, RefName};
use crate::tree;

/// Everything an operation needs to know about its registration.
#[derive(Debug, Clone)]
pub(crate) struct OpContext {
    pub id: u64,
    pub scope: Scope,
    pub remote: Remote,
    pub create_branch: bool,
    /// `spec.git.author`/`email` override.
    pub author: Option<Author>,
    pub publish_retries: u32,
}

impl OpContext {
    /// The commit author: the repository's configured author, else `fallback`.
    pub(crate) fn author_for(&self, fallback: &Author) -> Author {
        self.author.clone().unwrap_or_else(|| fallback.clone())
    }
}

/// Porch's committer identity.
pub(crate) fn porch_signature() -> Result<Signature<'static>, GitError> {
    let a = Author::porch();
    Ok(Signature::now(&a.name, &a.email)?)
}

pub(crate) fn signature(a: &Author) -> Result<Signature<'static>, GitError> {
    Ok(Signature::now(&a.name, &a.email)?)
}

/// Fetches, creates the registered branch if asked to, and re-discovers.
pub(crate) fn sync(state: &mut MirrorState, ctx: &OpContext) -> Result<ChangeReport, GitError> {
    cli::fetch(&state.path, &ctx.remote)?;
    ensure_branch(state, ctx)?;
    refresh(state, ctx)
}

/// Re-discovers from the mirror's current refs (no network).
pub(crate) fn refresh(state: &mut MirrorState, ctx: &OpContext) -> Result<ChangeReport, GitError> {
    let MirrorState {
        repo,
        caches,
        indexes,
        ..
    } = state;
    indexes
        .entry(ctx.id)
        .or_default()
        .refresh(repo, caches, &ctx.scope)
}

/// The current snapshot of a registration (refreshing once if it never ran).
pub(crate) fn snapshot(
    state: &mut MirrorState,
    ctx: &OpContext,
) -> Result<std::sync::Arc<Snapshot>, GitError> {
    if !state
        .indexes
        .get(&ctx.id)
        .is_some_and(|i: &RepoIndex| i.synced)
    {
        refresh(state, ctx)?;
    }
    Ok(state
        .indexes
        .get(&ctx.id)
        .map(|i| std::sync::Arc::clone(&i.snapshot))
        .unwrap_or_default())
}

/// Local mirror value of a branch (`refs/remotes/origin/<b>`).
pub(crate) fn branch_head(repo: &Repository, branch: &str) -> Option<Oid> {
    repo.refname_to_id(&format!("{LOCAL_BRANCHES}{branch}"))
        .ok()
}

/// Current raw target of a local ref, if it exists.
pub(crate) fn ref_target(repo: &Repository, r: &RefName) -> Option<Oid> {
    repo.refname_to_id(&r.local()).ok()
}

/// Pushes atomically, then mirrors the new values locally. When the push fails the local
/// refs stay as they were, so the mirror never claims something the remote refused.
pub(crate) fn push_and_apply(
    state: &mut MirrorState,
    ctx: &OpContext,
    updates: &[(RefName, Option<Oid>, Option<Oid>)],
) -> Result<(), GitError> {
    let remote_updates: Vec<RefUpdate> = updates
        .iter()
        .map(|(r, new, expected)| RefUpdate {
            remote_ref: r.remote(),
            new: *new,
            expected: *expected,
        })
        .collect();
    cli::push(&state.path, &ctx.remote, &remote_updates)?;
    for (r, new, _) in updates {
        let local = r.local();
        match new {
            Some(oid) => {
                state.repo.reference(&local, *oid, true, "porch push")?;
            }
            None => {
                if let Ok(mut existing) = state.repo.find_reference(&local) {
                    existing.delete()?;
                }
            }
        }
    }
    Ok(())
}

/// Creates the registered branch when missing and `createBranch` is set (spec §11.3);
/// otherwise a missing branch is an error.
fn ensure_branch(state: &mut MirrorState, ctx: &OpContext) -> Result<(), GitError> {
    let branch = &ctx.scope.branch;
    if branch_head(&state.repo, branch).is_some() {
        return Ok(());
    }
    if !ctx.create_branch {
        return Err(GitError::NotFound(format!(
            "branch {branch:?} doesn't exist in {}\nhint: create it, or register the repository with createBranch: true",
            ctx.remote.url
        )));
    }
    let commit = {
        let repo = &state.repo;
        let readme = std::collections::BTreeMap::from([(
            "README.md".to_owned(),
            b"Created by porch".to_vec(),
        )]);
        let t = repo.find_tree(tree::build(repo, &readme)?)?;
        let sig = porch_signature()?;
        repo.commit(
            None,
            &sig,
            &sig,
            "Initial commit: Creating main branch",
            &t,
            &[],
        )?
    };
    tracing::info!(branch, url = %ctx.remote.url, "creating registered branch");
    push_and_apply(
        state,
        ctx,
        &[(RefName::Branch(branch.clone()), Some(commit), None)],
    )
}
