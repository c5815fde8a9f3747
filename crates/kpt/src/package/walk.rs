//! Reading a package and all its sub-packages as one stream, as kyaml's
//! `LocalPackageReader` does with `IncludeSubpackages` (kpt's `fn source` and `fn eval`):
//! one walk over the tree in `filepath.Walk` order, each package's `.krmignore` applied
//! through a stack of matchers as kyaml keeps it.

use super::krmignore::KrmIgnore;
use super::resources::{ResourceError, Sources, is_resource_file, read_file};
use super::{PackageFiles, join};
use crate::kptfile::KPTFILE;
use crate::yaml::Node;

/// The resources of the package at the root of `files` and of every sub-package under
/// it, in kyaml's walk order, each annotated with its root-relative path, its index in
/// its file and the package (directory holding the nearest Kptfile) it belongs to.
///
/// As kyaml's walk does: a directory a `.krmignore` matches is skipped whole, a
/// sub-package included; a sub-package's files are matched by its own `.krmignore`
/// only (an empty one when it has none), never by its parent's. kyaml drops a
/// sub-package's matcher when the walk reaches a path its directory name is not a text
/// prefix of, one matcher per path, so a sibling directory whose name starts with the
/// sub-package's (`db` after `d`) is still matched, path `../db/...`, by the
/// sub-package's rules; that is kept.
pub fn read_tree(files: &PackageFiles, sources: &mut Sources) -> Result<Vec<Node>, ResourceError> {
    let mut paths: Vec<&str> = files.paths().collect();
    paths.sort_by(|a, b| a.split('/').cmp(b.split('/')));
    let ignore_of = |dir: &str| {
        files
            .get_text(&join(dir, ".krmignore"))
            .map(KrmIgnore::parse)
            .unwrap_or_default()
    };
    let mut stack: Vec<(String, KrmIgnore)> = vec![(String::new(), ignore_of(""))];
    let mut visited: std::collections::HashSet<&str> = std::collections::HashSet::new();
    let mut skipped: Vec<String> = Vec::new();
    let mut packages: Vec<String> = vec![String::new()];
    let mut items = Vec::new();
    'files: for path in paths {
        if skipped.iter().any(|d| path.starts_with(&format!("{d}/"))) {
            continue;
        }
        // Directories are visited, in walk order, before the first file under them.
        let mut at = 0;
        while let Some(i) = path[at..].find('/') {
            let dir = &path[..at + i];
            at += i + 1;
            if !visited.insert(dir) {
                continue;
            }
            if top_matches(&mut stack, dir, true) {
                skipped.push(dir.to_string());
                continue 'files;
            }
            if files.get(&join(dir, KPTFILE)).is_some() {
                stack.push((dir.to_string(), ignore_of(dir)));
                packages.push(dir.to_string());
            }
        }
        if top_matches(&mut stack, path, false) {
            continue;
        }
        let name = path.rsplit('/').next().unwrap_or(path);
        if !is_resource_file(name) {
            continue;
        }
        // The package a file belongs to: the deepest package directory above it.
        let pkg = packages
            .iter()
            .filter(|p| p.is_empty() || path.starts_with(&format!("{p}/")))
            .max_by_key(|p| p.len())
            .cloned()
            .unwrap_or_default();
        read_file(files, path, path, &pkg, &mut items, sources)?;
    }
    Ok(items)
}

/// kyaml's `matchFile`/`matchDir`: pop the top matcher if `path` is not under its
/// directory (a text prefix test, one matcher at most), then ask the top one.
fn top_matches(stack: &mut Vec<(String, KrmIgnore)>, path: &str, is_dir: bool) -> bool {
    for j in (0..stack.len()).rev() {
        if !path.starts_with(stack[j].0.as_str()) {
            stack.truncate(j);
            break;
        }
    }
    let Some((base, matcher)) = stack.last() else {
        return false;
    };
    matcher.matches(&relative(base, path), is_dir)
}

/// Go's `filepath.Rel(base, path)` for slash paths under one root ("" = the root).
fn relative(base: &str, path: &str) -> String {
    if base.is_empty() {
        return path.to_string();
    }
    let b: Vec<&str> = base.split('/').collect();
    let p: Vec<&str> = path.split('/').collect();
    let common = b.iter().zip(&p).take_while(|(x, y)| x == y).count();
    let mut parts: Vec<&str> = vec![".."; b.len() - common];
    parts.extend(&p[common..]);
    if parts.is_empty() {
        ".".to_string()
    } else {
        parts.join("/")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::package::resources::item_path;

    fn tree(entries: &[(&str, &str)]) -> PackageFiles {
        let mut t = PackageFiles::new();
        for (p, text) in entries {
            t.insert(*p, text.as_bytes().to_vec());
        }
        t
    }

    fn read_paths(t: &PackageFiles) -> Vec<String> {
        read_tree(t, &mut Sources::default())
            .expect("read")
            .iter()
            .map(|n| item_path(n).unwrap_or_default().to_string())
            .collect()
    }

    const KF: &str = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: k\n";
    const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n";

    #[test]
    fn a_parent_krmignore_can_skip_a_sub_package_but_not_its_files() {
        let t = tree(&[
            ("Kptfile", KF),
            (".krmignore", "hidden\nlocal.yaml\n"),
            ("hidden/Kptfile", KF),
            ("hidden/r.yaml", CM),
            ("shown/Kptfile", KF),
            ("shown/local.yaml", CM),
            ("shown/.krmignore", "other.yaml\n"),
            ("shown/other.yaml", CM),
            ("local.yaml", CM),
            ("top.yaml", CM),
        ]);
        assert_eq!(
            read_paths(&t),
            ["Kptfile", "shown/Kptfile", "shown/local.yaml", "top.yaml"]
        );
    }

    #[test]
    fn a_sibling_with_the_sub_package_name_as_prefix_keeps_its_matcher() {
        let t = tree(&[
            ("Kptfile", KF),
            (".krmignore", "n.yaml\n"),
            ("d/Kptfile", KF),
            ("d/.krmignore", "m.yaml\n"),
            ("db/m.yaml", CM),
            ("db/n.yaml", CM),
            ("z/n.yaml", CM),
        ]);
        // `db/*` is matched by `d`'s rules (`../db/m.yaml`), `z/n.yaml` by the root's
        // again once `d`'s matcher is gone.
        assert_eq!(read_paths(&t), ["Kptfile", "d/Kptfile", "db/n.yaml"]);
    }
}
