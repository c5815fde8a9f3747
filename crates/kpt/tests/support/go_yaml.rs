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
