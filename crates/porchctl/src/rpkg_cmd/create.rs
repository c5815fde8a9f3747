//! `rpkg init`, `rpkg clone` and `rpkg copy`: each creates one Draft PackageRevision with
//! a single task and prints `<name> created` (the name the server composed).

use clap::Args;
use serde_json::{Map, Value, json};

use super::source::CloneSource;
use super::{name_of, text};
use crate::remote::api::PACKAGE_REVISIONS;
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
    #[arg(long, value_delimiter = ',')]
    pub keywords: Vec<String>,
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
    #[arg(long, default_value = "", hide_default_value = true)]
    pub repository: String,
    /// Workspace name of the downstream package.
    #[arg(long, default_value = "v1")]
    pub workspace: String,
    /// Name of the secret for basic authentication with the upstream (git only).
    #[arg(long, default_value = "", hide_default_value = true)]
    pub secret_ref: String,
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
        visible_alias = "ws",
        default_value = "",
        hide_default_value = true
    )]
    pub workspace: String,
}

/// The PackageRevision upstream porchctl posts (Draft, one task).
pub fn package_revision(
    ns: &str,
    package: &str,
    workspace: &str,
    repository: &str,
    task: Value,
) -> Value {
    json!({
        "apiVersion": "porch.kpt.dev/v1alpha1",
        "kind": "PackageRevision",
        "metadata": {"namespace": ns},
        "spec": {
            "packageName": package,
            "workspaceName": workspace,
            "repository": repository,
            "tasks": [task],
        },
        "status": {},
    })
}

/// The `init` task, empty fields omitted as Go's `omitempty` does.
pub fn init_task(description: &str, keywords: &[String], site: &str) -> Value {
    let mut init = Map::new();
    if !description.is_empty() {
        init.insert("description".into(), json!(description));
    }
    let keywords: Vec<&String> = keywords.iter().filter(|k| !k.is_empty()).collect();
    if !keywords.is_empty() {
        init.insert("keywords".into(), json!(keywords));
    }
    if !site.is_empty() {
        init.insert("site".into(), json!(site));
    }
    json!({"type": "init", "init": init})
}

async fn create(
    conn: &ConnectionFlags,
    body: impl FnOnce(&str) -> Value,
) -> Result<(), RemoteError> {
    let remote = conn.connect().await?;
    let ns = remote.namespace.as_str();
    let created = PACKAGE_REVISIONS
        .create(&remote.client, ns, &body(ns))
        .await?;
    remote::out(&format!("{} created\n", name_of(&created)))
}

pub async fn init(conn: &ConnectionFlags, a: InitArgs) -> Result<(), RemoteError> {
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
    let task = init_task(&a.description, &a.keywords, &a.site);
    create(conn, |ns| {
        package_revision(ns, &name, &a.workspace, &a.repository, task)
    })
    .await
}

pub async fn clone(conn: &ConnectionFlags, a: CloneArgs) -> Result<(), RemoteError> {
    let [source, target] = a.args.as_slice() else {
        return Err(RemoteError::Usage(format!(
            "SOURCE_PACKAGE and NAME are required positional arguments; {} provided",
            a.args.len()
        )));
    };
    if a.repository.is_empty() {
        return Err(RemoteError::Usage(
            "--repository is required to specify downstream repository".into(),
        ));
    }
    if a.workspace.is_empty() {
        return Err(RemoteError::Usage(
            "--workspace is required to specify downstream workspace name".into(),
        ));
    }
    let task = CloneSource::parse(source, &a.directory, &a.git_ref, &a.secret_ref)?.task();
    create(conn, |ns| {
        package_revision(ns, target, &a.workspace, &a.repository, task)
    })
    .await
}

pub async fn copy(conn: &ConnectionFlags, a: CopyArgs) -> Result<(), RemoteError> {
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
    let remote = conn.connect().await?;
    let ns = remote.namespace.as_str();
    // Upstream reads the source before it checks the workspace flag.
    let src = PACKAGE_REVISIONS.get(&remote.client, ns, source).await?;
    if a.workspace.is_empty() {
        return Err(RemoteError::Usage(
            "--workspace is required to specify workspace name".into(),
        ));
    }
    let task = json!({"type": "edit", "edit": {"sourceRef": {"name": name_of(&src)}}});
    let body = package_revision(
        ns,
        text(&src, "/spec/packageName"),
        &a.workspace,
        text(&src, "/spec/repository"),
        task,
    );
    let created = PACKAGE_REVISIONS.create(&remote.client, ns, &body).await?;
    remote::out(&format!("{} created\n", name_of(&created)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_body_like_upstream() {
        let t = init_task(
            "Test Package Description",
            &["test".into(), "package".into()],
            "http://kpt.dev/init-package",
        );
        let pr = package_revision("rpkg-init", "init-package", "init-1", "git", t);
        assert_eq!(
            pr["spec"],
            json!({"packageName": "init-package", "workspaceName": "init-1", "repository": "git",
                "tasks": [{"type": "init", "init": {"description": "Test Package Description",
                    "keywords": ["test", "package"], "site": "http://kpt.dev/init-package"}}]})
        );
        assert_eq!(pr["metadata"], json!({"namespace": "rpkg-init"}));
        assert_eq!(init_task("", &[], ""), json!({"type": "init", "init": {}}));
    }
}
