//! porchctl: the client for the package orchestrator.
//!
//! Local kpt-style commands (`fn render`, `fn eval`) run here with the native
//! function runtime; remote commands (`repo`, `rpkg`) talk to porch-server.

mod cli;
mod fn_cmd;
mod go_csv;
mod go_duration;
/// The Go programs the differential tests build (shared with kpt's tests).
#[cfg(test)]
#[path = "../../kpt/tests/support/go_oracle.rs"]
mod go_oracle;
mod pflag;
mod pkg_cmd;
mod remote;
mod repo_cmd;
mod rpkg_cmd;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

/// `fn render` builds and frees a node tree per resource; glibc's allocator spent about a
/// fifth of a 1,000-resource render in malloc, free and consolidation.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// porchctl: manage kpt packages locally and through porch-server.
#[derive(Debug, Parser)]
#[command(name = "porchctl", about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Enable the truncation for output (function results printed by `rpkg push`).
    #[arg(
        long,
        global = true,
        default_value_t = true,
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        action = clap::ArgAction::Set,
        value_parser = cli::GoBool
    )]
    truncate_output: bool,
    /// The porch.kpt.dev API version of PackageRevisions to use (only v1alpha1 is served by
    /// porch-server).
    #[arg(
        long,
        global = true,
        env = "PORCHCTL_API_VERSION",
        default_value = "v1alpha1",
        value_name = "VERSION"
    )]
    api_version: String,
    /// Print a stack-trace on failure (accepted for compatibility; errors carry their causes).
    #[arg(
        long,
        global = true,
        hide = true,
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        action = clap::ArgAction::Set,
        value_parser = cli::GoBool
    )]
    stack_trace: Option<bool>,
    /// klog's `-v` level, a flag of upstream's root command (accepted and ignored; set
    /// RUST_LOG for logs). `repo` and `rpkg` define the same flag, so it is taken before
    /// or after the command word.
    #[arg(
        short = 'v',
        long = "v",
        global = true,
        value_name = "LEVEL",
        hide = true,
        value_parser = cli::KlogLevel
    )]
    verbosity: Option<i32>,
    #[command(flatten)]
    logging: cli::LogFlags,
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
    /// Print the version number of porchctl.
    Version,
    /// Generate the autocompletion script for the specified shell.
    Completion {
        /// bash, zsh, fish, elvish or powershell (without one, this help, as cobra's
        /// `completion` group prints).
        shell: Option<clap_complete::Shell>,
    },
}

/// Parse the command line as porchctl's cobra tree would (see [`cli`]).
fn parse() -> Result<Cli, ExitCode> {
    let argv: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let mut cmd = cli::adapt(Cli::command());
    cmd.build();
    let argv = match pflag::read(&cmd, &argv) {
        Ok(pflag::Reading::Run(args)) => args,
        Ok(pflag::Reading::Usage(path)) => return Err(cli::usage(&cmd, &path)),
        Err(message) => return Err(cli::fail(&message)),
    };
    let matches = cmd
        .clone()
        .try_get_matches_from(&argv)
        .map_err(|e| cli::report(&e, &argv, &cmd))?;
    Cli::from_arg_matches(&matches).map_err(|e| cli::report(&e, &argv, &cmd))
}

fn main() -> ExitCode {
    let cli = match parse() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    if matches!(cli.command, Command::Repo(_) | Command::Rpkg(_)) && cli.api_version != "v1alpha1" {
        // Upstream dispatches v1alpha2 to the experimental PackageRevision CRD, which
        // porch-server does not serve.
        eprintln!(
            "Error: unsupported --api-version {:?}: porch-server serves porch.kpt.dev/v1alpha1 only \nhint: drop --api-version (or unset PORCHCTL_API_VERSION) to use v1alpha1",
            cli.api_version
        );
        return ExitCode::FAILURE;
    }
    let result = match cli.command {
        Command::Fn(cmd) => fn_cmd::run(cmd),
        Command::Pkg(cmd) => pkg_cmd::run(cmd),
        Command::Repo(args) => return repo_cmd::run(*args),
        Command::Rpkg(args) => return rpkg_cmd::run(*args, cli.truncate_output),
        Command::Version => {
            // Upstream's two lines; the commit is the one the binary was built from.
            println!("Version: {}", env!("CARGO_PKG_VERSION"));
            println!("Git commit: {}", env!("PORCHCTL_GIT_COMMIT"));
            Ok(ExitCode::SUCCESS)
        }
        Command::Completion { shell: None } => {
            let mut root = cli::adapt(Cli::command());
            root.build();
            if let Some(completion) = root.find_subcommand_mut("completion") {
                let help = completion.render_long_help().to_string();
                let _ = std::io::Write::write_all(&mut std::io::stdout().lock(), help.as_bytes());
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Completion { shell: Some(shell) } => {
            // Generated into memory first: clap_complete panics on a write error, and a
            // closed pipe (`porchctl completion bash | head`) is not a crash.
            let mut script = Vec::new();
            clap_complete::generate(
                shell,
                &mut cli::adapt(Cli::command()),
                "porchctl",
                &mut script,
            );
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

#[cfg(test)]
mod cli_tests;
