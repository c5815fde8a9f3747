//! Drafts changed in place, end to end against the real porch-server and a smart-HTTP git
//! fixture built here (no conformance data needed):
//! - `rpkg update` (older Nephio porchctl) and `rpkg clone --strategy`: a Draft cloned from a
//!   registered revision or from a git URL moves to another upstream revision, merged with
//!   its clone task's strategy;
//! - `rpkg clone/upgrade --subpackage-dir` (kptdev porchctl): an upstream cloned into a
//!   directory of a Draft as an independent subpackage, and upgraded there.

mod common;

use std::path::Path;

use common::{PASS, Server, USER, create_namespace, wait_ready};
use porch_testkit::{GitServer, repos};

const KPTFILE: &str = "apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: app
info:
  description: an app
";

fn config_map(a: &str, b: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: \"{a}\"\n  b: \"{b}\"\n"
    )
}

/// `nephio/upstream.git` with package `app` tagged `app/v1` (a=1) and `app/v2` (a=2), and
/// an empty `nephio/dep.git`.
fn fixture(root: &Path) -> GitServer {
    let up = repos::init_bare(&root.join("nephio/upstream.git"), "main").expect("init");
    for (rev, a) in [(1, "1"), (2, "2")] {
        let cm = config_map(a, "x");
        let commit = repos::commit_files(
            &up,
            "main",
            &repos::files(&[("app/Kptfile", KPTFILE), ("app/cm.yaml", &cm)]),
            &format!("app v{rev}"),
        )
        .expect("commit");
        up.reference(&format!("refs/tags/app/v{rev}"), commit, false, "tag")
            .expect("tag");
    }
    let dep = repos::init_bare(&root.join("nephio/dep.git"), "main").expect("init");
    repos::commit_files(
        &dep,
        "main",
        &repos::files(&[("README.md", "deployments\n")]),
        "init",
    )
    .expect("commit");
    GitServer::start_public_read(root, (USER, PASS)).expect("git server")
}

struct World {
    s: Server,
    upstream_url: String,
    work: tempfile::TempDir,
    _git: GitServer,
    _root: tempfile::TempDir,
}

impl World {
    async fn start() -> World {
        let root = tempfile::tempdir().expect("tempdir");
        let git = fixture(root.path());
        let s = Server::start();
        let client = s.client().await;
        create_namespace(&client, "upd").await;
        let upstream_url = git.url_for("nephio/upstream.git");
        let w = World {
            s,
            upstream_url,
            work: tempfile::tempdir().expect("tempdir"),
            _git: git,
            _root: root,
        };
        for (url, name) in [
            (w.upstream_url.clone(), "up"),
            (w._git.url_for("nephio/dep.git"), "dep"),
        ] {
            w.ok(&[
                "repo",
                "reg",
                &url,
                "--name",
                name,
                "--repo-basic-username=nephio",
                "--repo-basic-password=secret",
            ]);
            wait_ready(&client, "upd", name).await;
        }
        w
    }

    fn ok(&self, args: &[&str]) -> String {
        let mut all = args.to_vec();
        all.extend(["-n", "upd"]);
        self.s.porchctl_ok(&all)
    }

    fn fails(&self, args: &[&str]) -> String {
        let mut all = args.to_vec();
        all.extend(["-n", "upd"]);
        let out = self.s.porchctl(&all);
        assert!(!out.status.success(), "{args:?} succeeded");
        String::from_utf8_lossy(&out.stderr).into_owned()
    }

    /// Pulls `name`, edits the ConfigMap in `dir` (`""`: the root) to `b: local`, and pushes
    /// it back.
    fn edit_locally(&self, name: &str, dir: &str) {
        let root = self.work.path().join(name);
        self.ok(&["rpkg", "pull", name, root.to_str().expect("utf8")]);
        let cm = root.join(dir).join("cm.yaml");
        let text = std::fs::read_to_string(&cm).expect("cm.yaml");
        std::fs::write(&cm, text.replace("b: \"x\"", "b: \"local\"")).expect("write");
        self.ok(&["rpkg", "push", name, root.to_str().expect("utf8")]);
    }

    /// Asserts that the package in `dir` of `name` is app's v2 merged with the local edit:
    /// `a` from the upstream, `b` kept, the Kptfile pointing at `app/v2`.
    fn assert_merged_onto_v2(&self, name: &str, dir: &str) {
        let at = |f: &str| {
            if dir.is_empty() {
                f.to_owned()
            } else {
                format!("{dir}/{f}")
            }
        };
        let cm = self.file(name, &at("cm.yaml"));
        assert!(
            cm.contains("a: \"2\"") && cm.contains("b: \"local\""),
            "{cm}"
        );
        let kptfile = self.file(name, &at("Kptfile"));
        assert!(kptfile.contains("ref: app/v2"), "{kptfile}");
    }

    /// The text of `file` in revision `name` as pulled now.
    fn file(&self, name: &str, file: &str) -> String {
        let dir = self.work.path().join(format!("{name}-after"));
        let _ = std::fs::remove_dir_all(&dir);
        self.ok(&["rpkg", "pull", name, dir.to_str().expect("utf8")]);
        std::fs::read_to_string(dir.join(file)).expect("file")
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registered_clone_is_merged_onto_the_new_revision_keeping_local_edits() {
    let w = World::start().await;
    assert_eq!(
        w.ok(&[
            "rpkg",
            "clone",
            "up.app.v1",
            "regapp",
            "--repository=dep",
            "--workspace=ws"
        ]),
        "dep.regapp.ws created\n"
    );
    w.edit_locally("dep.regapp.ws", "");
    let before = w.ok(&["rpkg", "update", "--discover=upstream", "dep.regapp.ws"]);
    assert!(
        before.lines().nth(1).is_some_and(|l| l.ends_with("v2")),
        "{before}"
    );

    assert_eq!(
        w.ok(&["rpkg", "update", "dep.regapp.ws", "--revision=2"]),
        "dep.regapp.ws updated\n"
    );
    // resource-merge: the upstream's change arrives, the local edit stays.
    w.assert_merged_onto_v2("dep.regapp.ws", "");
    let after = w.ok(&["rpkg", "update", "--discover=upstream", "dep.regapp.ws"]);
    assert!(after.contains("No update available"), "{after}");
    // The Draft records the update after its clone.
    let yaml = w.ok(&["rpkg", "get", "dep.regapp.ws", "-o", "yaml"]);
    let update_at = yaml.find("type: update").expect("update task");
    assert!(
        yaml.find("type: clone").is_some_and(|c| c < update_at),
        "{yaml}"
    );
    assert!(yaml.contains("name: up.app.v2"), "{yaml}");

    // Upstream's refusals, before anything is sent.
    assert_eq!(
        w.fails(&["rpkg", "update", "dep.regapp.ws", "--revision=7"]),
        "Error: revision 7 does not exist for package regapp \n"
    );
    assert_eq!(
        w.fails(&["rpkg", "update", "dep.regapp.ws"]),
        "Error: revision is required \n"
    );
    assert_eq!(
        w.fails(&["rpkg", "update", "dep.nothing.ws", "--revision=2"]),
        "Error: could not find package revision dep.nothing.ws \n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_git_clone_moves_to_the_revision_tag_with_its_strategy() {
    let w = World::start().await;
    let url = w.upstream_url.clone();
    for (target, strategy) in [("copied", "copy-merge"), ("merged", "resource-merge")] {
        assert_eq!(
            w.ok(&[
                "rpkg",
                "clone",
                &url,
                "--directory=app",
                "--ref=app/v1",
                "--repository=dep",
                "--workspace=v1",
                &format!("--strategy={strategy}"),
                target,
            ]),
            format!("dep.{target}.v1 created\n")
        );
        let name = format!("dep.{target}.v1");
        w.edit_locally(&name, "");
        assert_eq!(
            w.ok(&["rpkg", "update", &name, "--revision=2"]),
            format!("{name} updated\n")
        );
        let cm = w.file(&name, "cm.yaml");
        // copy-merge takes the upstream's files; resource-merge keeps the local edit.
        let b = if strategy == "copy-merge" {
            "x"
        } else {
            "local"
        };
        assert!(
            cm.contains("a: \"2\"") && cm.contains(&format!("b: \"{b}\"")),
            "{strategy}: {cm}"
        );
        let kptfile = w.file(&name, "Kptfile");
        assert!(kptfile.contains("ref: v2"), "{kptfile}");
    }
    assert_eq!(
        w.fails(&[
            "rpkg",
            "clone",
            &url,
            "--directory=app",
            "--repository=dep",
            "--strategy=rebase",
            "other"
        ]),
        "Error: invalid strategy: \"rebase\" \n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn independent_subpackages_are_cloned_and_upgraded_in_place() {
    let w = World::start().await;
    w.ok(&[
        "rpkg",
        "init",
        "parent",
        "--repository=dep",
        "--workspace=w1",
    ]);
    assert_eq!(
        w.ok(&[
            "rpkg",
            "clone",
            "up.app.v1",
            "dep.parent.w1",
            "--subpackage-dir=sub/app"
        ]),
        "subpackage cloned into directory \"sub/app\" in package revision \"dep.parent.w1\"\n"
    );
    let kptfile = w.file("dep.parent.w1", "sub/app/Kptfile");
    assert!(
        kptfile.contains("name: app") && kptfile.contains("ref: app/v1"),
        "{kptfile}"
    );
    // The Draft keeps its one task, so another subpackage may follow; not into the same place.
    let yaml = w.ok(&["rpkg", "get", "dep.parent.w1", "-o", "yaml"]);
    assert!(
        yaml.contains("type: init") && !yaml.contains("type: clone"),
        "{yaml}"
    );
    let err = w.fails(&[
        "rpkg",
        "clone",
        "up.app.v2",
        "dep.parent.w1",
        "--subpackage-dir=sub",
    ]);
    assert!(
        err.contains("cannot clone subpackage into parent, parent already has content at \"sub\""),
        "{err}"
    );
    let err = w.fails(&[
        "rpkg",
        "clone",
        "up.app.v2",
        "dep.parent.w1",
        "--subpackage-dir=sub/app/inner",
    ]);
    assert!(
        err.contains("cannot clone subpackage into another subpackage"),
        "{err}"
    );

    // A local edit of the subpackage, then a new revision of the parent.
    w.edit_locally("dep.parent.w1", "sub/app");
    w.ok(&["rpkg", "propose", "dep.parent.w1"]);
    w.ok(&["rpkg", "approve", "dep.parent.w1"]);
    let err = w.fails(&[
        "rpkg",
        "upgrade",
        "dep.parent.w1",
        "--subpackage-dir=sub/app",
    ]);
    assert_eq!(
        err,
        "Error: to upgrade an independent subpackage, its parent package must be in state draft, not \"Published\" \n"
    );
    w.ok(&["rpkg", "copy", "dep.parent.w1", "--workspace=w2"]);
    assert_eq!(
        w.ok(&[
            "rpkg",
            "upgrade",
            "dep.parent.w2",
            "--subpackage-dir=sub/app"
        ]),
        "independent subpackage in directory \"sub/app\" in package \"dep.parent.w2\" upgraded\n"
    );
    w.assert_merged_onto_v2("dep.parent.w2", "sub/app");

    // The flags kptdev's porchctl refuses.
    assert_eq!(
        w.fails(&[
            "rpkg",
            "clone",
            "up.app.v1",
            "dep.parent.w2",
            "--subpackage-dir=../x"
        ]),
        "Error: invalid --subpackage-dir \"../x\": subpackage directory \"../x\" is invalid, it cannot contain '..' or start with '/' or end with '/' \n"
    );
    assert_eq!(
        w.fails(&[
            "rpkg",
            "clone",
            "up.app.v1",
            "dep.parent.w2",
            "--subpackage-dir=y",
            "--workspace=w"
        ]),
        "Error: --workspace may not be specified on subpackage clones \n"
    );
    assert_eq!(
        w.fails(&[
            "rpkg",
            "upgrade",
            "dep.parent.w2",
            "--subpackage-dir=sub/app",
            "--workspace=w"
        ]),
        "Error: --workspace may not be specified on subpackage upgrades \n"
    );
    assert_eq!(
        w.fails(&[
            "rpkg",
            "upgrade",
            "dep.parent.w2",
            "--subpackage-dir=nothing"
        ]),
        "Error: could not find Kptfile for independent subpackage at \"nothing/Kptfile\" in the resources of package \"parent\" \n"
    );
}

/// A clone of a Draft records the Draft's branch (`drafts/<package>/<workspace>`) as its
/// upstream lock, as Go Porch's git drafts do: once the Draft is published, discovery names
/// it, and the clone can be updated to it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clone_of_a_draft_finds_it_once_published() {
    let w = World::start().await;
    w.ok(&["rpkg", "copy", "up.app.v2", "--workspace=next"]);
    w.ok(&[
        "rpkg",
        "clone",
        "up.app.next",
        "early",
        "--repository=dep",
        "--workspace=ws",
    ]);
    let kptfile = w.file("dep.early.ws", "Kptfile");
    assert!(kptfile.contains("ref: drafts/app/next"), "{kptfile}");
    w.ok(&["rpkg", "propose", "up.app.next"]);
    w.ok(&["rpkg", "approve", "up.app.next"]);
    let down = w.ok(&["rpkg", "update", "--discover=downstream", "up.app.next"]);
    assert_eq!(
        down.lines()
            .nth(1)
            .map(|l| l.split_whitespace().collect::<Vec<_>>()),
        Some(vec![
            "up.app.next",
            "dep.early.ws",
            "(draft",
            "\"next\")->v3"
        ]),
        "{down}"
    );
    assert_eq!(
        w.ok(&["rpkg", "update", "dep.early.ws", "--revision=3"]),
        "dep.early.ws updated\n"
    );
    let kptfile = w.file("dep.early.ws", "Kptfile");
    assert!(kptfile.contains("ref: app/v3"), "{kptfile}");
}
