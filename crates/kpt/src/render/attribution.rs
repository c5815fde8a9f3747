//! kpt's usage attribution (`internal/util/attribution`): render marks every Config
//! Connector resource (an apiVersion containing `.cnrm.`) it writes with the
//! `cnrm.cloud.google.com/blueprint` annotation, adding `krm-fn` to what is there.
//! `KRM_DISABLE_ATTRIBUTION` (kpt HEAD) or `KPT_DISABLE_ATTRIBUTION` (older kpt) set
//! to anything turns it off.

use crate::package::resources::{annotation, set_annotation};
use crate::yaml::Node;

/// The annotation kpt records its use in.
pub const CNRM_BLUEPRINT: &str = "cnrm.cloud.google.com/blueprint";

/// Is attribution turned off by the environment?
pub fn disabled() -> bool {
    ["KRM_DISABLE_ATTRIBUTION", "KPT_DISABLE_ATTRIBUTION"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|s| !s.is_empty()))
}

/// kpt's `Attributor.Filter` for command group `group`: only Config Connector kinds
/// with a non-empty `metadata`.
pub fn attribute(item: &mut Node, group: &str) {
    let is_kcc = item
        .get("apiVersion")
        .and_then(Node::as_str)
        .is_some_and(|v| v.contains(".cnrm."));
    if !is_kcc {
        return;
    }
    let has_metadata = item
        .get("metadata")
        .is_some_and(|m| !m.entries().is_empty());
    if !has_metadata {
        return;
    }
    let current = annotation(item, CNRM_BLUEPRINT)
        .unwrap_or_default()
        .to_string();
    set_annotation(item, CNRM_BLUEPRINT, &record_action(&current, group));
}

/// kpt's `recordAction`: the group joins the value's `krm-…` part (created when there is
/// none). Every part that mentions `krm` is replaced by the parts gathered so far, as
/// upstream does.
pub fn record_action(current: &str, group: &str) -> String {
    if current.is_empty() {
        return format!("krm-{group}");
    }
    if !current.contains("krm-") {
        return format!("{current},krm-{group}");
    }
    let mut parts: Vec<String> = current.split(',').map(str::to_string).collect();
    let mut krm = vec!["krm"];
    for part in &mut parts {
        if part.contains("krm") {
            for g in ["pkg", "fn", "live"] {
                if part.contains(g) || group == g {
                    krm.push(g);
                }
            }
            *part = krm.join("-");
        }
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse_one;

    #[test]
    fn actions_are_recorded_as_kpt_records_them() {
        assert_eq!(record_action("", "fn"), "krm-fn");
        assert_eq!(record_action("cnrm/x:y/v1", "fn"), "cnrm/x:y/v1,krm-fn");
        assert_eq!(record_action("krm-pkg", "fn"), "krm-pkg-fn");
        assert_eq!(record_action("krm-fn", "fn"), "krm-fn");
        assert_eq!(
            record_action(
                "cnrm/landing-zone:networking/v0.4.0,krm-pkg,blueprints_controller",
                "fn"
            ),
            "cnrm/landing-zone:networking/v0.4.0,krm-pkg-fn,blueprints_controller"
        );
        assert_eq!(record_action("krm-live", "pkg"), "krm-pkg-live");
        // The older `kpt-` spelling holds no `krm-`: the new part is appended.
        assert_eq!(record_action("kpt-pkg", "fn"), "kpt-pkg,krm-fn");
    }

    #[test]
    fn only_config_connector_resources_with_metadata_are_marked() {
        let mut kcc =
            parse_one("apiVersion: storage.cnrm.cloud.google.com/v1beta1\nkind: StorageBucket\nmetadata:\n  name: b\n")
                .expect("yaml");
        attribute(&mut kcc, "fn");
        assert_eq!(annotation(&kcc, CNRM_BLUEPRINT), Some("krm-fn"));
        for text in [
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
            "apiVersion: blueprints.cloud.google.com/v1alpha3\nkind: X\nmetadata:\n  name: c\n",
            "apiVersion: storage.cnrm.cloud.google.com/v1beta1\nkind: StorageBucket\nmetadata: {}\n",
        ] {
            let mut n = parse_one(text).expect("yaml");
            attribute(&mut n, "fn");
            assert_eq!(annotation(&n, CNRM_BLUEPRINT), None, "{text}");
        }
    }

    /// kyaml's `SetAnnotation`: a new annotation is single-quoted; an existing one keeps
    /// its value's style (and loses the old value's comment), as kpt 1.0.0-beta.56 writes
    /// the Config Connector blueprints it attributes.
    #[test]
    fn the_annotation_keeps_an_existing_values_style() {
        let head = "apiVersion: storage.cnrm.cloud.google.com/v1beta1\nkind: StorageBucket\nmetadata:\n  name: b\n";
        for (ann, want) in [
            ("", "    cnrm.cloud.google.com/blueprint: 'krm-fn'\n"),
            (
                "cnrm/x/v1",
                "    cnrm.cloud.google.com/blueprint: cnrm/x/v1,krm-fn\n",
            ),
            (
                "cnrm/x/v1 # why",
                "    cnrm.cloud.google.com/blueprint: cnrm/x/v1,krm-fn\n",
            ),
            (
                "\"cnrm/x/v1\"",
                "    cnrm.cloud.google.com/blueprint: \"cnrm/x/v1,krm-fn\"\n",
            ),
            (
                "'cnrm/x/v1'",
                "    cnrm.cloud.google.com/blueprint: 'cnrm/x/v1,krm-fn'\n",
            ),
        ] {
            let text = if ann.is_empty() {
                head.to_string()
            } else {
                format!("{head}  annotations:\n    cnrm.cloud.google.com/blueprint: {ann}\n")
            };
            let mut n = parse_one(&text).expect("yaml");
            attribute(&mut n, "fn");
            let out = crate::yaml::emit_node(&n, crate::yaml::SeqIndent::Wide);
            assert!(out.ends_with(want), "{ann}: {out}");
        }
    }
}
