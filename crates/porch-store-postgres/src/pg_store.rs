//! `PgStore`: the `MetadataStore` implementation on PostgreSQL.

use std::str::FromStr;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use porch_core::store::{
    EventListener, ListPage, ListQuery, MetadataStore, ObjectKey, ResourceVersion, StoreError,
    StoreEvent, StoredObject, Write,
};

use crate::bridge::Bridge;
use crate::error::{PgError, pg};
use crate::follow::{self, Delivery};
use crate::lease::Lease;
use crate::tls::{PgConnect, TlsSettings};
use crate::{ops, schema};

/// Tuning of the store.
#[derive(Debug, Clone)]
pub struct PgStoreOptions {
    /// How many events the log keeps for watch resumption; older resourceVersions get 410 Gone.
    pub event_retention: u64,
    /// The bound of the connection pool (per replica).
    pub max_connections: usize,
    /// How long a connection attempt or a wait for a pooled connection may take before the
    /// call fails as `Unavailable`.
    pub timeout: Duration,
    /// How often the event follower reads the log when no notification arrives.
    pub poll_interval: Duration,
    /// Threads of the store's runtime (they only wait on the network).
    pub threads: usize,
}

impl Default for PgStoreOptions {
    fn default() -> Self {
        Self {
            event_retention: 50_000,
            max_connections: 16,
            timeout: Duration::from_secs(5),
            poll_interval: Duration::from_secs(1),
            threads: 2,
        }
    }
}

/// The PostgreSQL store. Cheap to share behind an `Arc`.
pub struct PgStore {
    // Declared first so queries stop before the pool goes away.
    bridge: Bridge,
    pool: Pool,
    connect: PgConnect,
    delivery: Arc<Delivery>,
    retention: u64,
    local: Arc<LocalWrites>,
    leases: Arc<crate::lease::LeaseSessions>,
}

/// The resourceVersions this process committed lately (ranges, newest last), so a follower
/// of the shared log can tell its own writes (already in its index) from other replicas'.
#[derive(Debug, Default)]
pub struct LocalWrites(std::sync::Mutex<std::collections::VecDeque<(u64, u64)>>);

impl LocalWrites {
    /// How many commits are remembered; older ones are treated as another replica's (which
    /// costs a needless refresh, never a missed one).
    const KEEP: usize = 4096;

    fn record(&self, first: u64, last: u64) {
        let mut ranges = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if ranges.len() == Self::KEEP {
            ranges.pop_front();
        }
        ranges.push_back((first, last));
    }

    /// Whether the event at `rv` was committed by this process.
    pub fn contains(&self, rv: u64) -> bool {
        let ranges = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        ranges.iter().rev().any(|&(a, b)| (a..=b).contains(&rv))
    }
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore").finish_non_exhaustive()
    }
}

impl PgStore {
    /// Connects to `url` (`postgres://user[:password]@host[:port]/dbname[?…]`, or the key=value
    /// form; `sslmode` and `sslrootcert` as in libpq, see `tls`), applies the schema
    /// migrations and starts the event follower. Blocks: call it from a blocking thread.
    pub fn connect(url: &str, options: PgStoreOptions) -> Result<Self, StoreError> {
        let (url, tls) = TlsSettings::split(url);
        let tls = tls.connector()?;
        let mut config = tokio_postgres::Config::from_str(&url)
            .map_err(|e| StoreError::from(PgError::Config(e.to_string())))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(options.timeout);
        }
        // As libpq: no TLS over unix sockets (the server refuses it there anyway).
        if !config.get_hosts().is_empty()
            && config
                .get_hosts()
                .iter()
                .all(|h| !matches!(h, tokio_postgres::config::Host::Tcp(_)))
        {
            config.ssl_mode(tokio_postgres::config::SslMode::Disable);
        }
        // A dead peer (a partitioned database, a lease holder gone) is noticed in seconds.
        config.keepalives(true);
        config.keepalives_idle(Duration::from_secs(5));
        config.application_name("porch-server");
        let bridge = Bridge::new(options.threads)?;
        let manager = Manager::from_config(
            config.clone(),
            tls.clone(),
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = {
            let _guard = bridge.handle().enter();
            Pool::builder(manager)
                .max_size(options.max_connections.max(2))
                .runtime(Runtime::Tokio1)
                .wait_timeout(Some(options.timeout))
                .create_timeout(Some(options.timeout))
                .recycle_timeout(Some(options.timeout))
                .build()
                .map_err(|e| StoreError::from(PgError::Config(e.to_string())))?
        };
        let p = pool.clone();
        let version = bridge.run(async move {
            let mut client = pg(p.get().await)?;
            schema::migrate(&mut client).await
        })?;
        let p = pool.clone();
        let rv = bridge.run(async move { ops::current_rv(&p).await })?;
        let delivery = Arc::new(Delivery {
            pool: pool.clone(),
            listener: RwLock::new(None),
            cursor: tokio::sync::Mutex::new(None),
            wake: tokio::sync::Notify::new(),
        });
        let connect = PgConnect { config, tls };
        bridge.handle().spawn(follow::run(
            delivery.clone(),
            connect.clone(),
            options.poll_interval,
        ));
        tracing::info!(
            schema = version,
            resource_version = rv,
            "opened the PostgreSQL metadata store"
        );
        Ok(Self {
            bridge,
            pool,
            connect,
            delivery,
            retention: options.event_retention,
            local: Arc::default(),
            leases: Arc::default(),
        })
    }

    /// A coalescing reader of the current resourceVersion for read barriers, running on the
    /// caller's runtime with a connection of its own (`rv_probe`).
    pub fn rv_probe(&self) -> crate::RvProbe {
        crate::RvProbe::start(self.connect.clone())
    }

    /// The record of this process's own commits (see [`LocalWrites`]).
    pub fn local_writes(&self) -> Arc<LocalWrites> {
        self.local.clone()
    }

    /// Checks that the database answers (for readiness). Async: runs on the store's runtime.
    pub async fn check(&self) -> Result<(), StoreError> {
        let pool = self.pool.clone();
        let task = self.bridge.handle().spawn(async move {
            let client = pg(pool.get().await)?;
            pg(client.simple_query("SELECT 1").await)?;
            Ok::<_, StoreError>(())
        });
        task.await
            .map_err(|e| StoreError::Unavailable(format!("store check failed: {e}")))?
    }

    /// Waits for the cluster lease `name` (e.g. a repository's git write lease), on a pooled
    /// session (`lease::LeaseSessions`).
    pub async fn lease(&self, name: &str) -> Result<Lease, StoreError> {
        self.lease_in(name, false).await
    }

    /// The cluster lease `name` in shared mode: held with other shared holders, never with
    /// an exclusive one (e.g. a read-only refresh of a repository).
    pub async fn lease_shared(&self, name: &str) -> Result<Lease, StoreError> {
        self.lease_in(name, true).await
    }

    async fn lease_in(&self, name: &str, shared: bool) -> Result<Lease, StoreError> {
        let (config, name, pool) = (self.connect.clone(), name.to_owned(), self.leases.clone());
        let runtime = self.bridge.handle().clone();
        self.bridge
            .handle()
            .spawn(
                async move { Lease::acquire_pooled(&config, &name, shared, &pool, runtime).await },
            )
            .await
            .map_err(|e| StoreError::Unavailable(format!("lease task failed: {e}")))?
    }

    /// How many lease sessions wait idle (for tests and metrics).
    pub fn idle_lease_sessions(&self) -> usize {
        self.leases.idle()
    }

    /// The connection settings (with TLS), for leases and leader election.
    pub fn connection_config(&self) -> &PgConnect {
        &self.connect
    }

    /// The store's runtime, where lease connections are best driven.
    pub fn runtime(&self) -> &tokio::runtime::Handle {
        self.bridge.handle()
    }
}

impl MetadataStore for PgStore {
    fn get(&self, key: &ObjectKey) -> Result<Option<StoredObject>, StoreError> {
        let (pool, key) = (self.pool.clone(), key.clone());
        self.bridge.run(async move { ops::get(&pool, &key).await })
    }

    fn list(&self, query: &ListQuery) -> Result<ListPage, StoreError> {
        let (pool, query) = (self.pool.clone(), query.clone());
        self.bridge
            .run(async move { ops::list(&pool, query).await })
    }

    fn write(&self, writes: Vec<Write>) -> Result<Vec<StoreEvent>, StoreError> {
        if writes.is_empty() {
            return Ok(Vec::new());
        }
        let (pool, delivery, retention, local) = (
            self.pool.clone(),
            self.delivery.clone(),
            self.retention,
            self.local.clone(),
        );
        self.bridge.run(async move {
            let events = ops::write(&pool, writes, retention).await?;
            // Recorded before delivery here; the follower may still deliver them first (it
            // then takes them for another replica's: one needless refresh).
            if let (Some(a), Some(b)) = (events.first(), events.last()) {
                local.record(a.object.resource_version, b.object.resource_version);
            }
            delivery.after_commit(&events).await;
            Ok(events)
        })
    }

    fn events_since(
        &self,
        after: ResourceVersion,
        limit: usize,
    ) -> Result<Vec<StoreEvent>, StoreError> {
        let pool = self.pool.clone();
        self.bridge
            .run(async move { ops::events_since(&pool, after, limit).await })
    }

    fn current_resource_version(&self) -> Result<ResourceVersion, StoreError> {
        let pool = self.pool.clone();
        self.bridge.run(async move { ops::current_rv(&pool).await })
    }

    fn set_listener(&self, listener: EventListener) {
        if let Ok(mut g) = self.delivery.listener.write() {
            *g = Some(listener);
        }
        // Deliver what commits from now on (as the embedded store does): start the cursor at
        // the current version unless it already runs.
        let delivery = self.delivery.clone();
        let pool = self.pool.clone();
        let started = self.bridge.run(async move {
            let rv = ops::current_rv(&pool).await;
            let mut cursor = delivery.cursor.lock().await;
            if cursor.is_none() {
                match rv {
                    Ok(rv) => *cursor = Some(rv),
                    Err(e) => return Err(e),
                }
            }
            Ok(())
        });
        if let Err(e) = started {
            tracing::warn!(error = %e, "cannot read the resourceVersion; events are delivered from the start of the log");
            let delivery = self.delivery.clone();
            self.bridge.handle().spawn(async move {
                let mut cursor = delivery.cursor.lock().await;
                cursor.get_or_insert(0);
            });
        }
        self.delivery.wake.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::LocalWrites;

    #[test]
    fn local_writes_remember_ranges_and_forget_the_oldest() {
        let local = LocalWrites::default();
        local.record(3, 5);
        local.record(9, 9);
        assert!(local.contains(3) && local.contains(5) && local.contains(9));
        assert!(!local.contains(2) && !local.contains(6) && !local.contains(10));
        for rv in 100..100 + LocalWrites::KEEP as u64 {
            local.record(rv, rv);
        }
        assert!(
            !local.contains(4) && !local.contains(9),
            "the oldest ranges are forgotten"
        );
        assert!(local.contains(100));
        assert!(local.contains(99 + LocalWrites::KEEP as u64));
    }
}
