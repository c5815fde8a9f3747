//! Label and field selectors: parsing the query strings and matching objects, for list and
//! watch alike.

use serde_json::Value;

use crate::error::ApiError;

/// One requirement of a label selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LabelReq {
    Eq(String, String),
    NotEq(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    NotExists(String),
}

/// One requirement of a field selector (`path=value` or `path!=value`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldReq {
    pub path: String,
    pub value: String,
    pub negated: bool,
}

/// Both selectors of a request. Empty selectors match everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selectors {
    pub labels: Vec<LabelReq>,
    pub fields: Vec<FieldReq>,
}

impl Selectors {
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty() && self.fields.is_empty()
    }

    /// Parses both selectors; `allowed_fields` are the field paths the resource supports
    /// besides `metadata.name` and `metadata.namespace`.
    pub fn parse(
        label_selector: Option<&str>,
        field_selector: Option<&str>,
        allowed_fields: &[String],
    ) -> Result<Self, ApiError> {
        let labels = match label_selector {
            Some(s) if !s.trim().is_empty() => parse_labels(s)?,
            _ => Vec::new(),
        };
        let fields = match field_selector {
            Some(s) if !s.trim().is_empty() => parse_fields(s, allowed_fields)?,
            _ => Vec::new(),
        };
        Ok(Self { labels, fields })
    }

    /// Whether the object (full JSON) matches.
    pub fn matches(&self, obj: &Value) -> bool {
        if !self.labels.is_empty() {
            let labels = obj.pointer("/metadata/labels");
            let get = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
            let ok = self.labels.iter().all(|r| match r {
                LabelReq::Eq(k, v) => get(k) == Some(v.as_str()),
                LabelReq::NotEq(k, v) => get(k) != Some(v.as_str()),
                LabelReq::In(k, vs) => get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
                LabelReq::NotIn(k, vs) => get(k).is_none_or(|x| vs.iter().all(|v| v != x)),
                LabelReq::Exists(k) => get(k).is_some(),
                LabelReq::NotExists(k) => get(k).is_none(),
            });
            if !ok {
                return false;
            }
        }
        self.fields.iter().all(|f| {
            let actual = field_value(obj, &f.path);
            (actual == f.value) != f.negated
        })
    }
}

/// The string form of a field, as Kubernetes compares it (missing = empty string).
fn field_value(obj: &Value, path: &str) -> String {
    let mut cur = obj;
    for part in path.split('.') {
        match cur.get(part) {
            Some(v) => cur = v,
            None => return String::new(),
        }
    }
    match cur {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn bad(msg: String) -> ApiError {
    ApiError::bad_request(msg)
}

fn parse_fields(s: &str, allowed: &[String]) -> Result<Vec<FieldReq>, ApiError> {
    let mut out = Vec::new();
    for term in s.split(',') {
        let term = term.trim();
        if term.is_empty() {
            continue;
        }
        let (path, value, negated) = if let Some((p, v)) = term.split_once("!=") {
            (p, v, true)
        } else if let Some((p, v)) = term.split_once("==") {
            (p, v, false)
        } else if let Some((p, v)) = term.split_once('=') {
            (p, v, false)
        } else {
            return Err(bad(format!(
                "invalid selector: '{s}'; can't understand '{term}'"
            )));
        };
        let path = path.trim();
        if path != "metadata.name"
            && path != "metadata.namespace"
            && !allowed.iter().any(|a| field_allowed(a, path))
        {
            return Err(bad(format!(
                "\"{path}\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\"{}",
                allowed
                    .iter()
                    .map(|a| format!(", \"{a}\""))
                    .collect::<String>()
            )));
        }
        out.push(FieldReq {
            path: path.to_string(),
            value: value.trim().to_string(),
            negated,
        });
    }
    Ok(out)
}

/// `allowed` names a path exactly, or ends in `[]` to accept any `[<key>]` there
/// (e.g. `spec.packageMetadata.labels[]` accepts `spec.packageMetadata.labels[team]`).
fn field_allowed(allowed: &str, path: &str) -> bool {
    match allowed.strip_suffix("[]") {
        Some(prefix) => path
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with('[') && rest.ends_with(']')),
        None => allowed == path,
    }
}

/// Splits on commas that are not inside parentheses.
fn split_terms(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

fn valid_label_key(k: &str) -> bool {
    !k.is_empty()
        && k.len() <= 317
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c))
}

fn parse_labels(s: &str) -> Result<Vec<LabelReq>, ApiError> {
    let mut out = Vec::new();
    for term in split_terms(s) {
        let term = term.trim();
        if term.is_empty() {
            continue;
        }
        let invalid = || {
            bad(format!(
                "unable to parse requirement: invalid label selector {term:?}"
            ))
        };
        let req = if let Some(k) = term.strip_prefix('!') {
            LabelReq::NotExists(k.trim().to_string())
        } else if let Some((k, v)) = term.split_once("!=") {
            LabelReq::NotEq(k.trim().into(), v.trim().into())
        } else if let Some((k, v)) = term.split_once("==") {
            LabelReq::Eq(k.trim().into(), v.trim().into())
        } else if let Some((k, v)) = term.split_once('=') {
            LabelReq::Eq(k.trim().into(), v.trim().into())
        } else if let Some((k, rest)) = split_set_op(term, " notin ") {
            LabelReq::NotIn(k, parse_set(rest).ok_or_else(invalid)?)
        } else if let Some((k, rest)) = split_set_op(term, " in ") {
            LabelReq::In(k, parse_set(rest).ok_or_else(invalid)?)
        } else {
            LabelReq::Exists(term.to_string())
        };
        let key = match &req {
            LabelReq::Eq(k, _)
            | LabelReq::NotEq(k, _)
            | LabelReq::In(k, _)
            | LabelReq::NotIn(k, _)
            | LabelReq::Exists(k)
            | LabelReq::NotExists(k) => k,
        };
        if !valid_label_key(key) {
            return Err(invalid());
        }
        out.push(req);
    }
    Ok(out)
}

fn split_set_op(term: &str, op: &str) -> Option<(String, String)> {
    let (k, rest) = term.split_once(op)?;
    Some((k.trim().to_string(), rest.trim().to_string()))
}

fn parse_set(s: String) -> Option<Vec<String>> {
    let inner = s.strip_prefix('(')?.strip_suffix(')')?;
    Some(
        inner
            .split(',')
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj() -> Value {
        json!({"metadata": {"name": "a", "namespace": "ns", "labels": {"app": "x", "tier": "web"}},
               "spec": {"type": "git"}})
    }

    #[test]
    fn label_forms() {
        let s = Selectors::parse(Some("app=x,tier in (web,db),!gone"), None, &[]).expect("parses");
        assert!(s.matches(&obj()));
        let s = Selectors::parse(Some("app notin (x)"), None, &[]).expect("parses");
        assert!(!s.matches(&obj()));
        let s = Selectors::parse(Some("tier,app!=y"), None, &[]).expect("parses");
        assert!(s.matches(&obj()));
    }

    #[test]
    fn field_forms() {
        let allowed = vec!["spec.type".to_string()];
        let s = Selectors::parse(None, Some("metadata.name=a,spec.type==git"), &allowed)
            .expect("parses");
        assert!(s.matches(&obj()));
        let s = Selectors::parse(None, Some("metadata.name!=a"), &allowed).expect("parses");
        assert!(!s.matches(&obj()));
        assert!(Selectors::parse(None, Some("spec.other=1"), &allowed).is_err());
    }
}
