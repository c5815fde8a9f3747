//! Output of remote `get` commands the way upstream porchctl prints them through kubectl's
//! printers: server-side `Table`s, `custom-columns`, `yaml`/`json` (keys sorted, one document
//! per object), `name`, `jsonpath` and `go-template` (run on each object).

use serde_json::{Map, Value};

use super::error::RemoteError;
use super::gotemplate::{self, GoTemplate};
use super::jsonpath::{JsonPath, scalar_text};
use super::path_template::parse_template;
pub use super::path_template::{PathTemplate, print_template, print_template_json};
use super::tabwriter::TabWriter;

/// What `-o/--output` (and `--template`) asked for.
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
    JsonPathTemplate(PathTemplate),
    /// `jsonpath-as-json=TEMPLATE`: each part's results as an indented JSON array.
    JsonPathAsJson(PathTemplate),
    /// `go-template=TEMPLATE` (and `template=`, `go-template-file=`, `templatefile=`).
    GoTemplate(GoTemplate),
}

/// kubectl's `-o` formats, as its "allowed formats" list names them.
const ALLOWED_FORMATS: &str = "custom-columns,custom-columns-file,go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,name,template,templatefile,wide,yaml";

const JSONPATH_FORMATS: &[&str] = &["jsonpath", "jsonpath-file", "jsonpath-as-json"];
const GO_TEMPLATE_FORMATS: &[&str] = &[
    "go-template",
    "go-template-file",
    "template",
    "templatefile",
];
const COLUMNS_FORMATS: &[&str] = &["custom-columns", "custom-columns-file"];

/// A template printer's `FORMAT=VALUE`, or `FORMAT` with `--template VALUE` (kubectl's
/// template flags): the format and its value when `format` is one of `formats`.
fn template_format<'s>(
    format: &'s str,
    template: &'s str,
    formats: &[&'static str],
) -> Option<(&'static str, &'s str)> {
    let (name, value) = if template.is_empty() {
        formats
            .iter()
            .find_map(|f| {
                let value = format.strip_prefix(f)?.strip_prefix('=')?;
                Some((*f, value))
            })
            .unwrap_or((format, ""))
    } else {
        (format, template)
    };
    formats.iter().find(|f| **f == name).map(|f| (*f, value))
}

/// A `*-file` format's file, with Go's error text when it cannot be read.
fn read_template_file(path: &str) -> Result<String, RemoteError> {
    std::fs::read_to_string(path).map_err(|e| {
        let why = match e.kind() {
            std::io::ErrorKind::NotFound => format!("open {path}: no such file or directory"),
            std::io::ErrorKind::PermissionDenied => format!("open {path}: permission denied"),
            std::io::ErrorKind::IsADirectory => format!("read {path}: is a directory"),
            _ => format!("open {path}: {e}"),
        };
        RemoteError::Usage(format!("error reading --template {path}, {why}"))
    })
}

impl OutputFormat {
    /// Parses an `-o` value alone.
    #[cfg(test)]
    pub fn parse(s: &str) -> Result<Self, RemoteError> {
        Self::parse_with_template(s, "")
    }

    /// Parses `-o` together with `--template`, trying kubectl's printers in `kubectl get`'s
    /// order: templates (jsonpath, then go-template; `--template` alone means go-template),
    /// json/yaml, the Table, custom-columns, name.
    pub fn parse_with_template(output: &str, template: &str) -> Result<Self, RemoteError> {
        let format = if output.is_empty() && !template.is_empty() {
            "go-template"
        } else {
            output
        };
        let no_template =
            || RemoteError::Usage("template format specified but no template given".into());
        if !format.is_empty() {
            if let Some((name, value)) = template_format(format, template, JSONPATH_FORMATS) {
                if value.is_empty() {
                    return Err(no_template());
                }
                if name == "jsonpath-as-json" {
                    return parse_template(value).map(OutputFormat::JsonPathAsJson);
                }
                let text = match name {
                    "jsonpath-file" => read_template_file(value)?,
                    _ => value.to_string(),
                };
                return parse_template(&text).map(OutputFormat::JsonPathTemplate);
            }
            if let Some((name, value)) = template_format(format, template, GO_TEMPLATE_FORMATS) {
                if value.is_empty() {
                    return Err(no_template());
                }
                let text = match name {
                    "go-template-file" | "templatefile" => read_template_file(value)?,
                    _ => value.to_string(),
                };
                return GoTemplate::parse(&text)
                    .map(OutputFormat::GoTemplate)
                    .map_err(|e| {
                        RemoteError::Usage(format!("error parsing template {text}, {e}"))
                    });
            }
        }
        match format {
            "json" => return Ok(OutputFormat::Json),
            "yaml" => return Ok(OutputFormat::Yaml),
            "" => return Ok(OutputFormat::Table),
            "wide" => return Ok(OutputFormat::Wide),
            _ => {}
        }
        if let Some((name, value)) = template_format(format, template, COLUMNS_FORMATS) {
            if value.is_empty() {
                return Err(RemoteError::Usage(
                    "custom-columns format specified but no custom columns given".into(),
                ));
            }
            if name == "custom-columns-file" {
                let text = std::fs::read_to_string(value).map_err(|e| {
                    let why = match e.kind() {
                        std::io::ErrorKind::NotFound => {
                            format!("open {value}: no such file or directory")
                        }
                        _ => format!("open {value}: {e}"),
                    };
                    RemoteError::Usage(format!("error reading template {value}, {why}\n"))
                })?;
                return parse_custom_columns_file(&text).map(OutputFormat::CustomColumns);
            }
            return parse_custom_columns(value).map(OutputFormat::CustomColumns);
        }
        if format == "name" {
            return Ok(OutputFormat::Name);
        }
        Err(RemoteError::Usage(format!(
            "unable to match a printer suitable for the output format {}, allowed formats are: {ALLOWED_FORMATS}",
            gotemplate::go_quote(format)
        )))
    }

    /// Whether the server should be asked for a `Table` (upstream asks unless the output is
    /// custom-columns, yaml or json; templates run on the objects here).
    pub fn wants_table(&self) -> bool {
        matches!(self, OutputFormat::Table | OutputFormat::Wide)
    }

    /// Whether the printer drops `metadata.managedFields`: kubectl drops them for yaml and
    /// json only; templates and custom columns see the object as the server sent it.
    pub fn hides_managed_fields(&self) -> bool {
        matches!(self, OutputFormat::Yaml | OutputFormat::Json)
    }
}

fn parse_custom_columns(spec: &str) -> Result<Vec<(String, JsonPath)>, RemoteError> {
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

/// kubectl's `NewCustomColumnsPrinterFromTemplate`: a line of headers and a line of
/// column specs, each split at runs of white space.
fn parse_custom_columns_file(text: &str) -> Result<Vec<(String, JsonPath)>, RemoteError> {
    const FORMAT: &str = "Expected format is one line of space separated headers, one line of space separated column specs.";
    // bufio.Scanner's lines: split at `\n`, a final `\r` dropped.
    let mut lines = text.split_inclusive('\n').map(|l| {
        let l = l.strip_suffix('\n').unwrap_or(l);
        l.strip_suffix('\r').unwrap_or(l)
    });
    let headers: Vec<&str> = match lines.next() {
        Some(l) => l.split_whitespace().collect(),
        None => {
            return Err(RemoteError::Usage(format!(
                "invalid template, missing header line. {FORMAT}"
            )));
        }
    };
    let specs: Vec<&str> = match lines.next() {
        Some(l) => l.split_whitespace().collect(),
        None => {
            return Err(RemoteError::Usage(format!(
                "invalid template, missing spec line. {FORMAT}"
            )));
        }
    };
    if headers.len() != specs.len() {
        return Err(RemoteError::Usage(format!(
            "number of headers ({}) and field specifications ({}) don't match",
            headers.len(),
            specs.len()
        )));
    }
    headers
        .iter()
        .zip(&specs)
        .map(|(h, p)| Ok((h.to_string(), JsonPath::parse(p)?)))
        .collect()
}

/// Runs a go-template on each object, as kubectl's go-template printer does per object.
/// When the template fails on an object the output so far and kubectl's debugging text
/// are printed and the error returned.
pub fn print_go_template(objects: &[Value], template: &GoTemplate) -> Result<String, RemoteError> {
    let (out, err) = render_go_template(objects, template);
    match err {
        None => Ok(out),
        Some(e) => {
            super::out(&out)?;
            Err(e)
        }
    }
}

/// The go-template output of `objects`, and the error that stopped it; the output then
/// ends with kubectl's debugging text about the failing object.
pub fn render_go_template(
    objects: &[Value],
    template: &GoTemplate,
) -> (String, Option<RemoteError>) {
    let mut out = String::new();
    for obj in objects {
        if let Err(e) = template.execute(obj, &mut out) {
            let raw = template.text();
            out.push_str(&format!(
                "Error executing template: {e}. Printing more information for debugging the template:\n\ttemplate was:\n\t\t{raw}\n\traw data was:\n\t\t{}\n\tobject given to template engine was:\n\t\t{}\n\n",
                go_escape(&sorted(obj).to_string()),
                gotemplate::go_value_text(obj),
            ));
            let err = RemoteError::Failed(format!(
                "error executing template {}: {e}",
                gotemplate::go_quote(raw)
            ));
            return (out, Some(err));
        }
    }
    (out, None)
}

/// kubectl's printing flags, shared by `repo get` and `rpkg get`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct PrintFlags {
    /// Output format: yaml, json, name, wide, custom-columns=HEADER:JSONPATH,...,
    /// jsonpath=TEMPLATE, jsonpath-file=FILE, go-template=TEMPLATE, go-template-file=FILE
    /// (template=, templatefile= are aliases)
    #[arg(short = 'o', long, default_value = "", hide_default_value = true)]
    pub output: String,
    /// Template string or path to template file to use when -o=go-template,
    /// -o=go-template-file. The template format is golang templates
    /// [https://pkg.go.dev/text/template#pkg-overview].
    #[arg(long, default_value = "", hide_default_value = true)]
    pub template: String,
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
    /// If true, ignore any errors in templates when a field or map key is missing in the
    /// template. Only applies to golang and jsonpath output formats.
    #[arg(
        long,
        default_value_t = true,
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        action = clap::ArgAction::Set,
        value_parser = crate::cli::GoBool
    )]
    pub allow_missing_template_keys: bool,
    /// If true, keep the managedFields when printing objects in JSON or YAML format.
    #[arg(long)]
    pub show_managed_fields: bool,
    /// If present, list the resource type for the requested object(s). (Accepted as
    /// upstream accepts it: its printer is never told the kind, so nothing changes.)
    #[arg(long)]
    pub show_kind: bool,
}

impl PrintFlags {
    /// The output format `-o` and `--template` ask for.
    pub fn format(&self) -> Result<OutputFormat, RemoteError> {
        let format = OutputFormat::parse_with_template(&self.output, &self.template)?;
        let allow = self.allow_missing_template_keys;
        Ok(match format {
            OutputFormat::JsonPathTemplate(t) => OutputFormat::JsonPathTemplate(PathTemplate {
                allow_missing: allow,
                ..t
            }),
            OutputFormat::JsonPathAsJson(t) => OutputFormat::JsonPathAsJson(PathTemplate {
                allow_missing: allow,
                ..t
            }),
            OutputFormat::GoTemplate(t) => {
                OutputFormat::GoTemplate(t.missing_keys_are_errors(!allow))
            }
            other => other,
        })
    }

    /// Whether yaml and json leave out `metadata.managedFields` (kubectl's
    /// `--show-managed-fields` keeps them).
    pub fn hides_managed_fields(&self, format: &OutputFormat) -> bool {
        format.hides_managed_fields() && !self.show_managed_fields
    }

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
/// commas. When a path fails on an object the header and the rows before it are printed
/// (kubectl flushes its tab writer on the way out) and the path's error returned.
pub fn print_custom_columns(
    objects: &[Value],
    columns: &[(String, JsonPath)],
    no_headers: bool,
) -> Result<String, RemoteError> {
    let mut w = TabWriter::new();
    if !no_headers {
        let headers: Vec<&str> = columns.iter().map(|(h, _)| h.as_str()).collect();
        w.write(&headers.join("\t"));
        w.write("\n");
    }
    for obj in objects {
        let cells: Result<Vec<String>, String> = columns
            .iter()
            .map(|(_, path)| {
                let found = path.try_find(obj)?;
                Ok(if found.is_empty() {
                    "<none>".to_string()
                } else {
                    found
                        .into_iter()
                        .map(scalar_text)
                        .collect::<Vec<_>>()
                        .join(",")
                })
            })
            .collect();
        match cells {
            Ok(cells) => {
                w.write(&cells.join("\t"));
                w.write("\n");
            }
            Err(e) => {
                super::out(&w.finish())?;
                return Err(RemoteError::Failed(e));
            }
        }
    }
    Ok(w.finish())
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
pub(super) fn go_escape(json: &str) -> String {
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
    use super::super::path_template::{Mode, render_template};
    use super::*;
    use serde_json::json;

    fn repo() -> Value {
        json!({"apiVersion": "config.porch.kpt.dev/v1alpha1", "kind": "Repository",
               "metadata": {"name": "test-blueprints", "namespace": "ns"},
               "spec": {"type": "git", "content": "Package", "description": "Test Blueprints",
                        "git": {"repo": "http://h/x.git", "branch": "main", "directory": "/"}},
               "status": {"conditions": [{"type": "Ready", "status": "True"}]}})
    }

    /// What kubectl 1.32 prints for these templates (`kubectl annotate --local -o
    /// jsonpath-as-json=…`).
    #[test]
    fn jsonpath_as_json_prints_each_part_as_an_indented_array() {
        let obj = json!({"metadata": {"name": "cm1"}, "data": {"t": "two", "x": "1"}});
        let print = |t: &str| {
            let Ok(OutputFormat::JsonPathAsJson(parts)) =
                OutputFormat::parse(&format!("jsonpath-as-json={t}"))
            else {
                panic!("{t}");
            };
            print_template_json(std::slice::from_ref(&obj), &parts).expect("renders")
        };
        assert_eq!(print("{.metadata.name}"), "[\n    \"cm1\"\n]\n");
        assert_eq!(
            print("{.data}"),
            "[\n    {\n        \"t\": \"two\",\n        \"x\": \"1\"\n    }\n]\n"
        );
        assert_eq!(print("{.data.*}"), "[\n    \"two\",\n    \"1\"\n]\n");
        assert_eq!(print("{.nope}"), "[]\n");
        assert_eq!(
            print("x{range .data.*}{@}{end}"),
            "[\n    \"x\"\n]\n[\n    \"two\"\n]\n[\n    \"1\"\n]\n"
        );
    }

    #[test]
    fn custom_columns_files_as_kubectl_reads_them() {
        let cols = parse_custom_columns_file("NAME  BRANCH\n.metadata.name\tspec.git.branch\n")
            .expect("two columns");
        let headers: Vec<&str> = cols.iter().map(|(h, _)| h.as_str()).collect();
        assert_eq!(headers, ["NAME", "BRANCH"]);
        assert_eq!(
            print_custom_columns(&[repo()], &cols, false).expect("renders"),
            "NAME              BRANCH\ntest-blueprints   main\n"
        );
        for (text, want) in [
            ("", "invalid template, missing header line."),
            ("NAME\n", "invalid template, missing spec line."),
            (
                "A B\n.x\n",
                "number of headers (2) and field specifications (1) don't match",
            ),
        ] {
            let err = parse_custom_columns_file(text).expect_err(text).to_string();
            assert!(err.contains(want), "{text:?}: {err}");
        }
        let missing =
            OutputFormat::parse("custom-columns-file=/no/such/file").expect_err("missing");
        assert!(
            missing
                .to_string()
                .contains("error reading template /no/such/file, open /no/such/file: no such file or directory"),
            "{missing}"
        );
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
            print_custom_columns(&[repo()], &cols, false).expect("renders"),
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
            print_template(&[repo(), repo()], &parts).expect("renders"),
            "test-blueprints:True\ntest-blueprints:True\n"
        );
        let OutputFormat::JsonPathTemplate(parts) =
            OutputFormat::parse("jsonpath={.spec.git}").expect("parses")
        else {
            panic!("template expected");
        };
        assert!(
            print_template(&[repo()], &parts)
                .expect("renders")
                .starts_with("{\"branch\":\"main\"")
        );
    }

    #[test]
    fn jsonpath_ranges() {
        let template = |t: &str| match OutputFormat::parse(&format!("jsonpath={t}")) {
            Ok(OutputFormat::JsonPathTemplate(parts)) => parts,
            other => panic!("{t}: {other:?}"),
        };
        let o = json!({"metadata": {"name": "a"}, "spec": {"tasks": [
            {"type": "init"}, {"type": "update", "n": 2}]}});
        let run =
            |t: &str| print_template(std::slice::from_ref(&o), &template(t)).expect("renders");
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
            )
            .expect("renders"),
            "(1,2,)(3,)"
        );
        assert_eq!(
            print_template(
                std::slice::from_ref(&lists),
                &template("{range .items[*]}x")
            )
            .expect("renders"),
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
        let err = OutputFormat::parse("xml").expect_err("no xml printer");
        assert_eq!(
            err.to_string(),
            "unable to match a printer suitable for the output format \"xml\", allowed formats are: custom-columns,custom-columns-file,go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,name,template,templatefile,wide,yaml"
        );
    }

    fn go_template(output: &str, template: &str) -> GoTemplate {
        match OutputFormat::parse_with_template(output, template) {
            Ok(OutputFormat::GoTemplate(t)) => t,
            other => panic!("{output:?} --template {template:?}: {other:?}"),
        }
    }

    #[test]
    fn go_template_formats_and_the_template_flag() {
        let o = [repo()];
        let name = |t: &GoTemplate| render_go_template(&o, t).0;
        for (output, template) in [
            ("go-template={{.metadata.name}}", ""),
            ("template={{.metadata.name}}", ""),
            ("go-template", "{{.metadata.name}}"),
            ("template", "{{.metadata.name}}"),
            ("", "{{.metadata.name}}"),
        ] {
            assert_eq!(name(&go_template(output, template)), "test-blueprints");
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("t.tmpl");
        std::fs::write(&file, "{{.spec.type}}\n").expect("write");
        let file = file.to_str().expect("utf-8 path");
        for output in ["go-template-file", "templatefile"] {
            let t = go_template(&format!("{output}={file}"), "");
            assert_eq!(name(&t), "git\n");
            assert_eq!(name(&go_template(output, file)), "git\n");
        }
        // jsonpath takes --template too; yaml ignores it.
        assert!(matches!(
            OutputFormat::parse_with_template("jsonpath", "{.metadata.name}"),
            Ok(OutputFormat::JsonPathTemplate(_))
        ));
        std::fs::write(dir.path().join("p"), "{.spec.type}").expect("write");
        let jp = format!("jsonpath-file={}", dir.path().join("p").display());
        let Ok(OutputFormat::JsonPathTemplate(parts)) = OutputFormat::parse(&jp) else {
            panic!("jsonpath-file");
        };
        assert_eq!(print_template(&o, &parts).expect("renders"), "git");
        assert_eq!(
            OutputFormat::parse_with_template("yaml", "{{.a}}").ok(),
            Some(OutputFormat::Yaml)
        );
        assert!(matches!(
            OutputFormat::parse_with_template("custom-columns", "N:.metadata.name"),
            Ok(OutputFormat::CustomColumns(_))
        ));
    }

    #[test]
    fn go_template_format_errors_in_kubectls_words() {
        let err = |output: &str, template: &str| {
            OutputFormat::parse_with_template(output, template)
                .expect_err(output)
                .to_string()
        };
        assert_eq!(
            err("go-template", ""),
            "template format specified but no template given"
        );
        assert_eq!(
            err("go-template=", ""),
            "template format specified but no template given"
        );
        assert_eq!(
            err("go-template={{.a", ""),
            "error parsing template {{.a, template: output:1: unclosed action"
        );
        assert_eq!(
            err("go-template-file=/nonexistent/t", ""),
            "error reading --template /nonexistent/t, open /nonexistent/t: no such file or directory"
        );
        // With --template the format must be a bare name.
        assert!(err("jsonpath={.a}", "{.b}").starts_with(
            "unable to match a printer suitable for the output format \"jsonpath={.a}\""
        ));
        assert_eq!(
            err("custom-columns", ""),
            "custom-columns format specified but no custom columns given"
        );
    }

    #[test]
    fn go_template_runs_per_object_and_reports_like_kubectl() {
        let t = go_template("go-template={{.metadata.name}}{{\"\\n\"}}", "");
        let two = [repo(), json!({"metadata": {"name": "b"}, "spec": {"n": 2}})];
        assert_eq!(
            print_go_template(&two, &t).expect("prints"),
            "test-blueprints\nb\n"
        );
        let t = go_template("go-template={{.metadata.name}} {{len .spec.n}}", "");
        let (out, err) = render_go_template(&two[1..], &t);
        assert_eq!(
            out,
            "b Error executing template: template: output:1:21: executing \"output\" at <len .spec.n>: error calling len: len of type int64. Printing more information for debugging the template:\n\ttemplate was:\n\t\t{{.metadata.name}} {{len .spec.n}}\n\traw data was:\n\t\t{\"metadata\":{\"name\":\"b\"},\"spec\":{\"n\":2}}\n\tobject given to template engine was:\n\t\tmap[metadata:map[name:b] spec:map[n:2]]\n\n"
        );
        assert_eq!(
            err.expect("fails").to_string(),
            "error executing template \"{{.metadata.name}} {{len .spec.n}}\": template: output:1:21: executing \"output\" at <len .spec.n>: error calling len: len of type int64"
        );
    }

    /// kubectl 1.32's `JSONPathPrinter` error for a failing path (its stderr after
    /// `error: `, for `kubectl annotate --local -f foo.yaml z=1 -o jsonpath=…`), and the
    /// output of the objects before the failing one.
    #[test]
    fn jsonpath_errors_as_kubectl() {
        let obj = json!({"apiVersion": "x.io/v1", "kind": "Foo",
            "metadata": {"annotations": {"z": "1"}, "finalizers": ["f1"], "name": "f"},
            "spec": {"b": true, "f": 1.5, "false": 2, "l": [], "s": "a\"b", "z": null}});
        let t = "A{.metadata.name}B{.metadata.finalizers[5]}C";
        let expected = "error executing jsonpath \"A{.metadata.name}B{.metadata.finalizers[5]}C\": Error executing template: array index out of bounds: index 5, length 1. Printing more information for debugging the template:\n\ttemplate was:\n\t\tA{.metadata.name}B{.metadata.finalizers[5]}C\n\tobject given to jsonpath engine was:\n\t\tmap[string]interface {}{\"apiVersion\":\"x.io/v1\", \"kind\":\"Foo\", \"metadata\":map[string]interface {}{\"annotations\":map[string]interface {}{\"z\":\"1\"}, \"finalizers\":[]interface {}{\"f1\"}, \"name\":\"f\"}, \"spec\":map[string]interface {}{\"b\":true, \"f\":1.5, \"false\":2, \"l\":[]interface {}{}, \"s\":\"a\\\"b\", \"z\":interface {}(nil)}}\n\n\n";
        let Ok(OutputFormat::JsonPathTemplate(template)) =
            OutputFormat::parse(&format!("jsonpath={t}"))
        else {
            panic!("{t}");
        };
        let fine = json!({"metadata": {"name": "ok", "finalizers": [1, 2, 3, 4, 5, 6]}});
        let (out, err) = render_template(
            &[fine.clone(), obj.clone(), fine.clone()],
            &template,
            Mode::Text,
        );
        assert_eq!(out, "AokB6C");
        assert_eq!(err.expect("fails").to_string(), expected);
        // jsonpath-as-json quotes the template the same way, without the format name.
        let Ok(OutputFormat::JsonPathAsJson(template)) =
            OutputFormat::parse(&format!("jsonpath-as-json={t}"))
        else {
            panic!("{t}");
        };
        let (out, err) = render_template(std::slice::from_ref(&obj), &template, Mode::Json);
        assert_eq!(out, "");
        assert_eq!(err.expect("fails").to_string(), expected);
        // Ranges fail the same way.
        let Ok(OutputFormat::JsonPathTemplate(template)) =
            OutputFormat::parse("jsonpath={range .data.x[0]}x{end}")
        else {
            panic!("range");
        };
        let (_, err) = render_template(&[json!({"data": {"x": "abc"}})], &template, Mode::Text);
        assert!(
            err.expect("fails")
                .to_string()
                .starts_with("error executing jsonpath \"{range .data.x[0]}x{end}\": Error executing template: string is not array or slice. Printing more information")
        );
    }
}
