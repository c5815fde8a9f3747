//! The audit log: one `audit.k8s.io/v1` Event per request, at the level an `audit.k8s.io/v1`
//! Policy gives it, as kube-apiserver's `--audit-policy-file` / `--audit-log-path` do.
//!
//! The middleware ([`layer`]) reads the authenticated user from the request's extensions,
//! asks the policy for a level, captures the request and response bodies when the level asks
//! for them, and hands the finished event line to a channel; one writer thread appends lines
//! to the file and rotates it by size (`writer.rs`). A full channel drops the event (counted
//! in [`Auditor::dropped`]) rather than slow the request. Secrets are logged at `Metadata` at
//! most, so their data never reaches the log.
//!
//! The resource layer adds annotations to the event of the request it serves with
//! [`annotate`] (package revisions record their lifecycle change that way).

mod event;
mod policy;
mod request;
mod writer;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

pub use policy::{Level, Policy};
pub use request::{RequestAttributes, ResourceAttributes};
pub use writer::LogTarget;

pub(crate) use event::{failed_authentication, layer};

/// Failures to set up the audit log.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    #[error("{0}")]
    Policy(String),
    #[error("audit log: {0}")]
    Io(String),
}

/// Events queued for the writer before new ones are dropped.
const QUEUE: usize = 8192;

/// The audit policy and the queue to the log writer.
pub struct Auditor {
    policy: Policy,
    tx: tokio::sync::mpsc::Sender<Vec<u8>>,
    dropped: AtomicU64,
    /// Largest request or response body copied into an event (larger ones are left out).
    pub max_body_bytes: usize,
}

impl std::fmt::Debug for Auditor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Auditor")
            .field("rules", &self.policy.rules.len())
            .finish()
    }
}

impl Auditor {
    /// Opens the log and starts its writer thread.
    pub fn start(policy: Policy, target: LogTarget) -> Result<Arc<Auditor>, AuditError> {
        let mut log = writer::LogFile::open(target)?;
        let (tx, mut rx) = tokio::sync::mpsc::channel::<Vec<u8>>(QUEUE);
        std::thread::Builder::new()
            .name("audit-log".into())
            .spawn(move || {
                while let Some(line) = rx.blocking_recv() {
                    let mut next = Some(line);
                    // Write what is queued, then flush once.
                    while let Some(line) = next {
                        if let Err(e) = log.write_line(&line) {
                            tracing::error!(error = %e, "cannot write the audit log");
                        }
                        next = rx.try_recv().ok();
                    }
                    log.flush();
                }
                log.flush();
            })
            .map_err(|e| AuditError::Io(format!("cannot start the audit writer: {e}")))?;
        Ok(Arc::new(Auditor {
            policy,
            tx,
            dropped: AtomicU64::new(0),
            max_body_bytes: 6 * 1024 * 1024,
        }))
    }

    /// Events dropped because the writer fell behind.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    fn send(&self, line: Vec<u8>) {
        if self.tx.try_send(line).is_err() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// What the resource layer tells the audit event of the request it serves.
#[derive(Debug, Default)]
pub(crate) struct Scope {
    pub annotations: BTreeMap<String, String>,
    /// The level wants the request object.
    pub want_request: bool,
    /// The request object as the handler decoded it (protobuf bodies only decode there).
    pub request_object: Option<serde_json::Value>,
}

tokio::task_local! {
    static SCOPE: Arc<Mutex<Scope>>;
}

/// Adds an annotation to the audit event of the request being served (no-op outside one, or
/// when nothing is audited).
pub fn annotate(key: &str, value: impl Into<String>) {
    let value = value.into();
    let _ = SCOPE.try_with(|a| {
        if let Ok(mut a) = a.lock() {
            a.annotations.insert(key.to_owned(), value);
        }
    });
}

/// Hands the decoded request object to the audit event, when its level logs it.
pub(crate) fn request_object(obj: &serde_json::Value) {
    let _ = SCOPE.try_with(|a| {
        if let Ok(mut a) = a.lock()
            && a.want_request
        {
            a.request_object = Some(obj.clone());
        }
    });
}
