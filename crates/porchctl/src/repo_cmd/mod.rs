//! `porchctl repo`: register, list, unregister and sync package repositories
//! (`config.porch.kpt.dev/v1alpha1` Repository objects), with upstream porchctl's flags,
//! output and error texts.

mod cron;
mod get;
mod reg;
mod sync;
mod unreg;

use std::process::ExitCode;

use clap::{Args, Subcommand};

use crate::remote::{self, ConnectionFlags, RemoteError};

/// `porchctl repo ...`
#[derive(Debug, Args)]
pub struct RepoArgs {
    #[command(flatten)]
    pub conn: ConnectionFlags,
    #[command(subcommand)]
    pub command: RepoCommand,
}

/// The `repo` subcommands.
#[derive(Debug, Subcommand)]
pub enum RepoCommand {
    /// Register a package repository.
    #[command(visible_alias = "register", long_about = reg::LONG, after_help = reg::EXAMPLES)]
    Reg(reg::RegArgs),
    /// List registered repositories.
    #[command(visible_aliases = ["ls", "list"], long_about = get::LONG, after_help = get::EXAMPLES)]
    Get(get::GetArgs),
    /// Unregister a repository.
    #[command(visible_alias = "unregister", long_about = unreg::LONG, after_help = unreg::EXAMPLES)]
    Unreg(unreg::UnregArgs),
    /// Schedule a one-time sync of repositories with their git/OCI remotes.
    #[command(visible_alias = "reconcile", long_about = sync::LONG, after_help = sync::EXAMPLES)]
    Sync(sync::SyncArgs),
}

/// Runs a `repo` subcommand; prints its error the upstream way.
pub fn run(args: RepoArgs) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return remote::report(&RemoteError::Io(e)),
    };
    let result = runtime.block_on(dispatch(args));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => remote::report(&e),
    }
}

async fn dispatch(args: RepoArgs) -> Result<(), RemoteError> {
    match args.command {
        RepoCommand::Reg(a) => reg::run(&args.conn, a).await,
        RepoCommand::Get(a) => get::run(&args.conn, a).await,
        RepoCommand::Unreg(a) => unreg::run(&args.conn, a).await,
        RepoCommand::Sync(a) => sync::run(&args.conn, a).await,
    }
}
