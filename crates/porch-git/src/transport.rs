//! Network operations of a mirror, in process over smart HTTP where possible
//! ([`crate::smart`]), else through the `git` CLI ([`crate::cli`]).

use std::collections::HashMap;

use git2::Oid;

use crate::cli::{self, RefUpdate, Remote};
use crate::error::GitError;
use crate::mirror::MirrorState;
use crate::smart::{self, SmartError};

/// The remote's branches and tags: ref name → object id.
pub(crate) fn ls_remote(
    state: &mut MirrorState,
    remote: &Remote,
) -> Result<HashMap<String, Oid>, GitError> {
    if let Some(session) = state.sessions.get(remote)? {
        match smart::ls_refs(session, remote) {
            Err(SmartError::NotSmart) => state.sessions.mark_dumb(&remote.url),
            other => return other.map_err(|e| e.into_git(&remote.url)),
        }
    }
    cli::ls_remote(&state.path, remote)
}

/// Sets the mirror's `refs` (same names as the remote's) to the given values, fetching
/// what the mirror lacks; `haves` are commits to offer as common ground.
pub(crate) fn fetch_refs(
    state: &mut MirrorState,
    remote: &Remote,
    refs: &[(String, Oid)],
    haves: &[Oid],
) -> Result<(), GitError> {
    let MirrorState {
        repo,
        sessions,
        path,
        ..
    } = state;
    if let Some(session) = sessions.get(remote)? {
        match smart::fetch(session, remote, repo, refs, haves) {
            Err(SmartError::NotSmart) => sessions.mark_dumb(&remote.url),
            other => return other.map_err(|e| e.into_git(&remote.url)),
        }
    }
    let names: Vec<&str> = refs.iter().map(|(n, _)| n.as_str()).collect();
    cli::fetch_refs(path, remote, &names)
}

/// Pushes `updates` atomically with a lease on every ref; `known` are commits the remote
/// has (the in-process pack leaves out what they reach).
pub(crate) fn push(
    state: &mut MirrorState,
    remote: &Remote,
    updates: &[RefUpdate],
    known: &[Oid],
) -> Result<(), GitError> {
    if updates.is_empty() {
        return Ok(());
    }
    let MirrorState {
        repo,
        sessions,
        path,
        ..
    } = state;
    if let Some(session) = sessions.get(remote)? {
        match smart::push(session, remote, repo, updates, known) {
            Err(SmartError::NotSmart) => sessions.mark_dumb(&remote.url),
            other => return other.map_err(|e| e.into_git(&remote.url)),
        }
    }
    cli::push(path, remote, updates)
}
