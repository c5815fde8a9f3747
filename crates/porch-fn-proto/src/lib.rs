//! Porch's function-runner gRPC API (`evaluator.FunctionEvaluator`), compiled from
//! `proto/evaluator.proto` (Porch's definition), shared by the `porch-fn-runner` service
//! and the client porch-server uses to send evaluations to a runner ([`RemoteRuntime`]).

pub mod client;
pub mod wire;

pub use client::{RemoteError, RemoteRuntime};

/// The generated messages, client and server.
pub mod evaluator {
    #![allow(clippy::all, clippy::unwrap_used, missing_docs)]
    tonic::include_proto!("evaluator");
}
