//! Kustomize field specs (`{group, version, kind, path, create}`) and the
//! walker kustomize's `fieldspec.Filter` implements, used by set-annotations,
//! set-image's additional fields and ensure-name-substring.
//!
//! Paths are `/`-separated; an element ending in `[]` names a list whose
//! elements are all visited. When a sequence is met the remaining path applies
//! to each element unchanged (kustomize keeps the whole path for sequences).

use kpt::yaml::{Node, NodeKind};

use super::meta;
use crate::FnError;

/// One kustomize `FieldSpec`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSpec {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub path: String,
    pub create: bool,
}

/// What a missing final field is created as (kustomize `CreateKind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Create {
    /// Never create missing fields.
    Never,
    /// Create a missing final field as an empty mapping (annotations, labels).
    Mapping,
}

impl FieldSpec {
    /// A spec from `(group, version, kind, path, create)` literals.
    pub fn new(group: &str, version: &str, kind: &str, path: &str, create: bool) -> FieldSpec {
        FieldSpec {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
            path: path.into(),
            create,
        }
    }

    /// Reads a user-written spec (`additionalAnnotationFields` entries etc.).
    pub fn from_node(node: &Node) -> Result<FieldSpec, FnError> {
        if !node.is_mapping() {
            return Err(FnError::Config(
                "field spec entries must be mappings".to_string(),
            ));
        }
        let s = |k: &str| meta::str_at(node, &[k]).to_string();
        let create = node
            .get("create")
            .and_then(Node::as_str)
            .is_some_and(|v| v == "true");
        Ok(FieldSpec {
            group: s("group"),
            version: s("version"),
            kind: s("kind"),
            path: s("path"),
            create,
        })
    }

    /// Reads a list of specs; a missing or null field is an empty list.
    pub fn list_from(node: Option<&Node>) -> Result<Vec<FieldSpec>, FnError> {
        node.map(|n| n.items().iter().map(FieldSpec::from_node).collect())
            .unwrap_or_else(|| Ok(Vec::new()))
    }

    /// kustomize `isMatchGVK`: empty parts of the spec match anything.
    pub fn matches(&self, obj: &Node) -> bool {
        let av = meta::api_version(obj);
        (self.kind.is_empty() || self.kind == meta::kind(obj))
            && (self.group.is_empty() || self.group == meta::group(av))
            && (self.version.is_empty() || self.version == meta::version(av))
    }

    /// The path elements, honouring `\/` escapes.
    fn elements(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut cur = String::new();
        let mut chars = self.path.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' if chars.peek() == Some(&'/') => {
                    cur.push('/');
                    chars.next();
                }
                '/' => out.push(std::mem::take(&mut cur)),
                _ => cur.push(c),
            }
        }
        out.push(cur);
        out
    }
}

/// Visits every node `fs.path` selects in `obj` (when `fs` matches its GVK) and
/// calls `set` with the node and its field path (names only, as kyaml's
/// `FieldPath()`). Missing fields are created only when `fs.create` is set and
/// `create` allows it; intermediate fields are created as mappings.
pub fn apply<F>(obj: &mut Node, fs: &FieldSpec, create: Create, set: &mut F) -> Result<(), FnError>
where
    F: FnMut(&mut Node, &[String]) -> Result<(), FnError>,
{
    if !fs.matches(obj) {
        return Ok(());
    }
    let path = fs.elements();
    let mut field_path = Vec::new();
    walk(
        obj,
        &path,
        fs.create && create != Create::Never,
        &mut field_path,
        set,
    )
}

fn walk<F>(
    node: &mut Node,
    path: &[String],
    create: bool,
    field_path: &mut Vec<String>,
    set: &mut F,
) -> Result<(), FnError>
where
    F: FnMut(&mut Node, &[String]) -> Result<(), FnError>,
{
    let Some((first, rest)) = path.split_first() else {
        return set(node, field_path);
    };
    if node.is_null() {
        return Ok(());
    }
    match &mut node.kind {
        NodeKind::Sequence(items) => {
            for item in items.iter_mut() {
                walk(item, path, create, field_path, set)?;
            }
            Ok(())
        }
        NodeKind::Mapping(_) => {
            let (name, is_seq) = match first.strip_suffix("[]") {
                Some(n) => (n, true),
                None => (first.as_str(), false),
            };
            if name.is_empty() {
                return Err(FnError::Failed(
                    "cannot set or create an empty field name".to_string(),
                ));
            }
            if node.get(name).is_none() {
                if !create || is_seq {
                    return Ok(());
                }
                node.set(name, Node::mapping());
            }
            let Some(field) = node.get_mut(name) else {
                return Ok(());
            };
            // A null value met on the way becomes the kind the path implies.
            if field.is_null() && (create || is_seq) {
                let keep = field.clone();
                *field = if is_seq {
                    Node::sequence()
                } else {
                    Node::mapping()
                };
                field.head_comment = keep.head_comment;
                field.line_comment = keep.line_comment;
                field.foot_comment = keep.foot_comment;
            }
            field_path.push(name.to_string());
            let r = walk(field, rest, create, field_path, set);
            field_path.pop();
            r
        }
        NodeKind::Alias(_) => Ok(()),
        NodeKind::Scalar(_) => Err(FnError::Failed(format!(
            "expected sequence or mapping node at {}",
            field_path.join(".")
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj() -> Node {
        let mut n = Node::mapping();
        n.set("apiVersion", Node::string("apps/v1"));
        n.set("kind", Node::string("Deployment"));
        n.ensure_mapping(&["metadata"])
            .set("name", Node::string("d"));
        let mut list = Node::sequence();
        for img in ["a", "b"] {
            let mut c = Node::mapping();
            c.set("image", Node::string(img));
            list.items_mut().expect("seq").push(c);
        }
        n.ensure_mapping(&["spec"]).set("containers", list);
        n
    }

    #[test]
    fn walks_lists_and_creates_maps() {
        let mut n = obj();
        let mut seen = Vec::new();
        let fs = FieldSpec::new("", "", "", "spec/containers[]/image", false);
        apply(&mut n, &fs, Create::Never, &mut |v, p| {
            seen.push((v.as_str().unwrap_or("").to_string(), p.join(".")));
            Ok(())
        })
        .expect("walk");
        assert_eq!(
            seen,
            vec![
                ("a".to_string(), "spec.containers.image".to_string()),
                ("b".to_string(), "spec.containers.image".to_string())
            ]
        );
        let fs = FieldSpec::new(
            "apps",
            "",
            "Deployment",
            "spec/template/metadata/annotations",
            true,
        );
        apply(&mut n, &fs, Create::Mapping, &mut |v, _| {
            v.set("k", Node::string("v"));
            Ok(())
        })
        .expect("walk");
        assert_eq!(
            meta::str_at(&n, &["spec", "template", "metadata", "annotations", "k"]),
            "v"
        );
        let other = FieldSpec::new("batch", "", "", "metadata/annotations", true);
        assert!(!other.matches(&n));
    }
}
