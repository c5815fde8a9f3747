//! Hostile input to the parsers: nesting past go-yaml v3's limit, alias
//! bombs, control characters, invalid UTF-8, huge scalars and malformed
//! package content must give typed "invalid-input" errors, never a panic, a
//! stack overflow or unbounded work. Deep cases run on threads with a small
//! stack (smaller than a tokio worker's 2 MiB), so a walker that recursed on
//! the native stack would abort this test binary rather than pass.
//!
//! The property tests at the end keep to about a thousand cases so the whole
//! file runs in seconds; `PROPTEST_CASES=N` runs them longer
//! (docs/hostile-input.md).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use kpt::kptfile::Kptfile;
use kpt::package::PackageFiles;
use kpt::package::resources::{Sources, read_package};
use kpt::render::{RenderOptions, render};
use kpt::resource_list::ResourceList;
use kpt::runtime::RunOptions;
use kpt::runtime::exec::ExecRuntime;
use kpt::yaml::{
    EXCESSIVE_ALIASING, MAX_DEPTH, Node, SeqIndent, VALUE_MAX_DEPTH, emit_node, emit_stream,
    parse_stream,
};
use proptest::prelude::*;

#[path = "support/line_breaks.rs"]
mod line_breaks;

/// Runs `f` on a thread with a 256 KiB stack and returns its result.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    on_stack(256 * 1024, f)
}

fn on_stack<T: Send + 'static>(size: usize, f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(size)
        .spawn(f)
        .expect("spawn")
        .join()
        .expect("no panic")
}

/// The stack of a tokio worker or blocking thread.
const TOKIO_STACK: usize = 2 * 1024 * 1024;

fn depth_error(text: String) -> String {
    on_small_stack(move || match parse_stream(&text) {
        Ok(_) => "accepted".to_string(),
        Err(e) => e.message,
    })
}

const DEPTH_MESSAGE: &str = "exceeded max depth of 10000";

#[test]
fn the_limit_is_go_yaml_v3s() {
    assert_eq!(MAX_DEPTH, 10_000);
}

#[test]
fn deep_flow_sequences_are_refused_with_go_yamls_message() {
    assert_eq!(depth_error("[".repeat(100_000)), DEPTH_MESSAGE);
    assert_eq!(
        depth_error("x: ".to_string() + &"{".repeat(100_000)),
        DEPTH_MESSAGE
    );
    assert_eq!(depth_error("[{a: ".repeat(50_000)), DEPTH_MESSAGE);
}

#[test]
fn deep_block_sequences_are_refused_with_go_yamls_message() {
    assert_eq!(depth_error("- ".repeat(100_000) + "x\n"), DEPTH_MESSAGE);
    assert_eq!(
        depth_error("- ".repeat(MAX_DEPTH + 1) + "x\n"),
        DEPTH_MESSAGE
    );
}

/// Nested block mappings need one more column per level, so a document of
/// 10,001 of them alone is 50 MB; the levels are counted together with the
/// block sequences before them, as go-yaml counts indentation levels.
#[test]
fn deep_block_mappings_are_refused() {
    let nested = |before: usize, levels: usize| {
        let mut text = "- ".repeat(before);
        for i in 0..levels {
            text.push_str(&" ".repeat(if i == 0 { 0 } else { 2 * before + i }));
            text.push_str("a:\n");
        }
        text.push_str(&" ".repeat(2 * before + levels));
        text.push_str("x\n");
        text
    };
    assert_eq!(depth_error(nested(MAX_DEPTH - 100, 101)), DEPTH_MESSAGE);
    assert_eq!(depth_error(nested(MAX_DEPTH - 100, 100)), "accepted");
    assert_eq!(depth_error(nested(0, 1500)), "accepted");
}

/// Documents exactly at the limit are accepted, and every walker of the
/// tree handles them on a small stack: round trip, emit, re-parse, clone,
/// equality, debug output and drop.
#[test]
fn documents_at_the_limit_work_on_a_small_stack() {
    for text in at_the_limit() {
        on_small_stack(move || {
            let docs = parse_stream(&text).expect("at the limit is accepted");
            assert_eq!(emit_stream(&docs), text);
            let root = &docs[0].root;
            let emitted = emit_node(root, SeqIndent::Compact);
            let again = parse_stream(&emitted).expect("emitted text parses");
            assert!(again[0].root == *root || emitted != text);
            assert_eq!(again[0].to_yaml(), emitted);
            let copy = root.clone();
            assert!(copy == *root);
            assert!(format!("{copy:?}").len() > MAX_DEPTH);
        });
    }
}

fn at_the_limit() -> [String; 2] {
    [
        format!("{}{}\n", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH)),
        "- ".repeat(MAX_DEPTH) + "x\n",
    ]
}

/// Plain data is refused past its own, lower limit; data at that limit is
/// fine on a tokio thread's 2 MiB stack, where serde_json's own recursive
/// `Drop`, `PartialEq` and serializer run.
#[test]
fn data_conversion_has_a_limit_safe_for_tokio_threads() {
    let nest = |d: usize| format!("{}{}\n", "[".repeat(d), "]".repeat(d));
    let docs = parse_stream(&nest(VALUE_MAX_DEPTH + 2)).expect("parses");
    let err = docs[0].root.try_to_value().expect_err("too deep for data");
    assert_eq!(err.to_string(), "yaml: exceeded max depth of 1000");
    for text in [nest(VALUE_MAX_DEPTH), "- ".repeat(VALUE_MAX_DEPTH) + "x\n"] {
        on_stack(TOKIO_STACK, move || {
            let docs = parse_stream(&text).expect("parses");
            let value = docs[0].root.try_to_value().expect("converts");
            let back = Node::from_value(&value);
            assert_eq!(back.try_to_value().expect("converts"), value);
            assert!(serde_json::to_string(&value).is_ok());
            drop(value);
        });
    }
}

#[test]
fn trees_built_by_code_deeper_than_the_limit_are_still_safe() {
    on_small_stack(|| {
        let mut n = Node::plain("x");
        for _ in 0..3 * MAX_DEPTH {
            let mut s = Node::sequence();
            s.items_mut().expect("seq").push(n);
            n = s;
        }
        let text = emit_node(&n, SeqIndent::Compact);
        assert!(text.starts_with("- - - "));
        assert_eq!(
            n.try_to_value().map_err(|e| e.to_string()),
            Err("yaml: exceeded max depth of 1000".to_string())
        );
        let copy = n.clone();
        assert!(copy == n);
    });
}

/// `levels` anchors, each a list of `fanout` aliases of the previous one.
fn laughs(levels: usize, fanout: usize) -> String {
    let mut s = "a0: &a0 [lol]\n".to_string();
    for i in 1..=levels {
        let refs = vec![format!("*a{}", i - 1); fanout].join(", ");
        s.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
    }
    s
}

#[test]
fn billion_laughs_is_refused_quickly_wherever_aliases_are_expanded() {
    let small = parse_stream(&laughs(3, 10)).expect("parses");
    assert!(
        small[0].root.try_to_value().is_ok(),
        "a few aliases are fine"
    );

    let text = laughs(9, 10); // 10^9 scalars if expanded
    let start = Instant::now();
    let docs = parse_stream(&text).expect("aliases are not expanded by the parser");
    let err = docs[0].root.try_to_value().expect_err("refused");
    assert_eq!(err.to_string(), format!("yaml: {EXCESSIVE_ALIASING}"));
    // Unchecked conversion is bounded too (null instead of the data).
    assert_eq!(docs[0].root.to_value(), serde_json::Value::Null);
    // Emitting keeps the aliases: output the size of the input.
    assert_eq!(emit_stream(&docs), text);
    assert!(emit_node(&docs[0].root, SeqIndent::Compact).len() < 2 * text.len());

    let kptfile = format!("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: x\n{text}");
    let err = Kptfile::parse(&kptfile).expect_err("refused");
    assert_eq!(err.kind(), "invalid-input");

    let indented: String = text.lines().map(|l| format!("  {l}\n")).collect();
    let rl = format!(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nresults:\n- message: hi\n  tags:\n{indented}"
    );
    let err = ResourceList::from_yaml(&rl).expect_err("refused");
    assert_eq!(err.kind(), "invalid-input");
    assert!(err.to_string().contains(EXCESSIVE_ALIASING), "{err}");
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn control_characters_and_nul_bytes_are_refused() {
    for text in ["a: b\0c\n", "a: \u{1}\n", "# \u{7f}\na: b\n", "a: \u{9b}\n"] {
        let e = parse_stream(text).expect_err(text);
        assert_eq!(e.message, "control characters are not allowed", "{text:?}");
        assert_eq!(e.kind(), "invalid-input");
    }
    let e = parse_stream("a: b\nc: d\0\n").expect_err("nul");
    assert_eq!((e.line, e.column), (2, 5));
    // A lone CR is a line break, as in go-yaml; written back as a line feed.
    let docs = parse_stream("a: b\r\nc:\rd\r").expect_err("d is no key");
    assert_eq!(docs.line, 3, "{docs}");
    let docs = parse_stream("a: b\r\nc:\r  d\re: 'f\r\rg'\r").expect("lone CR");
    assert_eq!(emit_stream(&docs), "a: b\r\nc:\n  d\ne: 'f\n\ng'\n");
    // Tabs, CRLF, a leading BOM and non-ASCII text are fine.
    let ok = "\u{feff}a:\tb\r\nc: ünïcode ✓ 😀\n";
    assert_eq!(emit_stream(&parse_stream(ok).expect("ok")), ok);
}

#[test]
fn malformed_text_gives_errors_with_positions() {
    for (text, message) in [
        ("a: 'unterminated\n", "found unexpected end of stream"),
        ("a: \"unterminated\n", "found unexpected end of stream"),
        (
            "a: x\n\tb: c\n",
            "found a tab character that violates indentation",
        ),
        ("a: [1, 2\n", "did not find expected ',' or ']'"),
        (
            "a: b\na: c\n",
            "mapping key \"a\" already defined at line 1",
        ),
        // Explicit keys count among the keys (an index past them once panicked).
        (
            "? a\n: 1\nb: 2\na: 3\n",
            "mapping key \"a\" already defined at line 1",
        ),
        // Flow mappings are held to the same rule (items of a flow list are not).
        (
            "x: 1\ny: {a: 1,\n  b: 2, a: 3}\n",
            "mapping key \"a\" already defined at line 2",
        ),
    ] {
        let e = parse_stream(text).expect_err(text);
        assert!(e.message.contains(message), "{text:?}: {}", e.message);
        assert!(e.line >= 1 && e.column >= 1);
    }
}

#[test]
fn long_lines_of_properties_are_refused_quickly() {
    let start = Instant::now();
    for text in ["&a ".repeat(200_000) + "x\n", "!t ".repeat(200_000) + "x\n"] {
        let e = parse_stream(&text).expect_err("two anchors or tags on a node");
        assert_eq!(e.message, "did not find expected node content");
    }
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
    let ok = parse_stream("a: &x !!str b\nc: *x\n").expect("one of each");
    assert_eq!(
        ok[0].root.get("a").and_then(|n| n.anchor.as_deref()),
        Some("x")
    );
}

/// yaml.v3 writes a sequence value with an anchor as `key: &a` and then the
/// items at the key's column; that reads back (it was refused).
#[test]
fn anchored_compact_sequences_read_back() {
    let text = "a: &m\n- x\n- y\nb: *m\n";
    let docs = parse_stream(text).expect("parses");
    assert_eq!(
        docs[0].root.try_to_value().expect("data"),
        serde_json::json!({"a": ["x", "y"], "b": ["x", "y"]})
    );
    let mut changed = docs[0].root.clone();
    changed.set("c", Node::string("z"));
    let emitted = emit_node(&changed, SeqIndent::Compact);
    assert_eq!(emitted, "a: &m\n- x\n- y\nb: *m\nc: z\n");
    assert!(parse_stream("- &m\n- x\n").is_ok_and(|d| d[0].root.items().len() == 2));
}

/// libyaml decodes `%XX` in tags and the emitter encodes what is outside its
/// URI set: re-emitting is a fixed point (it used to grow `%` into `%25`).
#[test]
fn tag_escapes_are_decoded() {
    let docs = parse_stream("a: !x%21y%C3%A9 b\n").expect("parses");
    assert_eq!(
        docs[0].root.get("a").and_then(|n| n.tag.as_deref()),
        Some("!x!yé")
    );
    let text = docs[0].to_yaml();
    assert_eq!(parse_stream(&text).expect("parses")[0].to_yaml(), text);
    for bad in ["a: !x%2 b\n", "a: !x%zz b\n", "a: !x%ff b\n"] {
        assert!(parse_stream(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn mappings_with_many_keys_parse_in_linear_time() {
    // Quadratic duplicate checks took minutes here.
    let keys: String = (0..50_000).map(|i| format!("k{i}: v\n")).collect();
    let start = Instant::now();
    let docs = parse_stream(&keys).expect("parses");
    assert_eq!(docs[0].root.entries().len(), 50_000);
    let dup = format!("{keys}k77: again\n");
    let e = parse_stream(&dup).expect_err("duplicate");
    assert_eq!(e.message, "mapping key \"k77\" already defined at line 78");
    let e = parse_stream("a: 1\nb: 2\na: 3\n").expect_err("duplicate");
    assert_eq!(e.message, "mapping key \"a\" already defined at line 1");
    assert!(
        start.elapsed() < Duration::from_secs(15),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn huge_scalars_parse_in_linear_time() {
    let big = "x".repeat(1 << 20);
    let start = Instant::now();
    for text in [
        format!("a: {big}\n"),
        format!("a: '{big}'\n"),
        format!("a: \"{big}\"\n"),
        format!("a: |\n  {big}\n"),
        format!("{big}: b\n"),
    ] {
        let docs = parse_stream(&text).expect("parses");
        assert_eq!(emit_stream(&docs), text);
    }
    assert!(
        start.elapsed() < Duration::from_secs(15),
        "{:?}",
        start.elapsed()
    );
}

/// A package's files as (path, content) pairs.
type Files<'a> = Vec<(&'a str, &'a [u8])>;

fn package(files: &[(&str, &[u8])]) -> PackageFiles {
    let map: BTreeMap<String, Vec<u8>> = files
        .iter()
        .map(|(p, c)| (p.to_string(), c.to_vec()))
        .collect();
    PackageFiles::from_map(map)
}

const KPTFILE: &[u8] = b"apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: p\n";

fn render_error(files: &PackageFiles) -> (String, String) {
    let runtime = ExecRuntime::denied();
    let out = render(
        files,
        &RenderOptions {
            runtime: &runtime,
            run: RunOptions::default(),
            root_name: "p".into(),
            write_status: true,
        },
    );
    let e = out.error.expect("render fails");
    (e.kind().to_string(), e.to_string())
}

/// Every way a package's own content can be wrong comes out as an
/// "invalid-input" error (a server answers 422), in kpt's wording.
#[test]
fn package_content_errors_are_invalid_input() {
    let cm = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n" as &[u8];
    let deep = "a: ".to_string() + &"[".repeat(20_000);
    let cases: Vec<(Files, &str)> = vec![
        (
            vec![("Kptfile", KPTFILE), ("cm.yaml", b"a: [b\n")],
            "cm.yaml",
        ),
        (
            vec![("Kptfile", KPTFILE), ("cm.yaml", b"a: b\0\n")],
            "control characters",
        ),
        (
            vec![("Kptfile", KPTFILE), ("cm.yaml", b"\xff\xfe\x00garbage")],
            "not valid UTF-8",
        ),
        (
            vec![("Kptfile", KPTFILE), ("cm.yaml", deep.as_bytes())],
            DEPTH_MESSAGE,
        ),
        (
            vec![("Kptfile", KPTFILE), ("cm.yaml", b"just: data\n")],
            "resource must have",
        ),
        (
            vec![
                (
                    "Kptfile",
                    b"apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: p\nbogus: 1\n",
                ),
                ("cm.yaml", cm),
            ],
            "field bogus not found in type v1.KptFile",
        ),
        (
            vec![
                ("Kptfile", b"apiVersion: kpt.dev/v1alpha1\nkind: Kptfile\n"),
                ("cm.yaml", cm),
            ],
            "old version",
        ),
        (
            vec![("Kptfile", b"\x00\x01\x02binary"), ("cm.yaml", cm)],
            "Kptfile",
        ),
        (
            vec![("Kptfile", b"kslsls: [\n"), ("cm.yaml", cm)],
            "yaml: line",
        ),
    ];
    for (files, wording) in cases {
        let files = package(&files);
        let (kind, message) = render_error(&files);
        assert_eq!(kind, "invalid-input", "{message}");
        assert!(message.contains(wording), "{wording:?} not in {message:?}");
    }
}

#[test]
fn kptfile_errors_use_kpts_wording() {
    let e = Kptfile::parse("apiVersion: kpt.dev/v1\nkind: Kptfile\na: [\n").expect_err("bad");
    assert_eq!(e.kind(), "invalid-input");
    assert!(
        e.to_string()
            .starts_with("can't be read.\n\nDetails:\nyaml: line "),
        "{e}"
    );
    let deep = format!(
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nx: {}\n",
        "[".repeat(20_000)
    );
    let e = Kptfile::parse(&deep).expect_err("deep");
    assert!(e.to_string().contains(DEPTH_MESSAGE), "{e}");
}

// --- Property tests -------------------------------------------------------

/// `PROPTEST_CASES` for a longer run, else the default that keeps this file
/// within seconds.
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Valid inputs that mutations start from.
const SEEDS: &[&str] = &[
    "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: p # c\n  annotations:\n    a: 'b'\npipeline:\n  mutators:\n    - image: set-labels:v0.1\n      configMap:\n        k: v\n",
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: n\ndata:\n  a: \"1\"\n  b: |\n    x\n    y\n  c: [1, {d: e}]\n---\n# head\napiVersion: v1\nkind: Service\nspec:\n  ports:\n  - port: 80\n",
    "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: &m\n    name: c\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: *m\nresults:\n- message: ok\n  severity: info\n  tags: {a: b}\n",
];

/// Characters that matter to YAML, spliced into seeds.
const SIGNIFICANT: &[&str] = &[
    "[",
    "]",
    "{",
    "}",
    ":",
    ": ",
    "- ",
    "#",
    "&a ",
    "*a",
    "!!str ",
    "'",
    "\"",
    "|",
    ">",
    "\t",
    "\n",
    "  ",
    "---\n",
    "...\n",
    "%YAML 1.2\n",
    "? ",
    ",",
    "\u{feff}",
    "\0",
    "\r",
    "\\",
];

#[derive(Debug, Clone)]
enum Mutation {
    Insert(usize, usize),
    Delete(usize, usize),
    Duplicate(usize, usize),
}

fn mutate(seed: &str, muts: &[Mutation]) -> String {
    let mut s: Vec<char> = seed.chars().collect();
    for m in muts {
        let len = s.len().max(1);
        match *m {
            Mutation::Insert(at, which) => {
                let piece = SIGNIFICANT[which % SIGNIFICANT.len()];
                let at = at % (s.len() + 1);
                s.splice(at..at, piece.chars());
            }
            Mutation::Delete(at, n) => {
                let at = at % len;
                let end = (at + n % 8).min(s.len());
                if at < end {
                    s.drain(at..end);
                }
            }
            Mutation::Duplicate(at, n) => {
                let at = at % len;
                let end = (at + n % 40).min(s.len());
                if at < end {
                    let piece: Vec<char> = s[at..end].to_vec();
                    s.splice(at..at, piece.repeat(1 + n % 3));
                }
            }
        }
    }
    s.into_iter().collect()
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::Insert(a, b)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::Delete(a, b)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::Duplicate(a, b)),
    ]
}

/// Everything the crate does with text it is given; asserts what holds for
/// any input: an accepted stream round-trips byte for byte, its re-emitted
/// (canonical) form parses back and is a fixed point of emitting, and errors
/// are typed. (Data equality does not hold for every odd input, as with
/// yaml.v3: an empty plain key, null, is written `''` in flow context.)
fn exercise(text: &str) -> Result<(), TestCaseError> {
    match parse_stream(text) {
        Ok(docs) => {
            // Lone carriage returns are line breaks, written back as line feeds.
            prop_assert_eq!(emit_stream(&docs), line_breaks::lone_cr_as_lf(text));
            for d in &docs {
                let emitted = d.to_yaml();
                let _ = d.root.try_to_value();
                match parse_stream(&emitted) {
                    Ok(again) if again.len() == 1 => {
                        // With the same sequence indent: deriving it again from
                        // the emitted text may pick another (as kyaml would).
                        prop_assert_eq!(emit_node(&again[0].root, d.seq_indent()), emitted);
                    }
                    other => {
                        return Err(TestCaseError::fail(format!(
                            "re-emitted document does not parse back as one: {other:?}\n{emitted}"
                        )));
                    }
                }
            }
        }
        Err(e) => prop_assert_eq!(e.kind(), "invalid-input"),
    }
    if let Err(e) = Kptfile::parse(text) {
        prop_assert_eq!(e.kind(), "invalid-input");
    }
    if let Err(e) = ResourceList::from_yaml(text) {
        prop_assert_eq!(e.kind(), "invalid-input");
    }
    let files = package(&[("Kptfile", KPTFILE), ("r.yaml", text.as_bytes())]);
    if let Err(e) = read_package(&files, "", &mut Sources::default()) {
        prop_assert_eq!(e.kind(), "invalid-input");
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(1024), ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        let files = package(&[("Kptfile", KPTFILE), ("r.yaml", &bytes)]);
        if let Err(e) = read_package(&files, "", &mut Sources::default()) {
            prop_assert_eq!(e.kind(), "invalid-input");
        }
        exercise(&String::from_utf8_lossy(&bytes))?;
    }

    #[test]
    fn mutated_krm_never_panics(
        seed in 0..SEEDS.len(),
        muts in prop::collection::vec(mutation(), 1..6),
    ) {
        exercise(&mutate(SEEDS[seed], &muts))?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(12) / 64 + 12, ..ProptestConfig::default() })]

    /// Random mixes of flow and block nesting around the limit: accepted or
    /// refused with the depth message, on a small stack.
    #[test]
    fn deep_mixed_nesting_is_bounded(
        openers in prop::collection::vec(prop_oneof![Just("["), Just("{a: "), Just("- "), Just("[- ")], 1..4),
        depth in (MAX_DEPTH - 50)..(MAX_DEPTH + 2000),
    ) {
        let mut text = String::new();
        let mut flow = false;
        for i in 0..depth {
            let o = openers[i % openers.len()];
            // Block indicators cannot follow a flow opener.
            let o = if flow && o == "- " { "[" } else { o };
            flow |= o.starts_with('[') || o.starts_with('{');
            text.push_str(o);
        }
        let message = on_small_stack(move || {
            let r = parse_stream(&text).map(|d| d.len());
            r.map_err(|e| e.message)
        });
        if let Err(m) = message {
            prop_assert!(m == DEPTH_MESSAGE || !m.contains("depth"), "{}", m);
        }
    }
}
