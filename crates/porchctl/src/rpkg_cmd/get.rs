//! `rpkg get [NAME...]`: the server's Table by default (the filter flags go to the server
//! as one field selector, as upstream sends them), the objects for yaml/json/jsonpath/
//! custom-columns/name, or one revision's root Kptfile with `--show-kptfile`.

use super::pull::resources_of;
use crate::remote::api::{PACKAGE_REVISION_RESOURCES, PACKAGE_REVISIONS};
use crate::remote::listing::{SortBy, list_items, merge_tables};
use crate::remote::print::{self, OutputFormat, PrintFlags};
use crate::remote::{self, ConnectionFlags, RemoteError};
use clap::Args;
use serde_json::Value;

/// `--revision`'s "not given" value (upstream's default).
const ANY_REVISION: i64 = -2;

/// Flags of `rpkg get`.
#[derive(Debug, Args)]
pub struct GetArgs {
    /// Package revisions to show (all when none).
    #[arg(value_name = "PACKAGE_REV_NAME")]
    pub names: Vec<String>,
    /// Name of the packages to get (exact match on the package name).
    #[arg(long, default_value = "", hide_default_value = true)]
    pub name: String,
    /// Revision of the packages to get (-1: the placeholder on the registered branch).
    #[arg(long, alias = "rev", default_value_t = ANY_REVISION, allow_negative_numbers = true, hide_default_value = true, value_parser = crate::cli::GoInt::<i64>::new())]
    pub revision: i64,
    /// WorkspaceName of the packages to get.
    #[arg(
        short = 'w',
        long,
        alias = "ws",
        default_value = "",
        hide_default_value = true
    )]
    pub workspace: String,
    /// Repository of the packages to get.
    #[arg(
        short = 'r',
        long,
        alias = "repo",
        default_value = "",
        hide_default_value = true
    )]
    pub repository: String,
    /// Display the root Kptfile of the specified package revision (one name required).
    #[arg(long)]
    pub show_kptfile: bool,
    #[command(flatten)]
    pub print: PrintFlags,
}

impl GetArgs {
    /// The field selector upstream sends: every filter given, as apimachinery's
    /// `fields.Set` writes it (keys sorted, `\\`, `,` and `=` escaped in values).
    fn field_selector(&self) -> Option<String> {
        let escape = |v: &str| {
            v.replace('\\', "\\\\")
                .replace(',', "\\,")
                .replace('=', "\\=")
        };
        let revision = (self.revision != ANY_REVISION).then(|| self.revision.to_string());
        let terms: Vec<String> = [
            ("spec.packageName", Some(self.name.clone())),
            ("spec.repository", Some(self.repository.clone())),
            ("spec.revision", revision),
            ("spec.workspaceName", Some(self.workspace.clone())),
        ]
        .into_iter()
        .filter_map(|(k, v)| {
            v.filter(|v| !v.is_empty())
                .map(|v| format!("{k}={}", escape(&v)))
        })
        .collect();
        (!terms.is_empty()).then(|| terms.join(","))
    }

    fn check_show_kptfile(&self) -> Result<(), RemoteError> {
        if self.names.len() != 1 {
            return Err(RemoteError::Usage(
                "--show-kptfile requires exactly one package revision name as an argument".into(),
            ));
        }
        if !self.name.is_empty() || self.revision != ANY_REVISION || !self.workspace.is_empty() {
            return Err(RemoteError::Usage(
                "--show-kptfile cannot be combined with --name, --revision, or --workspace".into(),
            ));
        }
        if self.print.all_namespaces {
            return Err(RemoteError::Usage(
                "--show-kptfile cannot be combined with --all-namespaces".into(),
            ));
        }
        Ok(())
    }
}

/// kubectl's text for a 404 it could not decode into a Status (what upstream prints when
/// a named revision is missing and a Table was asked for).
fn table_not_found(name: &str) -> RemoteError {
    RemoteError::Api {
        code: 404,
        reason: "NotFound".into(),
        message: format!(
            "the server could not find the requested resource (get packagerevisions.porch.kpt.dev {name})"
        ),
    }
}

pub async fn run(conn: &ConnectionFlags, args: GetArgs) -> Result<(), RemoteError> {
    super::check_namespace_flag(conn)?;
    if args.show_kptfile {
        args.check_show_kptfile()?;
        return show_kptfile(conn, &args.names[0]).await;
    }
    let format = args.print.format()?;
    let sort_by = SortBy::parse(&args.print.sort_by)?;
    let remote = conn.connect().await?;
    let client = &remote.client;
    let ns = (!args.print.all_namespaces).then_some(remote.namespace.as_str());
    let selector = args.field_selector();
    // Upstream asks for a Table for every format but custom-columns, yaml and json(path),
    // `name` included: the rows carry the names, and the server sends no full objects.
    let out = if format.wants_table() || format == OutputFormat::Name {
        // Sorting needs the whole object per row (as kubectl asks); the NAMESPACE and label
        // columns need the rows' metadata (the server's default); otherwise no object at
        // all: the printed cells are the same, and at 10,000 revisions the response is a
        // quarter the size, which is most of what the server and porchctl spend on it.
        let include = if sort_by.is_some() {
            Some("Object")
        } else if args.print.all_namespaces
            || args.print.show_labels
            || !crate::cli::csv_elements(&args.print.label_columns).is_empty()
        {
            None
        } else {
            Some("None")
        };
        let mut tables = Vec::new();
        if args.names.is_empty() {
            tables.push(
                PACKAGE_REVISIONS
                    .table(client, ns, None, selector.as_deref(), include)
                    .await?,
            );
        } else {
            for name in &args.names {
                let include = include.filter(|i| *i == "Object");
                let t = PACKAGE_REVISIONS
                    .table(client, Some(&remote.namespace), Some(name), None, include)
                    .await
                    .map_err(|e| match e {
                        RemoteError::Api { code: 404, .. } => table_not_found(name),
                        other => other,
                    })?;
                tables.push(t);
            }
        }
        // No filtering here: without names the server applied the selector, and with
        // names upstream sends none (`rpkg get NAME --name=other` shows NAME).
        let mut merged = merge_tables(tables)?;
        if let Some(sort_by) = &sort_by {
            sort_by.sort_table(&mut merged)?;
        }
        if format == OutputFormat::Name {
            return remote::out(&row_names(&merged));
        }
        print::print_table(&merged, &args.print.table_options(&format))
    } else {
        let mut objects = Vec::new();
        if args.names.is_empty() {
            let list = PACKAGE_REVISIONS
                .list_selected(client, ns, selector.as_deref(), None)
                .await?;
            objects.extend(list_items(list));
        } else {
            for name in &args.names {
                objects.push(
                    PACKAGE_REVISIONS
                        .get(client, &remote.namespace, name)
                        .await?,
                );
            }
        }
        if args.print.hides_managed_fields(&format) {
            print::hide_managed_fields(&mut objects);
        }
        if let Some(sort_by) = &sort_by {
            sort_by.sort_objects(&mut objects)?;
        }
        match &format {
            OutputFormat::Yaml => print::print_yaml(&objects)?,
            OutputFormat::Json => print::print_json(&objects)?,
            OutputFormat::CustomColumns(cols) if !objects.is_empty() => {
                print::print_custom_columns(&objects, cols, args.print.no_headers)?
            }
            OutputFormat::JsonPathTemplate(parts) => print::print_template(&objects, parts)?,
            OutputFormat::JsonPathAsJson(parts) => print::print_template_json(&objects, parts)?,
            OutputFormat::GoTemplate(t) => print::print_go_template(&objects, t)?,
            _ => String::new(),
        }
    };
    remote::out(&out)
}

async fn show_kptfile(conn: &ConnectionFlags, name: &str) -> Result<(), RemoteError> {
    let remote = conn.connect().await?;
    let prr = PACKAGE_REVISION_RESOURCES
        .get(&remote.client, &remote.namespace, name)
        .await?;
    match resources_of(&prr).remove("Kptfile") {
        Some(k) => remote::out(&k),
        None => Err(RemoteError::Failed(format!(
            "package revision {name:?} does not contain a root Kptfile"
        ))),
    }
}

/// `packagerevision.porch.kpt.dev/<name>` per Table row (kubectl's name printer on the
/// rows' objects); the name is the row object's, else the `Name` column's cell.
fn row_names(table: &Value) -> String {
    let name_col = table
        .get("columnDefinitions")
        .and_then(Value::as_array)
        .and_then(|cs| {
            cs.iter()
                .position(|c| c.get("name").and_then(Value::as_str) == Some("Name"))
        });
    let mut out = String::new();
    for row in table
        .get("rows")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let name = row
            .pointer("/object/metadata/name")
            .and_then(Value::as_str)
            .or_else(|| {
                name_col
                    .and_then(|i| row.pointer(&format!("/cells/{i}")))
                    .and_then(Value::as_str)
            });
        if let Some(name) = name {
            out.push_str("packagerevision.porch.kpt.dev/");
            out.push_str(name);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use serde_json::json;

    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        a: GetArgs,
    }

    fn args(v: &[&str]) -> GetArgs {
        let mut all = vec!["t"];
        all.extend_from_slice(v);
        T::parse_from(all).a
    }

    #[test]
    fn every_filter_goes_into_one_sorted_selector() {
        assert_eq!(args(&[]).field_selector(), None);
        assert_eq!(
            args(&["--revision=-1"]).field_selector().as_deref(),
            Some("spec.revision=-1")
        );
        assert_eq!(
            args(&[
                "-w",
                "draft,b",
                "--name=kettle",
                "-r",
                "shelf",
                "--revision=0"
            ])
            .field_selector()
            .as_deref(),
            Some(
                "spec.packageName=kettle,spec.repository=shelf,spec.revision=0,spec.workspaceName=draft\\,b"
            )
        );
        let short = args(&["--ws=w2", "--repo=shelf", "--rev=3"]);
        assert_eq!(
            (
                short.workspace.as_str(),
                short.repository.as_str(),
                short.revision
            ),
            ("w2", "shelf", 3)
        );
    }

    #[test]
    fn names_from_table_rows() {
        let t = json!({"kind": "Table", "columnDefinitions": [{"name": "Name"}, {"name": "Package"}],
        "rows": [
            {"cells": ["cell.name", "p"], "object": {"metadata": {"name": "x.p.v1"}}},
            {"cells": ["x.p.v2", "p"]},
        ]});
        assert_eq!(
            row_names(&t),
            "packagerevision.porch.kpt.dev/x.p.v1\npackagerevision.porch.kpt.dev/x.p.v2\n"
        );
        assert_eq!(row_names(&json!({"kind": "Table", "rows": []})), "");
    }

    #[test]
    fn show_kptfile_rules() {
        let e = |v: &[&str]| {
            args(v)
                .check_show_kptfile()
                .expect_err("refused")
                .to_string()
        };
        assert_eq!(
            e(&["--show-kptfile"]),
            "--show-kptfile requires exactly one package revision name as an argument"
        );
        assert_eq!(
            e(&["--show-kptfile", "a", "--name=x"]),
            "--show-kptfile cannot be combined with --name, --revision, or --workspace"
        );
        assert_eq!(
            e(&["--show-kptfile", "a", "-A"]),
            "--show-kptfile cannot be combined with --all-namespaces"
        );
        assert!(args(&["--show-kptfile", "a"]).check_show_kptfile().is_ok());
    }
}
