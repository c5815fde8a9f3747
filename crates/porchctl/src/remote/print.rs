//! Output of remote `get` commands the way upstream porchctl prints them through kubectl's
//! printers: server-side `Table`s, `custom-columns`, `yaml`/`json` (keys sorted, one document
//! per object), and `name`.

use serde_json::{Map, Value};

use super::error::RemoteError;
use super::jsonpath::{JsonPath, scalar_text};
use super::tabwriter::TabWriter;

/// What `-o/--output` asked for.
#[derive(Debug, Clone, PartialEq)]
pub enum OutputFormat {
    /// The server's Table, priority-0 columns.
    Table,
    /// The server's Table, all columns.
    Wide,
    Yaml,
    Json,
    Name,
    /// `(header, path)` pairs.
    CustomColumns(Vec<(String, JsonPath)>),
    /// `jsonpath=TEMPLATE`: literal text and `{path}` parts.
    JsonPathTemplate(Vec<TemplatePart>),
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

impl OutputFormat {
    /// Parses kubectl's `-o` values.
    pub fn parse(s: &str) -> Result<Self, RemoteError> {
        match s {
            "" => Ok(OutputFormat::Table),
            "wide" => Ok(OutputFormat::Wide),
            "yaml" => Ok(OutputFormat::Yaml),
            "json" => Ok(OutputFormat::Json),
            "name" => Ok(OutputFormat::Name),
            _ => {
                if let Some(spec) = s.strip_prefix("custom-columns=") {
                    parse_custom_columns(spec).map(OutputFormat::CustomColumns)
                } else if let Some(t) = s.strip_prefix("jsonpath=") {
                    parse_template(t).map(OutputFormat::JsonPathTemplate)
                } else {
                    Err(RemoteError::Usage(format!(
                        "unable to match a printer suitable for the output format {s:?}, allowed formats are: custom-columns,json,jsonpath,name,wide,yaml"
                    )))
                }
            }
        }
    }

    /// Whether the server should be asked for a `Table` (upstream asks unless the output is
    /// custom-columns, yaml or json).
    pub fn wants_table(&self) -> bool {
        matches!(self, OutputFormat::Table | OutputFormat::Wide)
    }
}

fn parse_custom_columns(spec: &str) -> Result<Vec<(String, JsonPath)>, RemoteError> {
    if spec.is_empty() {
        return Err(RemoteError::Usage(
            "custom-columns format specified but no custom columns given".into(),
        ));
    }
    spec.split(',')
        .map(|part| {
            let (header, path) = part.split_once(':').ok_or_else(|| {
                RemoteError::Usage(format!(
                    "unexpected custom-columns spec: {part}, expected <header>:<json-path-expr>"
                ))
            })?;
            Ok((header.to_string(), JsonPath::parse(path)?))
        })
        .collect()
}

/// Splits `text{.path}text{"literal"}{range .path}…{end}` into parts, as kubectl's
/// jsonpath parser reads a template (a `range` without `end` runs to the template's end).
fn parse_template(t: &str) -> Result<Vec<TemplatePart>, RemoteError> {
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
    Ok(parts)
}

/// How kubectl's jsonpath printer writes one selected value.
fn template_value(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Object(_) | Value::Array(_) => go_escape(&sorted(v).to_string()),
        other => scalar_text(other),
    }
}

fn render_parts(out: &mut String, at: &Value, parts: &[TemplatePart]) {
    for part in parts {
        match part {
            TemplatePart::Text(t) => out.push_str(t),
            TemplatePart::Current => out.push_str(&template_value(at)),
            TemplatePart::Path(p) => {
                let values: Vec<String> = p.find(at).into_iter().map(template_value).collect();
                out.push_str(&values.join(" "));
            }
            TemplatePart::Range(p, body) => {
                for v in p.find(at) {
                    match v {
                        Value::Array(items) => {
                            for item in items {
                                render_parts(out, item, body);
                            }
                        }
                        other => render_parts(out, other, body),
                    }
                }
            }
        }
    }
}

/// Renders a jsonpath template per object, as kubectl does (values of one path joined by
/// spaces, composite values as compact JSON, nothing for missing keys, no newline added).
pub fn print_template(objects: &[Value], parts: &[TemplatePart]) -> String {
    let mut out = String::new();
    for obj in objects {
        render_parts(&mut out, obj, parts);
    }
    out
}

/// kubectl's printing flags, shared by `repo get` and `rpkg get`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct PrintFlags {
    /// Output format: yaml, json, name, wide, custom-columns=HEADER:JSONPATH,...,
    /// jsonpath=TEMPLATE
    #[arg(short = 'o', long, default_value = "", hide_default_value = true)]
    pub output: String,
    /// If present, list the requested object(s) across all namespaces.
    #[arg(short = 'A', long)]
    pub all_namespaces: bool,
    /// When using the default or custom-column output format, don't print headers.
    #[arg(long)]
    pub no_headers: bool,
    /// When printing, show all labels as the last column.
    #[arg(long)]
    pub show_labels: bool,
    /// Labels to show as columns (comma-separated or repeated), e.g. -L team,tier
    /// (kubectl's string slice: each value a CSV record).
    #[arg(
        short = 'L',
        long,
        value_name = "LABEL",
        value_parser = crate::cli::GoCsv,
        action = clap::ArgAction::Append
    )]
    pub label_columns: Vec<crate::cli::CsvElements>,
    /// If non-empty, sort the list using this field specification, a JSONPath expression
    /// (e.g. '{.metadata.name}').
    #[arg(
        long,
        default_value = "",
        hide_default_value = true,
        value_name = "JSONPATH"
    )]
    pub sort_by: String,
}

impl PrintFlags {
    /// The Table printer's options for `format`.
    pub fn table_options(&self, format: &OutputFormat) -> TableOptions {
        TableOptions {
            wide: *format == OutputFormat::Wide,
            no_headers: self.no_headers,
            with_namespace: self.all_namespaces,
            show_labels: self.show_labels,
            label_columns: crate::cli::csv_elements(&self.label_columns),
        }
    }
}

/// Options for table output.
#[derive(Debug, Clone, Default)]
pub struct TableOptions {
    pub wide: bool,
    pub no_headers: bool,
    pub with_namespace: bool,
    pub show_labels: bool,
    /// `-L`: one column per label key, headed by the key's last `/` segment upper-cased.
    pub label_columns: Vec<String>,
}

/// kubectl's `printTable`: headers upper-cased, nothing at all when there are no rows.
pub fn print_table(table: &Value, opts: &TableOptions) -> String {
    let empty = Vec::new();
    let columns = table
        .get("columnDefinitions")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    let rows = table
        .get("rows")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    if rows.is_empty() {
        return String::new();
    }
    let shown: Vec<bool> = columns
        .iter()
        .map(|c| opts.wide || c.get("priority").and_then(Value::as_i64).unwrap_or(0) == 0)
        .collect();
    let mut w = TabWriter::new();
    if !opts.no_headers {
        let mut headers: Vec<String> = Vec::new();
        if opts.with_namespace {
            headers.push("NAMESPACE".into());
        }
        for (c, show) in columns.iter().zip(&shown) {
            if *show {
                let name = c.get("name").and_then(Value::as_str).unwrap_or_default();
                headers.push(name.to_uppercase());
            }
        }
        for key in &opts.label_columns {
            let last = key.rsplit('/').next().unwrap_or(key);
            headers.push(last.to_uppercase());
        }
        if opts.show_labels {
            headers.push("LABELS".into());
        }
        w.write(&headers.join("\t"));
        w.write("\n");
    }
    for row in rows {
        let mut cells: Vec<String> = Vec::new();
        let meta = row.pointer("/object/metadata");
        if opts.with_namespace {
            cells.push(
                meta.and_then(|m| m.get("namespace"))
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
            );
        }
        let row_cells = row.get("cells").and_then(Value::as_array).unwrap_or(&empty);
        for (cell, show) in row_cells.iter().zip(&shown) {
            if *show {
                cells.push(cell_text(cell));
            }
        }
        for key in &opts.label_columns {
            cells.push(
                meta.and_then(|m| m.get("labels"))
                    .and_then(|l| l.get(key))
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
            );
        }
        if opts.show_labels {
            cells.push(labels_text(meta.and_then(|m| m.get("labels"))));
        }
        w.write(&cells.join("\t"));
        w.write("\n");
    }
    w.finish()
}

fn cell_text(cell: &Value) -> String {
    match cell {
        Value::Null => String::new(),
        // kubectl cuts a cell at the first line break and marks the cut.
        Value::String(s) => match s.find(['\n', '\r', '\x0c']) {
            Some(i) => format!("{}...", &s[..i]),
            None => s.clone(),
        },
        other => scalar_text(other),
    }
}

fn labels_text(labels: Option<&Value>) -> String {
    let Some(Value::Object(m)) = labels else {
        return "<none>".into();
    };
    if m.is_empty() {
        return "<none>".into();
    }
    let mut pairs: Vec<String> = m
        .iter()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
        .collect();
    pairs.sort();
    pairs.join(",")
}

/// kubectl's custom-columns printer: `<none>` for a missing value, several values joined by
/// commas.
pub fn print_custom_columns(
    objects: &[Value],
    columns: &[(String, JsonPath)],
    no_headers: bool,
) -> String {
    let mut w = TabWriter::new();
    if !no_headers {
        let headers: Vec<&str> = columns.iter().map(|(h, _)| h.as_str()).collect();
        w.write(&headers.join("\t"));
        w.write("\n");
    }
    for obj in objects {
        let cells: Vec<String> = columns
            .iter()
            .map(|(_, path)| {
                let found = path.find(obj);
                if found.is_empty() {
                    "<none>".to_string()
                } else {
                    found
                        .into_iter()
                        .map(scalar_text)
                        .collect::<Vec<_>>()
                        .join(",")
                }
            })
            .collect();
        w.write(&cells.join("\t"));
        w.write("\n");
    }
    w.finish()
}

/// Drops `metadata.managedFields`, as kubectl's printers do unless `--show-managed-fields`.
pub fn hide_managed_fields(objects: &mut [Value]) {
    for o in objects {
        if let Some(meta) = o.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.remove("managedFields");
        }
    }
}

/// Objects as YAML documents with sorted keys, `---` between them (kubectl's YAMLPrinter).
pub fn print_yaml(objects: &[Value]) -> Result<String, RemoteError> {
    let mut out = String::new();
    for (i, obj) in objects.iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        out.push_str(&super::yaml::to_yaml(obj));
    }
    Ok(out)
}

/// Objects as JSON documents the way Go's `json.MarshalIndent(obj, "", "    ")` writes them:
/// sorted keys, four-space indent, HTML characters escaped.
pub fn print_json(objects: &[Value]) -> Result<String, RemoteError> {
    use serde::Serialize as _;
    let mut out = String::new();
    for obj in objects {
        let mut buf = Vec::new();
        let fmt = serde_json::ser::PrettyFormatter::with_indent(b"    ");
        let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
        sorted(obj)
            .serialize(&mut ser)
            .map_err(|e| RemoteError::Decode(format!("cannot encode JSON: {e}")))?;
        out.push_str(&go_escape(&String::from_utf8_lossy(&buf)));
        out.push('\n');
    }
    Ok(out)
}

/// Go's JSON encoder escapes HTML characters and line separators. Outside strings JSON has
/// none of these characters, so replacing them everywhere only touches string contents.
fn go_escape(json: &str) -> String {
    json.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

/// `<resource>.<group>/<name>` per object (kubectl's NamePrinter).
pub fn print_names(objects: &[Value], resource: &str) -> String {
    let mut out = String::new();
    for obj in objects {
        let name = obj
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        out.push_str(&format!("{resource}/{name}\n"));
    }
    out
}

/// A copy of `v` with every object's keys in lexical order (Go encodes maps that way).
pub fn sorted(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let mut out = Map::new();
            for k in keys {
                out.insert(k.clone(), sorted(&m[k]));
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn repo() -> Value {
        json!({"apiVersion": "config.porch.kpt.dev/v1alpha1", "kind": "Repository",
               "metadata": {"name": "test-blueprints", "namespace": "ns"},
               "spec": {"type": "git", "content": "Package", "description": "Test Blueprints",
                        "git": {"repo": "http://h/x.git", "branch": "main", "directory": "/"}},
               "status": {"conditions": [{"type": "Ready", "status": "True"}]}})
    }

    #[test]
    fn custom_columns_as_upstream_golden() {
        let OutputFormat::CustomColumns(cols) = OutputFormat::parse(
            "custom-columns=NAME:.metadata.name,DESC:.spec.description,READY:.status.conditions[?(@.type=='Ready')].status,SYNC:.spec.sync.schedule",
        )
        .expect("parses") else {
            panic!("custom columns expected");
        };
        assert_eq!(
            print_custom_columns(&[repo()], &cols, false),
            "NAME              DESC              READY   SYNC\ntest-blueprints   Test Blueprints   True    <none>\n"
        );
    }

    #[test]
    fn table_hides_priority_columns_and_empty_tables() {
        let table = json!({"kind": "Table", "columnDefinitions": [
                {"name": "Name", "priority": 0}, {"name": "Deployment", "priority": 0},
                {"name": "Branch", "priority": 1}],
            "rows": [{"cells": ["r", false, "main"], "object": {"metadata": {"namespace": "ns"}}}]});
        assert_eq!(
            print_table(&table, &TableOptions::default()),
            "NAME   DEPLOYMENT\nr      false\n"
        );
        assert_eq!(
            print_table(
                &table,
                &TableOptions {
                    wide: true,
                    with_namespace: true,
                    ..Default::default()
                }
            ),
            "NAMESPACE   NAME   DEPLOYMENT   BRANCH\nns          r      false        main\n"
        );
        let empty = json!({"columnDefinitions": [{"name": "Name"}], "rows": []});
        assert_eq!(print_table(&empty, &TableOptions::default()), "");
    }

    #[test]
    fn json_like_go() {
        let out = print_json(&[json!({"b": "<x>", "a": 1})]).expect("encodes");
        assert_eq!(out, "{\n    \"a\": 1,\n    \"b\": \"\\u003cx\\u003e\"\n}\n");
    }

    #[test]
    fn yaml_sorted_and_separated() {
        let out = print_yaml(&[json!({"b": 1, "a": 2}), json!({"c": 3})]).expect("encodes");
        assert_eq!(out, "a: 2\nb: 1\n---\nc: 3\n");
    }

    #[test]
    fn jsonpath_templates() {
        let OutputFormat::JsonPathTemplate(parts) = OutputFormat::parse(
            "jsonpath={.metadata.name}:{.status.conditions[?(@.type=='Ready')].status}{\"\\n\"}",
        )
        .expect("parses") else {
            panic!("template expected");
        };
        assert_eq!(
            print_template(&[repo(), repo()], &parts),
            "test-blueprints:True\ntest-blueprints:True\n"
        );
        let OutputFormat::JsonPathTemplate(parts) =
            OutputFormat::parse("jsonpath={.spec.git}").expect("parses")
        else {
            panic!("template expected");
        };
        assert!(print_template(&[repo()], &parts).starts_with("{\"branch\":\"main\""));
    }

    #[test]
    fn jsonpath_ranges() {
        let template = |t: &str| match OutputFormat::parse(&format!("jsonpath={t}")) {
            Ok(OutputFormat::JsonPathTemplate(parts)) => parts,
            other => panic!("{t}: {other:?}"),
        };
        let o = json!({"metadata": {"name": "a"}, "spec": {"tasks": [
            {"type": "init"}, {"type": "update", "n": 2}]}});
        let run = |t: &str| print_template(std::slice::from_ref(&o), &template(t));
        assert_eq!(
            run("{range .spec.tasks[*]}{.type}{\"\\n\"}{end}"),
            "init\nupdate\n"
        );
        // Without [*] the array's elements are ranged over too; {@} is the element.
        assert_eq!(run("{range .spec.tasks}[{@.type}]{end}"), "[init][update]");
        assert_eq!(
            run("{.metadata.name}:{range .spec.tasks[*]} {.type}{end};"),
            "a: init update;"
        );
        assert_eq!(run("{range .metadata}{@}{end}"), "{\"name\":\"a\"}");
        // Nested ranges, single-quoted literals, a range left open runs to the end.
        let lists = json!({"items": [{"l": [1, 2]}, {"l": [3]}]});
        assert_eq!(
            print_template(
                std::slice::from_ref(&lists),
                &template("{range .items[*]}({range .l[*]}{@}{','}{end}){end}")
            ),
            "(1,2,)(3,)"
        );
        assert_eq!(
            print_template(
                std::slice::from_ref(&lists),
                &template("{range .items[*]}x")
            ),
            "xx"
        );
        let err = OutputFormat::parse("jsonpath={range .l[*]}{@}{end}{end}").expect_err("end");
        assert!(
            err.to_string().contains("not in range, nothing to end"),
            "{err}"
        );
    }

    #[test]
    fn unknown_output_format() {
        assert!(OutputFormat::parse("xml").is_err());
    }
}
