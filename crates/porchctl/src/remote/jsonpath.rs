//! The subset of Kubernetes JSONPath that `-o custom-columns` uses: `.a.b`, `['a']`, `[0]`,
//! `[*]`, `..`-free filters `[?(@.k=='v')]` / `!=`, and an optional `{...}` wrapper.

use serde_json::Value;

use super::error::RemoteError;

#[derive(Debug, Clone, PartialEq)]
enum Step {
    Field(String),
    Index(i64),
    Wildcard,
    /// `..`: the value and everything below it, before the next step.
    Recursive,
    /// `['a','b']` / `[0,2]`: several keys or indices.
    Union(Vec<Step>),
    Filter {
        path: Vec<String>,
        negate: bool,
        value: String,
    },
}

/// A compiled path.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonPath {
    steps: Vec<Step>,
}

impl JsonPath {
    /// Parses `.spec.git.repo` or `{.status.conditions[?(@.type=="Ready")].status}`.
    pub fn parse(expr: &str) -> Result<Self, RemoteError> {
        let bad = |why: &str| RemoteError::Usage(format!("invalid jsonpath {expr:?}: {why}"));
        let mut s = expr.trim();
        if let Some(inner) = s.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
            s = inner.trim();
        }
        // custom-columns accepts `metadata.name` as well as `.metadata.name`.
        let owned;
        if !s.starts_with('.') && !s.starts_with('[') && !s.is_empty() {
            owned = format!(".{s}");
            s = &owned;
        }
        let mut steps = Vec::new();
        let mut rest = s;
        while !rest.is_empty() {
            if let Some(r) = rest.strip_prefix("..") {
                steps.push(Step::Recursive);
                // `..name` names a field right away; `..[` or `..*` go on below.
                rest = if r.starts_with(['[', '.', '*']) || r.is_empty() {
                    r
                } else {
                    &rest[1..]
                };
                if let Some(r) = rest.strip_prefix('*') {
                    steps.push(Step::Wildcard);
                    rest = r;
                }
            } else if let Some(r) = rest.strip_prefix('.') {
                let end = r.find(['.', '[']).unwrap_or(r.len());
                match &r[..end] {
                    "" => {}
                    "*" => steps.push(Step::Wildcard),
                    name => steps.push(Step::Field(name.to_string())),
                }
                rest = &r[end..];
            } else if let Some(r) = rest.strip_prefix("[?(") {
                let end = r.find(")]").ok_or_else(|| bad("unterminated filter"))?;
                steps.push(parse_filter(&r[..end]).ok_or_else(|| bad("unsupported filter"))?);
                rest = &r[end + 2..];
            } else if let Some(r) = rest.strip_prefix('[') {
                let end = r.find(']').ok_or_else(|| bad("unterminated ["))?;
                let inner = r[..end].trim();
                let one = |part: &str| {
                    let part = part.trim();
                    match part.parse::<i64>() {
                        Ok(i) => Step::Index(i),
                        Err(_) => {
                            Step::Field(part.trim_matches(|c| c == '\'' || c == '"').to_string())
                        }
                    }
                };
                if inner == "*" {
                    steps.push(Step::Wildcard);
                } else if inner.contains(',') {
                    steps.push(Step::Union(inner.split(',').map(one).collect()));
                } else {
                    steps.push(one(inner));
                }
                rest = &r[end + 1..];
            } else {
                return Err(bad("unexpected character"));
            }
        }
        Ok(JsonPath { steps })
    }

    /// All values the path selects (kubectl's `FindResults` with missing keys allowed).
    pub fn find<'a>(&self, obj: &'a Value) -> Vec<&'a Value> {
        let mut cur = vec![obj];
        for step in &self.steps {
            let mut next = Vec::new();
            for v in cur {
                apply(step, v, &mut next);
            }
            cur = next;
        }
        cur
    }
}

/// What one step selects from `v`, appended to `next`.
fn apply<'a>(step: &Step, v: &'a Value, next: &mut Vec<&'a Value>) {
    match step {
        Step::Recursive => descendants(v, next),
        Step::Union(steps) => {
            for s in steps {
                apply(s, v, next);
            }
        }
        Step::Field(k) => {
            if let Some(x) = v.get(k) {
                next.push(x);
            }
        }
        Step::Index(i) => {
            if let Some(arr) = v.as_array() {
                let idx = if *i < 0 { arr.len() as i64 + i } else { *i };
                if let Some(x) = usize::try_from(idx).ok().and_then(|i| arr.get(i)) {
                    next.push(x);
                }
            }
        }
        Step::Wildcard => match v {
            Value::Array(a) => next.extend(a.iter()),
            Value::Object(m) => next.extend(m.values()),
            _ => {}
        },
        Step::Filter {
            path,
            negate,
            value,
        } => {
            if let Some(arr) = v.as_array() {
                for item in arr {
                    let mut f = Some(item);
                    for k in path {
                        f = f.and_then(|x| x.get(k));
                    }
                    let hit = f.map(scalar_text).as_deref() == Some(value.as_str());
                    if hit != *negate {
                        next.push(item);
                    }
                }
            }
        }
    }
}

/// `v` and every collection below it that holds something, depth first (kubectl's
/// `evalRecursive`: the next step looks into each of them).
fn descendants<'a>(v: &'a Value, out: &mut Vec<&'a Value>) {
    let children: Vec<&Value> = match v {
        Value::Array(a) => a.iter().collect(),
        Value::Object(m) => m.values().collect(),
        _ => Vec::new(),
    };
    if children.is_empty() {
        return;
    }
    out.push(v);
    for c in children {
        descendants(c, out);
    }
}

fn parse_filter(cond: &str) -> Option<Step> {
    let (lhs, rhs, negate) = if let Some((l, r)) = cond.split_once("!=") {
        (l, r, true)
    } else {
        let (l, r) = cond.split_once("==")?;
        (l, r, false)
    };
    let path = lhs
        .trim()
        .strip_prefix("@.")?
        .split('.')
        .map(str::to_string)
        .collect();
    let value = rhs
        .trim()
        .trim_matches(|c| c == '\'' || c == '"')
        .to_string();
    Some(Step::Filter {
        path,
        negate,
        value,
    })
}

/// How Go's `fmt.Sprint` shows a decoded JSON value (what kubectl prints in a column).
pub fn scalar_text(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".to_string(),
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(scalar_text).collect::<Vec<_>>().join(" ")
        ),
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{k}:{}", scalar_text(&m[k])))
                .collect();
            format!("map[{}]", parts.join(" "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn texts(p: &str, v: &Value) -> Vec<String> {
        JsonPath::parse(p)
            .expect("parses")
            .find(v)
            .into_iter()
            .map(scalar_text)
            .collect()
    }

    /// kubectl's wildcard on maps (`.*`), recursive descent (`..`) and unions (`[a,b]`).
    #[test]
    fn wildcards_descent_and_unions_as_kubectl() {
        let v = json!({"metadata": {"name": "cm1", "labels": {"name": "l"}},
                       "data": {"c": "2", "x": "3"},
                       "items": [{"name": "i0"}, {"name": "i1"}, {"other": 1}]});
        assert_eq!(texts("{.data.*}", &v), ["2", "3"]);
        assert_eq!(texts("{.data['c','x']}", &v), ["2", "3"]);
        assert_eq!(texts("{.items[0,2].name}", &v), ["i0"]);
        let mut names = texts("{..name}", &v);
        names.sort();
        assert_eq!(names, ["cm1", "i0", "i1", "l"]);
        assert_eq!(texts("{.items..name}", &v), ["i0", "i1"]);
        assert_eq!(texts("{..items[1].name}", &v), ["i1"]);
    }

    #[test]
    fn fields_filters_indexes() {
        let o = json!({"metadata": {"name": "r"},
            "status": {"conditions": [{"type": "X", "status": "False"}, {"type": "Ready", "status": "True"}]}});
        assert_eq!(texts(".metadata.name", &o), ["r"]);
        assert_eq!(texts("metadata.name", &o), ["r"]);
        assert_eq!(
            texts(".status.conditions[?(@.type=='Ready')].status", &o),
            ["True"]
        );
        assert_eq!(
            texts("{.status.conditions[?(@.type!=\"Ready\")].type}", &o),
            ["X"]
        );
        assert_eq!(texts(".status.conditions[0].type", &o), ["X"]);
        assert_eq!(texts(".status.conditions[-1].type", &o), ["Ready"]);
        assert_eq!(texts(".status.conditions[*].type", &o), ["X", "Ready"]);
        assert_eq!(texts(".metadata['name']", &o), ["r"]);
        assert!(texts(".spec.git.repo", &o).is_empty());
    }

    #[test]
    fn go_formatting_of_composites() {
        assert_eq!(scalar_text(&json!({"b": 1, "a": "x"})), "map[a:x b:1]");
        assert_eq!(scalar_text(&json!(["a", true])), "[a true]");
    }
}
