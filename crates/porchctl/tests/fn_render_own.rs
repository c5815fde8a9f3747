//! `porchctl fn render` on fixtures this test writes itself (no upstream data needed):
//! depth-first order, selectors/exclude, validators that cannot mutate,
//! save-on-render-failure, comments and key order through native and exec functions,
//! resource files rewritten as kpt writes them (others untouched), emptied files removed, non-KRM files left alone,
//! and the results directory. Exec functions are plain `sh`/`sed`, so this runs on any
//! Unix clone.

use std::process::Command;

/// Write `files` under `<tmp>/pkg`.
mod pkgfix;
use pkgfix::{cm, kptfile, package, read, render, snapshot};

/// The Kptfile text without a trailing `status:` block.
fn without_status(kptfile: &str) -> &str {
    match kptfile.find("\nstatus:\n") {
        Some(i) => &kptfile[..=i],
        None => kptfile,
    }
}

const SET_LABELS: &str = "ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.2.0";
const SET_NS: &str = "ghcr.io/kptdev/krm-functions-catalog/set-namespace:v0.4.1";

#[test]
fn subpackages_render_depth_first_before_their_parent() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let log = tmp.path().join("order.log");
    let record = tmp.path().join("record.sh");
    std::fs::write(
        &record,
        "#!/bin/sh\necho \"$1\" >> \"$ORDER_LOG\"\nexec cat\n",
    )
    .expect("script");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&record, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let step = |who: &str| {
        format!(
            "pipeline:\n  mutators:\n    - exec: {} {who}\n",
            record.display()
        )
    };
    let dir = tmp.path().join("pkg");
    let ns = format!(
        "{}    - image: {SET_NS}\n      configMap:\n        namespace: prod\n",
        step("root")
    );
    for (rel, text) in [
        ("Kptfile", kptfile("pkg", &ns)),
        ("cm.yaml", cm("root")),
        ("b/Kptfile", kptfile("b", &step("b"))),
        ("b/cm.yaml", cm("b")),
        ("a/Kptfile", kptfile("a", &step("a"))),
        ("a/cm.yaml", cm("a")),
        ("a/deep/Kptfile", kptfile("deep", &step("a/deep"))),
        ("a/deep/cm.yaml", cm("deep")),
    ] {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
    let out = Command::new(env!("CARGO_BIN_EXE_porchctl"))
        .args(["fn", "render", "--allow-exec"])
        .arg(&dir)
        .env("ORDER_LOG", &log)
        .output()
        .expect("porchctl runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let order = std::fs::read_to_string(&log).expect("log");
    assert_eq!(order, "a/deep\na\nb\nroot\n");
    // The parent's set-namespace saw its sub-packages' rendered resources.
    let files = snapshot(&dir);
    for f in ["cm.yaml", "a/cm.yaml", "a/deep/cm.yaml", "b/cm.yaml"] {
        assert!(
            files[f].contains("  namespace: prod\n"),
            "{f}: {}",
            files[f]
        );
    }
}

#[test]
fn selectors_and_exclude_choose_what_a_function_sees() {
    let pipeline = format!(
        "pipeline:\n  mutators:\n    - image: {SET_LABELS}\n      configMap:\n        picked: \"yes\"\n      selectors:\n        - kind: ConfigMap\n        - name: svc\n      exclude:\n        - name: skip-me\n"
    );
    let svc =
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: svc\nspec:\n  ports:\n  - port: 80\n";
    let other = "apiVersion: v1\nkind: Service\nmetadata:\n  name: other\n";
    let (_tmp, dir) = package(&[
        ("Kptfile", &kptfile("pkg", &pipeline)),
        ("cm.yaml", &format!("{}---\n{}", cm("one"), cm("skip-me"))),
        ("svc.yaml", &format!("{svc}---\n{other}")),
    ]);
    let (code, stderr) = render(&dir, &[]);
    assert_eq!(code, 0, "{stderr}");
    let files = snapshot(&dir);
    insta::assert_snapshot!("selectors_cm", files["cm.yaml"]);
    insta::assert_snapshot!("selectors_svc", files["svc.yaml"]);
    // The Kptfile itself was not selected.
    let kf = without_status(&files["Kptfile"]);
    assert!(!kf.contains("\n  labels:"), "{kf}");
}

#[test]
fn validators_cannot_mutate() {
    let pipeline = format!(
        "pipeline:\n  validators:\n    - image: {SET_NS}\n      configMap:\n        namespace: changed\n    - exec: sed -e s/name:\\ cm/name:\\ mutated/\n"
    );
    let (_tmp, dir) = package(&[
        ("Kptfile", &kptfile("pkg", &pipeline)),
        ("cm.yaml", &cm("cm")),
    ]);
    let before = snapshot(&dir);
    let (code, stderr) = render(&dir, &["--allow-exec"]);
    assert_eq!(code, 0, "{stderr}");
    let after = snapshot(&dir);
    assert_eq!(before["cm.yaml"], after["cm.yaml"]);
    assert_eq!(before["Kptfile"], without_status(&after["Kptfile"]));
    assert!(
        after["Kptfile"].contains("    validationSteps:\n"),
        "{}",
        after["Kptfile"]
    );
}

#[test]
fn save_on_render_failure_writes_the_last_good_state() {
    let pipeline = format!(
        "pipeline:\n  mutators:\n    - image: {SET_NS}\n      configMap:\n        namespace: saved\n    - exec: \"false\"\n"
    );
    let save = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\n  annotations:\n    kpt.dev/save-on-render-failure: \"true\"\n";
    for (head, saved) in [(save.to_string(), true), (kptfile("pkg", ""), false)] {
        let (_tmp, dir) = package(&[
            ("Kptfile", &format!("{head}{pipeline}")),
            ("cm.yaml", &cm("cm")),
        ]);
        let (code, stderr) = render(&dir, &["--allow-exec"]);
        assert_ne!(code, 0, "{stderr}");
        let after = snapshot(&dir);
        assert_eq!(
            after["cm.yaml"].contains("namespace: saved"),
            saved,
            "{}",
            after["cm.yaml"]
        );
        assert!(
            after["Kptfile"].contains("status: \"False\""),
            "{}",
            after["Kptfile"]
        );
    }
}

/// A resource with comments everywhere and keys in a non-alphabetical order.
const COMMENTED: &str = r#"# Header comment of the deployment.
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web # trailing on the name
  # before labels
  labels:
    zeta: z
    alpha: a
spec:
  # replicas are set by the HPA
  replicas: 3
  selector:
    matchLabels:
      app: web
  template:
    spec:
      containers:
        - name: web # the main container
          image: nginx:1.25
          env:
            # ordered on purpose
            - name: Z
              value: "1"
            - name: A
              value: "2"
"#;

#[test]
fn comments_and_key_order_survive_native_and_exec_functions() {
    // Native set-labels, then an exec function that strips every comment (healing puts
    // them back) and rewrites a value.
    let pipeline = format!(
        "pipeline:\n  mutators:\n    - image: {SET_LABELS}\n      configMap:\n        team: blue\n    - exec: \"sed -e '/^ *#/d' -e 's/ #.*$//' -e s/nginx:1.25/nginx:1.27/\"\n      selectors:\n        - kind: Deployment\n"
    );
    let (_tmp, dir) = package(&[
        ("Kptfile", &kptfile("pkg", &pipeline)),
        ("deploy.yaml", COMMENTED),
    ]);
    let (code, stderr) = render(&dir, &["--allow-exec"]);
    assert_eq!(code, 0, "{stderr}");
    let files = snapshot(&dir);
    let out = &files["deploy.yaml"];
    for line in COMMENTED.lines().filter(|l| l.contains('#')) {
        assert!(out.contains(line.trim()), "lost {line:?}:\n{out}");
    }
    assert!(out.find("zeta").expect("zeta") < out.find("alpha").expect("alpha"));
    insta::assert_snapshot!("comments_deploy", out);
}

/// kpt writes back every file it read resources from, selected by a function or not,
/// through kyaml's encoder: a non-canonical file comes out in kpt's canonical form
/// (expected text recorded from kpt 1.0.0-beta.56 on the same package, its document
/// head comment and blank line kept). Files that are not resources are never touched.
#[test]
fn resource_files_are_rewritten_canonically_and_others_left_alone() {
    let odd = "# odd formatting\n\napiVersion: v1\nkind: ConfigMap\nmetadata:\n    name: odd\n\n    labels: {a: b}\ndata:\n    \"k\":   'v'\n";
    let kpt = "# odd formatting\n\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: odd\n  labels: {a: b}\ndata:\n  \"k\": 'v'\n";
    let pipeline = format!(
        "pipeline:\n  mutators:\n    - image: {SET_LABELS}\n      configMap:\n        x: y\n      selectors:\n        - name: touched\n"
    );
    let script = "#!/bin/sh\n# not a resource\necho hi\n";
    let (_tmp, dir) = package(&[
        ("Kptfile", &kptfile("pkg", &pipeline)),
        ("odd.yaml", odd),
        ("touched.yaml", &cm("touched")),
        ("README.md", "# Title\n\napiVersion: not yaml\n"),
        ("scripts/run.sh", script),
        ("data/notes.txt", "free text: [\n"),
    ]);
    let before = snapshot(&dir);
    let (code, stderr) = render(&dir, &[]);
    assert_eq!(code, 0, "{stderr}");
    let after = snapshot(&dir);
    assert_eq!(after["odd.yaml"], kpt);
    for f in ["README.md", "scripts/run.sh", "data/notes.txt"] {
        assert_eq!(before[f], after[f], "{f}");
    }
    assert_ne!(before["touched.yaml"], after["touched.yaml"]);
    assert_eq!(before.len(), after.len());
}

#[test]
fn files_whose_resources_are_all_deleted_are_removed() {
    let local = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: setters\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\ndata:\n  a: b\n";
    let pipeline = "pipeline:\n  mutators:\n    - image: ghcr.io/kptdev/krm-functions-catalog/remove-local-config-resources:v0.1.0\n";
    let (_tmp, dir) = package(&[
        ("Kptfile", &kptfile("pkg", pipeline)),
        ("local/setters.yaml", local),
        ("mixed.yaml", &format!("{local}---\n{}", cm("kept"))),
        ("kept.yaml", &cm("alone")),
    ]);
    let before = snapshot(&dir);
    let (code, stderr) = render(&dir, &[]);
    assert_eq!(code, 0, "{stderr}");
    let after = snapshot(&dir);
    assert!(!after.contains_key("local/setters.yaml"), "{after:?}");
    assert!(!dir.join("local/setters.yaml").exists());
    assert_eq!(after["mixed.yaml"], cm("kept"));
    assert_eq!(before["kept.yaml"], after["kept.yaml"]);
}

/// kyaml reads no resource from an empty, comment-only or `---`-only file, so kpt never
/// tracks it and never prunes it: it stays byte for byte, with or without a pipeline.
#[test]
fn files_that_hold_no_resource_are_kept() {
    let quiet = [
        ("empty.yaml", ""),
        ("comment.yaml", "# Empty input resources.\n"),
        ("separators.yaml", "---\n---\n"),
        ("sub/only-comments.yml", "# a\n---\n# b\n"),
    ];
    let pipeline = format!(
        "pipeline:\n  mutators:\n    - image: {SET_NS}\n      configMap:\n        namespace: prod\n"
    );
    for pipeline in ["", pipeline.as_str()] {
        let mut files = vec![("cm.yaml", cm("cm"))];
        files.push(("Kptfile", kptfile("pkg", pipeline)));
        let mut all: Vec<(&str, &str)> = files.iter().map(|(p, t)| (*p, t.as_str())).collect();
        all.extend(quiet);
        let (_tmp, dir) = package(&all);
        let (code, stderr) = render(&dir, &[]);
        assert_eq!(code, 0, "{stderr}");
        let after = snapshot(&dir);
        for (rel, text) in quiet {
            assert_eq!(
                after.get(rel).map(String::as_str),
                Some(text),
                "{rel} ({pipeline:?})"
            );
        }
    }
}

/// kpt builds every mutator's runner before running the first (`fnChain`): an exec
/// mutator without `--allow-exec`, or a `tag:` that resolves to nothing, fails the
/// pipeline before any function ran, and the status records only that step. Validators
/// are built one at a time, after the mutators ran.
#[test]
fn mutators_are_settled_before_the_first_runs() {
    let ns = format!("    - image: {SET_NS}\n      configMap:\n        namespace: prod\n");
    let cases = [
        (
            format!("pipeline:\n  mutators:\n{ns}    - exec: sed -e s/a/b/\n"),
            "must run with `--allow-exec` option to allow running function binaries",
            "exec: sed -e s/a/b/",
        ),
        (
            format!(
                "pipeline:\n  mutators:\n{ns}    - image: ghcr.io/kptdev/krm-functions-catalog/set-labels\n      tag: \">= 999.0.0\"\n      configMap:\n        a: b\n"
            ),
            "no tag could be found matching the version constraint \">= 999.0.0\"",
            "image: ghcr.io/kptdev/krm-functions-catalog/set-labels",
        ),
    ];
    for (pipeline, error, step) in cases {
        let (_tmp, dir) = package(&[
            ("Kptfile", &kptfile("pkg", &pipeline)),
            ("cm.yaml", &cm("cm")),
        ]);
        let (code, stderr) = render(&dir, &[]);
        assert_eq!(code, 1, "{stderr}");
        assert!(!stderr.contains("[RUNNING]"), "{stderr}");
        assert!(stderr.contains(&format!("Error: {error}")), "{stderr}");
        let files = snapshot(&dir);
        assert_eq!(files["cm.yaml"], cm("cm"), "nothing ran");
        let status = &files["Kptfile"][files["Kptfile"].find("status:").expect("status")..];
        assert!(status.contains(step), "{status}");
        assert!(
            !status.contains(SET_NS),
            "the first mutator is not recorded: {status}"
        );
    }
    // A validator that may not run fails only after the mutators ran.
    let pipeline = format!("pipeline:\n  mutators:\n{ns}  validators:\n    - exec: cat\n");
    let (_tmp, dir) = package(&[
        ("Kptfile", &kptfile("pkg", &pipeline)),
        ("cm.yaml", &cm("cm")),
    ]);
    let (code, stderr) = render(&dir, &[]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains(&format!("[PASS] \"{SET_NS}\"")), "{stderr}");
    let kf = read(&dir, "Kptfile");
    assert!(kf.contains("validationSteps:\n      - exec: cat"), "{kf}");
}

/// A comment closing one file's resource comes back from a function inside that
/// resource's item: it stays in its file and never heads the next file's resource.
#[test]
fn a_trailing_comment_stays_in_its_file() {
    let pipeline = "pipeline:\n  mutators:\n    - exec: cat\n";
    let b =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\ndata:\n  k: v\n# foot comment\n";
    let (_tmp, dir) = package(&[
        ("Kptfile", &kptfile("pkg", pipeline)),
        ("b.yaml", b),
        ("c.yaml", &cm("c")),
    ]);
    let (code, stderr) = render(&dir, &["--allow-exec"]);
    assert_eq!(code, 0, "{stderr}");
    let files = snapshot(&dir);
    assert_eq!(files["c.yaml"], cm("c"));
    assert!(
        files["b.yaml"].contains("# foot comment"),
        "{}",
        files["b.yaml"]
    );
}

/// Render without a pipeline writes every resource file back as kpt does. Each output
/// below is what kpt 1.0.0-beta.56 wrote for the input beside it: JSON re-encoded
/// Go-style, comments above a later `---` and comment-only documents dropped, CRLF to
/// LF (the wide sequence style still derived), 4-space maps re-indented, document
/// markers dropped, escapes resolved and folded scalars re-flowed, a document's head
/// comment kept with its blank line.
#[test]
fn files_are_written_back_as_kpt_writes_them() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "a.json",
            "{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"json\"}, \"data\": {\"a\": \"b\"}}\n",
            "{\n  \"apiVersion\": \"v1\",\n  \"data\": {\n    \"a\": \"b\"\n  },\n  \"kind\": \"ConfigMap\",\n  \"metadata\": {\n    \"name\": \"json\"\n  }\n}\n",
        ),
        (
            "b.yaml",
            "# leading comment\n\n---\n# doc comment\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lead # trailing\ndata:\n  k: \"quoted\"\n  k2: 'single'\n  multi: |\n    line1\n    line2\n# foot comment\n",
            "# doc comment\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lead # trailing\ndata:\n  k: \"quoted\"\n  k2: 'single'\n  multi: |\n    line1\n    line2\n# foot comment\n",
        ),
        (
            "c.yaml",
            "apiVersion: v1\r\nkind: ConfigMap\r\nmetadata:\r\n  name: crlf\r\ndata:\r\n  list: |\r\n    x\r\nspec:\r\n  items:\r\n    - a\r\n    - b\r\n",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: crlf\ndata:\n  list: |\n    x\nspec:\n  items:\n    - a\n    - b\n",
        ),
        (
            "d.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: flow, labels: {a: b}}\ndata:\n    indented4: x\nlist:\n- a\n- b\n",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: flow, labels: {a: b}}\ndata:\n  indented4: x\nlist:\n- a\n- b\n",
        ),
        (
            "e.yaml",
            "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: e1\n---\n# between\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: e2\n...\n",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: e1\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: e2\n",
        ),
        (
            "f.yaml",
            "# header\n\n# second\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hdr\n",
            "# header\n\n# second\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hdr\n",
        ),
        (
            "h.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: tabs\ndata:\n  s: \"a\\tb\"\n  u: \"\\u00e9\"\n  folded: >\n    x\n    y\n",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: tabs\ndata:\n  s: \"a\\tb\"\n  u: \"é\"\n  folded: >\n    x y\n\n",
        ),
    ];
    let mut files = vec![("Kptfile", kptfile("pkg", ""))];
    files.extend(
        cases
            .iter()
            .map(|(name, input, _)| (*name, input.to_string())),
    );
    let all: Vec<(&str, &str)> = files.iter().map(|(p, t)| (*p, t.as_str())).collect();
    let (_tmp, dir) = package(&all);
    let (code, stderr) = render(&dir, &[]);
    assert_eq!(code, 0, "{stderr}");
    let after = snapshot(&dir);
    for (name, _, kpt) in cases {
        assert_eq!(after[*name], *kpt, "{name}");
    }
}

/// kpt's console layout for a tree: every package it reaches is named (a package
/// without a pipeline too), and each pipeline that runs through ends with a blank line
/// (kpt 1.0.0-beta.56 prints the same layout; kpt HEAD adds `on package` and drops the
/// header's trailing space).
#[test]
fn every_package_is_named_and_each_pipeline_ends_with_a_blank_line() {
    let cat = "pipeline:\n  mutators:\n    - exec: cat\n";
    // `render` reads the run time as `0s` already (pkgfix, kpt's e2e rule).
    let sanitize = |stderr: &str| stderr.strip_suffix('\n').unwrap_or(stderr).to_string();
    let (_tmp, dir) = package(&[
        ("Kptfile", &kptfile("pkg", cat)),
        ("sub/Kptfile", &kptfile("sub", cat)),
        ("cm.yaml", &cm("cm")),
    ]);
    let (code, stderr) = render(&dir, &["--allow-exec"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        sanitize(&stderr),
        "Package \"pkg/sub\":\n[RUNNING] \"cat\" on package \"pkg/sub\"\n[PASS] \"cat\" in 0s\n\n\
         Package \"pkg\":\n[RUNNING] \"cat\" on package \"pkg\"\n[PASS] \"cat\" in 0s\n\n\
         Successfully executed 2 function(s) in 2 package(s)."
    );
    let (_tmp, dir) = package(&[
        ("Kptfile", &kptfile("pkg", cat)),
        ("sub/Kptfile", &kptfile("sub", "")),
        ("cm.yaml", &cm("cm")),
    ]);
    let (code, stderr) = render(&dir, &["--allow-exec"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        sanitize(&stderr),
        "Package \"pkg/sub\":\nPackage \"pkg\":\n[RUNNING] \"cat\" on package \"pkg\"\n\
         [PASS] \"cat\" in 0s\n\nSuccessfully executed 1 function(s) in 2 package(s)."
    );
}

/// A document that is a bare list is read as kyaml's `WrapBareSeqNode` reads it: wrapped,
/// so it carries its path, and refused as not KRM by name; left untouched.
#[test]
fn a_bare_list_document_is_refused_by_its_path() {
    let patch = "- op: replace\n  path: /spec\n";
    let (_tmp, dir) = package(&[("Kptfile", &kptfile("pkg", "")), ("patch.yaml", patch)]);
    let (code, stderr) = render(&dir, &[]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains(
            "Error: input resource list must contain only KRM resources: patch.yaml: resource must have `apiVersion`"
        ),
        "{stderr}"
    );
    assert_eq!(snapshot(&dir)["patch.yaml"], patch);
}

/// kpt HEAD records the Rendered condition after every in-place render
/// (`updateRenderStatus`), one that ran no function too: the root Kptfile gains the
/// condition and no `renderStatus`; a sub-package's Kptfile is left as it was.
#[test]
fn a_render_that_ran_nothing_still_records_the_rendered_condition() {
    let (_tmp, dir) = package(&[
        ("Kptfile", &kptfile("pkg", "")),
        ("sub/Kptfile", &kptfile("sub", "")),
        ("cm.yaml", &cm("cm")),
    ]);
    let (code, stderr) = render(&dir, &[]);
    assert_eq!(code, 0, "{stderr}");
    let files = snapshot(&dir);
    assert_eq!(
        files["Kptfile"],
        format!(
            "{}status:\n  conditions:\n    - type: Rendered\n      status: \"True\"\n      reason: RenderSuccess\n",
            kptfile("pkg", "")
        )
    );
    assert_eq!(files["sub/Kptfile"], kptfile("sub", ""));
}

#[test]
fn results_dir_is_written() {
    let pipeline = format!(
        "pipeline:\n  mutators:\n    - image: {SET_NS}\n      configMap:\n        namespace: prod\n  validators:\n    - exec: cat\n"
    );
    let (tmp, dir) = package(&[
        ("Kptfile", &kptfile("pkg", &pipeline)),
        ("cm.yaml", &cm("cm")),
    ]);
    let results = tmp.path().join("results");
    let results_arg = results.display().to_string();
    let (code, stderr) = render(&dir, &["--allow-exec", "--results-dir", &results_arg]);
    assert_eq!(code, 0, "{stderr}");
    let text = std::fs::read_to_string(results.join("results.yaml")).expect("results.yaml");
    insta::assert_snapshot!("results_yaml", text);
    let files = snapshot(&dir);
    insta::assert_snapshot!("results_kptfile", files["Kptfile"]);
}

#[test]
fn the_summary_counts_packages_without_a_pipeline() {
    // kpt 1.0.0-beta.56 prints "in 2 package(s)" for this tree too.
    let pipeline = format!(
        "pipeline:\n  mutators:\n    - image: {SET_NS}\n      configMap:\n        namespace: prod\n"
    );
    let (_tmp, dir) = package(&[
        ("Kptfile", &kptfile("pkg", &pipeline)),
        ("sub/Kptfile", &kptfile("sub", "")),
        ("sub/cm.yaml", &cm("cm")),
    ]);
    let (code, stderr) = render(&dir, &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("Successfully executed 1 function(s) in 2 package(s)."),
        "{stderr}"
    );
}

#[test]
fn an_unselected_file_is_rewritten_as_kpt_writes_it() {
    // The function changes cm.yaml only; other.yaml passes through untouched and is
    // still written back canonically (spacing normalised, final line break added), as
    // kpt 1.0.0-beta.56 writes it for the same package.
    let pipeline = format!(
        "pipeline:\n  mutators:\n    - image: {SET_LABELS}\n      configMap:\n        a: b\n      selectors:\n        - name: one\n"
    );
    let other = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name:   two # spaced\ndata:\n  k: v";
    let (_tmp, dir) = package(&[
        ("Kptfile", &kptfile("pkg", &pipeline)),
        ("cm.yaml", &cm("one")),
        ("other.yaml", other),
        ("README.md", "no newline"),
    ]);
    let (code, stderr) = render(&dir, &[]);
    assert_eq!(code, 0, "{stderr}");
    let files = snapshot(&dir);
    assert!(
        files["cm.yaml"].contains("  labels:\n    a: b\n"),
        "{}",
        files["cm.yaml"]
    );
    assert_eq!(
        files["other.yaml"],
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: two # spaced\ndata:\n  k: v\n"
    );
    assert_eq!(files["README.md"], "no newline", "not a resource file");
}

/// kpt's `namespaceMatch` / `annoMatch`: a selector's namespace must equal the
/// item's, and every annotation it names must be present with that value (an
/// absent annotation does not match, even against an empty value). The
/// `[RUNNING]` line counts what was selected.
#[test]
fn namespace_and_annotation_selectors_pick_exact_matches_and_are_counted() {
    let pipeline = format!(
        "pipeline:\n  mutators:\n    - image: {SET_LABELS}\n      configMap:\n        team: a\n      selectors:\n        - namespace: blue\n        - annotations:\n            pick: \"\"\n"
    );
    let with_ns = |name: &str, ns: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: {ns}\ndata:\n  k: v\n"
        )
    };
    let annotated = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: annotated\n  annotations:\n    pick: \"\"\ndata:\n  k: v\n";
    let (_tmp, dir) = package(&[
        ("Kptfile", &kptfile("pkg", &pipeline)),
        ("blue.yaml", &with_ns("in-blue", "blue")),
        ("green.yaml", &with_ns("in-green", "green")),
        ("annotated.yaml", annotated),
        ("plain.yaml", &cm("plain")),
    ]);
    let (code, stderr) = render(&dir, &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "[RUNNING] \"{SET_LABELS}\" on 2 resource(s) on package \"pkg\""
        )),
        "{stderr}"
    );
    let files = snapshot(&dir);
    assert!(
        files["blue.yaml"].contains("    team: a\n"),
        "{}",
        files["blue.yaml"]
    );
    assert!(
        files["annotated.yaml"].contains("    team: a\n"),
        "{}",
        files["annotated.yaml"]
    );
    assert_eq!(files["green.yaml"], with_ns("in-green", "green"));
    assert_eq!(files["plain.yaml"], cm("plain"));
}

/// A package's generator may place a new resource in a subpackage's directory
/// (`config.kubernetes.io/path: ./db/...`): kpt writes it there, below the
/// generating package, and the subpackage's own files stay as they were.
#[test]
fn a_generated_resource_may_be_written_into_a_subpackage_directory() {
    let generator = "#!/bin/sh\nsed -e 's|^items:$|items:\\n- apiVersion: v1\\n  kind: ConfigMap\\n  metadata:\\n    name: made\\n    annotations:\\n      config.kubernetes.io/path: ./db/made.yaml\\n  data:\\n    k: v|'\n";
    let (_tmp, dir) = package(&[
        ("gen.sh", generator),
        ("db/Kptfile", &kptfile("db", "")),
        ("db/cm.yaml", &cm("db-cm")),
    ]);
    let pipeline = format!(
        "pipeline:\n  mutators:\n    - exec: {}\n",
        dir.join("gen.sh").display()
    );
    std::fs::write(dir.join("Kptfile"), kptfile("pkg", &pipeline)).expect("write");
    let (code, stderr) = render(&dir, &["--allow-exec"]);
    assert_eq!(code, 0, "{stderr}");
    let files = snapshot(&dir);
    let made = files
        .get("db/made.yaml")
        .expect("the generated file is in db/");
    assert!(made.contains("  name: made\n"), "{made}");
    assert!(!made.contains("config.kubernetes.io/path"), "{made}");
    assert_eq!(files["db/cm.yaml"], cm("db-cm"));
    assert!(!files.contains_key("made.yaml"));
}
