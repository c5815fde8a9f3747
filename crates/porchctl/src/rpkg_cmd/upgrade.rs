//! `rpkg upgrade PACKAGE --workspace W [--revision N] [--strategy S]`: a new Draft of a
//! published downstream package, three-way merged onto a newer upstream revision; and
//! `rpkg upgrade --discover=upstream|downstream [NAME...]`: which upgrades are available.

use clap::Args;
use porch_api::tasks::{PackageRevisionRef, PackageUpgradeTaskSpec};
use porch_api::{PackageRevision, Repository, Task};

use super::create::package_revision;
use super::errors_summary;
use super::typed::{self, RevisionExt, repository_name};
use crate::remote::api::{PACKAGE_REVISIONS, REPOSITORIES};
use crate::remote::connection::Remote;
use crate::remote::tabwriter::TabWriter;
use crate::remote::{self, ConnectionFlags, RemoteError};

const STRATEGIES: [&str; 4] = [
    "resource-merge",
    "fast-forward",
    "force-delete-replace",
    "copy-merge",
];

/// Flags of `rpkg upgrade`.
#[derive(Debug, Args)]
pub struct UpgradeArgs {
    /// The downstream package revision (or, with --discover, revisions to restrict to).
    #[arg(value_name = "SOURCE_PACKAGE_REV_NAME")]
    pub names: Vec<String>,
    /// Revision of the upstream package to upgrade to (0: the latest).
    #[arg(long, default_value_t = 0, allow_negative_numbers = true, value_parser = crate::cli::GoInt::<i64>::new())]
    pub revision: i64,
    /// Workspace name of the upgrade package revision.
    #[arg(long, default_value = "", hide_default_value = true)]
    pub workspace: String,
    /// resource-merge (default), fast-forward, force-delete-replace or copy-merge.
    #[arg(long, default_value = "", hide_default_value = true)]
    pub strategy: String,
    /// List available updates instead: upstream or downstream.
    #[arg(long, default_value = "", hide_default_value = true)]
    pub discover: String,
    /// Upgrade the independent subpackage in this directory of the Draft, in place.
    #[arg(long, default_value = "", hide_default_value = true)]
    pub subpackage_dir: String,
}

impl UpgradeArgs {
    fn validate(&self) -> Result<(), RemoteError> {
        let usage = |m: &str| Err(RemoteError::Usage(m.to_string()));
        match self.discover.as_str() {
            "upstream" | "downstream" => return Ok(()),
            "" => {}
            _ => return usage("argument for 'discover' must be one of 'upstream' or 'downstream'"),
        }
        match self.names.len() {
            0 => return usage("SOURCE_PACKAGE_REVISION is a required positional argument"),
            1 => {}
            _ => {
                return usage(
                    "too many arguments; SOURCE_PACKAGE_REVISION is the only accepted positional arguments",
                );
            }
        }
        if self.revision < 0 {
            return usage("revision must be positive (and not main)");
        }
        if self.subpackage_dir.is_empty() {
            if self.workspace.is_empty() {
                return usage("workspace is required");
            }
        } else {
            if porch_core::names::check_subpackage_dir(&self.subpackage_dir).is_err() {
                return Err(RemoteError::Usage(format!(
                    "invalid --subpackage-dir {:?}",
                    self.subpackage_dir
                )));
            }
            if !self.workspace.is_empty() {
                return usage("--workspace may not be specified on subpackage upgrades");
            }
        }
        if !self.strategy.is_empty() && !STRATEGIES.contains(&self.strategy.as_str()) {
            return Err(RemoteError::Usage(format!(
                "invalid strategy {:?}; must be one of: [{}]",
                self.strategy,
                STRATEGIES.join(" ")
            )));
        }
        Ok(())
    }
}

/// The package revisions of one namespace, with the lookups upgrade needs.
pub(super) struct Revisions(pub(super) Vec<PackageRevision>);

impl Revisions {
    pub(super) fn find(&self, name: &str) -> Option<&PackageRevision> {
        self.0.iter().find(|p| p.name() == name)
    }

    /// The upstream this revision was made from: a clone's source, an upgrade's new
    /// upstream, or for a copy that of the revision it was copied from.
    fn upstream_name(&self, pr: &PackageRevision) -> String {
        let mut pr = pr;
        for _ in 0..self.0.len() + 1 {
            let Some(task) = pr.first_task() else {
                return String::new();
            };
            match task.type_.as_str() {
                "clone" => {
                    return task
                        .clone
                        .as_ref()
                        .and_then(|c| c.upstream.as_ref())
                        .and_then(|u| u.upstream_ref.as_ref())
                        .map(|r| r.name.clone())
                        .unwrap_or_default();
                }
                "upgrade" => {
                    return task
                        .upgrade
                        .as_ref()
                        .and_then(|u| u.new_upstream.as_ref())
                        .map(|r| r.name.clone())
                        .unwrap_or_default();
                }
                "edit" => {
                    let source = task
                        .edit
                        .as_ref()
                        .and_then(|e| e.source.as_ref())
                        .map(|r| r.name.as_str())
                        .unwrap_or_default();
                    match self.find(source) {
                        Some(src) => pr = src,
                        None => return String::new(),
                    }
                }
                _ => return String::new(),
            }
        }
        String::new()
    }

    /// The published revisions of `repo`/`package`.
    pub(super) fn published(&self, repo: &str, package: &str) -> Vec<&PackageRevision> {
        self.0
            .iter()
            .filter(|p| p.is_published() && p.repository() == repo && p.package() == package)
            .collect()
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

pub async fn run(conn: &ConnectionFlags, a: UpgradeArgs) -> Result<(), RemoteError> {
    // Upstream's preRunE builds the client before it checks the flags.
    let remote = conn.connect().await?;
    a.validate()?;
    let ns = remote.namespace.as_str();
    let Some(prs) = revisions_unless_discovering(&remote, &a.discover, &a.names).await? else {
        return Ok(());
    };
    let name = &a.names[0];
    let Some(local) = prs.find(name) else {
        return Err(RemoteError::Failed(format!(
            "could not find package revision {name}"
        )));
    };
    // Re-read it: the list may be a moment old.
    let local: PackageRevision = typed::decode(
        &PACKAGE_REVISIONS
            .get(&remote.client, ns, local.name())
            .await?,
        "package revision",
    )?;
    if !a.subpackage_dir.is_empty() {
        let repos = REPOSITORIES.list(&remote.client, Some(ns), None).await?;
        let repos: Vec<Repository> = typed::decode_items(&repos, "repository")?;
        super::subpackage::upgrade(&remote, &a, &prs, &repos, &local).await?;
        return remote::out(&format!(
            "independent subpackage in directory {:?} in package {:?} upgraded\n",
            a.subpackage_dir,
            local.name()
        ));
    }
    let body = upgrade_body(&a, &prs, &local, ns)?;
    let created = PACKAGE_REVISIONS
        .create(&remote.client, ns, &typed::to_body(&body)?)
        .await?;
    let created: PackageRevision = typed::decode(&created, "package revision")?;
    remote::out(&format!(
        "{} upgraded to {}\n",
        local.name(),
        created.name()
    ))
}

/// The upgrade PackageRevision for `local`, checking upstream's preconditions.
fn upgrade_body(
    a: &UpgradeArgs,
    prs: &Revisions,
    local: &PackageRevision,
    ns: &str,
) -> Result<PackageRevision, RemoteError> {
    let fail = |m: String| Err(RemoteError::Failed(m));
    if !local.is_published() {
        return fail(format!(
            "to upgrade a package, it must be in a published state, not {:?}",
            local.lifecycle()
        ));
    }
    let package = local.package();
    let old_name = prs.upstream_name(local);
    if old_name.is_empty() {
        return fail(format!(
            "upstream source not found for package revision {package:?}: no clone or upgrade type package revision was found in the history of the package"
        ));
    }
    let Some(old) = prs.find(&old_name) else {
        return fail(format!(
            "upstream package revision {old_name} no longer exists"
        ));
    };
    if !old.is_published() {
        return fail(format!(
            "old upstream package revision {old_name} is not published"
        ));
    }
    let candidates = prs.published(old.repository(), old.package());
    let new = if a.revision == 0 {
        candidates
            .into_iter()
            .filter(|p| p.revision() > 0)
            .max_by_key(|p| p.revision())
    } else {
        candidates.into_iter().find(|p| p.revision() == a.revision)
    };
    let Some(new) = new else {
        return fail(if a.revision == 0 {
            format!(
                "failed to find latest published revision for package {package} (--revision was 0)"
            )
        } else {
            format!(
                "revision {} does not exist for package {package}",
                a.revision
            )
        });
    };
    let strategy = if a.strategy.is_empty() {
        STRATEGIES[0]
    } else {
        a.strategy.as_str()
    };
    let by_name = |name: &str| {
        Some(PackageRevisionRef {
            name: name.to_owned(),
        })
    };
    let task = Task {
        type_: "upgrade".into(),
        upgrade: Some(PackageUpgradeTaskSpec {
            old_upstream: by_name(&old_name),
            new_upstream: by_name(new.name()),
            local_package_revision_ref: by_name(local.name()),
            strategy: Some(strategy.to_owned()),
            subpackage_dir: None,
        }),
        ..Default::default()
    };
    Ok(package_revision(
        ns,
        package,
        &a.workspace,
        local.repository(),
        task,
    ))
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
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn pr(
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

    fn discover_with(
        flags: &[&str],
        prs: &Revisions,
        repos: &[Repository],
    ) -> Result<String, RemoteError> {
        let a = args(flags);
        discover(&a.discover, &a.names, prs, repos)
    }

    fn world() -> (Revisions, Vec<Repository>) {
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

    fn args(v: &[&str]) -> UpgradeArgs {
        use clap::Parser;
        #[derive(Parser)]
        struct T {
            #[command(flatten)]
            a: UpgradeArgs,
        }
        let mut all = vec!["t"];
        all.extend_from_slice(v);
        T::parse_from(all).a
    }

    #[test]
    fn upgrade_task_to_latest() {
        let (prs, _) = world();
        let local = prs.find("dep.ns.v2").expect("local").clone();
        let body = upgrade_body(&args(&["dep.ns.v2", "--workspace=v3"]), &prs, &local, "ns")
            .expect("body");
        let body: Value = serde_json::to_value(body).expect("json");
        assert_eq!(
            body["spec"]["tasks"][0]["upgrade"],
            json!({"oldUpstreamRef": {"name": "bp.basens.v1"}, "newUpstreamRef": {"name": "bp.basens.v2"},
                   "localPackageRevisionRef": {"name": "dep.ns.v2"}, "strategy": "resource-merge"})
        );
        assert_eq!(body["spec"]["packageName"], "ns");
        let err = upgrade_body(
            &args(&["x", "--workspace=w", "--revision=9"]),
            &prs,
            &local,
            "ns",
        )
        .expect_err("no such revision");
        assert_eq!(err.to_string(), "revision 9 does not exist for package ns");
    }

    #[test]
    fn validation_texts() {
        let e = |v: &[&str]| args(v).validate().expect_err("refused").to_string();
        assert_eq!(
            e(&[]),
            "SOURCE_PACKAGE_REVISION is a required positional argument"
        );
        assert_eq!(e(&["a"]), "workspace is required");
        assert_eq!(
            e(&["a", "--revision=-1", "--workspace=w"]),
            "revision must be positive (and not main)"
        );
        assert_eq!(
            e(&["a", "--workspace=w", "--strategy=x"]),
            "invalid strategy \"x\"; must be one of: [resource-merge fast-forward force-delete-replace copy-merge]"
        );
        assert_eq!(
            e(&["--discover=x"]),
            "argument for 'discover' must be one of 'upstream' or 'downstream'"
        );
        assert!(args(&["--discover=upstream"]).validate().is_ok());
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
