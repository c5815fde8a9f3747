//! Package init/get/update through the library: copy-merge semantics, the
//! non-KRM file rules, and bad input (unreachable repository, missing ref or
//! directory, local changes under fast-forward) with the local package untouched.

#[path = "support/git_cli.rs"]
mod git_cli;
use git_cli::git;

use kpt::package::PackageFiles;
use kpt::package::fs::read_dir;
use kpt::pkg::Strategy;
use kpt::pkg::get::{GetOptions, get};
use kpt::pkg::init::{InitOptions, init};
use kpt::pkg::update::driver::update_dir;
use kpt::pkg::update::{UpdateError, UpdateOptions, update_package};

fn files(list: &[(&str, &str)]) -> PackageFiles {
    let mut f = PackageFiles::new();
    for (p, c) in list {
        f.insert(*p, c.as_bytes().to_vec());
    }
    f
}

const KPTFILE: &str = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: p\n";

/// `update_package` with resource-merge and default options.
fn resource_merge(
    o: &PackageFiles,
    u: &PackageFiles,
    l: &PackageFiles,
) -> Result<PackageFiles, UpdateError> {
    update_package(o, u, l, Strategy::ResourceMerge, &UpdateOptions::default())
}

fn cm(name: &str, v: &str) -> String {
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  k: {v}\n")
}

#[test]
fn copy_merge_copies_upstream_and_deletes_what_upstream_deleted() {
    let o = files(&[
        ("Kptfile", KPTFILE),
        ("a.yaml", &cm("a", "1")),
        ("gone.yaml", &cm("g", "1")),
    ]);
    let u = files(&[
        ("Kptfile", KPTFILE),
        ("a.yaml", &cm("a", "2")),
        ("new.txt", "n\n"),
    ]);
    let l = files(&[
        ("Kptfile", KPTFILE),
        ("a.yaml", &cm("a", "local")),
        ("gone.yaml", &cm("g", "1")),
        ("mine.yaml", &cm("m", "1")),
    ]);
    let out =
        update_package(&o, &u, &l, Strategy::CopyMerge, &UpdateOptions::default()).expect("update");
    let paths: Vec<&str> = out.paths().collect();
    assert_eq!(paths, ["Kptfile", "a.yaml", "mine.yaml", "new.txt"]);
    assert_eq!(out.get_text("a.yaml"), Some(cm("a", "2").as_str()));
}

#[test]
fn resource_merge_keeps_local_non_krm_edits_and_takes_upstream_ones() {
    let o = files(&[
        ("Kptfile", KPTFILE),
        ("README.md", "o\n"),
        ("x.sh", "x\n"),
        ("old.txt", "o\n"),
    ]);
    let u = files(&[("Kptfile", KPTFILE), ("README.md", "u\n"), ("x.sh", "x2\n")]);
    let l = files(&[
        ("Kptfile", KPTFILE),
        ("README.md", "mine\n"),
        ("x.sh", "x\n"),
        ("old.txt", "o\n"),
    ]);
    let out = resource_merge(&o, &u, &l).expect("update");
    assert_eq!(out.get_text("README.md"), Some("mine\n"));
    assert_eq!(out.get_text("x.sh"), Some("x2\n"));
    assert!(out.get("old.txt").is_none());
}

#[test]
fn fast_forward_refuses_local_changes() {
    let o = files(&[("Kptfile", KPTFILE), ("a.yaml", &cm("a", "1"))]);
    let u = files(&[("Kptfile", KPTFILE), ("a.yaml", &cm("a", "2"))]);
    let l = files(&[("Kptfile", KPTFILE), ("a.yaml", &cm("a", "local"))]);
    let err = update_package(&o, &u, &l, Strategy::FastForward, &UpdateOptions::default())
        .expect_err("must refuse");
    assert!(
        matches!(&err, UpdateError::LocalChanges(f) if f == &["a.yaml".to_string()]),
        "{err}"
    );
    assert!(err.to_string().contains("a.yaml"));
    let ok = update_package(&o, &u, &o, Strategy::FastForward, &UpdateOptions::default())
        .expect("clean ff");
    assert_eq!(ok.get_text("a.yaml"), Some(cm("a", "2").as_str()));
}

#[test]
fn subpackage_added_in_both_is_an_error() {
    let o = files(&[("Kptfile", KPTFILE)]);
    let u = files(&[("Kptfile", KPTFILE), ("s/Kptfile", KPTFILE)]);
    let l = files(&[("Kptfile", KPTFILE), ("s/Kptfile", KPTFILE)]);
    let err = resource_merge(&o, &u, &l).expect_err("conflict");
    assert!(err.to_string().contains("added in both"), "{err}");
}

#[test]
fn init_writes_kpt_files() {
    let opts = InitOptions {
        name: "demo".into(),
        description: "d".into(),
        keywords: vec!["a".into(), "b".into()],
        site: "https://x.io".into(),
    };
    let out = init(&PackageFiles::new(), "", &opts);
    assert_eq!(
        out.get_text("Kptfile"),
        Some(
            "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: demo\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\ninfo:\n  site: https://x.io\n  description: d\n  keywords:\n  - a\n  - b\n"
        )
    );
    assert!(
        out.get_text("README.md")
            .is_some_and(|r| r.starts_with("# demo\n"))
    );
    assert!(
        out.get_text("package-context.yaml")
            .is_some_and(|r| r.contains("name: example"))
    );
    // existing files are kept
    let again = init(&out, "", &opts);
    assert!(again.is_empty());
}

#[test]
fn get_and_update_errors_name_repo_ref_and_directory() {
    let tmp = tempfile::tempdir().expect("tmp");
    let up = tmp.path().join("up");
    std::fs::create_dir_all(up.join("pkg")).expect("mkdir");
    std::fs::write(up.join("pkg/Kptfile"), KPTFILE).expect("write");
    std::fs::write(up.join("pkg/a.yaml"), cm("a", "1")).expect("write");
    git(&up, &["init", "-q", "-b", "main"]);
    git(&up, &["add", "-A"]);
    git(&up, &["commit", "-qm", "v1"]);
    git(&up, &["tag", "pkg/v1"]);
    let url = format!("file://{}", up.display());
    let opts = |dir: &str, r: &str| GetOptions {
        repo: url.clone(),
        directory: dir.into(),
        git_ref: r.into(),
        name: "local".into(),
        strategy: Strategy::ResourceMerge,
    };

    // directory-prefixed tag lookup
    let local = tmp.path().join("local");
    get(&local, &opts("/pkg", "v1")).expect("get");
    let kf = std::fs::read_to_string(local.join("Kptfile")).expect("kptfile");
    assert!(kf.contains("ref: pkg/v1"), "{kf}");
    assert!(kf.contains("commit: "), "{kf}");
    let a = std::fs::read_to_string(local.join("a.yaml")).expect("a");
    assert!(a.contains("metadata: # kpt-merge: /a"), "{a}");

    let err = get(&tmp.path().join("x"), &opts("/pkg", "nope")).expect_err("bad ref");
    assert!(
        err.to_string().contains("\"nope\"") && err.to_string().contains(&url),
        "{err}"
    );
    let err = get(&tmp.path().join("y"), &opts("/missing", "main")).expect_err("bad dir");
    assert!(err.to_string().contains("/missing"), "{err}");
    let err = get(
        &tmp.path().join("z"),
        &GetOptions {
            repo: format!("file://{}/does-not-exist", tmp.path().display()),
            ..opts("/pkg", "main")
        },
    )
    .expect_err("unreachable");
    assert!(err.to_string().contains("does-not-exist"), "{err}");
    assert!(!tmp.path().join("x").exists() && !tmp.path().join("z").exists());

    // a failed update leaves the package untouched
    std::fs::write(local.join("a.yaml"), cm("a", "mine")).expect("edit");
    let before = read_dir(&local).expect("read").0;
    let err = update_dir(&local, Some("nope"), None).expect_err("bad ref");
    assert!(err.to_string().contains("nope"), "{err}");
    let err =
        update_dir(&local, Some("main"), Some(Strategy::FastForward)).expect_err("local changes");
    assert!(err.to_string().contains("a.yaml"), "{err}");
    assert_eq!(read_dir(&local).expect("read").0, before);
}

#[test]
fn conflicting_kinds_name_the_resource() {
    let dep = |replicas: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: {replicas}\n"
        )
    };
    let o = files(&[("Kptfile", KPTFILE), ("d.yaml", &dep("1"))]);
    let u = files(&[("Kptfile", KPTFILE), ("d.yaml", &dep("2"))]);
    let l = files(&[("Kptfile", KPTFILE), ("d.yaml", &dep("\n    count: 3"))]);
    let err = resource_merge(&o, &u, &l).expect_err("kind conflict");
    let msg = err.to_string();
    assert!(
        msg.contains("Deployment") && msg.contains("web") && msg.contains("d.yaml"),
        "{msg}"
    );
    assert!(msg.contains("spec.replicas"), "{msg}");
}

#[test]
fn a_resource_renamed_upstream_and_edited_locally_is_kept_beside_the_new_one() {
    // Upstream renames `a` to `b` in the same file while the local copy of `a` was
    // edited: the merge keeps the local `a` and adds `b`, both at the file's index 0,
    // written one after the other as kyaml's package writer writes them (kpt exits 0).
    let o = files(&[("Kptfile", KPTFILE), ("cm.yaml", &cm("a", "1"))]);
    let u = files(&[("Kptfile", KPTFILE), ("cm.yaml", &cm("b", "1"))]);
    let l = files(&[("Kptfile", KPTFILE), ("cm.yaml", &cm("a", "2"))]);
    let out = resource_merge(&o, &u, &l).expect("update");
    let text = out.get_text("cm.yaml").expect("cm.yaml");
    let (first, second) = text.split_once("\n---\n").expect("two documents");
    assert!(
        first.contains("name: a") && first.contains("k: 2"),
        "{text}"
    );
    assert!(
        second.contains("name: b") && second.contains("k: 1"),
        "{text}"
    );
}

#[test]
fn fast_forward_counts_a_sub_package_kptfile_on_one_side_as_a_local_change() {
    let sub_kf = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: extra\n";
    let o = files(&[("Kptfile", KPTFILE), ("a.yaml", &cm("a", "1"))]);
    let u = files(&[("Kptfile", KPTFILE), ("a.yaml", &cm("a", "2"))]);
    let added = files(&[
        ("Kptfile", KPTFILE),
        ("a.yaml", &cm("a", "1")),
        ("extra/Kptfile", sub_kf),
    ]);
    let err = update_package(
        &o,
        &u,
        &added,
        Strategy::FastForward,
        &UpdateOptions::default(),
    )
    .expect_err("added sub-package");
    assert!(
        matches!(&err, UpdateError::LocalChanges(f) if f == &["extra/Kptfile".to_string()]),
        "{err}"
    );
    // and one deleted locally
    let o2 = files(&[
        ("Kptfile", KPTFILE),
        ("extra/Kptfile", sub_kf),
        ("extra/b.yaml", &cm("b", "1")),
    ]);
    let l2 = files(&[("Kptfile", KPTFILE), ("extra/b.yaml", &cm("b", "1"))]);
    let err = update_package(
        &o2,
        &o2,
        &l2,
        Strategy::FastForward,
        &UpdateOptions::default(),
    )
    .expect_err("deleted sub-package Kptfile");
    assert!(err.to_string().contains("extra/Kptfile"), "{err}");
}

#[test]
fn a_sub_package_whose_kptfile_upstream_dropped_keeps_its_kptfile_and_files() {
    let sub_kf = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: lib\n";
    let o = files(&[
        ("Kptfile", KPTFILE),
        ("lib/Kptfile", sub_kf),
        ("lib/c.yaml", &cm("c", "1")),
    ]);
    let u = files(&[("Kptfile", KPTFILE), ("lib/c.yaml", &cm("c", "1"))]);
    let out = resource_merge(&o, &u, &o).expect("update");
    assert_eq!(out.get_text("lib/Kptfile"), Some(sub_kf));
    assert_eq!(out.get_text("lib/c.yaml"), Some(cm("c", "1").as_str()));
    // a sub-package whose directory is gone upstream is still deleted
    let gone = files(&[("Kptfile", KPTFILE)]);
    let out = resource_merge(&o, &gone, &o).expect("update");
    assert!(out.paths().all(|p| !p.starts_with("lib/")), "{out:?}");
}

#[test]
fn fast_forward_refuses_a_locally_edited_non_krm_file() {
    let o = files(&[("Kptfile", KPTFILE), ("notes.txt", "first\n")]);
    let u = files(&[("Kptfile", KPTFILE), ("notes.txt", "second\n")]);
    let l = files(&[("Kptfile", KPTFILE), ("notes.txt", "mine\n")]);
    let err = update_package(&o, &u, &l, Strategy::FastForward, &UpdateOptions::default())
        .expect_err("local edit");
    assert!(
        matches!(&err, UpdateError::LocalChanges(f) if f == &["notes.txt".to_string()]),
        "{err}"
    );
}

/// A Kptfile of a remote sub-package `name` at `git_ref` with strategy `strategy`.
fn remote_kf(name: &str, git_ref: &str, strategy: &str) -> String {
    format!(
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {name}\nupstream:\n  type: git\n  git:\n    repo: https://example.org/parts.git\n    directory: /{name}\n    ref: {git_ref}\n  updateStrategy: {strategy}\nupstreamLock:\n  type: git\n  git:\n    repo: https://example.org/parts.git\n    directory: /{name}\n    ref: {git_ref}\n    commit: c-{git_ref}\n"
    )
}

#[test]
fn a_remote_sub_package_moved_on_locally_keeps_its_upstream_under_resource_merge() {
    let o = files(&[
        ("Kptfile", KPTFILE),
        ("wheel/Kptfile", &remote_kf("wheel", "r1", "resource-merge")),
    ]);
    let u = files(&[
        ("Kptfile", KPTFILE),
        ("wheel/Kptfile", &remote_kf("wheel", "r2", "resource-merge")),
    ]);
    let moved = remote_kf("wheel", "r3", "resource-merge");
    let l = files(&[("Kptfile", KPTFILE), ("wheel/Kptfile", &moved)]);
    let out = resource_merge(&o, &u, &l).expect("update");
    assert_eq!(out.get_text("wheel/Kptfile"), Some(moved.as_str()));
    // not moved locally: the parent's new ref reaches it
    let out = resource_merge(&o, &u, &o).expect("update");
    let kf = out.get_text("wheel/Kptfile").expect("Kptfile");
    assert!(kf.contains("ref: r2"), "{kf}");
}

#[test]
fn a_remote_sub_package_deleted_upstream_goes_only_when_unchanged_locally() {
    let sub = remote_kf("axle", "r1", "force-delete-replace");
    let o = files(&[
        ("Kptfile", KPTFILE),
        ("axle/Kptfile", &sub),
        ("axle/a.yaml", &cm("a", "1")),
    ]);
    let u = files(&[("Kptfile", KPTFILE)]);
    for strategy in [
        Strategy::ResourceMerge,
        Strategy::FastForward,
        Strategy::ForceDeleteReplace,
    ] {
        let out = update_package(&o, &u, &o, strategy, &UpdateOptions::default()).expect("update");
        assert!(
            out.paths().all(|p| !p.starts_with("axle/")),
            "{strategy}: {out:?}"
        );
    }
    let edited = files(&[
        ("Kptfile", KPTFILE),
        ("axle/Kptfile", &sub),
        ("axle/a.yaml", &cm("a", "mine")),
    ]);
    let out = resource_merge(&o, &u, &edited).expect("update");
    assert_eq!(out.get_text("axle/a.yaml"), Some(cm("a", "mine").as_str()));
}
