//! `kpt::image_ref::parse` checked against `reference.Parse` itself, on generated image
//! references. kpt HEAD's `ValidateFunctionImageURL` is `reference.Parse` (its error
//! wrapped in `function image reference "…" is invalid: …`), and that is all our callers
//! ask of the port (the Kptfile check and `fn eval --image`): whether a reference is
//! accepted and, if not, the library's error text. So each input's answer is `OK` or
//! `ERR <error>`, compared byte for byte.
//!
//! The oracle is Debian's `docker/distribution` 2.8.2 `reference` package with
//! `go-digest` 1.0.0; kpt HEAD uses `github.com/distribution/reference` (v0.6.0), the
//! package split out of it. The two differences between them that `Parse` shows are
//! applied to a copy of Debian's sources (an overlay searched before Debian's GOPATH):
//! a domain may be an IPv6 address in brackets (`[fe80::1]:5000/fn`), and the 255
//! character limit is on the repository path, not on the domain and path together.
//! The oracle imports `crypto/sha256` and `crypto/sha512` as any kpt binary does, so
//! go-digest knows sha256, sha384 and sha512.
//!
//! Without `go` and the library sources (`apt-get install golang-go
//! golang-github-docker-distribution-dev golang-github-opencontainers-go-digest-dev`)
//! the test says so and passes as skipped.

#[path = "support/go_oracle.rs"]
mod go_oracle;
#[path = "support/rng.rs"]
mod rng;

use std::path::Path;

use rng::Rng;

const LIBRARY: &str = "github.com/docker/distribution/reference";
const PACKAGES: &str = "golang-go golang-github-docker-distribution-dev \
                        golang-github-opencontainers-go-digest-dev";

/// Each input (after a one-character marker, so that the empty reference can be asked)
/// through `reference.Parse`.
const PROGRAM: &str = r#"package main

import (
	"bufio"
	_ "crypto/sha256"
	_ "crypto/sha512"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/docker/distribution/reference"
)

func main() {
	in, _ := io.ReadAll(bufio.NewReader(os.Stdin))
	for _, s := range strings.Split(string(in), "\x00\n") {
		if s == "" {
			continue
		}
		if _, err := reference.Parse(s[1:]); err != nil {
			fmt.Print("ERR " + err.Error() + "\x00\n")
		} else {
			fmt.Print("OK\x00\n")
		}
	}
}
"#;

/// (file, Debian's text, distribution/reference v0.6.0's behaviour in Debian's terms).
const PATCHES: &[(&str, &str, &str)] = &[
    // v0.6.0: `host := (?:domainName|ipv6address)`, then the optional port.
    (
        "regexp.go",
        "\tDomainRegexp = expression(\n\t\tdomainComponentRegexp,\n\t\toptional(repeated(literal(`.`), domainComponentRegexp)),\n\t\toptional(literal(`:`), match(`[0-9]+`)))\n",
        "\tDomainRegexp = expression(\n\t\tgroup(match(expression(domainComponentRegexp, optional(repeated(literal(`.`), domainComponentRegexp))).String() + `|\\[(?:[a-fA-F0-9:]+)\\]`)),\n\t\toptional(literal(`:`), match(`[0-9]+`)))\n",
    ),
    // v0.6.0: `if len(repo.path) > RepositoryNameTotalLengthMax`.
    (
        "reference.go",
        "\tif len(matches[1]) > NameTotalLengthMax {\n",
        "\tif len(anchoredNameRegexp.FindStringSubmatch(matches[1])[2]) > NameTotalLengthMax {\n",
    ),
];

/// A GOPATH holding Debian's `reference` package with [`PATCHES`] applied; `None` when
/// Debian's sources are absent (the build then reports the skip).
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
        for (file, from, to) in PATCHES {
            if *file == name {
                assert!(
                    text.contains(from),
                    "{name} no longer has the text the overlay patches: {from}"
                );
                text = text.replacen(from, to, 1);
            }
        }
        std::fs::write(target.join(name), text).expect("write overlay source");
    }
    Some(root)
}

fn oracle(dir: &Path) -> Option<std::path::PathBuf> {
    let root = overlay(dir);
    go_oracle::build_with(
        dir,
        PROGRAM,
        "reference",
        LIBRARY,
        PACKAGES,
        root.as_deref(),
    )
}

fn ours(s: &str) -> String {
    match kpt::image_ref::parse(s) {
        Ok(()) => "OK".to_string(),
        Err(e) => format!("ERR {e}"),
    }
}

/// Runs every input through both and fails listing the first differences.
fn assert_agree(bin: &Path, inputs: &[String]) {
    let marked: Vec<String> = inputs.iter().map(|s| format!("={s}")).collect();
    let go = go_oracle::answers(bin, &marked);
    let mut tally = std::collections::BTreeMap::<&str, usize>::new();
    for answer in &go {
        *tally.entry(answer.as_str()).or_default() += 1;
    }
    eprintln!("reference.Parse's answers: {tally:?}");
    let differing: Vec<String> = inputs
        .iter()
        .zip(&go)
        .filter_map(|(s, go)| {
            let mine = ours(s);
            (mine != *go).then(|| format!("{s:?}\n    go:   {go}\n    ours: {mine}"))
        })
        .collect();
    assert!(
        differing.is_empty(),
        "{} of {} references answered differently from reference.Parse; the first:\n{}",
        differing.len(),
        inputs.len(),
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

/// A string of `n` characters drawn from `alphabet`.
fn run_of(r: &mut Rng, alphabet: &[char], n: usize) -> String {
    (0..n).map(|_| alphabet[r.pick(alphabet.len())]).collect()
}

const LOWER: &[char] = &[
    'a', 'b', 'c', 'x', 'y', 'z', '0', '1', '9', 'a', 'e', 'f', 'k', 'i',
];

fn domain(r: &mut Rng, clean: bool) -> String {
    match if clean { 4 + r.pick(8) } else { r.pick(12) } {
        0 => pick(
            r,
            &[
                "localhost",
                "localhost:5000",
                "registry.example",
                "Registry-1.Example:443",
                "ghcr.io",
                "gcr.io",
                "docker.io",
                "127.0.0.1",
                "127.0.0.1:5000",
                "10.0.0.256:1",
            ],
        )
        .to_string(),
        1 => pick(
            r,
            &[
                "[fe80::1]",
                "[::1]:5000",
                "[FE80::A]:443",
                "[zz::1]",
                "[]",
                "[::1",
                "::1",
                "[fe80::1%eth0]",
                "[1.2.3.4]",
            ],
        )
        .to_string(),
        2 => pick(
            r,
            &[
                "-bad.example",
                "bad-.example",
                "x_y.example",
                "a..b",
                "example.com:",
                "example.com:abc",
                "example.com:-1",
                ".example",
                "example.",
                "ex ample.com",
                "exämple.com",
                "\u{212a}.example",
                "\u{130}o.example",
            ],
        )
        .to_string(),
        3 => format!("{}.example", "d".repeat(200 + r.pick(120))),
        _ => {
            let parts = 1 + r.pick(3);
            let mut d = (0..parts)
                .map(|_| {
                    let n = 1 + r.pick(6);
                    run_of(
                        r,
                        &['a', 'B', 'c', '0', '9', '-', 'Z', 'q', '-', 'x', '_'],
                        n,
                    )
                })
                .collect::<Vec<_>>()
                .join(".");
            if clean {
                d = d.replace("-.", "a.").replace(".-", ".a").replace('_', "u");
                d = d.trim_matches('-').to_string();
                if d.is_empty() {
                    d.push('d');
                }
            }
            if r.chance(30) {
                d.push(':');
                d.push_str(if clean {
                    pick(r, &["5000", "0", "80", "443443"])
                } else {
                    pick(r, &["5000", "0", "80", "", "x", "443443"])
                });
            }
            d
        }
    }
}

fn path_component(r: &mut Rng, clean: bool) -> String {
    let mut c = String::new();
    let runs = 1 + r.pick(3);
    for i in 0..runs {
        if clean && i > 0 {
            c.push_str(pick(r, &[".", "_", "__", "-", "--", "---"]));
        } else if !clean && (i > 0 || r.chance(5)) {
            c.push_str(pick(
                r,
                &[
                    ".", "_", "__", "___", "-", "--", "---", "._", "..", "-_", "_-", ".-", "",
                ],
            ));
        }
        let n = 1 + r.pick(5);
        c.push_str(&run_of(r, LOWER, n));
    }
    if clean {
        return c;
    }
    if r.chance(5) {
        c.push_str(pick(r, &[".", "-", "_", "__"]));
    }
    if r.chance(6) {
        let at = r.pick(c.len() + 1);
        c.insert_str(
            at,
            pick(
                r,
                &["A", "Z", "é", "\u{130}", "\u{212a}", " ", "+", "~", "É"],
            ),
        );
    }
    c
}

fn path(r: &mut Rng, clean: bool) -> String {
    match if clean { 2 + r.pick(12) } else { r.pick(14) } {
        // Paths at the 255-character limit, and one over.
        0 => {
            let total = 254 + r.pick(4);
            let mut p = String::new();
            while p.len() < total {
                if !p.is_empty() && r.chance(5) && p.len() + 2 < total {
                    p.push(if r.chance(50) { '/' } else { '.' });
                }
                p.push('p');
            }
            p
        }
        1 => String::new(),
        _ => {
            let parts = 1 + r.pick(4);
            let mut p = (0..parts)
                .map(|_| path_component(r, clean))
                .collect::<Vec<_>>()
                .join("/");
            if clean {
                return p;
            }
            if r.chance(4) {
                p.push('/');
            }
            if r.chance(3) {
                p.insert(0, '/');
            }
            if r.chance(3) {
                p = p.replacen('/', "//", 1);
            }
            p
        }
    }
}

const TAG_CHARS: &[char] = &['a', 'Z', '0', '9', '_', '.', '-', 'v', '1', 'x', 'R', '_'];

fn tag(r: &mut Rng, clean: bool) -> String {
    match if clean { 2 + r.pick(8) } else { r.pick(10) } {
        0 => {
            let n = 126 + r.pick(5);
            let first = pick(r, &["t", "_", "V", "9", ".", "-"]);
            format!("{first}{}", run_of(r, TAG_CHARS, n - 1))
        }
        1 => pick(
            r,
            &[
                "", ".v1", "-v1", "v1/2", "v:1", "v1@", "vé", "v 1", "v1+b", "~1", "*", "latest",
            ],
        )
        .to_string(),
        _ => {
            let first = pick(r, &["v", "V", "_", "1", "latest", "x"]);
            let n = r.pick(6);
            format!("{first}{}", run_of(r, TAG_CHARS, n))
        }
    }
}

const HEX: &[char] = &[
    '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 'a', 'b', 'c', 'd', 'e', 'f',
];
const HEX_MIXED: &[char] = &['0', '9', 'a', 'f', 'A', 'F', 'c', 'D'];

fn digest(r: &mut Rng, clean: bool) -> String {
    if clean {
        let (algorithm, len) = [("sha256", 64), ("sha384", 96), ("sha512", 128)][r.pick(3)];
        return format!("{algorithm}:{}", run_of(r, HEX, len));
    }
    let algorithm = pick(
        r,
        &[
            "sha256",
            "sha256",
            "sha384",
            "sha512",
            "SHA256",
            "Sha512",
            "md5",
            "sha1",
            "sha256+b64",
            "sha256.x",
            "sha-256",
            "blake3",
            "a",
            "a1",
            "1sha",
            "sha256_",
            "",
        ],
    );
    let len = match r.pick(4) {
        0 => *[31usize, 32, 40, 63, 65, 95, 97, 127, 129]
            .get(r.pick(9))
            .unwrap_or(&64),
        _ => *[64usize, 96, 128].get(r.pick(3)).unwrap_or(&64),
    };
    let mut encoded = if r.chance(80) {
        run_of(r, HEX, len)
    } else {
        run_of(r, HEX_MIXED, len)
    };
    if r.chance(5) {
        let at = r.pick(encoded.len() + 1);
        encoded.insert(at, *[&'g', &'=', &'_', &':'][r.pick(4)]);
    }
    format!("{algorithm}:{encoded}")
}

/// A reference built from parts, then sometimes bent out of shape.
fn reference(r: &mut Rng) -> String {
    // Half are built from valid parts only, so that acceptance is well covered too.
    let clean = r.chance(50);
    let mut s = String::new();
    if r.chance(45) {
        s.push_str(&domain(r, clean));
        s.push('/');
    }
    s.push_str(&path(r, clean));
    if r.chance(40) {
        s.push(':');
        s.push_str(&tag(r, clean));
    }
    if r.chance(30) {
        s.push('@');
        s.push_str(&digest(r, clean));
    }
    match if clean { 13 } else { r.pick(14) } {
        0 => {
            let at = r.pick(s.len() + 1);
            if s.is_char_boundary(at) {
                s.insert(at, *[&'@', &':', &'/', &' ', &'\t'][r.pick(5)]);
            }
        }
        1 => {
            if let Some((i, c)) = s.char_indices().nth(r.pick(s.chars().count().max(1))) {
                let upper: String = c.to_uppercase().collect();
                s.replace_range(i..i + c.len_utf8(), &upper);
            }
        }
        2 => s.push_str(pick(r, &["@", ":", "@sha256:", ":@", "\n", " "])),
        3 => s.insert_str(0, pick(r, &["@", ":", " ", "docker://"])),
        _ => {}
    }
    s
}

fn curated() -> Vec<String> {
    let hex = "0123456789abcdef".repeat(4);
    let mut v: Vec<String> = [
        "",
        "my-fn",
        "fn:v1.2_rc-3",
        "registry.example:5000/team/sub/fn:1",
        "Registry-1.example/fn",
        "[fe80::1]:5000/fn",
        "[fe80::1]/fn",
        "a__b.c_d--e",
        "a___b",
        "team/Fn",
        "MyFn:v1",
        "fn:",
        "fn::v1",
        "reg.example//fn",
        "fn/",
        "fn:.v1",
        "fn:v1é",
        "\u{130}mage",
        "\u{212a}ube/fn",
        "gcr.io/kpt-fn/set-namespace:v0.1",
        "ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.2.4",
        "localhost:5000/fn",
        "LOCALHOST:5000/fn",
        "localhost:5000/Fn",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for s in [
        format!("fn:{}", "t".repeat(128)),
        format!("fn:{}", "t".repeat(129)),
        format!("reg.example/{}", "p".repeat(255)),
        format!("reg.example/{}", "p".repeat(256)),
        "p".repeat(256),
        format!("{}.example/fn", "d".repeat(300)),
        format!("reg.example/fn@sha256:{hex}"),
        format!("fn:v2@sha256:{hex}"),
        format!("fn@sha256:{}", &hex[..60]),
        format!("fn@sha256:{}", hex.to_uppercase()),
        format!("fn@md5:{}", &hex[..32]),
        format!("fn@SHA256:{hex}"),
        format!("fn@sha384:{hex}{}", &hex[..32]),
        format!("fn@sha512:{hex}{hex}"),
        format!("Fn@sha256:{}", &hex[..60]),
        format!("{}@sha256:{}", "p".repeat(256), &hex[..60]),
    ] {
        v.push(s);
    }
    v
}

#[test]
fn image_references_parse_as_distribution_reference_parses_them() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let Some(bin) = oracle(tmp.path()) else {
        return;
    };
    let mut inputs = curated();
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..20_000 {
        inputs.push(reference(&mut r));
    }
    assert_agree(&bin, &inputs);
}
