//! Package revisions in one namespace as `rpkg upgrade` and `rpkg update` read them, and
//! their `--discover=upstream|downstream` tables: which downstream revisions have newer
//! upstream revisions, found from each revision's `upstreamLock`.

use porch_api::{PackageRevision, Repository};

use super::errors_summary;
use super::typed::{self, RevisionExt, repository_name};
use crate::remote::api::{PACKAGE_REVISIONS, REPOSITORIES};
use crate::remote::connection::Remote;
use crate::remote::tabwriter::TabWriter;
use crate::remote::{self, RemoteError};

/// The package revisions of one namespace, with the lookups upgrades need.
pub(super) struct Revisions(pub(super) Vec<PackageRevision>);

impl Revisions {
    pub(super) fn find(&self, name: &str) -> Option<&PackageRevision> {
        self.0.iter().find(|p| p.name() == name)
    }

    /// The published revisions of `repo`/`package`.
    pub(super) fn published(&self, repo: &str, package: &str) -> Vec<&PackageRevision> {
        self.0
            .iter()
            .filter(|p| p.is_published() && p.repository() == repo && p.package() == package)
            .collect()
    }
}

/// The argument checks `rpkg upgrade` and `rpkg update` share, as upstream words them:
/// `Ok(true)` when `--discover` lists instead (any names then restrict the listing),
/// `Ok(false)` when exactly one name, `what`, is given to act on.
pub(super) fn check_discover_or_one(
    mode: &str,
    names: &[String],
    what: &str,
) -> Result<bool, RemoteError> {
    let usage = |m: String| Err(RemoteError::Usage(m));
    match mode {
        "upstream" | "downstream" => return Ok(true),
        "" => {}
        _ => {
            return usage(
                "argument for 'discover' must be one of 'upstream' or 'downstream'".into(),
            );
        }
    }
    match names.len() {
        0 => usage(format!("{what} is a required positional argument")),
        1 => Ok(false),
        _ => usage(format!(
            "too many arguments; {what} is the only accepted positional arguments"
        )),
    }
}

/// The namespace's package revisions, or, with `--discover` (`mode`), `None` once the
/// discovery table for `names` is printed.
pub(super) async fn revisions_unless_discovering(
    remote: &Remote,
    mode: &str,
    names: &[String],
) -> Result<Option<Revisions>, RemoteError> {
    let ns = remote.namespace.as_str();
    let list = PACKAGE_REVISIONS
        .list(&remote.client, Some(ns), None)
        .await?;
    let prs = Revisions(typed::decode_items(&list, "package revision")?);
    if mode.is_empty() {
        return Ok(Some(prs));
    }
    let repos = REPOSITORIES.list(&remote.client, Some(ns), None).await?;
    let repos: Vec<Repository> = typed::decode_items(&repos, "repository")?;
    remote::out(&discover(mode, names, &prs, &repos)?)?;
    Ok(None)
}

/// Newer published revisions of the upstream a revision's `upstreamLock` points at, the
/// upstream repository's name, and the draft name when the lock points at a draft.
fn available_updates<'a>(
    pr: &PackageRevision,
    prs: &'a Revisions,
    repos: &[Repository],
) -> Result<(Vec<&'a PackageRevision>, String, String), RemoteError> {
    let Some(lock) = pr
        .status
        .as_ref()
        .and_then(|s| s.upstream_lock.as_ref())
        .and_then(|l| l.git.as_ref())
    else {
        return Ok((Vec::new(), String::new(), String::new()));
    };
    let lock_ref = lock.ref_.as_deref().unwrap_or_default();
    let Some(slash) = lock_ref.rfind('/') else {
        return Err(RemoteError::Failed(format!(
            "could not parse upstreamLock in Kptfile of package {:?}: malformed upstreamLock.Git.Ref {lock_ref:?}",
            pr.name()
        )));
    };
    let (current, draft) = if lock_ref.starts_with("drafts") {
        (0, lock_ref[slash + 1..].to_string())
    } else {
        let rev = lock_ref[slash + 1..]
            .trim_start_matches('v')
            .parse()
            .unwrap_or(-1);
        (rev, String::new())
    };
    let path = lock_ref[..slash]
        .trim_start_matches("drafts")
        .trim_start_matches('/');
    let with_git = |u: &str| {
        if u.ends_with(".git") {
            u.to_string()
        } else {
            format!("{u}.git")
        }
    };
    let lock_repo = with_git(lock.repo.as_deref().unwrap_or_default());
    let mut upstream = String::new();
    let mut updates = Vec::new();
    for repo in repos {
        let git_repo = repo.spec.git.as_ref().map(|g| g.repo.as_str());
        if repo.spec.type_.as_deref() != Some("git")
            || with_git(git_repo.unwrap_or_default()) != lock_repo
        {
            continue;
        }
        // Porch names a package by its path below the Repository's `directory`, while the
        // lock's ref is the tag, which carries the whole path in the git repository. A
        // Repository registered on another directory of the same URL does not hold it.
        let Some(package) = package_in_directory(path, repo) else {
            continue;
        };
        upstream = repository_name(repo).to_string();
        updates = prs
            .published(repository_name(repo), package)
            .into_iter()
            .filter(|p| p.revision() > current)
            .collect();
    }
    Ok((updates, upstream, draft))
}

/// The package path of `path` (a path in the git repository) inside `repo`'s directory,
/// or `None` when it lies outside it.
fn package_in_directory<'p>(path: &'p str, repo: &Repository) -> Option<&'p str> {
    let dir = repo
        .spec
        .git
        .as_ref()
        .and_then(|g| g.directory.as_deref())
        .unwrap_or_default()
        .trim_matches('/');
    if dir.is_empty() {
        return Some(path);
    }
    path.strip_prefix(dir)?.strip_prefix('/')
}

/// The `--discover=upstream|downstream` listing of `rpkg upgrade` (and of older porchctl's
/// `rpkg update`), restricted to `names` when some are given.
pub(super) fn discover(
    mode: &str,
    names: &[String],
    prs: &Revisions,
    repos: &[Repository],
) -> Result<String, RemoteError> {
    let selected: Vec<&PackageRevision> = if names.is_empty() || mode == "downstream" {
        prs.0.iter().collect()
    } else {
        let mut missing = Vec::new();
        let found: Vec<&PackageRevision> = names
            .iter()
            .filter_map(|n| {
                let f = prs.find(n);
                if f.is_none() {
                    missing.push(format!("could not find package revision {n}"));
                }
                f
            })
            .collect();
        if !missing.is_empty() {
            return Err(errors_summary(&missing));
        }
        found
    };
    let mut w = TabWriter::new();
    if mode == "upstream" {
        w.write("PACKAGE REVISION\tUPSTREAM REPOSITORY\tUPSTREAM UPDATES\n");
        for pr in selected {
            let (updates, upstream, _) = available_updates(pr, prs, repos)?;
            let cell = if updates.is_empty() {
                "No update available".to_string()
            } else {
                updates
                    .iter()
                    .map(|u| format!("v{}", u.revision()))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            w.write(&format!("{}\t{upstream}\t{cell}\n", pr.name()));
        }
        return Ok(w.finish());
    }
    let mut rows: Vec<[String; 3]> = Vec::new();
    for pr in selected {
        let (updates, _, draft) = available_updates(pr, prs, repos)?;
        for u in updates {
            let change = if !draft.is_empty() {
                format!("(draft {draft:?})->v{}", u.revision())
            } else {
                let lock_ref = pr
                    .status
                    .as_ref()
                    .and_then(|s| s.upstream_lock.as_ref())
                    .and_then(|l| l.git.as_ref())
                    .and_then(|g| g.ref_.as_deref())
                    .unwrap_or_default();
                match lock_ref.rfind('v') {
                    Some(i) => format!("{}->v{}", &lock_ref[i..], u.revision()),
                    None => continue,
                }
            };
            rows.push([u.name().to_string(), pr.name().to_string(), change]);
        }
    }
    if !names.is_empty() {
        rows.retain(|r| names.contains(&r[0]));
    }
    rows.sort();
    if rows.is_empty() {
        return Ok("All downstream packages are up to date.\n".into());
    }
    w.write("PACKAGE REVISION\tDOWNSTREAM PACKAGE\tDOWNSTREAM UPDATE\n");
    for r in rows {
        w.write(&format!("{}\n", r.join("\t")));
    }
    Ok(w.finish())
}

#[cfg(test)]
pub(super) mod fixtures {
    use super::*;
    use serde_json::{Value, json};

    pub(super) fn pr(
        name: &str,
        repo: &str,
        pkg: &str,
        rev: i64,
        lc: &str,
        task: Value,
        lock: Option<(&str, &str)>,
    ) -> PackageRevision {
        let mut v = json!({"apiVersion": "porch.kpt.dev/v1alpha1", "kind": "PackageRevision",
            "metadata": {"name": name}, "spec": {"repository": repo, "packageName": pkg,
            "revision": rev, "lifecycle": lc, "tasks": [task]}});
        if let Some((r, git_ref)) = lock {
            v["status"] =
                json!({"upstreamLock": {"type": "git", "git": {"repo": r, "ref": git_ref}}});
        }
        typed::decode(&v, "package revision").expect("decodes")
    }

    pub(crate) fn world() -> (Revisions, Vec<Repository>) {
        let none = json!({"type": "init"});
        let clone = json!({"type": "clone", "clone": {"upstreamRef": {"upstreamRef": {"name": "bp.basens.v1"}}}});
        let prs = Revisions(vec![
            pr(
                "bp.basens.v1",
                "bp",
                "basens",
                1,
                "Published",
                none.clone(),
                None,
            ),
            pr(
                "bp.basens.v2",
                "bp",
                "basens",
                2,
                "Published",
                none.clone(),
                None,
            ),
            pr("bp.basens.v3", "bp", "basens", 0, "Draft", none, None),
            pr(
                "dep.ns.v1",
                "dep",
                "ns",
                1,
                "Published",
                clone,
                Some(("http://h/bp", "basens/v1")),
            ),
            pr(
                "dep.ns.v2",
                "dep",
                "ns",
                2,
                "Published",
                json!({"type": "edit", "edit": {"sourceRef": {"name": "dep.ns.v1"}}}),
                Some(("http://h/bp.git", "basens/v1")),
            ),
        ]);
        let repos = vec![
            typed::decode(
                &json!({"apiVersion": "config.porch.kpt.dev/v1alpha1", "kind": "Repository",
                    "metadata": {"name": "bp"},
                    "spec": {"type": "git", "git": {"repo": "http://h/bp.git"}}}),
                "repository",
            )
            .expect("decodes"),
        ];
        (prs, repos)
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::{pr, world};
    use super::*;
    use serde_json::json;

    fn discover_with(
        flags: &[&str],
        prs: &Revisions,
        repos: &[Repository],
    ) -> Result<String, RemoteError> {
        let mode = flags
            .iter()
            .find_map(|f| f.strip_prefix("--discover="))
            .unwrap_or_default();
        let names: Vec<String> = flags
            .iter()
            .filter(|f| !f.starts_with("--"))
            .map(|f| (*f).to_owned())
            .collect();
        discover(mode, &names, prs, repos)
    }

    #[test]
    fn discover_tables() {
        let (prs, repos) = world();
        let up = discover_with(&["--discover=upstream", "dep.ns.v1"], &prs, &repos).expect("table");
        assert_eq!(
            up,
            "PACKAGE REVISION   UPSTREAM REPOSITORY   UPSTREAM UPDATES\ndep.ns.v1          bp                    v2\n"
        );
        let down = discover_with(&["--discover=downstream"], &prs, &repos).expect("table");
        assert_eq!(
            down,
            "PACKAGE REVISION   DOWNSTREAM PACKAGE   DOWNSTREAM UPDATE\nbp.basens.v2       dep.ns.v1            v1->v2\nbp.basens.v2       dep.ns.v2            v1->v2\n"
        );
        let none =
            discover_with(&["--discover=downstream", "bp.basens.v1"], &prs, &repos).expect("table");
        assert_eq!(none, "All downstream packages are up to date.\n");
    }

    /// Two Repositories on one git URL, each on its own directory: the lock's ref carries
    /// the directory (`upstream/app/v1`), the revisions are named by the path below it.
    #[test]
    fn discover_in_a_repository_directory() {
        let none = json!({"type": "init"});
        let prs = Revisions(vec![
            pr("up.app.v1", "up", "app", 1, "Published", none.clone(), None),
            pr("up.app.v2", "up", "app", 2, "Published", none.clone(), None),
            pr(
                "other.app.v7",
                "other",
                "app",
                7,
                "Published",
                none.clone(),
                None,
            ),
            pr(
                "up.down.v1",
                "up",
                "down",
                1,
                "Published",
                none,
                Some(("http://h/one", "upstream/app/v1")),
            ),
        ]);
        let repo = |name: &str, dir: &str| -> Repository {
            typed::decode(
                &json!({"apiVersion": "config.porch.kpt.dev/v1alpha1", "kind": "Repository",
                    "metadata": {"name": name},
                    "spec": {"type": "git", "git": {"repo": "http://h/one", "directory": dir}}}),
                "repository",
            )
            .expect("decodes")
        };
        // Registered in either order, the Repository whose directory holds the path wins.
        for repos in [
            vec![repo("up", "/upstream"), repo("other", "downstream1")],
            vec![repo("other", "downstream1"), repo("up", "upstream/")],
        ] {
            let up =
                discover_with(&["--discover=upstream", "up.down.v1"], &prs, &repos).expect("table");
            assert_eq!(
                up,
                "PACKAGE REVISION   UPSTREAM REPOSITORY   UPSTREAM UPDATES\nup.down.v1         up                    v2\n"
            );
            let down = discover_with(&["--discover=downstream"], &prs, &repos).expect("table");
            assert_eq!(
                down,
                "PACKAGE REVISION   DOWNSTREAM PACKAGE   DOWNSTREAM UPDATE\nup.app.v2          up.down.v1           v1->v2\n"
            );
        }
        assert_eq!(
            package_in_directory("upstreamx/app", &repo("r", "upstream")),
            None
        );
        assert_eq!(package_in_directory("a/b", &repo("r", "")), Some("a/b"));
    }
}
