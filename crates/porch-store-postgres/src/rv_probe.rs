//! The store's current resourceVersion, read for read barriers: one query per round, shared by
//! every request that arrived before the round started.
//!
//! A read barrier needs a version read that *began after* the request arrived (anything
//! older may miss a write the client saw acknowledged). Each request takes a ticket; the
//! request that finds no round in flight runs one: it reads the highest ticket issued, then
//! queries, and answers every ticket up to it. Requests arriving during a query wait for the
//! next round. So the rule holds, the database sees at most one of these queries at a time
//! whatever the request rate, and a lone request pays one round trip on a connection of its
//! own (no pool, no hop to another task or runtime, the statement prepared once).
//!
//! The connection is driven by the request running the round, not by a task of its own: the
//! answer then wakes nobody else, which is most of the cost of a round trip on a busy
//! machine. Between rounds the connection is not polled; whatever the server sends
//! meanwhile (a notice, a parameter change, the close of a dead session) is read by the
//! next round.

use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use porch_core::store::{ResourceVersion, StoreError};
use tokio::sync::watch;

use crate::tls::{PgConnect, RustlsStream};

/// How long one round may take (connect and query) before its requests get an error.
const ROUND_TIMEOUT: Duration = Duration::from_secs(5);

/// The answer of one round: every ticket up to `ticket` is served by `result`.
#[derive(Debug, Clone)]
struct Round {
    ticket: u64,
    result: Result<ResourceVersion, String>,
}

type Connection =
    tokio_postgres::Connection<tokio_postgres::Socket, RustlsStream<tokio_postgres::Socket>>;

/// The probe's own session: its client, the prepared query and the connection's driver,
/// polled only while a round runs.
struct Session {
    client: tokio_postgres::Client,
    statement: tokio_postgres::Statement,
    connection: Pin<Box<Connection>>,
}

/// Reads the store's current resourceVersion with coalesced queries (see the module doc).
pub struct RvProbe {
    connect: PgConnect,
    /// The last ticket issued.
    issued: AtomicU64,
    /// Held by the request running the current round (the driver); the session lives here.
    driver: tokio::sync::Mutex<Option<Session>>,
    done: watch::Sender<Round>,
}

impl std::fmt::Debug for RvProbe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RvProbe")
            .field("issued", &self.issued.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

/// How long a waiting request trusts the current driver before it checks again (a driver
/// whose request was cancelled mid-round never answers).
const RECHECK: Duration = Duration::from_millis(20);

impl RvProbe {
    /// A probe that connects on first use and again after a failure. The round is run by
    /// a request itself (no task of its own): the first request finding no round in flight
    /// drives one, the others wait for its answer or, if their ticket came too late for it,
    /// drive the next.
    pub fn start(connect: PgConnect) -> Self {
        let (done, _) = watch::channel(Round {
            ticket: 0,
            result: Ok(0),
        });
        RvProbe {
            connect,
            issued: AtomicU64::new(0),
            driver: tokio::sync::Mutex::new(None),
            done,
        }
    }

    /// The store's resourceVersion as of some moment after this call began.
    pub async fn current(&self) -> Result<ResourceVersion, StoreError> {
        let mut rounds = self.done.subscribe();
        let ticket = self.issued.fetch_add(1, Ordering::SeqCst) + 1;
        loop {
            {
                let round = rounds.borrow_and_update();
                if round.ticket >= ticket {
                    return round.result.clone().map_err(StoreError::Unavailable);
                }
            }
            match self.driver.try_lock() {
                Ok(mut session) => {
                    if self.done.borrow().ticket >= ticket {
                        continue;
                    }
                    // Read before querying: every ticket up to `upto` was issued before the
                    // query starts.
                    let upto = self.issued.load(Ordering::SeqCst);
                    let result = self.round(&mut session).await;
                    drop(session);
                    self.done.send_replace(Round {
                        ticket: upto,
                        result,
                    });
                }
                Err(_) => {
                    let _ = tokio::time::timeout(RECHECK, rounds.changed()).await;
                }
            }
        }
    }

    async fn round(&self, session: &mut Option<Session>) -> Result<ResourceVersion, String> {
        let result = match tokio::time::timeout(ROUND_TIMEOUT, query(session, &self.connect)).await
        {
            Ok(r) => r,
            Err(_) => Err(format!(
                "no answer from PostgreSQL within {}s",
                ROUND_TIMEOUT.as_secs()
            )),
        };
        if result.is_err() {
            // Dropping the connection closes it; the next round connects afresh.
            *session = None;
        }
        result
    }
}

async fn query(
    session: &mut Option<Session>,
    connect: &PgConnect,
) -> Result<ResourceVersion, String> {
    if session.as_ref().is_none_or(|s| s.client.is_closed()) {
        *session = None;
        let (client, connection) = connect
            .connect()
            .await
            .map_err(|e| format!("cannot reach PostgreSQL: {e}"))?;
        let mut connection = Box::pin(connection);
        let statement = drive(
            &mut connection,
            client.prepare("SELECT rv FROM porch_meta WHERE id = 1"),
        )
        .await
        .map_err(|e| format!("cannot prepare the version query: {e}"))?;
        *session = Some(Session {
            client,
            statement,
            connection,
        });
    }
    let Some(s) = session.as_mut() else {
        return Err("no session".into());
    };
    let row = drive(&mut s.connection, s.client.query_one(&s.statement, &[]))
        .await
        .map_err(|e| format!("cannot read the resourceVersion: {e}"))?;
    Ok(crate::ops::rv_out(row.get(0)))
}

/// Runs `request` while polling the connection that carries it, in this task.
async fn drive<T>(
    connection: &mut Pin<Box<Connection>>,
    request: impl Future<Output = Result<T, tokio_postgres::Error>>,
) -> Result<T, String> {
    tokio::pin!(request);
    tokio::select! {
        biased;
        answer = &mut request => answer.map_err(|e| e.to_string()),
        ended = connection.as_mut() => Err(match ended {
            Ok(()) => "the connection was closed".to_owned(),
            Err(e) => e.to_string(),
        }),
    }
}
