//! porchctl: the client for the package orchestrator.
//!
//! Local kpt-style commands (`fn render`, `fn eval`) run here with the native
//! function runtime; remote commands (`repo`, `rpkg`) talk to porch-server.

mod fn_cmd;
mod pkg_cmd;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Fn(cmd) => fn_cmd::run(cmd),
        Command::Pkg(cmd) => pkg_cmd::run(cmd),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("Error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
