//! What reaches git through the server binary: file names a git client must never receive
//! are refused (422 naming the key) and never published, even from a malicious upstream;
//! binary files keep every byte through clone, update, propose, approve, copy and upgrade.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

use common::porch::*;
use kube::api::PostParams;
use serde_json::json;

const NS: &str = "default";

/// The names issue 13 lists, plus the other spellings git refuses.
fn forbidden_names() -> Vec<String> {
    let mut names: Vec<String> = [
        ".git/config",
        "sub/.git/hooks/post-checkout",
        ".GIT/x",
        "git~1/x",
        ".git./x",
        ".git::$INDEX_ALLOCATION/x",
        "",
        "a\0b",
        "ctl\u{1}x",
        "a//b",
        "../x",
        "a/./b",
        "/etc/passwd",
        "a\\b",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    names.push("n".repeat(5000));
    names.push(format!("d/{}", "y".repeat(256)));
    names
}

/// Runs git on a bare repository; stdout as bytes.
fn git(bare: &Path, args: &[&str]) -> Vec<u8> {
    let out = Command::new("git")
        .arg("--git-dir")
        .arg(bare)
        .args(args)
        .stderr(Stdio::piped())
        .output()
        .expect("git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Every path of every ref of a bare repository.
fn all_paths(bare: &Path) -> Vec<String> {
    let mut paths = Vec::new();
    for r in remote_refs(bare) {
        let out = git(bare, &["ls-tree", "-r", "-t", "-z", "--name-only", &r]);
        paths.extend(
            out.split(|b| *b == 0)
                .filter(|p| !p.is_empty())
                .map(|p| String::from_utf8_lossy(p).into_owned()),
        );
    }
    paths
}

/// `git clone` of a bare repository succeeds (a clone with a checkout, as a user runs it).
fn clone_works(bare: &Path) {
    let dest = tempfile::tempdir().expect("tempdir");
    let out = Command::new("git")
        .args(["clone", "--quiet", "--"])
        .arg(bare)
        .arg(dest.path().join("c"))
        .output()
        .expect("git clone");
    assert!(
        out.status.success(),
        "git clone: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn forbidden_file_names_are_refused_and_never_published() {
    let env = Env::start().await;
    let url = env.empty_repo("git");
    env.register(NS, "git", &url, json!({})).await;
    let (prs, prrs) = (env.prs(NS), env.prrs(NS));
    init(&prs, "git", "pkg", "ws").await;
    let good_rv = prrs
        .get("git.pkg.ws")
        .await
        .expect("get")
        .metadata
        .resource_version;

    for bad in forbidden_names() {
        let (code, msg) = api_err(put_files(&prrs, "git.pkg.ws", &[(&bad, "x: 1\n")]).await);
        assert_eq!(code, 422, "{bad:?}: {msg}");
        let field = format!("spec.resources[{bad}]");
        assert!(msg.contains(&field), "{bad:?} named in: {msg}");
        // Nothing was saved.
        let prr = prrs.get("git.pkg.ws").await.expect("get");
        assert_eq!(prr.metadata.resource_version, good_rv, "{bad:?}");
    }
    // The draft still publishes, and the remote holds none of the names; a clone works.
    publish(&prs, "git.pkg.ws").await;
    let paths = all_paths(&env.bare("git"));
    assert!(paths.iter().any(|p| p == "pkg/Kptfile"), "{paths:?}");
    for p in &paths {
        assert!(
            porch_core::paths::validate_file_path(p).is_ok(),
            "{p:?} reached git"
        );
    }
    clone_works(&env.bare("git"));
}

/// A commit on `main` of `bare` whose package `evil` holds `<bad>/config`, written with git
/// plumbing (no fsck), as a hostile remote could serve it.
fn push_hostile_package(bare: &Path, bad: &str) {
    let hash = |content: &str| {
        let mut child = Command::new("git")
            .arg("--git-dir")
            .arg(bare)
            .args(["hash-object", "-w", "--stdin"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("hash-object");
        std::io::Write::write_all(&mut child.stdin.take().expect("stdin"), content.as_bytes())
            .expect("write");
        let out = child.wait_with_output().expect("hash-object output");
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    let mktree = |entries: &str| {
        let mut child = Command::new("git")
            .arg("--git-dir")
            .arg(bare)
            .arg("mktree")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("mktree");
        std::io::Write::write_all(&mut child.stdin.take().expect("stdin"), entries.as_bytes())
            .expect("write");
        let out = child.wait_with_output().expect("mktree output");
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    let kptfile = hash(
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: evil\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n",
    );
    let config = hash("[core]\n\tfsmonitor = touch /tmp/pwned\n");
    let inner = mktree(&format!("100644 blob {config}\tconfig\n"));
    let pkg = mktree(&format!(
        "100644 blob {kptfile}\tKptfile\n040000 tree {inner}\t{bad}\n"
    ));
    let root = mktree(&format!("040000 tree {pkg}\tevil\n"));
    let commit = String::from_utf8_lossy(&git(
        bare,
        &["commit-tree", &root, "-p", "main", "-m", "hostile"],
    ))
    .trim()
    .to_owned();
    git(bare, &["update-ref", "refs/heads/main", &commit]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hostile_upstream_package_is_never_published() {
    let env = Env::start().await;
    let url = env.empty_repo("git");
    env.register(NS, "git", &url, json!({})).await;
    let upstream = env.empty_repo("upstream");
    push_hostile_package(&env.bare("upstream"), ".git");
    env.auth_secret(NS, "upstream-auth").await;
    let prs = env.prs(NS);
    let body = new_revision(
        "git",
        "cloned",
        "ws",
        json!([{"type": "clone", "clone": {"upstreamRef": {"type": "git", "git": {
            "repo": upstream, "ref": "main", "directory": "evil",
            "secretRef": {"name": "upstream-auth"},
        }}}}]),
    );
    // Refused at creation or at approval; either way the name never reaches the remote.
    if prs.create(&PostParams::default(), &body).await.is_ok() {
        propose(&prs, "git.cloned.ws").await;
        let (code, msg) = api_err(set_approval(&prs, "git.cloned.ws", "Published").await);
        assert_eq!(code, 422, "{msg}");
        assert!(msg.contains(".git/config"), "{msg}");
    }
    for p in all_paths(&env.bare("git")) {
        assert!(!p.to_lowercase().contains(".git"), "{p:?} reached git");
    }
    clone_works(&env.bare("git"));
}

/// A PNG-like blob: the PNG signature, then every byte value (many invalid as UTF-8).
fn png() -> Vec<u8> {
    let mut b = vec![0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n'];
    b.extend((0..20_000 - 8).map(|i: u32| (i.wrapping_mul(7919) % 256) as u8));
    b
}

fn cm(name: &str, value: &str) -> String {
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  k: {value}\n")
}

fn blob_at(bare: &Path, rev_path: &str) -> Vec<u8> {
    git(bare, &["cat-file", "blob", rev_path])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn binary_files_keep_every_byte() {
    let env = Env::start().await;
    let image = png();
    assert!(std::str::from_utf8(&image).is_err());
    // An upstream repository with a published package holding the image.
    let up = porch_testkit::repos::init_bare(&env.bare("up"), "main").expect("init");
    let mut files = porch_testkit::repos::files(&[
        (
            "pkg/Kptfile",
            "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n",
        ),
        (
            "pkg/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: v\n",
        ),
    ]);
    files.insert("pkg/img/logo.png".into(), image.clone());
    porch_testkit::repos::commit_files(&up, "main", &files, "pkg v1").expect("commit");
    git(&env.bare("up"), &["tag", "pkg/v1", "main"]);
    let up_url = env.url("up");
    env.register(NS, "up", &up_url, json!({})).await;
    let down_url = env.empty_repo("down");
    env.register(NS, "down", &down_url, json!({})).await;
    let (prs, prrs) = (env.prs(NS), env.prrs(NS));

    // The wire carries text only: the image is left out, never mangled.
    let upstream_files = files_of(&prrs, "up.pkg.v1").await;
    assert!(upstream_files.contains_key("cm.yaml"), "{upstream_files:?}");
    assert!(!upstream_files.contains_key("img/logo.png"));

    // Clone, update through the PRR (the client never saw the image), publish.
    create(&prs, "down", "app", "ws", clone_task("up.pkg.v1")).await;
    put_files(&prrs, "down.app.ws", &[("extra.yaml", &cm("extra", "1"))])
        .await
        .expect("update");
    let v1 = name(&publish(&prs, "down.app.ws").await);
    let down = env.bare("down");
    assert_eq!(blob_at(&down, "main:app/img/logo.png"), image, "clone");
    assert_eq!(blob_at(&down, "app/v1:app/img/logo.png"), image, "tag");

    // Copy (edit), update, publish.
    create(&prs, "down", "app", "ws2", edit_task(&v1)).await;
    put_files(&prrs, "down.app.ws2", &[("extra.yaml", &cm("extra", "2"))])
        .await
        .expect("update copy");
    let v2 = name(&publish(&prs, "down.app.ws2").await);
    assert_eq!(blob_at(&down, "app/v2:app/img/logo.png"), image, "copy");

    // A new upstream revision through the API, then upgrade the downstream to it.
    let up_v1 = "up.pkg.v1";
    create(&prs, "up", "pkg", "ws", edit_task(up_v1)).await;
    put_files(
        &prrs,
        "up.pkg.ws",
        &[(
            "cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: v2\n",
        )],
    )
    .await
    .expect("update upstream");
    let up_v2 = name(&publish(&prs, "up.pkg.ws").await);
    assert_eq!(blob_at(&env.bare("up"), "pkg/v2:pkg/img/logo.png"), image);
    create(&prs, "down", "app", "ws3", upgrade_task(up_v1, &up_v2, &v2)).await;
    publish(&prs, "down.app.ws3").await;
    assert_eq!(blob_at(&down, "app/v3:app/img/logo.png"), image, "upgrade");
    let cm = String::from_utf8(blob_at(&down, "app/v3:app/cm.yaml")).expect("utf8");
    assert!(cm.contains("k: v2"), "{cm}");
}
