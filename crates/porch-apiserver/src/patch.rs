//! PATCH bodies: JSON patch (RFC 6902) and JSON merge patch (RFC 7396) applied as
//! kube-apiserver applies them, strategic merge patch (as a merge patch after removing its `$`
//! directives). Server-side apply bodies are parsed here and applied by `crate::apply` (field
//! ownership, pruning, conflicts).
//!
//! kube-apiserver (`handlers/patch.go`, `jsonPatcher.applyJSPatch`) applies a JSON patch or a
//! merge patch to the JSON encoding of the stored object with gopkg.in/evanphx/json-patch.v4
//! (v4.12.0), after decoding the body strictly (fieldValidation `Warn`, the default, and
//! `Strict`). What clients see of it is followed here, RFC or not:
//!
//! - a body that is not JSON, or of the wrong shape (a JSON patch that is not an array of
//!   objects whose `op`/`path`/`from` are strings, a merge patch that is not an object), is 400
//!   `error decoding patch: <Go's encoding/json error>`; a merge patch `null` is 400
//!   `Invalid JSON Patch`; a JSON patch `null` changes nothing; more than 10,000 operations is
//!   413;
//! - an operation that does not apply is 422 with kube-apiserver's one message for all of them
//!   ([`REJECTED`]); kube-apiserver keeps the library's own words to itself, ours gives them as
//!   the Status's cause (`JSON patch failed: …`);
//! - the library's rules: array indices as Go's `strconv.Atoi` reads them (`+1`, `01`) and
//!   negative ones counted from the end; a path's first segment is not read (`a/b` is `/b`), `""`
//!   is the whole document for `replace` and `test` only; `replace` of a missing member adds
//!   it; `copy` or `test` of a missing member reads null; a missing `value` is null, except
//!   that `test` then fails on anything but null; `test` compares numbers and strings by their
//!   text (`1` is not `1.0`, `"<"` is not the stored `"\u003c"`: Go escapes `<`, `>`, `&` when
//!   it encodes the object) and an added `null` differs from a stored one; copies add up to at
//!   most 3 MiB (`JSONPatchMaxCopyBytes`);
//! - the bodies that make the library panic (`test` of an array holding a null, or of the whole
//!   document without `value`; `replace` of the whole document without `value`; writing into
//!   the copy of an added `null`) are 500, as kube-apiserver's panic filter answers;
//! - a merge patch removes nulls from what it adds, also from objects inside added arrays when
//!   the member it replaces was not an object.
//!
//! Different: fieldValidation `Ignore` (which skips the strict decode on kube-apiserver) is
//! treated as `Warn`; unknown and duplicate fields in a body give no warning (and `Strict`
//! does not refuse them); bodies nested deeper than 128 levels are refused (Go: 10,000); the
//! 500 of a panic is a Status (kube-apiserver's is plain text); where Go's random map order
//! decides (a `test` that finds both a member that differs and one that panics), ours takes
//! the object's order.

use std::ops::Deref;

use serde_json::{Map, Value};

use crate::error::{ApiError, Details, FieldError};

/// kube-apiserver's `maxJSONPatchOperations`.
const MAX_OPERATIONS: usize = 10_000;
/// `jsonpatch.AccumulatedCopySizeLimit` as the generic API server sets it
/// (`JSONPatchMaxCopyBytes`, 3 MiB).
const MAX_COPY_BYTES: usize = 3 * 1024 * 1024;
/// kube-apiserver's 422 for every JSON patch that does not apply: it builds the Status with
/// `NewGenericServerResponse`, which keeps none of the library's own words.
const REJECTED: &str = "the server rejected our request due to an error in our request";
/// kube-apiserver's answer (`WithPanicRecovery`) to the bodies that make the library panic.
const PANICKED: &str = "This request caused apiserver to panic. Look in the logs for details.";
/// How deep a JSON or merge patch body may nest (stored objects are read back with
/// serde_json's limit of 128).
const MAX_DEPTH: usize = 128;

/// The patch flavours, from the request's Content-Type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    Merge,
    Json,
    Strategic,
    Apply,
}

impl PatchType {
    pub fn from_content_type(ct: &str) -> Result<Self, ApiError> {
        match crate::rest::media_type(ct).as_str() {
            "application/merge-patch+json" => Ok(PatchType::Merge),
            "application/json-patch+json" => Ok(PatchType::Json),
            "application/strategic-merge-patch+json" => Ok(PatchType::Strategic),
            "application/apply-patch+yaml" | "application/apply-patch+json" => Ok(PatchType::Apply),
            // kube-apiserver's words (negotiation.NewUnsupportedMediaTypeError).
            _ => Err(ApiError::unsupported_media_type(
                "the body of the request was in an unknown format - accepted media types include: \
                 application/json-patch+json, application/merge-patch+json, \
                 application/apply-patch+yaml, application/strategic-merge-patch+json",
            )),
        }
    }
}

/// A PATCH body as read. JSON and merge patches are applied from its bytes, and their errors
/// come when they are applied (after the object was read, as on kube-apiserver); the handler
/// reads the JSON value for its own checks (`Null` when a JSON or merge patch is not JSON).
#[derive(Debug, Clone)]
pub struct PatchBody {
    bytes: Vec<u8>,
    value: Value,
}

impl Deref for PatchBody {
    type Target = Value;
    fn deref(&self) -> &Value {
        &self.value
    }
}

impl From<PatchBody> for Value {
    fn from(body: PatchBody) -> Value {
        body.value
    }
}

/// Reads a patch body (JSON, or YAML for apply).
pub fn parse_body(kind: PatchType, body: &[u8]) -> Result<PatchBody, ApiError> {
    let value = match kind {
        PatchType::Apply => serde_yaml::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?,
        PatchType::Strategic => serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?,
        PatchType::Json | PatchType::Merge => serde_json::from_slice(body).unwrap_or(Value::Null),
    };
    Ok(PatchBody {
        bytes: body.to_vec(),
        value,
    })
}

/// Applies `patch` to `target` in place.
pub fn apply(kind: PatchType, target: &mut Value, patch: &PatchBody) -> Result<(), ApiError> {
    match kind {
        PatchType::Json => *target = apply_json_patch(target, &patch.bytes)?,
        PatchType::Merge => *target = apply_merge_patch(target, &patch.bytes)?,
        PatchType::Apply => json_patch::merge(target, &patch.value),
        PatchType::Strategic => json_patch::merge(target, &strip_directives(&patch.value)),
    }
    Ok(())
}

/// A JSON patch body (`application/json-patch+json`) applied to `target` as kube-apiserver
/// applies it (see the module's notes); what the handler answers when it does not apply.
pub fn apply_json_patch(target: &Value, body: &[u8]) -> Result<Value, ApiError> {
    let ops = gojson::parse(body)
        .and_then(|j| gojson::check_json_patch(&j).map(|()| j))
        .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
    let ops: &[gojson::J] = match &ops {
        gojson::J::Arr(items) => items,
        _ => &[],
    };
    if ops.len() > MAX_OPERATIONS {
        return Err(ApiError::too_large(format!(
            "Request entity too large: The allowed maximum operations in a JSON patch is \
             {MAX_OPERATIONS}, got {}",
            ops.len()
        )));
    }
    evanphx::apply(target, ops).map_err(|failure| match failure {
        // kube-apiserver's Status has no causes; ours names the library's reason in one.
        evanphx::Failure::Error(detail) => {
            let mut e = ApiError::new(porch_core::ErrorKind::Invalid, REJECTED);
            e.details = Some(Box::new(Details {
                causes: vec![FieldError {
                    reason: "FieldValueInvalid",
                    field: String::new(),
                    message: format!("JSON patch failed: {detail}"),
                }],
                ..Details::default()
            }));
            e
        }
        evanphx::Failure::Panic(what) => {
            tracing::debug!(what, "JSON patch that makes kube-apiserver's library panic");
            ApiError::internal(PANICKED)
        }
    })
}

/// A merge patch body (`application/merge-patch+json`) applied to `target` as kube-apiserver
/// applies it (see the module's notes).
pub fn apply_merge_patch(target: &Value, body: &[u8]) -> Result<Value, ApiError> {
    let decoded = gojson::parse(body)
        .and_then(|j| gojson::check_merge_patch(&j).map(|()| j))
        .and_then(|j| j.to_value())
        .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
    let Value::Object(patch) = decoded else {
        return Err(ApiError::bad_request("Invalid JSON Patch"));
    };
    match target {
        Value::Object(doc) => {
            let mut doc = doc.clone();
            merge_members(&mut doc, patch);
            Ok(Value::Object(doc))
        }
        Value::Null => Err(ApiError::internal("Invalid JSON Document")),
        // Not an object: the library answers the patch.
        _ => Ok(prune_nulls(Value::Object(patch))),
    }
}

/// evanphx's `mergeDocs`: a null deletes; a member that was missing or null takes the patch's
/// value without its nulls; an object merges into an object.
fn merge_members(doc: &mut Map<String, Value>, patch: Map<String, Value>) {
    for (key, value) in patch {
        if value.is_null() {
            doc.shift_remove(&key);
            continue;
        }
        match doc.get_mut(&key) {
            Some(current) if !current.is_null() => {
                let old = std::mem::take(current);
                *current = match (old, value) {
                    (Value::Object(mut old), Value::Object(value)) => {
                        merge_members(&mut old, value);
                        Value::Object(old)
                    }
                    // An object replaced by anything else: as sent, nulls and all.
                    (Value::Object(_), value) => value,
                    (_, value) => prune_nulls(value),
                };
            }
            _ => {
                doc.insert(key, prune_nulls(value));
            }
        }
    }
}

/// evanphx's `pruneNulls`: the null members of objects go, at any depth, also inside arrays;
/// the null items of arrays stay.
fn prune_nulls(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, prune_nulls(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(prune_nulls).collect()),
        other => other,
    }
}

/// JSON as Go's encoding/json reads and writes it: its syntax errors, its type errors for the
/// shapes kube-apiserver decodes a patch into, and its encoding of the stored object.
mod gojson {
    use serde_json::{Map, Value};

    use super::MAX_DEPTH;

    /// A JSON value read as `json.RawMessage`s are: numbers, strings and booleans keep the text
    /// they were written with.
    #[derive(Debug)]
    pub(super) enum J {
        Null,
        /// A number, string (quoted, escapes as written) or boolean, as written.
        Scalar(Vec<u8>),
        Arr(Vec<J>),
        /// Members in order, duplicates kept: the key, the length of the key as written once
        /// compacted, the value.
        Obj(Vec<(String, usize, J)>),
    }

    impl J {
        fn is_string(&self) -> bool {
            matches!(self, J::Scalar(t) if t.first() == Some(&b'"'))
        }

        /// The kind Go names in an `UnmarshalTypeError`.
        fn go_kind(&self) -> &'static str {
            match self {
                J::Null => "null",
                J::Scalar(t) => match t.first() {
                    Some(b'"') => "string",
                    Some(b't' | b'f') => "bool",
                    _ => "number",
                },
                J::Arr(_) => "array",
                J::Obj(_) => "object",
            }
        }

        /// The length of this value's text once compacted by Go's encoder (which escapes
        /// `<`, `>`, `&`, U+2028 and U+2029).
        pub(super) fn compact_len(&self) -> usize {
            match self {
                J::Null => 4,
                J::Scalar(t) => html_len(t),
                J::Arr(items) => {
                    2 + items.len().saturating_sub(1)
                        + items.iter().map(J::compact_len).sum::<usize>()
                }
                J::Obj(members) => {
                    2 + members.len().saturating_sub(1)
                        + members
                            .iter()
                            .map(|(_, k, v)| k + 1 + v.compact_len())
                            .sum::<usize>()
                }
            }
        }

        pub(super) fn to_value(&self) -> Result<Value, String> {
            Ok(match self {
                J::Null => Value::Null,
                J::Scalar(t) => scalar_value(t)?,
                J::Arr(items) => {
                    Value::Array(items.iter().map(J::to_value).collect::<Result<_, _>>()?)
                }
                J::Obj(members) => {
                    let mut map = Map::new();
                    for (k, _, v) in members {
                        map.insert(k.clone(), v.to_value()?);
                    }
                    Value::Object(map)
                }
            })
        }
    }

    /// The value of a scalar's text.
    pub(super) fn scalar_value(text: &[u8]) -> Result<Value, String> {
        match text.first() {
            Some(b'"') => Ok(Value::String(unquote(text))),
            Some(b't') => Ok(Value::Bool(true)),
            Some(b'f') => Ok(Value::Bool(false)),
            _ => std::str::from_utf8(text)
                .ok()
                .and_then(|t| serde_json::from_str(t).ok())
                .ok_or_else(|| {
                    format!(
                        "json: cannot unmarshal number {} into Go value of type float64",
                        String::from_utf8_lossy(text)
                    )
                }),
        }
    }

    /// Reads a body: Go's syntax check (`checkValid`), then the value.
    pub(super) fn parse(data: &[u8]) -> Result<J, String> {
        check_syntax(data)?;
        Reader { s: data, i: 0 }.value(0)
    }

    /// The type errors of kjson.UnmarshalStrict into kube-apiserver's `[]jsonPatchOp` (the
    /// first one in the body).
    pub(super) fn check_json_patch(j: &J) -> Result<(), String> {
        let items = match j {
            J::Null => return Ok(()),
            J::Arr(items) => items,
            other => {
                return Err(format!(
                    "json: cannot unmarshal {} into Go value of type []handlers.jsonPatchOp",
                    other.go_kind()
                ));
            }
        };
        for item in items {
            match item {
                J::Null => {}
                J::Obj(members) => {
                    for (key, _, v) in members {
                        match key.as_str() {
                            "op" | "path" | "from" if !matches!(v, J::Null) && !v.is_string() => {
                                return Err(format!(
                                    "json: cannot unmarshal {} into Go struct field \
                                     jsonPatchOp.{key} of type string",
                                    v.go_kind()
                                ));
                            }
                            "value" => check_numbers(v, "Go struct field jsonPatchOp.value")?,
                            _ => {}
                        }
                    }
                }
                other => {
                    return Err(format!(
                        "json: cannot unmarshal {} into Go value of type handlers.jsonPatchOp",
                        other.go_kind()
                    ));
                }
            }
        }
        Ok(())
    }

    /// The type errors of kjson.UnmarshalStrict into `map[string]interface{}`.
    pub(super) fn check_merge_patch(j: &J) -> Result<(), String> {
        match j {
            J::Null => Ok(()),
            J::Obj(members) => {
                for (_, _, v) in members {
                    check_numbers(v, "Go value")?;
                }
                Ok(())
            }
            other => Err(format!(
                "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                other.go_kind()
            )),
        }
    }

    /// Numbers read into `interface{}` become float64 (or int64): one too large is an error.
    fn check_numbers(j: &J, place: &str) -> Result<(), String> {
        match j {
            J::Scalar(t) if !matches!(t.first(), Some(b'"' | b't' | b'f')) => {
                let text = String::from_utf8_lossy(t);
                if text.parse::<f64>().map_or(true, f64::is_infinite) {
                    return Err(format!(
                        "json: cannot unmarshal number {text} into {place} of type float64"
                    ));
                }
                Ok(())
            }
            J::Arr(items) => items.iter().try_for_each(|v| check_numbers(v, place)),
            J::Obj(members) => members
                .iter()
                .try_for_each(|(_, _, v)| check_numbers(v, place)),
            _ => Ok(()),
        }
    }

    /// Reads a body that passed [`check_syntax`].
    struct Reader<'a> {
        s: &'a [u8],
        i: usize,
    }

    impl Reader<'_> {
        fn peek(&self) -> u8 {
            self.s.get(self.i).copied().unwrap_or(0)
        }

        fn space(&mut self) {
            while matches!(self.peek(), b' ' | b'\t' | b'\r' | b'\n') {
                self.i += 1;
            }
        }

        fn value(&mut self, depth: usize) -> Result<J, String> {
            self.space();
            let start = self.i;
            match self.peek() {
                open @ (b'{' | b'[') => {
                    if depth == MAX_DEPTH {
                        return Err(format!(
                            "invalid character {} exceeded max depth",
                            quote_char(open)
                        ));
                    }
                    let close = if open == b'{' { b'}' } else { b']' };
                    self.i += 1;
                    self.space();
                    let mut items = Vec::new();
                    let mut members = Vec::new();
                    if self.peek() == close {
                        self.i += 1;
                    } else {
                        while self.i < self.s.len() {
                            if open == b'{' {
                                self.space();
                                let k = self.i;
                                self.string();
                                let key = &self.s[k..self.i];
                                self.space();
                                self.i += 1; // ':'
                                let v = self.value(depth + 1)?;
                                members.push((unquote(key), html_len(key), v));
                            } else {
                                items.push(self.value(depth + 1)?);
                            }
                            self.space();
                            let sep = self.peek();
                            self.i += 1;
                            if sep == close {
                                break;
                            }
                        }
                    }
                    Ok(if open == b'{' {
                        J::Obj(members)
                    } else {
                        J::Arr(items)
                    })
                }
                b'"' => {
                    self.string();
                    Ok(J::Scalar(self.s[start..self.i].to_vec()))
                }
                b'n' => {
                    self.i += 4;
                    Ok(J::Null)
                }
                _ => {
                    // A number, `true` or `false` (checked): up to what ends a value.
                    while !matches!(
                        self.peek(),
                        0 | b',' | b']' | b'}' | b' ' | b'\t' | b'\r' | b'\n'
                    ) {
                        self.i += 1;
                    }
                    Ok(J::Scalar(self.s[start..self.i].to_vec()))
                }
            }
        }

        /// Past a string (at its opening quote).
        fn string(&mut self) {
            self.i += 1;
            while self.i < self.s.len() && self.s[self.i] != b'"' {
                self.i += if self.s[self.i] == b'\\' { 2 } else { 1 };
            }
            self.i = (self.i + 1).min(self.s.len());
        }
    }

    /// Go's `checkValid`: the first syntax error, in Go's words.
    fn check_syntax(data: &[u8]) -> Result<(), String> {
        let mut scanner = Scanner {
            state: State::BeginValue,
            stack: Vec::new(),
            end_top: false,
        };
        for &c in data {
            scanner.step(c)?;
        }
        if scanner.end_top {
            return Ok(());
        }
        // At the end Go reads one more space: it ends a number or a top-level value.
        scanner.step(b' ')?;
        if scanner.end_top {
            Ok(())
        } else {
            Err("unexpected end of JSON input".into())
        }
    }

    /// Where a value being scanned stands.
    #[derive(Debug, Clone, Copy)]
    enum Nest {
        Key,
        Value,
        Item,
    }

    /// The states of Go's scanner (`encoding/json/scanner.go`).
    #[derive(Debug, Clone, Copy)]
    enum State {
        BeginValue,
        BeginValueOrEmpty,
        BeginStringOrEmpty,
        BeginString,
        InString,
        Escape,
        EscapeU(u8),
        Minus,
        Zero,
        Digits,
        Dot,
        Fraction,
        Exponent,
        ExponentSign,
        ExponentDigits,
        Literal(&'static str, usize),
        EndValue,
        EndTop,
    }

    struct Scanner {
        state: State,
        stack: Vec<Nest>,
        end_top: bool,
    }

    impl Scanner {
        fn step(&mut self, c: u8) -> Result<(), String> {
            let space = matches!(c, b' ' | b'\t' | b'\r' | b'\n');
            let invalid = |context: &str| format!("invalid character {} {context}", quote_char(c));
            loop {
                match self.state {
                    State::BeginValueOrEmpty => {
                        if space {
                            return Ok(());
                        }
                        self.state = if c == b']' {
                            State::EndValue
                        } else {
                            State::BeginValue
                        };
                    }
                    State::BeginValue => {
                        if space {
                            return Ok(());
                        }
                        self.state = match c {
                            b'{' => {
                                self.push(Nest::Key, c)?;
                                State::BeginStringOrEmpty
                            }
                            b'[' => {
                                self.push(Nest::Item, c)?;
                                State::BeginValueOrEmpty
                            }
                            b'"' => State::InString,
                            b'-' => State::Minus,
                            b'0' => State::Zero,
                            b'1'..=b'9' => State::Digits,
                            b't' => State::Literal("true", 1),
                            b'f' => State::Literal("false", 1),
                            b'n' => State::Literal("null", 1),
                            _ => return Err(invalid("looking for beginning of value")),
                        };
                        return Ok(());
                    }
                    State::BeginStringOrEmpty => {
                        if space {
                            return Ok(());
                        }
                        if c == b'}' {
                            if let Some(top) = self.stack.last_mut() {
                                *top = Nest::Value;
                            }
                            self.state = State::EndValue;
                        } else {
                            self.state = State::BeginString;
                        }
                    }
                    State::BeginString => {
                        if space {
                            return Ok(());
                        }
                        if c != b'"' {
                            return Err(invalid("looking for beginning of object key string"));
                        }
                        self.state = State::InString;
                        return Ok(());
                    }
                    State::InString => {
                        match c {
                            b'"' => self.state = State::EndValue,
                            b'\\' => self.state = State::Escape,
                            0..=0x1f => return Err(invalid("in string literal")),
                            _ => {}
                        }
                        return Ok(());
                    }
                    State::Escape => {
                        self.state = match c {
                            b'b' | b'f' | b'n' | b'r' | b't' | b'\\' | b'/' | b'"' => {
                                State::InString
                            }
                            b'u' => State::EscapeU(0),
                            _ => return Err(invalid("in string escape code")),
                        };
                        return Ok(());
                    }
                    State::EscapeU(n) => {
                        if !c.is_ascii_hexdigit() {
                            return Err(invalid("in \\u hexadecimal character escape"));
                        }
                        self.state = if n == 3 {
                            State::InString
                        } else {
                            State::EscapeU(n + 1)
                        };
                        return Ok(());
                    }
                    State::Minus => {
                        self.state = match c {
                            b'0' => State::Zero,
                            b'1'..=b'9' => State::Digits,
                            _ => return Err(invalid("in numeric literal")),
                        };
                        return Ok(());
                    }
                    State::Digits if c.is_ascii_digit() => return Ok(()),
                    State::Digits | State::Zero => match c {
                        b'.' => {
                            self.state = State::Dot;
                            return Ok(());
                        }
                        b'e' | b'E' => {
                            self.state = State::Exponent;
                            return Ok(());
                        }
                        _ => self.state = State::EndValue,
                    },
                    State::Dot => {
                        if !c.is_ascii_digit() {
                            return Err(invalid("after decimal point in numeric literal"));
                        }
                        self.state = State::Fraction;
                        return Ok(());
                    }
                    State::Fraction => match c {
                        b'0'..=b'9' => return Ok(()),
                        b'e' | b'E' => {
                            self.state = State::Exponent;
                            return Ok(());
                        }
                        _ => self.state = State::EndValue,
                    },
                    State::Exponent => {
                        self.state = State::ExponentSign;
                        if c == b'+' || c == b'-' {
                            return Ok(());
                        }
                    }
                    State::ExponentSign => {
                        if !c.is_ascii_digit() {
                            return Err(invalid("in exponent of numeric literal"));
                        }
                        self.state = State::ExponentDigits;
                        return Ok(());
                    }
                    State::ExponentDigits => {
                        if c.is_ascii_digit() {
                            return Ok(());
                        }
                        self.state = State::EndValue;
                    }
                    State::Literal(word, i) => {
                        let want = word.as_bytes()[i];
                        if c != want {
                            return Err(invalid(&format!(
                                "in literal {word} (expecting {})",
                                quote_char(want)
                            )));
                        }
                        self.state = if i + 1 == word.len() {
                            State::EndValue
                        } else {
                            State::Literal(word, i + 1)
                        };
                        return Ok(());
                    }
                    State::EndValue => {
                        let Some(top) = self.stack.last_mut() else {
                            self.end_top = true;
                            self.state = State::EndTop;
                            continue;
                        };
                        if space {
                            return Ok(());
                        }
                        match (*top, c) {
                            (Nest::Key, b':') => {
                                *top = Nest::Value;
                                self.state = State::BeginValue;
                            }
                            (Nest::Key, _) => return Err(invalid("after object key")),
                            (Nest::Value, b',') => {
                                *top = Nest::Key;
                                self.state = State::BeginString;
                            }
                            (Nest::Item, b',') => self.state = State::BeginValue,
                            (Nest::Value, b'}') | (Nest::Item, b']') => self.pop(),
                            (Nest::Value, _) => return Err(invalid("after object key:value pair")),
                            (Nest::Item, _) => return Err(invalid("after array element")),
                        }
                        return Ok(());
                    }
                    State::EndTop => {
                        if !space {
                            return Err(invalid("after top-level value"));
                        }
                        return Ok(());
                    }
                }
            }
        }

        fn push(&mut self, nest: Nest, c: u8) -> Result<(), String> {
            self.stack.push(nest);
            if self.stack.len() > 10_000 {
                return Err(format!(
                    "invalid character {} exceeded max depth",
                    quote_char(c)
                ));
            }
            Ok(())
        }

        fn pop(&mut self) {
            self.stack.pop();
            if self.stack.is_empty() {
                self.end_top = true;
                self.state = State::EndTop;
            } else {
                self.state = State::EndValue;
            }
        }
    }

    /// Go's `quoteChar`: a byte in single quotes, as `strconv.Quote` spells it.
    fn quote_char(c: u8) -> String {
        match c {
            b'\'' => r"'\''".into(),
            b'"' => "'\"'".into(),
            b'\\' => r"'\\'".into(),
            0x07 => r"'\a'".into(),
            0x08 => r"'\b'".into(),
            0x0c => r"'\f'".into(),
            b'\n' => r"'\n'".into(),
            b'\r' => r"'\r'".into(),
            b'\t' => r"'\t'".into(),
            0x0b => r"'\v'".into(),
            0x20..=0x7e => format!("'{}'", c as char),
            0x00..=0x1f | 0x7f => format!("'\\x{c:02x}'"),
            // A byte past ASCII is read as the rune of the same number.
            0xa1..=0xff if c != 0xad => format!("'{}'", c as char),
            _ => format!("'\\u{c:04x}'"),
        }
    }

    /// A quoted string's value as Go decodes it: bad UTF-8 and lone surrogates read as U+FFFD.
    pub(super) fn unquote(quoted: &[u8]) -> String {
        let s = quoted
            .get(1..quoted.len().saturating_sub(1))
            .unwrap_or_default();
        let mut out = String::with_capacity(s.len());
        let mut i = 0;
        while i < s.len() {
            if s[i] != b'\\' {
                let end = s[i..]
                    .iter()
                    .position(|&b| b == b'\\')
                    .map_or(s.len(), |p| i + p);
                for chunk in s[i..end].utf8_chunks() {
                    out.push_str(chunk.valid());
                    out.extend(chunk.invalid().iter().map(|_| '\u{fffd}'));
                }
                i = end;
                continue;
            }
            let escape = s.get(i + 1).copied().unwrap_or(b'\\');
            i += 2;
            match escape {
                b'b' => out.push('\u{8}'),
                b'f' => out.push('\u{c}'),
                b'n' => out.push('\n'),
                b'r' => out.push('\r'),
                b't' => out.push('\t'),
                b'u' => {
                    let high = hex4(s, i);
                    i += 4;
                    if (0xd800..0xdc00).contains(&high)
                        && s.get(i..i + 2) == Some(b"\\u")
                        && let Some(low) =
                            Some(hex4(s, i + 2)).filter(|l| (0xdc00..0xe000).contains(l))
                    {
                        i += 6;
                        let c = 0x10000 + ((high - 0xd800) << 10) + (low - 0xdc00);
                        out.push(char::from_u32(c).unwrap_or('\u{fffd}'));
                    } else {
                        out.push(char::from_u32(high).unwrap_or('\u{fffd}'));
                    }
                }
                other => out.push(other as char),
            }
        }
        out
    }

    fn hex4(s: &[u8], at: usize) -> u32 {
        s.get(at..at + 4)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u32::from_str_radix(h, 16).ok())
            .unwrap_or(0xfffd)
    }

    /// Go's encoding of a string (HTML-safe, as kube-apiserver encodes objects).
    pub(super) fn quote(s: &str) -> String {
        kpt::yaml::go_json::encode_string(s)
    }

    /// Go's `strconv.Quote` (for the library's messages).
    pub(super) fn go_quote(s: &str) -> String {
        kpt::goquote::go_quote(s)
    }

    /// Go's encoding of a number or boolean or string of a stored object (integers as int64,
    /// other numbers as float64, as kube-apiserver decodes objects).
    pub(super) fn encode_scalar(v: &Value) -> Vec<u8> {
        match v {
            Value::Bool(b) => b.to_string().into_bytes(),
            Value::String(s) => quote(s).into_bytes(),
            Value::Number(n) => match (n.as_i64(), n.as_f64()) {
                (Some(i), _) => i.to_string().into_bytes(),
                (None, Some(f)) => kpt::yaml::go_json::encode_float(f).into_bytes(),
                (None, None) => n.to_string().into_bytes(),
            },
            _ => b"null".to_vec(),
        }
    }

    /// The length of a value's text after Go's compaction, which escapes `<`, `>`, `&`,
    /// U+2028 and U+2029.
    pub(super) fn html_len(text: &[u8]) -> usize {
        let mut n = text.len();
        let mut i = 0;
        while i < text.len() {
            match text[i] {
                b'<' | b'>' | b'&' => n += 5,
                0xe2 if text.get(i + 1) == Some(&0x80)
                    && matches!(text.get(i + 2), Some(0xa8 | 0xa9)) =>
                {
                    n += 3;
                    i += 2;
                }
                _ => {}
            }
            i += 1;
        }
        n
    }

    /// A scalar's text as Go's encoder writes it out (see [`html_len`]).
    pub(super) fn html_escape(text: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(html_len(text));
        let mut i = 0;
        while i < text.len() {
            match text[i] {
                c @ (b'<' | b'>' | b'&') => out.extend_from_slice(format!("\\u{c:04x}").as_bytes()),
                0xe2 if text.get(i + 1) == Some(&0x80)
                    && matches!(text.get(i + 2), Some(0xa8 | 0xa9)) =>
                {
                    out.extend_from_slice(if text[i + 2] == 0xa8 {
                        b"\\u2028"
                    } else {
                        b"\\u2029"
                    });
                    i += 2;
                }
                c => out.push(c),
            }
            i += 1;
        }
        out
    }
}

/// gopkg.in/evanphx/json-patch.v4's `Patch.Apply`, as kube-apiserver uses it: what it accepts,
/// what it refuses, where it panics, and what the document becomes.
mod evanphx {
    use serde_json::{Map, Value};

    use super::MAX_COPY_BYTES;
    use super::gojson::{self, J};

    /// Why an operation did not apply.
    pub(super) enum Failure {
        /// The library's error (its words, for the log).
        Error(String),
        /// The library panics.
        Panic(&'static str),
    }

    type Outcome<T> = Result<T, Failure>;

    fn fail<T>(message: impl Into<String>) -> Outcome<T> {
        Err(Failure::Error(message.into()))
    }

    /// A member or item of the document; `None` is Go's nil pointer (a null read from text).
    type Slot = Option<Box<Node>>;

    /// A value as the library holds it (its `lazyNode`).
    enum Node {
        /// A node without text: what an operation's `"value": null` adds.
        RawNil,
        /// A number, string or boolean, and its text.
        Scalar(Vec<u8>),
        /// An object. `map` `None` is Go's nil map: the text `null` read as an object (what a
        /// copy of a [`Node::RawNil`] is). `raw` is the length of its text while unread.
        Obj {
            map: Option<Vec<(String, Slot)>>,
            raw: Option<usize>,
        },
        Arr {
            items: Vec<Slot>,
            raw: Option<usize>,
        },
    }

    impl Node {
        fn read(&mut self) {
            if let Node::Obj { raw, .. } | Node::Arr { raw, .. } = self {
                *raw = None;
            }
        }
    }

    /// An operation: its members (none for a null item).
    struct Op<'a>(&'a [(String, usize, J)]);

    impl Op<'_> {
        /// A member; the last of the same name, as a Go map keeps it.
        fn member(&self, name: &str) -> Option<&J> {
            self.0
                .iter()
                .rev()
                .find(|(k, _, _)| k == name)
                .map(|(_, _, v)| v)
        }

        fn kind(&self) -> String {
            match self.member("op") {
                Some(J::Scalar(t)) if t.first() == Some(&b'"') => gojson::unquote(t),
                _ => "unknown".into(),
            }
        }

        fn string(&self, name: &str) -> Option<String> {
            match self.member(name) {
                Some(J::Scalar(t)) if t.first() == Some(&b'"') => Some(gojson::unquote(t)),
                _ => None,
            }
        }

        /// `value`: `None` when absent (Go's nil node); `null` is a [`Node::RawNil`].
        fn value(&self) -> Option<Node> {
            self.member("value").map(|j| match j {
                J::Null => Node::RawNil,
                j => text_node(j).0.map_or(Node::RawNil, |n| *n),
            })
        }
    }

    /// A node read from text (nulls inside are nil), and the length of that text compacted.
    fn text_node(j: &J) -> (Slot, usize) {
        let len = j.compact_len();
        let node = match j {
            J::Null => return (None, 4),
            J::Scalar(t) => Node::Scalar(t.clone()),
            J::Arr(items) => Node::Arr {
                items: items.iter().map(|i| text_node(i).0).collect(),
                raw: Some(len),
            },
            J::Obj(members) => {
                let mut map = Vec::new();
                for (k, _, v) in members {
                    put(&mut map, k.clone(), text_node(v).0);
                }
                Node::Obj {
                    map: Some(map),
                    raw: Some(len),
                }
            }
        };
        (Some(Box::new(node)), len)
    }

    /// A node of the stored object as kube-apiserver encodes it, and that text's length.
    fn doc_node(v: &Value) -> (Slot, usize) {
        let node = match v {
            Value::Null => return (None, 4),
            Value::Array(items) => {
                let items: Vec<(Slot, usize)> = items.iter().map(doc_node).collect();
                let len =
                    2 + items.len().saturating_sub(1) + items.iter().map(|i| i.1).sum::<usize>();
                Node::Arr {
                    items: items.into_iter().map(|i| i.0).collect(),
                    raw: Some(len),
                }
            }
            Value::Object(members) => {
                let mut len = 2 + members.len().saturating_sub(1);
                let mut map = Vec::with_capacity(members.len());
                for (k, v) in members {
                    let (node, l) = doc_node(v);
                    len += gojson::quote(k).len() + 1 + l;
                    map.push((k.clone(), node));
                }
                Node::Obj {
                    map: Some(map),
                    raw: Some(len),
                }
            }
            scalar => Node::Scalar(gojson::encode_scalar(scalar)),
        };
        let len = marshal_len(&node);
        (Some(Box::new(node)), len)
    }

    /// The length of what the library writes for a node.
    fn marshal_len(n: &Node) -> usize {
        match n {
            Node::RawNil | Node::Obj { map: None, .. } => 4,
            Node::Scalar(t) => gojson::html_len(t),
            Node::Obj { raw: Some(len), .. } | Node::Arr { raw: Some(len), .. } => *len,
            Node::Obj { map: Some(m), .. } => {
                2 + m.len().saturating_sub(1)
                    + m.iter()
                        .map(|(k, v)| gojson::quote(k).len() + 1 + slot_len(v))
                        .sum::<usize>()
            }
            Node::Arr { items, .. } => {
                2 + items.len().saturating_sub(1) + items.iter().map(slot_len).sum::<usize>()
            }
        }
    }

    fn slot_len(s: &Slot) -> usize {
        s.as_deref().map_or(4, marshal_len)
    }

    /// The library's `deepCopy`: the node's text read back, and that text's length.
    fn deep_copy(n: &Node) -> (Node, usize) {
        let copy = match n {
            // The text `null`, read back as a node (not a nil one).
            Node::RawNil | Node::Obj { map: None, .. } => Node::Obj {
                map: None,
                raw: Some(4),
            },
            n => reread(n).map_or(Node::RawNil, |n| *n),
        };
        (copy, marshal_len(n))
    }

    /// What reading a node's text back gives, inside a container.
    fn reread(n: &Node) -> Slot {
        let node = match n {
            Node::RawNil | Node::Obj { map: None, .. } => return None,
            Node::Scalar(t) => Node::Scalar(gojson::html_escape(t)),
            Node::Obj { map: Some(m), .. } => Node::Obj {
                map: Some(
                    m.iter()
                        .map(|(k, v)| (k.clone(), v.as_deref().and_then(reread)))
                        .collect(),
                ),
                raw: Some(marshal_len(n)),
            },
            Node::Arr { items, .. } => Node::Arr {
                items: items
                    .iter()
                    .map(|i| i.as_deref().and_then(reread))
                    .collect(),
                raw: Some(marshal_len(n)),
            },
        };
        Some(Box::new(node))
    }

    fn to_value(n: &Node) -> Result<Value, String> {
        Ok(match n {
            Node::RawNil | Node::Obj { map: None, .. } => Value::Null,
            Node::Scalar(t) => gojson::scalar_value(t)?,
            Node::Obj { map: Some(m), .. } => {
                let mut out = Map::new();
                for (k, v) in m {
                    out.insert(k.clone(), slot_value(v)?);
                }
                Value::Object(out)
            }
            Node::Arr { items, .. } => {
                Value::Array(items.iter().map(slot_value).collect::<Result<_, _>>()?)
            }
        })
    }

    fn slot_value(s: &Slot) -> Result<Value, String> {
        s.as_deref().map_or(Ok(Value::Null), to_value)
    }

    /// Applies `ops` (the items of a JSON patch) to `target`.
    pub(super) fn apply(target: &Value, ops: &[J]) -> Outcome<Value> {
        let mut root = match target {
            Value::Object(_) | Value::Array(_) => doc_node(target).0.map_or(Node::RawNil, |n| *n),
            Value::Null => Node::Obj {
                map: None,
                raw: None,
            },
            _ => return fail("the document is not an object"),
        };
        root.read();
        let mut copied = 0;
        for op in ops {
            let op = Op(match op {
                J::Obj(members) => members,
                _ => &[],
            });
            match op.kind().as_str() {
                "add" => add_op(&mut root, &op)?,
                "remove" => remove_op(&mut root, &op)?,
                "replace" => replace_op(&mut root, &op)?,
                "move" => move_op(&mut root, &op)?,
                "test" => test_op(&mut root, &op)?,
                "copy" => copy_op(&mut root, &op, &mut copied)?,
                other => return fail(format!("Unexpected kind: {other}")),
            }
        }
        to_value(&root).map_err(Failure::Error)
    }

    /// The library's error `context: inner`.
    fn within<T>(outcome: Outcome<T>, context: impl FnOnce() -> String) -> Outcome<T> {
        outcome.map_err(|f| match f {
            Failure::Error(inner) => Failure::Error(format!("{}: {inner}", context())),
            panic => panic,
        })
    }

    const MISSING_PATH: &str = "operation missing path field: missing value";
    const MISSING_FROM: &str = "operation, missing from field: missing value";

    fn add_op(root: &mut Node, op: &Op) -> Outcome<()> {
        let Some(path) = op.string("path") else {
            return fail("add operation failed to decode path: missing value");
        };
        let Some((con, key)) = find(root, &path) else {
            return fail(format!(
                "add operation does not apply: doc is missing path: \"{path}\": missing value"
            ));
        };
        within(add(con, key, op.value().map(Box::new)), || {
            format!("error in add for path: '{path}'")
        })
    }

    fn remove_op(root: &mut Node, op: &Op) -> Outcome<()> {
        let Some(path) = op.string("path") else {
            return fail("remove operation failed to decode path: missing value");
        };
        let Some((con, key)) = find(root, &path) else {
            return fail(format!(
                "remove operation does not apply: doc is missing path: \"{path}\": missing value"
            ));
        };
        within(remove(con, &key).map(drop), || {
            format!("error in remove for path: '{path}'")
        })
    }

    fn replace_op(root: &mut Node, op: &Op) -> Outcome<()> {
        let Some(path) = op.string("path") else {
            return fail(format!(
                "replace operation failed to decode path: {MISSING_PATH}"
            ));
        };
        if path.is_empty() {
            // The whole document, by an object or an array.
            return match op.value() {
                None => Err(Failure::Panic("replace of the document without a value")),
                Some(Node::Obj { map: Some(map), .. }) => {
                    *root = Node::Obj {
                        map: Some(map),
                        raw: None,
                    };
                    Ok(())
                }
                Some(Node::Arr { items, .. }) => {
                    *root = Node::Arr { items, raw: None };
                    Ok(())
                }
                // v4.12.0 wraps a nil error here.
                Some(_) => fail("replace operation value must be object or array: %!w(<nil>)"),
            };
        }
        let Some((con, key)) = find(root, &path) else {
            return fail(format!(
                "replace operation does not apply: doc is missing path: {path}: missing value"
            ));
        };
        if get(con, &key).is_err() {
            return fail(format!(
                "replace operation does not apply: doc is missing key: {path}: missing value"
            ));
        }
        set(con, key, op.value().map(Box::new))
    }

    fn move_op(root: &mut Node, op: &Op) -> Outcome<()> {
        let Some(from) = op.string("from") else {
            return fail(format!(
                "move operation failed to decode from: {MISSING_FROM}"
            ));
        };
        let Some((con, key)) = find(root, &from) else {
            return fail(format!(
                "move operation does not apply: doc is missing from path: {from}: missing value"
            ));
        };
        let context = || format!("error in move for path: '{key}'");
        within(get(con, &key).map(drop), context)?;
        let value = within(remove(con, &key), context)?;
        let Some(path) = op.string("path") else {
            return fail(format!(
                "move operation failed to decode path: {MISSING_PATH}"
            ));
        };
        let Some((con, key)) = find(root, &path) else {
            return fail(format!(
                "move operation does not apply: doc is missing destination path: {path}: \
                 missing value"
            ));
        };
        within(add(con, key, value), || {
            format!("error in move for path: '{path}'")
        })
    }

    fn test_op(root: &mut Node, op: &Op) -> Outcome<()> {
        let Some(path) = op.string("path") else {
            return fail(format!(
                "test operation failed to decode path: {MISSING_PATH}"
            ));
        };
        let value = op.value();
        let same = if path.is_empty() {
            equal(root, value.as_ref())?
        } else {
            let Some((con, key)) = find(root, &path) else {
                return fail(format!(
                    "test operation does not apply: is missing path: {path}: missing value"
                ));
            };
            let current = within(get(con, &key), || {
                format!("error in test for path: '{path}'")
            })?;
            match (current, value) {
                (None, None | Some(Node::RawNil)) => true,
                (None, Some(_)) | (Some(_), None) => false,
                (Some(n), Some(v)) => equal(n, Some(&v))?,
            }
        };
        if same {
            Ok(())
        } else {
            fail(format!("testing value {path} failed: test failed"))
        }
    }

    fn copy_op(root: &mut Node, op: &Op, copied: &mut usize) -> Outcome<()> {
        let Some(from) = op.string("from") else {
            return fail(format!(
                "copy operation failed to decode from: {MISSING_FROM}"
            ));
        };
        let missing_from = || {
            Failure::Error(format!(
                "copy operation does not apply: doc is missing from path: {from}: missing value"
            ))
        };
        let read = |root: &mut Node| -> Outcome<Option<(Node, usize)>> {
            let (con, key) = find(root, &from).ok_or_else(missing_from)?;
            let value = within(get(con, &key), || {
                format!("error in copy for from: '{from}'")
            })?;
            Ok(value.map(|n| deep_copy(n)))
        };
        read(root)?;
        let Some(path) = op.string("path") else {
            return fail("copy operation failed to decode path: missing value");
        };
        let missing_path = || {
            Failure::Error(format!(
                "copy operation does not apply: doc is missing destination path: {path}: \
                 missing value"
            ))
        };
        find(root, &path).ok_or_else(missing_path)?;
        // Copied once the destination was found (finding it may read nodes of the source).
        let (copy, size) = match read(root)? {
            Some((copy, size)) => (Some(Box::new(copy)), size),
            None => (None, 0),
        };
        *copied += size;
        if *copied > MAX_COPY_BYTES {
            return fail(format!(
                "Unable to complete the copy, the accumulated size increase of copy is {copied}, \
                 exceeding the limit {MAX_COPY_BYTES}"
            ));
        }
        let (con, key) = find(root, &path).ok_or_else(missing_path)?;
        within(add(con, key, copy), || {
            "error while adding value during copy".to_string()
        })
    }

    /// The library's `findObject`: the container a path ends in, and the last key. The part
    /// before the first `/` is not read; containers on the way are read.
    fn find<'a>(root: &'a mut Node, path: &str) -> Option<(&'a mut Node, String)> {
        let parts: Vec<&str> = path.split('/').collect();
        let (last, inner) = parts.split_last().filter(|_| parts.len() >= 2)?;
        let mut con = root;
        for part in &inner[1..] {
            let next = get(con, &unescape(part)).ok()??;
            if matches!(next, Node::RawNil | Node::Scalar(_)) {
                return None;
            }
            next.read();
            con = next;
        }
        Some((con, unescape(last)))
    }

    /// RFC 6901's `~1` and `~0`, read left to right.
    fn unescape(part: &str) -> String {
        let mut out = String::with_capacity(part.len());
        let mut rest = part;
        while let Some(i) = rest.find('~') {
            out.push_str(&rest[..i]);
            match rest.as_bytes().get(i + 1) {
                Some(b'1') => out.push('/'),
                Some(b'0') => out.push('~'),
                _ => {
                    out.push('~');
                    rest = &rest[i + 1..];
                    continue;
                }
            }
            rest = &rest[i + 2..];
        }
        out.push_str(rest);
        out
    }

    /// An array index as Go's `strconv.Atoi` reads it (`+1`, `01`), or its error.
    fn atoi(key: &str) -> Result<i64, String> {
        let digits = key.strip_prefix(['+', '-']).unwrap_or(key);
        let why = if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            "invalid syntax"
        } else {
            match key.parse() {
                Ok(i) => return Ok(i),
                Err(_) => "value out of range",
            }
        };
        Err(format!(
            "strconv.Atoi: parsing {}: {why}",
            gojson::go_quote(key)
        ))
    }

    fn invalid_index<T>(idx: i64) -> Outcome<T> {
        fail(format!(
            "Unable to access invalid index: {idx}: invalid index referenced"
        ))
    }

    /// An index of an existing item, negative ones counted from the end.
    fn item_index(key: &str, len: usize) -> Outcome<usize> {
        let idx = atoi(key).map_err(Failure::Error)?;
        let len = i64::try_from(len).unwrap_or(i64::MAX);
        let at = if idx < 0 { idx + len } else { idx };
        if at < 0 || at >= len {
            return invalid_index(idx);
        }
        usize::try_from(at).or_else(|_| invalid_index(idx))
    }

    fn put(map: &mut Vec<(String, Slot)>, key: String, value: Slot) {
        match map.iter_mut().find(|(k, _)| *k == key) {
            Some(member) => member.1 = value,
            None => map.push((key, value)),
        }
    }

    /// A container's member or item (`None`: missing from an object, or null).
    fn get<'a>(con: &'a mut Node, key: &str) -> Outcome<Option<&'a mut Node>> {
        match con {
            Node::Obj { map, .. } => Ok(map
                .as_mut()
                .and_then(|m| m.iter_mut().find(|(k, _)| k.as_str() == key))
                .and_then(|(_, v)| v.as_deref_mut())),
            Node::Arr { items, .. } => {
                let idx = item_index(key, items.len())?;
                Ok(items[idx].as_deref_mut())
            }
            _ => Ok(None),
        }
    }

    const NIL_MAP: &str = "assignment to entry in nil map";

    /// `replace`'s write, once `get` found the key.
    fn set(con: &mut Node, key: String, value: Slot) -> Outcome<()> {
        match con {
            Node::Obj { map: Some(map), .. } => put(map, key, value),
            Node::Obj { map: None, .. } => return Err(Failure::Panic(NIL_MAP)),
            Node::Arr { items, .. } => {
                let idx = item_index(&key, items.len())?;
                items[idx] = value;
            }
            _ => {}
        }
        Ok(())
    }

    fn add(con: &mut Node, key: String, value: Slot) -> Outcome<()> {
        match con {
            Node::Obj { map: Some(map), .. } => put(map, key, value),
            Node::Obj { map: None, .. } => return Err(Failure::Panic(NIL_MAP)),
            Node::Arr { items, .. } if key == "-" => items.push(value),
            Node::Arr { items, .. } => {
                let idx = atoi(&key).map_err(|e| {
                    Failure::Error(format!("value was not a proper array index: '{key}': {e}"))
                })?;
                let len = i64::try_from(items.len() + 1).unwrap_or(i64::MAX);
                if idx >= len || idx < -len {
                    return invalid_index(idx);
                }
                let at = if idx < 0 { idx + len } else { idx };
                items.insert(usize::try_from(at).unwrap_or(0), value);
            }
            _ => {}
        }
        Ok(())
    }

    fn remove(con: &mut Node, key: &str) -> Outcome<Slot> {
        match con {
            Node::Obj { map, .. } => {
                let map = map.as_mut();
                match map.and_then(|m| m.iter().position(|(k, _)| k == key).map(|i| m.remove(i))) {
                    Some((_, value)) => Ok(value),
                    None => fail(format!(
                        "Unable to remove nonexistent key: {key}: missing value"
                    )),
                }
            }
            Node::Arr { items, .. } => {
                let idx = item_index(key, items.len())?;
                Ok(items.remove(idx))
            }
            _ => Ok(None),
        }
    }

    /// The library's `lazyNode.equal` of a node of the document and a value of the patch
    /// (`None`: a null inside an array, where the library panics). Numbers and strings are
    /// compared by their text.
    fn equal(n: &mut Node, o: Option<&Node>) -> Outcome<bool> {
        let panic = || Failure::Panic("comparison with a nil node");
        match n {
            Node::RawNil | Node::Scalar(_) => match (&*n, o.ok_or_else(panic)?) {
                (Node::RawNil, Node::RawNil) => Ok(true),
                (Node::Scalar(a), Node::Scalar(b)) => Ok(a == b),
                _ => Ok(false),
            },
            Node::Obj { map, raw } => {
                *raw = None;
                let Node::Obj { map: other, .. } = o.ok_or_else(panic)? else {
                    return Ok(false);
                };
                let other = other.as_deref().unwrap_or_default();
                let Some(map) = map else {
                    return Ok(other.is_empty());
                };
                if map.len() != other.len() {
                    return Ok(false);
                }
                for (k, v) in map.iter_mut() {
                    let Some((_, ov)) = other.iter().find(|(ok, _)| ok == k) else {
                        return Ok(false);
                    };
                    match (v, ov) {
                        (None, None) => {}
                        (Some(v), Some(ov)) => {
                            if !equal(v, Some(ov))? {
                                return Ok(false);
                            }
                        }
                        _ => return Ok(false),
                    }
                }
                Ok(true)
            }
            Node::Arr { items, raw } => {
                *raw = None;
                let Node::Arr { items: other, .. } = o.ok_or_else(panic)? else {
                    return Ok(false);
                };
                if items.len() != other.len() {
                    return Ok(false);
                }
                for (v, ov) in items.iter_mut().zip(other) {
                    let v = v.as_deref_mut().ok_or_else(panic)?;
                    if !equal(v, ov.as_deref())? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
        }
    }
}

/// Turns a strategic merge patch into a merge patch: drops `$setElementOrder/…`, `$retainKeys`
/// and similar directives, and `{"$patch": "delete"}` maps become deletions.
fn strip_directives(v: &Value) -> Value {
    match v {
        Value::Object(map) => {
            if map.get("$patch").and_then(Value::as_str) == Some("delete") {
                return Value::Null;
            }
            let mut out = Map::new();
            for (k, val) in map {
                if k.starts_with('$') {
                    continue;
                }
                out.insert(k.clone(), strip_directives(val));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .filter(|i| !i.as_object().is_some_and(|m| m.contains_key("$patch")))
                .map(strip_directives)
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn body(kind: PatchType, v: &Value) -> PatchBody {
        parse_body(kind, v.to_string().as_bytes()).expect("parses")
    }

    #[test]
    fn merge_and_json_patch() {
        let mut o = json!({"a": 1, "b": {"c": 2}});
        let p = body(PatchType::Merge, &json!({"b": {"c": null, "d": 3}}));
        apply(PatchType::Merge, &mut o, &p).expect("merges");
        assert_eq!(o, json!({"a": 1, "b": {"d": 3}}));
        let p = body(
            PatchType::Json,
            &json!([{"op": "replace", "path": "/a", "value": 5}]),
        );
        apply(PatchType::Json, &mut o, &p).expect("patches");
        assert_eq!(o["a"], 5);
        let p = body(PatchType::Json, &json!([{"op": "remove", "path": "/zz"}]));
        assert!(apply(PatchType::Json, &mut o, &p).is_err());
    }

    /// Applies a JSON patch body to `doc`: the document, or the status and message.
    fn jp(doc: &Value, body: &str) -> Result<Value, (u16, String)> {
        apply_json_patch(doc, body.as_bytes()).map_err(|e| (e.code_and_reason().0, e.message))
    }

    fn mp(doc: &Value, body: &str) -> Result<Value, (u16, String)> {
        apply_merge_patch(doc, body.as_bytes()).map_err(|e| (e.code_and_reason().0, e.message))
    }

    fn rejected() -> Result<Value, (u16, String)> {
        Err((422, REJECTED.to_string()))
    }

    #[test]
    fn test_compares_numbers_and_strings_by_their_text() {
        // kube-apiserver compares the text of the stored object (Go's encoding: `<` is
        // `\u003c`) with the text of the patch; serde's values compared 1.5 and 1.50 alike.
        let doc = json!({"a": 1.5, "s": "<", "i": 1});
        let test = |path: &str, value: &str| {
            jp(
                &doc,
                &format!(r#"[{{"op":"test","path":"{path}","value":{value}}}]"#),
            )
        };
        assert_eq!(test("/a", "1.5"), Ok(doc.clone()));
        assert_eq!(test("/a", "1.50"), rejected());
        assert_eq!(test("/i", "1.0"), rejected());
        assert_eq!(test("/s", r#""\u003c""#), Ok(doc.clone()));
        assert_eq!(test("/s", r#""<""#), rejected());
    }

    #[test]
    fn missing_members_read_as_null() {
        let doc = json!({"a": 1});
        // replace adds, copy copies a null, test of null passes.
        let out = jp(
            &doc,
            r#"[{"op":"replace","path":"/b","value":2},{"op":"copy","from":"/zz","path":"/c"},{"op":"test","path":"/zz","value":null},{"op":"test","path":"/zz"}]"#,
        );
        assert_eq!(out, Ok(json!({"a": 1, "b": 2, "c": null})));
        // A missing value adds null.
        assert_eq!(
            jp(&doc, r#"[{"op":"add","path":"/n"}]"#),
            Ok(json!({"a": 1, "n": null}))
        );
        // An added null is not the stored kind of null.
        let doc = json!({"o": {"k": null}});
        assert_eq!(
            jp(&doc, r#"[{"op":"test","path":"/o","value":{"k":null}}]"#),
            Ok(doc.clone())
        );
        assert_eq!(
            jp(
                &doc,
                r#"[{"op":"add","path":"/o/k","value":null},{"op":"test","path":"/o","value":{"k":null}}]"#
            ),
            rejected()
        );
    }

    #[test]
    fn paths_and_indices_as_the_library_reads_them() {
        let doc = json!({"b": [1, 2]});
        assert_eq!(
            jp(&doc, r#"[{"op":"add","path":"/b/+1","value":0}]"#),
            Ok(json!({"b": [1, 0, 2]}))
        );
        assert_eq!(
            jp(&doc, r#"[{"op":"add","path":"/b/01","value":0}]"#),
            Ok(json!({"b": [1, 0, 2]}))
        );
        assert_eq!(
            jp(&doc, r#"[{"op":"remove","path":"/b/-1"}]"#),
            Ok(json!({"b": [1]}))
        );
        assert_eq!(
            jp(&doc, r#"[{"op":"add","path":"/b/-1","value":3}]"#),
            Ok(json!({"b": [1, 2, 3]}))
        );
        assert_eq!(
            jp(&doc, r#"[{"op":"add","path":"/b/1.0","value":0}]"#),
            rejected()
        );
        // The part before the first `/` is not read.
        assert_eq!(
            jp(&doc, r#"[{"op":"add","path":"x/c","value":0}]"#),
            Ok(json!({"b": [1, 2], "c": 0}))
        );
        // The whole document: replace and test only.
        assert_eq!(
            jp(&doc, r#"[{"op":"replace","path":"","value":{"z":1}}]"#),
            Ok(json!({"z": 1}))
        );
        assert_eq!(
            jp(&doc, r#"[{"op":"add","path":"","value":{"z":1}}]"#),
            rejected()
        );
    }

    #[test]
    fn errors_in_kube_apiserver_words() {
        let doc = json!({"a": 1});
        let bad = |m: &str| Err((400, format!("error decoding patch: {m}")));
        assert_eq!(jp(&doc, "["), bad("unexpected end of JSON input"));
        assert_eq!(
            jp(&doc, "[1,]"),
            bad("invalid character ']' looking for beginning of value")
        );
        assert_eq!(
            jp(&doc, "[-]"),
            bad("invalid character ']' in numeric literal")
        );
        assert_eq!(
            jp(&doc, "{}"),
            bad("json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp")
        );
        assert_eq!(
            jp(&doc, r#"[{"op":1}]"#),
            bad("json: cannot unmarshal number into Go struct field jsonPatchOp.op of type string")
        );
        // A patch `null` changes nothing; an unknown operation is a 422 that names it.
        assert_eq!(jp(&doc, "null"), Ok(doc.clone()));
        let e = apply_json_patch(&doc, br#"[{"op":"foo"}]"#).expect_err("unknown op");
        assert_eq!((e.code_and_reason().0, e.message.as_str()), (422, REJECTED));
        assert_eq!(
            e.details.expect("details").causes[0].message,
            "JSON patch failed: Unexpected kind: foo"
        );
        // Merge patches: an object or nothing.
        assert_eq!(
            mp(&doc, "[1]"),
            bad("json: cannot unmarshal array into Go value of type map[string]interface {}")
        );
        assert_eq!(mp(&doc, "null"), Err((400, "Invalid JSON Patch".into())));
        // The handler's errors come when the patch is applied, after the object was read.
        assert!(parse_body(PatchType::Json, b"[").is_ok());
        assert!(parse_body(PatchType::Merge, b"[").is_ok());
    }

    #[test]
    fn limits_of_operations_and_copies() {
        let doc = json!({});
        let ops = vec![r#"{"op":"add","path":"/n","value":1}"#; 10_001].join(",");
        assert_eq!(
            jp(&doc, &format!("[{ops}]")),
            Err((413, "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001".into()))
        );
        // Each copy doubles /x: 11 copies of 1,535 bytes add up past 3 MiB.
        let doc = json!({"x": ["a".repeat(1532)]});
        let copies = [r#"{"op":"copy","from":"/x","path":"/x/-"}"#; 11].join(",");
        assert_eq!(jp(&doc, &format!("[{copies}]")), rejected());
        let doc = json!({"x": ["a".repeat(1531)]});
        assert!(jp(&doc, &format!("[{copies}]")).is_ok());
    }

    #[test]
    fn what_makes_the_library_panic_is_500() {
        let doc = json!({"a": [1, null]});
        let panicked = Err((500, PANICKED.to_string()));
        assert_eq!(
            jp(&doc, r#"[{"op":"test","path":"/a","value":[1,null]}]"#),
            panicked
        );
        assert_eq!(jp(&doc, r#"[{"op":"replace","path":""}]"#), panicked);
        assert_eq!(
            jp(
                &doc,
                r#"[{"op":"add","path":"/n","value":null},{"op":"copy","from":"/n","path":"/m"},{"op":"add","path":"/m/x","value":1}]"#
            ),
            panicked
        );
        // A different member found first: Go's map order decides between 422 and 500; ours
        // compares in the object's order.
        let doc = json!({"o": {"s": 1, "a": [null]}});
        assert_eq!(
            jp(
                &doc,
                r#"[{"op":"test","path":"/o","value":{"s":2,"a":[null]}}]"#
            ),
            rejected()
        );
    }

    #[test]
    fn merge_patches_prune_nulls_as_the_library_does() {
        let doc = json!({"a": 1, "o": {"k": 1}});
        // Added where no object was: nulls go, also inside arrays; the nulls of arrays stay.
        assert_eq!(
            mp(
                &doc,
                r#"{"a":[{"x":null,"y":1},null],"n":{"m":null,"l":[{"z":null}]}}"#
            ),
            Ok(json!({"a": [{"y": 1}, null], "o": {"k": 1}, "n": {"l": [{}]}}))
        );
        // An object replaced by an array: as sent.
        assert_eq!(
            mp(&doc, r#"{"o":[{"x":null}]}"#),
            Ok(json!({"a": 1, "o": [{"x": null}]}))
        );
    }

    #[test]
    fn a_move_onto_its_parent_then_a_failure_is_a_422() {
        // The json-patch crate panicked undoing this (`unable to undo applied patches`).
        let doc = json!({"a": {"b": 1}});
        let body = r#"[{"op":"move","from":"/a/b","path":"/a"},{"op":"remove","path":"/zz"}]"#;
        assert_eq!(jp(&doc, body), rejected());
        let body = r#"[{"op":"move","from":"/a/b","path":"/a"}]"#;
        assert_eq!(jp(&doc, body), Ok(json!({"a": 1})));
    }

    #[test]
    fn strategic_directives_are_dropped() {
        let mut o = json!({"metadata": {"labels": {"a": "1"}}});
        let p = json!({"$setElementOrder/x": [], "metadata": {"labels": {"b": "2"}}});
        apply(
            PatchType::Strategic,
            &mut o,
            &body(PatchType::Strategic, &p),
        )
        .expect("merges");
        assert_eq!(o, json!({"metadata": {"labels": {"a": "1", "b": "2"}}}));
    }
}
