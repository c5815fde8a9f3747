//! Building trees in memory: a package's files, and a root tree with one directory replaced.

use std::collections::BTreeMap;

use git2::{ObjectType, Oid, Repository};

use porch_core::paths::{validate_component, validate_file_path};

use crate::error::GitError;

/// Writes `files` (relative paths, `/`-separated) as a tree. A name git must never receive
/// (`porch_core::paths`) fails the whole build: such an entry is never written, whatever
/// let it in (an API client, an upstream package, a bug).
pub(crate) fn build(repo: &Repository, files: &BTreeMap<String, Vec<u8>>) -> Result<Oid, GitError> {
    for path in files.keys() {
        check_path(path)?;
    }
    build_checked(repo, files)
}

fn check_path(path: &str) -> Result<(), GitError> {
    validate_file_path(path)
        .map_err(|e| GitError::Invalid(format!("file {path:?} cannot be written to git: {e}")))
}

fn build_checked(repo: &Repository, files: &BTreeMap<String, Vec<u8>>) -> Result<Oid, GitError> {
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
        tb.insert(dir, build_checked(repo, &sub)?, 0o040000)?;
    }
    Ok(tb.write()?)
}

/// Fails when a tree written elsewhere (a draft branch in the remote) holds a name git must
/// never receive, at any depth: such a tree is not published.
pub(crate) fn verify(repo: &Repository, tree: Oid, prefix: &str) -> Result<(), GitError> {
    for entry in repo.find_tree(tree)?.iter() {
        let name = String::from_utf8_lossy(entry.name_bytes()).into_owned();
        let path = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}/{name}")
        };
        if std::str::from_utf8(entry.name_bytes()).is_err() {
            return Err(GitError::Invalid(format!(
                "file {path:?} cannot be written to git: its name is not UTF-8"
            )));
        }
        validate_component(&name).map_err(|e| {
            GitError::Invalid(format!("file {path:?} cannot be written to git: {e}"))
        })?;
        if entry.kind() == Some(ObjectType::Tree) {
            verify(repo, entry.id(), &path)?;
        }
    }
    Ok(())
}

/// Returns `base` with the directory at `path` replaced by `subtree` (`None` removes it).
/// Parent directories are created as needed and removed when they become empty.
pub(crate) fn replace_dir(
    repo: &Repository,
    base: Option<Oid>,
    path: &str,
    subtree: Option<Oid>,
) -> Result<Option<Oid>, GitError> {
    check_path(path)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn repo() -> (tempfile::TempDir, Repository) {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = Repository::init_bare(dir.path()).expect("init");
        (dir, repo)
    }

    #[test]
    fn build_refuses_names_git_must_never_receive() {
        let (_d, repo) = repo();
        for bad in [
            ".git/config",
            "sub/.git/hooks/post-checkout",
            ".GIT/x",
            "git~1/x",
            ".git./x",
            "",
            "a\0b",
            "a//b",
            "../x",
            "/etc/passwd",
            "a\\b",
        ] {
            let bad = bad.to_owned();
            let files = BTreeMap::from([
                ("Kptfile".to_owned(), b"k".to_vec()),
                (bad.clone(), b"x".to_vec()),
            ]);
            let e = build(&repo, &files).expect_err(&bad);
            assert_eq!(e.kind(), porch_core::ErrorKind::Invalid, "{bad:?}: {e}");
            assert!(e.to_string().contains("cannot be written to git"), "{e}");
        }
        let long = "x".repeat(5000);
        let files = BTreeMap::from([(long, b"x".to_vec())]);
        assert!(build(&repo, &files).is_err());
    }

    #[test]
    fn build_keeps_ordinary_names_and_bytes() {
        let (_d, repo) = repo();
        let png: Vec<u8> = (0..=255u8).cycle().take(20_000).collect();
        let files = BTreeMap::from([
            ("Kptfile".to_owned(), b"k".to_vec()),
            (".gitignore".to_owned(), b"*.tmp".to_vec()),
            ("img/logo.png".to_owned(), png.clone()),
        ]);
        let oid = build(&repo, &files).expect("build");
        verify(&repo, oid, "").expect("verify");
        let tree = repo.find_tree(oid).expect("tree");
        let blob = tree
            .get_path(std::path::Path::new("img/logo.png"))
            .expect("entry")
            .to_object(&repo)
            .expect("object");
        assert_eq!(blob.as_blob().expect("blob").content(), png.as_slice());
    }

    /// `git mktree` writes what it is given (no fsck), as a remote without fsck keeps it.
    fn mktree(dir: &std::path::Path, entries: &str) -> Oid {
        use std::io::Write;
        let mut child = std::process::Command::new("git")
            .arg("--git-dir")
            .arg(dir)
            .arg("mktree")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("git mktree");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(entries.as_bytes())
            .expect("write");
        let out = child.wait_with_output().expect("mktree output");
        assert!(out.status.success());
        Oid::from_str(String::from_utf8_lossy(&out.stdout).trim()).expect("oid")
    }

    #[test]
    fn verify_refuses_a_forbidden_entry_deep_in_a_tree() {
        let (d, repo) = repo();
        let blob = repo.blob(b"x").expect("blob");
        for bad in [".git", ".GIT", "git~1", ".git."] {
            let inner = mktree(d.path(), &format!("100644 blob {blob}\tconfig\n"));
            let git = mktree(d.path(), &format!("040000 tree {inner}\t{bad}\n"));
            let outer = mktree(d.path(), &format!("040000 tree {git}\tsub\n"));
            let e = verify(&repo, outer, "").expect_err(bad);
            assert!(e.to_string().contains(&format!("sub/{bad}")), "{e}");
        }
    }
}
