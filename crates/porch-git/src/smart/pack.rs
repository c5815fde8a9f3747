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

/// A pack (version 2) of `objects`, written directly: libgit2's PackBuilder orders its
/// output by looking up every tag of the repository (thousands) whatever it packs. The
/// objects are few and small, so they are stored whole (zlib "stored" blocks, no deltas);
/// the pack's trailer is the SHA-1 of its content, as the format requires.
pub(crate) fn build(repo: &Repository, objects: &[Oid]) -> Result<Vec<u8>, SmartError> {
    let odb = repo.odb()?;
    let count = u32::try_from(objects.len())
        .map_err(|_| SmartError::Protocol("too many objects for one pack".into()))?;
    let mut out = Vec::new();
    out.extend_from_slice(b"PACK");
    out.extend_from_slice(&2u32.to_be_bytes());
    out.extend_from_slice(&count.to_be_bytes());
    for oid in objects {
        let obj = odb.read(*oid)?;
        let kind: u8 = match obj.kind() {
            ObjectType::Commit => 1,
            ObjectType::Tree => 2,
            ObjectType::Blob => 3,
            ObjectType::Tag => 4,
            other => {
                return Err(SmartError::Protocol(format!(
                    "cannot pack {oid}: a {other:?}"
                )));
            }
        };
        object_header(&mut out, kind, obj.data().len());
        zlib_stored(&mut out, obj.data());
    }
    let digest = ring::digest::digest(&ring::digest::SHA1_FOR_LEGACY_USE_ONLY, &out);
    out.extend_from_slice(digest.as_ref());
    Ok(out)
}

/// Type and size: 3 type bits and the low 4 size bits, then 7 size bits per byte.
fn object_header(out: &mut Vec<u8>, kind: u8, size: usize) {
    let mut byte = (kind << 4) | (size & 0x0f) as u8;
    let mut rest = size >> 4;
    while rest > 0 {
        out.push(byte | 0x80);
        byte = (rest & 0x7f) as u8;
        rest >>= 7;
    }
    out.push(byte);
}

/// `data` as a zlib stream of uncompressed deflate blocks (RFC 1950/1951).
fn zlib_stored(out: &mut Vec<u8>, data: &[u8]) {
    // CMF 0x78 (deflate, 32 KiB window), FLG 0x01 (no dictionary; 0x7801 % 31 == 0).
    out.extend_from_slice(&[0x78, 0x01]);
    let mut blocks = data.chunks(usize::from(u16::MAX)).peekable();
    if blocks.peek().is_none() {
        out.extend_from_slice(&[0x01, 0x00, 0x00, 0xff, 0xff]);
    }
    while let Some(block) = blocks.next() {
        out.push(u8::from(blocks.peek().is_none()));
        let len = u16::try_from(block.len()).unwrap_or(u16::MAX);
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(block);
    }
    out.extend_from_slice(&adler32(data).to_be_bytes());
}

fn adler32(data: &[u8]) -> u32 {
    const MOD: u32 = 65521;
    let (mut a, mut b) = (1u32, 0u32);
    // 5552 bytes is the most that can be summed before the u32 sums may overflow.
    for chunk in data.chunks(5552) {
        for byte in chunk {
            a += u32::from(*byte);
            b += a;
        }
        a %= MOD;
        b %= MOD;
    }
    (b << 16) | a
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

        // Real git reads it; the first commit's whole pack is even self-contained.
        let index = |pack: &[u8], name: &str, args: &[&str]| {
            let file = other_dir.path().join(name);
            std::fs::write(&file, pack).expect("write pack file");
            let out = std::process::Command::new("git")
                .arg("index-pack")
                .args(args)
                .arg(&file)
                .output()
                .expect("run git index-pack");
            assert!(
                out.status.success(),
                "{name}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        index(&pack, "push.pack", &[]);
        index(
            &build(&repo, &all).expect("pack"),
            "all.pack",
            &["--strict"],
        );
    }

    #[test]
    fn stored_zlib_streams_and_headers() {
        assert_eq!(adler32(b"Wikipedia"), 0x11E6_0398);
        let mut out = Vec::new();
        zlib_stored(&mut out, b"abc");
        assert_eq!(
            out,
            [
                0x78, 0x01, 0x01, 0x03, 0x00, 0xfc, 0xff, b'a', b'b', b'c', 0x02, 0x4d, 0x01, 0x27
            ]
        );
        let big = vec![7u8; 70_000];
        let mut out = Vec::new();
        zlib_stored(&mut out, &big);
        assert_eq!(out.len(), 2 + 5 + 65535 + 5 + (70_000 - 65535) + 4);
        assert_eq!(out[2], 0, "first block is not final");
        let mut h = Vec::new();
        object_header(&mut h, 3, 300);
        assert_eq!(h, [0x80 | 0x30 | 0x0c, 18], "300 = 18 << 4 | 12");
    }
}
