//! `pkg get --for-deployment` end to end on a scripted git repository.

use std::path::Path;
use std::process::Command;

use clap::Parser;

use kpt::pkg::console::Recorder;
use kpt::pkg::git::RepoCache;

use super::{GetArgs, get_to};

/// `pkg get` with a cache of its own, returning what it printed.
fn get(args: GetArgs) -> String {
    let mut console = Recorder::default();
    let cache = RepoCache::temporary().expect("cache");
    get_to(args, cache, &mut console).expect("get");
    console.stderr_text()
}

#[derive(Debug, Parser)]
struct Cli {
    #[command(flatten)]
    get: GetArgs,
}

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args(["-c", "user.email=t@example.com", "-c", "user.name=t"])
        .args(args)
        .current_dir(dir)
        .status()
        .expect("git runs")
        .success();
    assert!(ok, "git {args:?}");
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

#[test]
fn for_deployment_generates_the_package_context() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let repo = tmp.path().join("repo");
    write(
        &repo.join("pkg/Kptfile"),
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\n",
    );
    write(
        &repo.join("pkg/package-context.yaml"),
        &kpt::pkg::init::package_context("example", None),
    );
    write(
        &repo.join("pkg/sub/Kptfile"),
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: sub\n",
    );
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "v1"]);

    let dest = tmp.path().join("prod");
    let arg = format!("file://{}.git/pkg@main", repo.display());
    let dest_arg = dest.display().to_string();
    let cli = Cli::try_parse_from(["get", arg.as_str(), dest_arg.as_str(), "--for-deployment"])
        .expect("flags parse");
    let printed = get(cli.get);
    assert!(
        printed.ends_with("\nCustomized package for deployment.\n"),
        "{printed}"
    );

    let read = |p: &str| std::fs::read_to_string(dest.join(p)).expect(p);
    assert_eq!(
        read("package-context.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kptfile.kpt.dev\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\ndata:\n  name: prod\n"
    );
    assert!(read("sub/package-context.yaml").ends_with("data:\n  name: sub\n"));
    assert!(read("Kptfile").contains("upstreamLock:"));
}

#[test]
fn without_the_flag_the_context_is_copied_as_is() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let repo = tmp.path().join("repo");
    write(
        &repo.join("pkg/Kptfile"),
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\n",
    );
    write(
        &repo.join("pkg/package-context.yaml"),
        &kpt::pkg::init::package_context("example", None),
    );
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "v1"]);
    let dest = tmp.path().join("abstract");
    let arg = format!("file://{}.git/pkg@main", repo.display());
    let dest_arg = dest.display().to_string();
    let cli = Cli::try_parse_from(["get", arg.as_str(), dest_arg.as_str()]).expect("flags parse");
    let printed = get(cli.get);
    assert!(printed.starts_with("Package \"abstract\":\n"), "{printed}");
    let ctx = std::fs::read_to_string(dest.join("package-context.yaml")).expect("context");
    assert!(ctx.ends_with("data:\n  name: example\n"), "{ctx}");
}
