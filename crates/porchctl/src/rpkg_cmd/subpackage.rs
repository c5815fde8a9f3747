//! `rpkg upgrade DRAFT --subpackage-dir DIR` (kptdev porchctl): the independent subpackage in
//! DIR of a Draft is upgraded in place to another revision of the registered package its
//! Kptfile's upstream names. The upstream is found from that Kptfile; an `upgrade` task with
//! `subpackageDir` is appended to the Draft, and the server merges.
//!
//! kptdev's porchctl names the upstream package by its git directory with `/` turned into `.`
//! and requires the Repository to be registered on the directory left of the package in the
//! lock's ref; here the package is the lock's directory below the directory of a Repository
//! registered on the same URL, as Porch names packages (see COMPATIBILITY.md).

use porch_api::tasks::{PackageRevisionRef, PackageUpgradeTaskSpec};
use porch_api::{PackageRevision, Repository, Task};

use super::create::append_subpackage_task;
use super::discover::Revisions;
use super::pull::resources_of;
use super::typed::{RevisionExt, repository_name};
use super::upgrade::UpgradeArgs;
use crate::remote::RemoteError;
use crate::remote::api::PACKAGE_REVISION_RESOURCES;
use crate::remote::connection::Remote;

fn failed(message: String) -> RemoteError {
    RemoteError::Failed(message)
}

/// The published revision of a registered repository a subpackage's Kptfile `upstream.git`
/// names: `repo`, `directory` (the package's path in git) and `ref` (`<directory>/v<N>`).
fn upstream_revision<'a>(
    git: &kpt::kptfile::Git,
    prs: &'a Revisions,
    repos: &[Repository],
) -> Result<&'a PackageRevision, String> {
    let directory = git.directory.trim_matches('/');
    if git.repo.is_empty() {
        return Err("upstream does not contain a valid git repository".into());
    }
    if let Err(e) = porch_core::names::check_subpackage_dir(directory) {
        return Err(format!(
            "git directory reference {:?} in upstream is invalid: {e}",
            git.directory
        ));
    }
    let revision = git
        .git_ref
        .strip_prefix(&format!("{directory}/v"))
        .and_then(|n| n.parse::<i64>().ok())
        .filter(|n| *n > 0);
    let Some(revision) = revision else {
        return Err(format!(
            "subpackage {:?} {directory:?} {:?} is not managed by kpt and cannot be upgraded",
            git.repo, git.git_ref
        ));
    };
    let url = |u: &str| u.trim_end_matches(".git").trim_end_matches('/').to_owned();
    let found = repos.iter().find_map(|r| {
        let rg = r.spec.git.as_ref()?;
        if r.spec.type_.as_deref() != Some("git") || url(&rg.repo) != url(&git.repo) {
            return None;
        }
        let dir = rg
            .directory
            .as_deref()
            .unwrap_or_default()
            .trim_matches('/');
        let package = if dir.is_empty() {
            directory
        } else {
            directory.strip_prefix(dir)?.strip_prefix('/')?
        };
        Some((repository_name(r), package))
    });
    let Some((repo, package)) = found else {
        return Err(format!(
            "could not find repository {:?} directory {:?}",
            git.repo, git.directory
        ));
    };
    prs.published(repo, package)
        .into_iter()
        .find(|p| p.revision() == revision)
        .ok_or_else(|| {
            format!(
                "could not find package revision for repo {repo:?} package name {package:?} revision {revision}"
            )
        })
}

/// Appends the subpackage upgrade of `a.subpackage_dir` to Draft `parent`.
pub async fn upgrade(
    remote: &Remote,
    a: &UpgradeArgs,
    prs: &Revisions,
    repos: &[Repository],
    parent: &PackageRevision,
) -> Result<(), RemoteError> {
    let dir = a.subpackage_dir.as_str();
    let package = parent.package();
    if parent.lifecycle() != "Draft" {
        return Err(failed(format!(
            "to upgrade an independent subpackage, its parent package must be in state draft, not {:?}",
            parent.lifecycle()
        )));
    }
    let prr = PACKAGE_REVISION_RESOURCES
        .get(&remote.client, remote.namespace.as_str(), parent.name())
        .await
        .map_err(|e| {
            failed(format!(
                "could not get the resources for package revision {:?}: {e}",
                parent.name()
            ))
        })?;
    let kptfile_path = format!("{dir}/Kptfile");
    let Some(text) = resources_of(&prr).remove(&kptfile_path) else {
        return Err(failed(format!(
            "could not find Kptfile for independent subpackage at {kptfile_path:?} in the resources of package {package:?}"
        )));
    };
    let kptfile = kpt::kptfile::Kptfile::parse(&text).map_err(|e| {
        failed(format!(
            "could not unmarshal Kptfile for independent subpackage at {kptfile_path:?} in the resources of package {package:?}: {e}"
        ))
    })?;
    let Some(git) = kptfile.upstream.as_ref().and_then(|u| u.git.as_ref()) else {
        return Err(failed(format!(
            "independent subpackage at {dir:?} in package {package:?} has no upstream source"
        )));
    };
    let old = upstream_revision(git, prs, repos).map_err(|e| {
        failed(format!(
            "could not find upstream package for independent subpackage at {dir:?} in package {package:?}: {e}"
        ))
    })?;
    let (up_repo, up_package) = (old.repository(), old.package());
    let candidates = prs.published(up_repo, up_package);
    let new = if a.revision == 0 {
        candidates
            .into_iter()
            .filter(|p| p.revision() > 0)
            .max_by_key(|p| p.revision())
            .ok_or_else(|| {
                failed(format!(
                    "failed to find latest published revision for package {up_package} in repo {up_repo} (--revision was 0)"
                ))
            })?
    } else {
        candidates
            .into_iter()
            .find(|p| p.revision() == a.revision)
            .ok_or_else(|| {
                failed(format!(
                    "revision {} does not exist for package {up_package} in repo {up_repo}",
                    a.revision
                ))
            })?
    };
    let by_name = |name: &str| {
        Some(PackageRevisionRef {
            name: name.to_owned(),
        })
    };
    let strategy = if a.strategy.is_empty() {
        "resource-merge"
    } else {
        a.strategy.as_str()
    };
    let task = Task {
        type_: "upgrade".into(),
        upgrade: Some(PackageUpgradeTaskSpec {
            old_upstream: by_name(old.name()),
            new_upstream: by_name(new.name()),
            local_package_revision_ref: by_name(parent.name()),
            strategy: Some(strategy.to_owned()),
            subpackage_dir: Some(dir.to_owned()),
        }),
        ..Default::default()
    };
    append_subpackage_task(remote, parent.name(), task, "upgrade")
        .await
        .map_err(|e| match e {
            RemoteError::Api { .. } => failed(format!(
                "could not upgrade independent subpackage at {dir:?} in package {package:?}: {e}"
            )),
            other => other,
        })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::rpkg_cmd::typed;

    fn pr(name: &str, repo: &str, pkg: &str, rev: i64) -> PackageRevision {
        typed::decode(
            &json!({"apiVersion": "porch.kpt.dev/v1alpha1", "kind": "PackageRevision",
                "metadata": {"name": name}, "spec": {"repository": repo, "packageName": pkg,
                "revision": rev, "lifecycle": "Published", "tasks": [{"type": "init"}]}}),
            "package revision",
        )
        .expect("decodes")
    }

    fn repo(name: &str, url: &str, dir: &str) -> Repository {
        typed::decode(
            &json!({"apiVersion": "config.porch.kpt.dev/v1alpha1", "kind": "Repository",
                "metadata": {"name": name},
                "spec": {"type": "git", "git": {"repo": url, "directory": dir}}}),
            "repository",
        )
        .expect("decodes")
    }

    fn git(repo: &str, directory: &str, git_ref: &str) -> kpt::kptfile::Git {
        kpt::kptfile::Git {
            repo: repo.into(),
            directory: directory.into(),
            git_ref: git_ref.into(),
        }
    }

    #[test]
    fn the_upstream_is_found_from_the_subpackage_kptfile() {
        let prs = Revisions(vec![
            pr("bp.app.v1", "bp", "app", 1),
            pr("bp.app.v2", "bp", "app", 2),
            pr("nested.team.app.v1", "nested", "team/app", 1),
        ]);
        let repos = [
            repo("bp", "http://h/bp.git", ""),
            repo("nested", "http://h/mono", "/blueprints"),
        ];
        let found = |g| upstream_revision(&g, &prs, &repos).map(|p| p.name().to_owned());
        assert_eq!(
            found(git("http://h/bp", "app", "app/v2")),
            Ok("bp.app.v2".into())
        );
        // A Repository on a directory names packages below it.
        assert_eq!(
            found(git(
                "http://h/mono.git",
                "blueprints/team/app",
                "blueprints/team/app/v1"
            )),
            Ok("nested.team.app.v1".into())
        );
        let err = found(git(
            "https://github.com/kptdev/kpt",
            "package-examples/wordpress",
            "v1.0.0-beta.64",
        ))
        .expect_err("not managed");
        assert!(
            err.ends_with("is not managed by kpt and cannot be upgraded"),
            "{err}"
        );
        let err = found(git("http://h/other", "app", "app/v1")).expect_err("no repository");
        assert_eq!(
            err,
            "could not find repository \"http://h/other\" directory \"app\""
        );
        let err = found(git("http://h/bp", "app", "app/v7")).expect_err("no v7");
        assert_eq!(
            err,
            "could not find package revision for repo \"bp\" package name \"app\" revision 7"
        );
    }
}
