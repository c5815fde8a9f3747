//! Delivery of committed events to the registered listener, whichever replica wrote them.
//!
//! A cursor (the last delivered resourceVersion) guarded by an async mutex makes delivery
//! exactly once and in order: whoever holds it reads the event log after the cursor, calls the
//! listener and moves the cursor. Two paths take it:
//! * a local write, right after its commit (so, as with the embedded store, the listener has
//!   seen a write before the writer gets its answer); when nothing else committed in between
//!   its own events are delivered without reading the log;
//! * the follower task, woken by NOTIFY on a dedicated connection (every write notifies at
//!   commit), by a periodic poll (notifications are lost while that connection is down) and
//!   when a listener is registered.
//!
//! The log is gapless in commit order (see `ops`), so reading strictly after the cursor never
//! skips an event that commits later.

use std::sync::{Arc, RwLock};
use std::time::Duration;

use deadpool_postgres::Pool;
use futures::StreamExt;
use porch_core::store::{EventListener, ResourceVersion, StoreError, StoreEvent};
use tokio::sync::{Mutex, Notify};
use tokio_postgres::AsyncMessage;

use crate::ops;

const PAGE: usize = 1000;

pub(crate) struct Delivery {
    pub(crate) pool: Pool,
    pub(crate) listener: RwLock<Option<EventListener>>,
    /// `None` until a listener is registered: events committed before that are not delivered.
    pub(crate) cursor: Mutex<Option<ResourceVersion>>,
    pub(crate) wake: Notify,
}

impl Delivery {
    fn listener(&self) -> Option<EventListener> {
        self.listener.read().ok().and_then(|g| g.clone())
    }

    /// After a local commit of `events`: delivers everything up to their last version.
    pub(crate) async fn after_commit(&self, events: &[StoreEvent]) {
        let (Some(first), Some(last)) = (events.first(), events.last()) else {
            return;
        };
        let Some(listener) = self.listener() else {
            return;
        };
        let mut cursor = self.cursor.lock().await;
        let Some(at) = *cursor else {
            return;
        };
        if at >= last.object.resource_version {
            return; // the follower was quicker
        }
        if at + 1 == first.object.resource_version {
            listener(events);
            *cursor = Some(last.object.resource_version);
            return;
        }
        if let Err(e) = catch_up(&self.pool, &listener, &mut cursor).await {
            tracing::warn!(error = %e, "cannot read the event log; the follower retries");
        }
    }

    /// Delivers everything committed after the cursor.
    pub(crate) async fn poll(&self) -> Result<(), StoreError> {
        let Some(listener) = self.listener() else {
            return Ok(());
        };
        let mut cursor = self.cursor.lock().await;
        catch_up(&self.pool, &listener, &mut cursor).await
    }
}

async fn catch_up(
    pool: &Pool,
    listener: &EventListener,
    cursor: &mut Option<ResourceVersion>,
) -> Result<(), StoreError> {
    let Some(mut at) = *cursor else {
        return Ok(());
    };
    loop {
        let events = match ops::events_since(pool, at, PAGE).await {
            Ok(e) => e,
            Err(StoreError::Gone { compacted, .. }) => {
                // This replica fell further behind than the log keeps: its watchers resume from
                // the log themselves and get 410; the live feed continues after the gap.
                tracing::warn!(
                    from = at,
                    to = compacted,
                    "events compacted before delivery"
                );
                at = compacted;
                *cursor = Some(at);
                continue;
            }
            Err(e) => return Err(e),
        };
        let Some(last) = events.last() else {
            return Ok(());
        };
        at = last.object.resource_version;
        listener(&events);
        *cursor = Some(at);
        if events.len() < PAGE {
            return Ok(());
        }
    }
}

/// The follower: LISTENs on a dedicated connection (reconnecting when it drops) and catches up
/// on every notification, on every `wake` and at least every `poll`.
pub(crate) async fn run(delivery: Arc<Delivery>, config: crate::tls::PgConnect, poll: Duration) {
    loop {
        let (client, mut connection) = match config.connect().await {
            Ok(c) => c,
            Err(e) => {
                tracing::debug!(error = %e, "event follower cannot connect; polling");
                wait(&delivery, poll, None).await;
                if let Err(e) = delivery.poll().await {
                    tracing::debug!(error = %e, "event follower poll failed");
                }
                continue;
            }
        };
        let (tx, mut notifications) = tokio::sync::mpsc::unbounded_channel();
        let driver = tokio::spawn(async move {
            let mut messages = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
            while let Some(m) = messages.next().await {
                match m {
                    Ok(AsyncMessage::Notification(_)) => {
                        let _ = tx.send(());
                    }
                    Ok(_) => {}
                    Err(_) => break,
                }
            }
        });
        if let Err(e) = client
            .batch_execute(&format!("LISTEN {}", ops::CHANNEL))
            .await
        {
            tracing::debug!(error = %e, "event follower cannot LISTEN");
            driver.abort();
            wait(&delivery, poll, None).await;
            continue;
        }
        loop {
            if let Err(e) = delivery.poll().await {
                tracing::debug!(error = %e, "event follower poll failed");
            }
            if driver.is_finished() {
                break;
            }
            wait(&delivery, poll, Some(&mut notifications)).await;
            while notifications.try_recv().is_ok() {}
        }
        drop(client);
    }
}

async fn wait(
    delivery: &Delivery,
    poll: Duration,
    notifications: Option<&mut tokio::sync::mpsc::UnboundedReceiver<()>>,
) {
    match notifications {
        Some(n) => {
            tokio::select! {
                _ = n.recv() => {}
                _ = delivery.wake.notified() => {}
                _ = tokio::time::sleep(poll) => {}
            }
        }
        None => {
            tokio::select! {
                _ = delivery.wake.notified() => {}
                _ = tokio::time::sleep(poll) => {}
            }
        }
    }
}
