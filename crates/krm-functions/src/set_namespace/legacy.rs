//! set-namespace releases v0.1 and v0.2, which wrapped kustomize's namespace
//! transformer: every resource whose kind is not one of kustomize's
//! cluster-scoped kinds gets `metadata.namespace` (custom resources and the
//! Kptfile included, local-config resources too), (Cluster)RoleBinding
//! subjects named `default` get the namespace, v0.2 also sets it on subjects
//! that name a ServiceAccount of the package, and `fieldSpecs` /
//! `additionalNamespaceFields` name further fields (created only when the
//! spec says `create`). Nothing is reported on success. The config is a
//! ConfigMap's `data.namespace` or the typed `SetNamespace` (legacy
//! `SetNamespaceConfig`); configuration errors fail the function in the 2021
//! framework's way (see [`crate::common::legacy`]).

use std::collections::HashSet;

use kpt::resource_list::ResourceList;
use kpt::yaml::Node;

use crate::FnError;
use crate::common::fieldspec::{self, Create, FieldSpec};
use crate::common::plugin::{self, Plugin};
use crate::common::{config, legacy, meta};

/// Whether the running image is one of these releases.
pub(super) fn applies() -> bool {
    crate::image_tag::is_release(0, 1) || crate::image_tag::is_release(0, 2)
}

/// kustomize's `notNamespaceableKinds`: kinds that never get a namespace.
const CLUSTER_SCOPED: &[&str] = &[
    "APIService",
    "CSIDriver",
    "CSINode",
    "CertificateSigningRequest",
    "ClusterRole",
    "ClusterRoleBinding",
    "ComponentStatus",
    "CustomResourceDefinition",
    "MutatingWebhookConfiguration",
    "Namespace",
    "Node",
    "PersistentVolume",
    "PodSecurityPolicy",
    "PriorityClass",
    "RuntimeClass",
    "SelfSubjectAccessReview",
    "SelfSubjectRulesReview",
    "StorageClass",
    "SubjectAccessReview",
    "TokenReview",
    "ValidatingWebhookConfiguration",
    "VolumeAttachment",
];

/// The releases' kustomize `plugin` struct.
static PLUGIN: Plugin = Plugin {
    string_map: None,
    strings: &["namespace"],
    field_specs: &["fieldSpecs", "additionalNamespaceFields"],
};

struct Config {
    namespace: String,
    field_specs: Vec<FieldSpec>,
}

fn parse_config(fc: Option<&Node>) -> Result<Config, String> {
    let fc = legacy::config_or_placeholder(fc);
    let typed = ["SetNamespace", "SetNamespaceConfig"]
        .iter()
        .any(|k| legacy::valid_gvk(&fc, config::FN_CONFIG_API_VERSION, k));
    let (namespace, field_specs) = if legacy::valid_gvk(&fc, "v1", "ConfigMap") {
        let data = config::kyaml_data_map(&fc);
        let ns = data
            .iter()
            .rev()
            .find(|(k, _)| k == "namespace")
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        (ns, Vec::new())
    } else if typed {
        if let Some(e) = plugin::plugin_error(&fc, &PLUGIN) {
            return Err(e);
        }
        let present = |k: &str| fc.get(k).filter(|n| !n.is_null());
        let (legacy_specs, additional) =
            (present("fieldSpecs"), present("additionalNamespaceFields"));
        if legacy_specs.is_some() && additional.is_some() {
            // (sic: the release's message names the labels field)
            return Err(
                "`fieldSpecs` has been deprecated, please rename it to `additionalLabelFields`"
                    .to_string(),
            );
        }
        let specs = FieldSpec::list_from(additional.or(legacy_specs)).map_err(|e| e.to_string())?;
        (meta::str_at(&fc, &["namespace"]).to_string(), specs)
    } else {
        return Err("function config must be a ConfigMap or SetNamespace".to_string());
    };
    if namespace.is_empty() {
        return Err("input namespace cannot be empty".to_string());
    }
    Ok(Config {
        namespace,
        field_specs,
    })
}

/// Run the release's function.
pub(super) fn run(list: &mut ResourceList) -> Result<(), FnError> {
    let cfg = legacy::configure(list, parse_config)?;
    // v0.2's ServiceAccount lookup, from the list as it came in.
    let accounts: HashSet<String> = if crate::image_tag::is_release(0, 2) {
        list.items
            .iter()
            .filter(|o| meta::kind(o) == "ServiceAccount")
            .map(|o| meta::name(o).to_string())
            .collect()
    } else {
        HashSet::new()
    };
    // Like every release's main.go, kustomize's default `namespace` specs
    // follow the user's; the metadata.namespace and subjects specs are the
    // hard-coded hacks'.
    let defaults = default_specs();
    let specs: Vec<&FieldSpec> = cfg
        .field_specs
        .iter()
        .chain(defaults.iter())
        .filter(|fs| {
            fs.path != "metadata/namespace"
                && !(fs.path == "subjects"
                    && matches!(fs.kind.as_str(), "RoleBinding" | "ClusterRoleBinding"))
        })
        .collect();
    let ns = cfg.namespace.as_str();
    for o in list.items.iter_mut() {
        if o.is_null() || (o.is_mapping() && o.entries().is_empty()) {
            continue;
        }
        let kind = meta::kind(o).to_string();
        if !CLUSTER_SCOPED.contains(&kind.as_str()) {
            meta::sdk_set_string(o.ensure_mapping(&["metadata"]), "namespace", ns);
        }
        if matches!(kind.as_str(), "RoleBinding" | "ClusterRoleBinding") {
            set_subjects(o, ns, &accounts);
        }
        for fs in &specs {
            let create = if fs.create {
                Create::Mapping
            } else {
                Create::Never
            };
            let r = fieldspec::apply(o, fs, create, &mut |node, _| {
                set_scalar(node, ns);
                Ok(())
            });
            if let Err(e) = r {
                let message = format!("failed to run function: failed to run transformer: {e}");
                return Err(legacy::fail(list, message));
            }
        }
    }
    Ok(())
}

/// kustomize's `builtinpluginconsts` `namespace` field specs of the
/// releases' time (`getDefaultConfig`): besides the two the hacks implement,
/// an APIService's service namespace (created) and a CRD's conversion
/// webhook service namespace (updated only).
fn default_specs() -> Vec<FieldSpec> {
    vec![
        FieldSpec::new("", "", "", "metadata/namespace", true),
        FieldSpec::new("", "", "RoleBinding", "subjects", false),
        FieldSpec::new("", "", "ClusterRoleBinding", "subjects", false),
        FieldSpec::new(
            "apiregistration.k8s.io",
            "",
            "APIService",
            "spec/service/namespace",
            true,
        ),
        FieldSpec::new(
            "apiextensions.k8s.io",
            "",
            "CustomResourceDefinition",
            "spec/conversion/webhook/clientConfig/service/namespace",
            false,
        ),
    ]
}

/// kustomize's subject hack (name `default`) and v0.2's ServiceAccount one.
fn set_subjects(o: &mut Node, ns: &str, accounts: &HashSet<String>) {
    let Some(subjects) = o.get_mut("subjects").and_then(Node::items_mut) else {
        return;
    };
    for s in subjects.iter_mut().filter(|s| s.is_mapping()) {
        let name = meta::str_at(s, &["name"]).to_string();
        let is_default = s.get("name").is_some_and(|n| n.as_str() == Some("default"));
        let is_account = meta::str_at(s, &["kind"]) == "ServiceAccount" && accounts.contains(&name);
        if is_default || is_account {
            meta::sdk_set_string(s, "namespace", ns);
        }
    }
}

/// kustomize `SetScalar` at a field spec's target (a field the walk just
/// created arrives as an empty mapping and becomes the scalar).
fn set_scalar(node: &mut Node, ns: &str) {
    if node.is_scalar() || (node.is_mapping() && node.entries().is_empty()) {
        let (head, line, foot) = (
            node.head_comment.clone(),
            node.line_comment.clone(),
            node.foot_comment.clone(),
        );
        *node = Node::string(ns);
        node.head_comment = head;
        node.line_comment = line;
        node.foot_comment = foot;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_at(
        tag: &str,
        input: &str,
        config: Option<&str>,
    ) -> (String, ResourceList, Option<FnError>) {
        crate::common::testing::run_as(&format!("set-namespace:{tag}"), run, input, config)
    }

    const CM: &str =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  namespace: prod\n";

    #[test]
    fn every_namespaceable_kind_gets_the_namespace() {
        let input = "\
apiVersion: custom.io/v1
kind: Custom
metadata:
  name: c
---
apiVersion: v1
kind: Namespace
metadata:
  name: old
---
apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: k
  annotations:
    config.kubernetes.io/local-config: \"true\"
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: b
subjects:
- kind: ServiceAccount
  name: default
- kind: ServiceAccount
  name: sa
- kind: User
  name: u
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: sa
";
        let (out, list, err) = run_at("v0.1.3", input, Some(CM));
        assert!(err.is_none());
        assert!(list.results.is_empty(), "nothing is reported");
        let docs: Vec<&str> = out.split("---\n").collect();
        assert!(docs[0].contains("namespace: prod"), "custom resource");
        assert!(
            !docs[1].contains("namespace"),
            "Namespace is cluster-scoped"
        );
        assert!(docs[2].contains("namespace: prod"), "Kptfile, local config");
        assert!(
            !docs[3].contains("metadata:\n  name: b\n  namespace"),
            "CRB itself"
        );
        assert_eq!(
            docs[3].matches("namespace: prod").count(),
            1,
            "only `default`: {out}"
        );
        let (out, _, _) = run_at("v0.2.0", input, Some(CM));
        let docs: Vec<&str> = out.split("---\n").collect();
        assert_eq!(
            docs[3].matches("namespace: prod").count(),
            2,
            "and the package's SA"
        );
    }

    #[test]
    fn config_errors_fail_like_the_2021_framework() {
        let cases = [
            (
                None,
                "failed to configure function: input namespace cannot be empty",
            ),
            (
                Some("apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n"),
                "failed to configure function: function config must be a ConfigMap or SetNamespace",
            ),
            (
                Some("apiVersion: fn.kpt.dev/v1alpha1\nkind: SetNamespace\nmetadata:\n  name: s\n"),
                "failed to configure function: input namespace cannot be empty",
            ),
            (
                Some(
                    "apiVersion: fn.kpt.dev/v1alpha1\nkind: SetNamespaceConfig\nmetadata:\n  name: s\nnamespace: x\nfieldSpecs: []\nadditionalNamespaceFields: []\n",
                ),
                "failed to configure function: `fieldSpecs` has been deprecated, please rename it to `additionalLabelFields`",
            ),
        ];
        for (config, message) in cases {
            let (_, list, err) = run_at("v0.1.3", CM, config);
            assert_eq!(list.results.len(), 1, "{config:?}");
            assert_eq!(list.results[0].message, message);
            assert_eq!(
                err.map(|e| e.to_string()).as_deref(),
                Some(format!("[error] /// : {message}").as_str())
            );
        }
    }

    #[test]
    fn field_specs_create_only_when_asked() {
        let cfg = "apiVersion: fn.kpt.dev/v1alpha1\nkind: SetNamespace\nmetadata:\n  name: s\nnamespace: prod\nadditionalNamespaceFields:\n- kind: Custom\n  path: spec/ns\n  create: true\n- kind: Custom\n  path: spec/other\n";
        let (out, _, err) = run_at(
            "v0.2",
            "apiVersion: custom.io/v1\nkind: Custom\nmetadata:\n  name: c\nspec:\n  x: 1\n",
            Some(cfg),
        );
        assert!(err.is_none());
        assert!(
            out.contains("  ns: prod") && !out.contains("other"),
            "{out}"
        );
        // A spec that runs into a scalar fails the run with one error result.
        let through_scalar = "apiVersion: fn.kpt.dev/v1alpha1\nkind: SetNamespace\nmetadata:\n  name: s\nnamespace: prod\nfieldSpecs:\n- kind: Custom\n  path: spec/x/ns\n";
        let (_, list, err) = run_at(
            "v0.2",
            "apiVersion: custom.io/v1\nkind: Custom\nmetadata:\n  name: c\nspec:\n  x: 1\n",
            Some(through_scalar),
        );
        assert_eq!(list.results.len(), 1);
        let text = err.map(|e| e.to_string()).unwrap_or_default();
        assert!(
            text.starts_with("[error] /// : failed to run function: failed to run transformer: "),
            "{text}"
        );
    }

    #[test]
    fn only_these_releases() {
        let at = |tag: &str| crate::image_tag::with(&format!("set-namespace:{tag}"), applies);
        assert!(at("v0.1.3") && at("v0.2.0") && at("v0.1"));
        assert!(!at("v0.3.4") && !at("v0.4.1") && !at("latest") && !at(""));
    }

    #[test]
    fn default_specs_apiservice_service_created_crd_webhook_updated() {
        let input = "\
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1.x
spec:
  group: x
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: c
spec:
  conversion:
    strategy: Webhook
    webhook:
      clientConfig:
        service:
          name: s
          namespace: old
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: none
spec:
  conversion:
    strategy: None
";
        for tag in ["v0.1.3", "v0.2.0"] {
            let (out, list, err) = run_at(tag, input, Some(CM));
            assert!(err.is_none() && list.results.is_empty());
            assert!(
                out.contains("  group: x\n  service:\n    namespace: prod\n"),
                "{out}"
            );
            assert!(out.contains("          name: s\n          namespace: prod\n"));
            assert!(
                out.ends_with("spec:\n  conversion:\n    strategy: None\n"),
                "not created: {out}"
            );
            assert!(!out.contains("name: v1.x\n  namespace"), "cluster-scoped");
        }
    }
}
