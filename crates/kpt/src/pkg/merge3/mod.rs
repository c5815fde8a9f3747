//! The 3-way merge of resources (kpt `resource-merge`), as a pure function.
//!
//! Resources of origin, updated and local are matched by identity (API group, kind,
//! namespace and name — frozen by the `# kpt-merge: ns/name` comment when present —
//! and file path); each tuple is then kept, dropped, added or merged field by field
//! ([`walk`]). List merge keys come from [`schema`]: the Kubernetes schema kpt
//! embeds ([`builtin`], generated into `k8s_schema`) and CRDs of the packages.

mod builtin;
mod compare;
#[rustfmt::skip]
mod k8s_schema;
mod nulls;
pub mod schema;
mod walk;

use crate::package::resources::{self, PATH};
use crate::yaml::{self, Node, SeqIndent};

pub use schema::SchemaRegistry;

/// Annotation kpt sets on each side while merging.
pub const MERGE_SOURCE: &str = "config.kubernetes.io/merge-source";

/// Errors of the resource merge.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MergeError {
    /// One field has different node kinds on different sides.
    #[error("cannot merge field {field}: it is a map, a list or a value on different sides")]
    KindMismatch { field: String },
    /// Two resources of one side have the same identity.
    #[error("found duplicate {source_name} resources in file {path:?}: {id}")]
    Duplicate {
        source_name: &'static str,
        path: String,
        id: String,
    },
    /// A field could not be merged (names the resource).
    #[error("merging resource {id} in {path:?}: {source}")]
    Resource {
        id: String,
        path: String,
        #[source]
        source: Box<MergeError>,
    },
}

impl MergeError {
    /// The error of a field's value, seen from the map or list holding it under
    /// `segment` (the field path is built on the way up, so the walk keeps none).
    pub(crate) fn within(self, segment: &str) -> MergeError {
        match self {
            MergeError::KindMismatch { field } => MergeError::KindMismatch {
                field: if field.is_empty() {
                    segment.to_string()
                } else {
                    format!("{segment}.{field}")
                },
            },
            other => other,
        }
    }

    /// A short machine-readable kind.
    pub fn kind(&self) -> &'static str {
        match self {
            MergeError::KindMismatch { .. } => "kind-mismatch",
            MergeError::Duplicate { .. } => "duplicate",
            MergeError::Resource { source, .. } => source.kind(),
        }
    }
}

/// Options of a merge.
#[derive(Debug, Clone, Default)]
pub struct MergeOptions {
    /// kpt HEAD's rule: an explicit `null` only clears a field when origin had a
    /// non-null value (`keep-tagged-null`). Default off: kpt 1.0.0-beta (kyaml) rule,
    /// where any `null` in local or updated clears the field.
    pub keep_tagged_null: bool,
    /// kpt HEAD's `preserveExplicitNull` (its `NullPreservingVisitor`, for
    /// packages that are themselves patches): a `null` that would clear a field
    /// is written out instead, as it was spelled (`null`, `~` or empty).
    /// Implies the `keep_tagged_null` rule for what counts as cleared.
    pub preserve_explicit_null: bool,
    /// Infer list merge keys (`name`, `mountPath`, ...) where no schema says so.
    /// kpt only does this for the Kptfile.
    pub infer_lists: bool,
    /// kpt 1.0.0-beta.56: CustomResourceDefinitions in the packages do not extend
    /// the schema (their lists are replaced wholesale). Default off: the kpt
    /// library's (and Porch's) rule, where a CRD's `x-kubernetes-patch-strategy`
    /// and merge keys apply to its custom resources.
    pub ignore_crd_schemas: bool,
}

/// The identity of a resource for matching across the three sides.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ResourceId {
    pub group: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub path: String,
}

impl std::fmt::Display for ResourceId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ns = if self.namespace.is_empty() {
            String::new()
        } else {
            format!("{}/", self.namespace)
        };
        write!(f, "{}|{}|{ns}{}", self.group, self.kind, self.name)
    }
}

/// `(namespace, name)` from a `# kpt-merge: ns/name` comment on `metadata`.
pub fn merge_comment(node: &Node) -> Option<(String, String)> {
    let (k, v) = node
        .entries()
        .iter()
        .find(|(k, _)| k.as_str() == Some("metadata"))?;
    for c in [&k.line_comment, &v.line_comment] {
        if let Some(rest) = c.trim().strip_prefix('#')
            && let Some(id) = rest.trim().strip_prefix("kpt-merge:")
        {
            let id = id.trim();
            return Some(match id.split_once('/') {
                Some((ns, name)) => (ns.to_string(), name.to_string()),
                None => (String::new(), id.to_string()),
            });
        }
    }
    None
}

/// API group of an apiVersion (`apps/v1` → `apps`, `v1` → ``).
pub fn api_group(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

/// The identity kpt's resource-merge matcher uses.
pub fn resource_id(node: &Node) -> ResourceId {
    let s = |p: &[&str]| {
        node.get_path(p)
            .and_then(Node::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let (namespace, name) = merge_comment(node)
        .unwrap_or_else(|| (s(&["metadata", "namespace"]), s(&["metadata", "name"])));
    ResourceId {
        group: api_group(&s(&["apiVersion"])).to_string(),
        kind: s(&["kind"]),
        namespace,
        name,
        path: resources::item_path(node).unwrap_or_default().to_string(),
    }
}

struct Tuple {
    id: ResourceId,
    o: Option<Node>,
    u: Option<Node>,
    d: Option<Node>,
}

fn add(
    tuples: &mut Vec<Tuple>,
    index: &mut std::collections::HashMap<ResourceId, usize>,
    node: Node,
    side: usize,
) -> Result<(), MergeError> {
    let id = resource_id(&node);
    let i = *index.entry(id.clone()).or_insert_with(|| {
        tuples.push(Tuple {
            id: id.clone(),
            o: None,
            u: None,
            d: None,
        });
        tuples.len() - 1
    });
    let t = &mut tuples[i];
    let (slot, name) = match side {
        0 => (&mut t.o, "origin"),
        1 => (&mut t.u, "updated"),
        _ => (&mut t.d, "local"),
    };
    if slot.is_some() {
        return Err(MergeError::Duplicate {
            source_name: name,
            path: id.path.clone(),
            id: id.to_string(),
        });
    }
    *slot = Some(node);
    Ok(())
}

/// Text of a resource without the annotations that differ between sides.
fn comparable(node: &Node) -> String {
    let mut n = node.clone();
    resources::strip_internal(&mut n);
    resources::remove_annotation(&mut n, "cnrm.cloud.google.com/blueprint");
    yaml::emit_node(&n, SeqIndent::Compact)
}

/// Merge three sets of resources (each annotated with its file path, see
/// [`crate::package::resources::read_package`]). Returns the resources of the result,
/// in tuple order (origin's, then new ones of updated, then local-only ones).
pub fn merge_resources(
    original: Vec<Node>,
    updated: Vec<Node>,
    local: Vec<Node>,
    schemas: &SchemaRegistry,
    opts: &MergeOptions,
) -> Result<Vec<Node>, MergeError> {
    let mut tuples = Vec::new();
    let mut index = std::collections::HashMap::new();
    for (side, list) in [original, updated, local].into_iter().enumerate() {
        for n in list {
            add(&mut tuples, &mut index, n, side)?;
        }
    }
    let mut out = Vec::new();
    for t in tuples {
        match (t.o, t.u, t.d) {
            (None, None, Some(d)) => out.push(d),
            (None, Some(u), None) => out.push(u),
            (Some(o), None, Some(d)) => {
                if comparable(&o) != comparable(&d) {
                    out.push(d);
                }
            }
            (_, None, None) | (Some(_), Some(_), None) => {}
            (mut o, Some(mut u), Some(d)) => {
                if opts.preserve_explicit_null {
                    nulls::drop_at_dest_nulls(&d, o.as_mut(), Some(&mut u));
                }
                // Local is owned here: the walk edits it in place instead of a copy.
                let merged =
                    merge_owned(Some(d), o.as_ref(), Some(&u), schemas, opts).map_err(|e| {
                        MergeError::Resource {
                            id: t.id.to_string(),
                            path: t.id.path.clone(),
                            source: Box::new(e),
                        }
                    })?;
                if let Some(m) = merged {
                    out.push(m);
                }
            }
        }
    }
    Ok(out)
}

/// Field-level 3-way merge of one resource (`dest` = local), as kpt merges a
/// matched tuple (with `preserve_explicit_null`, after its pre-pass for local
/// `null` lists).
pub fn merge_resource(
    origin: Option<&Node>,
    updated: &Node,
    dest: &Node,
    schemas: &SchemaRegistry,
    opts: &MergeOptions,
) -> Result<Option<Node>, MergeError> {
    if !opts.preserve_explicit_null {
        return merge_nodes(Some(dest), origin, Some(updated), schemas, opts);
    }
    let (mut o, mut u) = (origin.cloned(), updated.clone());
    nulls::drop_at_dest_nulls(dest, o.as_mut(), Some(&mut u));
    merge_owned(Some(dest.clone()), o.as_ref(), Some(&u), schemas, opts)
}

/// Generic 3-way merge of three YAML trees (`None` = absent): the bare walk,
/// without [`merge_resource`]'s pre-pass.
pub fn merge_nodes(
    dest: Option<&Node>,
    origin: Option<&Node>,
    updated: Option<&Node>,
    schemas: &SchemaRegistry,
    opts: &MergeOptions,
) -> Result<Option<Node>, MergeError> {
    merge_owned(dest.cloned(), origin, updated, schemas, opts)
}

/// [`merge_nodes`] taking `dest` by value.
fn merge_owned(
    dest: Option<Node>,
    origin: Option<&Node>,
    updated: Option<&Node>,
    schemas: &SchemaRegistry,
    opts: &MergeOptions,
) -> Result<Option<Node>, MergeError> {
    let w = walk::Walker {
        schemas,
        infer: opts.infer_lists,
        null_needs_origin: opts.keep_tagged_null,
        preserve_null: opts.preserve_explicit_null,
    };
    // No schema yet: the walker finds the resource's type in the sources.
    w.walk(dest, origin, updated, &schema::Schema::None)
}

/// The resource path annotation key, re-exported for callers building inputs.
pub const PATH_ANNOTATION: &str = PATH;
