//! A package revision's files on the client: the `.KptRevisionMetadata` file pull adds and
//! push reads its resourceVersion from, the ResourceList pull prints and push reads from
//! stdin, and package directories.

use std::collections::BTreeMap;
use std::path::Path;

use kpt::package::resources::{self as kres, INDEX, LEGACY_INDEX, LEGACY_PATH, PATH};
use kpt::resource_list::ResourceList;
use kpt::yaml::{self, Node};
use serde_json::Value;

use crate::remote::RemoteError;

/// The file that carries the PackageRevisionResources' object metadata.
pub const REVISION_METADATA_FILE: &str = ".KptRevisionMetadata";
/// Its kind.
pub const REVISION_METADATA_KIND: &str = "KptRevisionMetadata";

/// ObjectMeta's JSON fields in Go's struct order (the order upstream writes them).
const OBJECT_META_ORDER: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

/// The `.KptRevisionMetadata` document for a PackageRevisionResources object. Its
/// apiVersion is empty because upstream's typed client drops the TypeMeta it read.
pub fn revision_metadata(prr: &Value) -> String {
    let mut meta = Node::mapping();
    if let Some(Value::Object(m)) = prr.get("metadata") {
        let known = OBJECT_META_ORDER.iter().filter_map(|k| m.get_key_value(*k));
        let rest = m
            .iter()
            .filter(|(k, _)| !OBJECT_META_ORDER.contains(&k.as_str()));
        for (k, v) in known.chain(rest) {
            meta.set(k, Node::from_value(v));
        }
    }
    let mut root = Node::mapping();
    root.set("apiVersion", Node::string(""));
    root.set("kind", Node::string(REVISION_METADATA_KIND));
    root.set("metadata", meta);
    yaml::emit_node(&root, yaml::SeqIndent::Compact)
}

/// kio's `MatchAll` plus the Kptfile and the metadata file, on the base name.
fn is_resource_file(path: &str) -> bool {
    let base = path.rsplit('/').next().unwrap_or(path);
    base.ends_with(".yaml")
        || base.ends_with(".yml")
        || base == "Kptfile"
        || base == REVISION_METADATA_FILE
}

/// The resources as one ResourceList, as upstream's pull prints it: resource files only,
/// sorted by path then index, each item annotated with its path and index.
pub fn to_resource_list(resources: &BTreeMap<String, String>) -> Result<String, RemoteError> {
    let mut items = Vec::new();
    for (path, text) in resources.iter().filter(|(p, _)| is_resource_file(p)) {
        let docs =
            yaml::parse_stream(text).map_err(|e| RemoteError::Decode(format!("{path}: {e}")))?;
        let roots = docs
            .into_iter()
            .map(|d| d.root)
            .filter(|n| !(n.is_null() || (n.is_scalar() && n.as_str() == Some(""))));
        for (index, mut node) in roots.enumerate() {
            if !node.is_mapping() {
                continue;
            }
            let index = index.to_string();
            for (k, v) in [
                (LEGACY_INDEX, index.as_str()),
                (INDEX, index.as_str()),
                (PATH, path.as_str()),
                (LEGACY_PATH, path.as_str()),
            ] {
                kres::set_annotation(&mut node, k, v);
            }
            items.push(node);
        }
    }
    Ok(ResourceList::new(items).to_yaml())
}

/// The files of a ResourceList read from stdin: items grouped by their path annotation
/// (`<namespace>/<name>.yaml` when they have none), path and index annotations removed.
pub fn from_resource_list(text: &str) -> Result<BTreeMap<String, String>, RemoteError> {
    let docs = yaml::parse_stream(text).map_err(|e| RemoteError::Usage(e.to_string()))?;
    let items: Vec<Node> = match docs.as_slice() {
        [one] if one.root.get("kind").and_then(Node::as_str) == Some("ResourceList") => {
            ResourceList::from_node(one.root.clone())
                .map_err(|e| RemoteError::Usage(e.to_string()))?
                .items
        }
        _ => docs
            .into_iter()
            .map(|d| d.root)
            .filter(Node::is_mapping)
            .collect(),
    };
    let mut by_path: BTreeMap<String, Vec<(usize, Node)>> = BTreeMap::new();
    for (pos, mut item) in items.into_iter().enumerate() {
        let path = match kres::item_path(&item) {
            Some(p) => p.to_string(),
            None => default_path(&item),
        };
        let index = kres::item_index(&item)
            .and_then(|i| i.parse::<usize>().ok())
            .unwrap_or(pos);
        for k in [LEGACY_INDEX, INDEX, PATH, LEGACY_PATH] {
            kres::remove_annotation(&mut item, k);
        }
        by_path.entry(path).or_default().push((index, item));
    }
    Ok(by_path
        .into_iter()
        .map(|(path, mut nodes)| {
            nodes.sort_by_key(|(i, _)| *i);
            let docs: Vec<yaml::Document> = nodes
                .into_iter()
                .map(|(_, n)| yaml::Document::new(n))
                .collect();
            (path, yaml::emit_stream(&docs))
        })
        .collect())
}

/// Upstream push's path for an item without one: `<namespace or non-namespaced>/<name or
/// unnamed>.yaml`.
fn default_path(item: &Node) -> String {
    let get = |k: &str| {
        item.get_path(&["metadata", k])
            .and_then(Node::as_str)
            .filter(|s| !s.is_empty())
    };
    format!(
        "{}/{}.yaml",
        get("namespace").unwrap_or("non-namespaced"),
        get("name").unwrap_or("unnamed")
    )
}

/// The resourceVersion recorded in `.KptRevisionMetadata` (empty when it has none).
pub fn resource_version(
    resources: &BTreeMap<String, String>,
    namespace: &str,
    name: &str,
) -> Result<String, RemoteError> {
    let Some(text) = resources.get(REVISION_METADATA_FILE) else {
        return Err(RemoteError::Usage(format!(
            "{REVISION_METADATA_FILE:?} not found in PackageRevisionResources '{namespace}/{name}'"
        )));
    };
    let node = yaml::parse_one(text).map_err(|e| {
        RemoteError::Usage(format!(
            "failed to parse {REVISION_METADATA_FILE:?} of PackageRevisionResources {namespace}/{name}: {e}"
        ))
    })?;
    if node.get("kind").and_then(Node::as_str) != Some(REVISION_METADATA_KIND) {
        return Err(RemoteError::Usage(format!(
            "{REVISION_METADATA_FILE:?} does not contain kind {REVISION_METADATA_KIND:?} in PackageRevisionResources '{namespace}/{name}'"
        )));
    }
    Ok(node
        .get_path(&["metadata", "resourceVersion"])
        .and_then(Node::as_str)
        .unwrap_or_default()
        .to_string())
}

/// Writes every file into `dir`, which must not exist yet.
pub fn write_dir(
    resources: &BTreeMap<String, String>,
    dir: &Path,
    force: bool,
) -> Result<(), RemoteError> {
    if dir.exists() {
        // Pulling a revision of the package a directory already holds (its Kptfile
        // names the same package) refreshes it, as `--force` does for any directory.
        let same_package =
            kptfile_name(&std::fs::read_to_string(dir.join("Kptfile")).unwrap_or_default())
                .is_some_and(|held| {
                    Some(held) == resources.get("Kptfile").and_then(|k| kptfile_name(k))
                });
        if !force && !same_package {
            return Err(RemoteError::Usage(format!(
                "directory {:?} already exists, please delete the directory and retry; you may overwrite the directory with --force",
                dir.display().to_string()
            )));
        }
        std::fs::remove_dir_all(dir)?;
    }
    // Upstream writes with os.MkdirAll(…, 0750) and os.WriteFile(…, 0600) (the umask
    // applies on top).
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let mut dirs = std::fs::DirBuilder::new();
    dirs.recursive(true).mode(0o750);
    dirs.create(dir)?;
    for (path, text) in resources {
        let file = dir.join(path);
        if let Some(parent) = file.parent() {
            dirs.create(parent)?;
        }
        let mut out = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&file)?;
        std::io::Write::write_all(&mut out, text.as_bytes())?;
    }
    Ok(())
}

/// `metadata.name` of Kptfile text.
fn kptfile_name(text: &str) -> Option<String> {
    let root = yaml::parse_one(text).ok()?;
    root.get_path(&["metadata", "name"])
        .and_then(Node::as_str)
        .map(str::to_string)
}

/// Every regular file under `dir`, keyed by its `/`-separated relative path.
pub fn read_dir(dir: &Path) -> Result<BTreeMap<String, String>, RemoteError> {
    // Upstream walks DIR with filepath.Walk, whose first step is an lstat of DIR: a
    // missing DIR fails with that call's Go error text.
    if let Err(e) = std::fs::symlink_metadata(dir) {
        return Err(RemoteError::Usage(format!(
            "lstat {}: {}",
            dir.display(),
            go_errno_text(&e)
        )));
    }
    let mut out = BTreeMap::new();
    read_into(dir, dir, &mut out)?;
    Ok(out)
}

/// An OS error as Go's `syscall.Errno` prints it (lower case, no error number).
fn go_errno_text(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        std::io::ErrorKind::NotADirectory => "not a directory".into(),
        _ => {
            let text = e.to_string();
            let text = text.split(" (os error").next().unwrap_or_default();
            text.to_lowercase()
        }
    }
}

fn read_into(
    root: &Path,
    dir: &Path,
    out: &mut BTreeMap<String, String>,
) -> Result<(), RemoteError> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for e in entries {
        let path = e.path();
        let ty = e.file_type()?;
        if ty.is_dir() {
            read_into(root, &path, out)?;
        } else if ty.is_file() {
            let bytes = std::fs::read(&path)?;
            let text = String::from_utf8(bytes).map_err(|_| {
                RemoteError::Usage(format!(
                    "file {} is not a valid UTF-8 text file: current porch API doesn't support binary files",
                    path.display()
                ))
            })?;
            let rel = path
                .strip_prefix(root)
                .map_err(|e| RemoteError::Usage(e.to_string()))?;
            let rel: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            out.insert(rel.join("/"), text);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pulled_files_are_private_as_upstream_writes_them() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("pulled");
        let files = BTreeMap::from([("sub/cm.yaml".to_string(), "a: 1\n".to_string())]);
        write_dir(&files, &dir, false).expect("written");
        let mode = |p: &Path| std::fs::metadata(p).expect("stat").permissions().mode() & 0o777;
        assert_eq!(mode(&dir.join("sub/cm.yaml")), 0o600);
        // The umask may only take bits away from 0750.
        assert_eq!(mode(&dir.join("sub")) & !0o750, 0);
        assert_eq!(mode(&dir) & 0o007, 0);
    }

    #[test]
    fn a_missing_directory_fails_as_go_lstat_does() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let gone = tmp.path().join("not-pulled");
        let e = read_dir(&gone).expect_err("missing");
        assert_eq!(
            e.to_string(),
            format!("lstat {}: no such file or directory", gone.display())
        );
    }

    fn files(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect()
    }

    #[test]
    fn metadata_document() {
        let prr = json!({"apiVersion": "porch.kpt.dev/v1alpha1", "kind": "PackageRevisionResources",
            "metadata": {"resourceVersion": "abc", "uid": "u-1", "namespace": "ns", "name": "git.p.ws",
                         "creationTimestamp": "2026-01-01T00:00:00Z"}});
        assert_eq!(
            revision_metadata(&prr),
            "apiVersion: \"\"\nkind: KptRevisionMetadata\nmetadata:\n  name: git.p.ws\n  namespace: ns\n  uid: u-1\n  resourceVersion: abc\n  creationTimestamp: \"2026-01-01T00:00:00Z\"\n"
        );
    }

    #[test]
    fn pull_then_push_round_trip() {
        let pkg = files(&[
            (
                "Kptfile",
                "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: bar # keep\n",
            ),
            (
                "sub/cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n",
            ),
            ("README.md", "hi\n"),
            (
                REVISION_METADATA_FILE,
                "apiVersion: \"\"\nkind: KptRevisionMetadata\nmetadata:\n  name: r.p.ws\n  resourceVersion: \"7\"\n",
            ),
        ]);
        let list = to_resource_list(&pkg).expect("list");
        insta::assert_snapshot!(list);
        let back = from_resource_list(&list).expect("files");
        assert_eq!(
            back.keys().collect::<Vec<_>>(),
            vec![REVISION_METADATA_FILE, "Kptfile", "sub/cm.yaml"]
        );
        assert_eq!(back["Kptfile"], pkg["Kptfile"]);
        assert_eq!(back["sub/cm.yaml"], pkg["sub/cm.yaml"]);
        assert_eq!(resource_version(&back, "ns", "r.p.ws").expect("rv"), "7");
    }

    #[test]
    fn push_paths_and_metadata_errors() {
        let back = from_resource_list(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: x\n",
        )
        .expect("files");
        assert!(back.contains_key("x/a.yaml"));
        let err = resource_version(&BTreeMap::new(), "ns", "n").expect_err("missing");
        assert_eq!(
            err.to_string(),
            "\".KptRevisionMetadata\" not found in PackageRevisionResources 'ns/n'"
        );
    }

    #[test]
    fn directories() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("pkg");
        let pkg = files(&[("Kptfile", "k\n"), ("a/b/c.yaml", "x: 1\n")]);
        write_dir(&pkg, &dir, false).expect("write");
        assert_eq!(read_dir(&dir).expect("read"), pkg);
        let err = write_dir(&pkg, &dir, false).expect_err("exists");
        assert!(err.to_string().contains("already exists"), "{err}");
        std::fs::write(dir.join("bin"), [0xff, 0xfe]).expect("write");
        assert!(read_dir(&dir).is_err());
    }

    #[test]
    fn pulling_over_a_directory() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("pkg");
        let kf = |name: &str| {
            format!("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {name}\n")
        };
        let v1 = files(&[
            ("Kptfile", &kf("test-package")),
            ("a.yaml", "x: 1\n"),
            ("old.yaml", "y: 1\n"),
        ]);
        let v2 = files(&[("Kptfile", &kf("test-package")), ("a.yaml", "x: 2\n")]);
        let other = files(&[("Kptfile", &kf("test-package-2"))]);
        write_dir(&v1, &dir, false).expect("new directory");
        // Another revision of the same package replaces the directory's contents.
        write_dir(&v2, &dir, false).expect("same package");
        assert_eq!(read_dir(&dir).expect("read"), v2);
        // Another package is refused, unless forced.
        let err = write_dir(&other, &dir, false).expect_err("another package");
        assert_eq!(
            err.to_string(),
            format!(
                "directory {:?} already exists, please delete the directory and retry; you may overwrite the directory with --force",
                dir.display().to_string()
            )
        );
        assert_eq!(read_dir(&dir).expect("read"), v2, "nothing written");
        write_dir(&other, &dir, true).expect("forced");
        assert_eq!(read_dir(&dir).expect("read"), other);
    }
}
