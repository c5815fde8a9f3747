//! `porch-server`: the Porch API server binary.
//!
//! With no arguments it runs standalone: data under `./.porch`, HTTPS on 127.0.0.1 with a local
//! CA and serving certificate generated on first start, and `./.porch/kubeconfig` (server, CA,
//! admin token) for kubectl, porchctl and kube-rs. It serves core `v1` namespaces and secrets
//! and the `config.porch.kpt.dev` kinds from the embedded redb store, runs the repository
//! controller, and shuts down gracefully on SIGTERM.
//!
//! It does not (yet) serve package revisions: the engine plugs them in as another resource.

mod cli;
mod cluster;
mod function_catalog;
mod function_images;
mod git_opener;
mod kubeconfig;
mod oidc;
mod pki;
mod server;
mod serviceaccounts;
mod store;
mod tls;
mod users;

use clap::Parser;

/// jemalloc, tuned in `.cargo/config.toml`: glibc's allocator spent about half of a
/// 12,000-revision Table request in malloc/free, and mimalloc kept the pages freed by idle
/// threads resident (250 MiB for 110 MiB live); jemalloc's background purging returns them.
#[cfg(feature = "jemalloc")]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn init_logging(format: cli::LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(ansi)
        .with_writer(std::io::stderr);
    match format {
        cli::LogFormat::Json => builder.json().init(),
        cli::LogFormat::Text => builder.init(),
    }
}

fn main() -> std::process::ExitCode {
    let args = cli::Args::parse();
    init_logging(args.log_format);
    if let Some(cli::Command::Users(cmd)) = &args.command {
        return match users::run(&args, cmd) {
            Ok(()) => std::process::ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e:#}");
                std::process::ExitCode::FAILURE
            }
        };
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(server::run(args)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e:#}");
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
