//! `delete-annotations`: removes the annotation keys listed (comma-separated)
//! in the functionConfig's `data.annotationKeys` from every resource, and
//! reports each removal with the resource's file.
//!
//! A port of the catalog's go/fn SDK program (`fn.AsMain` over a
//! `ResourceListProcessorFunc`), the one source the catalog published: under
//! `gcr.io/kpt-fn-contrib` from 2022 and as `ghcr.io/.../delete-annotations`
//! `v0.1` since 2026, so every tag behaves alike. The kyaml-framework and
//! early-SDK texts (a warning, "The following annotations were deleted ...")
//! were review rounds of the catalog's PR #771 and never shipped.
//!
//! - keys: `data.annotationKeys` split at `,` after trimming the whole text
//!   (keys themselves are not trimmed); missing or `""` is an error, a value
//!   that is no string is the SDK's `GetStringOrDie` panic;
//! - resources without kind, name or apiVersion (as strings) are skipped;
//! - every matching pair is removed (an emptied `annotations` map stays; kpt's
//!   writer drops it); the count in the summary goes up each time the name
//!   differs from the previous removal's resource's;
//! - a failure is one error result and `failed to evaluate function: <error>`
//!   on stderr, exit 1; success exits 0 and the SDK sorts the items.

mod variant;

#[cfg(test)]
mod tests;

use kpt::resource_list::{FileRef, ResourceList, ResultItem};
use kpt::yaml::Node;

use crate::FnError;
use crate::common::meta;
use variant::{Unhandled, WalkError};

const KEYS: &str = "annotationKeys";
const DELIMITER: char = ',';
const ANNOTATIONS: [&str; 2] = ["metadata", "annotations"];

/// Why the function failed; the text is its error result and stderr.
#[derive(Debug, thiserror::Error)]
enum Error {
    #[error("{KEYS} was not provided as part of the config or paramters to the function")]
    NotProvided,
    /// `GetStringOrDie`'s `ErrKubeObjectFields` (the closing backtick is
    /// missing in the SDK too).
    #[error(
        "Resource(apiVersion={api_version}, kind={kind}, Name={name}) has unmatched field type: `data/{KEYS}"
    )]
    Unmatched {
        api_version: String,
        kind: String,
        name: String,
    },
    /// `KubeObject.Remove` met something that is not a map on the way.
    #[error(
        "unable to remove fields [metadata annotations {key}] with error: value is of unexpected type {go_type}"
    )]
    Remove { key: String, go_type: &'static str },
    /// The SDK's `Run` recovering `toVariant`'s panic on an alias.
    #[error("panic with unhandled yaml node kind")]
    Unhandled,
}

impl From<Unhandled> for Error {
    fn from(_: Unhandled) -> Error {
        Error::Unhandled
    }
}

/// `getAnnotationKeys`. A missing functionConfig is the SDK's empty object.
fn annotation_keys(fc: Option<&Node>) -> Result<Vec<String>, Error> {
    let text = match fc {
        None => "",
        Some(fc) => match variant::nested(fc, &["data", KEYS]) {
            Ok(None) => "",
            Ok(Some(n)) if n.is_scalar() && n.resolved_tag() == "!!str" => {
                n.as_str().unwrap_or_default()
            }
            Err(WalkError::Unhandled) => return Err(Error::Unhandled),
            Ok(Some(_)) | Err(WalkError::NotMap(_)) => {
                let s = |f: &[&str]| variant::string_or_empty(fc, f).unwrap_or_default();
                return Err(Error::Unmatched {
                    api_version: s(&["apiVersion"]),
                    kind: s(&["kind"]),
                    name: s(&["metadata", "name"]),
                });
            }
        },
    };
    if text.is_empty() {
        return Err(Error::NotProvided);
    }
    Ok(text.trim().split(DELIMITER).map(str::to_string).collect())
}

/// `processResources`: deletes the keys and builds the results.
fn process(items: &mut [Node], keys: &[String]) -> Result<Vec<ResultItem>, Error> {
    let mut results = Vec::new();
    let mut current_name = String::new();
    let mut pruned = 0usize;
    for o in items.iter_mut() {
        // Go's `||` stops at the first empty one.
        if variant::string_or_empty(o, &["kind"])?.is_empty()
            || variant::string_or_empty(o, &["metadata", "name"])?.is_empty()
            || variant::string_or_empty(o, &["apiVersion"])?.is_empty()
        {
            continue;
        }
        for key in keys {
            let removed = variant::remove(o, &ANNOTATIONS, key).map_err(|e| match e {
                WalkError::NotMap(k) => Error::Remove {
                    key: key.clone(),
                    go_type: k.go_type(),
                },
                WalkError::Unhandled => Error::Unhandled,
            })?;
            if !removed {
                continue;
            }
            let name = variant::string_or_empty(o, &["metadata", "name"])?;
            if name != current_name {
                pruned += 1;
                current_name = name.clone();
            }
            let path = variant::string_map_value(o, &ANNOTATIONS, meta::PATH)?;
            let mut r = ResultItem::info(format!(
                "Annonation: [{key}] removed from resource: [{name}]"
            ));
            r.file = Some(FileRef { path, index: 0 });
            results.push(r);
        }
    }
    if results.is_empty() {
        return Ok(vec![ResultItem::info(
            "None of the resources had the provided annotations to delete",
        )]);
    }
    results.insert(
        0,
        ResultItem::info(format!(
            "The provided annotations were deleted from {pruned} resource(s)"
        )),
    );
    Ok(results)
}

/// Run the function.
pub fn run(list: &mut ResourceList) -> Result<(), FnError> {
    let outcome = annotation_keys(list.function_config.as_ref())
        .and_then(|keys| process(&mut list.items, &keys));
    match outcome {
        Ok(results) => {
            list.results.extend(results);
            Ok(())
        }
        Err(e) => {
            list.results.push(ResultItem::error(e.to_string()));
            Err(FnError::Stderr(format!("failed to evaluate function: {e}")))
        }
    }
}
