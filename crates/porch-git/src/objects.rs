//! Reading git objects for discovery, memoized by object id.
//!
//! Objects are immutable, so every cache here is keyed by OID (or OID + path) and never
//! invalidated; that is what makes re-listing after a sync touch only what changed.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use git2::{ObjectType, Oid, Repository};
use porch_core::revision::Locator;

use crate::annotation::{self, Annotation};
use crate::error::GitError;
use crate::kptfile;

/// What discovery needs from a commit.
#[derive(Debug, Clone)]
pub(crate) struct CommitInfo {
    /// Root tree.
    pub tree: Oid,
    pub author_email: String,
    pub author_time: i64,
    pub annotations: Box<[Annotation]>,
    /// Parent commits and the committer time, for history walks over cached commits
    /// (see [`crate::tasks`]).
    pub parents: Box<[Oid]>,
    pub commit_time: i64,
}

/// A package directory found in a tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PackageAt {
    /// Tree of the package directory.
    pub tree: Oid,
    /// Blob of its Kptfile.
    pub kptfile: Oid,
}

/// Above this many entries a cache is simply cleared (bounded memory for huge histories).
const MAX_ENTRIES: usize = 200_000;

/// Object caches of one mirror.
#[derive(Default)]
pub(crate) struct Caches {
    commits: HashMap<Oid, Arc<CommitInfo>>,
    package_at: HashMap<(Oid, String), Option<PackageAt>>,
    locks: HashMap<Oid, Option<Locator>>,
    /// Packages below a tree: relative path → package, memoized by tree id.
    subtrees: HashMap<Oid, Arc<Vec<(String, PackageAt)>>>,
}

fn bound<K, V>(m: &mut HashMap<K, V>) {
    if m.len() > MAX_ENTRIES {
        m.clear();
    }
}

impl Caches {
    pub(crate) fn commit(
        &mut self,
        repo: &Repository,
        oid: Oid,
    ) -> Result<Arc<CommitInfo>, GitError> {
        if let Some(c) = self.commits.get(&oid) {
            return Ok(Arc::clone(c));
        }
        let c = repo.find_commit(oid)?;
        let author = c.author();
        let info = Arc::new(CommitInfo {
            tree: c.tree_id(),
            author_email: author.email().unwrap_or_default().to_owned(),
            author_time: author.when().seconds(),
            annotations: annotation::parse(&String::from_utf8_lossy(c.message_bytes()))
                .into_boxed_slice(),
            parents: c.parent_ids().collect(),
            commit_time: c.time().seconds(),
        });
        bound(&mut self.commits);
        self.commits.insert(oid, Arc::clone(&info));
        Ok(info)
    }

    /// The package at `path` in `commit`: a directory with a regular `Kptfile`.
    pub(crate) fn package_at(
        &mut self,
        repo: &Repository,
        commit: Oid,
        path: &str,
    ) -> Result<Option<PackageAt>, GitError> {
        let key = (commit, path.to_owned());
        if let Some(p) = self.package_at.get(&key) {
            return Ok(*p);
        }
        // The root tree id comes from the commit cache, so a commit is decompressed once
        // however many lookups (tag, annotations, package path) discovery makes on it.
        let tree = repo.find_tree(self.commit(repo, commit)?.tree)?;
        let found = match tree.get_path(std::path::Path::new(path)) {
            Ok(e) if e.kind() == Some(ObjectType::Tree) => {
                kptfile_in(repo, e.id())?.map(|k| PackageAt {
                    tree: e.id(),
                    kptfile: k,
                })
            }
            Ok(_) => None,
            Err(e) if e.code() == git2::ErrorCode::NotFound => None,
            Err(e) => return Err(e.into()),
        };
        bound(&mut self.package_at);
        self.package_at.insert(key, found);
        Ok(found)
    }

    /// Upstream lock of a Kptfile blob.
    pub(crate) fn upstream_lock(
        &mut self,
        repo: &Repository,
        kptfile: Oid,
    ) -> Result<Option<Locator>, GitError> {
        if let Some(l) = self.locks.get(&kptfile) {
            return Ok(l.clone());
        }
        let blob = repo.find_blob(kptfile)?;
        let lock = kptfile::upstream_lock(blob.content());
        bound(&mut self.locks);
        self.locks.insert(kptfile, lock.clone());
        Ok(lock)
    }

    /// Every package below `tree` (paths relative to it). A directory with a Kptfile is a
    /// package and is not descended into: nested kpt subpackages belong to their parent.
    pub(crate) fn packages_in(
        &mut self,
        repo: &Repository,
        tree: Oid,
    ) -> Result<Arc<Vec<(String, PackageAt)>>, GitError> {
        if let Some(p) = self.subtrees.get(&tree) {
            return Ok(Arc::clone(p));
        }
        let t = repo.find_tree(tree)?;
        let mut out = Vec::new();
        for e in t.iter() {
            if e.kind() != Some(ObjectType::Tree) {
                continue;
            }
            let Ok(name) = e.name() else { continue };
            if let Some(k) = kptfile_in(repo, e.id())? {
                out.push((
                    name.to_owned(),
                    PackageAt {
                        tree: e.id(),
                        kptfile: k,
                    },
                ));
            } else {
                for (sub, p) in self.packages_in(repo, e.id())?.iter() {
                    out.push((format!("{name}/{sub}"), *p));
                }
            }
        }
        let out = Arc::new(out);
        bound(&mut self.subtrees);
        self.subtrees.insert(tree, Arc::clone(&out));
        Ok(out)
    }
}

/// The Kptfile blob directly in `tree`, if it is a regular file.
fn kptfile_in(repo: &Repository, tree: Oid) -> Result<Option<Oid>, GitError> {
    let t = repo.find_tree(tree)?;
    Ok(t.get_name("Kptfile")
        .filter(|e| matches!(e.filemode(), 0o100644 | 0o100755))
        .map(|e| e.id()))
}

/// All files below `tree`, path relative to it → content.
pub(crate) fn read_tree_files(
    repo: &Repository,
    tree: Oid,
) -> Result<BTreeMap<String, Vec<u8>>, GitError> {
    let mut out = BTreeMap::new();
    collect(repo, tree, "", &mut out)?;
    Ok(out)
}

fn collect(
    repo: &Repository,
    tree: Oid,
    prefix: &str,
    out: &mut BTreeMap<String, Vec<u8>>,
) -> Result<(), GitError> {
    let t = repo.find_tree(tree)?;
    for e in t.iter() {
        let Ok(name) = e.name() else { continue };
        let path = if prefix.is_empty() {
            name.to_owned()
        } else {
            format!("{prefix}/{name}")
        };
        match e.kind() {
            Some(ObjectType::Tree) => collect(repo, e.id(), &path, out)?,
            Some(ObjectType::Blob) => {
                out.insert(path, repo.find_blob(e.id())?.content().to_vec());
            }
            _ => {}
        }
    }
    Ok(())
}
