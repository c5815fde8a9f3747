//! Conformance tests of the package update (3-way merge) over the shared upstream
//! data: kpt's merge3 cases (checked as kpt's own tests check them), kpt's
//! `keep-tagged-null` update case and Porch's update golden (byte for byte).

use std::path::{Path, PathBuf};

use kpt::package::{PackageFiles, fs::read_dir};
use kpt::pkg::merge3::MergeOptions;
use kpt::pkg::update::{Strategy, UpdateOptions, update_package};
use kpt::yaml::{Node, parse_one, parse_stream};

fn conformance_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("PORCH_CONFORMANCE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance")
        });
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!(
            "skipped: conformance data not found at {}; set PORCH_CONFORMANCE_DIR to a checkout \
             of the shared conformance data (kpt/merge3, kpt/update, porch/update)",
            dir.display()
        );
        None
    }
}

/// The `spec.resources` of a MergeTestResources file as a package.
fn prr(path: &Path) -> PackageFiles {
    let text = std::fs::read_to_string(path).expect("read test file");
    let root = parse_one(&text).expect("parse test file");
    let mut files = PackageFiles::new();
    for (k, v) in root
        .get_path(&["spec", "resources"])
        .expect("spec.resources")
        .entries()
    {
        files.insert(
            k.as_str().expect("name").to_string(),
            v.as_str().expect("content").as_bytes().to_vec(),
        );
    }
    files
}

fn merged(case: &Path) -> PackageFiles {
    let mut o = prr(&case.join("original.yaml"));
    let mut u = prr(&case.join("updated.yaml"));
    let mut d = prr(&case.join("destination.yaml"));
    if let Ok(crd) = std::fs::read(case.join("fruitstore.crd.yaml")) {
        for p in [&mut o, &mut u, &mut d] {
            p.insert("fruitstore.crd.yaml", crd.clone());
        }
    }
    update_package(
        &o,
        &u,
        &d,
        Strategy::ResourceMerge,
        &UpdateOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{}: {e}", case.display()))
}

fn find(files: &PackageFiles, kind: &str) -> Node {
    for p in files.paths() {
        if !p.ends_with(".yaml") {
            continue;
        }
        let docs = parse_stream(files.get_text(p).expect("utf8")).expect("yaml");
        for d in docs {
            if d.root.get("kind").and_then(Node::as_str) == Some(kind) {
                return d.root;
            }
        }
    }
    panic!("no {kind} in result");
}

fn fruits(files: &PackageFiles) -> (String, Vec<(String, String)>) {
    let fs = find(files, "FruitStore");
    let temp = fs
        .get_path(&["spec", "preferredTemperature"])
        .and_then(Node::as_str)
        .unwrap_or_default()
        .to_string();
    let mut list: Vec<(String, String)> = fs
        .get_path(&["spec", "fruits"])
        .map(|l| {
            l.items()
                .iter()
                .map(|e| {
                    (
                        e.get("name")
                            .and_then(Node::as_str)
                            .unwrap_or_default()
                            .to_string(),
                        e.get("amount")
                            .and_then(Node::as_str)
                            .unwrap_or_default()
                            .to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    list.sort();
    (temp, list)
}

fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = p
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    v.sort();
    v
}

#[test]
fn merge3_cases() {
    let Some(root) = conformance_dir() else {
        return;
    };
    let dir = root.join("kpt/merge3");
    for case in ["simple-conflict", "simple-subpackage-conflict"] {
        let out = merged(&dir.join(case));
        let dep = find(&out, "Deployment");
        let c = &dep
            .get_path(&["spec", "template", "spec", "containers"])
            .expect("containers")
            .items()[0];
        assert_eq!(
            c.get("image").and_then(Node::as_str),
            Some("test-image:updated"),
            "{case}"
        );
    }
    // Associative list through the CRD's schema.
    let out = merged(&dir.join("one-key-crd"));
    assert_eq!(
        fruits(&out),
        (
            "10".into(),
            pairs(&[
                ("apple", "20"),
                ("grape", "5"),
                ("banana", "3"),
                ("pear", "30")
            ])
        )
    );
    let out = merged(&dir.join("one-key-crd-empty-updated"));
    assert_eq!(fruits(&out), ("10".into(), pairs(&[("banana", "3")])));
    let out = merged(&dir.join("one-key-crd-empty-dest"));
    assert_eq!(
        fruits(&out),
        ("10".into(), pairs(&[("apple", "20"), ("pear", "30")]))
    );
    // Without a schema lists are not associative: upstream's changed list wins.
    for case in ["non-assoc-crd", "infer-crd"] {
        let out = merged(&dir.join(case));
        assert_eq!(
            fruits(&out),
            (
                "10".into(),
                pairs(&[("apple", "20"), ("grape", "5"), ("pear", "30")])
            ),
            "{case}"
        );
    }
}

fn read(dir: &Path) -> PackageFiles {
    read_dir(dir).expect("read dir").0
}

fn assert_same(got: &PackageFiles, want: &PackageFiles, case: &str) {
    let gp: Vec<&str> = got.paths().collect();
    let wp: Vec<&str> = want.paths().collect();
    assert_eq!(gp, wp, "{case}: file sets differ");
    for p in wp {
        assert_eq!(
            got.get_text(p).unwrap_or_default(),
            want.get_text(p).unwrap_or_default(),
            "{case}: {p} differs"
        );
    }
}

#[test]
fn kpt_keep_tagged_null() {
    let Some(root) = conformance_dir() else {
        return;
    };
    let c = root.join("kpt/update/keep-tagged-null");
    let opts = UpdateOptions {
        merge: MergeOptions {
            keep_tagged_null: true,
            ..MergeOptions::default()
        },
        add_identities: false,
    };
    let out = update_package(
        &read(&c.join("origin")),
        &read(&c.join("updated")),
        &read(&c.join("dest")),
        Strategy::ResourceMerge,
        &opts,
    )
    .expect("update");
    assert_same(&out, &read(&c.join("expected")), "keep-tagged-null");
}

#[test]
fn porch_update_golden() {
    let Some(root) = conformance_dir() else {
        return;
    };
    let c = root.join("porch/update");
    let out = update_package(
        &read(&c.join("original")),
        &read(&c.join("upstream")),
        &read(&c.join("local")),
        Strategy::ResourceMerge,
        &UpdateOptions::default(),
    )
    .expect("update");
    assert_same(&out, &read(&c.join("updated")), "porch/update");
}
