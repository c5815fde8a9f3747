//! The store's current resourceVersion, read for read barriers: one query per round, shared by
//! every request that arrived before the round started.
//!
//! A read barrier needs a version read that *began after* the request arrived (anything
//! older may miss a write the client saw acknowledged). Each request takes a ticket; a prober
//! task on the caller's runtime reads the highest ticket issued, then queries, and answers
//! every ticket up to it. Requests arriving during a query wait for the next round. So the
//! rule holds, the database sees at most one of these queries at a time whatever the request
//! rate, and a lone request pays one round trip on a connection of its own (no pool, no hop
//! to the store runtime, the statement prepared once).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use porch_core::store::{ResourceVersion, StoreError};
use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;

use crate::tls::PgConnect;

/// How long one round may take (connect and query) before its requests get an error.
const ROUND_TIMEOUT: Duration = Duration::from_secs(5);

/// The answer of one round: every ticket up to `ticket` is served by `result`.
#[derive(Debug, Clone)]
struct Round {
    ticket: u64,
    result: Result<ResourceVersion, String>,
}

struct Shared {
    /// The last ticket issued.
    issued: AtomicU64,
    wake: Notify,
    done: watch::Sender<Round>,
}

/// Reads the store's current resourceVersion with coalesced queries (see the module doc).
pub struct RvProbe {
    shared: Arc<Shared>,
    prober: JoinHandle<()>,
}

impl std::fmt::Debug for RvProbe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RvProbe")
            .field("issued", &self.shared.issued.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl RvProbe {
    /// Starts the prober on the current tokio runtime; it connects on first use and again
    /// after a failure.
    pub fn start(connect: PgConnect) -> Self {
        let (done, _) = watch::channel(Round {
            ticket: 0,
            result: Ok(0),
        });
        let shared = Arc::new(Shared {
            issued: AtomicU64::new(0),
            wake: Notify::new(),
            done,
        });
        let prober = tokio::spawn(probe(shared.clone(), connect));
        RvProbe { shared, prober }
    }

    /// The store's resourceVersion as of some moment after this call began.
    pub async fn current(&self) -> Result<ResourceVersion, StoreError> {
        let mut rounds = self.shared.done.subscribe();
        let ticket = self.shared.issued.fetch_add(1, Ordering::SeqCst) + 1;
        self.shared.wake.notify_one();
        let round = rounds
            .wait_for(|r| r.ticket >= ticket)
            .await
            .map_err(|_| StoreError::Unavailable("the version prober has stopped".into()))?
            .clone();
        round.result.map_err(StoreError::Unavailable)
    }
}

impl Drop for RvProbe {
    fn drop(&mut self) {
        self.prober.abort();
    }
}

type Session = (
    tokio_postgres::Client,
    tokio_postgres::Statement,
    JoinHandle<()>,
);

async fn probe(shared: Arc<Shared>, connect: PgConnect) {
    let mut session: Option<Session> = None;
    let mut served = 0;
    loop {
        // Read before querying: every ticket up to `upto` was issued before the query starts.
        let upto = shared.issued.load(Ordering::SeqCst);
        if upto == served {
            shared.wake.notified().await;
            continue;
        }
        let result = match tokio::time::timeout(ROUND_TIMEOUT, query(&mut session, &connect)).await
        {
            Ok(Ok(rv)) => Ok(rv),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(format!(
                "no answer from PostgreSQL within {}s",
                ROUND_TIMEOUT.as_secs()
            )),
        };
        if result.is_err()
            && let Some((_, _, connection)) = session.take()
        {
            connection.abort();
        }
        served = upto;
        shared.done.send_replace(Round {
            ticket: upto,
            result,
        });
    }
}

async fn query(
    session: &mut Option<Session>,
    connect: &PgConnect,
) -> Result<ResourceVersion, String> {
    if session.as_ref().is_none_or(|(c, _, _)| c.is_closed()) {
        let (client, connection) = connect
            .connect()
            .await
            .map_err(|e| format!("cannot reach PostgreSQL: {e}"))?;
        let connection = tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, "version probe connection ended");
            }
        });
        let statement = client
            .prepare("SELECT rv FROM porch_meta WHERE id = 1")
            .await
            .map_err(|e| format!("cannot prepare the version query: {e}"))?;
        *session = Some((client, statement, connection));
    }
    let Some((client, statement, _)) = session.as_ref() else {
        return Err("no session".into());
    };
    let row = client
        .query_one(statement, &[])
        .await
        .map_err(|e| format!("cannot read the resourceVersion: {e}"))?;
    Ok(crate::ops::rv_out(row.get(0)))
}
