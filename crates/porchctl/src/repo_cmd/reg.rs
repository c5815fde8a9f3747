//! `porchctl repo reg REPOSITORY`: creates the optional auth Secret, then the Repository.

use std::time::{Duration, Instant};

use clap::Args;
use serde_json::{Map, Value, json};

use crate::remote::api::{REPOSITORIES, SECRETS};
use crate::remote::spinner::Spinner;
use crate::remote::{ConnectionFlags, RemoteError};

pub const LONG: &str = "Register a package repository.

  porchctl repo reg REPOSITORY [flags]

Args:

  REPOSITORY:
    The URI for the registry. It can be either a git repository
    or an oci repository. For the latter, the URI must have the
    'oci://' prefix.";

pub const EXAMPLES: &str = "Examples:
  # register a new git repository with the name generated from the URI.
  $ porchctl repo register https://github.com/platkrm/demo-blueprints.git --namespace=default

  # register a new deployment repository with name foo.
  $ porchctl repo register https://github.com/platkrm/blueprints-deployment.git --name=foo --deployment --namespace=bar

  # register with basic auth and wait until porch has read the repository.
  $ porchctl repo register https://example.com/org/blueprints.git --repo-basic-username=me --repo-basic-password=secret --wait";

/// Flags of `repo reg`.
#[derive(Debug, Args)]
pub struct RegArgs {
    /// The git repository URL, or `oci://REGISTRY` for an OCI repository.
    #[arg(value_name = "REPOSITORY")]
    pub repository: Option<String>,
    /// Directory within the repository where to look for packages.
    #[arg(long, aliases = ["dir", "folder"], default_value = "/")]
    pub directory: String,
    /// Branch in the repository where finalized packages are committed.
    #[arg(long, default_value = "main")]
    pub branch: String,
    /// Create the package branch if it doesn't already exist.
    #[arg(long)]
    pub create_branch: bool,
    /// Name of the package repository. If unspecified, will use the name portion (last
    /// segment) of the repository URL.
    #[arg(long, default_value = "", hide_default_value = true)]
    pub name: String,
    /// Brief description of the package repository.
    #[arg(
        short = 'd',
        long,
        alias = "desc",
        default_value = "",
        hide_default_value = true
    )]
    pub description: String,
    /// Repository is a deployment repository; packages in a deployment repository are
    /// considered deployment-ready.
    #[arg(long, alias = "deploy")]
    pub deployment: bool,
    /// Username for repository authentication using basic auth.
    #[arg(
        long,
        alias = "username",
        default_value = "",
        hide_default_value = true
    )]
    pub repo_basic_username: String,
    /// Password for repository authentication using basic auth.
    #[arg(long, aliases = ["pw", "pass", "password"], default_value = "", hide_default_value = true)]
    pub repo_basic_password: String,
    /// Use workload identity for authentication with the repo.
    #[arg(long)]
    pub repo_workload_identity: bool,
    /// Cron expression for periodic repository syncs (e.g. "*/10 * * * *").
    #[arg(long, default_value = "", hide_default_value = true)]
    pub sync_schedule: String,
    /// Manage the repository with the v1alpha2 API (adds the migration annotation).
    #[arg(long)]
    pub v1alpha2: bool,
    /// Wait until the repository is Ready (porchctl extension; upstream returns at once).
    #[arg(long)]
    pub wait: bool,
    /// How long --wait waits (Go duration, e.g. 90s, 2m).
    #[arg(long, default_value = "2m", value_name = "DURATION", value_parser = crate::cli::GoDuration)]
    pub timeout: Duration,
}

/// Upstream's `LastSegment`: the URL's last path segment without `.git`.
pub fn last_segment(url: &str) -> String {
    let trimmed = url.trim_end_matches('/');
    let last = trimmed.rsplit('/').next().unwrap_or(trimmed);
    last.strip_suffix(".git").unwrap_or(last).to_string()
}

pub async fn run(conn: &ConnectionFlags, mut args: RegArgs) -> Result<(), RemoteError> {
    // Upstream's preRunE builds the client before runE looks at the arguments.
    let remote = conn.connect().await?;
    let Some(repository) = args.repository.clone() else {
        return Err(RemoteError::Usage(
            "repository is required positional argument".into(),
        ));
    };
    let timeout = args.timeout;
    let ns = remote.namespace.as_str();
    if args.name.is_empty() {
        args.name = last_segment(&repository);
    }
    let secret = auth_secret(&args, ns)?;
    let secret_name = match &secret {
        Some(s) => {
            SECRETS.create(&remote.client, ns, s).await?;
            format!("{}-auth", args.name)
        }
        None => String::new(),
    };
    // As upstream: checked once the auth Secret exists, just before the Repository.
    if !args.sync_schedule.is_empty() {
        validate_cron(&args.sync_schedule)?;
    }
    let body = repository_body(&args, &repository, ns, &secret_name);
    REPOSITORIES.create(&remote.client, ns, &body).await?;
    if args.wait {
        wait_ready(&remote.client, ns, &args.name, timeout).await?;
    }
    Ok(())
}

/// The Repository as upstream's Go client sends it (its zero values included).
pub fn repository_body(args: &RegArgs, repository: &str, ns: &str, secret_name: &str) -> Value {
    let mut spec = Map::new();
    if !args.description.is_empty() {
        spec.insert("description".into(), json!(args.description));
    }
    if args.deployment {
        spec.insert("deployment".into(), json!(true));
    }
    if let Some(registry) = repository.strip_prefix("oci://") {
        spec.insert("type".into(), json!("oci"));
        spec.insert(
            "oci".into(),
            json!({"registry": registry, "secretRef": {"name": secret_name}}),
        );
    } else {
        spec.insert("type".into(), json!("git"));
        let mut git = Map::new();
        git.insert("repo".into(), json!(repository));
        git.insert("branch".into(), json!(args.branch));
        if args.create_branch {
            git.insert("createBranch".into(), json!(true));
        }
        git.insert("directory".into(), json!(args.directory));
        git.insert("secretRef".into(), json!({ "name": secret_name }));
        spec.insert("git".into(), Value::Object(git));
    }
    if !args.sync_schedule.is_empty() {
        spec.insert("sync".into(), json!({ "schedule": args.sync_schedule }));
    }
    // Newer apimachinery omits a zero creationTimestamp (`omitzero`) instead of sending null.
    let mut metadata = json!({"name": args.name, "namespace": ns});
    if args.v1alpha2 {
        metadata["annotations"] = json!({"porch.kpt.dev/v1alpha2-migration": "true"});
    }
    json!({
        "kind": "Repository",
        "apiVersion": "config.porch.kpt.dev/v1alpha1",
        "metadata": metadata,
        "spec": spec,
        "status": {},
    })
}

fn auth_secret(args: &RegArgs, ns: &str) -> Result<Option<Value>, RemoteError> {
    use base64::Engine as _;
    let basic = !args.repo_basic_username.is_empty() || !args.repo_basic_password.is_empty();
    if basic && args.repo_workload_identity {
        return Err(RemoteError::Usage(
            "both username/password and workload identity specified".into(),
        ));
    }
    let meta = json!({"name": format!("{}-auth", args.name), "namespace": ns});
    if args.repo_workload_identity {
        return Ok(Some(json!({
            "kind": "Secret", "apiVersion": "v1", "metadata": meta, "data": {},
            "type": "kpt.dev/workload-identity-auth",
        })));
    }
    if basic {
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        return Ok(Some(json!({
            "kind": "Secret", "apiVersion": "v1", "metadata": meta,
            "data": {"username": b64(&args.repo_basic_username), "password": b64(&args.repo_basic_password)},
            "type": "kubernetes.io/basic-auth",
        })));
    }
    Ok(None)
}

/// Upstream's check of `--sync-schedule`: robfig/cron's `ParseStandard`.
pub fn validate_cron(expr: &str) -> Result<(), RemoteError> {
    super::cron::parse_standard(expr)
        .map_err(|e| RemoteError::Usage(format!("invalid sync-schedule cron expression: {e}")))
}

/// Polls until the Ready condition is True; fails on timeout or an Error condition that
/// persists to the deadline.
async fn wait_ready(
    client: &kube::Client,
    ns: &str,
    name: &str,
    timeout: Duration,
) -> Result<(), RemoteError> {
    let spinner = Spinner::start(format!("waiting for repository {name:?} to be ready"));
    let deadline = Instant::now() + timeout;
    let mut last = String::from("no status yet");
    loop {
        let repo = REPOSITORIES.get(client, ns, name).await?;
        let ready = repo
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .and_then(|cs| {
                cs.iter()
                    .find(|c| c.get("type").and_then(Value::as_str) == Some("Ready"))
            });
        if let Some(c) = ready {
            let status = c.get("status").and_then(Value::as_str).unwrap_or_default();
            if status == "True" {
                return Ok(());
            }
            let reason = c.get("reason").and_then(Value::as_str).unwrap_or_default();
            let message = c.get("message").and_then(Value::as_str).unwrap_or_default();
            last = format!("{reason}: {message}");
            spinner.set_message(format!("repository {name:?}: {last}"));
        }
        if Instant::now() >= deadline {
            return Err(RemoteError::Api {
                code: 504,
                reason: "Timeout".into(),
                message: format!("repository {name:?} did not become ready ({last})"),
            });
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        a: RegArgs,
    }

    fn args(v: &[&str]) -> RegArgs {
        let mut all = vec!["t"];
        all.extend_from_slice(v);
        T::parse_from(all).a
    }

    #[test]
    fn names_from_urls() {
        assert_eq!(
            last_segment("https://github.com/platkrm/test-blueprints.git"),
            "test-blueprints"
        );
        assert_eq!(last_segment("http://h/nephio/porch-test"), "porch-test");
        assert_eq!(last_segment("http://h/nephio/porch-test/"), "porch-test");
        assert_eq!(last_segment("oci://us-docker.pkg.dev/p/r"), "r");
    }

    #[test]
    fn body_matches_upstream_auth_repository() {
        let mut a = args(&["https://github.com/platkrm/test-blueprints.git"]);
        a.name = "test-blueprints".into();
        let body = repository_body(
            &a,
            "https://github.com/platkrm/test-blueprints.git",
            "default",
            "test-blueprints-auth",
        );
        assert_eq!(
            body["spec"],
            json!({"type": "git", "git": {"branch": "main", "directory": "/",
                "repo": "https://github.com/platkrm/test-blueprints.git",
                "secretRef": {"name": "test-blueprints-auth"}}})
        );
    }

    #[test]
    fn full_body_with_schedule() {
        let a = args(&[
            "https://github.com/platkrm/test-blueprints.git",
            "--name=repository-resource-name",
            "--description=d",
            "--deployment",
            "--directory=/catalog",
            "--branch=main-branch",
            "--create-branch",
            "--sync-schedule=*/1 * * * *",
        ]);
        let body = repository_body(
            &a,
            "https://github.com/platkrm/test-blueprints.git",
            "ns",
            "",
        );
        assert_eq!(
            body["spec"],
            json!({"deployment": true, "description": "d", "type": "git",
                "git": {"branch": "main-branch", "createBranch": true, "directory": "/catalog",
                        "repo": "https://github.com/platkrm/test-blueprints.git", "secretRef": {"name": ""}},
                "sync": {"schedule": "*/1 * * * *"}})
        );
    }

    #[test]
    fn oci_and_secrets() {
        let mut a = args(&[
            "oci://reg/x",
            "--repo-basic-username=u",
            "--repo-basic-password=p",
        ]);
        a.name = "x".into();
        let body = repository_body(&a, "oci://reg/x", "ns", "x-auth");
        assert_eq!(
            body["spec"]["oci"],
            json!({"registry": "reg/x", "secretRef": {"name": "x-auth"}})
        );
        let s = auth_secret(&a, "ns").expect("ok").expect("secret");
        assert_eq!(s["metadata"], json!({"name": "x-auth", "namespace": "ns"}));
        assert_eq!(body["metadata"], json!({"name": "x", "namespace": "ns"}));
        assert_eq!(s["type"], "kubernetes.io/basic-auth");
        assert_eq!(s["data"], json!({"username": "dQ==", "password": "cA=="}));
        a.repo_workload_identity = true;
        assert!(auth_secret(&a, "ns").is_err());
    }

    #[test]
    fn cron_validation() {
        assert!(validate_cron("*/10 * * * *").is_ok());
        assert_eq!(
            validate_cron("* * *").map_err(|e| e.to_string()),
            Err("invalid sync-schedule cron expression: expected exactly 5 fields, found 3: [* * *]".into())
        );
    }
}
