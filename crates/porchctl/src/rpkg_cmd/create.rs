//! `rpkg init`, `rpkg clone` and `rpkg copy`: each creates one Draft PackageRevision with
//! a single task and prints `<name> created` (the name the server composed).

use clap::Args;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use porch_api::tasks::{PackageEditTaskSpec, PackageInitTaskSpec, PackageRevisionRef};
use porch_api::{PackageRevision, PackageRevisionSpec, PackageRevisionStatus, Task};

use porch_core::names::check_subpackage_dir;

use super::source::CloneSource;
use super::typed::{self, RevisionExt};
use crate::remote::api::PACKAGE_REVISIONS;
use crate::remote::connection::Remote;
use crate::remote::{self, ConnectionFlags, RemoteError};

/// Flags of `rpkg init`.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// The name of the new package.
    #[arg(value_name = "PACKAGE_NAME")]
    pub name: Option<String>,
    /// Short description of the package.
    #[arg(long, default_value = "sample description")]
    pub description: String,
    /// List of keywords for the package (comma-separated or repeated).
    #[arg(long, value_parser = crate::cli::GoCsv, action = clap::ArgAction::Append)]
    pub keywords: Vec<crate::cli::CsvElements>,
    /// Link to page with information about the package.
    #[arg(long, default_value = "", hide_default_value = true)]
    pub site: String,
    /// Repository in which the package will be created.
    #[arg(long, default_value = "", hide_default_value = true)]
    pub repository: String,
    /// Workspace name of the package.
    #[arg(long, default_value = "", hide_default_value = true)]
    pub workspace: String,
}

/// Flags of `rpkg clone`.
#[derive(Debug, Args)]
pub struct CloneArgs {
    /// SOURCE_PACKAGE_REV and TARGET_PACKAGE_NAME.
    #[arg(value_name = "SOURCE_PACKAGE_REV TARGET_PACKAGE_NAME")]
    pub args: Vec<String>,
    /// Directory within the repository where the upstream package is located.
    #[arg(long, default_value = "", hide_default_value = true)]
    pub directory: String,
    /// Ref in the repository where the upstream package is located (branch, tag, SHA).
    #[arg(long = "ref", default_value = "", hide_default_value = true)]
    pub git_ref: String,
    /// Repository to which the package will be cloned (downstream repository).
    #[arg(long)]
    pub repository: Option<String>,
    /// Workspace name of the downstream package [default: v1].
    #[arg(long)]
    pub workspace: Option<String>,
    /// Name of the secret for basic authentication with the upstream (git only).
    #[arg(long, default_value = "", hide_default_value = true)]
    pub secret_ref: String,
    /// Directory of the Draft NAME into which the upstream is cloned as an independent
    /// subpackage (instead of creating a new package revision).
    #[arg(long, default_value = "", hide_default_value = true)]
    pub subpackage_dir: String,
    /// Update strategy of later `rpkg update`s of this package: resource-merge (the
    /// default), fast-forward, force-delete-replace or copy-merge (older porchctl's flag).
    #[arg(long, default_value = "", hide_default_value = true)]
    pub strategy: String,
}

/// Older porchctl's `toMergeStrategy`: the flag's value must name a kpt update strategy.
fn merge_strategy(strategy: &str) -> Result<Option<String>, RemoteError> {
    match strategy {
        "" => Ok(None),
        "resource-merge" | "fast-forward" | "force-delete-replace" | "copy-merge" => {
            Ok(Some(strategy.to_owned()))
        }
        other => Err(RemoteError::Usage(format!("invalid strategy: {other:?}"))),
    }
}

/// Flags of `rpkg copy`.
#[derive(Debug, Args)]
pub struct CopyArgs {
    /// The package revision to copy.
    #[arg(value_name = "SOURCE_PACKAGE_REV_NAME")]
    pub args: Vec<String>,
    /// Workspace name of the copy of the package.
    #[arg(
        short = 'w',
        long,
        alias = "ws",
        default_value = "",
        hide_default_value = true
    )]
    pub workspace: String,
}

/// The PackageRevision upstream porchctl posts (Draft, one task, an empty status).
pub fn package_revision(
    ns: &str,
    package: &str,
    workspace: &str,
    repository: &str,
    task: Task,
) -> PackageRevision {
    let mut pr = PackageRevision::new(
        "",
        PackageRevisionSpec {
            package_name: Some(package.into()),
            workspace_name: Some(workspace.into()),
            repository: Some(repository.into()),
            tasks: Some(vec![task]),
            ..Default::default()
        },
    );
    pr.metadata = ObjectMeta {
        namespace: Some(ns.into()),
        ..Default::default()
    };
    pr.status = Some(PackageRevisionStatus::default());
    pr
}

/// The `init` task, empty fields omitted as Go's `omitempty` does.
pub fn init_task(description: &str, keywords: &[String], site: &str) -> Task {
    let some = |s: &str| (!s.is_empty()).then(|| s.to_owned());
    // As upstream: the flag's elements as given (`--keywords=` gives none).
    let keywords = keywords.to_vec();
    Task {
        type_: "init".into(),
        init: Some(PackageInitTaskSpec {
            subpackage: None,
            description: some(description),
            keywords: (!keywords.is_empty()).then_some(keywords),
            site: some(site),
        }),
        ..Default::default()
    }
}

async fn create(
    remote: &Remote,
    body: impl FnOnce(&str) -> PackageRevision,
) -> Result<(), RemoteError> {
    let ns = remote.namespace.as_str();
    let created = PACKAGE_REVISIONS
        .create(&remote.client, ns, &typed::to_body(&body(ns))?)
        .await?;
    let created: PackageRevision = typed::decode(&created, "package revision")?;
    remote::out(&format!("{} created\n", created.name()))
}

pub async fn init(conn: &ConnectionFlags, a: InitArgs) -> Result<(), RemoteError> {
    // Upstream's preRunE builds the client before it looks at the arguments.
    let remote = conn.connect().await?;
    let Some(name) = a.name else {
        return Err(RemoteError::Usage(
            "PACKAGE_NAME is a required positional argument".into(),
        ));
    };
    if a.repository.is_empty() {
        return Err(RemoteError::Usage(
            "--repository is required to specify target repository".into(),
        ));
    }
    if a.workspace.is_empty() {
        return Err(RemoteError::Usage(
            "--workspace is required to specify workspace name".into(),
        ));
    }
    let task = init_task(
        &a.description,
        &crate::cli::csv_elements(&a.keywords),
        &a.site,
    );
    create(&remote, |ns| {
        package_revision(ns, &name, &a.workspace, &a.repository, task)
    })
    .await
}

pub async fn clone(conn: &ConnectionFlags, a: CloneArgs) -> Result<(), RemoteError> {
    let remote = conn.connect().await?;
    // Checked first, as older porchctl's preRunE did.
    let strategy = merge_strategy(&a.strategy)?;
    let [source, target] = a.args.as_slice() else {
        return Err(RemoteError::Usage(format!(
            "SOURCE_PACKAGE and NAME are required positional arguments; {} provided",
            a.args.len()
        )));
    };
    let subpackage = !a.subpackage_dir.is_empty();
    if subpackage {
        check_subpackage_dir(&a.subpackage_dir).map_err(|e| {
            RemoteError::Usage(format!(
                "invalid --subpackage-dir {:?}: {e}",
                a.subpackage_dir
            ))
        })?;
        if a.repository.is_some() {
            return Err(RemoteError::Usage(
                "--repository may not be specified on subpackage clones".into(),
            ));
        }
        if a.workspace.is_some() {
            return Err(RemoteError::Usage(
                "--workspace may not be specified on subpackage clones".into(),
            ));
        }
    }
    let repository = a.repository.clone().unwrap_or_default();
    let workspace = a.workspace.clone().unwrap_or_else(|| "v1".into());
    if !subpackage && repository.is_empty() {
        return Err(RemoteError::Usage(
            "--repository is required to specify downstream repository".into(),
        ));
    }
    if !subpackage && workspace.is_empty() {
        return Err(RemoteError::Usage(
            "--workspace is required to specify downstream workspace name".into(),
        ));
    }
    let mut task = CloneSource::parse(source, &a.directory, &a.git_ref, &a.secret_ref)?.task();
    if let Some(clone) = task.clone.as_mut() {
        clone.strategy = strategy;
    }
    if subpackage {
        if let Some(clone) = task.clone.as_mut() {
            clone.subpackage_dir = Some(a.subpackage_dir.clone());
        }
        return append_subpackage_task(&remote, target, task, "clone")
            .await
            .and_then(|()| {
                remote::out(&format!(
                    "subpackage cloned into directory {:?} in package revision {target:?}\n",
                    a.subpackage_dir
                ))
            });
    }
    create(&remote, |ns| {
        package_revision(ns, target, &workspace, &repository, task)
    })
    .await
}

/// kptdev porchctl's subpackage clone and upgrade: `task` appended to Draft `parent`, whose
/// only task must be its creating one, and the Draft updated (the server applies the task).
pub async fn append_subpackage_task(
    remote: &Remote,
    parent: &str,
    task: Task,
    what: &str,
) -> Result<(), RemoteError> {
    let ns = remote.namespace.as_str();
    let mut pr: PackageRevision = typed::decode(
        &PACKAGE_REVISIONS.get(&remote.client, ns, parent).await?,
        "package revision",
    )?;
    if pr.lifecycle() != "Draft" {
        return Err(RemoteError::Failed(format!(
            "to {what} an independent subpackage, its parent package must be in state draft, not {:?}",
            pr.lifecycle()
        )));
    }
    let tasks = pr.spec.tasks.get_or_insert_with(Vec::new);
    if tasks.len() != 1 {
        return Err(RemoteError::Failed(format!(
            "to {what} an independent subpackage, parent package revision {parent:?} must have exactly 1 existing task (found {})",
            tasks.len()
        )));
    }
    tasks.push(task);
    PACKAGE_REVISIONS
        .replace(&remote.client, ns, parent, &typed::to_body(&pr)?)
        .await?;
    Ok(())
}

pub async fn copy(conn: &ConnectionFlags, a: CopyArgs) -> Result<(), RemoteError> {
    let remote = conn.connect().await?;
    let source = match a.args.as_slice() {
        [] => {
            return Err(RemoteError::Usage(
                "SOURCE_PACKAGE is a required positional argument".into(),
            ));
        }
        [one] => one,
        _ => {
            return Err(RemoteError::Usage(
                "too many arguments; SOURCE_PACKAGE is the only accepted positional arguments"
                    .into(),
            ));
        }
    };
    let ns = remote.namespace.as_str();
    // Upstream reads the source before it checks the workspace flag.
    let src: PackageRevision = typed::decode(
        &PACKAGE_REVISIONS.get(&remote.client, ns, source).await?,
        "package revision",
    )?;
    if a.workspace.is_empty() {
        return Err(RemoteError::Usage(
            "--workspace is required to specify workspace name".into(),
        ));
    }
    let task = Task {
        type_: "edit".into(),
        edit: Some(PackageEditTaskSpec {
            source: Some(PackageRevisionRef {
                name: src.name().to_owned(),
            }),
        }),
        ..Default::default()
    };
    let body = package_revision(ns, src.package(), &a.workspace, src.repository(), task);
    let created = PACKAGE_REVISIONS
        .create(&remote.client, ns, &typed::to_body(&body)?)
        .await?;
    let created: PackageRevision = typed::decode(&created, "package revision")?;
    remote::out(&format!("{} created\n", created.name()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn clone_strategies_as_older_porchctl_names_them() {
        assert_eq!(merge_strategy("").expect("none"), None);
        for s in [
            "resource-merge",
            "fast-forward",
            "force-delete-replace",
            "copy-merge",
        ] {
            assert_eq!(merge_strategy(s).expect("known").as_deref(), Some(s));
        }
        let err = merge_strategy("rebase").expect_err("unknown");
        assert_eq!(err.to_string(), "invalid strategy: \"rebase\"");
    }

    #[test]
    fn init_body_like_upstream() {
        let t = init_task(
            "Test Package Description",
            &["test".into(), "package".into()],
            "http://kpt.dev/init-package",
        );
        let pr = package_revision("rpkg-init", "init-package", "init-1", "git", t);
        let pr = serde_json::to_value(pr).expect("json");
        assert_eq!(
            pr,
            json!({"apiVersion": "porch.kpt.dev/v1alpha1", "kind": "PackageRevision",
                "metadata": {"namespace": "rpkg-init"},
                "spec": {"packageName": "init-package", "workspaceName": "init-1",
                    "repository": "git",
                    "tasks": [{"type": "init", "init": {"description": "Test Package Description",
                        "keywords": ["test", "package"], "site": "http://kpt.dev/init-package"}}]},
                "status": {}})
        );
        assert_eq!(
            pr["spec"],
            json!({"packageName": "init-package", "workspaceName": "init-1", "repository": "git",
                "tasks": [{"type": "init", "init": {"description": "Test Package Description",
                    "keywords": ["test", "package"], "site": "http://kpt.dev/init-package"}}]})
        );
        assert_eq!(pr["metadata"], json!({"namespace": "rpkg-init"}));
        assert_eq!(
            serde_json::to_value(init_task("", &[], "")).expect("json"),
            json!({"type": "init", "init": {}})
        );
    }
}
