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
    let odb = repo.odb()?;
    for k in known {
        // A known commit the mirror lacks cannot bound the walk; the remote still has it.
        if odb.exists(*k) {
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
            Some(ObjectType::Blob)
                if !in_base(ObjectType::Blob).any(|b| b == id) && seen.insert(id) =>
            {
                out.push(id);
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn commit(repo: &Repository, files: &BTreeMap<String, String>, parents: &[Oid]) -> Oid {
        let mut index = git2::Index::new().expect("in-memory index");
        for (path, content) in files {
            let blob = repo.blob(content.as_bytes()).expect("blob");
            let entry = git2::IndexEntry {
                ctime: git2::IndexTime::new(0, 0),
                mtime: git2::IndexTime::new(0, 0),
                dev: 0,
                ino: 0,
                mode: 0o100644,
                uid: 0,
                gid: 0,
                file_size: 0,
                id: blob,
                flags: 0,
                flags_extended: 0,
                path: path.as_bytes().to_vec(),
            };
            index.add(&entry).expect("add entry");
        }
        let tree = index.write_tree_to(repo).expect("tree");
        let sig =
            git2::Signature::new("t", "t@example.com", &git2::Time::new(0, 0)).expect("signature");
        let parents: Vec<git2::Commit<'_>> = parents
            .iter()
            .map(|p| repo.find_commit(*p).expect("parent"))
            .collect();
        let refs: Vec<&git2::Commit<'_>> = parents.iter().collect();
        repo.commit(
            None,
            &sig,
            &sig,
            "c",
            &repo.find_tree(tree).expect("tree"),
            &refs,
        )
        .expect("commit")
    }

    #[test]
    fn sends_only_what_the_new_commits_add() {
        let dir = tempfile::tempdir().expect("temp dir");
        let repo = Repository::init_bare(dir.path()).expect("repo");
        let mut files: BTreeMap<String, String> = (0..50)
            .map(|i| (format!("g{}/pkg{i}/Kptfile", i % 5), format!("pkg {i}\n")))
            .collect();
        let base = commit(&repo, &files, &[]);

        // A draft commit changing one package, then a merge of it (Porch's approval).
        files.insert("g1/pkg1/Kptfile".into(), "changed\n".into());
        files.insert("g1/pkg1/cm.yaml".into(), "new\n".into());
        let draft = commit(&repo, &files, &[base]);
        let approval = commit(&repo, &files, &[base, draft]);
        let objects = new_objects(&repo, &[approval], &[base]).expect("walk");
        let set: HashSet<Oid> = objects.iter().copied().collect();
        assert_eq!(objects.len(), set.len(), "no object twice");
        let draft_tree = repo
            .find_commit(draft)
            .expect("draft")
            .tree()
            .expect("tree");
        let g1 = draft_tree.get_name("g1").expect("g1").id();
        let pkg1 = repo
            .find_tree(g1)
            .expect("g1 tree")
            .get_name("pkg1")
            .expect("pkg1")
            .id();
        let pkg_tree = repo.find_tree(pkg1).expect("pkg1 tree");
        let mut expected: HashSet<Oid> = [approval, draft, draft_tree.id(), g1, pkg1].into();
        expected.extend(pkg_tree.iter().map(|e| e.id()));
        assert_eq!(set, expected);

        // Everything known: nothing to send. Nothing known: the whole history.
        assert!(
            new_objects(&repo, &[approval], &[approval])
                .expect("walk")
                .is_empty()
        );
        let all = new_objects(&repo, &[base], &[]).expect("walk");
        assert_eq!(
            all.len(),
            1 + 1 + 5 + 50 + 50,
            "commit, root, 5 groups, 50 dirs, 50 blobs"
        );

        // The pack holds exactly those objects: index it into a fresh repository.
        let pack = build(&repo, &objects).expect("pack");
        let other_dir = tempfile::tempdir().expect("temp dir");
        let other = Repository::init_bare(other_dir.path()).expect("repo");
        let odb = other.odb().expect("odb");
        let mut w = odb.packwriter().expect("packwriter");
        std::io::Write::write_all(&mut w, &pack).expect("write pack");
        w.commit().expect("index pack");
        assert!(objects.iter().all(|o| odb.exists(*o)));
        assert!(!odb.exists(base));
    }
}
