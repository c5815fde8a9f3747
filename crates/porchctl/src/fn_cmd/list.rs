//! `porchctl fn list`: the functions the server offers to pipelines (`porch.kpt.dev/v1alpha1`
//! `functions`: built-ins, FunctionConfig images, function repositories' images), filtered
//! by type and keyword on the server.

use std::process::ExitCode;

use clap::Args;

use crate::remote::api::ResourceApi;
use crate::remote::listing::{list_items, merge_tables};
use crate::remote::print::{self, OutputFormat, PrintFlags};
use crate::remote::{self, ConnectionFlags, RemoteError};

const FUNCTIONS: ResourceApi = ResourceApi {
    group: "porch.kpt.dev",
    version: "v1alpha1",
    plural: "functions",
};

/// Flags of `fn list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub conn: ConnectionFlags,
    /// Only functions of this type: mutator or validator.
    #[arg(long = "type", value_name = "TYPE")]
    pub function_type: Option<String>,
    /// Only functions with this keyword.
    #[arg(long)]
    pub keyword: Option<String>,
    /// Only functions of this repository (`builtin`, `functionconfig`, or a Repository).
    #[arg(long)]
    pub repository: Option<String>,
    #[command(flatten)]
    pub print: PrintFlags,
}

impl ListArgs {
    fn field_selector(&self) -> Option<String> {
        let terms: Vec<String> = [
            ("spec.functionTypes", &self.function_type),
            ("spec.keywords", &self.keyword),
            ("spec.repositoryRef.name", &self.repository),
        ]
        .into_iter()
        .filter_map(|(path, v)| v.as_ref().map(|v| format!("{path}={v}")))
        .collect();
        (!terms.is_empty()).then(|| terms.join(","))
    }
}

pub fn run(args: ListArgs) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    Ok(match runtime.block_on(list(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => remote::report(&e),
    })
}

async fn list(args: ListArgs) -> Result<(), RemoteError> {
    let format = args.print.format()?;
    let remote = args.conn.connect().await?;
    let client = &remote.client;
    let ns = (!args.print.all_namespaces).then_some(remote.namespace.as_str());
    let selector = args.field_selector();
    let text = if format.wants_table() {
        let table = FUNCTIONS
            .table(client, ns, None, selector.as_deref(), None)
            .await?;
        let merged = merge_tables(vec![table])?;
        // Image, types and description are what one lists functions for: always shown.
        print::print_table(&merged, &args.print.table_options(&OutputFormat::Wide))
    } else {
        let list = FUNCTIONS
            .list_selected(client, ns, selector.as_deref(), None)
            .await?;
        let mut objects = list_items(list);
        if format.hides_managed_fields() {
            print::hide_managed_fields(&mut objects);
        }
        match &format {
            OutputFormat::Yaml => print::print_yaml(&objects)?,
            OutputFormat::Json => print::print_json(&objects)?,
            OutputFormat::Name => print::print_names(&objects, "function.porch.kpt.dev"),
            OutputFormat::CustomColumns(cols) => {
                print::print_custom_columns(&objects, cols, args.print.no_headers)?
            }
            OutputFormat::JsonPathTemplate(parts) => print::print_template(&objects, parts)?,
            OutputFormat::JsonPathAsJson(parts) => print::print_template_json(&objects, parts)?,
            OutputFormat::GoTemplate(t) => print::print_go_template(&objects, t)?,
            OutputFormat::Table | OutputFormat::Wide => String::new(),
        }
    };
    remote::out(&text)
}
