//! Runs one built-in function as kpt does and captures what it reports.

use kpt::resource_list::{ResourceList, ResultItem, Severity};
use kpt::runtime::{FunctionRef, FunctionRuntime, RunOptions};
use kpt::yaml::{self, Document};
use krm_functions::Builtins;

/// What one call produced.
pub struct Outcome {
    /// The output items as a YAML stream.
    pub items: String,
    pub results: Vec<ResultItem>,
    pub exit_code: i32,
    pub stderr: String,
}

impl Outcome {
    /// `severity|message` per result (`-` for no severity).
    pub fn results(&self) -> Vec<String> {
        self.results
            .iter()
            .map(|r| {
                let s = match r.severity {
                    Some(Severity::Error) => "error",
                    Some(Severity::Warning) => "warning",
                    Some(Severity::Info) => "info",
                    None => "-",
                };
                format!("{s}|{}", r.message)
            })
            .collect()
    }
}

/// The function's image as kpt names it.
pub fn image(name: &str) -> String {
    format!("ghcr.io/kptdev/krm-functions-catalog/{name}:latest")
}

/// Runs `function` over the items of `input` with `config` as functionConfig.
pub fn call(function: &str, input: &str, config: Option<&str>) -> Outcome {
    call_image(&image(function), input, config)
}

/// Runs the built-in named by `image` (any tag) like [`call`].
pub fn call_image(image: &str, input: &str, config: Option<&str>) -> Outcome {
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
    let docs: Vec<Document> = out.list.items.into_iter().map(Document::new).collect();
    Outcome {
        items: yaml::emit_stream(&docs),
        results: out.list.results,
        exit_code: out.exit_code,
        stderr: out.stderr,
    }
}

/// The Go SDK's stderr for a failed function.
pub const SDK_FAILURE: &str = "failed to evaluate function: error: function failure";

/// A ConfigMap functionConfig as kpt builds it from a Kptfile `configMap:`.
pub fn config_map(data: &[(&str, &str)]) -> String {
    let mut s =
        String::from("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: function-input\n");
    if data.is_empty() {
        s.push_str("data: {}\n");
        return s;
    }
    s.push_str("data:\n");
    for (k, v) in data {
        s.push_str(&format!("  {k}: {}\n", yaml_quote(v)));
    }
    s
}

fn yaml_quote(v: &str) -> String {
    format!("'{}'", v.replace('\'', "''"))
}
