//! Differential tests of reading YAML against go-yaml v3 itself, on generated
//! documents: scalars over lines, flow collections (with comments), block structure, and
//! the line-break and tab corners libyaml's scanner decides. Each document goes through
//! go-yaml (`yaml.Unmarshal` into a `yaml.Node`, encoded with indent 2) and through ours
//! (`parse_stream`, `emit_node`); what is read must come back the same, and what one side
//! refuses the other must refuse too. The generators are seeded, so every run checks the
//! same documents.
//!
//! Without `go` and the yaml.v3 sources (`apt-get install golang-go
//! golang-gopkg-yaml.v3-dev`, which `.ci/setup.sh` does) the tests say so and pass as
//! skipped.

#[path = "support/go_oracle.rs"]
mod go_oracle;
#[path = "support/go_yaml.rs"]
mod go_yaml;

#[path = "support/rng.rs"]
mod rng;
use rng::Rng;

/// Of the documents whose round trip differs (input, go-yaml, ours), none may be read by
/// one side only or read differently; where both refuse, the error may differ (libyaml's
/// scanner running ahead of its parser reports a later error first) in at most `ceiling`.
fn assert_read_alike(differing: &[(String, String, String)], total: usize, ceiling: usize) {
    let (both_refuse, other): (Vec<_>, Vec<_>) = differing
        .iter()
        .partition(|(_, go, mine)| go.starts_with("ERR ") && mine.starts_with("ERR "));
    assert!(
        other.is_empty(),
        "{} of {total} documents read differently from go-yaml, first: {:?}",
        other.len(),
        other.first()
    );
    eprintln!("{} refused by both with another error", both_refuse.len());
    assert!(
        both_refuse.len() <= ceiling,
        "{} refused with another error",
        both_refuse.len()
    );
}

/// A lone carriage return (old Mac line ends, alone or mixed with LF and CRLF) is a line
/// break for go-yaml everywhere: between entries, in comments, in quoted, plain and
/// block scalars (folded and kept as it folds and keeps a line feed), in flow collections,
/// and in the line an error names.
#[test]
fn lone_carriage_returns_break_lines_as_in_go_yaml() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let Some(bin) = go_yaml::oracle(tmp.path(), "goyaml") else {
        return;
    };
    go_yaml::assert_agree(
        &bin,
        &[
            "a: 1\rb: 2\r",
            "a: 1\r# c\rb:\r  - x # l\r  - y\r",
            "a: \"x\ry\"\rb: 'p\r\rq'\r",
            "a: |\r  l1\r  l2\rb: >\r  f1\r  f2\r\r  f3\rc: |-\r  k\r",
            "a: 1\r\nb: 2\rc: 3\n",
            "k: plain\r  continued\r",
            "a: [1,\r 2]\rb: {c: 1,\r d: 2}\r",
            "a: 1\rb: c: d\r",
            "a:\r  b: 1\r c: 2\r",
            "\ra: 1\r\r",
        ],
    );
}

/// Tabs as libyaml's scanner takes them in block context: none at a line's start unless
/// a plain scalar is still being scanned there and the tab is right of its indentation,
/// none right after a block `-`, `?` or explicit `:` (a simple key may start there), any
/// after a simple key's `:`, in flow collections, inside quoted scalars and before a
/// comment on a content line.
#[test]
fn tabs_are_taken_or_refused_as_in_go_yaml() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let Some(bin) = go_yaml::oracle(tmp.path(), "goyaml") else {
        return;
    };
    go_yaml::assert_agree(
        &bin,
        &[
            "a:\n\tb: 1\n",
            "a:\n  b:\t1\n",
            "a: 1\n\t\nb: 2\n",
            "a: 1\n  \t\nb: 2\n",
            "a: 1\n \t\nb: 2\n",
            "a: 1\n\t# c\nb: 2\n",
            "a: 1\n  \t# c\nb: 2\n",
            "a: 1\n# c\n\t\nb: 2\n",
            "a: 'x'\n\t\nb: 2\n",
            "a: 'x'\n  \t\nb: 2\n",
            "a: 'x'\n\t# c\nb: 2\n",
            "a: 1 # c\n\t\nb: 2\n",
            "a:\n  b: 1\n  \t\n  c: 2\n",
            "a:\n  b: 1\n   \t\n  c: 2\n",
            "a:\n  b: 'x'\n \t\n  c: 2\n",
            "- 1\n\t\n- 2\n",
            "- 1\n \t\n- 2\n",
            "a: 1\n\t",
            "a: 1\n\t\n",
            "\t\na: 1\n",
            "\t# c\na: 1\n",
            "a:\t1\n",
            "a: 1\t# c\n",
            "- a\n-\tb\n",
            "- \ta\n",
            "-\t\n  a\n",
            "? a\n:\tb\n",
            "?\ta\n",
            "a: |\n\tx\n",
            "a: |\n  \tx\n",
            "a: |\n  x\n\t\nb: 2\n",
            "a: \"x\n\ty\"\n",
            "a: 'x\n\t y'\n",
            "a: x\n\ty\n",
            "[a,\tb]\n",
            "{a:\t1}\n",
            "a:\n  - b\n\t- c\n",
            "a: \t\n  b\n",
        ],
    );
}

/// A `...` document end marker before any document is refused as go-yaml refuses it (its
/// parser wants a node); after a document, extra markers are skipped.
#[test]
fn document_end_markers_as_go_yaml() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let Some(bin) = go_yaml::oracle(tmp.path(), "goyaml") else {
        return;
    };
    go_yaml::assert_agree(
        &bin,
        &[
            "...\n",
            "# c\n...\n",
            "\n...\n",
            "...\na: 1\n",
            "...\n---\na: 1\n",
            "a: 1\n...\n",
            "--- \n...\n",
            "a: '...'\n",
            "....\n",
        ],
    );
}

fn gen_scalar(r: &mut Rng, ind: usize) -> String {
    let pad = " ".repeat(ind + 2);
    let words = [
        "a", "b c", "x:y", "1", "true", "-", "#", "é", "  ", "'", "\"", "\\", "{", "[", ",", "?",
        "~", "null", "0x1", "a: b", "- x", "@", "%",
    ];
    let w = |r: &mut Rng| words[r.pick(words.len())].to_string();
    match r.pick(9) {
        0 => format!(
            "{}{}",
            "p",
            w(r).replace(
                [
                    ' ', ':', '#', '\'', '"', '\\', '{', '[', ',', '?', '@', '%', '-', '~'
                ],
                ""
            )
        ),
        1 => format!("'{}'", w(r).replace('\'', "''")),
        2 => format!("\"{}\"", w(r).replace('\\', "\\\\").replace('"', "\\\"")),
        3 => format!("p{} \n{pad}q{}", r.pick(9), r.pick(9)),
        4 => format!("'x\n{pad}\n{pad}y {}'", r.pick(9)),
        5 => format!("\"x\\\n{pad}y\\t{}\\n\n{pad} z\"", r.pick(9)),
        6 => {
            let ch = ["", "-", "+"][r.pick(3)];
            let lines = 1 + r.pick(3);
            let mut s = format!("|{ch}");
            for i in 0..lines {
                let extra = if r.chance(20) { "  " } else { "" };
                s.push_str(&format!("\n{pad}{extra}l{i}"));
                if r.chance(20) {
                    s.push('\n');
                }
            }
            s
        }
        7 => {
            let ch = ["", "-", "+"][r.pick(3)];
            format!(">{ch}\n{pad}f1\n{pad}f2\n\n{pad}  f3\n{pad}f4")
        }
        _ => {
            let a = w(r).replace(
                [
                    ',', '[', ']', '{', '}', '#', '\'', '"', '?', '-', '@', '%', '\\',
                ],
                "",
            );
            let b = r.pick(9);
            match r.pick(4) {
                0 => format!(
                    "[{}, {b}]",
                    if a.trim().is_empty() { "z".into() } else { a }
                ),
                1 => format!("{{k: {b}, m: [1,\n{pad}2]}}"),
                2 => format!("[\n{pad}x,\n{pad}y\n{pad}]"),
                _ => "{}".into(),
            }
        }
    }
}

fn gen_scalar_doc(r: &mut Rng) -> String {
    let mut s = String::new();
    for i in 0..(1 + r.pick(3)) {
        if r.chance(50) {
            s.push_str(&format!("k{i}: {}\n", gen_scalar(r, 0)));
        } else {
            s.push_str(&format!("k{i}:\n"));
            for j in 0..(1 + r.pick(2)) {
                if r.chance(50) {
                    s.push_str(&format!("  - {}\n", gen_scalar(r, 2)));
                } else {
                    s.push_str(&format!("  m{j}: {}\n", gen_scalar(r, 2)));
                }
            }
        }
    }
    s
}

/// Generated documents about scalars: plain ones running on over lines (trailing blanks
/// before the break included), quoted ones with folded lines and escapes, literal and
/// folded block scalars with every chomping and more-indented lines, flow collections
/// over lines; with blanks and tabs at line ends, comments, anchors and tags. Every
/// document both sides read must come back the same, and one read by one side only is
/// a failure; where both refuse a document (blank tabs in places libyaml refuses them),
/// the error may differ only where libyaml's scanner runs ahead of its parser and so
/// reports a later scanner error first (printed, held to a ceiling).
#[test]
fn scalars_over_lines_read_as_go_yaml() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let Some(bin) = go_yaml::oracle(tmp.path(), "goyaml") else {
        return;
    };
    let mut r = Rng(0x9e3779b97f4a7c15);
    let docs: Vec<String> = (0..20000)
        .map(|_| {
            let d = gen_scalar_doc(&mut r);
            // Trailing blanks and comments at random line ends; properties on values.
            d.lines()
                .map(|l| {
                    let mut l = l.to_string();
                    if r.chance(15) && !l.trim_end().ends_with(['|', '>', '-', '+']) {
                        l.push_str([" ", "  ", "\t", " \t "][r.pick(4)]);
                    }
                    if r.chance(10)
                        && !l.contains(['\'', '"', '|', '>', '[', '{'])
                        && l.contains(": ")
                    {
                        l.push_str(" # c");
                    }
                    if r.chance(8) {
                        l = l.replacen(": ", [": &a ", ": !!str ", ": !t ", ":  "][r.pick(4)], 1);
                    }
                    l + "\n"
                })
                .collect()
        })
        .collect();
    let differing = go_yaml::differing(&bin, &docs);
    assert_read_alike(&differing, docs.len(), 30);
}

fn gen_flow(r: &mut Rng, depth: usize, pad: &str) -> String {
    let atoms = [
        "a", "'q'", "\"d\"", "1", "", "~", "b c", "x:y", "k: v", "? e", "&a z", "*a", "!t s", "-1",
        ":", "- ", "#",
    ];
    let mut items = Vec::new();
    let n = r.pick(4);
    let map = r.chance(50);
    for _ in 0..n {
        let v = if depth < 2 && r.chance(30) {
            gen_flow(r, depth + 1, pad)
        } else {
            atoms[r.pick(atoms.len())].to_string()
        };
        let item = if map {
            let k = atoms[r.pick(6)];
            match r.pick(4) {
                0 => format!("{k}: {v}"),
                1 => format!("{k}:"),
                2 => k.to_string(),
                _ => format!("\"{k}\":{v}"),
            }
        } else {
            v
        };
        items.push(item);
    }
    let sep = if r.chance(20) {
        format!(",\n{pad}")
    } else {
        ", ".to_string()
    };
    let trail = if r.chance(15) { "," } else { "" };
    let (o, c) = if map { ("{", "}") } else { ("[", "]") };
    let inner = if r.chance(15) {
        format!(" {} ", items.join(&sep))
    } else {
        items.join(&sep)
    };
    format!("{o}{inner}{trail}{c}")
}

/// Generated flow collections (nested, over lines, trailing commas, empty and implicit
/// entries, properties, aliases, `- ` and `? ` where libyaml takes them as indicators)
/// in block documents: every document both sides read comes back the same, and none is
/// read by one side only. Documents with a repeated key are left out: go-yaml refuses
/// them when decoding to data (as kpt does), not when reading a `yaml.Node` as this
/// oracle does. Where both refuse, the error may differ (printed, held to a ceiling).
#[test]
fn flow_collections_read_as_go_yaml() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let Some(bin) = go_yaml::oracle(tmp.path(), "goyaml") else {
        return;
    };
    let mut r = Rng(0x1234567887654321);
    let docs: Vec<String> = (0..20000)
        .map(|_| {
            let mut s = String::new();
            for i in 0..(1 + r.pick(2)) {
                let f = gen_flow(&mut r, 0, "  ");
                match r.pick(3) {
                    0 => s.push_str(&format!("k{i}: {f}\n")),
                    1 => s.push_str(&format!("k{i}:\n  - {f}\n")),
                    _ => s.push_str(&format!("k{i}: &x{i} {f} # c\n")),
                }
            }
            s
        })
        .collect();
    let differing: Vec<_> = go_yaml::differing(&bin, &docs)
        .into_iter()
        .filter(|(_, _, mine)| !mine.contains("already defined"))
        .collect();
    assert_read_alike(&differing, docs.len(), 400);
}

/// A block node at indentation `ind`, its first line led by `first` (`- `, `k: `, or
/// nothing): scalars with properties, mappings (explicit keys, compact in a sequence
/// entry), sequences (indentless under a key, compact `- - `).
fn gen_block(r: &mut Rng, ind: usize, depth: usize, out: &mut Vec<String>, first: String) {
    let pad = " ".repeat(ind);
    let scalars = [
        "a", "1", "''", "~", "&s x", "*s", "!!str 2", "[]", "{}", "|\n", "",
    ];
    match if depth > 2 { 0 } else { r.pick(4) } {
        0 => {
            let s = scalars[r.pick(scalars.len())];
            if s == "|\n" {
                out.push(format!("{first}|"));
                out.push(format!("{pad}  lit"));
            } else {
                out.push(format!("{first}{s}").trim_end().to_string());
            }
        }
        1 => {
            // mapping
            let props = if r.chance(15) { "&m " } else { "" };
            let compact = first.ends_with("- ") && r.chance(50) && props.is_empty();
            let (mut lead, child) = if compact {
                (first.clone(), ind + first.len() - first.trim_start().len())
            } else if first.is_empty() {
                (String::new(), ind)
            } else {
                out.push(format!("{first}{props}").trim_end().to_string());
                (String::new(), ind + 2)
            };
            let cpad = " ".repeat(child);
            for i in 0..(1 + r.pick(3)) {
                let key = if r.chance(10) {
                    format!("? k{i}")
                } else {
                    format!("k{i}:")
                };
                let prefix = if lead.is_empty() {
                    cpad.clone()
                } else {
                    std::mem::take(&mut lead)
                };
                if key.starts_with('?') {
                    out.push(format!("{prefix}{key}"));
                    out.push(format!("{cpad}: v"));
                    continue;
                }
                gen_block(r, child, depth + 1, out, format!("{prefix}{key} "));
            }
        }
        _ => {
            // sequence
            let indentless = r.chance(40) && first.ends_with(": ");
            let child = if indentless || first.is_empty() {
                ind
            } else {
                ind + 2
            };
            let cpad = " ".repeat(child);
            let compact = first.ends_with("- ") && r.chance(40);
            let mut lead = String::new();
            if compact {
                lead = first.clone();
            } else if !first.is_empty() {
                out.push(first.trim_end().to_string());
            }
            for _ in 0..(1 + r.pick(3)) {
                let prefix = if lead.is_empty() {
                    cpad.clone()
                } else {
                    std::mem::take(&mut lead)
                };
                gen_block(r, child + 2, depth + 1, out, format!("{prefix}- "));
            }
        }
    }
}

/// Generated block structure: nested mappings and sequences, indentless and compact
/// sequences, compact mappings in entries, explicit keys, properties and aliases, empty
/// values, a leading `---`. Many generated documents are invalid: both sides must then
/// refuse them with the same error and line, and read the others the same.
#[test]
fn block_structure_reads_as_go_yaml() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let Some(bin) = go_yaml::oracle(tmp.path(), "goyaml") else {
        return;
    };
    let mut r = Rng(0xabcdef0123456789);
    let docs: Vec<String> = (0..20000)
        .map(|_| {
            let mut out = Vec::new();
            gen_block(&mut r, 0, 0, &mut out, String::new());
            let mut s = out.join("\n");
            s.push('\n');
            if r.chance(10) {
                s = format!("---\n{s}");
            }
            s
        })
        // An empty stream is no document here and a null one for the oracle.
        .filter(|d| !d.trim().is_empty() && d.trim() != "---")
        .collect();
    let differing: Vec<_> = go_yaml::differing(&bin, &docs)
        .into_iter()
        .filter(|(_, _, mine)| !mine.contains("already defined"))
        .collect();
    assert!(
        differing.is_empty(),
        "{} of {} documents read differently from go-yaml, first: {:?}",
        differing.len(),
        docs.len(),
        differing.first()
    );
}

/// Generated flow collections over lines with comments after entries, after commas, on
/// lines of their own, after the closing bracket and below it: every comment lands on
/// the node go-yaml v3 gives it.
#[test]
fn comments_in_flow_collections_land_as_go_yaml() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let Some(bin) = go_yaml::oracle(tmp.path(), "goyaml") else {
        return;
    };
    let mut r = Rng(0x5555aaaa5555aaaa);
    let mut docs = Vec::new();
    for _ in 0..5000 {
        let map = r.chance(50);
        let n = 1 + r.pick(3);
        let mut s = format!("# head\nk: {}", if map { "{" } else { "[" });
        for i in 0..n {
            if r.chance(30) {
                s.push_str(" # a\n  ");
            } else if r.chance(20) {
                s.push_str("\n  ");
            }
            if map {
                s.push_str(&format!("x{i}: {i}"));
            } else {
                s.push_str(&format!("v{i}"));
            }
            if i + 1 < n || r.chance(20) {
                s.push(',');
            }
            if r.chance(30) {
                s.push_str(" # b");
                s.push_str("\n  ");
            }
        }
        if r.chance(20) {
            s.push('\n');
        }
        s.push_str(if map { "}" } else { "]" });
        if r.chance(30) {
            s.push_str(" # after");
        }
        s.push('\n');
        if r.chance(30) {
            s.push_str("# foot\n");
        }
        s.push_str("z: 1\n");
        docs.push(s);
    }
    let differing = go_yaml::differing(&bin, &docs);
    assert!(
        differing.is_empty(),
        "{} of {} documents differ from go-yaml, first: {:?}",
        differing.len(),
        docs.len(),
        differing.first()
    );
}
