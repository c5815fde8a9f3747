//! `WatchHub`: fans committed store events out to every watcher of this process.
//!
//! The store calls the hub's listener right after each commit, in commit order; the hub
//! re-broadcasts each batch on a tokio broadcast channel. A watcher that falls behind the channel
//! is not lost: it catches up from the store's event log (see `GenericBackend::watch`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use porch_core::store::{MetadataStore, StoreEvent};
use tokio::sync::broadcast;

/// One committed batch, shared by every receiver.
pub type EventBatch = Arc<Vec<StoreEvent>>;

pub struct WatchHub {
    tx: broadcast::Sender<EventBatch>,
    latest: AtomicU64,
}

impl WatchHub {
    /// Creates the hub and registers it as the store's listener.
    pub fn attach(store: &Arc<dyn MetadataStore>, capacity: usize) -> Arc<Self> {
        let (tx, _) = broadcast::channel(capacity.max(16));
        let latest = store.current_resource_version().unwrap_or(0);
        let hub = Arc::new(Self {
            tx,
            latest: AtomicU64::new(latest),
        });
        let weak = Arc::downgrade(&hub);
        store.set_listener(Arc::new(move |events: &[StoreEvent]| {
            if let Some(hub) = weak.upgrade() {
                if let Some(last) = events.last() {
                    hub.latest
                        .fetch_max(last.object.resource_version, Ordering::SeqCst);
                }
                // No receiver is fine: nobody is watching.
                let _ = hub.tx.send(Arc::new(events.to_vec()));
            }
        }));
        hub
    }

    pub fn subscribe(&self) -> broadcast::Receiver<EventBatch> {
        self.tx.subscribe()
    }

    /// The resourceVersion of the last batch broadcast.
    pub fn latest(&self) -> u64 {
        self.latest.load(Ordering::SeqCst)
    }

    /// How many watchers are subscribed (for metrics).
    pub fn watchers(&self) -> usize {
        self.tx.receiver_count()
    }
}
