//! The table of native functions and the [`kpt::runtime::FunctionRuntime`] over it.

use kpt::resource_list::{ResourceList, ResultItem};
use kpt::runtime::{
    FunctionOutput, FunctionRef, FunctionRuntime, RunOptions, RuntimeError, image_short_name,
};

use crate::FnError;
use crate::error::SDK_FAILURE;

/// A native function: edits the list in place and appends its results.
pub type NativeFn = fn(&mut ResourceList) -> Result<(), FnError>;

const TABLE: &[(&str, NativeFn)] = &[
    ("apply-replacements", crate::apply_replacements::run),
    ("apply-setters", crate::apply_setters::run),
    ("create-setters", crate::create_setters::run),
    ("delete-annotations", crate::delete_annotations::run),
    ("drop-comments", crate::drop_comments::run),
    ("ensure-name-substring", crate::ensure_name_substring::run),
    ("no-op", crate::no_op::run),
    (
        "remove-local-config-resources",
        crate::remove_local_config_resources::run,
    ),
    ("search-replace", crate::search_replace::run),
    ("set-annotations", crate::set_annotations::run),
    ("set-enforcement-action", crate::set_enforcement_action::run),
    ("set-image", crate::set_image::run),
    ("set-labels", crate::set_labels::run),
    ("set-namespace", crate::set_namespace::run),
    ("starlark", crate::starlark::run),
    ("upsert-resource", crate::upsert_resource::run),
];

/// Functions whose exit code is theirs alone: like their Go originals (whose
/// SDK exits by what `Process` returns, not by the results' severities), an
/// error result they return with `Ok` leaves the exit code 0.
const EXIT_BY_RETURN: &[&str] = &[
    "delete-annotations",
    "set-labels",
    "set-namespace",
    "set-image",
];

/// Functions whose `main` is the go/fn SDK's `AsMain` over `Run` (set-image's
/// older releases: the catalog's vendored `fnsdk`, which does the same): the
/// SDK's `ResourceList.ToYAML` sorts the items before writing them
/// (`rl.Sort()`), so the next step and `-o stdout` see them in that order.
const SORTS_ITEMS: &[&str] = &[
    "delete-annotations",
    "set-image",
    "set-labels",
    "set-namespace",
    "starlark",
];

/// Look a native function up by image (any registry, any tag) or short name.
pub fn lookup(image: &str) -> Option<NativeFn> {
    let short = image_short_name(image);
    TABLE.iter().find(|(n, _)| *n == short).map(|(_, f)| *f)
}

/// The runtime of native functions.
#[derive(Debug, Clone, Copy, Default)]
pub struct Builtins;

impl FunctionRuntime for Builtins {
    fn handles(&self, function: &FunctionRef) -> bool {
        matches!(function, FunctionRef::Image(i) if lookup(i).is_some())
    }

    fn run(
        &self,
        function: &FunctionRef,
        mut input: ResourceList,
        options: &RunOptions,
    ) -> Result<FunctionOutput, RuntimeError> {
        let FunctionRef::Image(image) = function else {
            return Err(RuntimeError::NotFound(format!(
                "{} is not a built-in function",
                function.display()
            )));
        };
        let f = lookup(image)
            .ok_or_else(|| RuntimeError::NotFound(format!("{image} is not a built-in function")))?;
        input.results.clear();
        crate::stderr::take();
        // Like the Go SDK: an error becomes an error result (unless the function already
        // reported it), and a failing function exits 1 with the SDK's generic stderr line.
        // A panic in a native function is that call's failure, never the process's: the
        // server renders untrusted pipelines. (Stack overflows cannot unwind; renders run
        // on threads with stacks sized for the parsers' and evaluators' depth limits.)
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            crate::budget::with(&options.budget, || {
                crate::image_tag::with(image, || {
                    let r = f(&mut input);
                    if sorts_items(image) {
                        sdk_sort(&mut input.items);
                    }
                    r
                })
            })
        }));
        let ran = match ran {
            Ok(r) => r,
            Err(payload) => {
                return Err(RuntimeError::Panicked {
                    function: image.clone(),
                    reason: panic_text(payload.as_ref()),
                });
            }
        };
        let mut stderr = SDK_FAILURE.to_string();
        let reported = match ran {
            Ok(()) => false,
            Err(FnError::Reported) => true,
            // kyaml-framework functions print their error; the SDK's generic line is not theirs.
            Err(FnError::Stderr(text)) => {
                stderr = text;
                true
            }
            Err(e) => {
                input.results.push(ResultItem::error(e.to_string()));
                stderr = e.stderr();
                true
            }
        };
        // Functions on the current Go SDK exit by what they return, not by their results.
        let by_return = EXIT_BY_RETURN.contains(&image_short_name(image));
        let failed = reported || (!by_return && input.results.iter().any(ResultItem::is_error));
        // What the function printed comes first; a failure's text follows it.
        let mut printed = crate::stderr::take();
        if failed {
            printed.push_str(&stderr);
        }
        Ok(FunctionOutput {
            list: input,
            exit_code: i32::from(failed),
            stderr: container_stderr(&printed),
        })
    }

    fn builtin_names(&self) -> Vec<String> {
        TABLE.iter().map(|(n, _)| n.to_string()).collect()
    }
}

/// Whether the release called runs on go/fn's `AsMain`: the early set-labels
/// (v0.1) and set-namespace (v0.1, v0.2) releases were kyaml framework
/// programs, whose writer keeps the items' order.
fn sorts_items(image: &str) -> bool {
    use crate::image_tag::is_release;
    match image_short_name(image) {
        "set-labels" => !is_release(0, 1),
        "set-namespace" => !is_release(0, 1) && !is_release(0, 2),
        short => SORTS_ITEMS.contains(&short),
    }
}

/// go/fn's `KubeObjects.Less`: items ordered by the text
/// `"<apiVersion> <kind> <namespace> <name>"`, compared byte-wise as Go
/// compares strings. Go's `sort.Sort` is an insertion sort up to 12 items
/// (stable, as this is); beyond that its pdqsort may order equal keys
/// differently, which is not reproduced.
fn sdk_sort(items: &mut [kpt::yaml::Node]) {
    use crate::common::meta;
    items.sort_by_cached_key(|o| {
        format!(
            "{} {} {} {}",
            meta::api_version(o),
            meta::kind(o),
            meta::namespace(o),
            meta::name(o)
        )
    });
}

/// The stderr kpt records for a catalog image: its docker runtime reads the
/// stream line by line (dropping the final newline and `\r`s) and leaves out
/// docker's own pull-progress lines.
fn container_stderr(raw: &str) -> String {
    const DOCKER: [&str; 10] = [
        ": Already exists",
        ": Pulling fs layer",
        ": Verifying Checksum",
        ": Download complete",
        ": Pulling from",
        ": Waiting",
        ": Pull complete",
        "Digest: sha256",
        "Status: Downloaded newer image",
        "Unable to find image",
    ];
    raw.lines()
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .filter(|l| !DOCKER.iter().any(|d| l.contains(d)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The message of a panic payload (`panic!` with a literal or a formatted string).
fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic".to_string()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn stderr_reads_like_the_docker_runtime() {
        assert_eq!(super::container_stderr("a\r\n\nb\n"), "a\n\nb");
        assert_eq!(super::container_stderr("x: Pull complete\nkept"), "kept");
        assert_eq!(super::container_stderr(""), "");
    }
}
