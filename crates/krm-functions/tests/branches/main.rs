//! Every error branch and result of the built-in functions, as the function's
//! entry point ([`Builtins`] through kpt's runtime interface) reports them:
//! exit code, stderr, results (severity, message, file, field) and output
//! items. The expectations are the catalog's Go functions' behaviour.

mod apply_replacements;
mod delete_annotations;
mod ensure_name_substring;
mod no_op_drop_comments;
mod remove_local_config_resources;
mod sdk_item_order;
mod search_replace;
mod set_enforcement_action;
mod starlark;
mod upsert_resource;

use kpt::resource_list::{ResourceList, ResultItem};
use kpt::runtime::{FunctionRef, FunctionRuntime, RunOptions};
use kpt::yaml::{self, Document};
use krm_functions::Builtins;

/// What a function call produced.
pub struct Out {
    pub exit_code: i32,
    pub stderr: String,
    /// `severity|message|file|field` per result.
    pub results: Vec<String>,
    /// The output items as one YAML stream.
    pub items: String,
}

/// Runs the built-in `function` on `input` (a YAML stream, may be empty) with
/// `config` (a YAML document) as functionConfig.
pub fn call(function: &str, input: &str, config: Option<&str>) -> Out {
    let image = format!("ghcr.io/kptdev/krm-functions-catalog/{function}:latest");
    call_image(&image, input, config)
}

/// Runs the built-in named by `image` (any registry and tag) like [`call`].
pub fn call_image(image: &str, input: &str, config: Option<&str>) -> Out {
    let items = yaml::parse_stream(input)
        .expect("input parses")
        .into_iter()
        .map(|d| d.root)
        .collect();
    let mut list = ResourceList::new(items);
    list.function_config = config.map(|c| yaml::parse_one(c).expect("config parses"));
    let out = Builtins
        .run(
            &FunctionRef::Image(image.to_string()),
            list,
            &RunOptions::default(),
        )
        .expect("the function runs");
    let docs: Vec<Document> = out.list.items.iter().cloned().map(Document::new).collect();
    Out {
        exit_code: out.exit_code,
        stderr: out.stderr,
        results: out.list.results.iter().map(describe).collect(),
        items: yaml::emit_stream(&docs),
    }
}

fn describe(r: &ResultItem) -> String {
    let severity = r
        .severity
        .map(|s| format!("{s:?}").to_lowercase())
        .unwrap_or_default();
    let file = r.file.as_ref().map(|f| f.path.clone()).unwrap_or_default();
    let field = r.field.as_ref().map(|f| f.path.clone()).unwrap_or_default();
    format!("{severity}|{}|{file}|{field}", r.message)
}

/// The Go SDK's stderr line for a function that reported an error result.
pub const SDK_FAILURE: &str = "failed to evaluate function: error: function failure";

/// A ConfigMap functionConfig with `data` given as YAML lines (indented).
pub fn config_map(data: &str) -> String {
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: function-input\ndata:\n{data}")
}
