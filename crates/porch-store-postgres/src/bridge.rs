//! The synchronous port over an async driver: the store owns a small tokio runtime; a call
//! spawns its future there and waits on a channel. Waiting on a std channel works from any
//! thread that may block (the callers' `spawn_blocking` threads) and cannot panic with "runtime
//! within a runtime", whichever runtime the caller belongs to.

use std::future::Future;

use porch_core::store::StoreError;

pub(crate) struct Bridge {
    runtime: Option<tokio::runtime::Runtime>,
    handle: tokio::runtime::Handle,
}

impl Bridge {
    pub(crate) fn new(threads: usize) -> Result<Self, StoreError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads.max(1))
            .thread_name("porch-pg")
            .enable_all()
            .build()
            .map_err(|e| StoreError::Internal(format!("cannot start the store runtime: {e}")))?;
        let handle = runtime.handle().clone();
        Ok(Self {
            runtime: Some(runtime),
            handle,
        })
    }

    pub(crate) fn handle(&self) -> &tokio::runtime::Handle {
        &self.handle
    }

    /// Runs `f` on the store runtime and blocks the calling thread until it finishes.
    pub(crate) fn run<T: Send + 'static>(
        &self,
        f: impl Future<Output = Result<T, StoreError>> + Send + 'static,
    ) -> Result<T, StoreError> {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        self.handle.spawn(async move {
            let _ = tx.send(f.await);
        });
        rx.recv()
            .map_err(|_| StoreError::Unavailable("the store runtime has stopped".into()))?
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        // The store may be dropped on an async thread, where a blocking shutdown panics.
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}
