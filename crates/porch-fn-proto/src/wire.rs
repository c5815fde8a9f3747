//! What a runner tells a client beyond Porch's messages. A function that ran and failed is
//! a gRPC `Internal` error, as Porch's runner reports it; ours also attaches the function's
//! output ResourceList (its results) and exit code as trailers, which Porch's clients ignore
//! and ours turn back into the same step failure an in-process run gives.

/// Trailer carrying the failed function's output ResourceList (YAML).
pub const RESOURCE_LIST_TRAILER: &str = "porch-rs-resource-list-bin";
/// Trailer carrying the failed function's exit code.
pub const EXIT_CODE_TRAILER: &str = "porch-rs-exit-code";
/// Porch's default (and ours) for `--max-request-body-size`: 6 MiB.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 6 * 1024 * 1024;
