//! YAML the way kubectl's `-o yaml` writes it (sigs.k8s.io/yaml over go-yaml v2): keys
//! sorted, sequences not indented under their key, strings that would read back as another
//! type double-quoted, strings that cannot be plain single-quoted, multi-line strings as
//! literal blocks.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

/// One YAML document for `v` (object keys are emitted in lexical order).
pub fn to_yaml(v: &Value) -> String {
    let mut out = String::new();
    match v {
        Value::Object(m) if !m.is_empty() => mapping(&mut out, v, 0),
        Value::Array(a) if !a.is_empty() => sequence(&mut out, v, 0),
        other => {
            out.push_str(&scalar(other, 0));
            out.push('\n');
        }
    }
    out
}

fn sorted_entries(v: &Value) -> Vec<(&String, &Value)> {
    let mut e: Vec<(&String, &Value)> = v
        .as_object()
        .map(|m| m.iter().collect())
        .unwrap_or_default();
    e.sort_by(|a, b| a.0.cmp(b.0));
    e
}

fn is_block(v: &Value) -> bool {
    match v {
        Value::Object(m) => !m.is_empty(),
        Value::Array(a) => !a.is_empty(),
        _ => false,
    }
}

/// Writes a non-empty mapping, every line indented by `indent` (the first line's indent is
/// the caller's when it continues a `- ` line).
fn mapping(out: &mut String, v: &Value, indent: usize) {
    for (i, (k, val)) in sorted_entries(v).into_iter().enumerate() {
        if i > 0 || !out.ends_with("- ") {
            pad(out, indent);
        }
        out.push_str(&string(k, indent));
        out.push(':');
        match val {
            Value::Object(_) if is_block(val) => {
                out.push('\n');
                mapping(out, val, indent + 2);
            }
            Value::Array(_) if is_block(val) => {
                out.push('\n');
                sequence(out, val, indent);
            }
            _ => {
                out.push(' ');
                out.push_str(&scalar(val, indent + 2));
                out.push('\n');
            }
        }
    }
}

fn sequence(out: &mut String, v: &Value, indent: usize) {
    let items = v.as_array().map(Vec::as_slice).unwrap_or_default();
    for (i, item) in items.iter().enumerate() {
        if i > 0 || !out.ends_with("- ") {
            pad(out, indent);
        }
        out.push_str("- ");
        match item {
            Value::Object(_) if is_block(item) => mapping(out, item, indent + 2),
            Value::Array(_) if is_block(item) => sequence(out, item, indent + 2),
            _ => {
                out.push_str(&scalar(item, indent + 2));
                out.push('\n');
            }
        }
    }
}

fn pad(out: &mut String, indent: usize) {
    out.extend(std::iter::repeat_n(' ', indent));
}

fn scalar(v: &Value, indent: usize) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => string(s, indent),
        Value::Object(_) => "{}".into(),
        Value::Array(_) => "[]".into(),
    }
}

/// A string scalar; `indent` is where a literal block's lines go.
fn string(s: &str, indent: usize) -> String {
    if s.contains('\n') && s.chars().all(|c| c == '\n' || !c.is_control() || c == '\t') {
        return literal(s, indent);
    }
    if resolves_to_other_type(s) {
        return double_quoted(s);
    }
    if s.chars().any(|c| c.is_control() && c != '\t') || s.contains('\t') {
        return double_quoted(s);
    }
    if plain_allowed(s) {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', "''"))
}

fn literal(s: &str, indent: usize) -> String {
    let chomp = if !s.ends_with('\n') {
        "-"
    } else if s.ends_with("\n\n") {
        "+"
    } else {
        ""
    };
    let body = s.strip_suffix('\n').unwrap_or(s);
    let lead = if s.starts_with(' ') { "2" } else { "" };
    let mut out = format!("|{lead}{chomp}");
    for line in body.split('\n') {
        out.push('\n');
        if !line.is_empty() {
            out.extend(std::iter::repeat_n(' ', indent));
            out.push_str(line);
        }
    }
    out
}

fn double_quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\x{:02X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

static FLOAT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$").expect("valid regex")
});
static INT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[-+]?(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)$")
        .expect("valid regex")
});
static TIMESTAMP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt][0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(\.[0-9]+)?(Z|[-+][0-9]{2}:[0-9]{2})| [0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(\.[0-9]+)?)?$",
    )
    .expect("valid regex")
});
static BASE60: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$").expect("valid regex")
});

/// go-yaml v2's `resolve`: would this plain scalar read back as null, bool, number or time?
fn resolves_to_other_type(s: &str) -> bool {
    const WORDS: &[&str] = &[
        "", "~", "null", "Null", "NULL", "y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "n", "N",
        "no", "No", "NO", "off", "Off", "OFF", "true", "True", "TRUE", "false", "False", "FALSE",
        ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf",
        "-.Inf", "-.INF", "<<",
    ];
    if WORDS.contains(&s) || BASE60.is_match(s) {
        return true;
    }
    let Some(first) = s.chars().next() else {
        return true;
    };
    if !(first.is_ascii_digit() || matches!(first, '+' | '-' | '.')) {
        return false;
    }
    let plain = s.replace('_', "");
    TIMESTAMP.is_match(s) || INT.is_match(&plain) || FLOAT.is_match(&plain)
}

/// libyaml's analysis of whether a scalar may be written plain in block context.
fn plain_allowed(s: &str) -> bool {
    if s.is_empty() || s.starts_with("---") || s.starts_with("...") {
        return false;
    }
    if s.starts_with(' ') || s.ends_with(' ') {
        return false;
    }
    let chars: Vec<char> = s.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let followed_by_space = chars.get(i + 1).is_none_or(|n| *n == ' ');
        let preceded_by_space = i > 0 && chars[i - 1] == ' ';
        if i == 0 {
            match c {
                '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"'
                | '%' | '@' | '`' => return false,
                '?' | ':' | '-' if followed_by_space => return false,
                _ => {}
            }
        } else {
            match c {
                ':' if followed_by_space => return false,
                '#' if preceded_by_space => return false,
                _ => {}
            }
        }
        if c == '\u{feff}' {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kubectl_shapes() {
        let v = json!({
            "metadata": {"name": "r", "creationTimestamp": "2026-11-22T16:15:30Z",
                         "generation": 1, "resourceVersion": "4", "labels": {}},
            "spec": {"sync": {"schedule": "*/1 * * * *"}, "git": {"secretRef": {"name": ""}},
                     "flag": "true", "desc": "it's: here"},
            "status": {"conditions": [{"type": "Ready", "status": "True"}, {"type": "X"}],
                       "list": [["a"]], "msg": "line1\nline2"},
        });
        assert_eq!(
            to_yaml(&v),
            "metadata:\n  creationTimestamp: \"2026-11-22T16:15:30Z\"\n  generation: 1\n  labels: {}\n  name: r\n  resourceVersion: \"4\"\n\
spec:\n  desc: 'it''s: here'\n  flag: \"true\"\n  git:\n    secretRef:\n      name: \"\"\n  sync:\n    schedule: '*/1 * * * *'\n\
status:\n  conditions:\n  - status: \"True\"\n    type: Ready\n  - type: X\n  list:\n  - - a\n  msg: |-\n    line1\n    line2\n"
        );
    }

    #[test]
    fn plain_strings_stay_plain() {
        assert_eq!(string("http://h:3000/x.git", 0), "http://h:3000/x.git");
        assert_eq!(string("Test Blueprints", 0), "Test Blueprints");
        assert_eq!(string("/", 0), "/");
        assert_eq!(string("1.5", 0), "\"1.5\"");
        assert_eq!(string("-", 0), "'-'");
    }
}
