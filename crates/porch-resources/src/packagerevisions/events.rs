//! The watch log of package revisions: every engine event gets a sequence number (the
//! resourceVersion of lists, bookmarks and watch resumption) and is kept for a while, so a
//! watch started from a list's resourceVersion misses nothing and sees nothing twice.
//!
//! Sequence numbers live in their own range (from 2^62, offset by the process start time so
//! numbers from an earlier process are always older): a resourceVersion outside the window
//! kept, including an object's own resourceVersion, is answered with 410 Gone and the client
//! relists, which is what Kubernetes clients do anyway.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use porch_core::store::EventType;
use porch_engine::{Engine, PackageRevision};
use tokio::sync::broadcast;

/// How many events are kept for resumption (a watch from an older resourceVersion gets 410
/// and relists). Each holds a revision, about 1.3 KiB: 8,192 is ~10 MiB; the engine's
/// event bus keeps as many alive anyway.
const RETAINED: usize = 8_192;

/// One logged change.
#[derive(Debug, Clone)]
pub struct LoggedEvent {
    pub seq: u64,
    pub event_type: EventType,
    pub revision: Arc<PackageRevision>,
}

/// What live watchers receive.
#[derive(Debug, Clone)]
pub enum LogItem {
    Event(LoggedEvent),
    /// Events were lost (the engine's buffer overflowed): watchers must end with 410 so
    /// clients relist.
    Reset,
}

struct State {
    last: u64,
    kept: VecDeque<LoggedEvent>,
    /// Nothing at or before this sequence can be replayed.
    floor: u64,
}

pub struct EventLog {
    state: Mutex<State>,
    tx: broadcast::Sender<LogItem>,
}

/// Where a watch can start from a resourceVersion.
pub enum Resume {
    /// Replay these, then follow live events after `after`.
    From {
        replay: Vec<LoggedEvent>,
        after: u64,
    },
    /// Too old or not ours: 410.
    Gone,
}

impl EventLog {
    /// Starts relaying the engine's events into the log.
    pub fn start(engine: &Engine) -> Arc<Self> {
        let start_secs = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let base = (1u64 << 62) + (start_secs << 20);
        let (tx, _) = broadcast::channel(4096);
        let log = Arc::new(EventLog {
            state: Mutex::new(State {
                last: base,
                kept: VecDeque::new(),
                floor: base,
            }),
            tx,
        });
        let mut rx = engine.subscribe();
        let relay = log.clone();
        tokio::spawn(async move {
            loop {
                match rx.recv().await {
                    Ok(ev) => relay.push(ev.event_type, ev.revision),
                    Err(broadcast::error::RecvError::Lagged(n)) => {
                        tracing::warn!(
                            lost = n,
                            "package revision events lost; watchers must relist"
                        );
                        relay.reset();
                    }
                    Err(broadcast::error::RecvError::Closed) => break,
                }
            }
        });
        log
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // The state is a counter and a queue; a panic elsewhere cannot leave it inconsistent.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn push(&self, event_type: EventType, revision: Arc<PackageRevision>) {
        let mut st = self.lock();
        st.last += 1;
        let ev = LoggedEvent {
            seq: st.last,
            event_type,
            revision,
        };
        st.kept.push_back(ev.clone());
        if st.kept.len() > RETAINED
            && let Some(old) = st.kept.pop_front()
        {
            st.floor = old.seq;
        }
        // Sent while holding the lock so live order equals log order; sending never blocks.
        let _ = self.tx.send(LogItem::Event(ev));
    }

    fn reset(&self) {
        let mut st = self.lock();
        st.last += 1;
        st.floor = st.last;
        st.kept.clear();
        let _ = self.tx.send(LogItem::Reset);
    }

    /// The sequence of the last event (a list's resourceVersion).
    pub fn latest(&self) -> u64 {
        self.lock().last
    }

    /// Subscribes to live events.
    pub fn subscribe(&self) -> broadcast::Receiver<LogItem> {
        self.tx.subscribe()
    }

    /// Events after `rv`, if `rv` is a sequence this log can resume from.
    pub fn resume(&self, rv: u64) -> Resume {
        let st = self.lock();
        if rv < st.floor || rv > st.last {
            return Resume::Gone;
        }
        Resume::From {
            replay: st.kept.iter().filter(|e| e.seq > rv).cloned().collect(),
            after: rv,
        }
    }
}
