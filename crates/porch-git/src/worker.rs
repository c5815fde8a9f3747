//! Operations that run on a mirror's worker thread: sync and the shared push plumbing.

use std::collections::HashMap;

use git2::{Oid, Repository, Signature};
use porch_core::repository::ChangeReport;
use porch_core::revision::Author;

use crate::cli::{self, RefUpdate, Remote};
use crate::discovery::{RepoIndex, Scope, Snapshot};
use crate::error::GitError;
use crate::maintenance;
use crate::mirror::MirrorState;
use crate::refs::{LOCAL_BRANCHES, RefName};
use crate::{transport, tree};

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
    let t = std::time::Instant::now();
    fetch(state, &ctx.remote)?;
    let fetched = t.elapsed();
    ensure_branch(state, ctx)?;
    let report = refresh(state, ctx)?;
    tracing::debug!(
        fetch_ms = fetched.as_millis() as u64,
        total_ms = t.elapsed().as_millis() as u64,
        "synced"
    );
    Ok(report)
}

/// Brings the mirror's branches and tags to the remote's values.
///
/// The first time (no refs yet) this is a `git clone --mirror` swapped into place. After
/// that, the remote's ref advertisement tells what moved and only those refs are fetched;
/// refs gone from the remote are deleted locally. A sync with no change costs one round trip.
pub(crate) fn fetch(state: &mut MirrorState, remote: &Remote) -> Result<(), GitError> {
    let mut local = match state.local_refs.take() {
        Some(known) => known,
        None => local_refs(&state.repo)?,
    };
    if local.is_empty() {
        maintenance::finish(state);
        let fresh = state.path.with_extension("clone");
        let old = state.path.with_extension("old");
        for leftover in [&fresh, &old] {
            if leftover.exists() {
                std::fs::remove_dir_all(leftover)?;
            }
        }
        cli::clone_mirror(&fresh, remote)?;
        std::fs::rename(&state.path, &old)?;
        std::fs::rename(&fresh, &state.path)?;
        std::fs::remove_dir_all(&old)?;
        state.ref_log.invalidate();
        state.repo = Repository::open_bare(&state.path)?;
        maintenance::note_ref_updates(state, maintenance::AFTER_CLONE);
        return Ok(());
    }
    // A ref that moves between the advertisement and the fetch makes the server refuse the
    // old value ("not our ref"); the second attempt sees the new one.
    let mut attempt = 0;
    loop {
        attempt += 1;
        let result = fetch_moved(state, remote, &local);
        match &result {
            Ok(moved) => {
                for (name, oid) in moved {
                    match oid {
                        Some(oid) => local.insert(name.clone(), *oid),
                        None => local.remove(name),
                    };
                }
                state.local_refs = Some(std::mem::take(&mut local));
            }
            // Some refs may have moved before the failure.
            Err(_) => state.ref_log.invalidate(),
        }
        match result.map(|_| ()) {
            Err(GitError::Unavailable { message, .. })
                if attempt < 2 && message.contains("not our ref") =>
            {
                tracing::debug!(%message, "a ref moved during the fetch; fetching again");
            }
            other => return other,
        }
    }
}

/// Fetches what moved and deletes what is gone; returns the refs set (`None`: deleted).
fn fetch_moved(
    state: &mut MirrorState,
    remote: &Remote,
    local: &HashMap<String, Oid>,
) -> Result<Vec<(String, Option<Oid>)>, GitError> {
    let t = std::time::Instant::now();
    let advertised = transport::ls_remote(state, remote)?;
    tracing::debug!(
        ms = t.elapsed().as_millis() as u64,
        refs = advertised.len(),
        "ls-remote"
    );
    let changed: Vec<(String, Oid)> = advertised
        .iter()
        .filter(|(name, oid)| local.get(name.as_str()) != Some(*oid))
        .map(|(name, oid)| (name.clone(), *oid))
        .collect();
    if !changed.is_empty() {
        tracing::debug!(count = changed.len(), "fetching moved refs");
        let t = std::time::Instant::now();
        // Branch tips are the common ground (the registered branch's first): tags point at
        // commits on the branch, so offering thousands of them only slows negotiation.
        let mut haves: Vec<Oid> = local
            .iter()
            .filter(|(n, _)| n.starts_with(LOCAL_BRANCHES))
            .map(|(_, o)| *o)
            .collect();
        haves.sort();
        haves.dedup();
        transport::fetch_refs(state, remote, &changed, &haves)?;
        tracing::debug!(ms = t.elapsed().as_millis() as u64, "fetched moved refs");
        maintenance::note_ref_updates(state, changed.len());
        state.ref_log.record(changed.iter().map(|(n, _)| n.clone()));
    }
    let mut moved: Vec<(String, Option<Oid>)> =
        changed.into_iter().map(|(n, o)| (n, Some(o))).collect();
    for name in local
        .keys()
        .filter(|n| !advertised.contains_key(n.as_str()))
    {
        state.ref_log.record([name.clone()]);
        if let Ok(mut r) = state.repo.find_reference(name) {
            r.delete()?;
        }
        moved.push((name.clone(), None));
    }
    Ok(moved)
}

/// Local branches and tags with their raw targets.
fn local_refs(repo: &Repository) -> Result<HashMap<String, Oid>, GitError> {
    let mut out = HashMap::new();
    for r in repo.references()? {
        let r = r?;
        if let (Ok(name), Some(oid)) = (r.name(), r.target())
            && (name.starts_with("refs/heads/") || name.starts_with("refs/tags/"))
        {
            out.insert(name.to_owned(), oid);
        }
    }
    Ok(out)
}

/// Re-discovers from the mirror's current refs (no network): only the refs logged since
/// this registration's last refresh when the log covers it, else all of them.
pub(crate) fn refresh(state: &mut MirrorState, ctx: &OpContext) -> Result<ChangeReport, GitError> {
    let MirrorState {
        repo,
        caches,
        indexes,
        ref_log,
        ..
    } = state;
    let index = indexes.entry(ctx.id).or_default();
    let changed = if index.synced {
        ref_log.since(index.seen)
    } else {
        None
    };
    let report = match changed {
        Some(names) => index.refresh_refs(repo, caches, &ctx.scope, names),
        None => index.refresh(repo, caches, &ctx.scope),
    };
    index.seen = if report.is_ok() {
        ref_log.end()
    } else {
        // Half-applied: start over with a full read next time.
        index.synced = false;
        0
    };
    report
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

/// Local mirror value of a branch (`refs/heads/<b>`).
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
    // Commits the remote has: the values the leases name, and the registered branch.
    let mut known: Vec<Oid> = updates.iter().filter_map(|(_, _, e)| *e).collect();
    known.extend(branch_head(&state.repo, &ctx.scope.branch));
    transport::push(state, &ctx.remote, &remote_updates, &known)?;
    maintenance::note_ref_updates(state, updates.len());
    // Logged before applying: a failure half-way leaves the log naming every ref that may
    // have moved.
    state
        .ref_log
        .record(updates.iter().map(|(r, _, _)| r.local()));
    let mut known = state.local_refs.take();
    for (r, new, _) in updates {
        let local = r.local();
        match new {
            Some(oid) => {
                state.repo.reference(&local, *oid, true, "porch push")?;
                if let Some(k) = known.as_mut() {
                    k.insert(local, *oid);
                }
            }
            None => {
                if let Ok(mut existing) = state.repo.find_reference(&local) {
                    existing.delete()?;
                }
                if let Some(k) = known.as_mut() {
                    k.remove(&local);
                }
            }
        }
    }
    // Restored only when every update was applied; after an error it is re-read.
    state.local_refs = known;
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
            crate::redact::redact_url(&ctx.remote.url)
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
    tracing::info!(branch, url = %crate::redact::redact_url(&ctx.remote.url), "creating registered branch");
    push_and_apply(
        state,
        ctx,
        &[(RefName::Branch(branch.clone()), Some(commit), None)],
    )
}
