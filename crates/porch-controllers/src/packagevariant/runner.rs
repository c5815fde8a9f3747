//! Runs the reconciler: a work queue keyed by PackageVariant (a key queued twice runs once;
//! a key changed while it runs runs again after), workers, retries with exponential
//! backoff, and the feeds: variant changes (pushed by the caller, which owns the watch),
//! package revision events of the engine, and a periodic resync.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use porch_engine::Engine;
use serde_json::Value;
use tokio::sync::{Notify, broadcast, watch};

use super::concerns::ConcernIndex;
use super::reconcile::{Reconciler, gvr};
use crate::objects::Objects;

/// A PackageVariant: `(namespace, name)`.
pub type Key = (String, String);

/// How long a failing key waits: 1s doubling to 2 minutes.
pub fn backoff(failures: u32) -> Duration {
    Duration::from_secs(1u64 << failures.saturating_sub(1).min(7)).min(Duration::from_secs(120))
}

/// How often every PackageVariant is reconciled even when nothing was seen to change.
pub const RESYNC: Duration = Duration::from_secs(600);

#[derive(Default)]
struct State {
    pending: VecDeque<Key>,
    queued: HashSet<Key>,
    running: HashSet<Key>,
    /// Added while running: queued again when done.
    dirty: HashSet<Key>,
    failures: HashMap<Key, u32>,
}

/// The de-duplicating work queue.
#[derive(Default)]
pub struct WorkQueue {
    state: Mutex<State>,
    notify: Notify,
}

impl WorkQueue {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Queues `key` unless it is already waiting.
    pub fn add(&self, key: Key) {
        {
            let mut st = self.lock();
            if st.running.contains(&key) {
                st.dirty.insert(key);
                return;
            }
            if !st.queued.insert(key.clone()) {
                return;
            }
            st.pending.push_back(key);
        }
        self.notify.notify_one();
    }

    /// Queues `key` after `delay`.
    pub fn add_after(self: &Arc<Self>, key: Key, delay: Duration) {
        let queue = self.clone();
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            queue.add(key);
        });
    }

    /// Keys waiting (for tests and metrics).
    pub fn len(&self) -> usize {
        self.lock().pending.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The next key to work on; it is then running until [`WorkQueue::done`].
    pub async fn next(&self) -> Key {
        loop {
            let notified = self.notify.notified();
            {
                let mut st = self.lock();
                if let Some(key) = st.pending.pop_front() {
                    st.queued.remove(&key);
                    st.running.insert(key.clone());
                    let more = !st.pending.is_empty();
                    drop(st);
                    if more {
                        // Wake another worker for the rest.
                        self.notify.notify_one();
                    }
                    return key;
                }
            }
            notified.await;
        }
    }

    /// `key` finished; `ok` resets its backoff, else it is retried after it. Returns the
    /// retry delay when one was scheduled.
    pub fn done(self: &Arc<Self>, key: &Key, ok: bool) -> Option<Duration> {
        let (again, retry) = {
            let mut st = self.lock();
            st.running.remove(key);
            let again = st.dirty.remove(key);
            let retry = if ok {
                st.failures.remove(key);
                None
            } else {
                let n = st.failures.entry(key.clone()).or_insert(0);
                *n += 1;
                Some(backoff(*n))
            };
            (again, retry)
        };
        if again {
            self.add(key.clone());
        } else if let Some(delay) = retry {
            self.add_after(key.clone(), delay);
        }
        retry
    }
}

/// Resolves once `stop` is true (or its sender is gone). Holds no borrow of the value
/// across the caller's other awaits.
pub async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await.map(|_| ());
}

/// Runs `workers` workers until `stop` turns true.
pub async fn run_workers(
    reconciler: Reconciler,
    queue: Arc<WorkQueue>,
    workers: usize,
    stop: watch::Receiver<bool>,
) {
    let mut handles = Vec::new();
    for _ in 0..workers.max(1) {
        let (reconciler, queue, mut stop) = (reconciler.clone(), queue.clone(), stop.clone());
        handles.push(tokio::spawn(async move {
            loop {
                let key = tokio::select! {
                    key = queue.next() => key,
                    _ = stopped(&mut stop) => return,
                };
                // On a replica: decide from an index that has every write made before.
                reconciler.revisions.caught_up().await;
                let result = reconciler.reconcile(&key.0, &key.1).await;
                if let Err(e) = &result {
                    tracing::warn!(namespace = %key.0, name = %key.1, error = %e, "PackageVariant reconcile failed; retrying");
                }
                queue.done(&key, result.is_ok());
            }
        }));
    }
    for h in handles {
        let _ = h.await;
    }
}

/// Queues every PackageVariant (all namespaces for `None`).
pub async fn resync(objects: &dyn Objects, queue: &WorkQueue, namespace: Option<&str>) {
    match objects.list(&gvr(), namespace, "").await {
        Ok(items) => {
            for pv in items {
                if let Some(key) = key_of(&pv) {
                    queue.add(key);
                }
            }
        }
        Err(e) => tracing::warn!(error = %e, "cannot list PackageVariants"),
    }
}

fn key_of(obj: &Value) -> Option<Key> {
    let s = |p: &str| obj.pointer(p).and_then(Value::as_str).map(str::to_owned);
    Some((s("/metadata/namespace")?, s("/metadata/name")?))
}

/// Queues the variants concerned by package revision changes, until `stop`; every
/// [`RESYNC`] all of them. `index` is kept current by the caller from the variants' watch
/// (see [`ConcernIndex`]): an event costs lookups, not a listing of the variants.
pub async fn feed_from_engine(
    engine: Engine,
    objects: Arc<dyn Objects>,
    index: Arc<ConcernIndex>,
    queue: Arc<WorkQueue>,
    mut stop: watch::Receiver<bool>,
) {
    let mut rx = engine.subscribe();
    let mut tick = tokio::time::interval(RESYNC);
    tick.tick().await;
    loop {
        let event = tokio::select! {
            r = rx.recv() => r,
            _ = tick.tick() => {
                resync(&*objects, &queue, None).await;
                continue;
            }
            _ = stopped(&mut stop) => return,
        };
        match event {
            Ok(e) => {
                for key in index.concerned(&e.revision) {
                    queue.add(key);
                }
            }
            Err(broadcast::error::RecvError::Lagged(_)) => {
                // Missed changes: look at everything.
                resync(&*objects, &queue, None).await;
            }
            Err(broadcast::error::RecvError::Closed) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(n: &str) -> Key {
        ("ns".into(), n.into())
    }

    #[tokio::test]
    async fn a_key_is_queued_once_and_again_when_changed_while_running() {
        let q = Arc::new(WorkQueue::default());
        q.add(k("a"));
        q.add(k("a"));
        q.add(k("b"));
        assert_eq!(q.len(), 2, "de-duplicated");
        let first = q.next().await;
        assert_eq!(first, k("a"));
        q.add(k("a"));
        assert_eq!(q.len(), 1, "a is running: marked, not queued");
        assert_eq!(q.done(&first, true), None);
        assert_eq!(q.len(), 2, "a queued again after it finished");
        assert_eq!(q.next().await, k("b"));
        assert_eq!(q.next().await, k("a"));
    }

    #[tokio::test]
    async fn failures_back_off_and_success_resets() {
        let q = Arc::new(WorkQueue::default());
        q.add(k("a"));
        let a = q.next().await;
        assert_eq!(q.done(&a, false), Some(Duration::from_secs(1)));
        q.add(k("a"));
        let a = q.next().await;
        assert_eq!(q.done(&a, false), Some(Duration::from_secs(2)));
        q.add(k("a"));
        let a = q.next().await;
        assert_eq!(q.done(&a, true), None);
        q.add(k("a"));
        let a = q.next().await;
        assert_eq!(q.done(&a, false), Some(Duration::from_secs(1)), "reset");
        assert_eq!(backoff(30), Duration::from_secs(120));
    }
}
