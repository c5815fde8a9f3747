//! kubectl's jsonpath printer for `-o jsonpath=`, `jsonpath-file=` and `jsonpath-as-json=`:
//! the template's text and `{path}`/`{range}`/`{@}` parts (the paths are
//! [`super::jsonpath`]'s), run on each object, and the error kubectl reports, with its
//! debugging text, when a path fails on one.

use serde_json::Value;

use super::error::RemoteError;
use super::gotemplate;
use super::jsonpath::{JsonPath, scalar_text};
use super::print::{go_escape, sorted};

/// A parsed `-o jsonpath=` template and its text (which kubectl's errors quote).
#[derive(Debug, Clone, PartialEq)]
pub struct PathTemplate {
    pub text: String,
    pub parts: Vec<TemplatePart>,
    /// kubectl's `--allow-missing-template-keys` (true unless asked otherwise).
    pub allow_missing: bool,
}

/// A piece of a `-o jsonpath=` template.
#[derive(Debug, Clone, PartialEq)]
pub enum TemplatePart {
    Text(String),
    Path(JsonPath),
    /// `{@}`: the value the template (or the enclosing range) is at.
    Current,
    /// `{range PATH}…{end}`: the parts once per value PATH selects (an array's elements).
    Range(JsonPath, Vec<TemplatePart>),
}

/// Splits `text{.path}text{"literal"}{range .path}…{end}` into parts, as kubectl's
/// jsonpath parser reads a template (a `range` without `end` runs to the template's end).
pub(super) fn parse_template(t: &str) -> Result<PathTemplate, RemoteError> {
    let bad = |why: &str| RemoteError::Usage(format!("error parsing jsonpath {t}, {why}"));
    // Open ranges: their paths and the parts before each.
    let mut stack: Vec<(JsonPath, Vec<TemplatePart>)> = Vec::new();
    let mut parts = Vec::new();
    let mut rest = t;
    while let Some(open) = rest.find('{') {
        if open > 0 {
            parts.push(TemplatePart::Text(rest[..open].to_string()));
        }
        let close = rest[open..]
            .find('}')
            .map(|c| open + c)
            .ok_or_else(|| bad("unclosed action"))?;
        let inner = rest[open + 1..close].trim();
        let quoted = |q: char| inner.strip_prefix(q).and_then(|r| r.strip_suffix(q));
        if let Some(lit) = quoted('"').or_else(|| quoted('\'')) {
            let lit = lit
                .replace("\\n", "\n")
                .replace("\\t", "\t")
                .replace("\\r", "\r");
            parts.push(TemplatePart::Text(lit));
        } else if inner == "end" {
            let (path, before) = stack
                .pop()
                .ok_or_else(|| bad("not in range, nothing to end"))?;
            let body = std::mem::replace(&mut parts, before);
            parts.push(TemplatePart::Range(path, body));
        } else if let Some(path) = inner
            .strip_prefix("range")
            .filter(|r| r.starts_with(char::is_whitespace))
        {
            stack.push((JsonPath::parse(path.trim())?, std::mem::take(&mut parts)));
        } else if inner == "@" {
            parts.push(TemplatePart::Current);
        } else {
            let path = inner.strip_prefix('@').unwrap_or(inner);
            parts.push(TemplatePart::Path(JsonPath::parse(path)?));
        }
        rest = &rest[close + 1..];
    }
    if !rest.is_empty() {
        parts.push(TemplatePart::Text(rest.to_string()));
    }
    while let Some((path, before)) = stack.pop() {
        let body = std::mem::replace(&mut parts, before);
        parts.push(TemplatePart::Range(path, body));
    }
    Ok(PathTemplate {
        text: t.to_string(),
        parts,
        allow_missing: true,
    })
}

/// How kubectl's jsonpath printer writes one selected value.
fn template_value(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Object(_) | Value::Array(_) => go_escape(&sorted(v).to_string()),
        other => scalar_text(other),
    }
}

/// How a template's results are written: kubectl's jsonpath printer (values of one path
/// joined by spaces, composite values as compact JSON) or, with `outputJSON`
/// (`jsonpath-as-json`), every part's results (a text part's text, a path's values) as one
/// JSON array indented by four spaces, as Go's `json.MarshalIndent` writes it, then a line
/// break.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Text,
    Json,
}

/// kubectl's jsonpath printer writes a template's output only once every part of it has
/// been evaluated (`FindResults`, then `PrintResults`): a failing object adds nothing.
pub(super) fn render_parts(
    out: &mut String,
    at: &Value,
    parts: &[TemplatePart],
    mode: Mode,
    allow_missing: bool,
) -> Result<(), String> {
    for part in parts {
        match (part, mode) {
            (TemplatePart::Text(t), Mode::Text) => out.push_str(t),
            (TemplatePart::Text(t), Mode::Json) => {
                push_json_array(out, vec![Value::String(t.clone())])
            }
            (TemplatePart::Current, Mode::Text) => out.push_str(&template_value(at)),
            (TemplatePart::Current, Mode::Json) => push_json_array(out, vec![at.clone()]),
            (TemplatePart::Path(p), Mode::Text) => {
                let values: Vec<String> = p
                    .try_find_keys(at, allow_missing)?
                    .into_iter()
                    .map(template_value)
                    .collect();
                out.push_str(&values.join(" "));
            }
            (TemplatePart::Path(p), Mode::Json) => push_json_array(
                out,
                p.try_find_keys(at, allow_missing)?
                    .into_iter()
                    .cloned()
                    .collect(),
            ),
            (TemplatePart::Range(p, body), _) => {
                for v in p.try_find_keys(at, allow_missing)? {
                    match v {
                        Value::Array(items) => {
                            for item in items {
                                render_parts(out, item, body, mode, allow_missing)?;
                            }
                        }
                        other => render_parts(out, other, body, mode, allow_missing)?,
                    }
                }
            }
        }
    }
    Ok(())
}

/// `values` as Go's `json.MarshalIndent(values, "", "    ")` writes them, and a line break.
fn push_json_array(out: &mut String, values: Vec<Value>) {
    let array = Value::Array(values.iter().map(sorted).collect());
    let mut buf = Vec::new();
    let indent = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, indent);
    if serde::Serialize::serialize(&array, &mut ser).is_ok() {
        out.push_str(&go_escape(&String::from_utf8_lossy(&buf)));
    }
    out.push('\n');
}

/// Renders a `jsonpath-as-json` template per object (see [`print_template`] for errors).
pub fn print_template_json(
    objects: &[Value],
    template: &PathTemplate,
) -> Result<String, RemoteError> {
    let (out, err) = render_template(objects, template, Mode::Json);
    finish_template(out, err)
}

/// Renders a jsonpath template per object, as kubectl does (values of one path joined by
/// spaces, composite values as compact JSON, nothing for missing keys, no newline added).
/// When the template fails on an object the output of the objects before it is printed
/// and kubectl's error, with its debugging text, returned.
pub fn print_template(objects: &[Value], template: &PathTemplate) -> Result<String, RemoteError> {
    let (out, err) = render_template(objects, template, Mode::Text);
    finish_template(out, err)
}

fn finish_template(out: String, err: Option<RemoteError>) -> Result<String, RemoteError> {
    match err {
        None => Ok(out),
        Some(e) => {
            super::out(&out)?;
            Err(e)
        }
    }
}

/// The output of `template` on each object, and the error that stopped it (kubectl's
/// `JSONPathPrinter.PrintObj` message, the debugging text inside the error).
pub fn render_template(
    objects: &[Value],
    template: &PathTemplate,
    mode: Mode,
) -> (String, Option<RemoteError>) {
    let mut out = String::new();
    for obj in objects {
        let mut one = String::new();
        if let Err(e) = render_parts(&mut one, obj, &template.parts, mode, template.allow_missing) {
            let raw = &template.text;
            let err = RemoteError::Failed(format!(
                "error executing jsonpath {}: Error executing template: {e}. Printing more information for debugging the template:\n\ttemplate was:\n\t\t{raw}\n\tobject given to jsonpath engine was:\n\t\t{}\n\n\n",
                gotemplate::go_quote(raw),
                go_syntax(obj),
            ));
            return (out, Some(err));
        }
        out.push_str(&one);
    }
    (out, None)
}

/// Go's `%#v` of a decoded JSON value (`map[string]interface {}{"k":v, …}`, keys sorted).
fn go_syntax(v: &Value) -> String {
    match v {
        Value::Null => "interface {}(nil)".to_string(),
        Value::String(s) => gotemplate::go_quote(s),
        Value::Array(a) => format!(
            "[]interface {{}}{{{}}}",
            a.iter().map(go_syntax).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", gotemplate::go_quote(k), go_syntax(&m[k])))
                .collect();
            format!("map[string]interface {{}}{{{}}}", parts.join(", "))
        }
        other => gotemplate::go_value_text(other),
    }
}
