//! `porchctl rpkg ...` end to end beyond the upstream goldens: get's flags and printers,
//! `--show-kptfile`, pull to a directory and push back, and upgrade with `--discover`,
//! against the real porch-server and the blueprint bundle over smart HTTP.

mod common;

use common::golden::git_fixture;
use common::{Server, create_namespace, wait_ready};

fn lines(s: &str) -> Vec<Vec<&str>> {
    s.lines().map(|l| l.split_whitespace().collect()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_pull_push_clone_upgrade() {
    let Some(bundle) = porch_testkit::conformance::blueprints_bundle() else {
        return;
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let git = git_fixture(&tmp.path().join("srv"), &bundle);
    let s = Server::start();
    let client = s.client().await;
    create_namespace(&client, "rpkg").await;
    let bp = git.url_for("nephio/test-blueprints.git");
    let dep = git.url_for("nephio/porch-test");
    let n = ["-n", "rpkg"];
    let with_ns = |args: &[&str]| -> Vec<String> {
        args.iter()
            .chain(n.iter())
            .map(|a| (*a).to_string())
            .collect()
    };
    let ok = |args: &[&str]| {
        let a = with_ns(args);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        s.porchctl_ok(&a)
    };
    for (url, name) in [(&bp, "bp"), (&dep, "dep")] {
        ok(&[
            "repo",
            "reg",
            url,
            "--name",
            name,
            "--repo-basic-username=nephio",
            "--repo-basic-password=secret",
        ]);
        wait_ready(&client, "rpkg", name).await;
    }

    // The server's Table, filtered by --name and --revision on the client.
    let out = ok(&["rpkg", "get", "--name=basens", "--revision=1"]);
    assert_eq!(
        lines(&out),
        vec![
            vec![
                "NAME",
                "PACKAGE",
                "WORKSPACENAME",
                "REVISION",
                "LATEST",
                "LIFECYCLE",
                "REPOSITORY"
            ],
            vec![
                "bp.basens.v1",
                "basens",
                "v1",
                "1",
                "false",
                "Published",
                "bp"
            ],
        ],
        "{out}"
    );
    // --sort-by orders the Table's rows by a field of each row's object (kubectl's
    // byte order for strings, numeric for numbers), and the objects of -o name too.
    let out = ok(&["rpkg", "get", "--name=basens", "--sort-by={.spec.revision}"]);
    let revisions: Vec<&str> = lines(&out).iter().skip(1).map(|r| r[3]).collect();
    assert_eq!(revisions, ["-1", "1", "2", "3", "4"], "{out}");
    let out = ok(&[
        "rpkg",
        "get",
        "-o",
        "name",
        "--sort-by=.metadata.name",
        "bp.basens.v4",
        "bp.basens.v2",
    ]);
    assert_eq!(
        out,
        "packagerevision.porch.kpt.dev/bp.basens.v2\npackagerevision.porch.kpt.dev/bp.basens.v4\n"
    );
    let out = ok(&["repo", "get", "--sort-by=.metadata.name", "-o", "name"]);
    assert_eq!(
        out,
        "repository.config.porch.kpt.dev/bp\nrepository.config.porch.kpt.dev/dep\n"
    );
    let bad = s.porchctl(
        &with_ns(&["rpkg", "get", "--sort-by=.spec.nope"])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("couldn't find any field"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );

    let out = ok(&["rpkg", "get", "--name=basens", "-o", "name"]);
    assert!(
        out.contains("packagerevision.porch.kpt.dev/bp.basens.v4\n"),
        "{out}"
    );
    let out = ok(&[
        "rpkg",
        "get",
        "bp.basens.v1",
        "-o",
        "jsonpath={.spec.lifecycle}",
    ]);
    assert_eq!(out, "Published");
    let out = ok(&["rpkg", "get", "bp.basens.v1", "--show-kptfile"]);
    assert!(
        out.starts_with("apiVersion: kpt.dev/v1\nkind: Kptfile\n"),
        "{out}"
    );
    let out = s.porchctl(&["rpkg", "get", "--show-kptfile"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "Error: --show-kptfile requires exactly one package revision name as an argument \n"
    );

    // Clone the registered v1, pull it into a directory, edit, push it back.
    assert_eq!(
        ok(&["rpkg", "clone", "bp.basens.v1", "ns1", "--repository=dep"]),
        "dep.ns1.v1 created\n"
    );
    let dir = tmp.path().join("ns1");
    let d = dir.to_str().expect("utf8");
    assert_eq!(ok(&["rpkg", "pull", "dep.ns1.v1", d]), "");
    let meta = std::fs::read_to_string(dir.join(".KptRevisionMetadata")).expect("metadata");
    assert!(
        meta.starts_with(
            "apiVersion: \"\"\nkind: KptRevisionMetadata\nmetadata:\n  name: dep.ns1.v1\n"
        ),
        "{meta}"
    );
    // Porch's rpkg-pull-overwrite: the same package pulls over its own directory; another
    // package needs --force.
    assert_eq!(ok(&["rpkg", "pull", "dep.ns1.v1", d]), "");
    let out = s.porchctl(
        &with_ns(&["rpkg", "pull", "bp.basens.v1", d])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "pulling another package into an existing directory fails"
    );
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("already exists, please delete the directory and retry; you may overwrite the directory with --force"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::write(
        dir.join("extra.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n",
    )
    .expect("write");
    assert_eq!(
        ok(&["rpkg", "push", "dep.ns1.v1", d]),
        "dep.ns1.v1 pushed\n"
    );
    let out = ok(&["rpkg", "pull", "dep.ns1.v1"]);
    assert!(
        out.contains("config.kubernetes.io/path: 'extra.yaml'"),
        "{out}"
    );
    // Pushing the same metadata again is a stale resourceVersion.
    let again = s.porchctl(
        &with_ns(&["rpkg", "push", "dep.ns1.v1", d])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert_eq!(again.status.code(), Some(1));

    // Publish it; upgrade discovery sees the newer upstream revisions.
    assert_eq!(
        ok(&["rpkg", "propose", "dep.ns1.v1"]),
        "dep.ns1.v1 proposed\n"
    );
    assert_eq!(
        ok(&["rpkg", "approve", "dep.ns1.v1"]),
        "dep.ns1.v1 approved\n"
    );
    let out = ok(&["rpkg", "upgrade", "--discover=upstream", "dep.ns1.v1"]);
    assert_eq!(
        lines(&out),
        vec![
            vec![
                "PACKAGE",
                "REVISION",
                "UPSTREAM",
                "REPOSITORY",
                "UPSTREAM",
                "UPDATES"
            ],
            vec!["dep.ns1.v1", "bp", "v2,", "v3,", "v4"],
        ],
        "{out}"
    );
    let out = ok(&["rpkg", "upgrade", "--discover=downstream", "bp.basens.v4"]);
    // The package's placeholder on `main` has the same upstream and is listed too.
    assert!(
        lines(&out).contains(&vec!["bp.basens.v4", "dep.ns1.v1", "v1->v4"]),
        "{out}"
    );
    let out = s.porchctl(
        &with_ns(&[
            "rpkg",
            "upgrade",
            "dep.ns1.v1",
            "--workspace=v2",
            "--revision=2",
        ])
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>(),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.success() {
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "dep.ns1.v1 upgraded to dep.ns1.v2\n"
        );
    } else {
        // The request porchctl sends is checked by unit tests; the server may not merge yet.
        assert!(err.starts_with("Error: "), "{err}");
        eprintln!("note: server refused the upgrade: {err}");
    }
}

/// Repositories registered on directories of one git URL: revisions are named by the path
/// below the directory while their tags (and so a clone's upstreamLock) carry the whole
/// path; `upgrade --discover` still pairs a downstream with its upstream's newer revisions,
/// and not with a same-named package of the other directory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upgrade_discovery_across_repository_directories() {
    let Some(bundle) = porch_testkit::conformance::blueprints_bundle() else {
        return;
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let git = git_fixture(&tmp.path().join("srv"), &bundle);
    let s = Server::start();
    let client = s.client().await;
    create_namespace(&client, "dirs").await;
    let bp = git.url_for("nephio/test-blueprints.git");
    let shared = git.url_for("nephio/porch-test");
    let ok = |args: &[&str]| {
        let mut a = args.to_vec();
        a.extend_from_slice(&["--namespace", "dirs"]);
        s.porchctl_ok(&a)
    };
    for (name, dir) in [("up", "blueprints"), ("side", "other")] {
        ok(&[
            "repo",
            "register",
            &shared,
            "--name",
            name,
            "--directory",
            dir,
            "--deployment=false",
            "--repo-basic-username=nephio",
            "--repo-basic-password=secret",
        ]);
        wait_ready(&client, "dirs", name).await;
    }
    let publish = |name: &str| {
        ok(&["rpkg", "propose", name]);
        ok(&["rpkg", "approve", name]);
    };
    let from_bp = ["--directory=basens", "--ref=basens/v1", "--workspace", "w1"];
    let mut clone = vec!["rpkg", "clone", bp.as_str()];
    clone.extend_from_slice(&from_bp);
    clone.extend_from_slice(&["--repository=up", "app"]);
    ok(&clone);
    publish("up.app.w1");
    // The same package name in the other directory, at a higher revision: not an upstream
    // of anything here.
    let mut clone = vec!["rpkg", "clone", bp.as_str()];
    clone.extend_from_slice(&from_bp);
    clone.extend_from_slice(&["--repository=side", "app"]);
    ok(&clone);
    publish("side.app.w1");
    ok(&["rpkg", "copy", "side.app.w1", "--workspace=w2"]);
    publish("side.app.w2");
    ok(&["rpkg", "copy", "side.app.w2", "--workspace=w3"]);
    publish("side.app.w3");

    ok(&[
        "rpkg",
        "clone",
        "up.app.w1",
        "--repository=up",
        "--workspace=w1",
        "down",
    ]);
    publish("up.down.w1");
    let out = ok(&["rpkg", "upgrade", "--discover=upstream", "up.down.w1"]);
    assert_eq!(
        lines(&out)[1],
        vec!["up.down.w1", "up", "No", "update", "available"],
        "{out}"
    );
    ok(&["rpkg", "copy", "up.app.w1", "--workspace=w2"]);
    publish("up.app.w2");
    let out = ok(&["rpkg", "upgrade", "--discover=upstream", "up.down.w1"]);
    assert_eq!(lines(&out)[1], vec!["up.down.w1", "up", "v2"], "{out}");
    let out = ok(&["rpkg", "upgrade", "--discover=downstream", "up.app.w2"]);
    // The main-branch revision of `down` has the same upstream.
    assert_eq!(
        lines(&out)[1..],
        [
            vec!["up.app.w2", "up.down.main", "v1->v2"],
            vec!["up.app.w2", "up.down.w1", "v1->v2"]
        ],
        "{out}"
    );
    let out = ok(&["rpkg", "upgrade", "up.down.w1", "--workspace=w2"]);
    assert_eq!(out, "up.down.w1 upgraded to up.down.w2\n");
}

/// The default roles and a private upstream (docs/security.md): the author may not use the
/// repository's Secret to clone until granted `get` on that one Secret, as the docs show.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_author_clones_with_a_secret_only_when_granted_it() {
    use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
    use kube::api::{Api, PostParams};
    let Some(bundle) = porch_testkit::conformance::blueprints_bundle() else {
        return;
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let git = git_fixture(&tmp.path().join("srv"), &bundle);
    let s = Server::start_with_people();
    let admin = s.client().await;
    create_namespace(&admin, "creds").await;
    let [carol, alice, _] = common::PEOPLE;
    common::golden::bind(&admin, "creds", carol, "porch-repository-admin").await;
    common::golden::bind(&admin, "creds", alice, "porch-author").await;
    let ok = |user: &str, args: &[&str]| {
        let out = s.porchctl_as(user, args);
        assert!(
            out.status.success(),
            "{user}: porchctl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let dep = git.url_for("nephio/porch-test");
    ok(
        carol,
        &[
            "repo",
            "reg",
            &dep,
            "-n",
            "creds",
            "--name",
            "dep",
            "--repo-basic-username=nephio",
            "--repo-basic-password=secret",
        ],
    );
    wait_ready(&admin, "creds", "dep").await;
    let bp = git.url_for("nephio/test-blueprints.git");
    let clone = [
        "rpkg",
        "clone",
        bp.as_str(),
        "app",
        "-n",
        "creds",
        "--directory=basens",
        "--ref=basens/v1",
        "--repository=dep",
        "--workspace=w",
        "--secret-ref=dep-auth",
    ];
    let refused = s.porchctl_as(alice, &clone);
    assert_eq!(refused.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("User \"alice\" cannot get resource \"secrets\""),
        "{stderr}"
    );
    let role: Role = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "upstream-creds"},
        "rules": [{"apiGroups": [""], "resources": ["secrets"], "resourceNames": ["dep-auth"],
                   "verbs": ["get"]}],
    }))
    .expect("role");
    Api::<Role>::namespaced(admin.clone(), "creds")
        .create(&PostParams::default(), &role)
        .await
        .expect("create role");
    let binding: RoleBinding = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "alice-upstream-creds"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "upstream-creds"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}],
    }))
    .expect("binding");
    Api::<RoleBinding>::namespaced(admin.clone(), "creds")
        .create(&PostParams::default(), &binding)
        .await
        .expect("create binding");
    assert_eq!(ok(alice, &clone), "dep.app.w created\n");
}

/// Upstream's RunForEachPackage for the lifecycle commands: a `-n` without a value is
/// refused before anything is sent, every name is tried (an unreadable one is reported
/// and the next taken), and a deletion proposal is withdrawn through the approval
/// subresource (an approver's right).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lifecycle_commands_report_each_name() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let remote = tmp.path().join("shelf.git");
    let work = tmp.path().join("work");
    let git = |dir: &std::path::Path, args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(dir)
            .output()
            .expect("git");
        assert!(out.status.success(), "git {args:?}: {out:?}");
    };
    git(
        tmp.path(),
        &["init", "-q", "--bare", "-b", "main", "shelf.git"],
    );
    git(
        tmp.path(),
        &["clone", "-q", remote.to_str().expect("utf-8"), "work"],
    );
    std::fs::write(work.join("README.md"), "shelf\n").expect("write");
    git(&work, &["add", "."]);
    git(&work, &["commit", "-qm", "start"]);
    git(&work, &["push", "-q", "origin", "HEAD:main"]);

    let s = Server::start_with_people();
    let admin = s.client().await;
    create_namespace(&admin, "life").await;
    let [_, alice, bob] = common::PEOPLE;
    common::golden::bind(&admin, "life", alice, "porch-author").await;
    common::golden::bind(&admin, "life", bob, "porch-approver").await;
    let run = |user: &str, args: &[&str]| {
        let out = s.porchctl_as(user, args);
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let url = format!("file://{}", remote.display());
    s.porchctl_ok(&["repo", "reg", &url, "--name", "shelf", "-n", "life"]);
    wait_ready(&admin, "life", "shelf").await;
    for pkg in ["kettle", "mug"] {
        let (code, _, err) = run(
            alice,
            &[
                "rpkg",
                "init",
                pkg,
                "--repository=shelf",
                "--workspace=one",
                "-n",
                "life",
            ],
        );
        assert_eq!(code, Some(0), "{err}");
    }
    // The filter flags are the server's field selector, which named revisions skip.
    let (code, out, err) = run(
        alice,
        &[
            "rpkg",
            "get",
            "--name=mug",
            "-r",
            "shelf",
            "--ws",
            "one",
            "-o",
            "name",
            "-n",
            "life",
        ],
    );
    assert_eq!(
        (code, out.as_str()),
        (Some(0), "packagerevision.porch.kpt.dev/shelf.mug.one\n"),
        "{err}"
    );
    let (code, out, err) = run(
        alice,
        &[
            "rpkg",
            "get",
            "shelf.kettle.one",
            "--name=mug",
            "-o",
            "name",
            "-n",
            "life",
        ],
    );
    assert_eq!(
        (code, out.as_str()),
        (Some(0), "packagerevision.porch.kpt.dev/shelf.kettle.one\n"),
        "{err}"
    );
    let (code, _, err) = run(
        alice,
        &["rpkg", "propose", "shelf.kettle.one", "-n", "life"],
    );
    assert_eq!(code, Some(0), "{err}");
    let (code, _, err) = run(bob, &["rpkg", "approve", "shelf.kettle.one", "-n", "life"]);
    assert_eq!(code, Some(0), "{err}");

    for cmd in ["approve", "propose", "propose-delete", "del", "reject"] {
        let (code, out, err) = run(alice, &["rpkg", cmd, "shelf.mug.one", "-n", ""]);
        assert_eq!(code, Some(1), "{cmd}: {err}");
        assert_eq!(out, "", "{cmd}");
        assert_eq!(
            err,
            "Error: namespace flag specified without a value; please provide a value for --namespace/-n or omit the flag \n",
            "{cmd}"
        );
    }

    let (code, out, err) = run(
        alice,
        &[
            "rpkg",
            "propose-delete",
            "shelf.teapot.one",
            "shelf.mug.one",
            "shelf.kettle.one",
            "-n",
            "life",
        ],
    );
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(out, "shelf.kettle.one proposed for deletion\n");
    assert_eq!(
        err,
        "shelf.teapot.one failed (packagerevisions.porch.kpt.dev \"shelf.teapot.one\" not found)\n\
         shelf.mug.one failed (can only propose published packages for deletion; package shelf.mug.one is not published)\n\
         Error: errors:\n  packagerevisions.porch.kpt.dev \"shelf.teapot.one\" not found\n  \
         can only propose published packages for deletion; package shelf.mug.one is not published \n"
    );

    // The author may update revisions but not approve them, so withdrawing the deletion
    // proposal is the approver's call.
    let (code, _, err) = run(alice, &["rpkg", "reject", "shelf.kettle.one", "-n", "life"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("cannot update resource \"packagerevisions/approval\""),
        "{err}"
    );
    let (code, out, err) = run(bob, &["rpkg", "reject", "shelf.kettle.one", "-n", "life"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out, "shelf.kettle.one no longer proposed for deletion\n");
}
