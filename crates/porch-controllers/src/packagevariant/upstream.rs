//! Which upstream revision a PackageVariant follows, and whether a downstream is based on it
//! (upstream `getUpstreamPR`, `getPublishedUpstreamByRevision`, `isUpToDate`,
//! `newWorkspaceName`).

use porch_api::packagevariant::Upstream;
use porch_engine::PackageRevision;

/// Workspaces of the drafts the controller creates: `packagevariant-<n>`.
pub const WORKSPACE_PREFIX: &str = "packagevariant-";

/// Upstream's `%#v` of the upstream in its "not found" message, close enough to read.
fn describe(u: &Upstream) -> String {
    format!(
        "{{Repo:{:?}, Package:{:?}, Revision:{}, WorkspaceName:{:?}}}",
        u.repo.as_deref().unwrap_or(""),
        u.package.as_deref().unwrap_or(""),
        u.revision.unwrap_or(0),
        u.workspace_name.as_deref().unwrap_or("")
    )
}

fn not_found(u: &Upstream) -> String {
    format!("could not find upstream package revision {}", describe(u))
}

/// The upstream revision among `candidates` (the revisions of the upstream package):
/// by `workspaceName` when set, else the published revision numbered `revision`, else
/// (no revision either) the latest published one.
///
/// Upstream Porch resolved an empty workspaceName to the `main` placeholder whatever the
/// revision said, and cloning from the placeholder is refused: fixed (COMPATIBILITY.md).
pub fn resolve<'a>(
    upstream: &Upstream,
    candidates: &'a [PackageRevision],
) -> Result<&'a PackageRevision, String> {
    let matching = candidates.iter().filter(|pr| {
        Some(pr.key.repository.as_str()) == upstream.repo.as_deref()
            && Some(pr.key.package.as_str()) == upstream.package.as_deref()
    });
    let found = match upstream.workspace_name.as_deref().filter(|w| !w.is_empty()) {
        Some(ws) => matching
            .into_iter()
            .find(|pr| pr.key.workspace.as_str() == ws),
        None => match upstream.revision.filter(|r| *r > 0) {
            Some(rev) => matching
                .into_iter()
                .find(|pr| pr.lifecycle.is_published() && pr.key.revision.get() == rev),
            None => matching
                .into_iter()
                .filter(|pr| pr.lifecycle.is_published() && pr.key.revision.get() > 0)
                .max_by_key(|pr| pr.key.revision.get()),
        },
    };
    found.ok_or_else(|| not_found(upstream))
}

/// The published revision `revision` of the upstream package, whatever the workspace
/// (upstream `getPublishedUpstreamByRevision`): the old upstream of an upgrade.
pub fn published_by_revision<'a>(
    upstream: &Upstream,
    revision: i64,
    candidates: &'a [PackageRevision],
) -> Result<&'a PackageRevision, String> {
    if revision == 0 {
        return Err("upstream cannot be published with revision number 0".into());
    }
    candidates
        .iter()
        .find(|pr| {
            Some(pr.key.repository.as_str()) == upstream.repo.as_deref()
                && Some(pr.key.package.as_str()) == upstream.package.as_deref()
                && pr.key.revision.get() == revision
        })
        .ok_or_else(|| {
            not_found(&Upstream {
                revision: Some(revision),
                ..upstream.clone()
            })
        })
}

/// The revision number at the end of an upstream lock ref (`pkg/v3` → 3), as Porch's
/// `Revision2Int`: -1 when it is not `v<N>`.
pub fn revision_from_ref(git_ref: &str) -> i64 {
    let last = git_ref.rsplit('/').next().unwrap_or("");
    last.strip_prefix('v')
        .and_then(|n| n.parse().ok())
        .unwrap_or(-1)
}

/// The upstream ref a downstream was cloned or upgraded from, when it records one.
pub fn upstream_ref(pr: &PackageRevision) -> Option<&str> {
    pr.upstream_lock
        .as_ref()
        .and_then(|l| l.git.as_ref())
        .map(|g| g.git_ref.as_str())
        .filter(|r| !r.is_empty())
}

/// Is `downstream` based on upstream revision `revision` (upstream `isUpToDate`)? A
/// downstream without an upstream lock counts as up to date; one based on a draft branch
/// never does.
pub fn is_up_to_date(downstream: &PackageRevision, revision: i64) -> bool {
    match upstream_ref(downstream) {
        None => true,
        Some(r) if r.starts_with("drafts") => false,
        Some(r) => revision_from_ref(r) == revision,
    }
}

/// The next `packagevariant-<n>` workspace of a package: one more than the highest `n`
/// among `existing` (the revisions of that package).
pub fn new_workspace_name(existing: &[PackageRevision]) -> String {
    let highest = existing
        .iter()
        .filter_map(|pr| pr.key.workspace.as_str().strip_prefix(WORKSPACE_PREFIX))
        .filter_map(|n| n.parse::<u64>().ok())
        .max()
        .unwrap_or(0);
    format!("{WORKSPACE_PREFIX}{}", highest + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packagevariant::testing::pr;
    use porch_core::lifecycle::Lifecycle::{Draft, Published};

    fn up(ws: Option<&str>, rev: Option<i64>) -> Upstream {
        Upstream {
            repo: Some("my-repo".into()),
            package: Some("my-package".into()),
            revision: rev,
            workspace_name: ws.map(Into::into),
        }
    }

    /// Upstream `TestNewWorkspaceName`.
    #[test]
    fn new_workspace_names() {
        assert_eq!(new_workspace_name(&[]), "packagevariant-1");
        let two = [
            pr("d", "p", "packagevariant-1", 0, Draft),
            pr("d", "p", "packagevariant-2", 0, Draft),
        ];
        assert_eq!(new_workspace_name(&two), "packagevariant-3");
        let one = [
            pr("d", "p", "packagevariant-1", 0, Draft),
            pr("d", "p", "foo", 0, Draft),
        ];
        assert_eq!(new_workspace_name(&one), "packagevariant-2");
        let none = [
            pr("d", "p", "foo-1", 0, Draft),
            pr("d", "p", "foo-2", 0, Draft),
        ];
        assert_eq!(new_workspace_name(&none), "packagevariant-1");
        // Upstream's fifth case (another package's workspace is not counted) is the
        // caller's listing by package: the port lists one package only.
        let gaps = [
            pr("d", "p", "packagevariant-7", 0, Draft),
            pr("d", "p", "packagevariant-x", 0, Draft),
        ];
        assert_eq!(new_workspace_name(&gaps), "packagevariant-8");
    }

    /// Upstream `TestGetUpstreamPr`, with the placeholder fix: an empty workspaceName
    /// resolves by revision (or to the latest published), never to `main`.
    #[test]
    fn get_upstream_pr() {
        let none: Vec<PackageRevision> = Vec::new();
        let e = resolve(&up(Some("my-workspace"), None), &none).expect_err("empty");
        assert!(
            e.starts_with("could not find upstream package revision"),
            "{e}"
        );

        let mut list = vec![
            pr(
                "another-repo",
                "another-package",
                "another-workspace",
                1,
                Published,
            ),
            pr("my-repo", "my-package", "another-workspace", 1, Published),
        ];
        assert!(resolve(&up(Some("my-workspace"), None), &list).is_err());
        list.push(pr("my-repo", "my-package", "my-workspace", 2, Published));
        let found = resolve(&up(Some("my-workspace"), None), &list).expect("by workspace");
        assert_eq!(found.key.workspace.as_str(), "my-workspace");

        // Empty workspaceName: by revision.
        let found = resolve(&up(None, Some(1)), &list).expect("by revision");
        assert_eq!(found.key.workspace.as_str(), "another-workspace");
        assert!(
            resolve(&up(Some(""), Some(5)), &list).is_err(),
            "no revision 5"
        );
        // Neither: the latest published.
        let found = resolve(&up(None, None), &list).expect("latest");
        assert_eq!(found.key.revision.get(), 2);
        let found = resolve(&up(None, Some(-1)), &list).expect("latest");
        assert_eq!(found.key.revision.get(), 2);

        // The main placeholder and drafts are never picked without a workspaceName.
        let only_main = [
            pr("my-repo2", "my-package2", "main", -1, Published),
            pr("my-repo2", "my-package2", "v3-2-1", 0, Draft),
        ];
        let u2 = Upstream {
            repo: Some("my-repo2".into()),
            package: Some("my-package2".into()),
            ..Upstream::default()
        };
        assert!(resolve(&u2, &only_main).is_err());
        // Named explicitly, the placeholder is what the user asked for.
        let named = Upstream {
            workspace_name: Some("main".into()),
            ..u2
        };
        assert!(resolve(&named, &only_main).is_ok());
    }

    /// Upstream `TestGetPublishedUpstreamPr`.
    #[test]
    fn get_published_upstream_pr() {
        let u = Upstream {
            repo: Some("test-repo".into()),
            package: Some("test-package".into()),
            revision: Some(0),
            workspace_name: Some("doesnt-matter".into()),
        };
        let e = published_by_revision(&u, 0, &[]).expect_err("0");
        assert!(e.contains("upstream cannot be published with revision number 0"));
        let e = published_by_revision(&u, 1, &[]).expect_err("none");
        assert!(e.contains("could not find upstream package revision"));
        let list = [pr(
            "test-repo",
            "test-package",
            "not-the-same",
            1,
            Published,
        )];
        let found = published_by_revision(&u, 1, &list).expect("found");
        assert_eq!(found.name().as_str(), "test-repo.test-package.not-the-same");
    }

    #[test]
    fn up_to_date_compares_the_lock_revision() {
        let mut d = pr("d", "p", "packagevariant-1", 1, Published);
        assert!(is_up_to_date(&d, 3), "no lock: up to date");
        d.upstream_lock = Some(porch_core::revision::Locator::git(
            porch_core::revision::GitLock {
                git_ref: "p/v3".into(),
                ..Default::default()
            },
        ));
        assert!(is_up_to_date(&d, 3));
        assert!(!is_up_to_date(&d, 4));
        d.upstream_lock = Some(porch_core::revision::Locator::git(
            porch_core::revision::GitLock {
                git_ref: "drafts/p/ws".into(),
                ..Default::default()
            },
        ));
        assert!(!is_up_to_date(&d, 3));
        assert_eq!(revision_from_ref("a/b/v12"), 12);
        assert_eq!(revision_from_ref("main"), -1);
    }
}
