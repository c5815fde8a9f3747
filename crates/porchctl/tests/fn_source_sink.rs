//! `fn source` and `fn sink` read and write as kyaml's package reader and writer do:
//! one walk over the package and its sub-packages with each package's `.krmignore`,
//! stdin read as kyaml's `ByteReader`, resources written by kyaml's `LocalPackageWriter`
//! rules. Expected texts are what kpt 1.0.0-beta.56 prints for the same inputs.

mod pkgfix;
use std::io::Write;
use std::process::{Command, Stdio};

use pkgfix::{package, porchctl, snapshot};

const KPTFILE: &str = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n";

fn config_map(name: &str) -> String {
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n")
}

/// `fn sink DIR` in `cwd` with `input` on stdin: exit code and stderr.
fn sink(cwd: &std::path::Path, dir: &str, input: &str) -> (i32, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_porchctl"))
        .args(["fn", "sink", dir])
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("porchctl runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write stdin");
    let out = child.wait_with_output().expect("wait");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn paths_in(list: &str) -> Vec<&str> {
    list.lines()
        .filter_map(|l| {
            l.trim()
                .strip_prefix("internal.config.kubernetes.io/path: ")
        })
        .collect()
}

#[test]
fn source_skips_what_a_krmignore_names_sub_packages_included() {
    let (tmp, _dir) = package(&[
        ("Kptfile", KPTFILE),
        (".krmignore", "vendored\nnotes/draft\n"),
        ("vendored/Kptfile", KPTFILE),
        ("vendored/cm.yaml", &config_map("vendored")),
        ("kept/Kptfile", KPTFILE),
        ("kept/.krmignore", "scratch.yaml\n"),
        ("kept/scratch.yaml", &config_map("scratch")),
        ("kept/notes/draft/cm.yaml", &config_map("kept-draft")),
        ("deep/notes/draft/cm.yaml", &config_map("deep-draft")),
        ("svc.yaml", &config_map("svc")),
    ]);
    let (code, out, err) = porchctl(tmp.path(), &["fn", "source", "pkg"]);
    assert_eq!(code, 0, "{err}");
    // `notes/draft` matches the last two parts of any path, but only the root
    // package's own; the sub-package `kept` has its own rules.
    assert_eq!(
        paths_in(&out),
        [
            "'Kptfile'",
            "'kept/Kptfile'",
            "'kept/notes/draft/cm.yaml'",
            "'svc.yaml'"
        ]
    );
}

#[test]
fn source_names_a_file_it_cannot_read_by_its_full_path() {
    let bad = format!("{}--- extra\n{}", config_map("one"), config_map("two"));
    let (tmp, dir) = package(&[("Kptfile", KPTFILE), ("both.yaml", &bad)]);
    let (code, _, err) = porchctl(tmp.path(), &["fn", "source", "pkg"]);
    assert_eq!(code, 1);
    let abs = std::fs::canonicalize(&dir).expect("canonical");
    assert_eq!(
        err,
        format!(
            "error: {}/both.yaml: invalid document separator: --- extra\n",
            abs.display()
        )
    );
}

#[test]
fn sink_reads_stdin_as_kyamls_byte_reader() {
    let tmp = tempfile::tempdir().expect("tmp");
    // A lone `List` is unwrapped; its items go to kyaml's default paths.
    let list = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: token\n";
    let (code, err) = sink(tmp.path(), "from-list", list);
    assert_eq!(code, 0, "{err}");
    let files = snapshot(&tmp.path().join("from-list"));
    assert_eq!(files.keys().collect::<Vec<_>>(), ["secret_token.yaml"]);

    // Empty documents between separators are skipped.
    let docs = format!("---\n{}---\n---\n{}", config_map("a"), config_map("b"));
    let (code, err) = sink(tmp.path(), "from-docs", &docs);
    assert_eq!(code, 0, "{err}");
    let files = snapshot(&tmp.path().join("from-docs"));
    assert_eq!(
        files.keys().collect::<Vec<_>>(),
        ["configmap_a.yaml", "configmap_b.yaml"]
    );

    // A separator with text after it is refused; the directory is made first.
    let bad = format!("{}--- extra\n{}", config_map("a"), config_map("b"));
    let (code, err) = sink(tmp.path(), "refused", &bad);
    assert_eq!(
        (code, err.as_str()),
        (1, "error: invalid document separator: --- extra\n")
    );
    assert!(tmp.path().join("refused").is_dir());
}

#[test]
fn sink_writes_by_path_and_index_as_kyamls_package_writer() {
    let tmp = tempfile::tempdir().expect("tmp");
    let item = |name: &str, index: Option<&str>| {
        let index = index
            .map(|i| format!("      internal.config.kubernetes.io/index: '{i}'\n"))
            .unwrap_or_default();
        format!(
            "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: {name}\n    annotations:\n      internal.config.kubernetes.io/path: 'all.yaml'\n{index}"
        )
    };
    let list = |items: &[String]| {
        format!(
            "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n{}",
            items.concat()
        )
    };
    // Two at one index are both written, in the order given; one without an index
    // takes the file's highest.
    let input = list(&[
        item("late", None),
        item("first", Some("0")),
        item("twin", Some("0")),
        item("second", Some("1")),
    ]);
    let (code, err) = sink(tmp.path(), "dups", &input);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(tmp.path().join("dups/all.yaml")).expect("read");
    let names: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("  name: "))
        .collect();
    assert_eq!(names, ["first", "twin", "late", "second"]);

    // An index that is no number fails once it is compared with another.
    let input = list(&[item("first", Some("0")), item("odd", Some("one"))]);
    let (code, err) = sink(tmp.path(), "odd", &input);
    assert_eq!(
        (code, err.as_str()),
        (
            1,
            "error: unable to parse config.kubernetes.io/index one :strconv.Atoi: parsing \"one\": invalid syntax\n"
        )
    );
}

#[test]
fn source_unwrap_removes_only_the_readers_annotations() {
    let own = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: tagged\n  annotations:\n    config.k8s.io/id: \"5\"\n    config.kubernetes.io/merge-source: dest\ndata:\n  k: v\n";
    let (tmp, _dir) = package(&[
        ("Kptfile", KPTFILE),
        ("own.yaml", own),
        ("plain.yaml", "- first\n- second\n"),
    ]);
    let (code, out, err) = porchctl(tmp.path(), &["fn", "source", "pkg", "-o", "unwrap"]);
    assert_eq!(code, 0, "{err}");
    // The id's twin, added when read, stays; the list comes back as a list.
    let tagged = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: tagged\n  annotations:\n    config.k8s.io/id: \"5\"\n    config.kubernetes.io/merge-source: dest\n    internal.config.kubernetes.io/id: '5'\ndata:\n  k: v\n";
    assert_eq!(
        out,
        format!("{KPTFILE}---\n{tagged}---\n- first\n- second\n")
    );
}
