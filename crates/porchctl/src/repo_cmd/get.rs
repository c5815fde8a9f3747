//! `porchctl repo get [NAME...]`: the server's Table by default; yaml, json, name and
//! custom-columns from the objects themselves.

use clap::Args;
use serde_json::Value;

use crate::remote::api::{REPOSITORIES, TABLE_ACCEPT};
use crate::remote::print::{self, OutputFormat, TableOptions};
use crate::remote::{self, ConnectionFlags, RemoteError};

pub const LONG: &str = "List registered repositories.

  porchctl repo get [REPOSITORY_NAME] [flags]

Args:

  REPOSITORY_NAME:
    The name of a repository. If provided, only that specific
    repository will be shown. Defaults to showing all registered
    repositories.";

pub const EXAMPLES: &str = "Examples:
  # list all repositories registered in the default namespace
  $ porchctl repo get --namespace default

  # show the repository named foo in the bar namespace
  $ porchctl repo get foo --namespace bar

  # show address, branch and readiness
  $ porchctl repo get -o custom-columns=NAME:.metadata.name,ADDRESS:.spec.git.repo,READY:.status.conditions[?(@.type=='Ready')].status";

/// Flags of `repo get`.
#[derive(Debug, Args)]
pub struct GetArgs {
    /// Repositories to show (all when none).
    #[arg(value_name = "REPOSITORY_NAME")]
    pub names: Vec<String>,
    /// Output format: yaml, json, name, wide, custom-columns=HEADER:JSONPATH,...,
    /// jsonpath=TEMPLATE
    #[arg(short = 'o', long, default_value = "", hide_default_value = true)]
    pub output: String,
    /// List the repositories across all namespaces.
    #[arg(short = 'A', long)]
    pub all_namespaces: bool,
    /// When using the default or custom-column output format, don't print headers.
    #[arg(long)]
    pub no_headers: bool,
    /// When printing, show all labels as the last column.
    #[arg(long)]
    pub show_labels: bool,
    /// Labels to show as columns (comma-separated or repeated), e.g. -L team,tier.
    #[arg(short = 'L', long, value_delimiter = ',', value_name = "LABEL")]
    pub label_columns: Vec<String>,
}

pub async fn run(conn: &ConnectionFlags, args: GetArgs) -> Result<(), RemoteError> {
    let format = OutputFormat::parse(&args.output)?;
    let remote = conn.connect().await?;
    let client = &remote.client;
    let ns = (!args.all_namespaces).then_some(remote.namespace.as_str());
    let text = if format.wants_table() {
        let accept = Some(TABLE_ACCEPT);
        let tables = if args.names.is_empty() {
            vec![REPOSITORIES.list(client, ns, accept).await?]
        } else {
            let mut t = Vec::new();
            for name in &args.names {
                t.push(
                    REPOSITORIES
                        .get_as(client, &remote.namespace, name, accept)
                        .await?,
                );
            }
            t
        };
        let merged = merge_tables(tables)?;
        print::print_table(
            &merged,
            &TableOptions {
                wide: format == OutputFormat::Wide,
                no_headers: args.no_headers,
                with_namespace: args.all_namespaces,
                show_labels: args.show_labels,
                label_columns: args.label_columns.clone(),
            },
        )
    } else {
        let objects = if args.names.is_empty() {
            let list = REPOSITORIES.list(client, ns, None).await?;
            list_items(list)
        } else {
            let mut o = Vec::new();
            for name in &args.names {
                o.push(REPOSITORIES.get(client, &remote.namespace, name).await?);
            }
            o
        };
        match &format {
            OutputFormat::Yaml => print::print_yaml(&objects)?,
            OutputFormat::Json => print::print_json(&objects)?,
            OutputFormat::Name => print::print_names(&objects, "repository.config.porch.kpt.dev"),
            OutputFormat::CustomColumns(cols) => {
                if objects.is_empty() {
                    String::new()
                } else {
                    print::print_custom_columns(&objects, cols, args.no_headers)
                }
            }
            OutputFormat::JsonPathTemplate(parts) => print::print_template(&objects, parts),
            OutputFormat::Table | OutputFormat::Wide => String::new(),
        }
    };
    remote::out(&text)
}

/// One Table holding every row (kubectl prints the header once when the columns agree).
fn merge_tables(tables: Vec<Value>) -> Result<Value, RemoteError> {
    let mut iter = tables.into_iter();
    let Some(mut first) = iter.next() else {
        return Ok(Value::Null);
    };
    if first.get("kind").and_then(Value::as_str) != Some("Table") {
        return Err(RemoteError::Decode(
            "the server did not return a Table; it may not support server-side printing".into(),
        ));
    }
    for t in iter {
        if let (Some(Value::Array(rows)), Some(Value::Array(more))) =
            (first.get_mut("rows"), t.get("rows"))
        {
            rows.extend(more.iter().cloned());
        }
    }
    Ok(first)
}

/// The items of a List, each with the list's apiVersion/kind when it lacks its own
/// (kubectl's Flatten does the same).
fn list_items(list: Value) -> Vec<Value> {
    let Value::Object(mut list) = list else {
        return Vec::new();
    };
    let api_version = list.get("apiVersion").cloned();
    let kind = list
        .get("kind")
        .and_then(Value::as_str)
        .and_then(|k| k.strip_suffix("List"))
        .map(|k| Value::String(k.to_string()));
    let Some(Value::Array(items)) = list.remove("items") else {
        return Vec::new();
    };
    items
        .into_iter()
        .map(|mut item| {
            if let Value::Object(m) = &mut item {
                if !m.contains_key("apiVersion")
                    && let Some(v) = &api_version
                {
                    m.insert("apiVersion".into(), v.clone());
                }
                if !m.contains_key("kind")
                    && let Some(k) = &kind
                {
                    m.insert("kind".into(), k.clone());
                }
            }
            item
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn list_items_get_type_meta() {
        let items = list_items(json!({"apiVersion": "config.porch.kpt.dev/v1alpha1",
            "kind": "RepositoryList", "items": [{"metadata": {"name": "a"}}]}));
        assert_eq!(items[0]["kind"], "Repository");
        assert_eq!(items[0]["apiVersion"], "config.porch.kpt.dev/v1alpha1");
    }

    #[test]
    fn tables_merge_rows() {
        let t = |n: &str| json!({"kind": "Table", "columnDefinitions": [{"name": "Name"}], "rows": [{"cells": [n]}]});
        let m = merge_tables(vec![t("a"), t("b")]).expect("tables");
        assert_eq!(m["rows"].as_array().map(Vec::len), Some(2));
    }
}
