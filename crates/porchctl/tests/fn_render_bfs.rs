//! `porchctl fn render` with `kpt.dev/bfs-rendering: "true"` on the root Kptfile, on
//! fixtures this test writes: packages run top-down in breadth-first order, each sees
//! its own resources then its descendants', a child sees (and can override) what its
//! parent changed, output goes back to the package each resource came from, and a
//! failure is reported against the root naming the failing package.
//! Exec functions are plain `sh`, so this runs on any Unix clone.

use std::path::PathBuf;
use std::process::Command;

mod pkgfix;
use pkgfix::snapshot;

const SET_LABELS: &str = "ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.2.0";
const SET_NS: &str = "ghcr.io/kptdev/krm-functions-catalog/set-namespace:v0.4.1";
const REMOVE_LOCAL: &str =
    "ghcr.io/kptdev/krm-functions-catalog/remove-local-config-resources:v0.1.0";

/// Logs `<who>: <names of the items it got> ns=<items already in namespace prod>` to
/// `$ORDER_LOG`, then passes its input through unchanged.
const RECORD: &str = r#"#!/bin/sh
input=$(cat)
names=$(printf '%s\n' "$input" | sed -n 's/^    name: //p' | tr '\n' ' ')
prod=$(printf '%s\n' "$input" | grep -c '^    namespace: prod$')
echo "$1: ${names}ns=$prod" >> "$ORDER_LOG"
printf '%s\n' "$input"
"#;

struct Fixture {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    log: PathBuf,
    record: PathBuf,
}

impl Fixture {
    fn new() -> Self {
        let tmp = tempfile::tempdir().expect("tempdir");
        let record = tmp.path().join("record.sh");
        std::fs::write(&record, RECORD).expect("script");
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&record, std::fs::Permissions::from_mode(0o755))
                .expect("chmod");
        }
        Fixture {
            dir: tmp.path().join("pkg"),
            log: tmp.path().join("order.log"),
            record,
            _tmp: tmp,
        }
    }

    /// A mutator step that records what it sees.
    fn record(&self, who: &str) -> String {
        format!("    - exec: {} {who}\n", self.record.display())
    }

    fn write(&self, files: &[(&str, String)]) {
        for (rel, text) in files {
            let path = self.dir.join(rel);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, text).expect("write");
        }
    }

    fn render(&self) -> (i32, String) {
        let out = Command::new(env!("CARGO_BIN_EXE_porchctl"))
            .args(["fn", "render", "--allow-exec"])
            .arg(&self.dir)
            .arg("--results-dir")
            .arg(self.dir.parent().expect("parent").join("results"))
            .env("ORDER_LOG", &self.log)
            .output()
            .expect("porchctl runs");
        (
            out.status.code().unwrap_or(-1),
            pkgfix::even_out_timings(&String::from_utf8_lossy(&out.stderr)),
        )
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn results(&self) -> String {
        let path = self
            .dir
            .parent()
            .expect("parent")
            .join("results/results.yaml");
        std::fs::read_to_string(path).expect("results.yaml")
    }
}

/// A Kptfile; the root one asks for top-down rendering (plus `extra` annotations).
fn kptfile(name: &str, root: bool, extra: &str, mutators: &str) -> String {
    let annotations = if root {
        format!("  annotations:\n    kpt.dev/bfs-rendering: \"true\"\n{extra}")
    } else {
        String::new()
    };
    let pipeline = if mutators.is_empty() {
        String::new()
    } else {
        format!("pipeline:\n  mutators:\n{mutators}")
    };
    format!(
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {name}\n{annotations}{pipeline}"
    )
}

fn cm(name: &str) -> String {
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  k: v\n")
}

fn set_labels(tier: &str) -> String {
    format!("    - image: {SET_LABELS}\n      configMap:\n        tier: {tier}\n")
}

/// The Kptfile text without a trailing `status:` block.
fn without_status(kptfile: &str) -> &str {
    match kptfile.find("\nstatus:\n") {
        Some(i) => &kptfile[..=i],
        None => kptfile,
    }
}

/// root -> {a -> {deep}, b}; root sets namespace prod, then every package records.
fn tree(f: &Fixture) {
    let ns = format!("    - image: {SET_NS}\n      configMap:\n        namespace: prod\n");
    f.write(&[
        (
            "Kptfile",
            kptfile("pkg", true, "", &format!("{ns}{}", f.record("root"))),
        ),
        ("cm.yaml", cm("root-cm")),
        ("b/Kptfile", kptfile("b", false, "", &f.record("b"))),
        ("b/cm.yaml", cm("b-cm")),
        ("a/Kptfile", kptfile("a", false, "", &f.record("a"))),
        ("a/cm.yaml", cm("a-cm")),
        (
            "a/deep/Kptfile",
            kptfile("deep", false, "", &f.record("a/deep")),
        ),
        ("a/deep/cm.yaml", cm("deep-cm")),
    ]);
}

#[test]
fn packages_run_top_down_breadth_first_and_children_see_parent_changes() {
    let f = Fixture::new();
    tree(&f);
    let (code, stderr) = f.render();
    assert_eq!(code, 0, "{stderr}");
    // Parent first, then each level sorted by path; a pipeline sees its own resources,
    // then each child's followed by that child's descendants'; every resource below the
    // root already carries the root's namespace. set-namespace (a go/fn SDK program)
    // hands its items back sorted by apiVersion, kind, namespace and name, so the
    // root's recorder sees the Kptfiles first and each package keeps that order.
    assert_eq!(
        f.log(),
        "root: a b deep pkg a-cm b-cm deep-cm root-cm ns=4\n\
         a: a a-cm deep deep-cm ns=2\n\
         b: b b-cm ns=1\n\
         a/deep: deep deep-cm ns=1\n"
    );
    assert!(
        stderr.contains("Successfully executed 5 function(s) in 4 package(s)."),
        "{stderr}"
    );
    let files = snapshot(&f.dir);
    for file in ["cm.yaml", "a/cm.yaml", "a/deep/cm.yaml", "b/cm.yaml"] {
        assert!(
            files[file].contains("  namespace: prod\n"),
            "{file}: {}",
            files[file]
        );
    }
    // Steps are recorded in execution order.
    let kf = &files["Kptfile"];
    let status = &kf[kf.find("renderStatus:").expect("renderStatus")..];
    let steps: Vec<&str> = status
        .lines()
        .filter_map(|l| l.trim().trim_start_matches("- ").strip_prefix("exec: "))
        .filter(|l| l.contains("record.sh"))
        .map(|l| l.rsplit(' ').next().unwrap_or_default())
        .collect();
    assert_eq!(steps, ["root", "a", "b", "a/deep"], "{kf}");
    assert!(kf.contains("reason: RenderSuccess"), "{kf}");
}

#[test]
fn a_child_overrides_what_its_parent_set_and_the_parent_does_not_run_again() {
    let f = Fixture::new();
    f.write(&[
        ("Kptfile", kptfile("pkg", true, "", &set_labels("root"))),
        ("cm.yaml", cm("root-cm")),
        ("sub/Kptfile", kptfile("sub", false, "", &set_labels("sub"))),
        ("sub/cm.yaml", cm("sub-cm")),
    ]);
    let (code, stderr) = f.render();
    assert_eq!(code, 0, "{stderr}");
    let files = snapshot(&f.dir);
    assert!(
        files["cm.yaml"].contains("tier: root"),
        "{}",
        files["cm.yaml"]
    );
    // Depth-first, the parent would run last and win; top-down the child does.
    assert!(
        files["sub/cm.yaml"].contains("tier: sub"),
        "{}",
        files["sub/cm.yaml"]
    );
    assert!(
        files["sub/Kptfile"].contains("tier: sub"),
        "{}",
        files["sub/Kptfile"]
    );
    assert!(
        without_status(&files["Kptfile"]).contains("tier: root"),
        "{}",
        files["Kptfile"]
    );
}

#[test]
fn resources_go_back_to_their_packages_and_deleted_ones_are_pruned() {
    let f = Fixture::new();
    let local = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: scratch\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n";
    let remove = format!("    - image: {REMOVE_LOCAL}\n");
    f.write(&[
        ("Kptfile", kptfile("pkg", true, "", &remove)),
        ("cm.yaml", cm("root-cm")),
        ("keep/Kptfile", kptfile("keep", false, "", "")),
        ("keep/cm.yaml", cm("keep-cm")),
        ("keep/scratch.yaml", local.to_string()),
        ("keep/deeper/Kptfile", kptfile("deeper", false, "", "")),
        ("keep/deeper/scratch.yaml", local.to_string()),
    ]);
    let before = snapshot(&f.dir);
    let (code, stderr) = f.render();
    assert_eq!(code, 0, "{stderr}");
    let after = snapshot(&f.dir);
    // The parent removed a sub-package's local-config resource: its file is gone,
    // everything else of that package is where it was.
    assert!(!after.contains_key("keep/scratch.yaml"), "{after:?}");
    assert_eq!(after["keep/cm.yaml"], before["keep/cm.yaml"]);
    assert_eq!(after["keep/Kptfile"], before["keep/Kptfile"]);
    assert_eq!(after["keep/deeper/Kptfile"], before["keep/deeper/Kptfile"]);
    // kpt's rule: a package none of whose resources came back keeps what it had, so
    // a sub-package emptied by its parent is left as it was.
    let deeper_only = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: gone\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n";
    let g = Fixture::new();
    g.write(&[
        ("Kptfile", kptfile("pkg", true, "", &remove)),
        ("cm.yaml", cm("root-cm")),
        ("gone/Kptfile", deeper_only.to_string()),
        ("gone/scratch.yaml", local.to_string()),
    ]);
    let before = snapshot(&g.dir);
    let (code, stderr) = g.render();
    assert_eq!(code, 0, "{stderr}");
    let after = snapshot(&g.dir);
    assert_eq!(after["gone/Kptfile"], before["gone/Kptfile"]);
    assert_eq!(after["gone/scratch.yaml"], before["gone/scratch.yaml"]);
}

#[test]
fn a_failing_child_is_reported_against_the_root_and_nothing_is_written() {
    let f = Fixture::new();
    tree(&f);
    let fail = "    - exec: \"false\"\n";
    f.write(&[(
        "a/Kptfile",
        kptfile("a", false, "", &format!("{}{fail}", f.record("a"))),
    )]);
    let before = snapshot(&f.dir);
    let (code, stderr) = f.render();
    assert_eq!(code, 1, "{stderr}");
    // The root and `a` ran; `b` and `a/deep` never did.
    assert_eq!(
        f.log()
            .lines()
            .map(|l| l.split(':').next().unwrap_or_default())
            .collect::<Vec<_>>(),
        ["root", "a"]
    );
    assert!(
        !stderr.contains("Error:"),
        "already shown as [FAIL]: {stderr}"
    );
    let after = snapshot(&f.dir);
    for (path, text) in &before {
        if path != "Kptfile" {
            assert_eq!(&after[path], text, "{path} was written");
        }
    }
    let kf = &after["Kptfile"];
    assert!(
        kf.contains(
            "      message: |-\n        pkg.render: pkg .:\n        \tpipeline.run: pkg ./a: already handled error\n"
        ),
        "{kf}"
    );
    assert!(
        kf.contains("    errorSummary: 'false: exit code 1'"),
        "{kf}"
    );
    // The results list the steps in the order they ran, the failure last.
    let results = f.results();
    assert!(results.contains("exitCode: 1\nitems:"), "{results}");
    let execs: Vec<&str> = results
        .lines()
        .filter_map(|l| l.trim().trim_start_matches("- ").strip_prefix("exec: "))
        .collect();
    assert_eq!(execs.len(), 3, "{results}");
    assert_eq!(execs[2], "\"false\"", "{results}");
}

#[test]
fn save_on_render_failure_writes_every_package_as_it_stands() {
    let f = Fixture::new();
    let save = "    kpt.dev/save-on-render-failure: \"true\"\n";
    let ns = format!("    - image: {SET_NS}\n      configMap:\n        namespace: prod\n");
    f.write(&[
        ("Kptfile", kptfile("pkg", true, save, &ns)),
        ("cm.yaml", cm("root-cm")),
        ("a/Kptfile", kptfile("a", false, "", &set_labels("a"))),
        ("a/cm.yaml", cm("a-cm")),
        (
            "b/Kptfile",
            kptfile(
                "b",
                false,
                "",
                &format!("{}    - exec: \"false\"\n", set_labels("b")),
            ),
        ),
        ("b/cm.yaml", cm("b-cm")),
        ("c/Kptfile", kptfile("c", false, "", &set_labels("c"))),
        ("c/cm.yaml", cm("c-cm")),
    ]);
    let (code, stderr) = f.render();
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("Partially executed 3 function(s) in 4 package(s)."),
        "{stderr}"
    );
    let files = snapshot(&f.dir);
    let has = |file: &str, text: &str| files[file].contains(text);
    // Root ran everywhere, `a` completed, `b` stopped after set-labels, `c` never ran.
    for file in ["cm.yaml", "a/cm.yaml", "b/cm.yaml", "c/cm.yaml"] {
        assert!(has(file, "namespace: prod"), "{file}: {}", files[file]);
    }
    assert!(has("a/cm.yaml", "tier: a"), "{}", files["a/cm.yaml"]);
    assert!(has("b/cm.yaml", "tier: b"), "{}", files["b/cm.yaml"]);
    assert!(!has("c/cm.yaml", "tier:"), "{}", files["c/cm.yaml"]);
}
