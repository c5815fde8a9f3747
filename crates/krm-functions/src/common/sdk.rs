//! The current catalog SDK's `runnerProcessor` config step (`fn.WithContext`
//! over a `Runner` struct), which decides what a functionConfig means before
//! the function's own `Run` sees it:
//!
//! - no config, `{}`, or the `function-input` ConfigMap with an empty `data`
//!   map: an info result "`FunctionConfig` is not given", and `Run` still runs;
//! - group-less `ConfigMap` (any version): its `data` fills the struct's
//!   string map (a ConfigMap without `data` leaves it unset);
//! - `fn.kpt.dev` and the struct's name as kind (any version): decoded as
//!   JSON into the struct (see [`super::gojson`]);
//! - anything else: an error result naming the group/kind; `Run` is skipped
//!   and the function exits 1.

use kpt::yaml::Node;

use super::gojson::{self, GoStruct};
use super::{config, meta};

/// Group of the catalog's typed configs.
pub const FN_GROUP: &str = "fn.kpt.dev";

/// What the config step made of the functionConfig.
#[derive(Debug)]
pub enum RunnerConfig<'a> {
    /// Nothing given (after the info result).
    NotGiven,
    /// A ConfigMap: its `data` as ordered pairs, `None` without `data`.
    Data(Option<Vec<(String, String)>>),
    /// The typed config, which decodes into the struct.
    Typed(&'a Node),
}

/// SDK `IsEmpty`: no config at all, or an empty mapping.
pub fn is_empty(fc: Option<&Node>) -> bool {
    fc.is_none_or(|n| n.entries().is_empty())
}

/// SDK `EmptyFunctionConfig`: kpt's `function-input` placeholder with a
/// `data` map that holds nothing.
pub fn is_placeholder(fc: &Node) -> bool {
    meta::kind(fc) == "ConfigMap"
        && meta::name(fc) == "function-input"
        && fc
            .get("data")
            .is_some_and(|d| d.is_mapping() && d.entries().is_empty())
}

/// `schema.GroupKind` of an object, from its apiVersion and kind. An
/// apiVersion `schema.ParseGroupVersion` refuses (more than one `/`) makes
/// the whole group/version/kind empty, kind included.
pub fn group_kind(o: &Node) -> (&str, &str) {
    let av = meta::api_version(o);
    if av.matches('/').count() > 1 {
        return ("", "");
    }
    (meta::group(av), meta::kind(o))
}

/// `schema.GroupKind.String()`.
pub fn group_kind_string(group: &str, kind: &str) -> String {
    if group.is_empty() {
        kind.to_string()
    } else {
        format!("{kind}.{group}")
    }
}

/// Runs the config step for a runner struct `ty` (its Go pointer type, e.g.
/// `*setlabels.SetLabels`, is `ptr`). `Err` is the error result's message;
/// `info` receives the "not given" info result.
pub fn runner_config<'a>(
    fc: Option<&'a Node>,
    ty: &'static GoStruct,
    ptr: &str,
    info: &mut Vec<String>,
) -> Result<RunnerConfig<'a>, String> {
    let Some(fc) = fc.filter(|n| !is_empty(Some(n)) && !is_placeholder(n)) else {
        info.push("`FunctionConfig` is not given".to_string());
        return Ok(RunnerConfig::NotGiven);
    };
    match group_kind(fc) {
        ("", "ConfigMap") => Ok(RunnerConfig::Data(
            fc.get("data")
                .filter(|d| d.is_mapping())
                .map(|_| config::data_map(fc)),
        )),
        (FN_GROUP, kind) if kind == ty.name => match gojson::check(fc, ty) {
            None => Ok(RunnerConfig::Typed(fc)),
            Some(e) => Err(format!("unable to convert object to {ptr} with error: {e}")),
        },
        (group, kind) => Err(format!(
            "unknown FunctionConfig `{}`, expect `{}.{FN_GROUP}` or `ConfigMap.v1`",
            group_kind_string(group, kind),
            ty.name
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::gojson::GoType;
    use crate::common::testing::node;

    static STR: GoType = GoType::String;
    static T: GoStruct = GoStruct {
        qualified: "p.T",
        name: "T",
        fields: &[("labels", GoType::Map(&STR))],
    };

    fn outcome(text: Option<&str>) -> (Result<String, String>, Vec<String>) {
        let n = text.map(node);
        let mut info = Vec::new();
        let r = runner_config(n.as_ref(), &T, "*p.T", &mut info).map(|c| format!("{c:?}"));
        (r, info)
    }

    #[test]
    fn branches() {
        for empty in [
            None,
            Some("{}"),
            Some("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: function-input}\ndata: {}\n"),
        ] {
            let (r, info) = outcome(empty);
            assert_eq!(r.as_deref(), Ok("NotGiven"), "{empty:?}");
            assert_eq!(info, vec!["`FunctionConfig` is not given"]);
        }
        let (r, info) = outcome(Some(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: function-input}\n",
        ));
        assert_eq!(
            r.as_deref(),
            Ok("Data(None)"),
            "no data is not the placeholder"
        );
        assert!(info.is_empty());
        let (r, _) = outcome(Some("apiVersion: v2\nkind: ConfigMap\ndata: {a: b}\n"));
        assert!(r.is_ok_and(|s| s.starts_with("Data(Some")));
        let (r, _) = outcome(Some("apiVersion: fn.kpt.dev/v9\nkind: T\nlabels: [a]\n"));
        assert_eq!(
            r.err().as_deref(),
            Some(
                "unable to convert object to *p.T with error: json: cannot unmarshal array into \
                 Go struct field T.labels of type map[string]string"
            )
        );
        let (r, _) = outcome(Some("apiVersion: fn.kpt.dev/v1alpha1\nkind: Bad\n"));
        assert_eq!(
            r.err().as_deref(),
            Some(
                "unknown FunctionConfig `Bad.fn.kpt.dev`, expect `T.fn.kpt.dev` or `ConfigMap.v1`"
            )
        );
        let (r, _) = outcome(Some("apiVersion: apps/v1\nkind: ConfigMap\n"));
        assert!(r.is_err_and(|e| e.contains("`ConfigMap.apps`")));
        let (r, _) = outcome(Some("apiVersion: a/b/c\nkind: ConfigMap\ndata: {a: b}\n"));
        assert!(
            r.is_err_and(|e| e.starts_with("unknown FunctionConfig ``,")),
            "an unparsable apiVersion empties the group kind"
        );
    }
}
