//! The store's queries: one function per port operation, each on one pooled connection.
//!
//! Writes lock the single `porch_meta` row first (`FOR UPDATE`). That row holds the global
//! resourceVersion counter, so writers are serialized across replicas for the length of one
//! transaction: preconditions are checked against the latest committed state (READ COMMITTED
//! gives each statement a fresh snapshot, taken after the lock was granted), versions are
//! assigned without gaps, and a transaction with a higher version always commits after every
//! lower one, which lets followers read the event log with a simple cursor.

use std::collections::HashSet;
use std::sync::Arc;

use deadpool_postgres::{GenericClient, Pool};
use porch_core::store::{
    EventType, ListPage, ListQuery, ObjectKey, Precondition, ResourceVersion, StoreError,
    StoreEvent, StoredObject, Write, WriteOp,
};
use tokio_postgres::IsolationLevel;
use tokio_postgres::Row;

use crate::error::pg;

/// The NOTIFY channel that announces committed writes to every replica.
pub(crate) const CHANNEL: &str = "porch_events";

pub(crate) fn rv_out(v: i64) -> ResourceVersion {
    u64::try_from(v).unwrap_or(0)
}

fn rv_in(v: ResourceVersion) -> Result<i64, StoreError> {
    i64::try_from(v).map_err(|_| StoreError::Internal(format!("resourceVersion {v} out of range")))
}

fn type_code(t: EventType) -> i16 {
    match t {
        EventType::Added => 0,
        EventType::Modified => 1,
        EventType::Deleted => 2,
    }
}

fn type_from(code: i16) -> Result<EventType, StoreError> {
    match code {
        0 => Ok(EventType::Added),
        1 => Ok(EventType::Modified),
        2 => Ok(EventType::Deleted),
        other => Err(StoreError::Internal(format!("corrupt event type {other}"))),
    }
}

pub(crate) async fn get(pool: &Pool, key: &ObjectKey) -> Result<Option<StoredObject>, StoreError> {
    let client = pg(pool.get().await)?;
    let stmt = pg(client
        .prepare_cached(
            "SELECT rv, data FROM porch_objects WHERE resource = $1 AND namespace = $2 AND name = $3",
        )
        .await)?;
    let row = pg(client
        .query_opt(&stmt, &[&key.resource, &key.namespace, &key.name])
        .await)?;
    Ok(row.map(|r| StoredObject {
        key: key.clone(),
        resource_version: rv_out(r.get(0)),
        data: Arc::from(r.get::<_, &[u8]>(1)),
    }))
}

pub(crate) async fn current_rv(pool: &Pool) -> Result<ResourceVersion, StoreError> {
    let client = pg(pool.get().await)?;
    let stmt = pg(client
        .prepare_cached("SELECT rv FROM porch_meta WHERE id = 1")
        .await)?;
    let row = pg(client.query_one(&stmt, &[]).await)?;
    Ok(rv_out(row.get(0)))
}

pub(crate) async fn list(pool: &Pool, query: ListQuery) -> Result<ListPage, StoreError> {
    let mut client = pg(pool.get().await)?;
    // One snapshot for the counter, the page and the count of what follows.
    let txn = pg(client
        .build_transaction()
        .isolation_level(IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .await)?;
    let rv_stmt = pg(txn
        .prepare_cached("SELECT rv FROM porch_meta WHERE id = 1")
        .await)?;
    let resource_version = rv_out(pg(txn.query_one(&rv_stmt, &[]).await)?.get(0));
    // Empty strings stand for "no bound": `(namespace, name) > ('', '')` holds for every key
    // but ('', ''), which no object has (names are never empty).
    let (after_ns, after_name) = query.start_after.clone().unwrap_or_default();
    let limit = query
        .limit
        .map_or(i64::MAX, |l| i64::try_from(l).unwrap_or(i64::MAX));
    let fetch = limit.saturating_add(1);
    let (page_sql, count_sql) = match query.namespace {
        Some(_) => (
            "SELECT namespace, name, rv, data FROM porch_objects
             WHERE resource = $1 AND namespace = $2 AND (namespace, name) > ($3, $4)
             ORDER BY namespace, name LIMIT $5",
            "SELECT count(*) FROM porch_objects
             WHERE resource = $1 AND namespace = $2 AND (namespace, name) > ($3, $4)",
        ),
        None => (
            "SELECT namespace, name, rv, data FROM porch_objects
             WHERE resource = $1 AND ($2::text IS NULL) AND (namespace, name) > ($3, $4)
             ORDER BY namespace, name LIMIT $5",
            "SELECT count(*) FROM porch_objects
             WHERE resource = $1 AND ($2::text IS NULL) AND (namespace, name) > ($3, $4)",
        ),
    };
    let ns = query.namespace.as_deref();
    let stmt = pg(txn.prepare_cached(page_sql).await)?;
    let rows = pg(txn
        .query(
            &stmt,
            &[&query.resource, &ns, &after_ns, &after_name, &fetch],
        )
        .await)?;
    let more = i64::try_from(rows.len()).unwrap_or(i64::MAX) > limit;
    let items = rows
        .iter()
        .take(usize::try_from(limit).unwrap_or(usize::MAX))
        .map(|r| decode_object(&query.resource, r))
        .collect::<Vec<_>>();
    let remaining = if more {
        let stmt = pg(txn.prepare_cached(count_sql).await)?;
        let total: i64 = pg(txn
            .query_one(&stmt, &[&query.resource, &ns, &after_ns, &after_name])
            .await)?
        .get(0);
        Some(u64::try_from(total - limit).unwrap_or(0))
    } else {
        None
    };
    pg(txn.commit().await)?;
    Ok(ListPage {
        items,
        resource_version,
        more,
        remaining,
    })
}

fn decode_object(resource: &str, r: &Row) -> StoredObject {
    StoredObject {
        key: ObjectKey::new(resource, r.get::<_, String>(0), r.get::<_, String>(1)),
        resource_version: rv_out(r.get(2)),
        data: Arc::from(r.get::<_, &[u8]>(3)),
    }
}

pub(crate) async fn events_since(
    pool: &Pool,
    after: ResourceVersion,
    limit: usize,
) -> Result<Vec<StoreEvent>, StoreError> {
    let mut client = pg(pool.get().await)?;
    // The compaction mark and the events from one snapshot, so a concurrent compaction cannot
    // silently cut the front of the answer.
    let txn = pg(client
        .build_transaction()
        .isolation_level(IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .await)?;
    let stmt = pg(txn
        .prepare_cached("SELECT compacted FROM porch_meta WHERE id = 1")
        .await)?;
    let compacted = rv_out(pg(txn.query_one(&stmt, &[]).await)?.get(0));
    if after < compacted {
        return Err(StoreError::Gone {
            requested: after,
            compacted,
        });
    }
    let stmt = pg(txn
        .prepare_cached(
            "SELECT rv, type, resource, namespace, name, data, previous FROM porch_events
             WHERE rv > $1 ORDER BY rv LIMIT $2",
        )
        .await)?;
    let lim = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows = pg(txn.query(&stmt, &[&rv_in(after)?, &lim]).await)?;
    pg(txn.commit().await)?;
    rows.iter()
        .map(|r| {
            Ok(StoreEvent {
                event_type: type_from(r.get(1))?,
                object: StoredObject {
                    key: ObjectKey::new(
                        r.get::<_, String>(2),
                        r.get::<_, String>(3),
                        r.get::<_, String>(4),
                    ),
                    resource_version: rv_out(r.get(0)),
                    data: Arc::from(r.get::<_, &[u8]>(5)),
                },
                previous: r.get::<_, Option<&[u8]>>(6).map(Arc::from),
            })
        })
        .collect()
}

/// Applies one batch atomically; returns its events.
pub(crate) async fn write(
    pool: &Pool,
    writes: Vec<Write>,
    retention: u64,
) -> Result<Vec<StoreEvent>, StoreError> {
    let mut client = pg(pool.get().await)?;
    let txn = pg(client.transaction().await)?;
    let lock = pg(txn
        .prepare_cached("SELECT rv, compacted FROM porch_meta WHERE id = 1 FOR UPDATE")
        .await)?;
    let meta = pg(txn.query_one(&lock, &[]).await)?;
    let mut rv = rv_out(meta.get(0));
    let compacted = rv_out(meta.get(1));

    let read = pg(txn
        .prepare_cached(
            "SELECT rv, data FROM porch_objects WHERE resource = $1 AND namespace = $2 AND name = $3",
        )
        .await)?;
    // Only the keys and checks cross the awaits below (the stamps are not `Sync`).
    let checks: Vec<(ObjectKey, Precondition, bool)> = writes
        .iter()
        .map(|w| {
            (
                w.key.clone(),
                w.precondition,
                matches!(w.op, WriteOp::Delete(_)),
            )
        })
        .collect();
    let mut seen = HashSet::new();
    let mut currents = Vec::with_capacity(checks.len());
    for (k, precondition, is_delete) in &checks {
        if !seen.insert(k) {
            return Err(StoreError::Internal(format!(
                "{k} written twice in one batch"
            )));
        }
        let current = pg(txn
            .query_opt(&read, &[&k.resource, &k.namespace, &k.name])
            .await)?
        .map(|r| (rv_out(r.get(0)), r.get::<_, Vec<u8>>(1)));
        check(
            k,
            *precondition,
            *is_delete,
            current.as_ref().map(|(rv, _)| *rv),
        )?;
        currents.push(current.map(|(_, d)| d));
    }

    let upsert = pg(txn
        .prepare_cached(
            "INSERT INTO porch_objects (resource, namespace, name, rv, data)
             VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (resource, namespace, name) DO UPDATE SET rv = EXCLUDED.rv, data = EXCLUDED.data",
        )
        .await)?;
    let remove = pg(txn
        .prepare_cached(
            "DELETE FROM porch_objects WHERE resource = $1 AND namespace = $2 AND name = $3",
        )
        .await)?;
    let log = pg(txn
        .prepare_cached(
            "INSERT INTO porch_events (rv, type, resource, namespace, name, data, previous)
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .await)?;
    let mut events = Vec::with_capacity(writes.len());
    for (w, current) in writes.into_iter().zip(currents) {
        rv += 1;
        let v = rv_in(rv)?;
        let k = &w.key;
        let (event_type, data) = match w.op {
            WriteOp::Put(stamp) => {
                let data = stamp(rv, None);
                pg(txn
                    .execute(&upsert, &[&k.resource, &k.namespace, &k.name, &v, &data])
                    .await)?;
                let t = if current.is_some() {
                    EventType::Modified
                } else {
                    EventType::Added
                };
                (t, data)
            }
            WriteOp::Delete(stamp) => {
                let old = current.clone().unwrap_or_default();
                let data = stamp(rv, Some(&old));
                pg(txn
                    .execute(&remove, &[&k.resource, &k.namespace, &k.name])
                    .await)?;
                (EventType::Deleted, data)
            }
        };
        pg(txn
            .execute(
                &log,
                &[
                    &v,
                    &type_code(event_type),
                    &k.resource,
                    &k.namespace,
                    &k.name,
                    &data,
                    &current,
                ],
            )
            .await)?;
        events.push(StoreEvent {
            event_type,
            object: StoredObject {
                key: w.key,
                resource_version: rv,
                data: Arc::from(data),
            },
            previous: current.map(Arc::from),
        });
    }

    // Compaction as in the embedded store: once the log is a quarter longer than the retention,
    // drop down to the retention in one go.
    let mut new_compacted = compacted;
    if rv.saturating_sub(compacted) > retention + retention / 4 + 1 {
        new_compacted = rv - retention;
        let drop = pg(txn
            .prepare_cached("DELETE FROM porch_events WHERE rv <= $1")
            .await)?;
        pg(txn.execute(&drop, &[&rv_in(new_compacted)?]).await)?;
    }
    let bump = pg(txn
        .prepare_cached("UPDATE porch_meta SET rv = $1, compacted = $2 WHERE id = 1")
        .await)?;
    pg(txn
        .execute(&bump, &[&rv_in(rv)?, &rv_in(new_compacted)?])
        .await)?;
    // Delivered at commit, to every replica LISTENing (this one included).
    let notify = pg(txn.prepare_cached("SELECT pg_notify($1, $2)").await)?;
    pg(txn.execute(&notify, &[&CHANNEL, &rv.to_string()]).await)?;
    pg(txn.commit().await)?;
    if new_compacted != compacted {
        tracing::debug!(upto = new_compacted, "compacted the event log");
    }
    Ok(events)
}

fn check(
    key: &ObjectKey,
    precondition: Precondition,
    is_delete: bool,
    current: Option<ResourceVersion>,
) -> Result<(), StoreError> {
    match (precondition, current) {
        (Precondition::MustNotExist, Some(_)) => Err(StoreError::AlreadyExists(key.clone())),
        (Precondition::MustExist | Precondition::ResourceVersion(_), None) => {
            Err(StoreError::NotFound(key.clone()))
        }
        (Precondition::ResourceVersion(expected), Some(actual)) if expected != actual => {
            Err(StoreError::Conflict {
                key: key.clone(),
                expected,
                actual,
            })
        }
        _ if is_delete && current.is_none() => Err(StoreError::NotFound(key.clone())),
        _ => Ok(()),
    }
}
