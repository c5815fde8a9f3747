//! Round-trip tests for the lossless YAML layer: byte-identical output for
//! unchanged streams over all upstream conformance files, canonical
//! (kpt/yaml.v3) output for kpt-formatted inputs, own fixtures whose
//! expected output was taken from `kpt` 1.0.0-beta.56, and property tests.

use std::path::{Path, PathBuf};

use kpt::yaml::{Document, Node, SeqIndent, emit_node, emit_stream, parse_stream};
use proptest::prelude::*;

#[path = "support/line_breaks.rs"]
mod line_breaks;

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
             of the shared conformance data (kpt fn-render cases, catalog examples)",
            dir.display()
        );
        None
    }
}

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            yaml_files(&p, out);
        } else {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name.ends_with(".yaml") || name.ends_with(".yml") || name == "Kptfile" {
                out.push(p);
            }
        }
    }
}

/// Deliberately invalid fixtures (path suffix, reason).
const INVALID: &[(&str, &str)] = &[(
    "kpt/fn-render/invalid-kptfile/Kptfile",
    "the Kptfile is deliberately not YAML (`kslsls`)",
)];

#[test]
fn conformance_files_round_trip_byte_identical() {
    let Some(dir) = conformance_dir() else { return };
    let mut files = Vec::new();
    yaml_files(&dir, &mut files);
    assert!(
        files.len() > 100,
        "expected many files, found {}",
        files.len()
    );
    let mut failures = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).expect("read conformance file");
        let rel = f
            .strip_prefix(&dir)
            .unwrap_or(f)
            .to_string_lossy()
            .replace('\\', "/");
        match parse_stream(&text) {
            Ok(docs) => {
                if emit_stream(&docs) != text {
                    failures.push(format!("{rel}: output differs"));
                }
            }
            Err(e) if INVALID.iter().any(|(p, _)| rel.ends_with(p)) => {
                eprintln!("expected parse error in {rel}: {e}");
            }
            Err(e) => failures.push(format!("{rel}: {e}")),
        }
    }
    assert!(
        failures.is_empty(),
        "round-trip failures:\n{}",
        failures.join("\n")
    );
}

/// What kyaml normalizes: blank lines, trailing whitespace, the final line
/// break and the indentation of comment lines.
fn kyaml_normalized(s: &str) -> Vec<String> {
    s.lines()
        .map(|l| {
            let t = l.trim_end();
            if t.trim_start().starts_with('#') {
                t.trim_start().to_string()
            } else {
                t.to_string()
            }
        })
        .filter(|l| !l.is_empty())
        .collect()
}

/// Files whose canonical form differs in more than [`kyaml_normalized`]
/// covers; for them only the data must be equal.
const DATA_ONLY: &[(&str, &str)] = &[(
    "fn-failure/starlark-failure-fn.yaml",
    "a `|` block with a trailing space on a line becomes double-quoted in yaml.v3",
)];

fn canonical(docs: &[Document]) -> String {
    docs.iter()
        .map(|d| emit_node(&d.root, d.seq_indent()))
        .collect::<Vec<_>>()
        .join("---\n")
}

#[test]
fn kpt_formatted_inputs_are_canonical() {
    let Some(dir) = conformance_dir() else { return };
    let mut files = Vec::new();
    for sub in ["kpt/fn-render", "catalog/examples"] {
        yaml_files(&dir.join(sub), &mut files);
    }
    files.retain(|f| !f.components().any(|c| c.as_os_str() == ".expected"));
    let (mut canonical_count, mut non_canonical, mut failures) = (0, Vec::new(), Vec::new());
    for f in &files {
        let rel = f
            .strip_prefix(&dir)
            .unwrap_or(f)
            .to_string_lossy()
            .replace('\\', "/");
        let text = std::fs::read_to_string(f).expect("read");
        let Ok(docs) = parse_stream(&text) else {
            assert!(
                INVALID.iter().any(|(p, _)| rel.ends_with(p)),
                "{rel} fails to parse"
            );
            continue;
        };
        let out = canonical(&docs);
        if out == text {
            canonical_count += 1;
            continue;
        }
        non_canonical.push(rel.clone());
        // Canonical output is stable.
        let again = parse_stream(&out).expect("canonical output parses");
        assert_eq!(
            canonical(&again),
            out,
            "{rel}: canonical output is not stable"
        );
        let same_data = docs
            .iter()
            .zip(&again)
            .all(|(a, b)| a.root.to_value() == b.root.to_value());
        let explained = kyaml_normalized(&out) == kyaml_normalized(&text)
            || DATA_ONLY.iter().any(|(p, _)| rel.ends_with(p));
        if explained {
            assert!(same_data, "{rel}: data changed");
        } else {
            failures.push(rel);
        }
    }
    eprintln!(
        "{canonical_count} canonical files; non-canonical (kyaml normalizes them): {non_canonical:#?}"
    );
    assert!(
        canonical_count > 50,
        "too few canonical files: {canonical_count}"
    );
    assert!(
        failures.is_empty(),
        "unexpected canonical differences: {failures:#?}"
    );
}

fn canon(s: &str) -> String {
    canonical(&parse_stream(s).expect("fixture parses"))
}

#[test]
fn fixture_styles_and_structures_round_trip_canonically() {
    // Already in kpt's canonical form: canonical output is the input.
    let kpt_formatted = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: \"quoted\"\n  annotations:\n    a: 'single'\n    b: \"80\"\n    c: yes\ndata:\n  flow: {a: 1, b: [x, y]}\n  empty: {}\n  list: []\n  anchors: &anc\n    k: v\n  ref: *anc\n  tagged: !!str 123\n  custom: !foo bar\n  lit: |-\n    a\n    b\n  keep: |+\n    x\n\n  dq: \"a\\tb\"\n  seq:\n  - - nested\n    - more\n  - k: v\n    k2: v2\n  - ''\n  - ~\n";
    assert_eq!(canon(kpt_formatted), kpt_formatted);
    let docs = parse_stream(kpt_formatted).expect("parses");
    assert_eq!(emit_stream(&docs), kpt_formatted);
}

#[test]
fn fixture_kpt_normalizations() {
    // Expected outputs produced by kpt 1.0.0-beta.56 on these inputs.
    let input = "apiVersion: v1\nkind: B\nmetadata:\n    name: b   \ndata:\n  s: |\n    line1\n    line2\n  # after block at 2\n  t: x\n  u: >-\n    folded\n    text\n  multi: a\n    b c\n# end at 0\n";
    let kpt = "apiVersion: v1\nkind: B\nmetadata:\n  name: b\ndata:\n  s: |\n    line1\n    line2\n  # after block at 2\n  t: x\n  u: >-\n    folded text\n  multi: a b c\n# end at 0\n";
    assert_eq!(canon(input), kpt);

    let comments = "apiVersion: v1\nkind: A\nmetadata:\n  name: a\n  labels:\n    x: y\n    # foot of x at 4\n\n  # foot at 2\n\n# foot at 0\n\n  # head of annotations?\n  annotations:\n    p: q\n\nspec:\n# col0 before nested\n  replicas: 1\n  list:\n  # c1\n  - a\n  # c2\n\n  # c3\n  - b\n  # tail of list\n  other: 1\n# final foot\n";
    let kpt = "apiVersion: v1\nkind: A\nmetadata:\n  name: a\n  labels:\n    x: y\n    # foot of x at 4\n  # foot at 2\n\n  # foot at 0\n\n  # head of annotations?\n  annotations:\n    p: q\nspec:\n  # col0 before nested\n  replicas: 1\n  list:\n  # c1\n  - a\n  # c2\n\n  # c3\n  - b\n  # tail of list\n  other: 1\n# final foot\n";
    assert_eq!(canon(comments), kpt);

    // A document's head comment keeps the blank line after it when kpt writes the
    // file back, and loses it when the resource went through a function (kyaml hands
    // functions the root node): both as kpt 1.0.0-beta.56 writes this stream.
    let heads = "# DH1\n\n# DH2\n\n# H1\n# H2\napiVersion: v1\nkind: A\n---\n# only one\n\napiVersion: v1\nkind: B\n---\n# attached\napiVersion: v1\nkind: C\n";
    assert_eq!(canon(heads), heads);
    let mut docs = parse_stream(heads).expect("parses");
    for d in &mut docs {
        d.root.head_comment = kpt::yaml::collapse_document_head(&d.root.head_comment).into_owned();
    }
    let kpt = "# DH1\n\n# DH2\n# H1\n# H2\napiVersion: v1\nkind: A\n---\n# only one\napiVersion: v1\nkind: B\n---\n# attached\napiVersion: v1\nkind: C\n";
    assert_eq!(canonical(&docs), kpt);
}

#[test]
fn fixture_comments_keep_trailing_blanks() {
    // kpt 1.0.0-beta.56 writes comments with their trailing blanks (go-yaml reads a
    // comment up to the line break); a CRLF file's comments lose only the CR.
    let input = "# head  \na: 1 # line \t\n# foot   \nb:\n  - x # item  \n";
    assert_eq!(canon(input), input);
    let crlf = "k: v\r\na: 1 # line  \r\n# foot \r\nb: 2\r\n";
    assert_eq!(canon(crlf), "k: v\na: 1 # line  \n# foot \nb: 2\n");
}

#[test]
fn fixture_wide_sequences_and_crlf() {
    let wide = "spec:\n  containers:\n    # comment 7\n    - name: nginx\n      ports:\n        - containerPort: 80 # c\n";
    let docs = parse_stream(wide).expect("parses");
    assert_eq!(docs[0].seq_indent(), SeqIndent::Wide);
    assert_eq!(canon(wide), wide);
    let crlf = "a: 1\r\nb:\r\n  - x\r\n";
    let docs = parse_stream(crlf).expect("parses");
    assert_eq!(emit_stream(&docs), crlf);
    // kyaml derives the sequence style after turning CRLF into LF: still wide (kpt
    // 1.0.0-beta.56 keeps a CRLF file's wide sequences).
    assert_eq!(canon(crlf), "a: 1\nb:\n  - x\n");
}

#[test]
fn fixture_markers_bom_and_mixed_streams() {
    let text = "\u{feff}%YAML 1.2\n---\na: 1\n...\n# between\n---\nb: 2\n---\n";
    let mut docs = parse_stream(text).expect("parses");
    assert_eq!(docs.len(), 3);
    assert_eq!(emit_stream(&docs), text);
    docs[1].root.set_string("b", "3");
    // The first document has a directive, so it is re-emitted; the last,
    // unchanged, keeps its (empty) text. The comment between `...` and `---` is the
    // first document's foot, as kpt keeps it (kyaml cuts the stream at `---` only, and
    // go-yaml makes a comment after `...` the document end's).
    assert_eq!(
        emit_stream(&docs),
        "a: 1\n\n# between\n---\nb: \"3\"\n---\n"
    );
    assert!(parse_stream("").expect("empty").is_empty());
}

#[test]
fn fixture_errors_carry_positions() {
    let e = parse_stream("a: 1\nb: 2\na: 3\n").expect_err("duplicate");
    assert_eq!(e.message, "mapping key \"a\" already defined at line 1");
    assert_eq!((e.line, e.column), (3, 1));
    let e = parse_stream("a:\n\t- x\n").expect_err("tab");
    assert_eq!(e.line, 2);
    let e = parse_stream("a: \"open\n").expect_err("unterminated");
    assert_eq!(e.line, 1);
    let e = parse_stream("---\nx: 1\n---\na: b: c\n").expect_err("nested");
    assert_eq!(e.line, 4);
    // Explicit keys (what go-yaml writes for long or multi-line keys) read back.
    let docs = parse_stream("? complex\n: v\n").expect("explicit key");
    assert_eq!(
        docs[0].root.get("complex").and_then(Node::as_str),
        Some("v")
    );
}

fn tricky_string() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z]{1,8}",
        Just("true".to_string()),
        Just("yes".to_string()),
        Just("80".to_string()),
        Just("1.5".to_string()),
        Just("~".to_string()),
        Just(String::new()),
        Just("a: b".to_string()),
        Just("# not a comment".to_string()),
        Just("- item".to_string()),
        Just(" lead".to_string()),
        Just("trail ".to_string()),
        Just("multi\nline\n".to_string()),
        Just("tab\there".to_string()),
        Just("quote'and\"".to_string()),
        Just("*star".to_string()),
        Just("key:".to_string()),
        Just("ünïcode ✓".to_string()),
        Just("emoji 😀".to_string()),
    ]
}

fn node_tree() -> impl Strategy<Value = Node> {
    let leaf = tricky_string().prop_map(Node::string);
    leaf.prop_recursive(4, 32, 5, |inner| {
        prop_oneof![
            // Multi-line and long keys come out as explicit (`? `) keys.
            prop::collection::vec((tricky_string(), inner.clone()), 0..5,).prop_map(|kvs| {
                let mut m = Node::mapping();
                for (k, v) in kvs {
                    m.set(&k, v);
                }
                m
            }),
            prop::collection::vec(inner, 0..5).prop_map(|items| {
                let mut s = Node::sequence();
                if let Some(v) = s.items_mut() {
                    v.extend(items);
                }
                s
            }),
        ]
    })
}

proptest! {
    #[test]
    fn emitted_trees_parse_back_to_the_same_data(tree in node_tree(), wide in any::<bool>()) {
        let seq = if wide { SeqIndent::Wide } else { SeqIndent::Compact };
        let text = emit_node(&tree, seq);
        let docs = parse_stream(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(docs.len(), 1);
        prop_assert_eq!(docs[0].root.to_value(), tree.to_value(), "{}", text);
        prop_assert_eq!(emit_node(&docs[0].root, seq), text);
    }

    #[test]
    fn garbage_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let text = String::from_utf8_lossy(&bytes).into_owned();
        if let Ok(docs) = parse_stream(&text) {
            prop_assert_eq!(emit_stream(&docs), line_breaks::lone_cr_as_lf(&text));
            for d in &docs {
                let _ = d.to_yaml();
            }
        }
    }

    #[test]
    fn yamlish_garbage_never_panics(s in "[ a-c:#\\-\n'\"{}\\[\\],|>&*!?%.~\t]{0,80}") {
        if let Ok(docs) = parse_stream(&s) {
            prop_assert_eq!(emit_stream(&docs), s);
            for d in &docs {
                let _ = d.to_yaml();
            }
        }
    }
}
