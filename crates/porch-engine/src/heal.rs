//! Comment healing before a resources update is rendered (spec §10.2 step 1): clients such as
//! kubectl-edited PRRs or tools that round-trip YAML drop comments; each new resource that
//! has the same identity (apiVersion, kind, namespace, name) as one of the previous version
//! gets the previous comments back where it has none, through kpt's render healing.

use std::collections::HashMap;

use kpt::package::resources::is_resource_file;
use kpt::yaml::{self, Node};
use porch_core::repository::PackageFiles;

type Identity = (String, String, String, String);

fn identity(n: &Node) -> Option<Identity> {
    let s = |path: &[&str]| {
        n.get_path(path)
            .and_then(Node::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let (api_version, kind, name) = (s(&["apiVersion"]), s(&["kind"]), s(&["metadata", "name"]));
    if kind.is_empty() || name.is_empty() {
        return None;
    }
    Some((api_version, kind, s(&["metadata", "namespace"]), name))
}

/// ytt templates carry meaning in comments; Porch leaves them alone.
fn is_template(text: &str) -> bool {
    text.contains("#@") || text.contains("#!")
}

/// `new` with comments of same-identity resources of `old` restored. Files that are not
/// YAML resources, templates and unparsable files pass through unchanged.
pub(crate) fn heal_comments(old: &PackageFiles, mut new: PackageFiles) -> PackageFiles {
    let mut previous: HashMap<Identity, Node> = HashMap::new();
    for (path, bytes) in old {
        if !is_resource_file(path) {
            continue;
        }
        let Ok(docs) = yaml::parse_stream(&String::from_utf8_lossy(bytes)) else {
            continue;
        };
        for d in docs {
            if let Some(id) = identity(&d.root) {
                previous.entry(id).or_insert(d.root);
            }
        }
    }
    if previous.is_empty() {
        return new;
    }
    for (path, bytes) in new.iter_mut() {
        if !is_resource_file(path) {
            continue;
        }
        let Ok(text) = std::str::from_utf8(bytes) else {
            continue;
        };
        if is_template(text) {
            continue;
        }
        let Ok(mut docs) = yaml::parse_stream(text) else {
            continue;
        };
        let mut touched = false;
        for d in &mut docs {
            if let Some(src) = identity(&d.root).and_then(|id| previous.get(&id)) {
                kpt::render::heal(src, &mut d.root);
                touched |= d.is_modified();
            }
        }
        if touched {
            *bytes = yaml::emit_stream(&docs).into_bytes();
        }
    }
    new
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restores_comments_of_the_same_resource_only() {
        let old = PackageFiles::from([(
            "cm.yaml".to_owned(),
            b"# the config\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v # keep me\n"
                .to_vec(),
        )]);
        let new = PackageFiles::from([
            (
                "cm.yaml".to_owned(),
                b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: w\n".to_vec(),
            ),
            (
                "other.yaml".to_owned(),
                b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\ndata:\n  k: v\n".to_vec(),
            ),
            ("README.md".to_owned(), b"# hi\n".to_vec()),
        ]);
        let healed = heal_comments(&old, new.clone());
        let cm = String::from_utf8_lossy(&healed["cm.yaml"]).into_owned();
        assert!(cm.contains("# the config"), "{cm}");
        assert!(cm.contains("k: w # keep me"), "{cm}");
        assert_eq!(healed["other.yaml"], new["other.yaml"]);
        assert_eq!(healed["README.md"], new["README.md"]);
    }

    /// Porch's `TestReplaceResources` rule: replacing every file by its comment-free
    /// re-encoding (yaml.v3 `Unmarshal` + `Encode`: keys sorted, comments gone) gives the
    /// package back exactly, comments in every position included.
    #[test]
    fn a_comment_free_copy_heals_back_to_the_original() {
        let original = "# head of the file\napiVersion: example.com/v1\nkind: Widget\n# about metadata\nmetadata: # kpt-merge: ns/w\n  # about annotations\n  annotations:\n    a.example.com/x: \"false\"\n    a.example.com/y: y # kpt-set: ${y}\n  name: w # kpt-set: ${name}\n  namespace: ns\n# about spec\nspec:\n  size: small # kpt-set: ${size}\n  # nested head\n  tier:\n    enabled: false\n";
        let stripped = "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  annotations:\n    a.example.com/x: \"false\"\n    a.example.com/y: y\n  name: w\n  namespace: ns\nspec:\n  size: small\n  tier:\n    enabled: false\n";
        let kptfile = "# top\napiVersion: kpt.dev/v1\n# info head\ninfo:\n  # description head\n  description: d\nkind: Kptfile\nmetadata:\n  name: p\npipeline:\n  mutators:\n  - configMap:\n      name: n # line\n    image: apply-setters:v0.2.0\n";
        let kptfile_stripped = "apiVersion: kpt.dev/v1\ninfo:\n  description: d\nkind: Kptfile\nmetadata:\n  name: p\npipeline:\n  mutators:\n  - configMap:\n      name: n\n    image: apply-setters:v0.2.0\n";
        let old = PackageFiles::from([
            ("w.yaml".to_owned(), original.as_bytes().to_vec()),
            ("Kptfile".to_owned(), kptfile.as_bytes().to_vec()),
        ]);
        let new = PackageFiles::from([
            ("w.yaml".to_owned(), stripped.as_bytes().to_vec()),
            ("Kptfile".to_owned(), kptfile_stripped.as_bytes().to_vec()),
        ]);
        let healed = heal_comments(&old, new);
        assert_eq!(String::from_utf8_lossy(&healed["w.yaml"]), original);
        assert_eq!(String::from_utf8_lossy(&healed["Kptfile"]), kptfile);
    }
}
