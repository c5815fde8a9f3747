//! Name back-references: after resources are renamed, fields of other
//! resources that named them are updated (kustomize's name-reference
//! transformer). This covers kustomize's most used reference kinds: config
//! maps, secrets, service accounts, persistent volume claims, services,
//! (cluster) roles and scale targets.

use kpt::yaml::Node;

use crate::common::{meta, scope};

/// One renamed resource.
pub struct Rename {
    kind: String,
    /// `None` for cluster-scoped resources.
    namespace: Option<String>,
    old: String,
    new: String,
}

impl Rename {
    pub fn new(o: &Node, old: &str, new: &str) -> Rename {
        let namespace = scope::is_namespace_scoped(o).then(|| {
            let ns = meta::namespace(o);
            if ns.is_empty() {
                "default".to_string()
            } else {
                ns.to_string()
            }
        });
        Rename {
            kind: meta::kind(o).to_string(),
            namespace,
            old: old.to_string(),
            new: new.to_string(),
        }
    }
}

/// Pod spec location per workload kind.
fn pod_spec_path(kind: &str) -> Option<&'static [&'static str]> {
    match kind {
        "Pod" => Some(&["spec"]),
        "Deployment"
        | "ReplicaSet"
        | "DaemonSet"
        | "StatefulSet"
        | "Job"
        | "ReplicationController" => Some(&["spec", "template", "spec"]),
        "CronJob" => Some(&["spec", "jobTemplate", "spec", "template", "spec"]),
        _ => None,
    }
}

/// A reference slot: the referenced kind and the field holding the name.
type Refs<'a> = Vec<(&'static str, &'a mut Node, &'static str)>;

fn children<'a>(node: &'a mut Node, key: &str) -> impl Iterator<Item = &'a mut Node> {
    node.get_mut(key)
        .and_then(Node::items_mut)
        .into_iter()
        .flat_map(|v| v.iter_mut())
        .filter(|n| n.is_mapping())
}

fn map<'a>(node: &'a mut Node, key: &str) -> Option<&'a mut Node> {
    node.get_mut(key).filter(|n| n.is_mapping())
}

fn pod_refs<'a>(spec: &'a mut Node, out: &mut Refs<'a>) {
    let mut rest: Vec<(&str, &'a mut Node)> = Vec::new();
    for (k, v) in spec.entries_mut().into_iter().flatten() {
        if let Some(key @ ("containers" | "initContainers" | "volumes" | "imagePullSecrets")) =
            k.as_str()
        {
            rest.push((key, v));
        }
    }
    for (key, v) in rest {
        let items = v
            .items_mut()
            .into_iter()
            .flat_map(|x| x.iter_mut())
            .filter(|n| n.is_mapping());
        match key {
            "imagePullSecrets" => items.for_each(|s| out.push(("Secret", s, "name"))),
            "volumes" => {
                for vol in items {
                    volume_refs(vol, out);
                }
            }
            _ => {
                for c in items {
                    container_refs(c, out);
                }
            }
        }
    }
}

fn volume_refs<'a>(vol: &'a mut Node, out: &mut Refs<'a>) {
    for (k, v) in vol.entries_mut().into_iter().flatten() {
        match k.as_str() {
            Some("configMap") if v.is_mapping() => out.push(("ConfigMap", v, "name")),
            Some("secret") if v.is_mapping() => out.push(("Secret", v, "secretName")),
            Some("persistentVolumeClaim") if v.is_mapping() => {
                out.push(("PersistentVolumeClaim", v, "claimName"))
            }
            Some("projected") if v.is_mapping() => {
                for src in children(v, "sources") {
                    for (sk, sv) in src.entries_mut().into_iter().flatten() {
                        match sk.as_str() {
                            Some("configMap") if sv.is_mapping() => {
                                out.push(("ConfigMap", sv, "name"))
                            }
                            Some("secret") if sv.is_mapping() => out.push(("Secret", sv, "name")),
                            _ => {}
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

fn container_refs<'a>(c: &'a mut Node, out: &mut Refs<'a>) {
    for (k, v) in c.entries_mut().into_iter().flatten() {
        match k.as_str() {
            Some("env") => {
                for e in v.items_mut().into_iter().flat_map(|x| x.iter_mut()) {
                    if let Some(from) = map(e, "valueFrom") {
                        for (fk, fv) in from.entries_mut().into_iter().flatten() {
                            match fk.as_str() {
                                Some("configMapKeyRef") if fv.is_mapping() => {
                                    out.push(("ConfigMap", fv, "name"))
                                }
                                Some("secretKeyRef") if fv.is_mapping() => {
                                    out.push(("Secret", fv, "name"))
                                }
                                _ => {}
                            }
                        }
                    }
                }
            }
            Some("envFrom") => {
                for e in v.items_mut().into_iter().flat_map(|x| x.iter_mut()) {
                    for (fk, fv) in e.entries_mut().into_iter().flatten() {
                        match fk.as_str() {
                            Some("configMapRef") if fv.is_mapping() => {
                                out.push(("ConfigMap", fv, "name"))
                            }
                            Some("secretRef") if fv.is_mapping() => {
                                out.push(("Secret", fv, "name"))
                            }
                            _ => {}
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

fn lookup<'r>(
    renames: &'r [Rename],
    kind: &str,
    namespace: &str,
    name: &str,
) -> Option<&'r Rename> {
    renames.iter().find(|r| {
        r.kind == kind && r.old == name && r.namespace.as_deref().is_none_or(|ns| ns == namespace)
    })
}

fn fix(node: &mut Node, field: &str, kind: &str, namespace: &str, renames: &[Rename]) {
    let current = meta::str_at(node, &[field]).to_string();
    if let Some(r) = lookup(renames, kind, namespace, &current) {
        meta::sdk_set_string(node, field, &r.new);
    }
}

/// Updates every known reference to a renamed resource.
pub fn fix_references(items: &mut [Node], renames: &[Rename]) {
    if renames.is_empty() {
        return;
    }
    for o in items.iter_mut() {
        let kind = meta::kind(o).to_string();
        let ns = match meta::namespace(o) {
            "" => "default".to_string(),
            n => n.to_string(),
        };
        if let Some(path) = pod_spec_path(&kind)
            && let Some(spec) = o.get_path_mut(path).filter(|n| n.is_mapping())
        {
            fix(spec, "serviceAccountName", "ServiceAccount", &ns, renames);
            let mut refs = Vec::new();
            pod_refs(spec, &mut refs);
            for (k, node, field) in refs {
                fix(node, field, k, &ns, renames);
            }
        }
        if kind == "StatefulSet"
            && let Some(spec) = o.get_mut("spec")
        {
            fix(spec, "serviceName", "Service", &ns, renames);
        }
        if kind == "HorizontalPodAutoscaler"
            && let Some(target) = o.get_path_mut(&["spec", "scaleTargetRef"])
        {
            let k = meta::str_at(target, &["kind"]).to_string();
            fix(target, "name", &k, &ns, renames);
        }
        if matches!(kind.as_str(), "RoleBinding" | "ClusterRoleBinding") {
            if let Some(role) = o.get_mut("roleRef").filter(|n| n.is_mapping()) {
                let k = meta::str_at(role, &["kind"]).to_string();
                fix(role, "name", &k, &ns, renames);
            }
            for s in children(o, "subjects") {
                if meta::str_at(s, &["kind"]) == "ServiceAccount" {
                    let sns = match meta::str_at(s, &["namespace"]) {
                        "" => ns.clone(),
                        n => n.to_string(),
                    };
                    fix(s, "name", "ServiceAccount", &sns, renames);
                }
            }
        }
    }
}
