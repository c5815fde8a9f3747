//! `porchctl rpkg`: package revisions on porch-server (`porch.kpt.dev/v1alpha1`
//! PackageRevision and PackageRevisionResources), with upstream porchctl's flags, output
//! and error texts.

mod create;
mod discover;
mod docs;
mod get;
mod lifecycle;
mod pull;
mod push;
mod resources;
mod source;
mod subpackage;
mod typed;
mod update;
mod upgrade;

use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Subcommand};

use crate::remote::{self, ConnectionFlags, RemoteError};

/// `porchctl rpkg ...`
#[derive(Debug, Args)]
pub struct RpkgArgs {
    #[command(flatten)]
    pub conn: ConnectionFlags,
    #[command(subcommand)]
    pub command: RpkgCommand,
}

/// The `rpkg` subcommands.
#[derive(Debug, Subcommand)]
pub enum RpkgCommand {
    /// Initializes a new package in a repository.
    #[command(long_about = docs::INIT_LONG, after_help = docs::INIT_EXAMPLES)]
    Init(create::InitArgs),
    /// Create a clone of an existing package revision.
    #[command(long_about = docs::CLONE_LONG, after_help = docs::CLONE_EXAMPLES)]
    Clone(create::CloneArgs),
    /// Create a new package revision from an existing one.
    #[command(visible_alias = "edit", long_about = docs::COPY_LONG, after_help = docs::COPY_EXAMPLES)]
    Copy(create::CopyArgs),
    /// List package revisions in registered repositories.
    #[command(visible_alias = "list", long_about = docs::GET_LONG, after_help = docs::GET_EXAMPLES)]
    Get(get::GetArgs),
    /// Pull the content of the package revision.
    #[command(visible_aliases = ["source", "read"], long_about = docs::PULL_LONG, after_help = docs::PULL_EXAMPLES)]
    Pull(pull::PullArgs),
    /// Push resources to a package revision.
    #[command(visible_aliases = ["sink", "write"], long_about = docs::PUSH_LONG, after_help = docs::PUSH_EXAMPLES)]
    Push(push::PushArgs),
    /// Propose that a package revision should be published.
    #[command(long_about = docs::PROPOSE_LONG, after_help = docs::PROPOSE_EXAMPLES)]
    Propose(lifecycle::NamesArgs),
    /// Approve a proposal to publish a package revision.
    #[command(long_about = docs::APPROVE_LONG, after_help = docs::APPROVE_EXAMPLES)]
    Approve(lifecycle::NamesArgs),
    /// Reject a proposal to publish or delete a package revision.
    #[command(long_about = docs::REJECT_LONG, after_help = docs::REJECT_EXAMPLES)]
    Reject(lifecycle::NamesArgs),
    /// Propose deletion of a published package revision.
    #[command(
        name = "propose-delete",
        visible_alias = "propose-del",
        long_about = docs::PROPOSE_DELETE_LONG,
        after_help = docs::PROPOSE_DELETE_EXAMPLES
    )]
    ProposeDelete(lifecycle::NamesArgs),
    /// Delete a package revision.
    #[command(visible_alias = "delete", long_about = docs::DEL_LONG, after_help = docs::DEL_EXAMPLES)]
    Del(lifecycle::NamesArgs),
    /// Upgrade a downstream package revision to a more recent upstream revision.
    #[command(long_about = docs::UPGRADE_LONG, after_help = docs::UPGRADE_EXAMPLES)]
    Upgrade(upgrade::UpgradeArgs),
    /// Update a downstream Draft to another revision of its upstream (older porchctl).
    #[command(long_about = docs::UPDATE_LONG, after_help = docs::UPDATE_EXAMPLES)]
    Update(update::UpdateArgs),
}

/// Runs an `rpkg` subcommand; prints its error the upstream way.
pub fn run(args: RpkgArgs, truncate_output: bool) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return remote::report(&RemoteError::Io(e)),
    };
    match runtime.block_on(dispatch(args, truncate_output)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => remote::report(&e),
    }
}

async fn dispatch(args: RpkgArgs, truncate_output: bool) -> Result<(), RemoteError> {
    let conn = &args.conn;
    match args.command {
        RpkgCommand::Init(a) => create::init(conn, a).await,
        RpkgCommand::Clone(a) => create::clone(conn, a).await,
        RpkgCommand::Copy(a) => create::copy(conn, a).await,
        RpkgCommand::Get(a) => get::run(conn, a).await,
        RpkgCommand::Pull(a) => pull::run(conn, a).await,
        RpkgCommand::Push(a) => push::run(conn, a, truncate_output).await,
        RpkgCommand::Propose(a) => lifecycle::propose(conn, a).await,
        RpkgCommand::Approve(a) => lifecycle::approve(conn, a).await,
        RpkgCommand::Reject(a) => lifecycle::reject(conn, a).await,
        RpkgCommand::ProposeDelete(a) => lifecycle::propose_delete(conn, a).await,
        RpkgCommand::Del(a) => lifecycle::delete(conn, a).await,
        RpkgCommand::Upgrade(a) => upgrade::run(conn, a).await,
        RpkgCommand::Update(a) => update::run(conn, a).await,
    }
}

/// client-go's `retry.DefaultRetry` around a get-modify-update: up to five attempts, 10 ms
/// apart, repeated only on a real 409 Conflict (the server's per-object try-lock).
async fn retry_on_conflict<T, F, Fut>(mut op: F) -> Result<T, RemoteError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, RemoteError>>,
{
    let mut attempt = 0;
    loop {
        attempt += 1;
        match op().await {
            Err(RemoteError::Api { code: 409, .. }) if attempt < 5 => {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            other => return other,
        }
    }
}

/// Upstream's `InitClient`: a namespace flag given an empty value (`-n ""`, `--namespace=`)
/// is refused before anything is sent instead of falling back to the context's namespace.
fn check_namespace_flag(conn: &ConnectionFlags) -> Result<(), RemoteError> {
    if conn.namespace.as_deref() == Some("") {
        return Err(RemoteError::Usage(
            "namespace flag specified without a value; please provide a value for --namespace/-n or omit the flag".into(),
        ));
    }
    Ok(())
}

/// `errors:\n  <msg>\n  <msg>` — the summary multi-name commands end with.
fn errors_summary(messages: &[String]) -> RemoteError {
    RemoteError::Failed(format!("errors:\n  {}", messages.join("\n  ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_text() {
        let e = errors_summary(&["a".into(), "b".into()]);
        assert_eq!(e.to_string(), "errors:\n  a\n  b");
    }

    #[tokio::test]
    async fn conflicts_are_retried() {
        let mut calls = 0;
        let r: Result<u8, RemoteError> = retry_on_conflict(|| {
            calls += 1;
            let n = calls;
            async move {
                if n < 3 {
                    Err(RemoteError::Api {
                        code: 409,
                        reason: "Conflict".into(),
                        message: "busy".into(),
                    })
                } else {
                    Ok(7)
                }
            }
        })
        .await;
        assert_eq!(r.expect("third attempt succeeds"), 7);
        assert_eq!(calls, 3);
    }
}
