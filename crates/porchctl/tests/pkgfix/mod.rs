//! A package written from literal files into a temporary directory, for the `fn` command
//! tests (shared by the test binaries that `mod pkgfix;` it).

use std::path::PathBuf;

/// Writes `files` (path relative to the package, text) under `<tmp>/pkg`; `.sh` files are
/// made executable. Returns the temporary directory (kept alive by the caller) and the package.
pub fn package(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("pkg");
    for (rel, text) in files {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, text).expect("write");
        if rel.ends_with(".sh") {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        }
    }
    (tmp, dir)
}
