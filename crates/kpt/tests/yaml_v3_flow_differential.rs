//! Differential test of flow collections (`[a, b]`, `{k: v}`) and of node properties
//! (anchors, tags) against go-yaml v3 itself: where the comments around them land and
//! how they are written back, which texts parse, and the error go-yaml gives for those
//! that do not.
//!
//! kpt writes every resource file back through go-yaml, so a comment inside a
//! multi-line flow collection comes back where go-yaml's scanner and parser put it
//! (`src/yaml/parse/flow_comments.rs` ports them). The test builds a tiny Go program
//! against Debian's `golang-gopkg-yaml.v3-dev`, feeds it curated cases and generated
//! documents (flow collections nested in block ones, with comments, blank lines,
//! anchors, tags, aliases, explicit keys and empty nodes at random places), and
//! requires our round trip (or error text) to equal its answer.
//!
//! Without `go` and the yaml.v3 sources the test says so and passes as skipped.

#[path = "support/go_oracle.rs"]
mod go_oracle;
#[path = "support/go_yaml.rs"]
mod go_yaml;
use go_yaml::ours;

#[path = "support/rng.rs"]
mod rng;
use rng::Rng;

/// One rule each, checked against go-yaml.
const CURATED: &[&str] = &[
    // A comment after an item's `,` is that item's line comment.
    "args: [\n  \"--a\", # first\n  \"--b\"\n]\n",
    // Comment lines before an item are its head; after the last item, its foot.
    "args: [\n  # head of a\n  \"--a\",\n  \"--b\", # line b\n]\nx: 1\n",
    "a: [1, 2\n  # before close\n  ]\n",
    "a: [\n  1,\n  # lonely before close\n]\n",
    // A plain scalar's scan runs past its line's end: no line comment then, a foot.
    "a: [1, 2 # after two\n  ]\n",
    "a: [x\n  # c\n  , y]\n",
    // A comment after `[` belongs to the collection's start, whose line comment go-yaml
    // drops.
    "a: [ # c\n  1, 2 ]\nb: 1\n",
    // Nested: after an inner `]` and its `,`, the inner collection's line comment.
    "a: [1, [x, y], # after nested\n  3] # after close\n# foot\n",
    // In a mapping: after `:` the value's line comment; heads of keys.
    "m: {\n  # head k\n  k: v, # line k\n  j: w\n}\n",
    "a: {\n  k: # after colon\n    v\n}\n",
    "a: {\n  k: v # no comma\n}\n",
    // Inside a block sequence, dedented comments.
    "a:\n  - [1,\n     # inside nested block\n     2]\n  - z\n",
    "s: [a,\n  # c1\n  # c2\n  b,\n  c]\n",
    "s: [a,\n# dedented\n  b]\n",
    "s: [a,\n  # f1\n\n  # f2\n]\n",
    // Plain scalars in flow: `:` ends one only before a blank; `?` ends one.
    "m: {a:1, b: 2}\n",
    "s: [a:, b]\n",
    "s: [a?b]\n",
    // Empty nodes: an anchor or tag alone is one; nothing at all is an error.
    "s: [&x , !!str , b]\n",
    "s: [a, , b]\n",
    "s: [: a]\n",
    "m: {: a}\n",
    // Explicit keys; go-yaml skips the token after an empty one in a sequence.
    "s: [? a, ? b : c]\n",
    "s: [? , a]\n",
    "s: [? : a]\n",
    "m: {? , a: b}\n",
    // An implicit key must be on one line.
    "s: [\"a\"\n  : b]\n",
    "m: {a\n  : b}\n",
    "m: {? a\n  : b}\n",
    // Anchor names are letters, digits, `_` and `-`, followed by a blank or indicator.
    "a: &x-1_y 1\nb: [*x-1_y]\n",
    // An unknown alias before a syntax error is the error reported.
    "a: [*nope, b c d: e: f]\n",
    "a: [b c d: e: f, *nope]\n",
    "a: &x.y 1\n",
    "a: [*A:*A]\n",
];

fn com(n: &mut usize) -> String {
    *n += 1;
    format!("# c{n}")
}

/// A line break, maybe blank and comment lines at various columns, then indentation.
fn gap(rng: &mut Rng, ind: usize, n: &mut usize) -> String {
    let mut out = String::new();
    for _ in 0..[1, 1, 1, 2, 3][rng.pick(5)] {
        let k = rng.next() % 100;
        if k < 25 {
            out.push('\n');
        } else {
            let col = [0, 1, 2, ind, ind + 2, ind + 4][rng.pick(6)];
            out.push('\n');
            out.push_str(&" ".repeat(col));
            out.push_str(&com(n));
            if k >= 80 {
                out.push('\n');
            }
        }
    }
    out.push('\n');
    out.push_str(&" ".repeat(ind + [0, 2, 4][rng.pick(3)]));
    out
}

fn sep(rng: &mut Rng, ind: usize, n: &mut usize) -> String {
    match rng.next() % 100 {
        0..30 => " ".into(),
        30..50 => format!(" {}\n{}", com(n), " ".repeat(ind + 2)),
        50..80 => gap(rng, ind, n),
        _ => String::new(),
    }
}

fn scalar(rng: &mut Rng) -> &'static str {
    [
        "a", "b1", "\"q\"", "'s'", "10", "x y", "*A", "!!str t", "&B u", "",
    ][rng.pick(10)]
}

fn node(rng: &mut Rng, depth: usize, ind: usize, n: &mut usize) -> String {
    if depth < 3 && rng.chance(25) {
        flow(rng, depth + 1, ind + 2, n)
    } else {
        scalar(rng).to_string()
    }
}

fn flow(rng: &mut Rng, depth: usize, ind: usize, n: &mut usize) -> String {
    let seq = rng.chance(55);
    let mut out = String::new();
    if rng.chance(5) {
        out.push_str("&F ");
    }
    out.push(if seq { '[' } else { '{' });
    let items = rng.pick(5);
    if rng.chance(50) {
        out.push_str(&sep(rng, ind, n));
    }
    for i in 0..items {
        let mut v = if seq {
            match rng.next() % 100 {
                0..70 => node(rng, depth, ind, n),
                70..85 => {
                    let k = node(rng, depth, ind, n);
                    let s = sep(rng, ind, n);
                    format!("{k}:{s}{}", node(rng, depth, ind, n))
                }
                _ => {
                    let k = node(rng, depth, ind, n);
                    let s = sep(rng, ind, n);
                    format!("? {k} :{s}{}", node(rng, depth, ind, n))
                }
            }
        } else {
            let key = if rng.chance(30) {
                format!("\"k{i}\"")
            } else {
                format!("k{i}")
            };
            match rng.next() % 100 {
                0..80 => {
                    let s = sep(rng, ind, n);
                    format!("{key}:{s}{}", node(rng, depth, ind, n))
                }
                80..90 => key,
                _ => {
                    let s = sep(rng, ind, n);
                    format!("? {key}{s}: {}", node(rng, depth, ind, n))
                }
            }
        };
        if v.trim().is_empty() && seq {
            v = "z".into();
        }
        out.push_str(&v);
        if i + 1 < items || rng.chance(30) {
            let before = match rng.pick(3) {
                0 => String::new(),
                1 => " ".into(),
                _ => sep(rng, ind, n),
            };
            out.push_str(&before);
            out.push(',');
        }
        out.push_str(&sep(rng, ind, n));
    }
    out.push(if seq { ']' } else { '}' });
    out
}

fn document(rng: &mut Rng) -> String {
    let mut n = 0;
    // Without the anchor, an alias is an error, reported where go-yaml reaches it.
    let mut s = if rng.chance(85) { "A: &A 1\n" } else { "" }.to_string();
    match rng.next() % 100 {
        0..40 => s += &format!("key: {}", flow(rng, 0, 0, &mut n)),
        40..60 => {
            s += &format!("list:\n  - {}", flow(rng, 0, 4, &mut n));
            if rng.chance(50) {
                s += "\n  - z";
            }
        }
        60..80 => s += &format!("m:\n  inner: {}", flow(rng, 0, 2, &mut n)),
        _ => s += &format!("l:\n- {}", flow(rng, 0, 2, &mut n)),
    }
    if rng.chance(30) {
        s += &format!(" {}", com(&mut n));
    }
    if rng.chance(40) {
        s += &format!("\n{}{}", " ".repeat([0, 2][rng.pick(2)]), com(&mut n));
    }
    if rng.chance(60) {
        s += "\nafter: 2";
    }
    s + "\n"
}

#[test]
fn flow_collections_read_and_write_as_go_yaml_does() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let Some(bin) = go_yaml::oracle(tmp.path(), "goyamlflow") else {
        return;
    };
    let mut curated: Vec<String> = CURATED.iter().map(|s| s.to_string()).collect();
    // Long collections, whose tokens before the first comment are not all kept.
    let many = "a, ".repeat(150);
    curated.push(format!(
        "k: [{many}b: c, # after the pair\n  d, # d\n  e]\n"
    ));
    let keys: String = (0..100).map(|i| format!("p{i}: 1, ")).collect();
    curated.push(format!("k: {{{keys}x: [{many}# head of y\n    y]}}\n"));
    for (doc, go) in curated.iter().zip(go_oracle::answers(&bin, &curated)) {
        assert_eq!(ours(doc), go, "input:\n{doc}");
    }

    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let docs: Vec<String> = (0..2000).map(|_| document(&mut rng)).collect();
    let answers = go_oracle::answers(&bin, &docs);
    let (mut parsed, mut refused) = (0, 0);
    let mut differing = Vec::new();
    for (doc, go) in docs.iter().zip(&answers) {
        if go.starts_with("ERR") {
            refused += 1;
        } else {
            parsed += 1;
        }
        let mine = ours(doc);
        if &mine != go {
            differing.push((doc, go, mine));
        }
    }
    eprintln!(
        "{} of {} generated documents differ from go-yaml ({parsed} parsed, {refused} refused)",
        differing.len(),
        docs.len()
    );
    for (doc, go, mine) in differing.iter().take(3) {
        eprintln!("--- input\n{doc}--- go-yaml\n{go}--- ours\n{mine}");
    }
    assert!(
        parsed > 1200 && refused > 100,
        "{parsed} parsed, {refused} refused"
    );
    assert!(differing.is_empty(), "{} documents differ", differing.len());
}

/// Properties alone on their line, each checked against go-yaml: their line comment and
/// the feet right below them wait for the next event that takes comments (a key, a
/// scalar; a flow collection drops them), and a head before a `-` followed by
/// properties goes to the item's first event rather than the item.
const PROPERTIES: &[&str] = &[
    "a: &x # l\n  # c\n  b: 1\n",
    "l:\n- !!map # t\n  # c\n\n  k: v\n# f\n",
    "- &x # l\n  - 1\n",
    "a: &x # l\n  [1, 2]\n",
    "a: &x # l\n  \"q\"\n",
    "a: &x # l\n\n  # h\n  b: 1\n",
    "k0: !!map\n  k1: &b !!str # c86\n  k2: v # c87\n",
    "k0: &a1 # c109\n# c110\nk1: &a0\n  - !!map\n    - item\n",
    "k1: !!map\n  - \"q\"\n# c138\n  - !!map\n      # c139\n    k0: v\nk2: 1\n",
    "k0: &a2\n  # c776\n  - !!map\n# c777\n    k0: v\n",
    "a: !!str # l\n  # c\n  value\n",
    "a:\n  &x\n  # c\n  b: 1\n",
    // A named tag handle stands for its `%TAG` prefix; undeclared, it is refused.
    "%TAG !e! tag:e.com,2000:\n---\ns: !e!f v\n",
    "s: !e!f v\n",
    "a: 1\nb: !e!f\n",
    "a: [!e!x 1]\n",
    "a: !!str 1\nb: !x 2\nc: !<tag:x> 3\n",
    // A key's line comment before a flow collection on the next line is never written
    // (go-yaml's emitter compares a flow mapping's style with the flow sequence style).
    "k0: # c3\n  {x: 1}\n",
    "k0: # c3\n  [x]\n",
    "a: &b # c3\n  k0: {x: 1}\n",
    "a: &b # c3\n  k0: !!seq\n    # c4\n    {x: 1}\n",
];

fn props(rng: &mut Rng) -> &'static str {
    ["&a1", "&a2", "!!map", "!!seq", "!!str", "&b !!str", "!t"][rng.pick(7)]
}

fn comments(rng: &mut Rng, lines: &mut Vec<String>, ind: usize, n: &mut usize) {
    for _ in 0..[0, 0, 1, 2][rng.pick(4)] {
        if rng.chance(30) {
            lines.push(String::new());
        } else {
            let col = [0, ind, ind + 2, ind.saturating_sub(2)][rng.pick(4)];
            lines.push(format!("{}{}", " ".repeat(col), com(n)));
        }
    }
}

fn line_comment(rng: &mut Rng, pct: u64, n: &mut usize) -> String {
    if rng.chance(pct) {
        format!(" {}", com(n))
    } else {
        String::new()
    }
}

fn prop_value(
    rng: &mut Rng,
    lines: &mut Vec<String>,
    ind: usize,
    depth: usize,
    prefix: &str,
    n: &mut usize,
) {
    let p = if rng.chance(60) { props(rng) } else { "" };
    let lc = line_comment(rng, 40, n);
    if !p.is_empty() && rng.chance(60) {
        lines.push(format!("{prefix} {p}{lc}"));
        comments(rng, lines, ind, n);
        match rng.next() % 100 {
            0..40 if depth < 3 => prop_map(rng, lines, ind, depth + 1, n),
            40..60 if depth < 3 => prop_seq(rng, lines, ind, depth + 1, n),
            60..80 => {
                let v = ["v", "\"q\"", "[1, 2]", "{x: 1}"][rng.pick(4)];
                let lc = line_comment(rng, 30, n);
                lines.push(format!("{}{v}{lc}", " ".repeat(ind)));
            }
            _ => {}
        }
    } else {
        let v = ["v", "1", "\"q\"", "[a]"][rng.pick(4)];
        let sp = if p.is_empty() { "" } else { " " };
        lines.push(format!("{prefix}{sp}{p} {v}{lc}"));
    }
}

fn prop_map(rng: &mut Rng, lines: &mut Vec<String>, ind: usize, depth: usize, n: &mut usize) {
    for i in 0..1 + rng.pick(3) {
        comments(rng, lines, ind, n);
        let prefix = format!("{}k{i}:", " ".repeat(ind));
        if depth < 3 && rng.chance(50) {
            prop_value(rng, lines, ind + 2, depth, &prefix, n);
        } else {
            let lc = line_comment(rng, 30, n);
            lines.push(format!("{prefix} v{lc}"));
        }
    }
}

fn prop_seq(rng: &mut Rng, lines: &mut Vec<String>, ind: usize, depth: usize, n: &mut usize) {
    for _ in 0..1 + rng.pick(3) {
        comments(rng, lines, ind, n);
        let prefix = format!("{}-", " ".repeat(ind));
        if depth < 3 && rng.chance(60) {
            prop_value(rng, lines, ind + 2, depth, &prefix, n);
        } else {
            lines.push(format!("{prefix} item"));
        }
    }
}

/// The share of generated documents allowed to differ, in percent (measured: 0 of
/// 1,500 since the emitter stopped writing a key's line comment before a flow mapping).
const PROPERTIES_CEILING_PERCENT: usize = 0;

#[test]
fn comments_around_properties_land_where_go_yaml_puts_them() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let Some(bin) = go_yaml::oracle(tmp.path(), "goyamlprops") else {
        return;
    };
    go_yaml::assert_agree(&bin, PROPERTIES);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let docs: Vec<String> = (0..1500)
        .map(|_| {
            let mut n = 0;
            let mut lines = vec!["defs: [&a1 1, &a2 2]".to_string()];
            prop_map(&mut rng, &mut lines, 0, 0, &mut n);
            comments(&mut rng, &mut lines, 0, &mut n);
            lines.join("\n") + "\n"
        })
        .collect();
    let differing = go_yaml::differing(&bin, &docs);
    eprintln!(
        "{} of {} generated documents differ from go-yaml",
        differing.len(),
        docs.len()
    );
    assert!(
        differing.len() * 100 <= docs.len() * PROPERTIES_CEILING_PERCENT,
        "{} of {} documents differ (ceiling {PROPERTIES_CEILING_PERCENT} %)",
        differing.len(),
        docs.len()
    );
}
