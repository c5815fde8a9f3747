//! Objects a write creates, built in memory and stored in the mirror as one pack.
//!
//! libgit2 writes every new object as a loose file: a publish of a 50-file package is about
//! sixty file creations, renames and fan-out directories, which on a slow disk cost more
//! than the rest of the local work of a publish (measured: 25-47 ms of ~30-50 ms). Here the
//! objects go to an in-memory object database (libgit2's mempack backend) on a second
//! handle of the mirror; the objects the new commits add (the same walk that builds a
//! push's pack) are then written as one pack and its index. Objects the mirror already has
//! are not written twice. The idle-time housekeeping (`git gc --auto`) consolidates packs.

use std::io::Write;
use std::path::Path;

use git2::{Oid, Repository};

use crate::error::GitError;
use crate::smart::pack;

/// Above libgit2's own backends (loose 1, packed 2), so every write lands in memory.
const MEMPACK_PRIORITY: i32 = 1000;

/// The commits a write created, and commits the mirror had before (their objects are
/// not repacked).
#[derive(Debug, Default)]
pub(crate) struct NewCommits {
    pub tips: Vec<Oid>,
    pub known: Vec<Oid>,
}

/// Runs `write` against a handle of the mirror at `path` whose new objects stay in memory,
/// then stores what the new commits add in `mirror` as one pack. The objects are on disk
/// before this returns, so refs may point at them afterwards; if `write` fails nothing is
/// stored. Objects `write` creates that its commits do not reach are dropped.
pub(crate) fn write_packed<R>(
    mirror: &Repository,
    path: &Path,
    write: impl FnOnce(&Repository) -> Result<(R, NewCommits), GitError>,
) -> Result<R, GitError> {
    let writer = Repository::open_bare(path)?;
    let odb = writer.odb()?;
    let _mempack = odb.add_new_mempack_backend(MEMPACK_PRIORITY)?;
    let (out, commits) = write(&writer)?;
    let objects =
        pack::new_objects(&writer, &commits.tips, &commits.known).map_err(|e| e.into_local())?;
    if !objects.is_empty() {
        let bytes = pack::build(&writer, &objects).map_err(|e| e.into_local())?;
        let odb = mirror.odb()?;
        let mut indexer = odb.packwriter()?;
        indexer.write_all(&bytes)?;
        indexer.commit()?;
        // The mirror's handle would find the new pack on its next failed lookup; refresh
        // now so what follows (the push) reads the objects directly.
        odb.refresh()?;
    }
    Ok(out)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::{NewCommits, write_packed};
    use crate::error::GitError;
    use git2::Oid;

    fn loose_objects(dir: &std::path::Path) -> usize {
        std::fs::read_dir(dir.join("objects"))
            .expect("objects dir")
            .filter_map(Result::ok)
            .filter(|e| e.file_name().len() == 2)
            .map(|e| std::fs::read_dir(e.path()).map_or(0, Iterator::count))
            .sum()
    }

    /// Packs in the object store of the bare repository `dir`.
    pub(crate) fn packs(dir: &std::path::Path) -> usize {
        std::fs::read_dir(dir.join("objects/pack"))
            .expect("pack dir")
            .filter_map(Result::ok)
            .filter(|e| e.path().extension().is_some_and(|x| x == "pack"))
            .count()
    }

    fn walk(dir: &std::path::Path) -> Vec<String> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(dir).expect("dir").filter_map(Result::ok) {
            if e.path().is_dir() {
                out.extend(walk(&e.path()));
            } else {
                out.push(e.path().display().to_string());
            }
        }
        out
    }

    /// A commit of `files` small files on `parent`.
    pub(crate) fn commit_of(
        w: &git2::Repository,
        files: usize,
        parent: Option<Oid>,
    ) -> Result<Oid, GitError> {
        let mut tb = w.treebuilder(None)?;
        for i in 0..files {
            tb.insert(
                format!("f{i}.yaml"),
                w.blob(format!("n: {i}\n").as_bytes())?,
                0o100644,
            )?;
        }
        let tree = w.find_tree(tb.write()?)?;
        let sig = git2::Signature::now("t", "t@example.com")?;
        let parents: Vec<git2::Commit<'_>> = parent
            .map(|p| w.find_commit(p))
            .transpose()?
            .into_iter()
            .collect();
        let refs: Vec<&git2::Commit<'_>> = parents.iter().collect();
        Ok(w.commit(None, &sig, &sig, "m", &tree, &refs)?)
    }

    #[test]
    fn new_objects_land_in_one_pack_and_no_loose_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = git2::Repository::init_bare(dir.path()).expect("init");
        let first = write_packed(&repo, dir.path(), |w| {
            let c = commit_of(w, 50, None)?;
            Ok((
                c,
                NewCommits {
                    tips: vec![c],
                    known: vec![],
                },
            ))
        })
        .expect("write");
        let listing = walk(dir.path());
        assert_eq!(loose_objects(dir.path()), 0, "{listing:?}");
        assert_eq!(packs(dir.path()), 1, "{listing:?}");
        // The mirror's own handle reads what was written.
        let t = repo
            .find_commit(first)
            .expect("commit")
            .tree()
            .expect("tree");
        assert_eq!(t.len(), 50);
        let blob = repo
            .find_blob(t.get_name("f7.yaml").expect("entry").id())
            .expect("blob");
        assert_eq!(blob.content(), b"n: 7\n");

        // A second commit adds one file: its pack holds the commit, the tree and that blob.
        let second = write_packed(&repo, dir.path(), |w| {
            let c = commit_of(w, 51, Some(first))?;
            Ok((
                c,
                NewCommits {
                    tips: vec![c],
                    known: vec![first],
                },
            ))
        })
        .expect("write");
        assert_eq!(packs(dir.path()), 2);
        assert_eq!(loose_objects(dir.path()), 0);
        let t = repo
            .find_commit(second)
            .expect("commit")
            .tree()
            .expect("tree");
        assert_eq!(t.len(), 51);
        repo.find_blob(t.get_name("f50.yaml").expect("entry").id())
            .expect("new blob");
    }

    #[test]
    fn a_failed_write_stores_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = git2::Repository::init_bare(dir.path()).expect("init");
        let err = write_packed(
            &repo,
            dir.path(),
            |w| -> Result<((), NewCommits), GitError> {
                commit_of(w, 3, None)?;
                Err(GitError::Invalid("refused".into()))
            },
        )
        .expect_err("fails");
        assert!(err.to_string().contains("refused"));
        assert_eq!(packs(dir.path()), 0);
        assert_eq!(loose_objects(dir.path()), 0);
    }
}
