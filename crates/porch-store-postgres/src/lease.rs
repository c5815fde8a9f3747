//! Cluster leases on PostgreSQL session advisory locks.
//!
//! A [`Lease`] is an advisory lock held by a connection of its own. Dropping the lease closes
//! that connection, and so does the death of the process (the kernel closes its sockets and
//! PostgreSQL ends the session): a crashed replica never keeps a lease. A lease whose connection
//! broke while held reports it through [`Lease::is_held`], so its holder stops acting on it.
//!
//! [`LeaderElection`] keeps trying one named lease and publishes whether this process holds it.

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
    // Kept so the session (and with it the lock) lives as long as the lease.
    _client: tokio_postgres::Client,
    connection: JoinHandle<()>,
}

impl std::fmt::Debug for Lease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lease").field("name", &self.name).finish()
    }
}

impl Lease {
    /// Waits until the lease `name` is free and takes it.
    pub async fn acquire(config: &PgConnect, name: &str) -> Result<Lease, StoreError> {
        let lease = Self::connect(config, name).await?;
        pg(lease
            ._client
            .execute("SELECT pg_advisory_lock($1)", &[&lease_key(name)])
            .await)?;
        Ok(lease)
    }

    /// Takes the lease `name` if it is free.
    pub async fn try_acquire(config: &PgConnect, name: &str) -> Result<Option<Lease>, StoreError> {
        let lease = Self::connect(config, name).await?;
        let row = pg(lease
            ._client
            .query_one("SELECT pg_try_advisory_lock($1)", &[&lease_key(name)])
            .await)?;
        Ok(row.get::<_, bool>(0).then_some(lease))
    }

    async fn connect(config: &PgConnect, name: &str) -> Result<Lease, StoreError> {
        let (client, connection) = pg(config.connect().await)?;
        let connection = tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, "lease connection ended");
            }
        });
        Ok(Lease {
            name: name.to_owned(),
            _client: client,
            connection,
        })
    }

    /// False once the lease's connection has ended (the lock is then released).
    pub fn is_held(&self) -> bool {
        !self.connection.is_finished()
    }

    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.connection.abort();
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
