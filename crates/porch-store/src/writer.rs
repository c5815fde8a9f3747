//! The single writer thread: group commit of concurrent write requests.
//!
//! Every write request is queued to one thread. The thread takes everything queued (up to a
//! bound), applies it in one redb write transaction, commits once (durably), then notifies the
//! listener and answers every request. A request whose precondition fails is answered with its
//! error and does not affect the others in the group.

use std::collections::HashSet;
use std::sync::mpsc::{Receiver, Sender, SyncSender, sync_channel};
use std::sync::{Arc, RwLock};

use porch_core::store::{
    EventListener, EventType, Precondition, StoreError, StoreEvent, StoredObject, Write, WriteOp,
};
use redb::{Database, ReadableTable};

use crate::codec::{
    self, EVENTS, META, META_COMPACTED, META_RV, OBJECTS, encode_event, encode_object, object_key,
};
use crate::error::dbr;

type Reply = Result<Vec<StoreEvent>, StoreError>;

pub(crate) struct Request {
    writes: Vec<Write>,
    reply: SyncSender<Reply>,
}

/// Handle to the writer thread; dropping it stops the thread and waits for it, so the database
/// is closed when the store is dropped.
pub(crate) struct Writer {
    tx: Option<Sender<Request>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

pub(crate) struct WriterConfig {
    pub max_batch: usize,
    pub event_retention: u64,
}

impl Writer {
    pub(crate) fn spawn(
        db: Arc<Database>,
        listener: Arc<RwLock<Option<EventListener>>>,
        config: WriterConfig,
    ) -> Result<Self, StoreError> {
        let (tx, rx) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("porch-store-writer".into())
            .spawn(move || run(&db, &listener, &config, &rx))
            .map_err(|e| StoreError::Internal(format!("cannot start the writer thread: {e}")))?;
        Ok(Self {
            tx: Some(tx),
            thread: Some(thread),
        })
    }

    /// Queues a batch and blocks until it is durably committed or rejected.
    pub(crate) fn write(&self, writes: Vec<Write>) -> Reply {
        let (reply, answer) = sync_channel(1);
        self.tx
            .as_ref()
            .ok_or_else(|| StoreError::Unavailable("the store writer has stopped".into()))?
            .send(Request { writes, reply })
            .map_err(|_| StoreError::Unavailable("the store writer has stopped".into()))?;
        answer
            .recv()
            .map_err(|_| StoreError::Unavailable("the store writer has stopped".into()))?
    }
}

fn run(
    db: &Database,
    listener: &RwLock<Option<EventListener>>,
    config: &WriterConfig,
    rx: &Receiver<Request>,
) {
    while let Ok(first) = rx.recv() {
        let mut group = vec![first];
        while group.len() < config.max_batch {
            match rx.try_recv() {
                Ok(r) => group.push(r),
                Err(_) => break,
            }
        }
        let replies = match commit_group(db, config, &mut group) {
            Ok(outcomes) => outcomes,
            Err(e) => {
                tracing::error!(error = %e, "store commit failed");
                let msg = e.to_string();
                group
                    .iter()
                    .map(|_| Err(StoreError::Internal(msg.clone())))
                    .collect()
            }
        };
        let events: Vec<StoreEvent> = replies
            .iter()
            .filter_map(|r| r.as_ref().ok())
            .flatten()
            .cloned()
            .collect();
        if !events.is_empty() {
            let l = listener.read().ok().and_then(|g| g.clone());
            if let Some(l) = l {
                l(&events);
            }
        }
        for (req, reply) in group.into_iter().zip(replies) {
            // The caller may have gone away (request cancelled); the write stands anyway.
            let _ = req.reply.send(reply);
        }
    }
}

/// Applies every request of the group in one transaction; returns one outcome per request.
fn commit_group(
    db: &Database,
    config: &WriterConfig,
    group: &mut [Request],
) -> Result<Vec<Reply>, StoreError> {
    let txn = dbr(db.begin_write())?;
    let mut outcomes = Vec::with_capacity(group.len());
    {
        let mut objects = dbr(txn.open_table(OBJECTS))?;
        let mut events = dbr(txn.open_table(EVENTS))?;
        let mut meta = dbr(txn.open_table(META))?;
        let mut rv = dbr(meta.get(META_RV))?.map(|g| g.value()).unwrap_or(0);

        for req in group.iter_mut() {
            let writes = std::mem::take(&mut req.writes);
            match check(&objects, &writes) {
                Err(e) => outcomes.push(Err(e)),
                Ok(currents) => {
                    let mut applied = Vec::with_capacity(writes.len());
                    for (w, current) in writes.into_iter().zip(currents) {
                        rv += 1;
                        let k = object_key(&w.key);
                        let previous: Option<Arc<[u8]>> = current.as_deref().map(Arc::from);
                        let (event_type, data) = match w.op {
                            WriteOp::Put(stamp) => {
                                let data = stamp(rv, None);
                                dbr(
                                    objects.insert(k.as_str(), encode_object(rv, &data).as_slice())
                                )?;
                                let t = if current.is_some() {
                                    EventType::Modified
                                } else {
                                    EventType::Added
                                };
                                (t, data)
                            }
                            WriteOp::Delete(stamp) => {
                                let old = current.unwrap_or_default();
                                let data = stamp(rv, Some(&old));
                                dbr(objects.remove(k.as_str()))?;
                                (EventType::Deleted, data)
                            }
                        };
                        let ev = StoreEvent {
                            event_type,
                            object: StoredObject {
                                key: w.key,
                                resource_version: rv,
                                data: Arc::from(data),
                            },
                            previous,
                        };
                        dbr(events.insert(rv, encode_event(&ev).as_slice()))?;
                        applied.push(ev);
                    }
                    outcomes.push(Ok(applied));
                }
            }
        }
        dbr(meta.insert(META_RV, rv))?;
        compact(&mut events, &mut meta, rv, config.event_retention)?;
    }
    dbr(txn.commit())?;
    Ok(outcomes)
}

/// Checks every precondition of one request against the transaction's view; returns the
/// current bytes (without the rv prefix) of each key.
fn check(
    objects: &redb::Table<'_, &str, &[u8]>,
    writes: &[Write],
) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
    let mut seen = HashSet::new();
    let mut currents = Vec::with_capacity(writes.len());
    for w in writes {
        if !seen.insert(&w.key) {
            return Err(StoreError::Internal(format!(
                "{} written twice in one batch",
                w.key
            )));
        }
        let k = object_key(&w.key);
        let current = match dbr(objects.get(k.as_str()))? {
            Some(g) => {
                let (rv, data) = codec::split_rv(g.value())?;
                Some((rv, data.to_vec()))
            }
            None => None,
        };
        match (w.precondition, &current) {
            (Precondition::MustNotExist, Some(_)) => {
                return Err(StoreError::AlreadyExists(w.key.clone()));
            }
            (Precondition::MustExist | Precondition::ResourceVersion(_), None) => {
                return Err(StoreError::NotFound(w.key.clone()));
            }
            (Precondition::ResourceVersion(expected), Some((actual, _))) if expected != *actual => {
                return Err(StoreError::Conflict {
                    key: w.key.clone(),
                    expected,
                    actual: *actual,
                });
            }
            _ => {}
        }
        if matches!(w.op, WriteOp::Delete(_)) && current.is_none() {
            return Err(StoreError::NotFound(w.key.clone()));
        }
        currents.push(current.map(|(_, d)| d));
    }
    Ok(currents)
}

/// Drops the oldest events once the log is a quarter longer than the retention, so the cost is
/// paid in rare chunks.
fn compact(
    events: &mut redb::Table<'_, u64, &[u8]>,
    meta: &mut redb::Table<'_, &str, u64>,
    rv: u64,
    retention: u64,
) -> Result<(), StoreError> {
    let compacted = dbr(meta.get(META_COMPACTED))?
        .map(|g| g.value())
        .unwrap_or(0);
    if rv.saturating_sub(compacted) <= retention + retention / 4 + 1 {
        return Ok(());
    }
    let upto = rv - retention;
    dbr(events.retain_in(compacted + 1..=upto, |_, _| false))?;
    dbr(meta.insert(META_COMPACTED, upto))?;
    tracing::debug!(upto, "compacted the event log");
    Ok(())
}
