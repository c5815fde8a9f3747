//! The namespace walk: find every namespace-bearing field, decide which to
//! change, write them, then fix `depends-on` annotations.
//!
//! Order and bookkeeping follow the catalog: special cluster-scoped resources
//! are visited first (`Namespace` names, a webhook CRD's or an APIService's
//! named service, (Cluster)RoleBinding subjects), then namespace-scoped
//! ones (a kind the SDK does not know counts as namespaced only with a
//! `metadata.namespace`); every visited field is
//! written back (an empty namespace reads as `default` and is written as such),
//! which is why a namespace-scoped resource without `metadata.namespace` gains
//! one even when a matcher leaves it alone.

use std::collections::{BTreeSet, HashSet};
use std::sync::LazyLock;

use kpt::resource_list::ResultItem;
use kpt::yaml::Node;
use regex::Regex;

use super::Config;
use crate::common::{meta, scope};

/// Namespace value the SDK uses for "cluster-scoped or unknown".
const UNKNOWN_NAMESPACE: &str = "~C";
const DEFAULT_NAMESPACE: &str = "default";

/// `<group>/namespaces/<namespace>/<kind>/<name>` (Go `\w` is ASCII).
static NAMESPACED_DEPENDS_ON: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\A([-.0-9A-Za-z_]*)/namespaces/([-.0-9A-Za-z_]*)/([-.0-9A-Za-z_]*)/([-.0-9A-Za-z_]*)\z",
    )
    .expect("static regex compiles")
});

/// Where a visited namespace value lives.
enum Field {
    /// A `Namespace` object's `metadata.name`.
    NamespaceName,
    /// A nested field that exists (CRD / APIService service namespace).
    Path(&'static [&'static str]),
    /// `subjects[i].namespace` of a (Cluster)RoleBinding.
    Subject(usize),
    /// `metadata.namespace` of a namespace-scoped resource.
    MetaNamespace,
}

/// One visit: the item, the field, the origin namespace and an id for messages.
struct Slot {
    item: usize,
    field: Field,
    origin: String,
    current: String,
    id: Option<String>,
}

/// SDK `GetId().Namespace`: the namespace, `default` for namespace-scoped
/// resources without one, `~C` for cluster-scoped ones.
fn effective_namespace(o: &Node) -> String {
    if meta::has_namespace(o) {
        meta::namespace(o).to_string()
    } else if scope::is_namespace_scoped(o) {
        DEFAULT_NAMESPACE.to_string()
    } else {
        UNKNOWN_NAMESPACE.to_string()
    }
}

/// The upstream identifier's `(namespace, name)`, if the resource has one.
fn upstream(o: &Node) -> Option<(String, String)> {
    let id = meta::annotation(o, meta::UPSTREAM_IDENTIFIER).trim();
    let parts: Vec<&str> = id.split('|').collect();
    (parts.len() == 4).then(|| (parts[2].to_string(), parts[3].to_string()))
}

/// SDK `GetOriginID()`: the upstream identifier, else the current id. An
/// identifier in a bad format is an error, which the catalog reads as an
/// unknown origin namespace (the resource is then left alone) and an empty
/// origin name.
fn origin(o: &Node) -> (String, String) {
    if meta::annotation(o, meta::UPSTREAM_IDENTIFIER)
        .trim()
        .is_empty()
    {
        return (effective_namespace(o), meta::name(o).to_string());
    }
    upstream(o).unwrap_or_else(|| (UNKNOWN_NAMESPACE.to_string(), String::new()))
}

/// `group/namespaces/ns/Kind/name` of a namespace-scoped resource.
fn depends_on_key(o: &Node) -> Option<String> {
    let ns = effective_namespace(o);
    (ns != UNKNOWN_NAMESPACE).then(|| {
        format!(
            "{}/namespaces/{}/{}/{}",
            meta::group(meta::api_version(o)),
            ns,
            meta::kind(o),
            meta::name(o)
        )
    })
}

/// Runs the transformation on the non-local-config items; returns the results.
pub fn transform(items: &mut [Node], config: &Config) -> Vec<ResultItem> {
    let objects: Vec<usize> = (0..items.len())
        .filter(|&i| !meta::is_local_config(&items[i]))
        .collect();
    let depends_on_map: HashSet<String> = objects
        .iter()
        .filter_map(|&i| depends_on_key(&items[i]))
        .collect();

    let mut results = Vec::new();
    let slots = visit(items, &objects);
    let (count, old) = replace(items, slots, config, &mut results);
    results.push(if count == 0 {
        ResultItem::info(format!(
            "all matching namespaces are already {}. no value changed",
            go_quote(&config.namespace)
        ))
    } else {
        ResultItem::info(format!(
            "namespace {} updated to {}, {count} value(s) changed",
            go_list(old.iter()),
            go_quote(&config.namespace)
        ))
    });
    let (count, old) = update_depends_on(items, &objects, &depends_on_map, config);
    results.push(if count == 0 {
        ResultItem::info("all `depends-on` annotations are up-to-date. no `namespace` changed")
    } else {
        ResultItem::info(format!(
            "`depends-on` annotation namespace {} updated to {}, {count} value(s) changed",
            go_list(old.iter()),
            go_quote(&config.namespace)
        ))
    });
    results
}

/// Collects the namespace fields in the catalog's visiting order.
fn visit(items: &[Node], objects: &[usize]) -> Vec<Slot> {
    const CRD_PATH: &[&str] = &[
        "spec",
        "conversion",
        "webhook",
        "clientConfig",
        "service",
        "namespace",
    ];
    const APISERVICE_PATH: &[&str] = &["spec", "service", "namespace"];
    let mut slots = Vec::new();
    let slot = |item, field, origin: String, current: &str, id| Slot {
        item,
        field,
        origin,
        current: current.to_string(),
        id,
    };
    for &i in objects
        .iter()
        .filter(|&&i| !scope::is_namespace_scoped(&items[i]))
    {
        let o = &items[i];
        if meta::is_gvk(o, "", "v1", "Namespace") {
            let id = Some(meta::short_string(o));
            slots.push(slot(
                i,
                Field::NamespaceName,
                origin(o).1,
                meta::name(o),
                id,
            ));
        } else if meta::is_gvk(o, "apiextensions.k8s.io", "v1", "CustomResourceDefinition") {
            // Only a webhook conversion through a named service has a
            // namespace to set (one without a namespace gets it).
            let webhook = meta::str_at(o, &["spec", "conversion", "strategy"]) == "Webhook";
            let named = o
                .get_path(&[
                    "spec",
                    "conversion",
                    "webhook",
                    "clientConfig",
                    "service",
                    "name",
                ])
                .is_some();
            if webhook && named {
                let current = meta::str_at(o, CRD_PATH);
                slots.push(slot(i, Field::Path(CRD_PATH), String::new(), current, None));
            }
        } else if meta::is_gvk(o, "apiregistration.k8s.io", "v1", "APIService") {
            if o.get_path(&["spec", "service", "name"]).is_some() {
                let current = meta::str_at(o, APISERVICE_PATH);
                slots.push(slot(
                    i,
                    Field::Path(APISERVICE_PATH),
                    String::new(),
                    current,
                    None,
                ));
            }
        } else if matches!(meta::kind(o), "ClusterRoleBinding" | "RoleBinding") {
            for (j, s) in o
                .get("subjects")
                .map(Node::items)
                .unwrap_or_default()
                .iter()
                .enumerate()
            {
                if let Some(ns) = s.get("namespace").filter(|n| n.is_scalar()) {
                    let current = if ns.is_null() {
                        ""
                    } else {
                        ns.as_str().unwrap_or("")
                    };
                    slots.push(slot(i, Field::Subject(j), String::new(), current, None));
                }
            }
        }
    }
    for &i in objects
        .iter()
        .filter(|&&i| scope::is_namespace_scoped(&items[i]))
    {
        let o = &items[i];
        let id = Some(meta::short_string(o));
        slots.push(slot(
            i,
            Field::MetaNamespace,
            origin(o).0,
            meta::namespace(o),
            id,
        ));
    }
    slots
}

/// SDK `WalkAndReplace`: decide and write each slot; returns the number of
/// changed values and the sorted distinct old values.
fn replace(
    items: &mut [Node],
    slots: Vec<Slot>,
    config: &Config,
    results: &mut Vec<ResultItem>,
) -> (usize, BTreeSet<String>) {
    let mut count = 0;
    let mut old = BTreeSet::new();
    for mut s in slots {
        if s.origin == UNKNOWN_NAMESPACE {
            continue;
        }
        if s.current.is_empty() {
            s.current = DEFAULT_NAMESPACE.to_string();
        }
        if s.current != config.namespace {
            let change = match &config.matcher {
                None => true,
                Some(m) => {
                    if *m == s.origin {
                        let id =
                            s.id.as_deref()
                                .map(|i| format!("[{i}]"))
                                .unwrap_or("[]".into());
                        results.push(ResultItem::info(format!(
                            "{id} has matching origin {}",
                            s.origin
                        )));
                    }
                    *m == s.current || *m == s.origin
                }
            };
            if change {
                old.insert(std::mem::replace(&mut s.current, config.namespace.clone()));
                count += 1;
            }
        }
        write(&mut items[s.item], &s.field, &s.current);
    }
    (count, old)
}

fn write(o: &mut Node, field: &Field, value: &str) {
    match field {
        Field::NamespaceName => {
            meta::sdk_set_string(o.ensure_mapping(&["metadata"]), "name", value)
        }
        Field::MetaNamespace => {
            meta::sdk_set_string(o.ensure_mapping(&["metadata"]), "namespace", value)
        }
        Field::Path(path) => {
            if let Some((last, parents)) = path.split_last() {
                meta::sdk_set_string(o.ensure_mapping(parents), last, value);
            }
        }
        Field::Subject(j) => {
            if let Some(s) = o
                .get_mut("subjects")
                .and_then(Node::items_mut)
                .and_then(|v| v.get_mut(*j))
            {
                meta::sdk_set_string(s, "namespace", value);
            }
        }
    }
}

/// SDK `UpdateAnnotation`: rewrite `depends-on` annotations that reference a
/// resource of the list (as it was before the change).
fn update_depends_on(
    items: &mut [Node],
    objects: &[usize],
    before: &HashSet<String>,
    config: &Config,
) -> (usize, BTreeSet<String>) {
    let mut count = 0;
    let mut old = BTreeSet::new();
    for &i in objects {
        let value = meta::annotation(&items[i], meta::DEPENDS_ON).to_string();
        if value.is_empty() || !NAMESPACED_DEPENDS_ON.is_match(&value) || !before.contains(&value) {
            continue;
        }
        let mut segments: Vec<&str> = value.split('/').collect();
        let ns = segments[2].to_string();
        if ns == config.namespace {
            continue;
        }
        if config.matcher.as_ref().is_none_or(|m| *m == ns) {
            segments[2] = &config.namespace;
            let updated = segments.join("/");
            meta::set_annotation(&mut items[i], meta::DEPENDS_ON, &updated);
            old.insert(ns);
            count += 1;
        }
    }
    (count, old)
}

/// Go's `%v` of a string slice: `[a b]`.
fn go_list<'a>(values: impl Iterator<Item = &'a String>) -> String {
    format!(
        "[{}]",
        values.map(String::as_str).collect::<Vec<_>>().join(" ")
    )
}

/// Go's `%q` (kpt's port of `strconv.Quote`).
pub(crate) use kpt::goquote::go_quote;
