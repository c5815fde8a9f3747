//! Which `file://` and plain-path git URLs a Repository (or a clone's upstream) may name.
//!
//! Such a URL makes the server read a git repository from its own disk, with its own rights:
//! anyone allowed to register a Repository could read every repository the server's user can.
//! The binary therefore allows them only under the directories named by
//! `--allow-local-repositories` (none by default). The setting is process-wide because it is
//! read where URLs are checked, by the Repository kind's validation and by the opener, which
//! are built independently; a library user that never sets it (in-process tests) keeps the
//! previous behaviour: every local path is allowed.

use std::path::{Component, Path, PathBuf};
use std::sync::RwLock;

/// The flag that names the allowed directories (quoted in refusals).
pub const FLAG: &str = "--allow-local-repositories";

static ROOTS: RwLock<Option<Vec<PathBuf>>> = RwLock::new(None);

/// Allows local URLs only under `roots` (empty: none at all).
pub fn restrict_to(roots: Vec<PathBuf>) {
    let roots = roots
        .into_iter()
        .map(|r| std::fs::canonicalize(&r).unwrap_or(r))
        .collect();
    *ROOTS
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(roots);
}

/// The local path `url` names (`file://` URL or absolute path), if it names one.
pub fn local_path(url: &str) -> Option<String> {
    if let Some((scheme, rest)) = url.split_once("://") {
        return scheme.eq_ignore_ascii_case("file").then(|| rest.to_owned());
    }
    url.starts_with('/').then(|| url.to_owned())
}

/// Why `url` may not be used, if it is a local URL outside the allowed directories.
pub fn problem(url: &str) -> Option<String> {
    local_path(url)?;
    let roots = ROOTS
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone()?;
    problem_under(url, &roots)
}

/// Why `url` may not be used when local URLs are allowed under `roots` (canonical paths) only.
fn problem_under(url: &str, roots: &[PathBuf]) -> Option<String> {
    let path = local_path(url)?;
    let refused = || {
        Some(if roots.is_empty() {
            format!(
                "file:// and local path repositories are not allowed on this server (start it with {FLAG} <dir> to allow those under <dir>)"
            )
        } else {
            format!(
                "file:// and local path repositories are allowed only under the directories named by {FLAG}"
            )
        })
    };
    // `file://host/path`, escapes (`%2e%2e`) and `..` could all leave an allowed directory.
    if !path.starts_with('/') || path.contains('%') {
        return refused();
    }
    let p = Path::new(&path);
    if p.components().any(|c| matches!(c, Component::ParentDir)) {
        return refused();
    }
    let p = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    if roots.iter().any(|r| p.starts_with(r)) {
        None
    } else {
        refused()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_urls_only_under_allowed_roots() {
        assert_eq!(
            local_path("file:///srv/git/a.git").as_deref(),
            Some("/srv/git/a.git")
        );
        assert_eq!(
            local_path("/srv/git/a.git").as_deref(),
            Some("/srv/git/a.git")
        );
        assert_eq!(local_path("https://h/a.git"), None);
        assert_eq!(local_path("git@h:a.git"), None);
        let dir = tempfile::tempdir().expect("tempdir");
        let allowed = dir.path().join("allowed");
        std::fs::create_dir_all(allowed.join("a.git")).expect("mkdir");
        let allowed = std::fs::canonicalize(&allowed).expect("canonical");
        let refusal = problem_under("file:///tmp/x.git", &[]).expect("refused");
        assert!(refusal.contains(FLAG), "{refusal}");
        assert_eq!(problem_under("https://example.com/a.git", &[]), None);
        let roots = [allowed.clone()];
        let check = |url: String| problem_under(&url, &roots);
        let inside = allowed.join("a.git");
        assert_eq!(check(format!("file://{}", inside.display())), None);
        assert_eq!(check(inside.display().to_string()), None);
        assert!(check(format!("file://{}/../x.git", allowed.display())).is_some());
        assert!(check(format!("file://{}/%2e%2e/x.git", allowed.display())).is_some());
        assert!(check("file:///etc/x.git".into()).is_some());
        assert!(check(format!("file://localhost{}", inside.display())).is_some());
        // A symlink inside that leads out is judged by where it leads.
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("/etc", allowed.join("out")).expect("symlink");
            assert!(check(format!("file://{}/out", allowed.display())).is_some());
        }
    }
}
