//! Identity markers kpt adds to fetched resources: the `# kpt-merge: ns/name`
//! comment on `metadata` and the `internal.kpt.dev/upstream-identifier` annotation.

use super::merge3::{api_group, merge_comment};
use crate::package::PackageFiles;
use crate::package::krmignore::KrmIgnore;
use crate::package::resources::{annotation, set_annotation};
use crate::yaml::{self, Node};

/// Annotation recording a resource's upstream identity.
pub const UPSTREAM_IDENTIFIER: &str = "internal.kpt.dev/upstream-identifier";

/// kpt's `AddMergeComment` filter on one resource: the merge comment when `metadata`
/// has none, and the upstream identifier always (recomputed from the merge comment, so
/// a stale one is replaced). A resource with no name, namespace or labels is left alone,
/// as is a document kyaml finds no metadata in (no apiVersion, kind or metadata).
/// Returns whether it changed.
pub fn add_identity(node: &mut Node) -> bool {
    if !node.is_mapping()
        || ["apiVersion", "kind", "metadata"]
            .iter()
            .all(|k| node.get(k).is_none_or(Node::is_null))
    {
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
    let has_labels = node
        .get_path(&["metadata", "labels"])
        .is_some_and(|l| !l.entries().is_empty());
    if name.is_empty() && ns.is_empty() && !has_labels {
        return false;
    }
    let mut changed = false;
    if merge_comment(node).is_none()
        && let Some((k, _)) = node
            .entries_mut()
            .and_then(|e| e.iter_mut().find(|(k, _)| k.as_str() == Some("metadata")))
    {
        k.line_comment = format!("# kpt-merge: {ns}/{name}");
        changed = true;
    }
    let (cns, cname) = merge_comment(node).unwrap_or((ns.clone(), name));
    // kyaml's placeholder namespace of a cluster-scoped kind is `~C` here.
    let cns = if cns.is_empty() {
        "default".to_string()
    } else if ns == NOT_A_NAMESPACE {
        "~C".to_string()
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
    if annotation(node, UPSTREAM_IDENTIFIER) != Some(id.as_str()) {
        set_annotation(node, UPSTREAM_IDENTIFIER, &id);
        changed = true;
    }
    changed
}

/// kyaml's `resid.TotallyNotANamespace`.
const NOT_A_NAMESPACE: &str = "_non_namespaceable_";

/// Add identity markers to every resource of every package in `files` (kpt's
/// `addmergecomment.Process`, best effort: unparsable files are left alone).
pub fn add_identities(files: &mut PackageFiles) {
    // kyaml's package reader: `.yaml`/`.yml` files that the package's `.krmignore`
    // does not exclude.
    let ignore = files.get_text(".krmignore").map(KrmIgnore::parse);
    let paths: Vec<String> = files
        .paths()
        .filter(|p| {
            let base = p.rsplit('/').next().unwrap_or(p);
            base.ends_with(".yaml") || base.ends_with(".yml")
        })
        .filter(|p| !ignore.as_ref().is_some_and(|k| k.is_ignored(p)))
        .map(str::to_string)
        .collect();
    let mut changed_files = Vec::new();
    for p in paths {
        let Some(text) = files.get_text(&p) else {
            return;
        };
        // Best effort as kpt's: one file that does not parse and nothing is written.
        let Ok(mut docs) = yaml::parse_stream(text) else {
            return;
        };
        let mut changed = false;
        for d in &mut docs {
            changed |= add_identity(&mut d.root);
        }
        if changed {
            changed_files.push((p, yaml::emit_stream(&docs)));
        }
    }
    for (p, out) in changed_files {
        files.insert(p, out.into_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse_one;

    fn identity(text: &str) -> (bool, Node) {
        let mut n = parse_one(text).expect("yaml");
        (add_identity(&mut n), n)
    }

    #[test]
    fn identities_as_kpts_merge_comment_filter_sets_them() {
        // No kind: kyaml still finds metadata.
        let (changed, n) = identity("apiVersion: v1\nmetadata:\n  name: a\n");
        assert!(changed);
        assert_eq!(annotation(&n, UPSTREAM_IDENTIFIER), Some("||default|a"));
        assert_eq!(merge_comment(&n), Some((String::new(), "a".to_string())));
        // Neither name, namespace nor labels: left alone.
        let (changed, n) = identity("kind: ConfigMap\nmetadata:\n  generateName: g-\n");
        assert!(!changed);
        assert_eq!(annotation(&n, UPSTREAM_IDENTIFIER), None);
        // A stale identifier is recomputed from the merge comment.
        let stale = "apiVersion: apps/v1\nkind: Deployment\nmetadata: # kpt-merge: ns/d\n  name: d\n  namespace: other\n  annotations:\n    internal.kpt.dev/upstream-identifier: 'apps|Deployment|x|y'\n";
        let (changed, n) = identity(stale);
        assert!(changed);
        assert_eq!(
            annotation(&n, UPSTREAM_IDENTIFIER),
            Some("apps|Deployment|ns|d")
        );
        // Up to date: unchanged.
        let (changed, _) = identity(&crate::yaml::emit_node(&n, crate::yaml::SeqIndent::Compact));
        assert!(!changed);
        // No metadata at all: not a resource for kyaml.
        let (changed, _) = identity("foo: bar\n");
        assert!(!changed);
    }

    #[test]
    fn krmignore_and_unparsable_files_are_respected() {
        let cm = |n: &str| format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {n}\n");
        let mut files = PackageFiles::new();
        files.insert(".krmignore", b"ign/\n".to_vec());
        files.insert("a.yaml", cm("a").into_bytes());
        files.insert("ign/b.yaml", cm("b").into_bytes());
        add_identities(&mut files);
        assert!(
            files
                .get_text("a.yaml")
                .expect("a")
                .contains("kpt-merge: /a")
        );
        assert_eq!(files.get_text("ign/b.yaml"), Some(cm("b").as_str()));
        // One file that does not parse: kpt's pipeline fails and writes nothing.
        let mut files = PackageFiles::new();
        files.insert("a.yaml", cm("a").into_bytes());
        files.insert("bad.yaml", b"a: [\n".to_vec());
        add_identities(&mut files);
        assert_eq!(files.get_text("a.yaml"), Some(cm("a").as_str()));
    }
}
