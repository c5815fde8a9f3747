//! `rpkg update PACKAGE --revision N` and `rpkg update --discover=upstream|downstream`:
//! Nephio porchctl's older way to move a Draft clone to another upstream revision, kept for
//! the scripts and tests written against it (kptdev's porchctl has only `rpkg upgrade`).
//!
//! The Draft is updated in place: a clone from a registered revision gets an `update` task
//! appended naming the new upstream revision; a clone from a git URL gets its clone task's
//! ref set to `v<N>` (kpt's `<directory>/v<N>` tag). The server merges with the clone's
//! strategy. Nephio's porchctl also rewrote the clone task of a registered clone (a pointer
//! it shared with the appended task) and took the new revision from any repository holding a
//! package of that name; neither is reproduced (see COMPATIBILITY.md).

use clap::Args;
use porch_api::tasks::{PackageRevisionRef, PackageUpdateTaskSpec};
use porch_api::{PackageRevision, Task};

use super::discover::{Revisions, check_discover_or_one, revisions_unless_discovering};
use super::typed::{self, RevisionExt};
use crate::remote::api::PACKAGE_REVISIONS;
use crate::remote::{self, ConnectionFlags, RemoteError};

/// Flags of `rpkg update`.
#[derive(Debug, Args)]
pub struct UpdateArgs {
    /// The Draft to update (or, with --discover, revisions to restrict the listing to).
    #[arg(value_name = "SOURCE_PACKAGE")]
    pub names: Vec<String>,
    /// Revision of the upstream package to update to.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true, value_parser = crate::cli::GoInt::<i64>::new())]
    pub revision: i64,
    /// List available updates instead: upstream or downstream.
    #[arg(long, default_value = "", hide_default_value = true)]
    pub discover: String,
}

impl UpdateArgs {
    fn validate(&self) -> Result<(), RemoteError> {
        if !check_discover_or_one(&self.discover, &self.names, "SOURCE_PACKAGE")?
            && self.revision == 0
        {
            return Err(RemoteError::Usage("revision is required".into()));
        }
        Ok(())
    }
}

pub async fn run(conn: &ConnectionFlags, a: UpdateArgs) -> Result<(), RemoteError> {
    let remote = conn.connect().await?;
    a.validate()?;
    let ns = remote.namespace.as_str();
    let Some(prs) = revisions_unless_discovering(&remote, &a.discover, &a.names).await? else {
        return Ok(());
    };
    let name = a.names[0].as_str();
    if prs.find(name).is_none() {
        return Err(RemoteError::Failed(format!(
            "could not find package revision {name}"
        )));
    }
    super::retry_on_conflict(|| async {
        let current: PackageRevision = typed::decode(
            &PACKAGE_REVISIONS.get(&remote.client, ns, name).await?,
            "package revision",
        )?;
        let updated = updated(&current, &prs, a.revision)?;
        PACKAGE_REVISIONS
            .replace(&remote.client, ns, name, &typed::to_body(&updated)?)
            .await
    })
    .await?;
    remote::out(&format!("{name} updated\n"))
}

/// `pr` with its tasks moved to revision `revision` of its upstream.
fn updated(
    pr: &PackageRevision,
    prs: &Revisions,
    revision: i64,
) -> Result<PackageRevision, RemoteError> {
    let fail = |m: String| Err(RemoteError::Failed(m));
    let mut pr = pr.clone();
    let package = pr.package().to_owned();
    let tasks = pr.spec.tasks.get_or_insert_with(Vec::new);
    let Some(clone) = tasks
        .first_mut()
        .filter(|t| t.type_ == "clone")
        .and_then(|t| t.clone.as_mut())
        .and_then(|c| c.upstream.as_mut())
    else {
        return fail(format!(
            "upstream source not found for package rev {package:?}; only cloned packages can be updated"
        ));
    };
    match clone.type_.as_deref() {
        Some("git") => {
            let Some(git) = clone.git.as_mut() else {
                return fail(format!(
                    "upstream source not found for package rev {package:?}; only cloned packages can be updated"
                ));
            };
            git.ref_ = format!("v{revision}");
        }
        Some("oci") => return fail("update not implemented for oci packages".into()),
        _ => {
            let upstream_name = clone
                .upstream_ref
                .as_ref()
                .map(|r| r.name.clone())
                .unwrap_or_default();
            let Some(upstream) = prs.find(&upstream_name) else {
                return fail(format!(
                    "upstream package revision {upstream_name} no longer exists"
                ));
            };
            let Some(new) = prs.0.iter().find(|p| {
                p.repository() == upstream.repository()
                    && p.package() == upstream.package()
                    && p.revision() == revision
            }) else {
                return fail(format!(
                    "revision {revision} does not exist for package {package}"
                ));
            };
            let mut to = clone.clone();
            to.upstream_ref = Some(PackageRevisionRef {
                name: new.name().to_owned(),
            });
            tasks.push(Task {
                type_: "update".into(),
                update: Some(PackageUpdateTaskSpec { upstream: Some(to) }),
                ..Default::default()
            });
        }
    }
    Ok(pr)
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn pr(name: &str, repo: &str, pkg: &str, rev: i64, lc: &str, task: Value) -> PackageRevision {
        typed::decode(
            &json!({"apiVersion": "porch.kpt.dev/v1alpha1", "kind": "PackageRevision",
                "metadata": {"name": name}, "spec": {"repository": repo, "packageName": pkg,
                "revision": rev, "lifecycle": lc, "tasks": [task]}}),
            "package revision",
        )
        .expect("decodes")
    }

    fn args(v: &[&str]) -> UpdateArgs {
        use clap::Parser;
        #[derive(Parser)]
        struct T {
            #[command(flatten)]
            a: UpdateArgs,
        }
        let mut all = vec!["t"];
        all.extend_from_slice(v);
        T::try_parse_from(all).expect("parses").a
    }

    #[test]
    fn flags_are_checked_as_upstream_checks_them() {
        let e = |v: &[&str]| match args(v).validate() {
            Err(RemoteError::Usage(m)) => m,
            other => panic!("{other:?}"),
        };
        assert_eq!(e(&[]), "SOURCE_PACKAGE is a required positional argument");
        assert_eq!(e(&["a"]), "revision is required");
        assert_eq!(
            e(&["a", "b", "--revision", "2"]),
            "too many arguments; SOURCE_PACKAGE is the only accepted positional arguments"
        );
        assert_eq!(
            e(&["--discover=sideways"]),
            "argument for 'discover' must be one of 'upstream' or 'downstream'"
        );
        assert!(args(&["a", "--revision=2"]).validate().is_ok());
        assert!(
            args(&["--discover", "downstream", "x", "y"])
                .validate()
                .is_ok()
        );
    }

    fn world() -> Revisions {
        let init = json!({"type": "init"});
        Revisions(vec![
            pr("bp.app.v1", "bp", "app", 1, "Published", init.clone()),
            pr("bp.app.v2", "bp", "app", 2, "Published", init.clone()),
            pr("other.app.v3", "other", "app", 3, "Published", init.clone()),
            pr(
                "dep.app.ws",
                "dep",
                "app",
                0,
                "Draft",
                json!({"type": "clone", "clone": {"upstreamRef": {"upstreamRef": {"name": "bp.app.v1"}}}}),
            ),
            pr(
                "dep.git.ws",
                "dep",
                "git",
                0,
                "Draft",
                json!({"type": "clone", "clone": {"strategy": "copy-merge", "upstreamRef": {"type": "git",
                    "git": {"repo": "http://h/bp.git", "ref": "update/v1", "directory": "update"}}}}),
            ),
            pr("dep.fresh.ws", "dep", "fresh", 0, "Draft", init),
        ])
    }

    fn tasks_of(pr: &PackageRevision) -> Value {
        serde_json::to_value(pr.spec.tasks.as_ref().expect("tasks")).expect("json")
    }

    #[test]
    fn a_registered_clone_gets_an_update_task_and_keeps_its_clone_task() {
        let prs = world();
        let draft = prs.find("dep.app.ws").expect("draft");
        let moved = updated(draft, &prs, 2).expect("updated");
        assert_eq!(
            tasks_of(&moved),
            json!([
                {"type": "clone", "clone": {"upstreamRef": {"upstreamRef": {"name": "bp.app.v1"}}}},
                {"type": "update", "update": {"upstreamRef": {"upstreamRef": {"name": "bp.app.v2"}}}}
            ])
        );
        // Revision 3 exists only in another repository holding a package of that name.
        let err = updated(draft, &prs, 3).expect_err("no v3 in bp");
        assert_eq!(err.to_string(), "revision 3 does not exist for package app");
    }

    #[test]
    fn a_git_clone_gets_the_tag_of_the_revision() {
        let prs = world();
        let moved = updated(prs.find("dep.git.ws").expect("draft"), &prs, 2).expect("updated");
        assert_eq!(
            tasks_of(&moved),
            json!([{"type": "clone", "clone": {"strategy": "copy-merge", "upstreamRef": {"type": "git",
                "git": {"repo": "http://h/bp.git", "ref": "v2", "directory": "update"}}}}])
        );
    }

    #[test]
    fn only_clones_can_be_updated() {
        let prs = world();
        let err = updated(prs.find("dep.fresh.ws").expect("draft"), &prs, 2).expect_err("init");
        assert_eq!(
            err.to_string(),
            "upstream source not found for package rev \"fresh\"; only cloned packages can be updated"
        );
        let mut gone = prs.find("dep.app.ws").expect("draft").clone();
        gone.spec.tasks.as_mut().expect("tasks")[0]
            .clone
            .as_mut()
            .and_then(|c| c.upstream.as_mut())
            .and_then(|u| u.upstream_ref.as_mut())
            .expect("ref")
            .name = "bp.app.v9".into();
        let err = updated(&gone, &prs, 2).expect_err("gone");
        assert_eq!(
            err.to_string(),
            "upstream package revision bp.app.v9 no longer exists"
        );
    }
}
