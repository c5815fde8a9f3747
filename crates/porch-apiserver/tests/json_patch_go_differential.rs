//! Differential test of PATCH with `application/json-patch+json` (RFC 6902) and
//! `application/merge-patch+json` (RFC 7396) against the Go library kube-apiserver applies
//! them with, gopkg.in/evanphx/json-patch.v4.
//!
//! A Go program built at test time mirrors kube-apiserver's `jsonPatcher.applyJSPatch`: the
//! strict decode of the body (fieldValidation `Warn`, the default: into `[]jsonPatchOp` or
//! `map[string]interface{}`, 400 `error decoding patch: …`), `jsonpatch.DecodePatch`, the
//! limit of 10,000 operations (413), `Patch.Apply` (422; kube-apiserver's Status then says
//! only "the server rejected our request due to an error in our request"; the library's own
//! words, which ours gives as the cause, are compared too), `jsonpatch.MergePatch`
//! (`ErrBadJSONPatch` is 400), with
//! `AccumulatedCopySizeLimit` at the generic API server's 3 MiB and a panic of the library
//! answered 500 as kube-apiserver's panic filter answers it. The document it patches is the
//! stored object as kube-apiserver encodes it (integers as int64, other numbers as float64,
//! Go's encoder, which escapes `<`, `>`, `&`).
//!
//! 10,000 generated (document, patch) pairs and curated corners (copies at the 3 MiB limit,
//! 10,000 operations, added nulls, the whole document) go through it and through
//! `porch_apiserver::apply_json_patch`/`apply_merge_patch` (what the PATCH handler calls); the
//! HTTP status, the message and the patched document (as parsed JSON) must agree. Syntax
//! errors are compared word for word too: they are Go's scanner's, which kube-apiserver shows.
//!
//! Which library: kube-apiserver pins json-patch.v4 v4.12.0; Debian packages the repository
//! at v5.2.0 (`golang-github-evanphx-json-patch-dev`), whose top-level package is the v4 line
//! of early 2021. The few changes v4.12.0 made to it that the cases reach are applied to a
//! copy of Debian's sources (see [`overlay`]): negative indices when reading and replacing
//! (Debian's panics), `replace` and `test` of the whole document (path `""`), `test` of a
//! missing member without `value`, paths through an added `null`, and merge patches keeping
//! the nulls of arrays. The strict decode uses Go's encoding/json (kube-apiserver uses
//! sigs.k8s.io/json, a fork with the same errors, which Debian does not package; it matches
//! names case-sensitively, so the cases spell `op`/`path`/`from`/`value` exactly). Go 1.19's
//! encoder writes `\b` and `\f` as `\u0008`, `\u000c` where the Go kube-apiserver is built
//! with writes `\b`, `\f`: stored strings hold neither.
//!
//! Without `go` and the library (`apt-get install golang-go
//! golang-github-evanphx-json-patch-dev`) the test says so and passes as skipped.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

#[path = "../../kpt/tests/support/go_oracle.rs"]
mod go_oracle;

use go_oracle::Rng;

const LIBRARY: &str = "github.com/evanphx/json-patch";
const PACKAGES: &str = "golang-go golang-github-evanphx-json-patch-dev";

const PROGRAM: &str = r#"package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	jsonpatch "github.com/evanphx/json-patch"
	"oracle/handlers"
)

const rejected = "the server rejected our request due to an error in our request"
const panicked = "This request caused apiserver to panic. Look in the logs for details."

type request struct {
	Mode  string `json:"mode"`
	Doc   string `json:"doc"`
	Patch string `json:"patch"`
}

type answer struct {
	Status  int             `json:"status"`
	Message string          `json:"message"`
	Detail  string          `json:"detail,omitempty"`
	Doc     json.RawMessage `json:"doc,omitempty"`
	Also    []int           `json:"also,omitempty"`
}

// The stored object as kube-apiserver encodes it.
func canonical(text string) []byte {
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	var v interface{}
	if err := d.Decode(&v); err != nil {
		panic(err)
	}
	b, err := json.Marshal(numbers(v))
	if err != nil {
		panic(err)
	}
	return b
}

func numbers(v interface{}) interface{} {
	switch t := v.(type) {
	case map[string]interface{}:
		for k, e := range t {
			t[k] = numbers(e)
		}
	case []interface{}:
		for i, e := range t {
			t[i] = numbers(e)
		}
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
		f, _ := t.Float64()
		return f
	}
	return v
}

func once(p jsonpatch.Patch, doc []byte) (a answer) {
	defer func() {
		if r := recover(); r != nil {
			a = answer{Status: 500, Message: panicked, Detail: fmt.Sprint(r)}
		}
	}()
	out, err := p.Apply(doc)
	if err != nil {
		return answer{Status: 422, Message: rejected, Detail: err.Error()}
	}
	return answer{Status: 200, Doc: out}
}

func jsonPatch(doc, body []byte) answer {
	if err := handlers.DecodeJSONPatch(body); err != nil {
		return answer{Status: 400, Message: "error decoding patch: " + err.Error()}
	}
	p, err := jsonpatch.DecodePatch(body)
	if err != nil {
		return answer{Status: 400, Message: err.Error()}
	}
	if len(p) > 10000 {
		return answer{Status: 413, Message: fmt.Sprintf("Request entity too large: The allowed maximum operations in a JSON patch is %d, got %d", 10000, len(p))}
	}
	a := once(p, doc)
	// A failed test may fail or panic depending on Go's map order: collect what else it gives.
	if a.Status != 200 && bytes.Contains(body, []byte(`"test"`)) {
		seen := map[int]bool{a.Status: true}
		for i := 0; i < 60; i++ {
			if b := once(p, doc); !seen[b.Status] {
				seen[b.Status] = true
				a.Also = append(a.Also, b.Status)
			}
		}
	}
	return a
}

func mergePatch(doc, body []byte) answer {
	var m map[string]interface{}
	if err := json.Unmarshal(body, &m); err != nil {
		return answer{Status: 400, Message: "error decoding patch: " + err.Error()}
	}
	out, err := jsonpatch.MergePatch(doc, body)
	if err == jsonpatch.ErrBadJSONPatch {
		return answer{Status: 400, Message: err.Error()}
	}
	if err != nil {
		return answer{Status: 500, Message: err.Error()}
	}
	return answer{Status: 200, Doc: out}
}

func main() {
	// genericapiserver's JSONPatchMaxCopyBytes.
	jsonpatch.AccumulatedCopySizeLimit = 3 * 1024 * 1024
	in, _ := io.ReadAll(os.Stdin)
	for _, text := range strings.Split(string(in), "\x00\n") {
		if text == "" {
			continue
		}
		var r request
		if err := json.Unmarshal([]byte(text), &r); err != nil {
			panic(err)
		}
		var a answer
		if r.Mode == "json" {
			a = jsonPatch(canonical(r.Doc), []byte(r.Patch))
		} else {
			a = mergePatch(canonical(r.Doc), []byte(r.Patch))
		}
		out, err := json.Marshal(a)
		if err != nil {
			panic(err)
		}
		fmt.Print(string(out) + "\x00\n")
	}
}
"#;

/// kube-apiserver's type for the strict decode of a JSON patch (its name is in the errors).
const HANDLERS: &str = r#"package handlers

import "encoding/json"

type jsonPatchOp struct {
	Op    string      `json:"op"`
	Path  string      `json:"path"`
	From  string      `json:"from"`
	Value interface{} `json:"value"`
}

func DecodeJSONPatch(body []byte) error {
	var v []jsonPatchOp
	return json.Unmarshal(body, &v)
}
"#;

/// v4.12.0's array reads and writes, in our words: a negative index counts from the end.
const ARRAY_ACCESS: &str = r#"
func (d *partialArray) get(key string) (*lazyNode, error) {
	idx, err := strconv.Atoi(key)
	if err != nil {
		return nil, err
	}
	if n := len(*d); SupportNegativeIndices && idx < 0 && idx >= -n {
		idx += n
	}
	if idx < 0 || idx >= len(*d) {
		return nil, errors.Wrapf(ErrInvalidIndex, "Unable to access invalid index: %d", idx)
	}
	return (*d)[idx], nil
}

// Only after get has accepted key.
func (d *partialArray) set(key string, val *lazyNode) error {
	idx, err := strconv.Atoi(key)
	if err != nil {
		return err
	}
	if idx < 0 {
		idx += len(*d)
	}
	(*d)[idx] = val
	return nil
}
"#;

/// v4.12.0's `replace` and `test` of the whole document (path `""`), in our words; other
/// paths go to Debian's.
const WHOLE_DOCUMENT: &str = r#"
func (p Patch) replace(doc *container, op Operation) error {
	if path, err := op.Path(); err == nil && path == "" {
		val := op.value()
		if val.which == eRaw && !val.tryDoc() && !val.tryAry() {
			// v4.12.0 wraps the nil error it has there.
			return fmt.Errorf("replace operation value must be object or array: %w", err)
		}
		if val.which == eAry {
			*doc = &val.ary
		} else {
			*doc = &val.doc
		}
		return nil
	}
	return p.replacePath(doc, op)
}

func (p Patch) test(doc *container, op Operation) error {
	if path, err := op.Path(); err == nil && path == "" {
		var whole lazyNode
		switch c := (*doc).(type) {
		case *partialDoc:
			whole.doc, whole.which = *c, eDoc
		case *partialArray:
			whole.ary, whole.which = *c, eAry
		}
		if whole.equal(op.value()) {
			return nil
		}
		return errors.Wrapf(ErrTestFailed, "testing value %s failed", path)
	}
	return p.testPath(doc, op)
}
"#;

/// v4.12.0's merge patch keeps the nulls of arrays (in our words).
const KEEP_ARRAY_NULLS: &str = r#"
func pruneAryNulls(ary *partialArray) *partialArray {
	kept := []*lazyNode{}
	for _, v := range *ary {
		if v != nil {
			pruneNulls(v)
		}
		kept = append(kept, v)
	}
	*ary = kept
	return ary
}
"#;

/// A GOPATH tree with Debian's json-patch brought to what v4.12.0 does for these cases, and
/// kube-apiserver's `jsonPatchOp`.
fn overlay(dir: &Path) -> Option<PathBuf> {
    let debian = Path::new(go_oracle::GOPATH).join("src").join(LIBRARY);
    if !debian.is_dir() {
        eprintln!("skipped: needs the {LIBRARY} sources (apt-get install {PACKAGES})");
        return None;
    }
    let overlay = dir.join("overlay");
    let target = overlay.join("src").join(LIBRARY);
    std::fs::create_dir_all(&target).expect("overlay");
    let edit = |text: &mut String, old: &str, new: &str| {
        assert!(text.contains(old), "Debian's json-patch has no {old:?}");
        *text = text.replacen(old, new, 1);
    };
    for name in ["patch.go", "merge.go", "errors.go"] {
        let mut text = std::fs::read_to_string(debian.join(name)).expect("json-patch source");
        if name == "patch.go" {
            edit(
                &mut text,
                "func (d *partialArray) get(",
                "func (d *partialArray) getDebian(",
            );
            edit(
                &mut text,
                "func (d *partialArray) set(",
                "func (d *partialArray) setDebian(",
            );
            edit(
                &mut text,
                "func (p Patch) replace(",
                "func (p Patch) replacePath(",
            );
            edit(
                &mut text,
                "func (p Patch) test(",
                "func (p Patch) testPath(",
            );
            // Nodes without text (an added null) end a path.
            edit(
                &mut text,
                "if next == nil || ok != nil {",
                "if next == nil || ok != nil || next.raw == nil {",
            );
            // A missing member tested without a value.
            edit(
                &mut text,
                "if op.value().raw == nil {",
                "if op.value() == nil || op.value().raw == nil {",
            );
            text.push_str(ARRAY_ACCESS);
            text.push_str(WHOLE_DOCUMENT);
        } else if name == "merge.go" {
            edit(
                &mut text,
                "func pruneAryNulls(",
                "func pruneAryNullsDebian(",
            );
            text.push_str(KEEP_ARRAY_NULLS);
        }
        std::fs::write(target.join(name), text).expect("write overlay");
    }
    let handlers = overlay.join("src/oracle/handlers");
    std::fs::create_dir_all(&handlers).expect("overlay");
    std::fs::write(handlers.join("handlers.go"), HANDLERS).expect("write overlay");
    Some(overlay)
}

/// Member names: RFC 6901 escapes, array-index look-alikes, the empty name.
const KEYS: &[&str] = &[
    "a", "b", "c", "a/b", "m~n", "~1", "", "0", "-", "01", "é", "<k>",
];

fn scalar(rng: &mut Rng) -> Value {
    match rng.below(24) {
        0 => json!(0),
        1 => json!(1),
        2 => json!(-1),
        3 => json!(2.5),
        4 => json!(-0.5),
        5 => json!(1e-7),
        6 => json!(1e21),
        7 => json!(100),
        8 => json!(9_007_199_254_740_993_i64),
        9 => json!(true),
        10 => json!(false),
        11 | 12 => Value::Null,
        13 => json!(""),
        14 => json!("a"),
        15 => json!("<b>&c"),
        16 => json!("é"),
        17 => json!("line\nbreak"),
        18 => json!("\u{2028}"),
        19 => json!("x/y"),
        20 => json!("~"),
        21 => json!("\u{1}"),
        22 => json!("1"),
        _ => json!(1.5),
    }
}

fn value(rng: &mut Rng, depth: usize) -> Value {
    if depth >= 3 || rng.chance(55) {
        return scalar(rng);
    }
    if rng.chance(50) {
        let mut map = Map::new();
        for _ in 0..rng.below(5) {
            map.insert(rng.pick(KEYS).to_string(), value(rng, depth + 1));
        }
        Value::Object(map)
    } else {
        Value::Array((0..rng.below(5)).map(|_| value(rng, depth + 1)).collect())
    }
}

fn document(rng: &mut Rng) -> Value {
    let mut map = Map::new();
    for _ in 0..2 + rng.below(5) {
        map.insert(rng.pick(KEYS).to_string(), value(rng, 1));
    }
    Value::Object(map)
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Every JSON pointer of a document, with its value.
fn pointers(v: &Value, at: String, out: &mut Vec<(String, Value)>) {
    out.push((at.clone(), v.clone()));
    match v {
        Value::Object(map) => {
            for (k, c) in map {
                pointers(c, format!("{at}/{}", escape(k)), out);
            }
        }
        Value::Array(items) => {
            for (i, c) in items.iter().enumerate() {
                pointers(c, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

fn path(rng: &mut Rng, all: &[(String, Value)]) -> String {
    let (existing, v) = rng.pick(&all[1..]).clone();
    match rng.below(26) {
        0..=11 => existing,
        12 | 13 => {
            let key = KEYS[rng.below(KEYS.len())];
            format!("{existing}/{}", escape(key))
        }
        14..=16 => {
            let arrays: Vec<&(String, Value)> = all.iter().filter(|(_, v)| v.is_array()).collect();
            let Some((at, Value::Array(items))) =
                arrays.get(rng.below(arrays.len().max(1))).copied()
            else {
                return format!("{existing}/-");
            };
            let n = items.len() as i64;
            let index = match rng.below(14) {
                0 => "-".to_string(),
                1 => n.to_string(),
                2 => (n + 1).to_string(),
                3 => "-1".into(),
                4 => (-n).to_string(),
                5 => (-n - 1).to_string(),
                6 => "01".into(),
                7 => "+0".into(),
                8 => "1.0".into(),
                9 => "x".into(),
                10 => " 1".into(),
                11 => "-0".into(),
                12 => "99999999999999999999".into(),
                _ => rng.below(items.len().max(1)).to_string(),
            };
            format!("{at}/{index}")
        }
        17 => String::new(),
        18 => "/".into(),
        19 => existing.replace("~1", "/").replace("~0", "~"),
        20 => existing.trim_start_matches('/').to_string(),
        21 => format!("{existing}/"),
        22 => "/zz/yy".into(),
        23 => format!("x{existing}"),
        24 => format!("{existing}/~2"),
        _ => match v {
            Value::Array(_) => format!("{existing}/0"),
            _ => format!("{existing}/x"),
        },
    }
}

/// A value's text, sometimes spelt another way Go reads alike but compares differently.
fn spelling(rng: &mut Rng, v: &Value) -> String {
    let text = v.to_string();
    match rng.below(13) {
        0..=4 => text,
        5 => text
            .replace('<', "\\u003c")
            .replace('>', "\\u003e")
            .replace('&', "\\u0026")
            .replace('\u{2028}', "\\u2028"),
        6 | 7 if v.is_number() => {
            let alternatives = if text.contains(['.', 'e']) {
                vec![
                    format!("{text}0"),
                    format!("{text}e0"),
                    text.replace('e', "E"),
                ]
            } else {
                vec![
                    format!("{text}.0"),
                    format!("{text}e0"),
                    format!("{text}.00"),
                ]
            };
            rng.pick(&alternatives).clone()
        }
        8 => serde_json::to_string_pretty(v).expect("json"),
        9 => match v.as_str().and_then(|s| s.chars().next()) {
            Some(c) if c.is_ascii_alphanumeric() => {
                format!("\"\\u{:04x}{}", c as u32, &text[2..])
            }
            _ => text,
        },
        10 => match v {
            Value::Object(map) => {
                let members: Vec<String> = map
                    .iter()
                    .rev()
                    .map(|(k, v)| format!("{}: {}", json!(k), v))
                    .collect();
                format!("{{ {} }}", members.join(" , "))
            }
            _ => text,
        },
        11 => text.replace("null", " null "),
        // One member or item changed.
        _ => match v {
            Value::Object(map) if !map.is_empty() => {
                let mut map = map.clone();
                let key = map
                    .keys()
                    .nth(rng.below(map.len()))
                    .cloned()
                    .unwrap_or_default();
                map.insert(key, scalar(rng));
                Value::Object(map).to_string()
            }
            Value::Array(items) if !items.is_empty() => {
                let mut items = items.clone();
                let i = rng.below(items.len());
                items[i] = scalar(rng);
                Value::Array(items).to_string()
            }
            _ => text,
        },
    }
}

fn json_string(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

fn operation(rng: &mut Rng, all: &[(String, Value)]) -> String {
    let special = ["null", "1", "[]", "\"x\"", "{}"];
    if rng.chance(3) {
        return rng.pick(&special).to_string();
    }
    const OPS: &[(&str, usize)] = &[
        ("\"add\"", 20),
        ("\"remove\"", 12),
        ("\"replace\"", 15),
        ("\"move\"", 10),
        ("\"copy\"", 10),
        ("\"test\"", 25),
        ("\"foo\"", 2),
        ("\"\"", 1),
        ("\"Add\"", 1),
        ("", 2),
        ("null", 1),
        ("1", 1),
        ("true", 1),
    ];
    let mut roll = rng.below(OPS.iter().map(|o| o.1).sum());
    let op = OPS
        .iter()
        .find(|(_, w)| {
            let hit = roll < *w;
            roll = roll.saturating_sub(*w);
            hit
        })
        .map_or("\"add\"", |o| o.0);
    let mut members = Vec::new();
    if !op.is_empty() {
        members.push(format!("\"op\":{op}"));
    }
    let mut target = path(rng, all);
    let mut from = path(rng, all);
    if rng.chance(5) {
        // Into its own child.
        target = format!("{from}/x");
    }
    if rng.chance(10) {
        from = target.clone();
    }
    let string_member = |rng: &mut Rng, name: &str, p: &str| match rng.below(200) {
        0..=7 => None,
        8..=13 => Some(format!("\"{name}\":null")),
        14 => Some(format!("\"{name}\":5")),
        15 => Some(format!("\"{name}\":[\"a\"]")),
        _ => Some(format!("\"{name}\":{}", json_string(p))),
    };
    members.extend(string_member(rng, "path", &target));
    let moves = op.contains("move") || op.contains("copy");
    if moves || rng.chance(10) {
        members.extend(string_member(rng, "from", &from));
    }
    if !moves || rng.chance(10) {
        match rng.below(100) {
            0..=6 => {}
            7..=14 => members.push("\"value\":null".into()),
            n => {
                let v = if n < 55 {
                    all.iter()
                        .find(|(p, _)| *p == target)
                        .map_or_else(|| value(rng, 1), |(_, v)| v.clone())
                } else {
                    value(rng, 1)
                };
                members.push(format!("\"value\":{}", spelling(rng, &v)));
            }
        }
    }
    if rng.chance(5) {
        members.push("\"extra\":1".into());
    }
    if rng.chance(3) {
        members.push(format!("\"path\":{}", json_string(&path(rng, all))));
    }
    if rng.chance(15) {
        members.reverse();
    }
    format!("{{{}}}", members.join(","))
}

/// Bodies that are not JSON, or not of the expected shape.
const MALFORMED: &[&str] = &[
    "",
    " ",
    "[",
    "]",
    "{",
    "null",
    "{}",
    "\"x\"",
    "1",
    "true",
    "[]",
    "[1,]",
    "[01]",
    "[-]",
    "[1.]",
    "[1e]",
    "[0.5e+]",
    "[-01]",
    "[tru]",
    "[nul",
    "[fals]",
    "[\"\\x\"]",
    "[\"\\u12G4\"]",
    "[\"a\u{1}\"]",
    "[1]x",
    "[{\"a\":1}}",
    "{\"a\" 1}",
    "{\"a\":1,}",
    "[{1:2}]",
    "[{\"op\":\"add\"} {\"op\":\"add\"}]",
    "\u{feff}[]",
    "[]\n\n ",
    "[\"\u{e9}\" x]",
    "{\"op\":\"add\",\"path\":\"/a\",\"value\":1}",
    "[1e400]",
    "[{\"value\":1e400}]",
    "{\"a\":1e400}",
    "{\"a\":[1,{\"b\":-1e999}]}",
    "[1,null]",
    "[[]]",
    "[\"a\"]",
    "'a'",
    "[\t]",
    "[\r\n{}]",
    "nan",
    "[0x1]",
    "[.5]",
    "[+1]",
    "[\"\\ud800\"]",
];

fn truncated(rng: &mut Rng, body: &str) -> String {
    let mut cut = rng.below(body.len().max(1));
    while !body.is_char_boundary(cut) {
        cut -= 1;
    }
    body[..cut].to_string()
}

/// A document and a `test` of an object holding an array with a null: the library panics
/// when it compares that array, unless it found another member different first (Go's map
/// order decides which).
fn null_in_array(rng: &mut Rng) -> (Value, String) {
    let mut items: Vec<Value> = (0..rng.below(3)).map(|_| scalar(rng)).collect();
    items.insert(rng.below(items.len() + 1), Value::Null);
    let doc = json!({"o": {"arr": items.clone(), "s": 1, "t": "x"}, "p": 2});
    let mut tested = doc["o"].clone();
    match rng.below(5) {
        0 => tested["s"] = json!(2),
        1 => tested["t"] = json!("y"),
        2 => tested["arr"] = json!([]),
        3 => tested = json!(items),
        _ => {}
    }
    let path = if rng.chance(50) || tested.is_array() {
        "/o/arr"
    } else {
        "/o"
    };
    let path = if tested.is_array() { path } else { "/o" };
    let patch = if rng.chance(20) {
        format!(
            "[{{\"op\":\"test\",\"path\":\"\",\"value\":{}}}]",
            json!({"o": tested, "p": 3})
        )
    } else {
        format!("[{{\"op\":\"test\",\"path\":\"{path}\",\"value\":{tested}}}]")
    };
    (doc, patch)
}

fn json_patch_body(rng: &mut Rng, doc: &Value) -> String {
    if rng.chance(3) {
        return rng.pick(MALFORMED).to_string();
    }
    let mut all = Vec::new();
    pointers(doc, String::new(), &mut all);
    let count = *rng.pick(&[1, 1, 1, 1, 1, 2, 2, 2, 3, 4]);
    let ops: Vec<String> = (0..count).map(|_| operation(rng, &all)).collect();
    let body = format!("[{}]", ops.join(","));
    if rng.chance(3) {
        return truncated(rng, &body);
    }
    body
}

/// A merge patch for `doc` (a member of it, or not).
fn merge_value(rng: &mut Rng, doc: Option<&Value>, depth: usize) -> Value {
    match rng.below(100) {
        0..=19 => Value::Null,
        20..=49 => scalar(rng),
        50..=74 if depth < 3 => {
            let mut map = Map::new();
            let existing: Vec<String> = doc
                .and_then(Value::as_object)
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default();
            for _ in 0..1 + rng.below(4) {
                let key = if !existing.is_empty() && rng.chance(60) {
                    rng.pick(&existing).clone()
                } else {
                    rng.pick(KEYS).to_string()
                };
                let inner = doc.and_then(|d| d.get(&key));
                map.insert(key, merge_value(rng, inner, depth + 1));
            }
            Value::Object(map)
        }
        _ => Value::Array(
            (0..rng.below(4))
                .map(|_| match rng.below(3) {
                    0 => Value::Null,
                    1 => merge_value(rng, None, depth + 1),
                    _ => json!({"k": null, "v": scalar(rng)}),
                })
                .collect(),
        ),
    }
}

fn merge_patch_body(rng: &mut Rng, doc: &Value) -> String {
    if rng.chance(4) {
        return rng.pick(MALFORMED).to_string();
    }
    let mut patch = merge_value(rng, Some(doc), 0);
    if !patch.is_object() && rng.chance(85) {
        patch = json!({ rng.pick(KEYS).to_string(): patch });
    }
    let mut body = spelling(rng, &patch);
    if rng.chance(3) {
        // A member twice: the last one counts.
        if let Some(rest) = body.strip_prefix('{').filter(|r| r.len() > 1) {
            body = format!("{{\"a\":{},{rest}", scalar(rng));
        }
    }
    if rng.chance(3) {
        return truncated(rng, &body);
    }
    body
}

struct Case {
    mode: &'static str,
    doc: String,
    patch: String,
}

impl Case {
    fn input(&self) -> String {
        json!({"mode": self.mode, "doc": self.doc, "patch": self.patch}).to_string()
    }
}

/// Cases at the limits (copies adding up to about 3 MiB, 10,000 operations, nesting) and in
/// the library's corners.
fn curated() -> Vec<Case> {
    let mut cases = Vec::new();
    let copies = [r#"{"op":"copy","from":"/x","path":"/x/-"}"#; 11].join(",");
    for (c, lengths) in [('a', 1529..1535), ('<', 253..258)] {
        for n in lengths {
            cases.push(Case {
                mode: "json",
                doc: json!({"x": [c.to_string().repeat(n)]}).to_string(),
                patch: format!("[{copies}]"),
            });
        }
    }
    // Added with spaces, which the copies' sizes do not count.
    for n in 1530..1533 {
        cases.push(Case {
            mode: "json",
            doc: "{}".into(),
            patch: format!(
                "[{{\"op\":\"add\",\"path\":\"/x\",\"value\":[   \"{}\"   ]}},{copies}]",
                "a".repeat(n)
            ),
        });
    }
    for n in [10_000, 10_001] {
        let ops = vec![r#"{"op":"add","path":"/n","value":1}"#; n].join(",");
        cases.push(Case {
            mode: "json",
            doc: "{}".into(),
            patch: format!("[{ops}]"),
        });
    }
    for mode in ["json", "merge"] {
        cases.push(Case {
            mode,
            doc: "{}".into(),
            patch: "[".repeat(10_001),
        });
    }
    // The library's corners: added nulls (nodes without text) and their copies, the whole
    // document, moves into their own children.
    let doc = r#"{"a":{"k":null,"l":[1,null]},"b":[1,2],"s":"<"}"#;
    for patch in [
        r#"[{"op":"add","path":"/n","value":null},{"op":"copy","from":"/n","path":"/m"},{"op":"add","path":"/m/x","value":1}]"#,
        r#"[{"op":"add","path":"/n","value":null},{"op":"copy","from":"/n","path":"/m"},{"op":"test","path":"/m","value":{}}]"#,
        r#"[{"op":"add","path":"/n","value":null},{"op":"copy","from":"/n","path":"/m"},{"op":"test","path":"/m/x"}]"#,
        r#"[{"op":"add","path":"/n","value":null},{"op":"add","path":"/n/x","value":1}]"#,
        r#"[{"op":"add","path":"/n","value":null},{"op":"test","path":"/n","value":null}]"#,
        r#"[{"op":"add","path":"/n","value":null},{"op":"test","path":"/n"}]"#,
        r#"[{"op":"test","path":"/a/k"}]"#,
        r#"[{"op":"test","path":"/a/zz"}]"#,
        r#"[{"op":"test","path":"/a/zz","value":null}]"#,
        r#"[{"op":"test","path":"/a","value":{"k":null,"l":[1,null]}}]"#,
        r#"[{"op":"test","path":"/a","value":{"k":null,"l":[2,null]}}]"#,
        r#"[{"op":"add","path":"/a/k","value":null},{"op":"test","path":"/a","value":{"k":null,"l":[1]}}]"#,
        r#"[{"op":"copy","from":"/a","path":"/c"},{"op":"test","path":"/c/k","value":null}]"#,
        r#"[{"op":"copy","from":"/s","path":"/t"},{"op":"test","path":"/t","value":"<"}]"#,
        r#"[{"op":"copy","from":"/s","path":"/t"},{"op":"test","path":"/t","value":"<"}]"#,
        r#"[{"op":"add","path":"/t","value":"<"},{"op":"copy","from":"/t","path":"/u"},{"op":"test","path":"/u","value":"<"}]"#,
        r#"[{"op":"replace","path":"","value":[1,{"x":2}]},{"op":"add","path":"/1/y","value":3},{"op":"test","path":"","value":[1,{"x":2,"y":3}]}]"#,
        r#"[{"op":"replace","path":"","value":"x"}]"#,
        r#"[{"op":"replace","path":"","value":null}]"#,
        r#"[{"op":"replace","path":""}]"#,
        r#"[{"op":"test","path":""}]"#,
        r#"[{"op":"test","path":"","value":null}]"#,
        r#"[{"op":"move","from":"/a","path":"/a/x"}]"#,
        r#"[{"op":"move","from":"/b/-1","path":"/b/0"}]"#,
        r#"[{"op":"replace","path":"/b/-2","value":0}]"#,
        r#"[{"op":"copy","from":"/zz","path":"/c"}]"#,
        r#"[{"op":"replace","path":"/zz","value":1}]"#,
        r#"[{"op":"add","path":"a/b/x","value":1}]"#,
        r#"[{"op":"remove","path":"/b/-0"}]"#,
        "null",
        "[null]",
    ] {
        cases.push(Case {
            mode: "json",
            doc: doc.into(),
            patch: patch.into(),
        });
    }
    for patch in [
        r#"{"s":{"x":null,"y":[{"z":null},null]}}"#,
        r#"{"a":[{"z":null},null]}"#,
        r#"{"a":{"k":{"x":null,"y":1},"l":null}}"#,
        r#"{"zz":null,"b":null}"#,
        "null",
    ] {
        cases.push(Case {
            mode: "merge",
            doc: doc.into(),
            patch: patch.into(),
        });
    }
    cases
}

fn cases() -> Vec<Case> {
    let mut rng = Rng(0x5eed_7a7c_4e5f_0001);
    let mut cases = curated();
    for i in 0..10_000 {
        let mut doc = document(&mut rng);
        let (mode, patch) = if i % 50 == 0 {
            let (d, patch) = null_in_array(&mut rng);
            doc = d;
            ("json", patch)
        } else if i % 10 < 7 {
            ("json", json_patch_body(&mut rng, &doc))
        } else {
            ("merge", merge_patch_body(&mut rng, &doc))
        };
        cases.push(Case {
            mode,
            doc: doc.to_string(),
            patch,
        });
    }
    cases
}

#[derive(Debug, serde::Deserialize)]
struct GoAnswer {
    status: u16,
    message: String,
    #[serde(default)]
    detail: String,
    #[serde(default)]
    doc: Option<Value>,
    #[serde(default)]
    also: Vec<u16>,
}

/// Ours: status, message, document, and the library's words (a 422's cause).
fn ours(case: &Case) -> (u16, String, Option<Value>, String) {
    let doc: Value = serde_json::from_str(&case.doc).expect("document");
    let result = if case.mode == "json" {
        porch_apiserver::apply_json_patch(&doc, case.patch.as_bytes())
    } else {
        porch_apiserver::apply_merge_patch(&doc, case.patch.as_bytes())
    };
    match result {
        Ok(v) => (200, String::new(), Some(v), String::new()),
        Err(e) => {
            let detail = e
                .details
                .as_ref()
                .and_then(|d| d.causes.first())
                .and_then(|c| c.message.strip_prefix("JSON patch failed: "))
                .unwrap_or_default()
                .to_string();
            (e.code_and_reason().0, e.message, None, detail)
        }
    }
}

fn shorten(s: &str) -> String {
    if s.len() <= 300 {
        return s.to_string();
    }
    let mut cut = 300;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}… ({} bytes)", &s[..cut], s.len())
}

#[test]
fn json_and_merge_patches_apply_as_kube_apiserver_applies_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let Some(overlay) = overlay(dir.path()) else {
        return;
    };
    let Some(bin) = go_oracle::build_with(
        dir.path(),
        PROGRAM,
        "json-patch-oracle",
        LIBRARY,
        PACKAGES,
        Some(&overlay),
    ) else {
        return;
    };
    let cases = cases();
    let inputs: Vec<String> = cases.iter().map(Case::input).collect();
    let answers = go_oracle::answers(&bin, &inputs);
    let mut differ = Vec::new();
    let mut statuses = BTreeSet::new();
    for (case, answer) in cases.iter().zip(&answers) {
        let go: GoAnswer = serde_json::from_str(answer).expect("oracle answer");
        let (status, message, doc, detail) = ours(case);
        statuses.insert((case.mode, go.status));
        let same = if status == go.status {
            // The library's words, which kube-apiserver logs and ours shows as the cause.
            let words = status != 422 || detail == go.detail;
            message == go.message && doc == go.doc && words
        } else {
            // Go's map order decides between these; ours is one of them.
            go.also.contains(&status)
        };
        if !same {
            differ.push((case, go, (status, message, doc, detail)));
        }
    }
    let mut report = String::new();
    for (case, go, (status, message, doc, detail)) in differ.iter().take(20) {
        let _ = writeln!(
            report,
            "{} doc {}\n  patch {}\n  go:   {} {:?} {} {:?}{}\n  ours: {status} {message:?} {} {detail:?}",
            case.mode,
            shorten(&case.doc),
            shorten(&case.patch),
            go.status,
            go.message,
            go.doc
                .as_ref()
                .map_or(String::new(), |d| shorten(&d.to_string())),
            go.detail,
            if go.also.is_empty() {
                String::new()
            } else {
                format!(" (or {:?})", go.also)
            },
            doc.as_ref()
                .map_or(String::new(), |d| shorten(&d.to_string())),
        );
    }
    assert!(
        differ.is_empty(),
        "{} of {} patches differ from kube-apiserver's library:\n{report}",
        differ.len(),
        cases.len()
    );
    // The copies straddle the limit.
    let copies: BTreeSet<u16> = answers[..14]
        .iter()
        .map(|a| serde_json::from_str::<GoAnswer>(a).expect("answer").status)
        .collect();
    assert_eq!(copies, BTreeSet::from([200, 422]), "copy limit cases");
    // The cases reach every outcome.
    for want in [
        ("json", 200),
        ("json", 400),
        ("json", 413),
        ("json", 422),
        ("json", 500),
    ] {
        assert!(
            statuses.contains(&want),
            "no case answered {want:?}: {statuses:?}"
        );
    }
    for want in [("merge", 200), ("merge", 400)] {
        assert!(
            statuses.contains(&want),
            "no case answered {want:?}: {statuses:?}"
        );
    }
}
