//! Differential test of `porchctl fn render --allow-exec` against the installed kpt
//! binary (`/usr/bin/kpt`, or `$KPT_BIN`).
//!
//! A deterministic generator writes packages whose pipelines use `exec:` functions only
//! (sed, cat, small python scripts that label, generate, delete or fail; sub-packages
//! with their own pipelines; selectors/exclude; validators; comments; multi-document
//! files; wide and compact sequences), all in kpt's canonical format. Each package is
//! copied twice, rendered once by kpt and once by porchctl, and the two trees must be
//! byte-identical with the same exit code.
//!
//! One normalisation: the installed kpt (1.0.0-beta.56) predates `status.renderStatus`
//! and the `Rendered` condition that kpt HEAD (our spec) writes into the root Kptfile,
//! so our root Kptfile is compared with its trailing `status:` block removed, and that
//! block is checked on its own (Rendered True on success, False on failure). Writing
//! status re-encodes the root Kptfile (Go struct field order and quoting), so when a
//! function has rewritten the root Kptfile it is compared as data. For the same reason
//! `kpt.dev/save-on-render-failure` (newer than beta.56) is not generated here.
//!
//! What this does not compare: stderr (kpt's progress lines differ in detail), and the
//! order/annotations of the ResourceList an exec function receives (kpt beta.56 lists
//! sub-package resources first; kpt HEAD, which we follow, lists the package's own
//! first) — the generated functions do not depend on either.
//!
//! When kpt is absent the test says how to get it and passes as skipped.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn kpt_bin() -> Option<PathBuf> {
    let p = std::env::var_os("KPT_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/kpt"));
    p.is_file().then_some(p)
}

fn python() -> Option<PathBuf> {
    ["/usr/bin/python3", "/usr/local/bin/python3"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
}

/// Small deterministic PRNG (xorshift64*), so the packages never change between runs.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// Helper scripts shared by every package (absolute paths in the Kptfiles, so both
/// copies of a package run the very same function).
const SCRIPTS: &[(&str, &str)] = &[
    (
        "add-label.py",
        r#"import sys, yaml
rl = yaml.safe_load(sys.stdin)
for it in rl.get("items") or []:
    md = it.setdefault("metadata", {})
    labels = md.get("labels") or {}
    labels["diff-test"] = "labelled"
    md["labels"] = labels
yaml.safe_dump(rl, sys.stdout, sort_keys=False)
"#,
    ),
    (
        "generate.py",
        r#"import sys, yaml
rl = yaml.safe_load(sys.stdin)
items = rl.get("items") or []
n = sum(1 for it in items if it.get("kind") == "ConfigMap")
items.append({
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {
        "name": "generated-%d" % n,
        "annotations": {"config.kubernetes.io/path": "generated/cm-%d.yaml" % n},
    },
    "data": {"count": str(n), "list": ["a", "b"]},
})
rl["items"] = items
yaml.safe_dump(rl, sys.stdout, sort_keys=False)
"#,
    ),
    (
        "delete.py",
        r#"import sys, yaml
rl = yaml.safe_load(sys.stdin)
keep = []
for it in rl.get("items") or []:
    labels = (it.get("metadata") or {}).get("labels") or {}
    if labels.get("remove") != "yes":
        keep.append(it)
rl["items"] = keep
yaml.safe_dump(rl, sys.stdout, sort_keys=False)
"#,
    ),
    (
        "set-field.py",
        r#"import sys, yaml
rl = yaml.safe_load(sys.stdin)
for it in rl.get("items") or []:
    if it.get("kind") == "Deployment":
        it.setdefault("spec", {})["replicas"] = 7
    if it.get("kind") == "ConfigMap":
        data = it.get("data") or {}
        data["added"] = "by-script"
        it["data"] = data
yaml.safe_dump(rl, sys.stdout, sort_keys=False)
"#,
    ),
    (
        "fail.py",
        r#"import sys
sys.stdin.read()
sys.stderr.write("fail.py: refusing on purpose\n")
sys.exit(3)
"#,
    ),
    (
        "mutating-validator.py",
        r#"import sys, yaml
rl = yaml.safe_load(sys.stdin)
for it in rl.get("items") or []:
    it.setdefault("metadata", {})["name"] = "changed-by-validator"
yaml.safe_dump(rl, sys.stdout, sort_keys=False)
"#,
    ),
];

fn write_scripts(bin: &Path, python: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(bin).expect("mkdir bin");
    for (name, body) in SCRIPTS {
        let path = bin.join(name);
        std::fs::write(&path, format!("#!{}\n{body}", python.display())).expect("script");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
}

/// One resource document in canonical kpt format.
fn resource(rng: &mut Rng, kind: &str, name: &str, wide: bool, comments: bool) -> String {
    let dash = if wide { "    - " } else { "  - " };
    let cont = if wide { "      " } else { "    " };
    let mut s = String::new();
    if comments && rng.chance(50) {
        s.push_str(&format!("# {kind} {name} header\n"));
    }
    let remove = rng.chance(15);
    match kind {
        "ConfigMap" => {
            s.push_str("apiVersion: v1\nkind: ConfigMap\nmetadata:\n");
            s.push_str(&format!("  name: {name}"));
            s.push_str(if comments { " # the name\n" } else { "\n" });
            if remove || rng.chance(40) {
                s.push_str("  labels:\n");
                if remove {
                    s.push_str("    remove: \"yes\"\n");
                }
                s.push_str(&format!("    tier: t{}\n", rng.below(3)));
            }
            s.push_str("data:\n");
            if comments {
                s.push_str("  # a value that sed rewrites\n");
            }
            s.push_str("  key: value-one\n");
            s.push_str(&format!("  other: \"{}\"\n", rng.below(100)));
        }
        "Service" => {
            s.push_str("apiVersion: v1\nkind: Service\nmetadata:\n");
            s.push_str(&format!("  name: {name}\n"));
            if remove {
                s.push_str("  labels:\n    remove: \"yes\"\n");
            }
            s.push_str("spec:\n  ports:\n");
            for p in 0..(1 + rng.below(2)) {
                let port = 80 + p;
                s.push_str(&format!("{dash}port: {port}"));
                s.push_str(if comments { " # port\n" } else { "\n" });
                s.push_str(&format!("{cont}protocol: TCP\n"));
            }
            s.push_str(&format!("  selector:\n    app: {name}\n"));
        }
        _ => {
            s.push_str("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n");
            s.push_str(&format!("  name: {name}\n"));
            if remove {
                s.push_str("  labels:\n    remove: \"yes\"\n");
            }
            s.push_str("spec:\n  replicas: 1\n  template:\n    spec:\n      containers:\n");
            let d = if wide { "        - " } else { "      - " };
            let c = if wide { "          " } else { "        " };
            s.push_str(&format!(
                "{d}name: app\n{c}image: nginx:1.2{}\n",
                rng.below(9)
            ));
            s.push_str(&format!("{c}args:\n"));
            // Sequences under the container: wide indents them under their key.
            let ad = if wide { "            - " } else { "        - " };
            s.push_str(&format!("{ad}--value-one\n{ad}--flag\n"));
            if comments {
                s.push_str(&format!("{c}# ports below\n"));
            }
            s.push_str(&format!("{c}ports:\n"));
            let pd = ad;
            s.push_str(&format!("{pd}containerPort: 8080\n"));
        }
    }
    s
}

fn kptfile(
    name: &str,
    mutators: &[String],
    validators: &[String],
    save_on_failure: bool,
) -> String {
    let mut s = format!("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {name}\n");
    if save_on_failure {
        s.push_str("  annotations:\n    kpt.dev/save-on-render-failure: \"true\"\n");
    }
    if !mutators.is_empty() || !validators.is_empty() {
        s.push_str("pipeline:\n");
        if !mutators.is_empty() {
            s.push_str("  mutators:\n");
            for m in mutators {
                s.push_str(m);
            }
        }
        if !validators.is_empty() {
            s.push_str("  validators:\n");
            for v in validators {
                s.push_str(v);
            }
        }
    }
    s
}

/// A pipeline step as Kptfile text (wide sequences, as kpt writes Kptfiles).
fn step(exec: &str, selectors: &[&str], exclude: &[&str]) -> String {
    let mut s = format!("    - exec: {exec}\n");
    for (key, list) in [("selectors", selectors), ("exclude", exclude)] {
        if list.is_empty() {
            continue;
        }
        s.push_str(&format!("      {key}:\n"));
        for sel in list {
            let mut first = true;
            for field in sel.split(',') {
                let (k, v) = field.split_once('=').expect("k=v");
                let prefix = if first { "        - " } else { "          " };
                first = false;
                if let Some(label) = k.strip_prefix("label.") {
                    s.push_str(&format!("{prefix}labels:\n            {label}: {v}\n"));
                } else {
                    s.push_str(&format!("{prefix}{k}: {v}\n"));
                }
            }
        }
    }
    s
}

fn random_steps(rng: &mut Rng, bin: &Path, allow_fail: bool) -> (Vec<String>, Vec<String>) {
    let script = |n: &str| bin.join(n).display().to_string();
    let mut mutators = Vec::new();
    for _ in 0..(1 + rng.below(3)) {
        let exec = match rng.below(7) {
            0 => "sed -e s/value-one/value-two/".to_string(),
            1 => "cat".to_string(),
            2 => script("add-label.py"),
            3 => script("generate.py"),
            4 => script("delete.py"),
            5 => script("set-field.py"),
            _ => "sed -e s/--flag/--flag=on/".to_string(),
        };
        let (sel, exc): (Vec<&str>, Vec<&str>) = match rng.below(6) {
            0 => (vec!["kind=ConfigMap"], vec![]),
            1 => (vec!["kind=Deployment", "kind=Service"], vec![]),
            2 => (vec![], vec!["kind=Kptfile"]),
            3 => (vec!["apiVersion=v1"], vec!["label.tier=t1"]),
            _ => (vec![], vec![]),
        };
        mutators.push(step(&exec, &sel, &exc));
    }
    if allow_fail && rng.chance(25) {
        let at = rng.below(mutators.len() as u64 + 1) as usize;
        mutators.insert(at, step(&script("fail.py"), &[], &[]));
    }
    let mut validators = Vec::new();
    match rng.below(4) {
        0 => validators.push(step("cat", &[], &[])),
        1 => validators.push(step(
            &script("mutating-validator.py"),
            &["kind=ConfigMap"],
            &[],
        )),
        2 if allow_fail && rng.chance(30) => validators.push(step(&script("fail.py"), &[], &[])),
        _ => {}
    }
    (mutators, validators)
}

/// Files of one package directory (`prefix` is its path in the tree).
fn package(
    rng: &mut Rng,
    tree: &mut BTreeMap<String, String>,
    prefix: &str,
    name: &str,
    bin: &Path,
    depth: u32,
    case: usize,
) {
    let comments = rng.chance(60);
    let at = |f: &str| {
        if prefix.is_empty() {
            f.to_string()
        } else {
            format!("{prefix}/{f}")
        }
    };
    let files = 1 + rng.below(3);
    for f in 0..files {
        let wide = rng.chance(50);
        let docs = 1 + rng.below(3);
        let mut text = String::new();
        for d in 0..docs {
            if d > 0 {
                text.push_str("---\n");
            }
            let kind = ["ConfigMap", "Service", "Deployment"][rng.below(3) as usize];
            let rname = format!("{}-{name}-{f}-{d}", kind.to_lowercase());
            text.push_str(&resource(rng, kind, &rname, wide, comments));
        }
        let file = if f == 2 {
            at(&format!("nested/dir/res-{f}.yaml"))
        } else {
            at(&format!("res-{f}.yaml"))
        };
        tree.insert(file, text);
    }
    if rng.chance(40) {
        tree.insert(at("README.md"), format!("# {name}\n\nNot KRM.\n"));
    }
    let (mutators, validators) = if depth == 0 || rng.chance(80) {
        random_steps(rng, bin, depth == 0 || case.is_multiple_of(5))
    } else {
        (Vec::new(), Vec::new())
    };
    // `kpt.dev/save-on-render-failure` is newer than kpt 1.0.0-beta.56: not generated
    // (fn_render_own covers it).
    tree.insert(at("Kptfile"), kptfile(name, &mutators, &validators, false));
    if depth < 2 {
        let subs = if depth == 0 {
            rng.below(3)
        } else {
            rng.below(2)
        };
        for s in 0..subs {
            let sub_name = format!("sub{s}");
            let sub_prefix = if prefix.is_empty() {
                sub_name.clone()
            } else {
                format!("{prefix}/{sub_name}")
            };
            package(rng, tree, &sub_prefix, &sub_name, bin, depth + 1, case);
        }
    }
}

fn generate(case: usize, bin: &Path) -> BTreeMap<String, String> {
    let mut rng = Rng::new(case as u64 + 1);
    let mut tree = BTreeMap::new();
    package(&mut rng, &mut tree, "", "pkg", bin, 0, case);
    tree
}

fn write_tree(dir: &Path, tree: &BTreeMap<String, String>) {
    for (rel, text) in tree {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
}

fn read_tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(dir).expect("read_dir") {
            let e = e.expect("entry");
            let ft = e.file_type().expect("file type");
            if ft.is_dir() {
                walk(base, &e.path(), out);
            } else {
                let rel = e.path().strip_prefix(base).expect("prefix").to_owned();
                out.insert(
                    rel.to_string_lossy().into_owned(),
                    std::fs::read(e.path()).expect("read"),
                );
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// Split our root Kptfile into (text without status, status block).
fn split_status(kptfile: &[u8]) -> (Vec<u8>, Option<String>) {
    let text = String::from_utf8_lossy(kptfile).into_owned();
    let found = if text.starts_with("status:") {
        Some(0)
    } else {
        text.find("\nstatus:").map(|i| i + 1)
    };
    match found {
        Some(i) => (text.as_bytes()[..i].to_vec(), Some(text[i..].to_string())),
        None => (kptfile.to_vec(), None),
    }
}

/// A Kptfile as data, for comparing re-encoded ones.
fn as_data(text: &[u8]) -> Option<serde_json::Value> {
    let node = kpt::yaml::parse_one(std::str::from_utf8(text).ok()?).ok()?;
    Some(node.to_value())
}

fn render(bin: &Path, dir: &Path) -> (i32, String) {
    let out = Command::new(bin)
        .args(["fn", "render", "--allow-exec"])
        .arg(dir)
        .env("HOME", dir.parent().expect("parent"))
        .output()
        .expect("render runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn render_matches_installed_kpt() {
    let Some(kpt) = kpt_bin() else {
        eprintln!(
            "SKIPPED: kpt not found at /usr/bin/kpt (or $KPT_BIN). Install kpt 1.0.0-beta.56, \
             e.g. `apt-get install google-cloud-cli-kpt` from the Google Cloud apt repository \
             (https://cloud.google.com/sdk/docs/install#deb), or set KPT_BIN."
        );
        return;
    };
    let Some(python) = python() else {
        eprintln!("SKIPPED: python3 is needed for the generated exec functions");
        return;
    };
    let has_yaml = Command::new(&python)
        .args(["-c", "import yaml"])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !has_yaml {
        eprintln!("SKIPPED: python3 with PyYAML (apt-get install python3-yaml) is needed");
        return;
    }
    let porchctl = PathBuf::from(env!("CARGO_BIN_EXE_porchctl"));
    let tmp = tempfile::tempdir().expect("tempdir");
    let bin = tmp.path().join("bin");
    write_scripts(&bin, &python);

    const CASES: usize = 30;
    let mut failures = Vec::new();
    let mut failed_renders = 0;
    for case in 0..CASES {
        let tree = generate(case, &bin);
        let base = tmp.path().join(format!("case-{case:02}"));
        let kdir = base.join("kpt").join("pkg");
        let pdir = base.join("ours").join("pkg");
        write_tree(&kdir, &tree);
        write_tree(&pdir, &tree);
        let (kcode, kerr) = render(&kpt, &kdir);
        let (pcode, perr) = render(&porchctl, &pdir);
        if kcode != 0 {
            failed_renders += 1;
        }
        let mut problems = Vec::new();
        if (kcode == 0) != (pcode == 0) {
            problems.push(format!("exit code: kpt {kcode}, porchctl {pcode}"));
        }
        let theirs = read_tree(&kdir);
        let mut ours = read_tree(&pdir);
        if let Some(kf) = ours.get("Kptfile").cloned() {
            let (without, status) = split_status(&kf);
            // Writing status re-encodes the root Kptfile as kpt HEAD's struct
            // marshalling does (field order, quoting); beta.56 keeps the function's
            // output text. Same data is the most that can be asked.
            let same_data = theirs
                .get("Kptfile")
                .is_some_and(|t| t != &without && as_data(t) == as_data(&without));
            let without = if same_data {
                theirs["Kptfile"].clone()
            } else {
                without
            };
            ours.insert("Kptfile".into(), without);
            match status {
                Some(s) => {
                    let want = if pcode == 0 {
                        "status: \"True\""
                    } else {
                        "status: \"False\""
                    };
                    if !s.contains("type: Rendered") || !s.contains(want) {
                        problems.push(format!("root Kptfile status lacks Rendered {want}:\n{s}"));
                    }
                }
                None => problems.push("root Kptfile has no status".into()),
            }
        }
        for path in theirs.keys().chain(ours.keys()) {
            let (a, b) = (theirs.get(path), ours.get(path));
            if a != b && !problems.iter().any(|p| p.contains(&format!("`{path}`"))) {
                let show = |x: Option<&Vec<u8>>| {
                    x.map(|v| String::from_utf8_lossy(v).into_owned())
                        .unwrap_or_else(|| "<absent>".into())
                };
                problems.push(format!(
                    "file `{path}` differs\n--- kpt\n{}\n--- porchctl\n{}",
                    show(a),
                    show(b)
                ));
            }
        }
        if !problems.is_empty() {
            let inputs: String = tree.iter().map(|(p, t)| format!("## {p}\n{t}")).collect();
            failures.push(format!(
                "case {case}:\n{}\n== kpt stderr\n{kerr}\n== porchctl stderr\n{perr}\n== input\n{inputs}",
                problems.join("\n")
            ));
        }
    }
    eprintln!(
        "{CASES} packages compared, {failed_renders} of them fail to render (on purpose), {} differ",
        failures.len()
    );
    // The generator must exercise both outcomes.
    assert!(failed_renders > 0 && failed_renders < CASES);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
