//! What `pkg get` and `pkg update` print (kpt's printer and git's fetch output) when
//! run through the library with a console: the order packages are fetched and
//! updated in, and the line kpt's update walk prints for each remote sub-package.
//! `porchctl`'s `cli_kpt_differential` test compares the same with kpt itself.

use std::path::Path;

#[path = "support/git_cli.rs"]
mod git_cli;
use git_cli::git;

use kpt::pkg::Strategy;
use kpt::pkg::console::Recorder;
use kpt::pkg::get::{GetOptions, get_into};
use kpt::pkg::git::{Fetcher, RepoCache};
use kpt::pkg::merge3::MergeOptions;
use kpt::pkg::update::driver::update_dir_into;

fn write(dir: &Path, files: &[(&str, String)]) {
    for (p, text) in files {
        let p = dir.join(p);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    }
}

fn kptfile(name: &str) -> String {
    format!("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {name}\n")
}

fn remote(name: &str, repo: &str, dir: &str) -> String {
    format!(
        "{}upstream:\n  type: git\n  git:\n    repo: {repo}\n    directory: {dir}\n    ref: v1\n  updateStrategy: resource-merge\n",
        kptfile(name)
    )
}

fn cm(v: &str) -> String {
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  v: \"{v}\"\n")
}

#[test]
fn get_and_update_print_kpts_lines_in_kpts_order() {
    let tmp = tempfile::tempdir().expect("tmp");
    let up = tmp.path().join("up.git");
    std::fs::create_dir_all(&up).expect("mkdir");
    git(&up, &["init", "-q", "-b", "main"]);
    let repo = format!("file://{}", tmp.path().join("up").display());
    write(
        &up,
        &[
            ("app/Kptfile", kptfile("app")),
            ("app/cm.yaml", cm("1")),
            ("app/a/Kptfile", remote("a", &repo, "/lib")),
            ("app/b/Kptfile", remote("b", &repo, "/lib")),
            ("lib/Kptfile", kptfile("lib")),
            ("lib/x.yaml", cm("1")),
        ],
    );
    git(&up, &["add", "-A"]);
    git(&up, &["commit", "-qm", "v1"]);
    git(&up, &["tag", "v1"]);
    git(&up, &["rm", "-rq", "app/a"]);
    write(
        &up,
        &[
            ("app/cm.yaml", cm("2")),
            ("app/c/Kptfile", remote("c", &repo, "/lib")),
        ],
    );
    git(&up, &["add", "-A"]);
    git(&up, &["commit", "-qm", "v2"]);
    git(&up, &["tag", "v2"]);

    let cache = tmp.path().join("cache");
    let dest = tmp.path().join("local");
    let opts = GetOptions {
        repo: repo.clone(),
        directory: "/app".into(),
        git_ref: "v1".into(),
        name: "local".into(),
        strategy: Strategy::ResourceMerge,
    };
    let mut console = Recorder::default();
    let mut fx = Fetcher::new(RepoCache::at(&cache), &mut console, false);
    get_into(&dest, &opts, &mut fx).expect("get");
    let tag = |t: &str| format!("From {repo}\n * tag               {t}         -> FETCH_HEAD\n");
    // The root, then its remote sub-packages, the last path first.
    assert_eq!(
        console.stderr_text(),
        format!(
            "Package \"local\":\nFetching {repo}@v1\n{t}Adding package \"app\".\n\n\
             Package \"local/b\":\nFetching {repo}@v1\n{t}Adding package \"lib\".\n\n\
             Package \"local/a\":\nFetching {repo}@v1\n{t}Adding package \"lib\".\n\n\
             Fetched 3 package(s).\n",
            t = tag("v1")
        )
    );
    assert!(console.stdout.is_empty());

    // `a` is gone upstream but was fetched here (upstream had it unfetched), so it
    // stays and is updated on its own; `c` is new; `b` stays. The repository is
    // listed once and each ref fetched once for the whole update.
    let mut console = Recorder::default();
    let mut fx = Fetcher::new(RepoCache::at(&cache), &mut console, true);
    update_dir_into(&dest, Some("v2"), None, &MergeOptions::default(), &mut fx).expect("update");
    let v1 = git(&up, &["rev-parse", "v1"]);
    assert_eq!(
        console.stderr_text(),
        format!(
            "Package \"local\":\nFetching upstream from {repo}@v2\n{}\
             Fetching origin from {repo}@v2\nFrom {repo}\n * branch            {v1} -> FETCH_HEAD\n\
             Updating package \"local\" with strategy \"resource-merge\".\n\
             Adding package \"c\" from upstream.\n\
             Package \"a\" deleted from upstream, but keeping local since it has changes.\n\n\
             Package \"local/c\":\nFetching upstream from {repo}@v1\n{}\
             Updating package \"c\" with strategy \"resource-merge\".\n\n\
             Package \"local/b\":\nFetching upstream from {repo}@v1\n\
             Fetching origin from {repo}@v1\n\
             Updating package \"b\" with strategy \"resource-merge\".\n\n\
             Package \"local/a\":\nFetching upstream from {repo}@v1\n\
             Fetching origin from {repo}@v1\n\
             Updating package \"a\" with strategy \"resource-merge\".\n\n\
             Updated 4 package(s).\n",
            tag("v2"),
            tag("v1"),
        )
    );
    assert!(dest.join("a/x.yaml").exists());
    assert!(dest.join("c/x.yaml").exists());
}
