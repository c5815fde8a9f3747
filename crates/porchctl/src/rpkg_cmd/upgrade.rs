//! `rpkg upgrade PACKAGE --workspace W [--revision N] [--strategy S]`: a new Draft of a
//! published downstream package, three-way merged onto a newer upstream revision; and
//! `rpkg upgrade --discover=upstream|downstream [NAME...]`: which upgrades are available.

use clap::Args;
use porch_api::tasks::{PackageRevisionRef, PackageUpgradeTaskSpec};
use porch_api::{PackageRevision, Repository, Task};

use super::create::package_revision;
use super::discover::{Revisions, check_discover_or_one, revisions_unless_discovering};
use super::typed::{self, RevisionExt};
use crate::remote::api::{PACKAGE_REVISIONS, REPOSITORIES};
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
        if check_discover_or_one(&self.discover, &self.names, "SOURCE_PACKAGE_REVISION")? {
            return Ok(());
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

/// The upstream this revision was made from: a clone's source, an upgrade's new
/// upstream, or for a copy that of the revision it was copied from.
fn upstream_name(prs: &Revisions, pr: &PackageRevision) -> String {
    let mut pr = pr;
    for _ in 0..prs.0.len() + 1 {
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
                match prs.find(source) {
                    Some(src) => pr = src,
                    None => return String::new(),
                }
            }
            _ => return String::new(),
        }
    }
    String::new()
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
    let old_name = upstream_name(prs, local);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rpkg_cmd::discover::fixtures::world;
    use serde_json::{Value, json};

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
}
