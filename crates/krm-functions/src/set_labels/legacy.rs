//! set-labels release v0.1, which wrapped kustomize's label transformer: the
//! labels (a ConfigMap's data, or `SetLabels` / legacy `SetLabelConfig` with
//! `labels`, `additionalLabelFields` or deprecated `fieldSpecs`) are set in
//! sorted key order at every field spec of kustomize's `commonLabels` that
//! matches the resource (selectors and pod templates created where the spec
//! says so), local-config resources included. Nothing is reported on
//! success; configuration errors fail in the 2021 framework's way (see
//! [`crate::common::legacy`]).

use kpt::resource_list::ResourceList;
use kpt::yaml::Node;

use crate::FnError;
use crate::common::fieldspec::{self, Create, FieldSpec};
use crate::common::plugin::{self, Plugin};
use crate::common::{config, legacy, meta};

/// Whether the running image is that release.
pub(super) fn applies() -> bool {
    crate::image_tag::is_release(0, 1)
}

/// The release's kustomize `plugin` struct.
static PLUGIN: Plugin = Plugin {
    string_map: Some("labels"),
    strings: &[],
    field_specs: &["fieldSpecs", "additionalLabelFields"],
};

/// kustomize's default `commonLabels` field specs: the selectors, then the
/// metadata and template labels.
fn default_field_specs() -> Vec<FieldSpec> {
    const APPS_AFFINITY: [&str; 5] = [
        "spec/template/spec/affinity/podAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels",
        "spec/template/spec/affinity/podAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels",
        "spec/template/spec/affinity/podAntiAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels",
        "spec/template/spec/affinity/podAntiAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels",
        "spec/template/spec/topologySpreadConstraints/labelSelector/matchLabels",
    ];
    let f = FieldSpec::new;
    let mut specs = vec![
        f("", "v1", "Service", "spec/selector", true),
        f("", "v1", "ReplicationController", "spec/selector", true),
        f("", "", "Deployment", "spec/selector/matchLabels", true),
    ];
    specs.extend(APPS_AFFINITY.map(|p| f("apps", "", "Deployment", p, false)));
    specs.push(f("", "", "ReplicaSet", "spec/selector/matchLabels", true));
    specs.push(f("", "", "DaemonSet", "spec/selector/matchLabels", true));
    specs.push(f(
        "apps",
        "",
        "StatefulSet",
        "spec/selector/matchLabels",
        true,
    ));
    specs.extend(APPS_AFFINITY.map(|p| f("apps", "", "StatefulSet", p, false)));
    specs.extend([
        f("batch", "", "Job", "spec/selector/matchLabels", false),
        f(
            "batch",
            "",
            "CronJob",
            "spec/jobTemplate/spec/selector/matchLabels",
            false,
        ),
        f(
            "policy",
            "",
            "PodDisruptionBudget",
            "spec/selector/matchLabels",
            false,
        ),
        f(
            "networking.k8s.io",
            "",
            "NetworkPolicy",
            "spec/podSelector/matchLabels",
            false,
        ),
        f(
            "networking.k8s.io",
            "",
            "NetworkPolicy",
            "spec/ingress/from/podSelector/matchLabels",
            false,
        ),
        f(
            "networking.k8s.io",
            "",
            "NetworkPolicy",
            "spec/egress/to/podSelector/matchLabels",
            false,
        ),
        // metadata labels
        f("", "", "", "metadata/labels", true),
        f(
            "",
            "v1",
            "ReplicationController",
            "spec/template/metadata/labels",
            true,
        ),
        f("", "", "Deployment", "spec/template/metadata/labels", true),
        f("", "", "ReplicaSet", "spec/template/metadata/labels", true),
        f("", "", "DaemonSet", "spec/template/metadata/labels", true),
        f(
            "apps",
            "",
            "StatefulSet",
            "spec/template/metadata/labels",
            true,
        ),
        f(
            "apps",
            "",
            "StatefulSet",
            "spec/volumeClaimTemplates[]/metadata/labels",
            true,
        ),
        f("batch", "", "Job", "spec/template/metadata/labels", true),
        f(
            "batch",
            "",
            "CronJob",
            "spec/jobTemplate/metadata/labels",
            true,
        ),
        f(
            "batch",
            "",
            "CronJob",
            "spec/jobTemplate/spec/template/metadata/labels",
            true,
        ),
    ]);
    specs
}

struct Config {
    labels: Vec<(String, String)>,
    field_specs: Vec<FieldSpec>,
}

fn parse_config(fc: Option<&Node>) -> Result<Config, String> {
    let fc = legacy::config_or_placeholder(fc);
    let typed = ["SetLabels", "SetLabelConfig"]
        .iter()
        .any(|k| legacy::valid_gvk(&fc, config::FN_CONFIG_API_VERSION, k));
    let (labels, mut field_specs) = if legacy::valid_gvk(&fc, "v1", "ConfigMap") {
        (config::kyaml_data_map(&fc), Vec::new())
    } else if typed {
        if let Some(e) = plugin::plugin_error(&fc, &PLUGIN) {
            return Err(e);
        }
        let present = |k: &str| fc.get(k).filter(|n| !n.is_null());
        let (legacy_specs, additional) = (present("fieldSpecs"), present("additionalLabelFields"));
        if legacy_specs.is_some() && additional.is_some() {
            return Err(
                "fieldSpecs has been deprecated, please rename it to additionalLabelFields"
                    .to_string(),
            );
        }
        let specs = FieldSpec::list_from(additional.or(legacy_specs)).map_err(|e| e.to_string())?;
        (config::string_map(&fc, "labels"), specs)
    } else {
        return Err("function config must be a ConfigMap or SetLabels".to_string());
    };
    if labels.is_empty() {
        return Err("input label list cannot be empty".to_string());
    }
    field_specs.extend(default_field_specs());
    Ok(Config {
        labels,
        field_specs,
    })
}

/// Run the release's function.
pub(super) fn run(list: &mut ResourceList) -> Result<(), FnError> {
    let cfg = legacy::configure(list, parse_config)?;
    let mut labels = cfg.labels;
    labels.sort();
    labels.dedup_by(|a, b| a.0 == b.0);
    for o in list.items.iter_mut() {
        for (key, value) in &labels {
            for fs in &cfg.field_specs {
                let r = fieldspec::apply(o, fs, Create::Mapping, &mut |node, path| {
                    if !node.is_mapping() {
                        return Err(FnError::Failed(format!(
                            "wrong node kind: expected MappingNode at {}",
                            path.join(".")
                        )));
                    }
                    meta::sdk_set_string(node, key, value);
                    Ok(())
                });
                if let Err(e) = r {
                    let message = format!("failed to run function: failed to run transformer: {e}");
                    return Err(legacy::fail(list, message));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_at(
        tag: &str,
        input: &str,
        config: Option<&str>,
    ) -> (String, ResourceList, Option<FnError>) {
        crate::common::testing::run_as(&format!("set-labels:{tag}"), run, input, config)
    }

    #[test]
    fn creates_selectors_and_templates_silently() {
        let input = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
spec:
  replicas: 3
---
apiVersion: custom.io/v1
kind: Custom
metadata:
  name: c
";
        let cfg = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  tier: db\n  app: backend\n";
        let (out, list, err) = run_at("v0.1.5", input, Some(cfg));
        assert!(err.is_none() && list.results.is_empty());
        assert_eq!(
            out,
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  labels:\n    app: backend\n    tier: db\nspec:\n  replicas: 3\n  selector:\n    matchLabels:\n      app: backend\n      tier: db\n  template:\n    metadata:\n      labels:\n        app: backend\n        tier: db\n---\napiVersion: custom.io/v1\nkind: Custom\nmetadata:\n  name: c\n  labels:\n    app: backend\n    tier: db\n"
        );
    }

    #[test]
    fn config_errors() {
        for (config, message) in [
            (
                None,
                "failed to configure function: input label list cannot be empty",
            ),
            (
                Some("apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n"),
                "failed to configure function: function config must be a ConfigMap or SetLabels",
            ),
            (
                Some(
                    "apiVersion: fn.kpt.dev/v1alpha1\nkind: SetLabelConfig\nmetadata:\n  name: s\nlabels: {a: b}\nfieldSpecs: []\nadditionalLabelFields: []\n",
                ),
                "failed to configure function: fieldSpecs has been deprecated, please rename it to additionalLabelFields",
            ),
        ] {
            let (_, list, err) = run_at(
                "v0.1.4",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: m\n",
                config,
            );
            assert_eq!(list.results.len(), 1, "{config:?}");
            assert_eq!(list.results[0].message, message);
            assert_eq!(
                err.map(|e| e.to_string()).as_deref(),
                Some(format!("[error] /// : {message}").as_str())
            );
        }
        // A wrongly typed typed config fails in plugin.Config, quoting it.
        let (_, list, _) = run_at(
            "v0.1.5",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: m\n",
            Some("apiVersion: fn.kpt.dev/v1alpha1\nkind: SetLabels\nlabels: [a]\n"),
        );
        assert_eq!(
            list.results[0].message,
            "failed to configure function: failed to unmarshal config \"apiVersion: \
             fn.kpt.dev/v1alpha1\\nkind: SetLabels\\nlabels: [a]\\n\": error unmarshaling JSON: \
             while decoding JSON: json: cannot unmarshal array into Go struct field plugin.labels \
             of type map[string]string"
        );
        let at = |tag: &str| crate::image_tag::with(&format!("set-labels:{tag}"), applies);
        assert!(at("v0.1.5") && !at("v0.2.0") && !at("latest"));
    }
}
