//! Packages in memory: a tree of files keyed by slash path, plus the structure kpt
//! sees in it (the Kptfile, nested sub-packages, `.krmignore`, which files are KRM).
//!
//! Everything here is pure: [`fs`] converts between directories and [`PackageFiles`].

pub mod fs;
pub mod krmignore;
mod replace;
pub mod resources;
pub mod walk;
mod write;

use std::collections::BTreeMap;

use crate::kptfile::KPTFILE;

/// The files of a package tree: slash-separated relative path -> content.
/// Non-KRM files (README, scripts) are carried through untouched.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PackageFiles {
    files: BTreeMap<String, Vec<u8>>,
}

impl PackageFiles {
    /// An empty tree.
    pub fn new() -> Self {
        Self::default()
    }
    /// From a map of path -> content.
    pub fn from_map(files: BTreeMap<String, Vec<u8>>) -> Self {
        PackageFiles { files }
    }
    /// The map of path -> content.
    pub fn into_map(self) -> BTreeMap<String, Vec<u8>> {
        self.files
    }
    /// Borrow the map.
    pub fn as_map(&self) -> &BTreeMap<String, Vec<u8>> {
        &self.files
    }
    /// Content of a file.
    pub fn get(&self, path: &str) -> Option<&[u8]> {
        self.files.get(path).map(Vec::as_slice)
    }
    /// Content of a file as UTF-8 text.
    pub fn get_text(&self, path: &str) -> Option<&str> {
        self.get(path).and_then(|b| std::str::from_utf8(b).ok())
    }
    /// Add or replace a file.
    pub fn insert(&mut self, path: impl Into<String>, content: impl Into<Vec<u8>>) {
        self.files.insert(path.into(), content.into());
    }
    /// Remove a file.
    pub fn remove(&mut self, path: &str) -> Option<Vec<u8>> {
        self.files.remove(path)
    }
    /// All paths, sorted.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.files.keys().map(String::as_str)
    }
    /// Number of files.
    pub fn len(&self) -> usize {
        self.files.len()
    }
    /// No files.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Directories (slash paths, "" = root) that hold a Kptfile, sorted.
    pub fn package_dirs(&self) -> Vec<String> {
        self.files
            .keys()
            .filter_map(|p| {
                if p == KPTFILE {
                    Some(String::new())
                } else {
                    p.strip_suffix(&format!("/{KPTFILE}")).map(str::to_string)
                }
            })
            .collect()
    }

    /// The first Kptfile-bearing directories strictly below `pkg` (kpt's "direct
    /// sub-packages"), sorted by path.
    pub fn direct_subpackages(&self, pkg: &str) -> Vec<String> {
        let all = self.package_dirs();
        let below: Vec<&String> = all.iter().filter(|d| is_strictly_under(d, pkg)).collect();
        let mut out: Vec<String> = below
            .iter()
            .filter(|d| {
                !below
                    .iter()
                    .any(|other| other != *d && is_strictly_under(d, other))
            })
            .map(|d| (*d).clone())
            .collect();
        out.sort();
        out
    }

    /// Files that belong to package `pkg` itself (not to a nested sub-package),
    /// as paths relative to `pkg`, in lexical order.
    pub fn own_files(&self, pkg: &str) -> Vec<(String, String)> {
        let subs = self.direct_subpackages(pkg);
        self.files
            .keys()
            .filter_map(|p| {
                let rel = relative_to(p, pkg)?;
                if subs.iter().any(|s| p.starts_with(&format!("{s}/"))) {
                    return None;
                }
                Some((p.clone(), rel.to_string()))
            })
            .collect()
    }
}

/// `path` relative to directory `dir` ("" = root), if under it.
pub fn relative_to<'a>(path: &'a str, dir: &str) -> Option<&'a str> {
    if dir.is_empty() {
        Some(path)
    } else {
        path.strip_prefix(dir)?.strip_prefix('/')
    }
}

/// Put items read from several packages in the order kyaml's `LocalPackageReader` reads
/// them: `filepath.Walk` visits a directory's entries by name and descends into a
/// directory where its name sorts, so files of sub-packages interleave with their
/// parent's (`a.yaml`, `c/n.yaml`, `db/m.yaml`, `z.yaml`). Comparing the paths component
/// by component gives that order; the sort is stable, so a file's documents keep theirs.
pub fn sort_in_walk_order(items: &mut [crate::yaml::Node]) {
    items.sort_by(|a, b| {
        let path = |n: &crate::yaml::Node| resources::item_path(n).unwrap_or_default().to_owned();
        let (pa, pb) = (path(a), path(b));
        pa.split('/').cmp(pb.split('/'))
    });
}

/// Join a directory ("" = root) and a relative path.
pub fn join(dir: &str, rel: &str) -> String {
    if dir.is_empty() {
        rel.to_string()
    } else {
        format!("{dir}/{rel}")
    }
}

fn is_strictly_under(d: &str, parent: &str) -> bool {
    if d == parent {
        return false;
    }
    parent.is_empty() || d.starts_with(&format!("{parent}/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(paths: &[&str]) -> PackageFiles {
        let mut t = PackageFiles::new();
        for p in paths {
            t.insert(*p, b"x".to_vec());
        }
        t
    }

    #[test]
    fn finds_direct_subpackages_at_any_depth() {
        let t = tree(&[
            "Kptfile",
            "a/b/c/Kptfile",
            "a/b/c/d/Kptfile",
            "db/Kptfile",
            "db/x.yaml",
            "x.yaml",
        ]);
        assert_eq!(t.direct_subpackages(""), vec!["a/b/c", "db"]);
        assert_eq!(t.direct_subpackages("a/b/c"), vec!["a/b/c/d"]);
        let own: Vec<String> = t.own_files("").into_iter().map(|(_, r)| r).collect();
        assert_eq!(own, vec!["Kptfile", "x.yaml"]);
        let own_db: Vec<String> = t.own_files("db").into_iter().map(|(_, r)| r).collect();
        assert_eq!(own_db, vec!["Kptfile", "x.yaml"]);
    }
}
