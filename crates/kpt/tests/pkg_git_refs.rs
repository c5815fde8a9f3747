//! How `pkg get` resolves the version it is given (kpt's `ClonerUsingGitExec` and
//! `GitUpstreamRepo.ResolveRef`): full branch and tag names, annotated tags, short
//! commits, a branch and a tag of the same name; and what `upstreamLock` records.

use std::path::{Path, PathBuf};

#[path = "support/git_cli.rs"]
mod git_cli;
use git_cli::git;

use kpt::pkg::git::fetch;

/// A repository with `shop/cart.yaml` at two commits on `trunk`; returns it and
/// the first commit.
fn shop_repo(tmp: &Path) -> (PathBuf, String) {
    let up = tmp.join("shop.git");
    std::fs::create_dir_all(up.join("shop")).expect("mkdir");
    git(&up, &["init", "-q", "-b", "trunk"]);
    std::fs::write(up.join("shop/cart.yaml"), "items: 1\n").expect("write");
    git(&up, &["add", "-A"]);
    git(&up, &["commit", "-qm", "one"]);
    let first = git(&up, &["rev-parse", "HEAD"]);
    std::fs::write(up.join("shop/cart.yaml"), "items: 2\n").expect("write");
    git(&up, &["commit", "-qam", "two"]);
    (up, first)
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("kpt-git-refs-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("tmp");
    d
}

fn cart(f: &kpt::pkg::git::Fetched) -> &str {
    f.files.get_text("cart.yaml").expect("cart.yaml")
}

#[test]
fn full_branch_and_tag_names_resolve_in_a_subdirectory() {
    let t = tmp("full");
    let (up, first) = shop_repo(&t);
    git(&up, &["tag", "rel", &first]);
    let repo = up.to_string_lossy().to_string();
    let f = fetch(&repo, "/shop", "refs/heads/trunk").expect("branch");
    assert_eq!(cart(&f), "items: 2\n");
    assert_eq!(f.resolved_ref, "refs/heads/trunk");
    let f = fetch(&repo, "/shop", "refs/tags/rel").expect("tag");
    assert_eq!(cart(&f), "items: 1\n");
    assert_eq!(f.resolved_ref, "refs/tags/rel");
    assert_eq!(f.commit, first);
    let _ = std::fs::remove_dir_all(&t);
}

#[test]
fn an_annotated_tag_locks_to_the_tag_object_as_ls_remote_lists_it() {
    let t = tmp("annotated");
    let (up, first) = shop_repo(&t);
    git(&up, &["tag", "-a", "-m", "release", "v3", &first]);
    let tag_object = git(&up, &["rev-parse", "v3"]);
    assert_ne!(tag_object, first);
    let f = fetch(&up.to_string_lossy(), "/shop", "v3").expect("fetch");
    assert_eq!(cart(&f), "items: 1\n");
    assert_eq!(f.commit, tag_object);
    let _ = std::fs::remove_dir_all(&t);
}

#[test]
fn a_short_commit_is_fetched_and_locked_as_written() {
    let t = tmp("short");
    let (up, first) = shop_repo(&t);
    let short = &first[..8];
    let f = fetch(&up.to_string_lossy(), "/shop", short).expect("fetch");
    assert_eq!(cart(&f), "items: 1\n");
    assert_eq!(f.commit, short);
    assert_eq!(f.resolved_ref, short);
    let _ = std::fs::remove_dir_all(&t);
}

#[test]
fn a_branch_wins_over_a_tag_of_the_same_name() {
    let t = tmp("same-name");
    let (up, first) = shop_repo(&t);
    git(&up, &["tag", "trunk", &first]);
    let head = git(&up, &["rev-parse", "refs/heads/trunk"]);
    let f = fetch(&up.to_string_lossy(), "/", "trunk").expect("fetch");
    assert_eq!(
        f.files.get_text("shop/cart.yaml"),
        Some("items: 2\n"),
        "the branch"
    );
    assert_eq!(f.commit, head);
    let _ = std::fs::remove_dir_all(&t);
}
