//! `porchctl repo unreg NAME`: deletes the Repository, then its auth Secret.

use clap::Args;
use serde_json::Value;

use crate::remote::api::{REPOSITORIES, SECRETS};
use crate::remote::{ConnectionFlags, RemoteError};

pub const LONG: &str = "Unregister a repository.

  porchctl repo unreg REPOSITORY_NAME [flags]

Args:

  REPOSITORY_NAME:
    The name of a repository.";

pub const EXAMPLES: &str = "Examples:
  # unregister a repository and keep the auth secret.
  $ porchctl repo unreg registered-repository --namespace=default --keep-auth-secret";

/// Flags of `repo unreg`.
#[derive(Debug, Args)]
pub struct UnregArgs {
    /// The repository to unregister.
    #[arg(value_name = "REPOSITORY_NAME")]
    pub name: Option<String>,
    /// Keep the auth secret associated with the repository registration, if any.
    #[arg(long)]
    pub keep_auth_secret: bool,
}

pub async fn run(conn: &ConnectionFlags, args: UnregArgs) -> Result<(), RemoteError> {
    // Upstream's preRunE builds the client before runE looks at the arguments.
    let remote = conn.connect().await?;
    let Some(name) = args.name else {
        return Err(RemoteError::Usage(
            "REPOSITORY is a required positional argument".into(),
        ));
    };
    let ns = remote.namespace.as_str();
    let repo = REPOSITORIES.get(&remote.client, ns, &name).await?;
    REPOSITORIES.delete(&remote.client, ns, &name).await?;
    if args.keep_auth_secret {
        return Ok(());
    }
    let Some(secret) = secret_name(&repo) else {
        return Ok(());
    };
    SECRETS
        .delete(&remote.client, ns, &secret)
        .await
        .map_err(|e| match e {
            RemoteError::Api {
                code,
                reason,
                message,
            } => RemoteError::Api {
                code,
                reason,
                message: format!("failed to delete Secret {secret}: {message}"),
            },
            other => other,
        })?;
    Ok(())
}

/// `spec.git.secretRef.name`, else `spec.oci.secretRef.name`, when not empty.
fn secret_name(repo: &Value) -> Option<String> {
    let spec = repo.get("spec")?;
    let r = if let Some(g) = spec.get("git") {
        g.pointer("/secretRef/name")
    } else {
        spec.pointer("/oci/secretRef/name")
    };
    r.and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secret_names() {
        assert_eq!(
            secret_name(&json!({"spec": {"git": {"secretRef": {"name": "r-auth"}}}})),
            Some("r-auth".into())
        );
        assert_eq!(
            secret_name(&json!({"spec": {"git": {"secretRef": {"name": ""}}}})),
            None
        );
        assert_eq!(
            secret_name(&json!({"spec": {"oci": {"secretRef": {"name": "o"}}}})),
            Some("o".into())
        );
    }
}
