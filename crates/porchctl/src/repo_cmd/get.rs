//! `porchctl repo get [NAME...]`: the server's Table by default; yaml, json, name and
//! custom-columns from the objects themselves.

use clap::Args;

use crate::remote::api::REPOSITORIES;
use crate::remote::listing::{SortBy, list_items, merge_tables};
use crate::remote::print::{self, OutputFormat, PrintFlags};
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
    #[command(flatten)]
    pub print: PrintFlags,
}

pub async fn run(conn: &ConnectionFlags, args: GetArgs) -> Result<(), RemoteError> {
    let format = args.print.format()?;
    let sort_by = SortBy::parse(&args.print.sort_by)?;
    let remote = conn.connect().await?;
    let client = &remote.client;
    let ns = (!args.print.all_namespaces).then_some(remote.namespace.as_str());
    let text = if format.wants_table() {
        // Sorting needs the whole object per row, as kubectl asks for it.
        let include = sort_by.as_ref().map(|_| "Object");
        let tables = if args.names.is_empty() {
            vec![REPOSITORIES.table(client, ns, None, None, include).await?]
        } else {
            let mut t = Vec::new();
            for name in &args.names {
                t.push(
                    REPOSITORIES
                        .table(client, Some(&remote.namespace), Some(name), None, include)
                        .await?,
                );
            }
            t
        };
        let mut merged = merge_tables(tables)?;
        if let Some(sort_by) = &sort_by {
            sort_by.sort_table(&mut merged)?;
        }
        print::print_table(&merged, &args.print.table_options(&format))
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
        let mut objects = objects;
        if args.print.hides_managed_fields(&format) {
            print::hide_managed_fields(&mut objects);
        }
        if let Some(sort_by) = &sort_by {
            sort_by.sort_objects(&mut objects)?;
        }
        match &format {
            OutputFormat::Yaml => print::print_yaml(&objects)?,
            OutputFormat::Json => print::print_json(&objects)?,
            OutputFormat::Name => print::print_names(&objects, "repository.config.porch.kpt.dev"),
            OutputFormat::CustomColumns(cols) => {
                if objects.is_empty() {
                    String::new()
                } else {
                    print::print_custom_columns(&objects, cols, args.print.no_headers)?
                }
            }
            OutputFormat::JsonPathTemplate(parts) => print::print_template(&objects, parts)?,
            OutputFormat::JsonPathAsJson(parts) => print::print_template_json(&objects, parts)?,
            OutputFormat::GoTemplate(t) => print::print_go_template(&objects, t)?,
            OutputFormat::Table | OutputFormat::Wide => String::new(),
        }
    };
    remote::out(&text)
}
