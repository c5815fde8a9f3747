//! Differential test of comment placement against go-yaml v3 itself.
//!
//! kpt reads and writes YAML through go-yaml v3; where a comment lands (head, line or
//! foot, and of which node) decides what `kpt fn render` writes back. This test builds a
//! tiny Go program against Debian's `golang-gopkg-yaml.v3-dev` (the library kyaml forks),
//! feeds it generated documents with comments at many columns and positions, and
//! compares its round trip (`yaml.Unmarshal` into a `yaml.Node`, encode with indent 2)
//! with ours (`parse_stream`, `emit_node` with wide sequences, which is what indent 2
//! gives there).
//!
//! The parser ports go-yaml's comment scanner and the parser's event rules (see
//! `src/yaml/parse/gap.rs`); the test holds the share of differing generated documents
//! to a ceiling (a ratchet, printed each run with the first differences, now none), and
//! requires the curated cases below to agree exactly.
//!
//! Without `go` and the yaml.v3 sources (`apt-get install golang-go
//! golang-gopkg-yaml.v3-dev`, which `.ci/setup.sh` does) the test says so and passes
//! as skipped.

#[path = "support/go_oracle.rs"]
mod go_oracle;
#[path = "support/go_yaml.rs"]
mod go_yaml;
use go_yaml::ours;

#[path = "support/rng.rs"]
mod rng;
use rng::Rng;

/// One of `options`.
fn pick(rng: &mut Rng, options: &[usize]) -> usize {
    options[rng.pick(options.len())]
}

fn comment(lines: &mut Vec<String>, col: usize, tag: &str, n: &mut usize) {
    lines.push(format!("{}# {tag}{n}", " ".repeat(col)));
    *n += 1;
}

fn gen_map(rng: &mut Rng, ind: usize, depth: usize, lines: &mut Vec<String>, n: &mut usize) {
    for _ in 0..1 + rng.next() % 2 {
        if rng.chance(30) {
            let col = pick(rng, &[0, ind, ind + 2]);
            comment(lines, col, "c", n);
            if rng.chance(30) {
                lines.push(String::new());
            }
        }
        let key = format!("k{n}");
        *n += 1;
        if depth < 2 && rng.chance(50) {
            lines.push(format!("{}{key}:", " ".repeat(ind)));
            if rng.chance(30) {
                gen_seq(rng, ind, depth + 1, lines, n);
            } else {
                gen_map(rng, ind + 2, depth + 1, lines, n);
            }
        } else {
            let line = if rng.chance(20) { " # l" } else { "" };
            lines.push(format!("{}{key}: v{line}", " ".repeat(ind)));
        }
        if rng.chance(30) {
            if rng.chance(30) {
                lines.push(String::new());
            }
            let col = pick(rng, &[0, 2, 4, 6]);
            comment(lines, col, "f", n);
            if rng.chance(30) {
                lines.push(String::new());
            }
        }
    }
}

fn gen_seq(rng: &mut Rng, ind: usize, depth: usize, lines: &mut Vec<String>, n: &mut usize) {
    for _ in 0..1 + rng.next() % 2 {
        if rng.chance(30) {
            let col = pick(rng, &[0, ind, ind + 2]);
            comment(lines, col, "s", n);
        }
        if depth < 2 && rng.chance(40) {
            lines.push(format!("{}- a: 1", " ".repeat(ind)));
            gen_map(rng, ind + 2, depth + 1, lines, n);
        } else {
            lines.push(format!("{}- item", " ".repeat(ind)));
        }
    }
}

/// Cases whose placement was ported rule by rule; each must agree with go-yaml exactly.
const CURATED: &[&str] = &[
    // A comment closing a sequence item's mapping stays with that item.
    "items:\n- apiVersion: v1\n  data:\n    k: v\n  # foot comment\n- apiVersion: v2\n",
    // Dedented before the next key: a foot of the prior token, the innermost node.
    "data:\n  sub:\n    k: v\n  # f1\nother: 1\n",
    // At the end: by column.
    "data:\n  sub:\n    k: v\n# f\n",
    "data:\n  sub:\n    k: v\n  # f\n",
    // After a blank line at the end: the document's foot.
    "data:\n  sub:\n    k: v\n\n# f\n",
    "data:\n  sub:\n    k: v\n# f1\n\n# f2\n",
    "k0: v\n\n    # f1\n",
    "l:\n- a\n\n# f\n",
    // An indentless sequence opens no level: a column-0 comment after its mapping item
    // belongs to the outer mapping.
    "k0:\n# s1\n- a: 1\n  k2: v\n  k3: v\n# f4\n",
    // ...but after a scalar item it stays with the item.
    "k0:\n  k1:\n  # s2\n  - item\n  - item\n  # f3\n",
    // A merge key is written back with its tag.
    "base: &b\n  x: 1\nd:\n  <<: *b\n  y: 3\n",
    // A document head comment keeps its blank line.
    "# header\n\n# second\napiVersion: v1\nkind: A\n",
    // A document closed by `...`: the comment block right after the marker (up to a
    // blank line) is the document's foot; without one, the block that would have been
    // a column-0 token's head is; comments after a blank line are lost.
    "a: 1\nb:\n  c: 2\n...\n# between\n",
    "a: 1\nb:\n  c: 2\n...\n# between1\n\n# between2\n",
    "a: 1\nb:\n  c: 2\n# foot of a\n...\n",
    "a: 1\nb:\n  c: 2\n  # indented between\n...\n  # indented between2\n",
    "a: 1\nb:\n  c: 2\n# foot of a\n\n# foot2\n...\n# after\n",
    "a: 1\n...\n\n# after blank\n",
    "a: 1\nb:\n  c: 2\n# foot of a\n...\n# after\n",
    "a: 1\nb:\n  c: 2\n\n# blank then\n...\n",
    "a: 1\nb:\n  c: 2\n  # ind\n# col0\n...\n",
    "a: 1\nb:\n  - x\n# s\n...\n",
    "# head\n\na: 1\n...\n# after\n",
    "a: 1\n  # c\n...\n",
    "- a\n- b\n# c\n...\n",
    "a: |\n  text\n...\n# e\n",
    "a: 1\nb:\n  c:\n    d: 1\n  # mid\n...\n",
    // go-yaml's scanner moves a closing block's end before the first comment of the gap
    // at that block's indentation (`yaml_parser_unroll_indent`): that block's mapping
    // end takes the comments before it, as a foot of its last key.
    "a: 1\nb:\n  c:\n    d: 1\n    # deep\n  # mid\ne: 1\n",
    "a: 1\nb:\n  c:\n    d: 1\n  # mid\n# top\n",
    "k0:\n# c1\n  k2:\n# c3\n    k4: v\n      # f5\n# f6\n  # c7\n\nk8:\n# c9\n  k10: v\n",
    // A dedented block cut off by a blank line is unfolded at its own position: after a
    // `key:` it waits for the first key's event (`yaml_parser_scan_comments`).
    "k0:\n  k1:\n# c2\n\n    k3: v\n# f4\n",
    // The stream's first line has no foot line unless a plain scalar's scan ran past it.
    "k0: v # l\n    # f1\n",
    "k0: v # l\n# c1\n\nk2: v\n",
    // A mapping end's foot replaces its last key's; a later key's feet go to the key
    // before it (`parser.mapping()`).
    "a:\n  b: 1\n    # x\n\n  # y\nc: 1\n",
    "a:\n  b: 1\n  # f\n\n  # g\nc: 1\n",
    // A block sequence's end takes no comments: feet wait for the next event, the next
    // item's or the document end's (which then drops the head).
    "- - a\n # x\n\n- b\n",
    "- - a\n # x\n\n# y\n",
    // Blank lines a block scalar takes still keep the next comment from being a foot.
    "k: |\n  lit\n\n# t\n",
    // A comment after a lone `-` is the first line of the gap that follows.
    "- # l1\n      # h1\n\n     # h2\n  k3: 1\n",
    "k0:\n  k10:\n  - # l11\n  # h11\n # h12\n    k13: \"d\"\n      # f14\n   # f15\n    k16: v\n",
    // After an explicit `---` (a stream's first line) the leading comments are all the
    // first key's head: no document head, no blank line kept after them.
    "---\n# d0\n\nk1: q\n",
    "---\n# d0\n\n# d1\nk1: q\n",
    "--- # c\n# d0\n\nk1: q\n",
    "---\n\n# d0\n\nk1: q\n",
    // Comments keep their trailing blanks (go-yaml reads a comment to the line break).
    "# doc  \n\na: 1 # line   \n# foot \t\n\n# head \nb: # lc \n  - x # item  \n  # tail \n",
    // kpt's recorded normalisation fixture (yaml_roundtrip.rs).
    "apiVersion: v1\nkind: A\nmetadata:\n  name: a\n  labels:\n    x: y\n    # foot of x at 4\n\n  # foot at 2\n\n# foot at 0\n\n  # head of annotations?\n  annotations:\n    p: q\n\nspec:\n# col0 before nested\n  replicas: 1\n  list:\n  # c1\n  - a\n  # c2\n\n  # c3\n  - b\n  # tail of list\n  other: 1\n# final foot\n",
];

/// The share of generated documents allowed to differ, in percent (measured: 0 of
/// 1,500).
const CEILING_PERCENT: usize = 0;

#[test]
fn comments_land_where_go_yaml_puts_them() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let Some(bin) = go_yaml::oracle(tmp.path(), "goyaml") else {
        return;
    };
    go_yaml::assert_agree(&bin, CURATED);

    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let docs: Vec<String> = (0..1500)
        .map(|_| {
            let mut lines = Vec::new();
            let mut n = 0;
            gen_map(&mut rng, 0, 0, &mut lines, &mut n);
            lines.join("\n") + "\n"
        })
        .collect();
    let answers = go_oracle::answers(&bin, &docs);
    let mut compared = 0;
    let mut differing = Vec::new();
    for (doc, go) in docs.iter().zip(&answers) {
        if go.starts_with("ERR") {
            continue;
        }
        compared += 1;
        let mine = ours(doc);
        if &mine != go {
            differing.push((doc, go, mine));
        }
    }
    eprintln!(
        "{} of {compared} generated documents differ from go-yaml",
        differing.len()
    );
    for (doc, go, mine) in differing.iter().take(3) {
        eprintln!("--- input\n{doc}--- go-yaml\n{go}--- ours\n{mine}");
    }
    assert!(compared > 1000, "only {compared} documents parsed");
    assert!(
        differing.len() * 100 <= compared * CEILING_PERCENT,
        "{} of {compared} documents differ (ceiling {CEILING_PERCENT} %)",
        differing.len()
    );
}

/// Empty scalars (`-`, `key:`, properties with no content) and streams that end
/// without a line break, each rule checked against go-yaml.
const EMPTY_AND_ENDS: &[&str] = &[
    // go-yaml's empty scalar takes no comments: the head before it waits for the next
    // event (an item, a key, a nested collection's start)...
    "- a\n# h\n- !!str\n- b\n",
    "- a\n# h\n-\n- b\n",
    "k:\n  # h\n  - &x\n  - b\n",
    "- a\n# h\n- !!str\n# g\n- - b\n",
    "# h\n- !!str\n- c: d\n",
    "k:\n- a\n# h\n- !!str\nj: 1\n",
    // ...is dropped by a block mapping's end...
    "m:\n  x:\n    - a\n    # h\n    - !!str\nj: 1\n",
    // ...and is the document's foot at its end, unless feet are there already.
    "- a\n# h\n- !!str\n",
    "- a\n# h\n- !!str\n\n# f\n",
    "- a\n# h\n- !!str\n# f\n",
    // The line comment of properties with no content goes to the next event that
    // takes comments; a mapping's end takes it as the mapping's own.
    "- a\n- !!str # l\n- b\n",
    "k0:\n  k1:\n  - !!str # e\n  - !!str # e\nk2: v\n",
    "k0:\n  k1:\n  - !!str # e\n  # f\nk2: v\n",
    // A tab before an inline comment is a blank.
    "s: v\t# c\n",
    "l:\n- a\t# c\n",
    "s:\t# c\n  a: b\n",
    "s: 'v'\t# c\n",
    // Explicit keys (`? `), which go-yaml writes for a key longer than 128 characters
    // or one that is no scalar, read back.
    "? a\n: b\n",
    "a:\n  ? x\n  : y\n  z: 1\n",
    "? a\n",
    "? - a\n  - b\n: c\n",
    "? a\n: - b\n  - c\n",
    "? |\n  lit\n: v\n",
    "- ? a\n  : b\n",
    "? kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk\n: v\n",
    "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk: v\n",
    "a: ? b\n",
    // The comment after an empty entry's `-` is the first line of the gap after it.
    "- a\n- # d\n- b\n",
    "- a\n- # d\n\n# c\n- b\n",
    "- a\n- # d\n# c\n",
    "k:\n- # d\n\n\n",
    // Without a final line break, go-yaml's column stays on the last line: the
    // blocks at or left of it close only at the stream's end, after the comments.
    "a:\n  b: 1\n# c",
    "a:\n  b:\n    c: 1\n  # d\n# e",
    "a:\n  b:\n    c: 1\n  # d",
    "a:\n- 1\n# d",
    "a:\n  - x: 1\n    # d",
];

fn empty_map(rng: &mut Rng, ind: usize, depth: usize, lines: &mut Vec<String>, n: &mut usize) {
    for _ in 0..1 + rng.next() % 3 {
        if rng.chance(25) {
            comments_at(rng, ind, lines, n);
        }
        let key = format!("{}k{n}:", " ".repeat(ind));
        *n += 1;
        match rng.next() % 100 {
            0..30 if depth < 3 => {
                lines.push(key);
                empty_map(rng, ind + 2, depth + 1, lines, n);
            }
            30..55 if depth < 3 => {
                lines.push(key);
                let at = if rng.chance(50) { ind } else { ind + 2 };
                empty_seq(rng, at, depth + 1, lines, n);
            }
            55..65 => {
                let rest = ["", " !!str", " &a", " !!null", " # l"][rng.pick(5)];
                lines.push(format!("{key}{rest}"));
            }
            _ => lines.push(format!("{key} v")),
        }
    }
}

fn empty_seq(rng: &mut Rng, ind: usize, depth: usize, lines: &mut Vec<String>, n: &mut usize) {
    for _ in 0..1 + rng.next() % 4 {
        if rng.chance(30) {
            comments_at(rng, ind, lines, n);
        }
        let dash = format!("{}-", " ".repeat(ind));
        match rng.next() % 100 {
            0..30 if depth < 3 => {
                lines.push(format!("{dash} k{n}: v"));
                *n += 1;
                if rng.chance(50) {
                    lines.push(format!("{}j{n}: w", " ".repeat(ind + 2)));
                    *n += 1;
                }
            }
            30..40 if depth < 3 => {
                let rest = ["", " # d"][rng.pick(2)];
                lines.push(format!("{dash}{rest}"));
                empty_seq(rng, ind + 2, depth + 1, lines, n);
            }
            40..70 => {
                let rest = ["", " !!str", " &x", " # d", " !!str # e"][rng.pick(5)];
                lines.push(format!("{dash}{rest}"));
            }
            _ => {
                lines.push(format!("{dash} s{n}"));
                *n += 1;
            }
        }
    }
}

fn comments_at(rng: &mut Rng, ind: usize, lines: &mut Vec<String>, n: &mut usize) {
    for _ in 0..1 + rng.next() % 2 {
        if rng.chance(20) {
            lines.push(String::new());
        } else {
            let col = pick(rng, &[0, ind, ind, ind + 2]);
            comment(lines, col, "c", n);
        }
    }
}

#[test]
fn empty_scalars_and_unterminated_ends_as_go_yaml() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let Some(bin) = go_yaml::oracle(tmp.path(), "goyaml") else {
        return;
    };
    go_yaml::assert_agree(&bin, EMPTY_AND_ENDS);
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let docs: Vec<String> = (0..1500)
        .map(|_| {
            let (mut lines, mut n) = (Vec::new(), 0);
            if rng.chance(50) {
                empty_map(&mut rng, 0, 0, &mut lines, &mut n);
            } else {
                empty_seq(&mut rng, 0, 0, &mut lines, &mut n);
            }
            if rng.chance(50) {
                comments_at(&mut rng, 0, &mut lines, &mut n);
            }
            // A third of the streams end without a line break.
            let end = if rng.chance(33) { "" } else { "\n" };
            lines.join("\n") + end
        })
        .collect();
    let differing = go_yaml::differing(&bin, &docs);
    assert!(
        differing.is_empty(),
        "{} of {} generated documents differ from go-yaml",
        differing.len(),
        docs.len()
    );
}

/// Content left after a node on its line, in each block context, worded and placed as
/// go-yaml reports it: its scanner's errors for what cannot follow a node there (`- `,
/// `? `, `: `, `@`, a plain scalar before a `:`), its parser's wanting the next key or
/// `-` (named at the collection's start) for any other token, and a `#` right after a
/// quote or bracket read as a comment. Left out: a flow collection or alias before
/// ` : ` or where a key is due (go-yaml makes it a key, a flow one complex), and the
/// root (go-yaml reads no further than the first document's node, so it never reaches
/// the error).
#[test]
fn content_after_a_node_on_its_line_as_go_yaml() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let Some(bin) = go_yaml::oracle(tmp.path(), "goyaml") else {
        return;
    };
    let contexts = [
        "z: &a 0\na: 1\nb: X\n",
        "z: &a 0\nl:\n- 1\n- X\n",
        "z: &a 0\na:\n  b: X\n",
        "z: &a 0\nl:\n- a: X\n",
        "z: &a 0\na:\n  X\n",
        "z: &a 0\na: 1\nX\n",
    ];
    let nodes = ["'x'", "\"x\"", "[1]", "{c: 1}", "*a", "&b 'x'"];
    let junk = [
        "y", "y: z", "'z'", "[2]", "*a", "- q", "#c", ": z", "? q", "&c", "!t", "@x", "y:z", "|",
        "y #c",
    ];
    let mut docs = Vec::new();
    for c in contexts {
        for n in nodes {
            for j in junk {
                let key_position = c.ends_with("\nX\n");
                if (j == ": z" || key_position) && n.starts_with(['[', '{', '*']) {
                    continue;
                }
                let x = if j == "#c" {
                    format!("{n}{j}")
                } else {
                    format!("{n} {j}")
                };
                docs.push(c.replace('X', &x));
            }
        }
    }
    let differing = go_yaml::differing(&bin, &docs);
    assert!(
        differing.is_empty(),
        "{} of {} documents differ from go-yaml",
        differing.len(),
        docs.len()
    );
}
