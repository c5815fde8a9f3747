//! go-yaml v3's round trip as kpt's YAML goes through it (`yaml.Unmarshal` into a
//! `yaml.Node`, encode with indent 2), as a Go program for [`go_oracle`] to build, and
//! ours to compare with: the text written back, or the error as go-yaml words it.
//! Shared by the YAML differential tests (`#[path]`-included after `go_oracle`).

use kpt::yaml::{SeqIndent, emit_node, parse_stream};

/// The Go side: each document in, its encoding (or `ERR <go-yaml error>`) out.
pub const PROGRAM: &str = r#"package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"gopkg.in/yaml.v3"
)

// Documents arrive separated by a line holding only "\x00"; each answer ends with one.
func main() {
	in, _ := io.ReadAll(bufio.NewReader(os.Stdin))
	for _, doc := range strings.Split(string(in), "\x00\n") {
		if doc == "" {
			continue
		}
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(doc), &n); err != nil {
			fmt.Print("ERR " + err.Error() + "\n\x00\n")
			continue
		}
		var b bytes.Buffer
		e := yaml.NewEncoder(&b)
		e.SetIndent(2)
		if err := e.Encode(&n); err != nil {
			fmt.Print("ERR " + err.Error() + "\n\x00\n")
			continue
		}
		fmt.Print(b.String() + "\x00\n")
	}
}
"#;

/// Our side, in the same form.
pub fn ours(doc: &str) -> String {
    match parse_stream(doc) {
        Ok(docs) => docs
            .iter()
            .map(|d| emit_node(&d.root, SeqIndent::Wide))
            .collect::<Vec<_>>()
            .join("---\n"),
        Err(e) => match e.go_line {
            Some(l) => format!("ERR yaml: line {l}: {}\n", e.message),
            None => format!("ERR yaml: {}\n", e.message),
        },
    }
}

/// Builds [`PROGRAM`] as `name` in `dir`; `None` (the test then passes as skipped, with
/// the message `go_oracle` prints) without Go or the yaml.v3 sources.
pub fn oracle(dir: &std::path::Path, name: &str) -> Option<std::path::PathBuf> {
    super::go_oracle::build(
        dir,
        PROGRAM,
        name,
        "gopkg.in/yaml.v3",
        "golang-go golang-gopkg-yaml.v3-dev",
    )
}

/// Asserts that each case reads and writes back exactly as go-yaml does.
pub fn assert_agree(bin: &std::path::Path, cases: &[&str]) {
    let cases: Vec<String> = cases.iter().map(|s| s.to_string()).collect();
    for (doc, go) in cases.iter().zip(super::go_oracle::answers(bin, &cases)) {
        assert_eq!(ours(doc), go, "input:\n{doc}");
    }
}

/// The documents whose round trip differs from go-yaml's: (input, go-yaml, ours), the
/// first few printed.
pub fn differing(bin: &std::path::Path, docs: &[String]) -> Vec<(String, String, String)> {
    let answers = super::go_oracle::answers(bin, docs);
    let out: Vec<_> = docs
        .iter()
        .zip(answers)
        .filter_map(|(doc, go)| {
            let mine = ours(doc);
            (mine != go).then(|| (doc.clone(), go, mine))
        })
        .collect();
    for (doc, go, mine) in out.iter().take(3) {
        eprintln!("--- input\n{doc:?}\n--- go-yaml\n{go}--- ours\n{mine}");
    }
    out
}
