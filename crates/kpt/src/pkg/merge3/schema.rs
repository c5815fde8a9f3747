//! Which lists are associative, and by which keys: the subset of the built-in
//! Kubernetes OpenAPI that carries `x-kubernetes-patch-strategy: merge`, plus the
//! schemas of CustomResourceDefinitions found in the packages being merged.
//!
//! kyaml walks a full OpenAPI document; only the patch extensions matter to the
//! merge, so the built-in part is a table of field paths (relative to a pod spec or
//! to the resource root) with their merge keys.

use std::collections::HashMap;

use crate::yaml::Node;

/// kyaml `AssociativeSequenceKeys`, tried in order when inferring a merge key.
const INFER_KEYS: &[&str] = &[
    "mountPath",
    "devicePath",
    "ip",
    "type",
    "topologyKey",
    "name",
    "containerPort",
];

/// Merge keys of pod-spec lists (path relative to the pod spec; `[]` = element).
const POD_SPEC: &[(&str, &[&str])] = &[
    ("containers", &["name"]),
    ("initContainers", &["name"]),
    ("ephemeralContainers", &["name"]),
    ("volumes", &["name"]),
    ("imagePullSecrets", &["name"]),
    ("hostAliases", &["ip"]),
    (
        "topologySpreadConstraints",
        &["topologyKey", "whenUnsatisfiable"],
    ),
    ("schedulingGates", &["name"]),
    ("resourceClaims", &["name"]),
];

/// Merge keys of container lists (relative to a container).
const CONTAINER: &[(&str, &[&str])] = &[
    ("env", &["name"]),
    ("ports", &["containerPort", "protocol"]),
    ("volumeMounts", &["mountPath"]),
    ("volumeDevices", &["devicePath"]),
    ("resizePolicy", &["resourceName"]),
];

/// Where the pod spec lives for workload kinds (core and apps/batch groups).
fn pod_spec_prefix(group: &str, kind: &str) -> Option<&'static str> {
    match (group, kind) {
        ("", "Pod") => Some("spec"),
        ("", "PodTemplate") => Some("template.spec"),
        ("", "ReplicationController")
        | ("apps", "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet")
        | ("batch", "Job") => Some("spec.template.spec"),
        ("batch", "CronJob") => Some("spec.jobTemplate.spec.template.spec"),
        _ => None,
    }
}

/// Groups whose types come from the built-in Kubernetes schema.
fn is_builtin_group(group: &str) -> bool {
    !group.contains('.') || group.ends_with(".k8s.io")
}

/// CRD schemas registered for a merge, keyed by group, version and kind.
#[derive(Debug, Default, Clone)]
pub struct SchemaRegistry {
    crds: HashMap<(String, String, String), Node>,
}

impl SchemaRegistry {
    /// Register every `spec.versions[].schema.openAPIV3Schema` of a CRD.
    pub fn add_crd(&mut self, crd: &Node) {
        let group = crd
            .get_path(&["spec", "group"])
            .and_then(Node::as_str)
            .unwrap_or_default();
        let kind = crd
            .get_path(&["spec", "names", "kind"])
            .and_then(Node::as_str)
            .unwrap_or_default();
        let Some(versions) = crd.get_path(&["spec", "versions"]) else {
            return;
        };
        for v in versions.items() {
            let name = v.get("name").and_then(Node::as_str).unwrap_or_default();
            if let Some(s) = v.get_path(&["schema", "openAPIV3Schema"]) {
                self.crds.insert(
                    (group.to_string(), name.to_string(), kind.to_string()),
                    s.clone(),
                );
            }
        }
    }

    /// Register the CRDs among `resources`.
    pub fn add_crds_from<'a>(&mut self, resources: impl IntoIterator<Item = &'a Node>) {
        for r in resources {
            if r.get("kind").and_then(Node::as_str) == Some("CustomResourceDefinition") {
                self.add_crd(r);
            }
        }
    }

    /// The root schema of a resource, from its apiVersion and kind.
    pub(crate) fn root(&self, resource: &Node) -> Schema<'_> {
        let api = resource
            .get("apiVersion")
            .and_then(Node::as_str)
            .unwrap_or_default();
        let kind = resource
            .get("kind")
            .and_then(Node::as_str)
            .unwrap_or_default();
        if api.is_empty() || kind.is_empty() {
            return Schema::None;
        }
        let (group, version) = match api.rsplit_once('/') {
            Some((g, v)) => (g, v),
            None => ("", api),
        };
        if let Some(s) = self
            .crds
            .get(&(group.to_string(), version.to_string(), kind.to_string()))
        {
            return Schema::Crd(s);
        }
        if is_builtin_group(group) {
            return Schema::Builtin {
                pod: pod_spec_prefix(group, kind),
                service: group.is_empty() && kind == "Service",
                path: String::new(),
            };
        }
        Schema::None
    }
}

/// A position in a schema while walking.
#[derive(Debug, Clone)]
pub(crate) enum Schema<'a> {
    None,
    /// Built-in type: the pod-spec prefix of its kind, and the dotted path so far.
    Builtin {
        pod: Option<&'static str>,
        service: bool,
        path: String,
    },
    Crd(&'a Node),
}

impl<'a> Schema<'a> {
    pub(crate) fn field(&self, key: &str) -> Schema<'a> {
        match self {
            Schema::None => Schema::None,
            Schema::Builtin { pod, service, path } => Schema::Builtin {
                pod: *pod,
                service: *service,
                path: if path.is_empty() {
                    key.to_string()
                } else {
                    format!("{path}.{key}")
                },
            },
            Schema::Crd(n) => n
                .get_path(&["properties", key])
                .map_or(Schema::None, Schema::Crd),
        }
    }

    pub(crate) fn elements(&self) -> Schema<'a> {
        match self {
            Schema::None => Schema::None,
            Schema::Builtin { pod, service, path } => Schema::Builtin {
                pod: *pod,
                service: *service,
                path: format!("{path}[]"),
            },
            Schema::Crd(n) => n.get("items").map_or(Schema::None, Schema::Crd),
        }
    }

    /// The schema's merge strategy and keys, if it declares `merge`.
    fn patch_keys(&self) -> Option<Vec<String>> {
        match self {
            Schema::None => None,
            Schema::Builtin { pod, service, path } => builtin_keys(*pod, *service, path),
            Schema::Crd(n) => {
                let strategy = n.get("x-kubernetes-patch-strategy")?.as_str()?;
                if !strategy.split(',').any(|s| s == "merge") {
                    return None;
                }
                if let Some(list) = n.get("x-kubernetes-list-map-keys")
                    && list.is_sequence()
                {
                    return Some(
                        list.items()
                            .iter()
                            .filter_map(Node::as_str)
                            // trim: the flow parser keeps a trailing space in `[ name ]`
                            .map(|k| k.trim().to_string())
                            .collect(),
                    );
                }
                Some(
                    n.get("x-kubernetes-patch-merge-key")
                        .and_then(Node::as_str)
                        .map(|k| vec![k.to_string()])
                        .unwrap_or_default(),
                )
            }
        }
    }

    /// `Some(keys)` when the list at this position merges by key (empty keys: a
    /// list of scalars merged as a set); `None` when it is replaced wholesale.
    pub(crate) fn list_keys(
        &self,
        sources: [Option<&Node>; 3],
        infer: bool,
    ) -> Option<Vec<String>> {
        if !matches!(self, Schema::None) {
            return self.patch_keys();
        }
        if !infer {
            return None;
        }
        let mut key: Option<&str> = None;
        for s in sources.into_iter().flatten() {
            if s.items().is_empty() {
                continue;
            }
            let k = associative_key(s)?;
            if key.is_some_and(|x| x != k) {
                return None;
            }
            key = Some(k);
        }
        key.map(|k| vec![k.to_string()])
    }
}

/// kyaml `GetAssociativeKey`: the first inference key every element has.
fn associative_key(seq: &Node) -> Option<&'static str> {
    INFER_KEYS.iter().copied().find(|k| {
        seq.items()
            .iter()
            .all(|e| e.is_mapping() && e.get(k).is_some())
    })
}

fn builtin_keys(pod: Option<&str>, service: bool, path: &str) -> Option<Vec<String>> {
    let own = |keys: &[&str]| Some(keys.iter().map(|k| (*k).to_string()).collect());
    if path.ends_with("metadata.finalizers") {
        return Some(Vec::new());
    }
    if path.ends_with("metadata.ownerReferences") {
        return own(&["uid"]);
    }
    if path == "status.conditions" {
        return own(&["type"]);
    }
    if service && path == "spec.ports" {
        return own(&["port", "protocol"]);
    }
    let rel = pod.and_then(|p| path.strip_prefix(p)?.strip_prefix('.'))?;
    if let Some((_, keys)) = POD_SPEC.iter().find(|(p, _)| *p == rel) {
        return own(keys);
    }
    for c in ["containers[]", "initContainers[]", "ephemeralContainers[]"] {
        if let Some(field) = rel.strip_prefix(c).and_then(|r| r.strip_prefix('.'))
            && let Some((_, keys)) = CONTAINER.iter().find(|(p, _)| *p == field)
        {
            return own(keys);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse_one;

    #[test]
    fn crd_schema_gives_list_keys() {
        let crd = parse_one(
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec:\n  group: g.io\n  names:\n    kind: F\n  versions:\n  - name: v1\n    schema:\n      openAPIV3Schema:\n        properties:\n          spec:\n            properties:\n              l:\n                x-kubernetes-list-map-keys: [ name ]\n                x-kubernetes-patch-strategy: merge\n",
        )
        .expect("crd");
        let mut r = SchemaRegistry::default();
        r.add_crds_from([&crd]);
        let res = parse_one("apiVersion: g.io/v1\nkind: F\n").expect("res");
        let s = r.root(&res).field("spec").field("l");
        assert_eq!(
            s.list_keys([None, None, None], false),
            Some(vec!["name".to_string()])
        );
        let dep = parse_one("apiVersion: apps/v1\nkind: Deployment\n").expect("dep");
        let c = r
            .root(&dep)
            .field("spec")
            .field("template")
            .field("spec")
            .field("containers");
        assert_eq!(
            c.list_keys([None, None, None], false),
            Some(vec!["name".to_string()])
        );
        let env = c.elements().field("env");
        assert_eq!(
            env.list_keys([None, None, None], false),
            Some(vec!["name".to_string()])
        );
    }
}
