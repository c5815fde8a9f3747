//! Building bare repositories for tests: from in-memory trees, bundles and tarballs.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use crate::TestkitError;

/// Runs a command, failing with its stderr.
pub fn run(cmd: &mut Command) -> Result<String, TestkitError> {
    let out = cmd.output()?;
    if !out.status.success() {
        return Err(TestkitError::Command {
            command: format!("{cmd:?}"),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Creates an empty bare repository whose HEAD names `branch`.
pub fn init_bare(path: &Path, branch: &str) -> Result<git2::Repository, TestkitError> {
    let mut opts = git2::RepositoryInitOptions::new();
    opts.bare(true).initial_head(branch);
    Ok(git2::Repository::init_opts(path, &opts)?)
}

/// Writes `files` (path → content, `/`-separated) as a tree, building subtrees.
pub fn write_tree(
    repo: &git2::Repository,
    files: &BTreeMap<String, Vec<u8>>,
) -> Result<git2::Oid, TestkitError> {
    let mut dirs: BTreeMap<String, BTreeMap<String, Vec<u8>>> = BTreeMap::new();
    let mut tb = repo.treebuilder(None)?;
    for (path, content) in files {
        match path.split_once('/') {
            Some((dir, rest)) => {
                dirs.entry(dir.to_owned())
                    .or_default()
                    .insert(rest.to_owned(), content.clone());
            }
            None => {
                tb.insert(path, repo.blob(content)?, 0o100644)?;
            }
        }
    }
    for (dir, sub) in dirs {
        tb.insert(&dir, write_tree(repo, &sub)?, 0o040000)?;
    }
    Ok(tb.write()?)
}

/// Commits `files` as the whole tree on top of `branch` (created if missing) and returns the commit.
pub fn commit_files(
    repo: &git2::Repository,
    branch: &str,
    files: &BTreeMap<String, Vec<u8>>,
    message: &str,
) -> Result<git2::Oid, TestkitError> {
    let tree = repo.find_tree(write_tree(repo, files)?)?;
    let sig = git2::Signature::now("Porch Test", "porch-test@example.com")?;
    let refname = format!("refs/heads/{branch}");
    let parent = repo
        .find_reference(&refname)
        .ok()
        .and_then(|r| r.peel_to_commit().ok());
    let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
    Ok(repo.commit(Some(&refname), &sig, &sig, message, &tree, &parents)?)
}

/// Convenience: a file map from `(path, text)` pairs.
pub fn files(pairs: &[(&str, &str)]) -> BTreeMap<String, Vec<u8>> {
    pairs
        .iter()
        .map(|(p, c)| ((*p).to_owned(), c.as_bytes().to_vec()))
        .collect()
}

/// Clones a git bundle (e.g. the blueprint bundle) into a new bare repository at `dest`
/// (branches and tags only).
pub fn bare_from_bundle(bundle: &Path, dest: &Path) -> Result<(), TestkitError> {
    run(Command::new("git")
        .arg("clone")
        .arg("--quiet")
        .arg("--bare")
        .arg(bundle)
        .arg(dest))?;
    Ok(())
}

/// Unpacks one of Go Porch's test tarballs (a `.git` directory) into a bare repository at
/// `dest`, keeping every branch and tag.
pub fn bare_from_tar(tar: &Path, dest: &Path) -> Result<(), TestkitError> {
    let scratch = dest.with_extension("unpack");
    std::fs::create_dir_all(&scratch)?;
    // The tarballs carry their authors' uids; git refuses repositories owned by others.
    run(Command::new("tar")
        .arg("--no-same-owner")
        .arg("-xf")
        .arg(tar)
        .arg("-C")
        .arg(&scratch))?;
    let src = if scratch.join(".git").is_dir() {
        scratch.join(".git")
    } else {
        scratch.clone()
    };
    run(Command::new("git")
        .args(["-c", "safe.directory=*", "clone", "--quiet", "--mirror"])
        .arg(&src)
        .arg(dest))?;
    // --mirror keeps refs/remotes/* of the source; Porch only looks at heads and tags.
    let refs = run(Command::new("git").arg("-C").arg(dest).args([
        "for-each-ref",
        "--format=%(refname)",
        "refs/remotes",
    ]))?;
    for r in refs.lines().filter(|l| !l.is_empty()) {
        run(Command::new("git")
            .arg("-C")
            .arg(dest)
            .args(["update-ref", "-d", r]))?;
    }
    std::fs::remove_dir_all(&scratch)?;
    Ok(())
}

/// Renames branch `from` to `to` in a bare repository (Porch's suites serve tarballs under
/// other branch names).
pub fn rename_branch(repo_dir: &Path, from: &str, to: &str) -> Result<(), TestkitError> {
    if from != to {
        run(Command::new("git")
            .arg("-C")
            .arg(repo_dir)
            .args(["branch", "-m", from, to]))?;
    }
    Ok(())
}

/// `git for-each-ref` of a repository as `(refname, objectname)` pairs, sorted.
pub fn list_refs(repo_dir: &Path) -> Result<Vec<(String, String)>, TestkitError> {
    let out = run(Command::new("git")
        .arg("-C")
        .arg(repo_dir)
        .args(["for-each-ref", "--format=%(refname) %(objectname)"]))?;
    let mut refs: Vec<(String, String)> = out
        .lines()
        .filter_map(|l| l.split_once(' ').map(|(a, b)| (a.to_owned(), b.to_owned())))
        .collect();
    refs.sort();
    Ok(refs)
}
