//! Building trees in memory: a package's files, and a root tree with one directory replaced.

use std::collections::BTreeMap;

use git2::{ObjectType, Oid, Repository};

use crate::error::GitError;

/// Writes `files` (relative paths, `/`-separated) as a tree.
pub(crate) fn build(repo: &Repository, files: &BTreeMap<String, Vec<u8>>) -> Result<Oid, GitError> {
    let mut dirs: BTreeMap<&str, BTreeMap<String, Vec<u8>>> = BTreeMap::new();
    let mut tb = repo.treebuilder(None)?;
    for (path, content) in files {
        let path = path.trim_start_matches('/');
        match path.split_once('/') {
            Some((dir, rest)) => {
                dirs.entry(dir)
                    .or_default()
                    .insert(rest.to_owned(), content.clone());
            }
            None if !path.is_empty() => {
                tb.insert(path, repo.blob(content)?, 0o100644)?;
            }
            None => {}
        }
    }
    for (dir, sub) in dirs {
        tb.insert(dir, build(repo, &sub)?, 0o040000)?;
    }
    Ok(tb.write()?)
}

/// Returns `base` with the directory at `path` replaced by `subtree` (`None` removes it).
/// Parent directories are created as needed and removed when they become empty.
pub(crate) fn replace_dir(
    repo: &Repository,
    base: Option<Oid>,
    path: &str,
    subtree: Option<Oid>,
) -> Result<Option<Oid>, GitError> {
    let base_tree = base.map(|b| repo.find_tree(b)).transpose()?;
    let mut tb = repo.treebuilder(base_tree.as_ref())?;
    let (first, rest) = match path.split_once('/') {
        Some((f, r)) => (f, Some(r)),
        None => (path, None),
    };
    let new_child = match rest {
        None => subtree,
        Some(rest) => {
            let child = base_tree
                .as_ref()
                .and_then(|t| t.get_name(first))
                .filter(|e| e.kind() == Some(ObjectType::Tree))
                .map(|e| e.id());
            replace_dir(repo, child, rest, subtree)?
        }
    };
    match new_child {
        Some(oid) => {
            tb.insert(first, oid, 0o040000)?;
        }
        None => {
            if tb.get(first)?.is_some() {
                tb.remove(first)?;
            }
        }
    }
    if tb.is_empty() {
        return Ok(None);
    }
    Ok(Some(tb.write()?))
}

/// The empty tree (for commits that delete the last package).
pub(crate) fn empty(repo: &Repository) -> Result<Oid, GitError> {
    Ok(repo.treebuilder(None)?.write()?)
}
