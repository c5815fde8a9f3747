//! `rpkg push PACKAGE [DIR|-]`: replaces a Draft's files (PUT packagerevisionresources)
//! with the resourceVersion pulled into `.KptRevisionMetadata`, then prints the server's
//! render results on stderr (§10.3) and `<name> pushed` on stdout.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use clap::Args;
use serde_json::{Value, json};

use super::resources::{self, REVISION_METADATA_FILE};
use crate::remote::api::PACKAGE_REVISION_RESOURCES;
use crate::remote::spinner::Spinner;
use crate::remote::{self, ConnectionFlags, RemoteError};

/// kpt truncates a function's result lines after this many.
const TRUNCATE_LINES: usize = 4;

/// Flags of `rpkg push`.
#[derive(Debug, Args)]
pub struct PushArgs {
    /// The package revision, then the directory to read (`-` or nothing: stdin).
    #[arg(value_name = "PACKAGE_REV_NAME [DIR]")]
    pub args: Vec<String>,
}

/// The PackageRevisionResources body of the update.
pub fn update_body(ns: &str, name: &str, rv: &str, files: BTreeMap<String, String>) -> Value {
    let mut meta = json!({"name": name, "namespace": ns});
    if !rv.is_empty() {
        meta["resourceVersion"] = json!(rv);
    }
    json!({
        "apiVersion": "porch.kpt.dev/v1alpha1",
        "kind": "PackageRevisionResources",
        "metadata": meta,
        "spec": {"resources": files},
    })
}

/// One result as upstream push prints it: `[severity] apiVersion/kind/ns/name field: msg`
/// with empty identifier parts left out.
fn result_line(item: &Value) -> String {
    let s = |p: &str| item.pointer(p).and_then(Value::as_str).unwrap_or_default();
    let severity = match s("/severity") {
        "" => "info",
        other => other,
    };
    let mut out = format!("[{severity}]");
    let id: Vec<&str> = [
        "/resourceRef/apiVersion",
        "/resourceRef/kind",
        "/resourceRef/namespace",
        "/resourceRef/name",
    ]
    .into_iter()
    .map(s)
    .filter(|p| !p.is_empty())
    .collect();
    if !id.is_empty() {
        out.push(' ');
        out.push_str(&id.join("/"));
    }
    if item.get("field").is_some_and(Value::is_object) {
        out.push(' ');
        out.push_str(s("/field/path"));
    }
    out.push_str(": ");
    out.push_str(s("/message"));
    out
}

/// The stderr text for a render status: the failure note, then per function its
/// `[RUNNING]`, `[PASS]`/`[FAIL]` and results.
pub fn render_report(status: &Value, truncate: bool) -> String {
    let mut out = String::new();
    let err = status
        .get("error")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !err.is_empty() {
        out.push_str("Package is updated, but failed to render the package.\n");
        out.push_str(&format!("Error: {err}\n"));
    }
    let empty = Vec::new();
    let items = status
        .pointer("/result/items")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    for item in items {
        let image = item
            .get("image")
            .and_then(Value::as_str)
            .unwrap_or_default();
        // Upstream prints `[RUNNING] %q \n` (the golden `rpkg-nested-package` has the space).
        out.push_str(&format!("[RUNNING] {image:?} \n"));
        let failed = item.get("exitCode").and_then(Value::as_i64).unwrap_or(0) != 0;
        let verdict = if failed { "FAIL" } else { "PASS" };
        out.push_str(&format!("[{verdict}] {image:?}\n"));
        let lines: Vec<String> = item
            .get("results")
            .and_then(Value::as_array)
            .unwrap_or(&empty)
            .iter()
            .map(result_line)
            .collect();
        const TITLE: &str = "[Results]: ";
        let shown = if truncate { TRUNCATE_LINES } else { usize::MAX };
        for (i, line) in lines.iter().take(shown).enumerate() {
            let lead = if i == 0 {
                TITLE.to_string()
            } else {
                " ".repeat(TITLE.len())
            };
            out.push_str(&format!("{lead}{line}\n"));
        }
        if lines.len() > shown {
            out.push_str(&format!(
                "  ...({} line(s) truncated, use '--truncate-output=false' to disable)\n",
                lines.len() - TRUNCATE_LINES
            ));
        }
    }
    out
}

/// A package needs a Kptfile at its root.
fn check_kptfile(
    files: &BTreeMap<String, String>,
    source: Option<&str>,
) -> Result<(), RemoteError> {
    if files.contains_key("Kptfile") {
        return Ok(());
    }
    let what = match source {
        Some("-") | None => "the ResourceList on stdin".to_string(),
        Some(dir) => format!("directory {dir:?}"),
    };
    Err(RemoteError::Usage(format!(
        "{what} is not a kpt package: it has no Kptfile at its root\n\
         use \"porchctl rpkg pull\" to download the package, edit it, then push that directory"
    )))
}

pub async fn run(conn: &ConnectionFlags, a: PushArgs, truncate: bool) -> Result<(), RemoteError> {
    // Upstream's preRunE builds the client before runE looks at the arguments.
    let remote = conn.connect().await?;
    let Some(name) = a.args.first() else {
        return Err(RemoteError::Usage(
            "PACKAGE name is a required positional argument".into(),
        ));
    };
    let source = a.args.get(1).map(String::as_str);
    let mut files = match source {
        // `-` is stdin; no DIR too, with kptdev/porch's notice (its printer's Printf:
        // stderr, no newline).
        Some("-") | None => {
            if source.is_none() {
                eprint!(
                    "Warning: This way of using stdin will be deprecated in Porch release 5.x.x. Please use '-' to provide stdin."
                );
            }
            let mut text = String::new();
            std::io::stdin().read_to_string(&mut text)?;
            resources::from_resource_list(&text)?
        }
        Some(dir) => resources::read_dir(Path::new(dir))?,
    };
    let ns = remote.namespace.as_str();
    // Upstream's own check (the pulled metadata) comes first.
    let rv = resources::resource_version(&files, ns, name).map_err(|e| {
        RemoteError::Usage(format!(
            "{e}\nuse \"porchctl rpkg pull\" to download the remote package metadata before pushing"
        ))
    })?;
    // Checked before anything is sent: without a Kptfile the server would take the files
    // and only approval would fail.
    check_kptfile(&files, source)?;
    files.remove(REVISION_METADATA_FILE);
    let body = update_body(ns, name, &rv, files);
    // The server renders the package before it answers.
    let spinner = Spinner::start(format!("pushing {name}"));
    let updated = PACKAGE_REVISION_RESOURCES
        .replace(&remote.client, ns, name, &body)
        .await;
    drop(spinner);
    let updated = updated?;
    if let Some(status) = updated.pointer("/status/renderStatus") {
        let report = render_report(status, truncate);
        if !report.is_empty() {
            eprint!("{report}");
        }
    }
    remote::out(&format!("{name} pushed\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_omits_empty_resource_version() {
        let b = update_body("ns", "n", "", BTreeMap::new());
        assert!(b["metadata"].get("resourceVersion").is_none());
        let b = update_body("ns", "n", "1", BTreeMap::new());
        assert_eq!(b["metadata"]["resourceVersion"], "1");
    }

    #[test]
    fn a_package_needs_a_root_kptfile() {
        let mut files = BTreeMap::from([("sub/Kptfile".to_string(), String::new())]);
        let e = check_kptfile(&files, Some("pkg")).expect_err("no root Kptfile");
        assert!(
            e.to_string()
                .starts_with("directory \"pkg\" is not a kpt package: it has no Kptfile"),
            "{e}"
        );
        let e = check_kptfile(&files, Some("-")).expect_err("no root Kptfile");
        assert!(
            e.to_string().starts_with("the ResourceList on stdin"),
            "{e}"
        );
        files.insert("Kptfile".into(), String::new());
        assert!(check_kptfile(&files, Some("pkg")).is_ok());
    }

    #[test]
    fn report_like_upstream() {
        let status = json!({"error": "", "result": {"items": [
            {"image": "ghcr.io/kptdev/krm-functions-catalog/set-namespace:v0.4.1", "exitCode": 0,
             "results": [{"message": "namespace updated", "severity": "info",
                          "resourceRef": {"apiVersion": "v1", "kind": "ConfigMap", "name": "c"},
                          "field": {"path": "metadata.namespace"}}]},
            {"image": "x:v1", "exitCode": 1, "results": [
                {"message": "m1"}, {"message": "m2"}, {"message": "m3"}, {"message": "m4"}, {"message": "m5"}]}
        ]}});
        insta::assert_snapshot!(render_report(&status, true));
        let whole = render_report(&status, false);
        assert!(!whole.contains("truncated"), "{whole}");
        // Upstream's `[RUNNING] %q \n`: a space before the newline.
        assert!(
            whole.starts_with(
                "[RUNNING] \"ghcr.io/kptdev/krm-functions-catalog/set-namespace:v0.4.1\" \n[PASS] "
            ),
            "{whole:?}"
        );
        assert_eq!(
            render_report(&json!({"error": "boom"}), true),
            "Package is updated, but failed to render the package.\nError: boom\n"
        );
        assert_eq!(render_report(&json!({"error": ""}), true), "");
    }
}
