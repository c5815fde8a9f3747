//! Which built-in (apiVersion, kind) pairs are namespace-scoped.
//!
//! The catalog SDK decides scope from kyaml's precomputed table and, for kinds
//! it does not know, from whether `metadata.namespace` is present. The table is
//! keyed by the exact apiVersion, so `apps/v1beta2 Deployment` is "unknown".

use kpt::yaml::Node;

use super::meta;

/// `(apiVersion, kind, namespaced)` as in kyaml's `precomputedIsNamespaceScoped`.
const TABLE: &[(&str, &str, bool)] = &[
    (
        "admissionregistration.k8s.io/v1",
        "MutatingWebhookConfiguration",
        false,
    ),
    (
        "admissionregistration.k8s.io/v1",
        "ValidatingWebhookConfiguration",
        false,
    ),
    (
        "admissionregistration.k8s.io/v1beta1",
        "MutatingWebhookConfiguration",
        false,
    ),
    (
        "admissionregistration.k8s.io/v1beta1",
        "ValidatingWebhookConfiguration",
        false,
    ),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition", false),
    (
        "apiextensions.k8s.io/v1beta1",
        "CustomResourceDefinition",
        false,
    ),
    ("apiregistration.k8s.io/v1", "APIService", false),
    ("apiregistration.k8s.io/v1beta1", "APIService", false),
    ("apps/v1", "ControllerRevision", true),
    ("apps/v1", "DaemonSet", true),
    ("apps/v1", "Deployment", true),
    ("apps/v1", "ReplicaSet", true),
    ("apps/v1", "StatefulSet", true),
    ("autoscaling/v1", "HorizontalPodAutoscaler", true),
    ("autoscaling/v1", "Scale", true),
    ("autoscaling/v2beta1", "HorizontalPodAutoscaler", true),
    ("autoscaling/v2beta2", "HorizontalPodAutoscaler", true),
    ("batch/v1", "CronJob", true),
    ("batch/v1", "Job", true),
    ("batch/v1beta1", "CronJob", true),
    ("certificates.k8s.io/v1", "CertificateSigningRequest", false),
    (
        "certificates.k8s.io/v1beta1",
        "CertificateSigningRequest",
        false,
    ),
    ("coordination.k8s.io/v1", "Lease", true),
    ("coordination.k8s.io/v1beta1", "Lease", true),
    ("discovery.k8s.io/v1", "EndpointSlice", true),
    ("discovery.k8s.io/v1beta1", "EndpointSlice", true),
    ("events.k8s.io/v1", "Event", true),
    ("events.k8s.io/v1beta1", "Event", true),
    ("extensions/v1beta1", "Ingress", true),
    ("flowcontrol.apiserver.k8s.io/v1beta1", "FlowSchema", false),
    (
        "flowcontrol.apiserver.k8s.io/v1beta1",
        "PriorityLevelConfiguration",
        false,
    ),
    ("networking.k8s.io/v1", "Ingress", true),
    ("networking.k8s.io/v1", "IngressClass", false),
    ("networking.k8s.io/v1", "NetworkPolicy", true),
    ("networking.k8s.io/v1beta1", "Ingress", true),
    ("networking.k8s.io/v1beta1", "IngressClass", false),
    ("node.k8s.io/v1", "RuntimeClass", false),
    ("node.k8s.io/v1beta1", "RuntimeClass", false),
    ("policy/v1", "PodDisruptionBudget", true),
    ("policy/v1beta1", "PodDisruptionBudget", true),
    ("policy/v1beta1", "PodSecurityPolicy", false),
    ("rbac.authorization.k8s.io/v1", "ClusterRole", false),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", false),
    ("rbac.authorization.k8s.io/v1", "Role", true),
    ("rbac.authorization.k8s.io/v1", "RoleBinding", true),
    ("rbac.authorization.k8s.io/v1beta1", "ClusterRole", false),
    (
        "rbac.authorization.k8s.io/v1beta1",
        "ClusterRoleBinding",
        false,
    ),
    ("rbac.authorization.k8s.io/v1beta1", "Role", true),
    ("rbac.authorization.k8s.io/v1beta1", "RoleBinding", true),
    ("scheduling.k8s.io/v1", "PriorityClass", false),
    ("scheduling.k8s.io/v1beta1", "PriorityClass", false),
    ("storage.k8s.io/v1", "CSIDriver", false),
    ("storage.k8s.io/v1", "CSINode", false),
    ("storage.k8s.io/v1", "StorageClass", false),
    ("storage.k8s.io/v1", "VolumeAttachment", false),
    ("storage.k8s.io/v1beta1", "CSIDriver", false),
    ("storage.k8s.io/v1beta1", "CSINode", false),
    ("storage.k8s.io/v1beta1", "CSIStorageCapacity", true),
    ("storage.k8s.io/v1beta1", "StorageClass", false),
    ("storage.k8s.io/v1beta1", "VolumeAttachment", false),
    ("v1", "ComponentStatus", false),
    ("v1", "ConfigMap", true),
    ("v1", "Endpoints", true),
    ("v1", "Event", true),
    ("v1", "LimitRange", true),
    ("v1", "Namespace", false),
    ("v1", "Node", false),
    ("v1", "NodeProxyOptions", false),
    ("v1", "PersistentVolume", false),
    ("v1", "PersistentVolumeClaim", true),
    ("v1", "Pod", true),
    ("v1", "PodAttachOptions", true),
    ("v1", "PodExecOptions", true),
    ("v1", "PodPortForwardOptions", true),
    ("v1", "PodProxyOptions", true),
    ("v1", "PodTemplate", true),
    ("v1", "ReplicationController", true),
    ("v1", "ResourceQuota", true),
    ("v1", "Secret", true),
    ("v1", "Service", true),
    ("v1", "ServiceAccount", true),
    ("v1", "ServiceProxyOptions", true),
];

/// Scope of a built-in type, `None` when the table does not know it.
pub fn builtin_scope(api_version: &str, kind: &str) -> Option<bool> {
    TABLE
        .iter()
        .find(|(a, k, _)| *a == api_version && *k == kind)
        .map(|(_, _, ns)| *ns)
}

/// SDK `IsNamespaceScoped`: the table, else "has a `metadata.namespace` field".
pub fn is_namespace_scoped(node: &Node) -> bool {
    builtin_scope(meta::api_version(node), meta::kind(node))
        .unwrap_or_else(|| meta::has_namespace(node))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_exact_on_api_version() {
        assert_eq!(builtin_scope("apps/v1", "Deployment"), Some(true));
        assert_eq!(builtin_scope("apps/v1beta2", "Deployment"), None);
        assert_eq!(builtin_scope("v1", "Namespace"), Some(false));
    }
}
