//! Server-side `Table` output (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`).

use std::sync::Arc;

use serde_json::{Map, Value, json};

/// How to compute one cell from the object.
pub type CellFn = Arc<dyn Fn(&Value) -> Value + Send + Sync>;

/// One Table column.
#[derive(Clone)]
pub struct Column {
    pub name: String,
    /// `string`, `integer`, `number`, `boolean` or `date`.
    pub type_: String,
    pub format: String,
    pub description: String,
    pub priority: i32,
    pub cell: CellFn,
}

impl Column {
    /// A column read from a simple JSONPath: `.a.b`, with optional filters
    /// `[?(@.type=="Ready")]` (the way CRD printer columns select a condition).
    pub fn path(name: &str, type_: &str, path: &str) -> Self {
        let p = path.to_string();
        Self::computed(name, type_, move |obj| {
            eval_path(obj, &p).unwrap_or(Value::Null)
        })
    }

    pub fn computed(
        name: &str,
        type_: &str,
        f: impl Fn(&Value) -> Value + Send + Sync + 'static,
    ) -> Self {
        Self {
            name: name.into(),
            type_: type_.into(),
            format: String::new(),
            description: String::new(),
            priority: 0,
            cell: Arc::new(f),
        }
    }

    /// The object's name as a column of its own (Kubernetes' `format: name`): a resource
    /// listing it among its columns has no leading Name column (Events show it last, wide).
    pub fn name() -> Self {
        let mut c = Self::path("Name", "string", ".metadata.name");
        c.format = "name".into();
        c.description = NAME_DESCRIPTION.into();
        c
    }

    /// kubectl's `CREATED AT` of kinds listed without an age (RBAC roles, CRDs): the
    /// creation time as a date; set `age_column = false` with it.
    pub fn created_at() -> Self {
        Self::path("Created At", "date", ".metadata.creationTimestamp")
    }

    pub fn priority(mut self, p: i32) -> Self {
        self.priority = p;
        self
    }

    pub fn description(mut self, d: &str) -> Self {
        self.description = d.into();
        self
    }
}

const NAME_DESCRIPTION: &str = "Name must be unique within a namespace. More info: http://kubernetes.io/docs/user-guide/identifiers#names";

/// Evaluates `.a.b[?(@.k=="v")].c`; `None` when any step is missing.
pub fn eval_path(obj: &Value, path: &str) -> Option<Value> {
    eval_path_ref(obj, path).cloned()
}

/// [`eval_path`] by reference: a cell is computed for every row of every Table, so only the
/// final value may be copied, never the objects on the way.
fn eval_path_ref<'a>(obj: &'a Value, path: &str) -> Option<&'a Value> {
    let mut cur = obj;
    let mut rest = path.trim();
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("[?(@.") {
            let end = r.find(")]")?;
            let cond = &r[..end];
            rest = &r[end + 2..];
            let (k, v) = cond.split_once("==")?;
            let v = v.trim().trim_matches(|c| c == '"' || c == '\'');
            cur = cur
                .as_array()?
                .iter()
                .find(|item| item.get(k.trim()).and_then(Value::as_str) == Some(v))?;
        } else if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            cur = cur.get(&r[..end])?;
            rest = &r[end..];
        } else {
            return None;
        }
    }
    Some(cur)
}

/// Kubernetes' `HumanDuration` (what the AGE column shows).
pub fn human_duration(seconds: i64) -> String {
    if seconds < -1 {
        return "<invalid>".into();
    }
    let s = seconds.max(0);
    if s < 120 {
        return format!("{s}s");
    }
    let m = s / 60;
    if m < 10 {
        let rs = s % 60;
        return if rs == 0 {
            format!("{m}m")
        } else {
            format!("{m}m{rs}s")
        };
    }
    if m < 180 {
        return format!("{m}m");
    }
    let h = m / 60;
    if h < 8 {
        let rm = m % 60;
        return if rm == 0 {
            format!("{h}h")
        } else {
            format!("{h}h{rm}m")
        };
    }
    if h < 48 {
        return format!("{h}h");
    }
    let d = h / 24;
    if h < 24 * 8 {
        let rh = h % 24;
        return if rh == 0 {
            format!("{d}d")
        } else {
            format!("{d}d{rh}h")
        };
    }
    if h < 24 * 365 * 2 {
        return format!("{d}d");
    }
    let y = d / 365;
    if h < 24 * 365 * 8 {
        let rd = d % 365;
        return if rd == 0 {
            format!("{y}y")
        } else {
            format!("{y}y{rd}d")
        };
    }
    format!("{y}y")
}

fn age(obj: &Value) -> Value {
    Value::String(age_text(
        obj.pointer("/metadata/creationTimestamp")
            .and_then(Value::as_str),
    ))
}

/// The Age cell for a `creationTimestamp`, now.
pub(crate) fn age_text(created: Option<&str>) -> String {
    let Some(ts) = created else {
        return "<unknown>".into();
    };
    match ts.parse::<k8s_openapi::jiff::Timestamp>() {
        Ok(t) => {
            let secs = k8s_openapi::jiff::Timestamp::now().as_second() - t.as_second();
            human_duration(secs)
        }
        Err(_) => "<invalid>".into(),
    }
}

/// What each row carries besides its cells (`includeObject`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IncludeObject {
    None,
    #[default]
    Metadata,
    Object,
}

impl IncludeObject {
    pub fn parse(s: Option<&str>) -> Self {
        match s {
            Some("None") => IncludeObject::None,
            Some("Object") => IncludeObject::Object,
            _ => IncludeObject::Metadata,
        }
    }
}

/// Builds Tables for one resource's columns.
pub struct TableBuilder<'a> {
    pub columns: &'a [Column],
    pub age_column: bool,
    pub include: IncludeObject,
}

impl TableBuilder<'_> {
    /// Whether the Name column leads (unless the columns place it themselves).
    fn leading_name(&self) -> bool {
        !self.columns.iter().any(|c| c.format == "name")
    }

    pub fn column_definitions(&self) -> Vec<Value> {
        let mut defs = Vec::with_capacity(self.columns.len() + 2);
        if self.leading_name() {
            defs.push(json!({
                "name": "Name", "type": "string", "format": "name", "priority": 0,
                "description": NAME_DESCRIPTION,
            }));
        }
        for c in self.columns {
            defs.push(json!({"name": c.name, "type": c.type_, "format": c.format,
                             "description": c.description, "priority": c.priority}));
        }
        if self.age_column {
            defs.push(json!({"name": "Age", "type": "string", "format": "", "priority": 0,
                             "description": "CreationTimestamp is a timestamp representing the server time when this object was created."}));
        }
        defs
    }

    /// The Name and column cells of `obj` (not Age, which depends on the time).
    pub(crate) fn cells(&self, obj: &Value) -> Vec<Value> {
        let mut cells = Vec::with_capacity(self.columns.len() + 2);
        if self.leading_name() {
            cells.push(
                obj.pointer("/metadata/name")
                    .cloned()
                    .unwrap_or(Value::Null),
            );
        }
        for c in self.columns {
            cells.push((c.cell)(obj));
        }
        cells
    }

    pub fn row(&self, obj: &Value) -> Value {
        let mut cells = self.cells(obj);
        if self.age_column {
            cells.push(age(obj));
        }
        let mut row = Map::new();
        row.insert("cells".into(), Value::Array(cells));
        match self.include {
            IncludeObject::None => {}
            IncludeObject::Metadata => {
                row.insert(
                    "object".into(),
                    json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                           "metadata": obj.get("metadata").cloned().unwrap_or_else(|| json!({}))}),
                );
            }
            IncludeObject::Object => {
                row.insert("object".into(), obj.clone());
            }
        }
        Value::Object(row)
    }

    /// A complete Table of `objects`.
    pub fn table(
        &self,
        objects: &[Value],
        resource_version: Option<String>,
        cont: Option<String>,
    ) -> Value {
        let mut meta = Map::new();
        if let Some(rv) = resource_version {
            meta.insert("resourceVersion".into(), rv.into());
        }
        if let Some(c) = cont {
            meta.insert("continue".into(), c.into());
        }
        json!({
            "kind": "Table",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": meta,
            "columnDefinitions": self.column_definitions(),
            "rows": objects.iter().map(|o| self.row(o)).collect::<Vec<_>>(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_with_condition_filter() {
        let o = json!({"status": {"conditions": [{"type": "X", "status": "False"},
                                                   {"type": "Ready", "status": "True"}]}});
        assert_eq!(
            eval_path(&o, ".status.conditions[?(@.type==\"Ready\")].status"),
            Some(json!("True"))
        );
        assert_eq!(eval_path(&o, ".spec.type"), None);
    }

    #[test]
    fn a_name_column_replaces_the_leading_one() {
        let columns = vec![
            Column::path("Reason", "string", ".reason"),
            Column::name().priority(1),
        ];
        let tb = TableBuilder {
            columns: &columns,
            age_column: false,
            include: IncludeObject::None,
        };
        let names: Vec<Value> = tb
            .column_definitions()
            .iter()
            .map(|d| d["name"].clone())
            .collect();
        assert_eq!(names, vec![json!("Reason"), json!("Name")]);
        let obj = json!({"metadata": {"name": "e1"}, "reason": "Started"});
        assert_eq!(tb.row(&obj)["cells"], json!(["Started", "e1"]));
    }

    #[test]
    fn durations_match_kubectl() {
        assert_eq!(human_duration(5), "5s");
        assert_eq!(human_duration(150), "2m30s");
        assert_eq!(human_duration(3 * 3600 + 5 * 60), "3h5m");
        assert_eq!(human_duration(3 * 86400), "3d");
    }
}
