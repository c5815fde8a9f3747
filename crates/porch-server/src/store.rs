//! Opening the metadata store named by `--store`: the embedded redb file under the data
//! directory (default), or PostgreSQL for several replicas. With PostgreSQL a probe keeps
//! `/readyz` false while the database does not answer, so a load balancer sends requests to
//! replicas that can serve them (writes fail with 503 meanwhile, never half done).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Context;
use porch_core::store::MetadataStore;
use porch_store::{RedbStore, StoreOptions};
use porch_store_postgres::{PgStore, PgStoreOptions};

use crate::cli::Args;

/// The opened store; `postgres` is set when it is PostgreSQL (for leases and readiness).
pub struct OpenedStore {
    pub store: Arc<dyn MetadataStore>,
    pub postgres: Option<Arc<PgStore>>,
}

/// Whether `--store` names PostgreSQL.
pub fn is_postgres(store: &str) -> bool {
    store.starts_with("postgres://") || store.starts_with("postgresql://")
}

pub async fn open(args: &Args) -> anyhow::Result<OpenedStore> {
    if is_postgres(&args.store) {
        let url = args.store.clone();
        let options = PgStoreOptions {
            event_retention: args.event_retention,
            max_connections: args.store_max_connections,
            ..PgStoreOptions::default()
        };
        let pg = tokio::task::spawn_blocking(move || PgStore::connect(&url, options))
            .await?
            .context("cannot open the PostgreSQL store")?;
        let pg = Arc::new(pg);
        return Ok(OpenedStore {
            store: pg.clone(),
            postgres: Some(pg),
        });
    }
    anyhow::ensure!(
        args.store == "redb",
        "--store must be `redb` or a postgres:// URL (got {:?})",
        args.store
    );
    let store_path = args.data_dir.join("store.redb");
    let options = StoreOptions {
        event_retention: args.event_retention,
        cache_size_bytes: args.store_cache_mb.saturating_mul(1024 * 1024),
        ..StoreOptions::default()
    };
    let store =
        tokio::task::spawn_blocking(move || RedbStore::open(&store_path, options)).await??;
    Ok(OpenedStore {
        store: Arc::new(store),
        postgres: None,
    })
}

/// Keeps `store_ok` equal to "PostgreSQL answers", checked every second; logs the changes.
pub async fn probe(pg: Arc<PgStore>, store_ok: Arc<AtomicBool>, on_change: impl Fn() + Send) {
    loop {
        let ok = match tokio::time::timeout(Duration::from_secs(3), pg.check()).await {
            Ok(Ok(())) => true,
            Ok(Err(e)) => {
                if store_ok.load(Ordering::SeqCst) {
                    tracing::warn!(error = %e, "PostgreSQL is unreachable; not ready");
                }
                false
            }
            Err(_) => {
                if store_ok.load(Ordering::SeqCst) {
                    tracing::warn!("PostgreSQL does not answer; not ready");
                }
                false
            }
        };
        if store_ok.swap(ok, Ordering::SeqCst) != ok {
            if ok {
                tracing::info!("PostgreSQL is reachable again");
            }
            on_change();
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}
