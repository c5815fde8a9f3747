//! porchctl: the client for the package orchestrator.
//!
//! Local kpt-style commands (`fn render`, `fn eval`) run here with the native
//! function runtime; remote commands (`repo`, `rpkg`) talk to porch-server.

mod fn_cmd;
mod pkg_cmd;
mod remote;
mod repo_cmd;
mod rpkg_cmd;

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

/// porchctl: manage kpt packages locally and through porch-server.
#[derive(Debug, Parser)]
#[command(name = "porchctl", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run KRM functions on local packages.
    #[command(name = "fn", subcommand)]
    Fn(fn_cmd::FnCommand),
    /// Initialize, get and update local packages.
    #[command(subcommand)]
    Pkg(pkg_cmd::PkgCommand),
    /// Manage package repositories.
    #[command(visible_alias = "repository")]
    Repo(Box<repo_cmd::RepoArgs>),
    /// Manage packages.
    #[command(visible_alias = "rpackage")]
    Rpkg(Box<rpkg_cmd::RpkgArgs>),
    /// Generate the autocompletion script for the specified shell.
    Completion {
        /// bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Fn(cmd) => fn_cmd::run(cmd),
        Command::Pkg(cmd) => pkg_cmd::run(cmd),
        Command::Repo(args) => return repo_cmd::run(*args),
        Command::Rpkg(args) => return rpkg_cmd::run(*args),
        Command::Completion { shell } => {
            // Generated into memory first: clap_complete panics on a write error, and a
            // closed pipe (`porchctl completion bash | head`) is not a crash.
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "porchctl", &mut script);
            match std::io::Write::write_all(&mut std::io::stdout().lock(), &script) {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
                _ => Ok(ExitCode::SUCCESS),
            }
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("Error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
