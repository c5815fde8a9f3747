//! porchctl's connection layer for the remote (`repo`, later `rpkg`) commands: kubectl-style
//! flags and kubeconfig loading ([`connection`]), raw JSON requests to the Kubernetes-style
//! API ([`api`]), upstream-identical output printers ([`print`]), listing helpers and `--sort-by`
//! ([`listing`]) and a progress spinner ([`spinner`]).
//!
//! It knows nothing about what the commands do; it does not cache or retry.

pub mod api;
pub mod connection;
pub mod error;
pub mod gotemplate;
pub mod jsonpath;
pub mod listing;
pub mod path_template;
pub mod print;
pub mod quantity;
pub mod spinner;
pub mod tabwriter;
pub mod yaml;

pub use connection::ConnectionFlags;
pub use error::RemoteError;

use std::io::Write;
use std::process::ExitCode;

/// Prints `err` the way upstream porchctl does (`Error: <msg> ` + newline, exit code 1),
/// then a hint line when there is one.
pub fn report(err: &RemoteError) -> ExitCode {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "Error: {err} ");
    if let Some(hint) = err.hint() {
        let _ = writeln!(stderr, "{hint}");
    }
    ExitCode::FAILURE
}

/// Writes command output to stdout; a closed pipe is not an error worth a message.
pub fn out(text: &str) -> Result<(), RemoteError> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.map_err(RemoteError::Io),
    }
}
