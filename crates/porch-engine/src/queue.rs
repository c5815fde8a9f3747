//! Per-repository serial execution without holding a lock across `.await`.
//!
//! Every write to one repository runs as a job on that repository's queue, one after the
//! other, so checks-then-writes (uniqueness, next revision number, resourceVersion) cannot
//! interleave. Different repositories have different queues and proceed in parallel. A job
//! keeps running when its caller goes away, so an operation is never left half done.
//!
//! In a cluster (`cluster.rs`) the queue has a gate that runs before each job: it takes the
//! repository's cluster-wide lease, held until the job ends, and catches up with the others.

use std::future::Future;
use std::pin::Pin;

use tokio::sync::{mpsc, oneshot};

use crate::cluster::{CatchUp, Gate};
use crate::error::{EngineError, Result};

type Job = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A FIFO of jobs run by one task.
#[derive(Clone)]
pub(crate) struct SerialQueue {
    tx: mpsc::UnboundedSender<Job>,
    gate: Option<Gate>,
}

impl std::fmt::Debug for SerialQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SerialQueue")
            .field("gated", &self.gate.is_some())
            .finish()
    }
}

impl SerialQueue {
    /// Spawns the worker on the current tokio runtime; it ends when the last handle drops.
    #[cfg(test)]
    pub(crate) fn spawn() -> Self {
        Self::spawn_gated(None)
    }

    /// Spawns the worker on the current tokio runtime (it ends when the last handle drops),
    /// with a gate run before every job (a failing gate fails the job
    /// without running it).
    pub(crate) fn spawn_gated(gate: Option<Gate>) -> Self {
        let (tx, mut rx) = mpsc::unbounded_channel::<Job>();
        tokio::spawn(async move {
            while let Some(job) = rx.recv().await {
                job.await;
            }
        });
        SerialQueue { tx, gate }
    }

    /// Runs `fut` after every job queued before it and returns its output.
    pub(crate) async fn run<T, F>(&self, fut: F) -> Result<T>
    where
        T: Send + 'static,
        F: Future<Output = T> + Send + 'static,
    {
        self.run_with(CatchUp::Auto, fut).await
    }

    /// [`SerialQueue::run`], with the gate told how much to catch up.
    pub(crate) async fn run_with<T, F>(&self, level: CatchUp, fut: F) -> Result<T>
    where
        T: Send + 'static,
        F: Future<Output = T> + Send + 'static,
    {
        let (otx, orx) = oneshot::channel();
        let gate = self.gate.clone();
        self.tx
            .send(Box::pin(async move {
                let lease = match gate {
                    Some(g) => match g(level).await {
                        Ok(lease) => Some(lease),
                        Err(e) => {
                            let _ = otx.send(Err(e));
                            return;
                        }
                    },
                    None => None,
                };
                // The caller may have gone away; the work is done either way.
                let _ = otx.send(Ok(fut.await));
                drop(lease);
            }))
            .map_err(|_| EngineError::Internal("repository work queue stopped".into()))?;
        orx.await.map_err(|_| {
            EngineError::Internal("repository job ended without an answer (panicked?)".into())
        })?
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[tokio::test]
    async fn jobs_do_not_interleave() {
        let q = SerialQueue::spawn();
        let inside = Arc::new(AtomicUsize::new(0));
        let mut handles = Vec::new();
        for _ in 0..8 {
            let (q, inside) = (q.clone(), inside.clone());
            handles.push(tokio::spawn(async move {
                q.run(async move {
                    let before = inside.fetch_add(1, Ordering::SeqCst);
                    tokio::task::yield_now().await;
                    inside.fetch_sub(1, Ordering::SeqCst);
                    before
                })
                .await
            }));
        }
        for h in handles {
            assert_eq!(h.await.expect("join").expect("run"), 0);
        }
    }
}
