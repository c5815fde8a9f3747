//! Reading and writing the package's YAML files for the mutations: the objects of a file
//! (upstream `fn.ParseKubeObjects`), a file holding exactly one expected object (upstream
//! `getFileKubeObject`) and change detection (upstream `calculateDraftResources`).

use kpt::kptfile::Kptfile;
use kpt::yaml::{self, Document, Node, NodeKind};
use porch_core::repository::PackageFiles;

use super::MutationError;

/// The package revision the files belong to, as error texts name it.
pub(crate) struct Prr<'a> {
    pub namespace: &'a str,
    pub name: &'a str,
}

impl std::fmt::Display for Prr<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// Whether a file holds resources: `*.yaml`, `*.yml` or the Kptfile, by base name
/// (upstream `includeFile` with kio's `MatchAll`).
pub(crate) fn holds_resources(path: &str) -> bool {
    let base = path.rsplit('/').next().unwrap_or(path);
    base == kpt::kptfile::KPTFILE
        || (base.len() > ".yaml".len() && base.ends_with(".yaml"))
        || (base.len() > ".yml".len() && base.ends_with(".yml"))
}

/// go-yaml's node kind numbers, which upstream's parse errors print.
fn go_node_kind(node: &Node) -> u8 {
    match node.kind {
        NodeKind::Sequence(_) => 2,
        NodeKind::Mapping(_) => 4,
        NodeKind::Scalar(_) => 8,
        NodeKind::Alias(_) => 16,
    }
}

/// An empty document (`---` alone, or only comments) holds no object.
fn is_empty_document(node: &Node) -> bool {
    node.tag.is_none() && node.as_str() == Some("") && node.is_null()
}

/// The documents of a file and the indexes of those that are objects (mappings); the texts
/// are upstream's (`failed to parse input bytes: ...`, `failed to extract objects: ...`).
pub(crate) fn parse_objects(bytes: &[u8]) -> Result<(Vec<Document>, Vec<usize>), String> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| format!("failed to parse input bytes: invalid UTF-8: {e}"))?;
    let docs = yaml::parse_stream(text).map_err(|e| format!("failed to parse input bytes: {e}"))?;
    let mut objects = Vec::new();
    for (i, d) in docs.iter().enumerate() {
        if d.root.is_mapping() {
            objects.push(i);
        } else if !is_empty_document(&d.root) {
            return Err(format!(
                "failed to extract objects: unhandled node kind {}",
                go_node_kind(&d.root)
            ));
        }
    }
    Ok((docs, objects))
}

/// A file holding exactly one object, of `kind` and named `name` when those are given
/// (upstream `getFileKubeObject`, with its error texts). Gives the documents and the index
/// of the object among them.
pub(crate) fn single_object(
    files: &PackageFiles,
    prr: &Prr<'_>,
    file: &str,
    kind: &str,
    name: &str,
) -> Result<(Vec<Document>, usize), MutationError> {
    let Some(bytes) = files.get(file) else {
        return Err(MutationError(format!(
            "{file:?} not found in PackageRevisionResources '{prr}'"
        )));
    };
    let parse_failed = |e: String| {
        MutationError(format!(
            "failed to parse {file:?} of PackageRevisionResources {prr}: {e}"
        ))
    };
    let (docs, objects) = parse_objects(bytes).map_err(parse_failed)?;
    let [index] = objects[..] else {
        return Err(parse_failed(format!(
            "expected exactly one object, got {}",
            objects.len()
        )));
    };
    let object = &docs[index].root;
    if !kind.is_empty() && str_at(object, &["kind"]) != kind {
        return Err(MutationError(format!(
            "{file:?} does not contain kind {kind:?} in PackageRevisionResources '{prr}'"
        )));
    }
    if !name.is_empty() && str_at(object, &["metadata", "name"]) != name {
        return Err(MutationError(format!(
            "{file:?} does not contain resource named {name:?} in PackageRevisionResources '{prr}'"
        )));
    }
    Ok((docs, index))
}

/// Writes the documents back when one of them changed; unchanged documents keep their bytes.
pub(crate) fn write_back(files: &mut PackageFiles, file: &str, docs: &[Document]) {
    if docs.iter().any(Document::is_modified) {
        files.insert(file.to_string(), yaml::emit_stream(docs).into_bytes());
    }
}

/// The scalar text at `path` ("" when absent or not a scalar).
pub(crate) fn str_at<'a>(node: &'a Node, path: &[&str]) -> &'a str {
    node.get_path(path)
        .and_then(Node::as_str)
        .unwrap_or_default()
}

/// Whether the files differ: a file added, removed or with other bytes, except a Kptfile
/// whose text differs but whose content is the same (upstream compares Kptfiles
/// semantically since tools format them differently).
pub(crate) fn changed(before: &PackageFiles, after: &PackageFiles) -> bool {
    if before.len() != after.len() {
        return true;
    }
    before.iter().any(|(path, old)| match after.get(path) {
        None => true,
        Some(new) if new == old => false,
        Some(new) => !(path == kpt::kptfile::KPTFILE && kptfiles_equal(old, new)),
    })
}

/// Upstream `kptfilesEqual`: both decode and decode to the same Kptfile. A Kptfile kpt's
/// strict decoding refuses (unknown fields) is compared as plain YAML data instead.
fn kptfiles_equal(a: &[u8], b: &[u8]) -> bool {
    let (Ok(a), Ok(b)) = (std::str::from_utf8(a), std::str::from_utf8(b)) else {
        return false;
    };
    if let (Ok(a), Ok(b)) = (Kptfile::parse(a), Kptfile::parse(b)) {
        return a == b;
    }
    let data = |t: &str| yaml::parse_one(t).ok().and_then(|n| n.try_to_value().ok());
    matches!((data(a), data(b)), (Some(a), Some(b)) if a == b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_files_by_base_name() {
        for yes in ["a.yaml", "d/b.yml", "Kptfile", "sub/Kptfile"] {
            assert!(holds_resources(yes), "{yes}");
        }
        for no in ["README.md", "Kptfile.bak", ".yaml", "a.json", "yaml"] {
            assert!(!holds_resources(no), "{no}");
        }
    }

    #[test]
    fn parse_objects_errors_as_upstream() {
        let err = parse_objects(b"baddata").err();
        assert_eq!(
            err.as_deref(),
            Some("failed to extract objects: unhandled node kind 8")
        );
        let err = parse_objects(b"- a\n").err();
        assert_eq!(
            err.as_deref(),
            Some("failed to extract objects: unhandled node kind 2")
        );
        let err = parse_objects(b"a: [\n").err().unwrap_or_default();
        assert!(err.starts_with("failed to parse input bytes: "), "{err}");
        let (docs, objects) = parse_objects(b"---\na: 1\n---\n---\nb: 2\n").expect("parses");
        assert_eq!(docs.len(), 3);
        assert_eq!(objects, vec![0, 2]);
    }

    #[test]
    fn single_object_errors_as_upstream() {
        let prr = Prr {
            namespace: "default",
            name: "prr",
        };
        let mut files = PackageFiles::new();
        let err = |files: &PackageFiles, kind: &str, name: &str| {
            single_object(files, &prr, "f.yaml", kind, name)
                .err()
                .map(|e| e.0)
                .unwrap_or_default()
        };
        assert_eq!(
            err(&files, "", ""),
            "\"f.yaml\" not found in PackageRevisionResources 'default/prr'"
        );
        files.insert("f.yaml".into(), b"a: 1\n---\nb: 2\n".to_vec());
        assert_eq!(
            err(&files, "", ""),
            "failed to parse \"f.yaml\" of PackageRevisionResources default/prr: expected exactly one object, got 2"
        );
        files.insert(
            "f.yaml".into(),
            b"kind: Secret\nmetadata:\n  name: x\n".to_vec(),
        );
        assert_eq!(
            err(&files, "ConfigMap", ""),
            "\"f.yaml\" does not contain kind \"ConfigMap\" in PackageRevisionResources 'default/prr'"
        );
        assert_eq!(
            err(&files, "Secret", "y"),
            "\"f.yaml\" does not contain resource named \"y\" in PackageRevisionResources 'default/prr'"
        );
        assert!(single_object(&files, &prr, "f.yaml", "Secret", "x").is_ok());
    }

    #[test]
    fn kptfile_compared_semantically() {
        let a = b"apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: a\ninfo:\n  description: d\n";
        let b =
            b"apiVersion: kpt.dev/v1\nkind: Kptfile\ninfo: {description: d}\nmetadata: {name: a}\n";
        let mut before = PackageFiles::new();
        before.insert("Kptfile".into(), a.to_vec());
        let mut after = before.clone();
        assert!(!changed(&before, &after));
        after.insert("Kptfile".into(), b.to_vec());
        assert!(!changed(&before, &after));
        after.insert(
            "Kptfile".into(),
            b"apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: b\n".to_vec(),
        );
        assert!(changed(&before, &after));
        // unknown fields: compared as data
        before.insert(
            "Kptfile".into(),
            b"kind: Kptfile\nextra: {a: 1, b: 2}\n".to_vec(),
        );
        after.insert(
            "Kptfile".into(),
            b"kind: Kptfile\nextra:\n  a: 1\n  b: 2\n".to_vec(),
        );
        assert!(!changed(&before, &after));
        after.insert(
            "Kptfile".into(),
            b"kind: Kptfile\nextra:\n  a: 1\n".to_vec(),
        );
        assert!(changed(&before, &after));
        after.insert("Kptfile".into(), b"kind: [\n".to_vec());
        assert!(changed(&before, &after));
        // other files compare by bytes
        before.insert("x.yaml".into(), b"a: 1\n".to_vec());
        after = before.clone();
        after.insert("x.yaml".into(), b"a:  1\n".to_vec());
        assert!(changed(&before, &after));
        after = before.clone();
        after.insert("y.yaml".into(), b"a: 1\n".to_vec());
        assert!(changed(&before, &after));
        after.remove("x.yaml");
        assert!(changed(&before, &after));
    }
}
