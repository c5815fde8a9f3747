//! `porch-fn-runner`: Porch's function-runner service. It serves
//! `evaluator.FunctionEvaluator/EvaluateFunction` and the standard gRPC health service on
//! `--port` (9445), and evaluates each function as porch-server does in process: a
//! built-in when one provides the image, else an executable mapped to the image by the
//! exec runtime's `--config`, else the image pulled and run in the bubblewrap sandbox.

mod cli;
mod exec_config;
mod service;

use std::sync::Arc;

use anyhow::Context;
use clap::Parser;
use porch_fn_proto::evaluator::function_evaluator_server::FunctionEvaluatorServer;

fn main() -> std::process::ExitCode {
    let args = cli::Args::parse();
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(args.log_filter()));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
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
    match runtime.block_on(run(args)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e:#}");
            eprintln!("unexpected error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run(args: cli::Args) -> anyhow::Result<()> {
    let runtimes = args.runtimes()?;
    let evaluator = service::Evaluator::new(Arc::new(runtimes), args.evaluator_options());
    let max = args.max_request_body_size;
    let (health, health_service) = tonic_health::server::health_reporter();
    health
        .set_serving::<FunctionEvaluatorServer<service::Evaluator>>()
        .await;

    let listener = tokio::net::TcpListener::bind((args.bind_address, args.port))
        .await
        .with_context(|| format!("failed to listen on {}:{}", args.bind_address, args.port))?;
    let local = listener.local_addr()?;
    tracing::info!("Listening on {local}");
    // The bound address on stdout, for whoever started us with `--port 0`.
    println!("listening on {local}");

    let shutdown = async {
        let mut term =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = async {
                match term.as_mut() {
                    Some(t) => { t.recv().await; }
                    None => std::future::pending::<()>().await,
                }
            } => {}
        }
        tracing::info!("shutting down");
    };
    tonic::transport::Server::builder()
        .tcp_nodelay(true)
        .add_service(health_service)
        .add_service(
            FunctionEvaluatorServer::new(evaluator)
                .max_decoding_message_size(max)
                .max_encoding_message_size(max),
        )
        .serve_with_incoming_shutdown(incoming(listener), shutdown)
        .await
        .context("server failed")?;
    Ok(())
}

fn incoming(listener: tokio::net::TcpListener) -> tonic::transport::server::TcpIncoming {
    tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true))
}
