//! The subset of Kubernetes JSONPath that kubectl's printers use: `.a.b`, `['a']`, `[0]`,
//! slices `[a:b]` / `[a:b:c]`, `[*]`, `.*`, `..`, unions, filters `[?(@.k=='v')]` / `!=`,
//! and an optional `{...}` wrapper. Evaluation fails as k8s.io/client-go/util/jsonpath does
//! (an index out of range, an index into something that is not a list).

use serde_json::Value;

use super::error::RemoteError;

#[derive(Debug, Clone, PartialEq)]
enum Step {
    Field(String),
    /// `[i]`, `[a:b]`, `[a:b:c]`, `[*]` (kubectl's `ArrayNode`).
    Array(ArrayParams),
    /// `.*`: a map's values or a list's elements.
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

/// kubectl's `ArrayNode` params: start, end (`end_derived` for `[i]`, read as `[i:i+1]`),
/// step; `None` where the text leaves one out.
#[derive(Debug, Clone, Copy, PartialEq)]
struct ArrayParams {
    start: Option<i64>,
    end: Option<i64>,
    end_derived: bool,
    step: Option<i64>,
}

impl ArrayParams {
    /// Parses the text between `[` and `]` as kubectl's `parseArray` does (`*` is `:`).
    fn parse(text: &str) -> Option<Self> {
        let text = if text == "*" { ":" } else { text };
        let parts: Vec<&str> = text.split(':').collect();
        if parts.len() > 3 {
            return None;
        }
        let num = |t: &str| -> Option<Option<i64>> {
            if t.is_empty() {
                return Some(None);
            }
            let digits = t.strip_prefix('-').unwrap_or(t);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            t.parse().ok().map(Some)
        };
        let start = num(parts[0])?;
        if parts.len() == 1 {
            let start = start?;
            return Some(ArrayParams {
                start: Some(start),
                end: Some(start.saturating_add(1)),
                end_derived: true,
                step: None,
            });
        }
        Some(ArrayParams {
            start,
            end: num(parts[1])?,
            end_derived: false,
            step: match parts.get(2) {
                Some(t) => num(t)?,
                None => None,
            },
        })
    }

    /// kubectl's `evalArray` on one list: the elements selected, or its error text.
    fn select<'a>(&self, arr: &'a [Value]) -> Result<Vec<&'a Value>, String> {
        let len = arr.len() as i64;
        let mut start = self.start.unwrap_or(0);
        if start < 0 {
            start = start.saturating_add(len);
        }
        let mut end = self.end.unwrap_or(len);
        if end < 0 || (end == 0 && self.end_derived) {
            end = end.saturating_add(len);
        }
        if start == end {
            return Ok(Vec::new());
        }
        if start >= len || start < 0 {
            return Err(format!(
                "array index out of bounds: index {start}, length {len}"
            ));
        }
        if end > len || end < 0 {
            return Err(format!(
                "array index out of bounds: index {}, length {len}",
                end - 1
            ));
        }
        if start > end {
            return Err(format!(
                "starting index {start} is greater than ending index {end}"
            ));
        }
        let step = match self.step {
            Some(s) if s <= 0 => return Err("step must be > 0".to_string()),
            Some(s) => s as usize,
            None => 1,
        };
        Ok(arr[start as usize..end as usize]
            .iter()
            .step_by(step)
            .collect())
    }
}

/// The Go type kubectl names for a decoded JSON value (`%v` of its `reflect.Type`).
fn go_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float64",
        Value::Number(_) => "int64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
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
                    match ArrayParams::parse(part) {
                        Some(a) => Step::Array(a),
                        None => {
                            Step::Field(part.trim_matches(|c| c == '\'' || c == '"').to_string())
                        }
                    }
                };
                if inner.contains(',') {
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

    /// All values the path selects (kubectl's `FindResults` with missing keys allowed);
    /// nothing where evaluation fails.
    pub fn find<'a>(&self, obj: &'a Value) -> Vec<&'a Value> {
        self.try_find(obj).unwrap_or_default()
    }

    /// All values the path selects, or kubectl's error text where evaluation fails (an
    /// index out of range, an index or filter on something that is not a list).
    pub fn try_find<'a>(&self, obj: &'a Value) -> Result<Vec<&'a Value>, String> {
        self.try_find_keys(obj, true)
    }

    /// [`JsonPath::try_find`], with kubectl's `AllowMissingKeys(allow_missing)`: when not
    /// allowed, a field none of the values before it has is `<name> is not found`.
    pub fn try_find_keys<'a>(
        &self,
        obj: &'a Value,
        allow_missing: bool,
    ) -> Result<Vec<&'a Value>, String> {
        let mut cur = vec![obj];
        for step in &self.steps {
            let mut next = Vec::new();
            let had_input = !cur.is_empty();
            for v in cur {
                apply(step, v, &mut next)?;
            }
            if let Step::Field(name) = step
                && !allow_missing
                && had_input
                && next.is_empty()
            {
                return Err(format!("{name} is not found"));
            }
            cur = next;
        }
        Ok(cur)
    }
}

/// What one step selects from `v`, appended to `next`.
fn apply<'a>(step: &Step, v: &'a Value, next: &mut Vec<&'a Value>) -> Result<(), String> {
    match step {
        Step::Recursive => descendants(v, next),
        Step::Union(steps) => {
            for s in steps {
                apply(s, v, next)?;
            }
        }
        Step::Field(k) => {
            if let Some(x) = v.get(k) {
                next.push(x);
            }
        }
        Step::Array(params) => match v {
            // kubectl skips nil values.
            Value::Null => {}
            Value::Array(arr) => next.extend(params.select(arr)?),
            other => return Err(format!("{} is not array or slice", go_type(other))),
        },
        Step::Wildcard => match v {
            Value::Array(a) => next.extend(a.iter()),
            Value::Object(m) => next.extend(m.values()),
            _ => {}
        },
        Step::Filter {
            path,
            negate,
            value,
        } => match v {
            Value::Null => {}
            Value::Array(arr) => {
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
            other => {
                return Err(format!(
                    "{} is not array or slice and cannot be filtered",
                    super::gotemplate::go_value_text(other)
                ));
            }
        },
    }
    Ok(())
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

    fn err(p: &str, v: &Value) -> String {
        JsonPath::parse(p)
            .expect("parses")
            .try_find(v)
            .expect_err(p)
    }

    /// kubectl 1.32's `evalArray` / `evalFilter` errors (texts from its output on a
    /// ConfigMap with `finalizers: [f1]`, `data.x: abc`).
    #[test]
    fn index_errors_as_kubectl() {
        let v = json!({"metadata": {"name": "cm3", "finalizers": ["f1"]},
                       "data": {"x": "abc"}, "spec": {"n": null}});
        let oob = |i: i64| format!("array index out of bounds: index {i}, length 1");
        assert_eq!(err("{.metadata.finalizers[5]}", &v), oob(5));
        assert_eq!(err("{.metadata.finalizers[1]}", &v), oob(1));
        // -2 + length 1.
        assert_eq!(err("{.metadata.finalizers[-2]}", &v), oob(-1));
        assert_eq!(err("{.metadata.finalizers[1:3]}", &v), oob(1));
        assert_eq!(err("{.metadata.finalizers[0:2]}", &v), oob(1));
        assert_eq!(err("{.metadata.finalizers[1:0]}", &v), oob(1));
        assert_eq!(err("{.metadata.finalizers[0,3]}", &v), oob(3));
        assert_eq!(err("{..finalizers[3]}", &v), oob(3));
        assert_eq!(err("{.metadata.finalizers[0:1:0]}", &v), "step must be > 0");
        assert_eq!(err("{.data.x[0]}", &v), "string is not array or slice");
        assert_eq!(err("{.data.x[*]}", &v), "string is not array or slice");
        assert_eq!(err("{.data.x[0:1]}", &v), "string is not array or slice");
        assert_eq!(
            err("{.metadata[0]}", &v),
            "map[string]interface {} is not array or slice"
        );
        assert_eq!(
            err("{.metadata[*]}", &v),
            "map[string]interface {} is not array or slice"
        );
        assert_eq!(
            err("{.data.x[?(@.a==\"b\")]}", &v),
            "abc is not array or slice and cannot be filtered"
        );
        assert_eq!(
            err("{.data[?(@.a==\"b\")]}", &v),
            "map[x:abc] is not array or slice and cannot be filtered"
        );
        // Missing keys and nil values select nothing; so do empty slices.
        for p in [
            "{.metadata.nope[3]}",
            "{.spec.n[3]}",
            "{.metadata.finalizers[0:0]}",
            "{.metadata.finalizers[1:]}",
            "{.metadata.finalizers[:-1]}",
            "{.metadata.finalizers[?(@.a==\"b\")]}",
        ] {
            assert!(texts(p, &v).is_empty(), "{p}");
        }
        let bad = JsonPath::parse("{.metadata.finalizers[5]}").expect("parses");
        assert!(bad.find(&v).is_empty());
    }

    /// Slices `[a:b]`, `[a:]`, `[:b]`, `[a:b:c]`, negative bounds, as kubectl selects them.
    #[test]
    fn slices_as_kubectl() {
        let v = json!({"l": ["a", "b", "c", "d", "e"], "one": ["f1"]});
        assert_eq!(texts("{.one[0:1]}", &v), ["f1"]);
        assert_eq!(texts("{.one[:1]}", &v), ["f1"]);
        assert_eq!(texts("{.one[-1:]}", &v), ["f1"]);
        assert_eq!(texts("{.one[::2]}", &v), ["f1"]);
        assert_eq!(texts("{.one[-1]}", &v), ["f1"]);
        assert_eq!(texts("{.l[1:3]}", &v), ["b", "c"]);
        assert_eq!(texts("{.l[3:]}", &v), ["d", "e"]);
        assert_eq!(texts("{.l[:2]}", &v), ["a", "b"]);
        assert_eq!(texts("{.l[:-3]}", &v), ["a", "b"]);
        assert_eq!(texts("{.l[-2:]}", &v), ["d", "e"]);
        assert_eq!(texts("{.l[::2]}", &v), ["a", "c", "e"]);
        assert_eq!(texts("{.l[1:5:3]}", &v), ["b", "e"]);
        assert_eq!(texts("{.l[:]}", &v), ["a", "b", "c", "d", "e"]);
        assert_eq!(texts("{.l[*]}", &v), ["a", "b", "c", "d", "e"]);
        assert_eq!(texts("{.l[2:2]}", &v), Vec::<String>::new());
        assert_eq!(
            err("{.l[3:1]}", &v),
            "starting index 3 is greater than ending index 1"
        );
    }
}
