//! Locating the upstream conformance data (never copied into this repository).

use std::path::PathBuf;

/// `$PORCH_CONFORMANCE_DIR`, else `<workspace>/../shared/conformance`, if it exists.
/// When absent, prints how to get it so the calling test can return early as skipped.
pub fn dir() -> Option<PathBuf> {
    let dir = std::env::var_os("PORCH_CONFORMANCE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance")
        });
    if dir.join("porch").is_dir() {
        Some(dir)
    } else {
        eprintln!(
            "skipped: conformance data not found at {}.\n\
             hint: set PORCH_CONFORMANCE_DIR to a checkout of shared/conformance \
             (it holds porch/git-repos/*.tar and porch/test-blueprints.bundle)",
            dir.display()
        );
        None
    }
}

/// The Go Porch test repositories: `porch/git-repos/*.tar`, sorted by name.
pub fn git_repo_tars() -> Option<Vec<PathBuf>> {
    let dir = dir()?.join("porch/git-repos");
    let mut tars: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "tar"))
        .collect();
    tars.sort();
    Some(tars)
}

/// The Porch e2e blueprint repository bundle.
pub fn blueprints_bundle() -> Option<PathBuf> {
    let p = dir()?.join("porch/test-blueprints.bundle");
    p.is_file().then_some(p)
}
