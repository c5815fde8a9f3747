//! What the 2021 releases of the kustomize-based catalog functions share
//! (set-namespace v0.1/v0.2, set-labels v0.1, set-annotations v0.1.0-v0.1.3):
//! they ran
//! on that year's kyaml `framework`, which reports nothing on success, and on
//! failure returns one error result whose text it also prints in its
//! `Result.Error()` form, `[error] <apiVersion>/<kind>/<namespace>/<name>
//! <field>: <message>` (all empty here, hence `[error] /// : <message>`).
//! Pipelines pinned to those tags (kpt's own e2e cases pin
//! `set-namespace:v0.1.3`, `set-namespace:v0.2.0`, `set-labels:v0.1.5`) get
//! what those images did.

use kpt::resource_list::{ResourceList, ResultItem};
use kpt::yaml::Node;

use super::gomsg;
use crate::FnError;

/// Fails the function as the 2021 framework did: the error result, and its
/// `Result.Error()` text on stderr.
pub fn fail(list: &mut ResourceList, message: String) -> FnError {
    let stderr = format!("[error] /// : {message}");
    list.results.push(ResultItem::error(message));
    FnError::Stderr(stderr)
}

/// The release's config parsed by `parse`, or the framework's "failed to configure
/// function" failure.
pub fn configure<C>(
    list: &mut ResourceList,
    parse: impl FnOnce(Option<&Node>) -> Result<C, String>,
) -> Result<C, FnError> {
    parse(list.function_config.as_ref())
        .map_err(|e| fail(list, format!("failed to configure function: {e}")))
}

/// The config of a function kpt called without one: `kpt fn eval` hands such
/// functions its empty `function-input` ConfigMap, so no config reads as a
/// ConfigMap without data.
pub fn config_or_placeholder(fc: Option<&Node>) -> Node {
    match fc {
        Some(n) if !n.entries().is_empty() => n.clone(),
        _ => {
            let mut cm = Node::mapping();
            cm.set("apiVersion", Node::string("v1"));
            cm.set("kind", Node::string("ConfigMap"));
            cm.ensure_mapping(&["metadata"])
                .set("name", Node::string("function-input"));
            cm
        }
    }
}

/// The functions' `validGVK`: kyaml `GetMeta` succeeds and apiVersion and
/// kind are exactly these.
pub fn valid_gvk(fc: &Node, api_version: &str, kind: &str) -> bool {
    gomsg::get_meta(fc).is_ok_and(|m| m.api_version == api_version && m.kind == kind)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testing::node;

    #[test]
    fn failure_is_one_result_and_its_framework_text() {
        let mut list = ResourceList::new(Vec::new());
        let e = fail(&mut list, "failed to configure function: x".into());
        assert_eq!(list.results.len(), 1);
        assert!(list.results[0].is_error());
        assert_eq!(
            e.to_string(),
            "[error] /// : failed to configure function: x"
        );
    }

    #[test]
    fn placeholder_and_gvk() {
        let cm = config_or_placeholder(None);
        assert!(valid_gvk(&cm, "v1", "ConfigMap"));
        assert!(valid_gvk(
            &config_or_placeholder(Some(&node("{}"))),
            "v1",
            "ConfigMap"
        ));
        let typed = node("apiVersion: fn.kpt.dev/v1alpha1\nkind: SetLabels\nmetadata: {name: x}\n");
        assert!(valid_gvk(&typed, "fn.kpt.dev/v1alpha1", "SetLabels"));
        assert!(!valid_gvk(&typed, "v1", "ConfigMap"));
        assert!(!valid_gvk(&node("data: {a: b}\n"), "v1", "ConfigMap"));
    }
}
