//! A step's `tag:` (kpt HEAD's `TagResolver`, Masterminds semver v3) checked against
//! Masterminds semver itself, on generated versions, constraints and tag lists:
//!
//! - `NewVersion`: accepted or not (kpt tries the tag as an exact version first, and
//!   keeps a registry tag as a candidate only if it is one); for accepted versions,
//!   `Compare` between every pair of a group (ordering, pre-releases, ties);
//! - `NewConstraint`: accepted or not, and for accepted ones `Check` of a list of
//!   versions;
//! - the whole resolution as kpt HEAD's `ResolveFunctionImage` does it, through our
//!   public `kpt::render::resolve_image_tag`: an exact version or an unparsable tag is
//!   used literally when it is a valid image tag (`BADTAG` otherwise); a constraint asks
//!   every tag lister, pools the tags that are versions (not `sha256-…`, not `…-git-…`)
//!   satisfying it, sorts them with `slices.SortFunc(…, b.Compare(a))` and takes the
//!   first (`NONE` when there is none). The Go side sorts with `sort.Slice`, the same
//!   pattern-defeating quicksort `slices.SortFunc` runs, so ties (`v1.2` and `1.2.0`)
//!   fall as in kpt.
//!
//! Versions and constraints are checked on our module itself (`src/render/semver.rs`,
//! included here by path: it is private to `kpt::render`).
//!
//! The oracle is Debian's Masterminds semver 3.2.0; kpt HEAD requires v3.4.0. Its
//! `NewVersion` is 3.2.0's (v3.4.0 keeps the loose parser as the default,
//! `CoerceNewVersion`), but two changes touch constraints, and are applied to a copy of
//! Debian's `constraints.go` (an overlay searched before Debian's GOPATH): a range
//! `a - b` is rewritten to `>= a, <= b ` with a trailing space (3.2.1), and whether a
//! pre-release may satisfy a term is decided per `&&` group: any term naming a
//! pre-release lets every term of its group take one, and `!=` refuses pre-releases
//! otherwise as the other operators do (3.4.0's `containsPre`).
//!
//! Without `go` and the library sources (`apt-get install golang-go
//! golang-github-masterminds-semver-dev`) the tests say so and pass as skipped.

#[path = "support/go_oracle.rs"]
mod go_oracle;
#[path = "support/rng.rs"]
mod rng;
#[allow(dead_code)]
#[path = "../src/render/semver.rs"]
mod semver;

use std::path::Path;

use kpt::resource_list::ResourceList;
use kpt::runtime::{FunctionOutput, FunctionRef, FunctionRuntime, RunOptions, RuntimeError};
use rng::Rng;
use semver::{Constraints, Version};

const LIBRARY: &str = "github.com/Masterminds/semver";
const PACKAGES: &str = "golang-go golang-github-masterminds-semver-dev";

/// Records of `\x01`-separated fields, the first naming the question; lists inside a
/// field are `\x02`-separated.
const PROGRAM: &str = r#"package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/Masterminds/semver"
)

var imageTagRegex = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$`)

func literal(tag string) string {
	if !imageTagRegex.MatchString(tag) {
		return "BADTAG"
	}
	return "TAG " + tag
}

// kpt HEAD's TagResolver.ResolveFunctionImage, less the image reference.
func resolve(tag string, listers []string) string {
	if _, err := semver.NewVersion(tag); err == nil {
		return literal(tag)
	}
	c, err := semver.NewConstraint(tag)
	if err != nil {
		return literal(tag)
	}
	var all []*semver.Version
	for _, l := range listers {
		if l == "!" || l == "" {
			continue
		}
		for _, t := range strings.Split(l, "\x02") {
			if strings.HasPrefix(t, "sha256-") || strings.Contains(t, "-git-") {
				continue
			}
			v, err := semver.NewVersion(t)
			if err != nil {
				continue
			}
			if c.Check(v) {
				all = append(all, v)
			}
		}
	}
	if len(all) == 0 {
		return "NONE"
	}
	// slices.SortFunc(all, func(a, b) int { return b.Compare(a) }) in kpt.
	sort.Slice(all, func(i, j int) bool { return all[j].Compare(all[i]) < 0 })
	return "TAG " + all[0].Original()
}

func main() {
	in, _ := io.ReadAll(bufio.NewReader(os.Stdin))
	for _, rec := range strings.Split(string(in), "\x00\n") {
		if rec == "" {
			continue
		}
		f := strings.Split(rec, "\x01")
		out := ""
		switch f[0] {
		case "V":
			if _, err := semver.NewVersion(f[1]); err != nil {
				out = "ERR"
			} else {
				out = "OK"
			}
		case "O":
			var vs []*semver.Version
			for _, s := range f[1:] {
				v, err := semver.NewVersion(s)
				if err != nil {
					out = "BADVERSION " + s
					break
				}
				vs = append(vs, v)
			}
			if out != "" {
				break
			}
			var b strings.Builder
			for _, a := range vs {
				for _, o := range vs {
					b.WriteByte("<=>"[a.Compare(o)+1])
				}
			}
			out = "ORD " + b.String()
		case "C":
			c, err := semver.NewConstraint(f[1])
			if err != nil {
				out = "ERR"
				break
			}
			var b strings.Builder
			for _, s := range f[2:] {
				v, err := semver.NewVersion(s)
				if err != nil {
					b.WriteByte('?')
				} else if c.Check(v) {
					b.WriteByte('1')
				} else {
					b.WriteByte('0')
				}
			}
			out = "OK " + b.String()
		case "R":
			out = resolve(f[1], f[2:])
		}
		fmt.Print(out + "\x00\n")
	}
}
"#;

/// (Debian 3.2.0's text, v3.4.0's behaviour in 3.2.0's terms, how often it occurs).
const PATCHES: &[(&str, &str, usize)] = &[
    // 3.2.1: the rewritten range ends in a space.
    (
        r#"t := fmt.Sprintf(">= %s, <= %s", v[1], v[11])"#,
        r#"t := fmt.Sprintf(">= %s, <= %s ", v[1], v[11])"#,
        1,
    ),
    // 3.4.0: each term is told whether its group names a pre-release.
    (
        "(v *Version, c *constraint) (bool, error)",
        "(v *Version, c *constraint, includePre bool) (bool, error)",
        9,
    ),
    (
        r#"if v.Prerelease() != "" && c.con.Prerelease() == "" {"#,
        r#"if v.Prerelease() != "" && !includePre {"#,
        8,
    ),
    (
        "return constraintTilde(v, c)",
        "return constraintTilde(v, c, includePre)",
        1,
    ),
    (
        "return constraintOps[c.origfunc](v, c)",
        "return constraintOps[c.origfunc](v, c, includePre)",
        1,
    ),
    (
        "(c *constraint) check(v *Version)",
        "(c *constraint) check(v *Version, includePre bool)",
        1,
    ),
    ("c.check(v)", "c.check(v, groupHasPre(o))", 2),
    // 3.4.0: `!=` refuses an unasked-for pre-release whether or not it is dirty.
    (
        "func constraintNotEqual(v *Version, c *constraint, includePre bool) (bool, error) {\n",
        "func constraintNotEqual(v *Version, c *constraint, includePre bool) (bool, error) {\n\tif v.Prerelease() != \"\" && !includePre {\n\t\treturn false, nil\n\t}\n",
        1,
    ),
];

const GROUP_HAS_PRE: &str = "
// groupHasPre is v3.4.0's containsPre for one && group.
func groupHasPre(o []*constraint) bool {
	for _, c := range o {
		if c.con.pre != \"\" {
			return true
		}
	}
	return false
}
";

/// A GOPATH holding Debian's semver package with [`PATCHES`] applied to
/// `constraints.go`; `None` when Debian's sources are absent.
fn overlay(dir: &Path) -> Option<std::path::PathBuf> {
    let source = Path::new(go_oracle::GOPATH).join("src").join(LIBRARY);
    let entries = std::fs::read_dir(&source).ok()?;
    let root = dir.join("overlay");
    let target = root.join("src").join(LIBRARY);
    std::fs::create_dir_all(&target).expect("overlay dir");
    for entry in entries {
        let path = entry.expect("dir entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if !name.ends_with(".go") || name.ends_with("_test.go") {
            continue;
        }
        let mut text = std::fs::read_to_string(&path).expect("read Go source");
        if name == "constraints.go" {
            for (from, to, count) in PATCHES {
                assert_eq!(
                    text.matches(from).count(),
                    *count,
                    "constraints.go no longer has the text the overlay patches: {from}"
                );
                text = text.replace(from, to);
            }
            text.push_str(GROUP_HAS_PRE);
        }
        std::fs::write(target.join(name), text).expect("write overlay source");
    }
    Some(root)
}

fn oracle(dir: &Path) -> Option<std::path::PathBuf> {
    let root = overlay(dir);
    go_oracle::build_with(dir, PROGRAM, "semver", LIBRARY, PACKAGES, root.as_deref())
}

/// Tag listers with fixed answers (`!` fails); it runs nothing.
struct Listers(Vec<String>);

impl FunctionRuntime for Listers {
    fn handles(&self, _: &FunctionRef) -> bool {
        false
    }
    fn run(
        &self,
        f: &FunctionRef,
        _: ResourceList,
        _: &RunOptions,
    ) -> Result<FunctionOutput, RuntimeError> {
        Err(RuntimeError::NotFound(f.display().to_string()))
    }
    fn list_tags(&self, _: &str) -> Vec<Result<Vec<String>, String>> {
        self.0
            .iter()
            .map(|l| match l.as_str() {
                "!" => Err("registry unreachable".to_string()),
                "" => Ok(Vec::new()),
                l => Ok(l.split('\x02').map(str::to_string).collect()),
            })
            .collect()
    }
}

const IMAGE: &str = "ghcr.io/kptdev/krm-functions-catalog/fn";

/// Our answer to a record, in the Go program's words.
fn ours(record: &str) -> String {
    let f: Vec<&str> = record.split('\x01').collect();
    match f[0] {
        "V" => match Version::parse(f[1]) {
            Some(_) => "OK".into(),
            None => "ERR".into(),
        },
        "O" => {
            let mut vs = Vec::new();
            for s in &f[1..] {
                match Version::parse(s) {
                    Some(v) => vs.push(v),
                    None => return format!("BADVERSION {s}"),
                }
            }
            let mut out = "ORD ".to_string();
            for a in &vs {
                for o in &vs {
                    out.push(match a.cmp(o) {
                        std::cmp::Ordering::Less => '<',
                        std::cmp::Ordering::Equal => '=',
                        std::cmp::Ordering::Greater => '>',
                    });
                }
            }
            out
        }
        "C" => match Constraints::parse(f[1]) {
            None => "ERR".into(),
            Some(c) => {
                let bits: String = f[2..]
                    .iter()
                    .map(|s| match Version::parse(s) {
                        None => '?',
                        Some(v) if c.check(&v) => '1',
                        Some(_) => '0',
                    })
                    .collect();
                format!("OK {bits}")
            }
        },
        "R" => {
            let listers = Listers(f[2..].iter().map(|s| s.to_string()).collect());
            match kpt::render::resolve_image_tag(IMAGE, f[1], &listers) {
                Ok(image) => match image.strip_prefix(&format!("{IMAGE}:")) {
                    Some(tag) => format!("TAG {tag}"),
                    None => format!("IMAGE {image}"),
                },
                Err(e) if e.starts_with("no tag could be found") => "NONE".into(),
                Err(e) if e.starts_with("`function.tag`") => "BADTAG".into(),
                Err(e) => format!("ERR {e}"),
            }
        }
        other => panic!("unknown record {other}"),
    }
}

/// Runs every record through both and fails listing the first differences.
fn assert_agree(bin: &Path, what: &str, records: &[String]) {
    let go = go_oracle::answers(bin, records);
    let mut tally = std::collections::BTreeMap::<String, usize>::new();
    for answer in &go {
        let kind = answer.split(' ').next().unwrap_or_default().to_string();
        *tally.entry(kind).or_default() += 1;
    }
    eprintln!(
        "{what}: {} records, Masterminds' answers {tally:?}",
        go.len()
    );
    let differing: Vec<String> = records
        .iter()
        .zip(&go)
        .filter_map(|(rec, go)| {
            let mine = ours(rec);
            (mine != *go).then(|| {
                let shown = rec.replace('\x01', " ␁ ").replace('\x02', ",");
                format!("{shown:?}\n    go:   {go}\n    ours: {mine}")
            })
        })
        .collect();
    assert!(
        differing.is_empty(),
        "{what}: {} of {} records answered differently from Masterminds semver; the first:\n{}",
        differing.len(),
        records.len(),
        differing
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

fn pick<'a>(r: &mut Rng, items: &[&'a str]) -> &'a str {
    items[r.pick(items.len())]
}

const NUMBERS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "10",
    "01",
    "00",
    "007",
    "18446744073709551615",
    "18446744073709551616",
];
const IDENTIFIERS: &[&str] = &[
    "rc",
    "rc.1",
    "rc.2",
    "rc.10",
    "alpha",
    "alpha.1",
    "alpha.beta",
    "beta",
    "beta.2",
    "beta.11",
    "1",
    "2",
    "10",
    "0",
    "a-b",
    "x-1",
    "-",
    "--",
    "0a",
    "01",
    "rc.01",
    "",
    "alpha..1",
    "rc.",
    ".rc",
    "r_c",
    "rç",
    "18446744073709551616",
    "99999999999999999999",
];
const METADATA: &[&str] = &[
    "build",
    "b.1",
    "001",
    "sha.5114f85",
    "",
    "a+b",
    "a..b",
    "x_y",
];

/// A version as a registry or a Kptfile might spell it, right or wrong.
fn version(r: &mut Rng) -> String {
    let mut s = String::new();
    if r.chance(40) {
        s.push_str(pick(r, &["v", "v", "v", "V", "vv", " "]));
    }
    s.push_str(pick(r, NUMBERS));
    let parts = if r.chance(80) { 2 } else { r.pick(4) };
    for _ in 0..parts {
        s.push('.');
        s.push_str(if r.chance(95) {
            pick(r, NUMBERS)
        } else {
            pick(r, &["", "x", "*", "-1", "a", "1a"])
        });
    }
    if r.chance(30) {
        s.push('-');
        s.push_str(pick(r, IDENTIFIERS));
    }
    if r.chance(15) {
        s.push('+');
        s.push_str(pick(r, METADATA));
    }
    if r.chance(4) {
        s.push_str(pick(r, &[" ", "\n", "-", "+", ".", "é", "\t"]));
    }
    s
}

/// A valid version from a small space, so that groups hold equal and near versions.
fn close_version(r: &mut Rng) -> String {
    let mut s = String::new();
    if r.chance(40) {
        s.push('v');
    }
    s.push_str(pick(r, &["0", "1", "2", "1", "00", "01"]));
    let parts = if r.chance(70) { 2 } else { r.pick(3) };
    for _ in 0..parts {
        s.push('.');
        s.push_str(pick(r, &["0", "1", "2", "3", "00"]));
    }
    if r.chance(35) {
        s.push('-');
        s.push_str(pick(
            r,
            &[
                "rc",
                "rc.1",
                "rc.2",
                "rc.10",
                "alpha",
                "alpha.1",
                "alpha.beta",
                "beta",
                "1",
                "2",
                "10",
                "a-b",
                "0a",
                "18446744073709551616",
                "alpha.1.2",
            ],
        ));
    }
    if r.chance(15) {
        s.push('+');
        s.push_str(pick(r, &["build", "b.1", "001"]));
    }
    s
}

/// A partial version with wildcards, as a constraint term takes it.
fn constraint_version(r: &mut Rng, clean: bool) -> String {
    let mut s = String::new();
    if r.chance(20) {
        s.push('v');
    }
    let seg = |r: &mut Rng| {
        if !r.chance(25) {
            pick(r, &["0", "1", "2", "3", "10", "01", "00"])
        } else if clean {
            pick(r, &["x", "X", "*"])
        } else {
            pick(r, &["x", "X", "*", "x", "|", "xx", "1x", "**"])
        }
    };
    s.push_str(seg(r));
    let parts = r.pick(3);
    for _ in 0..parts {
        s.push('.');
        s.push_str(seg(r));
    }
    if r.chance(20) {
        s.push('-');
        s.push_str(if clean {
            pick(r, &["rc", "rc.1", "0", "alpha", "beta.2", "a-b", "1"])
        } else {
            pick(r, &["rc", "rc.1", "0", "alpha", "beta.2", "01", "a-b", "1"])
        });
    }
    if r.chance(5) {
        s.push('+');
        s.push_str(if clean {
            pick(r, &["build", "b.1", "001"])
        } else {
            pick(r, &["build", "b.1", "001", "a..b"])
        });
    }
    s
}

const OPERATORS: &[&str] = &[
    "", "", "=", "!=", ">", "<", ">=", "=>", "<=", "=<", "~", "~>", "^", "==", "=>=", "~=", ">>",
    "!", "^~", "<>",
];

fn term(r: &mut Rng, clean: bool) -> String {
    if r.chance(12) {
        // A hyphen range, spaced right or wrong.
        let sep = if clean {
            pick(r, &[" - ", "  -  ", "\t-\t"])
        } else {
            pick(
                r,
                &[" - ", " - ", "  -  ", "-", " -", "- ", "\t-\t", " -- "],
            )
        };
        let (from, to) = (constraint_version(r, clean), constraint_version(r, clean));
        return format!("{from}{sep}{to}");
    }
    let op = if clean {
        pick(r, &OPERATORS[..13])
    } else {
        pick(r, OPERATORS)
    };
    let space = pick(r, &["", "", "", " ", "  ", "\t"]);
    format!("{op}{space}{}", constraint_version(r, clean))
}

fn constraint(r: &mut Rng) -> String {
    // Half are built from valid pieces only, so that checking is well covered too.
    let clean = r.chance(50);
    let groups = 1 + r.pick(3);
    let mut s = String::new();
    for g in 0..groups {
        if g > 0 {
            s.push_str(if clean {
                pick(r, &[" || ", "||", " ||", "|| "])
            } else {
                pick(r, &[" || ", "||", " ||", "|| ", " | ", "|||", " || || "])
            });
        }
        let terms = 1 + r.pick(3);
        for t in 0..terms {
            if t > 0 {
                s.push_str(if clean {
                    pick(r, &[", ", ",", " ", "  ", " , ", "\t", " ,", "\n"])
                } else {
                    pick(
                        r,
                        &[
                            ", ", ",", " ", "  ", " , ", ",,", "\t", " ,", ", ,", "\n", "\u{b}",
                            "\u{a0}", ";",
                        ],
                    )
                });
            }
            s.push_str(&term(r, clean));
        }
    }
    if clean {
        return s;
    }
    if r.chance(6) {
        s.insert_str(0, pick(r, &[" ", ",", "\t", "|| "]));
    }
    if r.chance(6) {
        s.push_str(pick(r, &[" ", ",", "\t", " ||", "-"]));
    }
    s
}

/// A tag a registry might list.
fn listed_tag(r: &mut Rng) -> String {
    match r.pick(12) {
        0 => pick(
            r,
            &[
                "latest",
                "main",
                "sha256-0123abcd.sig",
                "sha256-0123abcd.att",
                "v0.9.0-git-38f885f",
                "master-git-38f885f",
                "1.2.3-git-x",
                "unstable",
                "",
            ],
        )
        .to_string(),
        1 => version(r),
        _ => close_version(r),
    }
}

fn listers(r: &mut Rng) -> Vec<String> {
    let n = 1 + r.pick(3);
    (0..n)
        .map(|_| {
            if r.chance(8) {
                return "!".to_string();
            }
            // Up to 12 tags sort by insertion; longer lists go through pdqsort proper.
            let len = if r.chance(25) {
                13 + r.pick(60)
            } else {
                r.pick(13)
            };
            (0..len)
                .map(|_| listed_tag(r))
                .collect::<Vec<_>>()
                .join("\x02")
        })
        .collect()
}

fn record(kind: &str, fields: &[String]) -> String {
    let mut s = kind.to_string();
    for f in fields {
        s.push('\x01');
        s.push_str(f);
    }
    s
}

/// Valid versions in our own judgement, which the version test holds to Go's.
fn valid_versions(r: &mut Rng, n: usize) -> Vec<String> {
    let mut out = Vec::new();
    while out.len() < n {
        let v = if r.chance(80) {
            close_version(r)
        } else {
            version(r)
        };
        if Version::parse(&v).is_some() {
            out.push(v);
        }
    }
    out
}

#[test]
fn versions_parse_and_order_as_in_masterminds() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let Some(bin) = oracle(tmp.path()) else {
        return;
    };
    let mut r = Rng(0x2545_f491_4f6c_dd1d);
    let mut records: Vec<String> = [
        "",
        "1",
        "1.2",
        "1.2.3",
        "v1.2.3",
        "V1.2.3",
        "1.2.3.4",
        "01.002.0003",
        "1.2.3-rc.1",
        "1.2.3-rc.01",
        "1.2.3-",
        "1.2.3+",
        "1.2.3+b.1",
        "1.2-rc",
        "1-rc",
        "v",
        "latest",
        "1.x",
        "~1.2",
        " 1.2.3",
        "1.2.3 ",
        "18446744073709551615",
        "18446744073709551616",
        "1.2.3-a..b",
        "1.2.3-0a",
        "1.2.3-00",
    ]
    .iter()
    .map(|v| record("V", &[v.to_string()]))
    .collect();
    for _ in 0..6_000 {
        records.push(record("V", &[version(&mut r)]));
    }
    for _ in 0..1_500 {
        let n = 2 + r.pick(6);
        records.push(record("O", &valid_versions(&mut r, n)));
    }
    assert_agree(&bin, "versions", &records);
}

#[test]
fn constraints_parse_and_check_as_in_masterminds() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let Some(bin) = oracle(tmp.path()) else {
        return;
    };
    let mut r = Rng(0xd1b5_4a32_d192_ed03);
    let curated = [
        "~0.2",
        "^1",
        "0.4.1 - 0.4.3",
        "0.2 - 0.2.2",
        ">=1, <2",
        ">= 1.2 < 1.4",
        "1.x",
        "*",
        "",
        "<1.0 || >=3",
        ">=1.1.0-rc.0",
        ">=1.1.0-rc.0 || >=5",
        ">=5 || >=1.0.0",
        "!=1.2.3",
        "!=1.x",
        "!=*",
        "^*",
        "<=*",
        "~0",
        "=0.4.x",
        "1.2.3 - 2.3.4 || 3 - 4",
        ">=1,,<2",
        ",>=1",
        ">=1,",
        "1 2",
        ">1<2",
        "1|2",
        "x.|.5",
        "1.x.|",
        "1.2.3-01",
        "a || b",
        "~x.y",
        ">= ",
        "1 -",
        &format!(">={}", "1".repeat(600)),
        &vec![">=0"; 40].join(" || "),
    ];
    let check_list = |r: &mut Rng| {
        let mut v = valid_versions(r, 8);
        v.extend(["0.0.0", "0.0.0-rc", "1.0.0-rc.1", "1.2.3"].map(String::from));
        v
    };
    let mut records: Vec<String> = curated
        .iter()
        .map(|c| {
            let mut fields = vec![c.to_string()];
            fields.extend(check_list(&mut r));
            record("C", &fields)
        })
        .collect();
    for _ in 0..8_000 {
        let mut fields = vec![constraint(&mut r)];
        fields.extend(check_list(&mut r));
        records.push(record("C", &fields));
    }
    assert_agree(&bin, "constraints", &records);
}

#[test]
fn tags_resolve_as_kpt_heads_tag_resolver_resolves_them() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let Some(bin) = oracle(tmp.path()) else {
        return;
    };
    let mut r = Rng(0x94d0_49bb_1331_11eb);
    let set = [
        "v0.1", "v0.2.3", "v0.1.2", "v0", "v0.2", "v0.1.1", "v0.2.1", "v0.2.2",
    ]
    .join("\x02");
    let mut records: Vec<String> = [
        ("~0.1", vec![set.clone()]),
        ("0.2 - 0.2.2", vec![set.clone()]),
        ("^0.2", vec![set.clone()]),
        ("0.3.x", vec![set.clone()]),
        ("v0.3.1", vec!["!".to_string()]),
        ("v0.3.1+build", vec![set.clone()]),
        ("master-git-38f885f", vec!["!".to_string()]),
        (">>0.1", vec![set.clone()]),
        ("~0.1", vec!["!".to_string()]),
        ("~0.1", vec![String::new()]),
        ("~0.2", vec!["v0.2.0\x02v0.2".to_string()]),
        ("~0.2", vec!["v0.2\x02v0.2.0".to_string()]),
        (
            "*",
            vec!["v0.1.0".to_string(), "v0.2.0\x02v0.2.1".to_string()],
        ),
        (
            "~0.2",
            vec![
                "!".to_string(),
                String::new(),
                "v0.3.0\x02latest".to_string(),
                "v0.2.1\x02latest".to_string(),
                "v0.2.4\x02v0.3.0".to_string(),
            ],
        ),
    ]
    .into_iter()
    .map(|(tag, listers)| {
        let mut fields = vec![tag.to_string()];
        fields.extend(listers);
        record("R", &fields)
    })
    .collect();
    // Long pools full of equal versions: where Go's quicksort, not an insertion sort,
    // decides which spelling comes first.
    for _ in 0..1_000 {
        let tag = pick(
            &mut r,
            &["*", ">=0.0.0-0", "<3", "~1", "^0 || ^1", ">=1.0.0-rc"],
        );
        let mut fields = vec![tag.to_string()];
        for _ in 0..1 + r.pick(3) {
            let len = 10 + r.pick(120);
            let tags: Vec<String> = (0..len).map(|_| close_version(&mut r)).collect();
            fields.push(tags.join("\x02"));
        }
        records.push(record("R", &fields));
    }
    for _ in 0..4_000 {
        let tag = match r.pick(10) {
            0 => version(&mut r),
            1 => listed_tag(&mut r),
            2 => match r.pick(4) {
                0 => "x".repeat(128 + r.pick(2)),
                _ => pick(&mut r, &["latest", "a/b", "_x", "v1_2"]).to_string(),
            },
            _ => constraint(&mut r),
        };
        // An empty tag leaves the image alone (no resolution at all).
        if tag.is_empty() {
            continue;
        }
        let mut fields = vec![tag];
        fields.extend(listers(&mut r));
        records.push(record("R", &fields));
    }
    assert_agree(&bin, "resolutions", &records);
}
