//! Reading a package directory into memory and writing changes back.

use std::collections::BTreeMap;
use std::io;
use std::path::Path;

use super::PackageFiles;
use super::replace::Replacer;

/// Read every regular file under `dir` (skipping `.git` and symlinks).
/// Returns the files and the paths of skipped symlinks.
pub fn read_dir(dir: &Path) -> io::Result<(PackageFiles, Vec<String>)> {
    let mut files = BTreeMap::new();
    let mut symlinks = Vec::new();
    walk(dir, "", &mut files, &mut symlinks)?;
    Ok((PackageFiles::from_map(files), symlinks))
}

fn walk(
    base: &Path,
    rel: &str,
    files: &mut BTreeMap<String, Vec<u8>>,
    symlinks: &mut Vec<String>,
) -> io::Result<()> {
    let dir = if rel.is_empty() {
        base.to_path_buf()
    } else {
        base.join(rel)
    };
    let mut entries: Vec<_> = std::fs::read_dir(&dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == ".git" {
            continue;
        }
        let path = super::join(rel, &name);
        let ft = entry.file_type()?;
        if ft.is_symlink() {
            symlinks.push(path);
        } else if ft.is_dir() {
            walk(base, &path, files, symlinks)?;
        } else if ft.is_file() {
            files.insert(path, std::fs::read(entry.path())?);
        }
    }
    Ok(())
}

/// Make `dir` hold `after`, given it held `before`: write changed and new files,
/// delete removed ones. Files never read (not in either map) are left alone.
/// New content is written to a temporary file and renamed, so a crash never leaves
/// a half-written file ([`Replacer`] keeps that from costing an inode per file).
pub fn write_changes(dir: &Path, before: &PackageFiles, after: &PackageFiles) -> io::Result<()> {
    let changed: Vec<(&String, &Vec<u8>)> = after
        .as_map()
        .iter()
        .filter(|(path, content)| before.get(path) != Some(content.as_slice()))
        .collect();
    // kyaml's package writer checks every output path before it writes any: a resource
    // whose path names a directory fails the write and leaves the package as it was.
    for (path, _) in &changed {
        if std::fs::symlink_metadata(dir.join(path)).is_ok_and(|m| m.is_dir()) {
            return Err(io::Error::other(format!(
                "config.kubernetes.io/path cannot be a directory: {path}"
            )));
        }
    }
    let mut replacer = Replacer::default();
    for (path, content) in changed {
        replacer.write(&dir.join(path), content, before.get(path).is_some())?;
    }
    replacer.finish()?;
    for path in before.paths() {
        if after.get(path).is_none() {
            match std::fs::remove_file(dir.join(path)) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_naming_a_directory_fails_before_anything_is_written() {
        let tmp = tempfile::tempdir().expect("tmp");
        std::fs::create_dir_all(tmp.path().join("taken")).expect("mkdir");
        let mut after = PackageFiles::new();
        after.insert("fine.yaml", b"a: 1\n".to_vec());
        after.insert("taken", b"b: 2\n".to_vec());
        let e = write_changes(tmp.path(), &PackageFiles::new(), &after).expect_err("dir");
        assert_eq!(
            e.to_string(),
            "config.kubernetes.io/path cannot be a directory: taken"
        );
        let left: Vec<_> = std::fs::read_dir(tmp.path())
            .expect("read")
            .filter_map(|e| e.ok().map(|e| e.file_name()))
            .collect();
        assert_eq!(left, [std::ffi::OsString::from("taken")]);
    }
}
