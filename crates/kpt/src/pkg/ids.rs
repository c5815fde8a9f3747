//! Identity markers kpt adds to fetched resources: the `# kpt-merge: ns/name`
//! comment on `metadata` and the `internal.kpt.dev/upstream-identifier` annotation.

use super::merge3::{api_group, merge_comment};
use crate::package::PackageFiles;
use crate::package::resources::{annotation, set_annotation};
use crate::yaml::{self, Node};

/// Annotation recording a resource's upstream identity.
pub const UPSTREAM_IDENTIFIER: &str = "internal.kpt.dev/upstream-identifier";

/// Add the merge comment and upstream identifier to one resource, if absent.
/// Returns whether it changed.
pub fn add_identity(node: &mut Node) -> bool {
    if !node.is_mapping() {
        return false;
    }
    let s = |n: &Node, p: &[&str]| {
        n.get_path(p)
            .and_then(Node::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let name = s(node, &["metadata", "name"]);
    let ns = s(node, &["metadata", "namespace"]);
    let has_labels = node.get_path(&["metadata", "labels"]).is_some();
    let mut changed = false;
    if merge_comment(node).is_none()
        && (!name.is_empty() || !ns.is_empty() || has_labels)
        && let Some((k, _)) = node
            .entries_mut()
            .and_then(|e| e.iter_mut().find(|(k, _)| k.as_str() == Some("metadata")))
    {
        k.line_comment = format!("# kpt-merge: {ns}/{name}");
        changed = true;
    }
    if annotation(node, UPSTREAM_IDENTIFIER).is_none() && node.get("metadata").is_some() {
        let (cns, cname) = merge_comment(node).unwrap_or((ns, name));
        let cns = if cns.is_empty() {
            "default".to_string()
        } else {
            cns
        };
        let id = format!(
            "{}|{}|{}|{}",
            api_group(&s(node, &["apiVersion"])),
            s(node, &["kind"]),
            cns,
            cname
        );
        set_annotation(node, UPSTREAM_IDENTIFIER, &id);
        changed = true;
    }
    changed
}

/// Add identity markers to every resource of every package in `files` (kpt's
/// `addmergecomment.Process`, best effort: unparsable files are left alone).
pub fn add_identities(files: &mut PackageFiles) {
    let paths: Vec<String> = files
        .paths()
        .filter(|p| {
            let base = p.rsplit('/').next().unwrap_or(p);
            base.ends_with(".yaml") || base.ends_with(".yml")
        })
        .map(str::to_string)
        .collect();
    for p in paths {
        let Some(text) = files.get_text(&p) else {
            continue;
        };
        let Ok(mut docs) = yaml::parse_stream(text) else {
            continue;
        };
        let mut changed = false;
        for d in &mut docs {
            if is_krm(&d.root) {
                changed |= add_identity(&mut d.root);
            }
        }
        if changed {
            let out = yaml::emit_stream(&docs);
            files.insert(p, out.into_bytes());
        }
    }
}

fn is_krm(n: &Node) -> bool {
    n.get("apiVersion").is_some() && n.get("kind").is_some() && n.get("metadata").is_some()
}
