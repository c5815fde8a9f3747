//! Discovery: `/version`, `/api`, `/api/v1`, `/apis`, `/apis/<g>`, `/apis/<g>/<v>`, in both the
//! legacy and the aggregated (apidiscovery.k8s.io/v2) forms, chosen by the Accept header.

use serde_json::{Value, json};

use crate::registry::Registry;
use crate::resource::ResourceKind;

/// The Content-Type kubectl requires to accept aggregated discovery.
pub const AGGREGATED_CONTENT_TYPE: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// Whether the client asked for aggregated discovery v2.
pub fn wants_aggregated(accept: &str) -> bool {
    accept.split(',').any(|part| {
        let p = part.replace(' ', "");
        p.contains("as=APIGroupDiscoveryList")
            && p.contains("g=apidiscovery.k8s.io")
            && p.contains("v=v2")
            && !p.contains("v=v2beta1")
    })
}

/// The `/version` reply. Versions are reported as Kubernetes 1.32 so version-dispatching clients
/// (the gcloud kubectl dispatcher) pick a matching kubectl.
pub fn version(git_version: &str) -> Value {
    json!({
        "major": "1",
        "minor": "32",
        "gitVersion": format!("v1.32.0-porch-rs-{git_version}"),
        "gitCommit": "",
        "gitTreeState": "clean",
        "buildDate": "",
        "goVersion": "",
        "compiler": "rustc",
        "platform": format!("{}/{}", std::env::consts::OS, if cfg!(target_arch = "x86_64") { "amd64" } else { std::env::consts::ARCH }),
    })
}

/// `/api` (legacy).
pub fn api_versions() -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": ""}],
    })
}

fn group_version_entry(group: &str, version: &str) -> Value {
    json!({"groupVersion": format!("{group}/{version}"), "version": version})
}

fn api_group(group: &str, versions: &[String]) -> Value {
    let vs: Vec<Value> = versions
        .iter()
        .map(|v| group_version_entry(group, v))
        .collect();
    json!({
        "name": group,
        "versions": vs,
        "preferredVersion": vs.first().cloned().unwrap_or(Value::Null),
    })
}

/// `/apis` (legacy `APIGroupList`).
pub fn api_group_list(registry: &Registry) -> Value {
    let groups: Vec<Value> = registry
        .groups()
        .iter()
        .map(|(g, vs)| api_group(g, vs))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `/apis/<group>` (legacy `APIGroup`).
pub fn api_group_doc(registry: &Registry, group: &str) -> Option<Value> {
    let groups = registry.groups();
    let (g, vs) = groups.iter().find(|(g, _)| g == group)?;
    let mut v = api_group(g, vs);
    v["kind"] = "APIGroup".into();
    v["apiVersion"] = "v1".into();
    Some(v)
}

/// `/api/v1` or `/apis/<g>/<v>` (legacy `APIResourceList`).
pub fn resource_list(registry: &Registry, group: &str, version: &str) -> Option<Value> {
    let mut resources = Vec::new();
    let mut any = false;
    for r in registry.in_group_version(group, version) {
        any = true;
        let k = &r.kind;
        let mut entry = json!({
            "name": k.plural,
            "singularName": k.singular,
            "namespaced": k.namespaced,
            "kind": k.kind,
            "verbs": k.verbs,
        });
        if !k.short_names.is_empty() {
            entry["shortNames"] = json!(k.short_names);
        }
        if !k.categories.is_empty() {
            entry["categories"] = json!(k.categories);
        }
        resources.push(entry);
        for sub in subresources(k) {
            resources.push(json!({
                "name": format!("{}/{}", k.plural, sub),
                "singularName": "",
                "namespaced": k.namespaced,
                "kind": k.kind,
                "verbs": ["get", "patch", "update"],
            }));
        }
    }
    if !(any || group.is_empty() && version == "v1") {
        return None;
    }
    let gv = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    Some(
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}),
    )
}

fn subresources(k: &ResourceKind) -> Vec<String> {
    let mut subs = Vec::new();
    if k.status_subresource {
        subs.push("status".to_string());
    }
    subs.extend(k.subresources.iter().cloned());
    subs
}

fn aggregated_resource(k: &ResourceKind) -> Value {
    let response_kind = json!({"group": k.group, "version": k.version, "kind": k.kind});
    let mut entry = json!({
        "resource": k.plural,
        "responseKind": response_kind,
        "scope": if k.namespaced { "Namespaced" } else { "Cluster" },
        "singularResource": k.singular,
        "verbs": k.verbs,
    });
    if !k.short_names.is_empty() {
        entry["shortNames"] = json!(k.short_names);
    }
    if !k.categories.is_empty() {
        entry["categories"] = json!(k.categories);
    }
    let subs: Vec<Value> = subresources(k)
        .iter()
        .map(|s| json!({"subresource": s, "responseKind": response_kind, "verbs": ["get", "patch", "update"]}))
        .collect();
    if !subs.is_empty() {
        entry["subresources"] = Value::Array(subs);
    }
    entry
}

fn aggregated_group(registry: &Registry, group: &str, versions: &[String]) -> Value {
    let vs: Vec<Value> = versions
        .iter()
        .map(|v| {
            let resources: Vec<Value> = registry
                .in_group_version(group, v)
                .map(|r| aggregated_resource(&r.kind))
                .collect();
            json!({"version": v, "resources": resources, "freshness": "Current"})
        })
        .collect();
    let mut metadata = json!({"creationTimestamp": null});
    if !group.is_empty() {
        metadata["name"] = group.into();
    }
    json!({"metadata": metadata, "versions": vs})
}

/// `/api` (aggregated): the core group.
pub fn aggregated_core(registry: &Registry) -> Value {
    json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": [aggregated_group(registry, "", &["v1".to_string()])],
    })
}

/// `/apis` (aggregated): every named group.
pub fn aggregated_apis(registry: &Registry) -> Value {
    let items: Vec<Value> = registry
        .groups()
        .iter()
        .map(|(g, vs)| aggregated_group(registry, g, vs))
        .collect();
    json!({"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {}, "items": items})
}
