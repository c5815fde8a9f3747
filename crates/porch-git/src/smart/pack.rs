//! The pack of a push: exactly the objects new commits add.
//!
//! libgit2's `insert_walk` first marks every tree and blob of every hidden commit as
//! uninteresting, which reads the whole repository tree (thousands of objects) to send a
//! handful. Instead each new commit's tree is compared with its parents' trees path by
//! path, descending only where they differ (git's "sparse" reachability): an object equal to
//! the parent's object at the same path is on the remote already, or is sent with that
//! parent. Cost: the changed paths, whatever the repository's size.

use std::collections::HashSet;

use git2::{ObjectType, Oid, Repository, Tree};

use super::SmartError;

/// Objects reachable from `tips` but not from `known` (commits the remote has), in an
/// order PackBuilder accepts.
pub(crate) fn new_objects(
    repo: &Repository,
    tips: &[Oid],
    known: &[Oid],
) -> Result<Vec<Oid>, SmartError> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let mut walk = repo.revwalk()?;
    let mut any = false;
    for tip in tips {
        if known.contains(tip) || !seen.insert(*tip) {
            continue;
        }
        let obj = repo.find_object(*tip, None)?;
        let commit = match obj.kind() {
            Some(ObjectType::Tag) => {
                out.push(*tip);
                obj.peel(ObjectType::Commit)?.id()
            }
            Some(ObjectType::Commit) => *tip,
            other => {
                return Err(SmartError::Protocol(format!(
                    "cannot push {tip}: a {other:?}, not a commit"
                )));
            }
        };
        walk.push(commit)?;
        any = true;
    }
    if !any {
        return Ok(out);
    }
    for k in known {
        // A known commit the mirror lacks cannot bound the walk; the remote still has it.
        if repo.odb()?.exists(*k) {
            walk.hide(*k)?;
        }
    }
    let mut commits = Vec::new();
    for c in walk {
        commits.push(c?);
    }
    for id in commits {
        let commit = repo.find_commit(id)?;
        out.push(id);
        let bases: Vec<Tree<'_>> = commit
            .parents()
            .map(|p| p.tree())
            .collect::<Result<_, _>>()?;
        add_tree(repo, commit.tree()?, &bases, &mut seen, &mut out)?;
    }
    Ok(out)
}

fn add_tree(
    repo: &Repository,
    tree: Tree<'_>,
    bases: &[Tree<'_>],
    seen: &mut HashSet<Oid>,
    out: &mut Vec<Oid>,
) -> Result<(), SmartError> {
    if bases.iter().any(|b| b.id() == tree.id()) || !seen.insert(tree.id()) {
        return Ok(());
    }
    out.push(tree.id());
    for entry in tree.iter() {
        let id = entry.id();
        let name = entry.name_bytes();
        let in_base = |kind: ObjectType| {
            bases.iter().filter_map(move |b| {
                b.get_name_bytes(name)
                    .filter(|e| e.kind() == Some(kind))
                    .map(|e| e.id())
            })
        };
        match entry.kind() {
            Some(ObjectType::Tree) => {
                if in_base(ObjectType::Tree).any(|b| b == id) || seen.contains(&id) {
                    continue;
                }
                let sub_bases: Vec<Tree<'_>> = in_base(ObjectType::Tree)
                    .map(|b| repo.find_tree(b))
                    .collect::<Result<_, _>>()?;
                add_tree(repo, repo.find_tree(id)?, &sub_bases, seen, out)?;
            }
            Some(ObjectType::Blob) => {
                if !in_base(ObjectType::Blob).any(|b| b == id) && seen.insert(id) {
                    out.push(id);
                }
            }
            // Submodule links point outside the repository.
            _ => {}
        }
    }
    Ok(())
}

/// A pack of `objects`.
pub(crate) fn build(repo: &Repository, objects: &[Oid]) -> Result<Vec<u8>, SmartError> {
    let mut pb = repo.packbuilder()?;
    pb.set_threads(1);
    for oid in objects {
        pb.insert_object(*oid, None)?;
    }
    let mut buf = git2::Buf::new();
    pb.write_buf(&mut buf)?;
    Ok(buf.to_vec())
}
