//! Cluster leases on PostgreSQL session advisory locks.
//!
//! A [`Lease`] is an advisory lock held by a connection of its own. Dropping the lease closes
//! that connection, and so does the death of the process (the kernel closes its sockets and
//! PostgreSQL ends the session): a crashed replica never keeps a lease. A lease whose connection
//! broke while held reports it through [`Lease::is_held`], so its holder stops acting on it.
//!
//! [`LeaderElection`] keeps trying one named lease and publishes whether this process holds it.

use std::sync::Arc;
use std::time::Duration;

use porch_core::store::StoreError;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::error::pg;
use crate::tls::PgConnect;

/// The advisory lock key of a lease name: FNV-1a over `porch-lease:` + name, stable across
/// builds and replicas.
pub fn lease_key(name: &str) -> i64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in b"porch-lease:".iter().chain(name.as_bytes()) {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    i64::from_ne_bytes(h.to_ne_bytes())
}

/// A held lease; released when dropped.
pub struct Lease {
    name: String,
    key: i64,
    /// Taken in shared mode (any number of shared holders, no exclusive one).
    shared: bool,
    session: Option<Session>,
    /// Where the session goes once unlocked; without it the session is closed on release.
    pool: Option<(Arc<LeaseSessions>, tokio::runtime::Handle)>,
}

impl std::fmt::Debug for Lease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lease").field("name", &self.name).finish()
    }
}

/// A connection holding (or ready to hold) advisory locks.
struct Session {
    client: tokio_postgres::Client,
    connection: JoinHandle<()>,
}

impl Session {
    async fn open(config: &PgConnect) -> Result<Session, StoreError> {
        let (client, connection) = pg(config.connect().await)?;
        let connection = tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, "lease connection ended");
            }
        });
        Ok(Session { client, connection })
    }

    fn is_open(&self) -> bool {
        !self.connection.is_finished() && !self.client.is_closed()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // Closing the session releases whatever it holds, at once.
        self.connection.abort();
    }
}

/// Idle lease sessions of one process: a repository lease taken per write job would
/// otherwise cost a connection each (a backend process, a TLS handshake and a login). A
/// session is pooled again only after its lock was released (`pg_advisory_unlock` said so);
/// any doubt closes it, which releases everything it held.
#[derive(Default)]
pub struct LeaseSessions {
    idle: std::sync::Mutex<Vec<Session>>,
}

impl std::fmt::Debug for LeaseSessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaseSessions").finish_non_exhaustive()
    }
}

impl LeaseSessions {
    /// Idle sessions kept; more are closed.
    const KEEP: usize = 8;

    fn take(&self) -> Option<Session> {
        let mut idle = self
            .idle
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        while let Some(s) = idle.pop() {
            if s.is_open() {
                return Some(s);
            }
        }
        None
    }

    fn put(&self, session: Session) {
        let mut idle = self
            .idle
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if idle.len() < Self::KEEP && session.is_open() {
            idle.push(session);
        }
    }

    /// How many sessions wait idle.
    pub fn idle(&self) -> usize {
        self.idle
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .len()
    }
}

/// How long a release may take before its session is closed instead.
const UNLOCK_TIMEOUT: Duration = Duration::from_secs(5);

impl Lease {
    /// Waits until the lease `name` is free and takes it, on a connection of its own.
    pub async fn acquire(config: &PgConnect, name: &str) -> Result<Lease, StoreError> {
        let session = Session::open(config).await?;
        Self::lock(session, name, false, None).await
    }

    /// [`Lease::acquire`] on a session of `pool` (a new one when none is idle); released, the
    /// session returns to `pool` through a task on `runtime`. A `shared` lease excludes only
    /// exclusive ones (readers together, no writer); PostgreSQL queues a shared request
    /// behind a waiting exclusive one, so writers are not starved.
    pub async fn acquire_pooled(
        config: &PgConnect,
        name: &str,
        shared: bool,
        pool: &Arc<LeaseSessions>,
        runtime: tokio::runtime::Handle,
    ) -> Result<Lease, StoreError> {
        let back = Some((pool.clone(), runtime));
        if let Some(session) = pool.take() {
            match Self::lock(session, name, shared, back.clone()).await {
                Ok(lease) => return Ok(lease),
                // The idle session died meanwhile (a restarted database): a fresh one.
                Err(e) => tracing::debug!(error = %e, "idle lease session failed"),
            }
        }
        Self::lock(Session::open(config).await?, name, shared, back).await
    }

    async fn lock(
        session: Session,
        name: &str,
        shared: bool,
        pool: Option<(Arc<LeaseSessions>, tokio::runtime::Handle)>,
    ) -> Result<Lease, StoreError> {
        let key = lease_key(name);
        let sql = if shared {
            "SELECT pg_advisory_lock_shared($1)"
        } else {
            "SELECT pg_advisory_lock($1)"
        };
        pg(session.client.execute(sql, &[&key]).await)?;
        Ok(Lease {
            name: name.to_owned(),
            key,
            shared,
            session: Some(session),
            pool,
        })
    }

    /// Takes the lease `name` if it is free.
    pub async fn try_acquire(config: &PgConnect, name: &str) -> Result<Option<Lease>, StoreError> {
        let session = Session::open(config).await?;
        let key = lease_key(name);
        let row = pg(session
            .client
            .query_one("SELECT pg_try_advisory_lock($1)", &[&key])
            .await)?;
        Ok(row.get::<_, bool>(0).then(|| Lease {
            name: name.to_owned(),
            key,
            shared: false,
            session: Some(session),
            pool: None,
        }))
    }

    /// False once the lease's connection has ended (the lock is then released).
    pub fn is_held(&self) -> bool {
        self.session.as_ref().is_some_and(Session::is_open)
    }

    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        let Some(session) = self.session.take() else {
            return;
        };
        let Some((pool, runtime)) = self.pool.take() else {
            return; // dropping the session closes it
        };
        let key = self.key;
        let sql = if self.shared {
            "SELECT pg_advisory_unlock_shared($1)"
        } else {
            "SELECT pg_advisory_unlock($1)"
        };
        runtime.spawn(async move {
            let unlocked =
                tokio::time::timeout(UNLOCK_TIMEOUT, session.client.query_one(sql, &[&key])).await;
            if let Ok(Ok(row)) = unlocked
                && row.get::<_, bool>(0)
            {
                pool.put(session);
            }
        });
    }
}

/// Campaigns for one lease and reports whether this process leads.
pub struct LeaderElection {
    leading: watch::Receiver<bool>,
    task: JoinHandle<()>,
}

impl LeaderElection {
    /// Starts campaigning for `name`, retrying every `retry` while another process holds it.
    pub fn start(config: PgConnect, name: &str, retry: Duration) -> Self {
        let (tx, leading) = watch::channel(false);
        let name = name.to_owned();
        let task = tokio::spawn(async move {
            loop {
                match Lease::try_acquire(&config, &name).await {
                    Ok(Some(lease)) => {
                        tracing::info!(lease = %name, "this replica is the leader");
                        let _ = tx.send(true);
                        while lease.is_held() && !tx.is_closed() {
                            tokio::time::sleep(retry.min(Duration::from_millis(500))).await;
                        }
                        let _ = tx.send(false);
                        tracing::warn!(lease = %name, "lost the leader lease");
                    }
                    Ok(None) => {}
                    Err(e) => tracing::debug!(error = %e, lease = %name, "cannot campaign"),
                }
                if tx.is_closed() {
                    return;
                }
                tokio::time::sleep(retry).await;
            }
        });
        Self { leading, task }
    }

    /// Whether this process leads now, and changes of it.
    pub fn leading(&self) -> watch::Receiver<bool> {
        self.leading.clone()
    }
}

impl Drop for LeaderElection {
    fn drop(&mut self) {
        self.task.abort();
    }
}
